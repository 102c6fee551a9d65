/* The loader behind common/dl.h. */
#include "common/dl.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>

#include "common/log.h"

static pthread_mutex_t dl_lock = PTHREAD_MUTEX_INITIALIZER;

static int load(struct rtn_dl *lib) {
        void *h = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL);
        if (!h && lib->alt)
                h = dlopen(lib->alt, RTLD_NOW | RTLD_LOCAL);
        if (!h) {
                snprintf(lib->why, sizeof lib->why, "dlopen %s: %s", lib->soname, dlerror());
                return -ENOENT;
        }
        for (size_t i = 0; i < lib->nsyms; i++)
                if (!(*lib->syms[i].slot = dlsym(h, lib->syms[i].name))) {
                        snprintf(lib->why, sizeof lib->why, "%s lacks %s", lib->soname,
                                 lib->syms[i].name);
                        return -ENOSYS;
                }
        return 1;
}

int rtn_dl_load(struct rtn_dl *lib) {
        int state = __atomic_load_n(&lib->state, __ATOMIC_ACQUIRE);
        if (state == 0) {
                pthread_mutex_lock(&dl_lock);
                state = lib->state;
                if (state == 0) {
                        state = load(lib);
                        if (state < 0)
                                log_debug("%s", lib->why);
                        __atomic_store_n(&lib->state, state, __ATOMIC_RELEASE);
                }
                pthread_mutex_unlock(&dl_lock);
        }
        return state < 0 ? state : 0;
}
