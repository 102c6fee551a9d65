/* The tmpfs a command may hold, against the machine's memory (docs/security-invariants.md,
 * 10). A sandbox's upper and its /tmp are tmpfs of --upper-size each; their pages are memory
 * or swap, charged to no process, so the OOM killer frees none of them: a server whose
 * sandboxes may together hold more than the machine has can be made to exhaust it. A size
 * one sandbox alone cannot have is refused; a product of --max-sandboxes that passes it is
 * said on stderr. Memory is MemTotal + SwapTotal, or the lowest memory.max of rtn's cgroup
 * and its ancestors plus swap when that is lower. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/internal.h"

static uint64_t meminfo_kib(const char *buf, const char *key) {
        const char *p = strstr(buf, key);
        return p ? strtoull(p + strlen(key), NULL, 10) : 0;
}

/* The lowest memory.max from dir up to the cgroup2 mount, UINT64_MAX when none is set. */
static uint64_t cgroup_memory_max(const char *mount, const char *dir) {
        char path[1600];
        uint64_t low = UINT64_MAX;
        size_t mlen = strlen(mount);
        snprintf(path, sizeof path, "%s", dir);
        while (strlen(path) > mlen) {
                char file[1700], buf[64];
                snprintf(file, sizeof file, "%s/memory.max", path);
                FILE *f = fopen(file, "re");
                if (f) {
                        if (fgets(buf, sizeof buf, f) && buf[0] >= '0' && buf[0] <= '9') {
                                uint64_t v = strtoull(buf, NULL, 10);
                                low = v < low ? v : low;
                        }
                        fclose(f);
                }
                char *slash = strrchr(path, '/');
                if (!slash)
                        break;
                *slash = '\0';
        }
        return low;
}

uint64_t rt_memory_bytes(void) {
        char buf[4096];
        FILE *f = fopen("/proc/meminfo", "re");
        size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
        if (f)
                fclose(f);
        buf[n] = '\0';
        uint64_t ram = meminfo_kib(buf, "MemTotal:") << 10, swap = meminfo_kib(buf, "SwapTotal:")
                                                                   << 10;
        if (!ram)
                return 0;
        const struct rt_cgroup_state *s = rt_cgroup_probed();
        if (s->mount[0] && s->dir[0]) {
                uint64_t cg = cgroup_memory_max(s->mount, s->dir);
                ram = cg < ram ? cg : ram;
        }
        return ram + swap;
}

static unsigned long long mib(uint64_t b) {
        return (unsigned long long)((b + (1u << 20) - 1) >> 20);
}

int rt_tmpfs_check(const struct rt_spec *spec, unsigned n, char *ret_warn, size_t len,
                   struct rtn_error *err) {
        uint64_t mem = rt_memory_bytes(), one, all;
        if (len)
                ret_warn[0] = '\0';
        if (!mem)
                return 0; /* nothing to compare with */
        /* /tmp is a tmpfs of its own, or on the upper's (spec.tmp_kept) */
        const char *what = spec->tmp_kept ? "its upper, /tmp included" : "its upper and /tmp";
        if (__builtin_mul_overflow(spec->upper_bytes, spec->tmp_kept ? 1 : 2, &one))
                one = UINT64_MAX;
        if (one > mem)
                return rtn_errx(err, E2BIG,
                                "--upper-size %llu MiB gives a sandbox %llu MiB of tmpfs (%s), "
                                "more than this machine's memory, %llu MiB (RAM and swap, or "
                                "rtn's memory cgroup): tmpfs pages are not freed by the OOM "
                                "killer; give a smaller --upper-size",
                                mib(spec->upper_bytes), mib(one), what, mib(mem));
        if (__builtin_mul_overflow(one, (uint64_t)n, &all))
                all = UINT64_MAX;
        if (n > 1 && all > mem && len)
                snprintf(ret_warn, len,
                         "%u sandboxes (--max-sandboxes) of %llu MiB of tmpfs each (--upper-size "
                         "%llu MiB: %s) may hold %llu MiB, more than this "
                         "machine's memory, %llu MiB (RAM and swap, or rtn's memory cgroup), and "
                         "the OOM killer frees no tmpfs page: lower --max-sandboxes or "
                         "--upper-size",
                         n, mib(one), mib(spec->upper_bytes), what, mib(all), mib(mem));
        return 0;
}
