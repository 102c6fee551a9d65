/* The apt sources of a base, from which rtn takes the hosts the provisioning gate admits
 * (runtime/rootfs/rootfs.c, rt_rootfs_scan_sources): a rootfs is a tree the user imported or named,
 * read, not trusted. The input is one sources file. Oracles beyond the sanitizers: the list
 * is NULL-terminated at its count, and every host is 1-253 bytes with no separator, quote or
 * whitespace in it, and appears once (ignoring case). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fuzz/fuzz.h"
#include "runtime/rootfs/rootfs.h"
#include "runtime/rootfs/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size == 0)
                return 0;
        FILE *f = fmemopen((void *)data, size, "r");
        char **v = calloc(1, sizeof *v);
        size_t n = 0;
        if (!f || !v)
                abort();
        int r = rt_rootfs_scan_sources(f, &v, &n);
        fclose(f);
        if (r < 0 && r != -ENOMEM)
                abort();
        if (v[n])
                abort();
        for (size_t i = 0; i < n; i++) {
                size_t l = strlen(v[i]);
                if (l == 0 || l > 253 || strpbrk(v[i], "/:]\"' \t\n"))
                        abort();
                for (size_t k = 0; k < i; k++)
                        if (!strcasecmp(v[i], v[k]))
                                abort();
        }
        rt_strv_free(v);
        return 0;
}
