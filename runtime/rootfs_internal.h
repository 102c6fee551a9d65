/* Shared by runtime/rootfs.c and runtime/rootfs_boot.c. */
#pragma once

#include <stdbool.h>

#include "common/err.h"

/* 1-64 of [A-Za-z0-9._-], not starting with '.' or '-' (like environment names). */
bool rt_rootfs_name_valid(const char *name);
/* <data_dir>/rootfs (data_dir NULL: the default data dir). */
int rt_rootfs_base(const char *data_dir, char **ret, struct rtn_error *err);
/* The stamp text of the tree at rootfd. */
int rt_rootfs_stamp(int rootfd, char **ret, struct rtn_error *err);
