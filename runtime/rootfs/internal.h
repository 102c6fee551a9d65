/* Shared by runtime/rootfs/rootfs.c and runtime/rootfs/rootfs_boot.c. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "common/err.h"

/* 1-64 of [A-Za-z0-9._-], not starting with '.' or '-' (like environment names). */
bool rt_rootfs_name_valid(const char *name);
/* The stamp text of the tree at rootfd. */
int rt_rootfs_stamp(int rootfd, char **ret, struct rtn_error *err);

/* The apt sources of a base (rt_rootfs_mirrors): one-line "deb [opts] URI suite..." and
 * deb822 "URIs: a b" alike; the host of every http(s) word not commented out is added to
 * the NULL-terminated *v (*n entries), each once. Stops after RT_SOURCES_MAX bytes of f.
 * -ENOMEM, else 0. */
#define RT_SOURCES_MAX (1L << 20)
int rt_rootfs_scan_sources(FILE *f, char ***v, size_t *n);
