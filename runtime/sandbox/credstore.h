/* Credential stores below $HOME (runtime/sandbox/credstore.c): the built-in list of
 * common/sandbox_dirs.h and the user's own additions, and the checks of a bind against it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"

#define RT_CREDSTORE_MAX 128 /* names, built-in and the user's */
#define RT_CREDSTORE_FILE_MAX 8192 /* bytes of the user's list */

struct rt_credstores {
        const char *names[RT_CREDSTORE_MAX]; /* relative to $HOME, canonical */
        size_t n;
        char buf[RT_CREDSTORE_FILE_MAX + 1]; /* the user's list, split into names in place */
        char moved[RT_CREDSTORE_FILE_MAX]; /* names moved by XDG_CONFIG_HOME and the like */
};

/* The built-in names, then the user's from $XDG_CONFIG_HOME/rtn/credential-stores (else
 * HOME/.config/rtn/credential-stores): one path relative to $HOME a line, '#' comments and
 * blank lines skipped. A missing file adds nothing; a bad line is an error naming it. Then
 * each name below .config, .local/share or .cache again below $XDG_CONFIG_HOME,
 * $XDG_DATA_HOME or $XDG_CACHE_HOME, when one names another directory below home. */
int rt_credstores_load(const char *home, struct rt_credstores *ret, struct rtn_error *err);
/* rel (p below home, without "home/") is a credential store or lies below one: -EPERM. */
int rt_credstores_named(const char *p, const char *rel, const struct rt_credstores *cs,
                        struct rtn_error *err);
/* fd (p, opened without a symlink) holds a credential store that is there now: -EPERM. */
int rt_credstores_held(int fd, const char *p, const char *rel, const struct rt_credstores *cs,
                       struct rtn_error *err);
/* fd is, under another name (a hard link, a bind mount), home or a directory above it, one
 * of home's credential stores, or a directory below home holding one that is there: -EPERM. */
int rt_credstores_alias(int fd, const char *p, const char *home, const struct rt_credstores *cs,
                        struct rtn_error *err);
