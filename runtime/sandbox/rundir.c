/* The user's runtime paths (runtime/sandbox/rundir.h). */
#include "runtime/sandbox/rundir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void fallback_base(char *base, size_t len) {
        if (geteuid() == 0)
                snprintf(base, len, "/run");
        else
                snprintf(base, len, "/tmp/rtn-%u", (unsigned)geteuid());
}

bool rt_run_base(char *base, size_t len) {
        const char *xdg = getenv("XDG_RUNTIME_DIR");
        if (xdg && xdg[0] == '/' && strlen(xdg) < len - 32) {
                snprintf(base, len, "%s", xdg);
                return true;
        }
        fallback_base(base, len);
        return false;
}

unsigned long long rt_registry_pidns(void) {
        /* A process's pid namespace never changes (setns of one moves only its children) */
        static unsigned long long ino;
        static bool done;
        struct stat st;
        if (!done)
                ino = stat("/proc/self/ns/pid", &st) == 0 ? (unsigned long long)st.st_ino : 0;
        done = true;
        return ino;
}

void rt_registry_path(char *buf, size_t len) {
        char base[512];
        rt_run_base(base, sizeof base);
        snprintf(buf, len, "%s/rtn/running", base);
}

void rt_registry_fallback_path(char *buf, size_t len) {
        char base[512];
        fallback_base(base, sizeof base);
        snprintf(buf, len, "%s/rtn/running", base);
}
