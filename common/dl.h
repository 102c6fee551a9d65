/* Libraries loaded on first use. rtn links none of the heavy libraries only some verbs need
 * (nettle, libcrypto and libarchive for the store, libssl for a gate with a secret): each is
 * dlopen()ed the first time it is needed and its functions called through a table of
 * dlsym()'d pointers, so a process that never needs it never pays for loading it
 * (docs/benchmarks.md). This is the one loader: a module names the soname and the symbols in
 * a struct rtn_dl and calls rtn_dl_load() before the first call through its table. Library
 * code: it logs at debug only and says why in the struct. */
#pragma once

#include <stddef.h>

/* One function to resolve: its name and the table member that receives it. */
struct rtn_dl_sym {
        const char *name;
        void **slot;
};

/* A row of a table of rtn_dl_sym: table.f receives the symbol f. POSIX (dlsym(3)) makes the
 * object-to-function pointer conversion valid. */
#define RTN_DL_SYM(table, f) {#f, (void **)&(table).f},

struct rtn_dl {
        const char *soname; /* the ABI the build's headers describe, e.g. "libssl.so.3" */
        const char *alt; /* the same ABI under another name, tried when soname is not there
                          * (libcurl's GnuTLS build), or NULL */
        const struct rtn_dl_sym *syms;
        size_t nsyms;
        int state; /* 0 not tried, 1 loaded, -errno failed (rtn_dl_load) */
        char why[160]; /* after a failure: what was missing */
};

#define RTN_DL_INIT(soname_, syms_)                                                                \
        { .soname = (soname_), .syms = (syms_), .nsyms = sizeof(syms_) / sizeof((syms_)[0]) }

/* Loads lib the first time it is called (thread-safe; the handle is never closed, so the
 * pointers live as long as the process) and fills every slot. 0 when every symbol resolved;
 * otherwise -ENOENT (no such library) or -ENOSYS (a symbol missing), the same on every later
 * call, with lib->why saying what. */
int rtn_dl_load(struct rtn_dl *lib);
