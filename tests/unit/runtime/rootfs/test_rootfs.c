/* The package mirrors of a base, read from its apt sources (runtime/rootfs/rootfs.c): what the gate
 * lets provisioning reach. The files belong to the base, which a user imported or named as a
 * directory, so they are read like anything else rtn did not write: without blocking, regular
 * files only, a bounded amount. The parser itself is fuzzed (fuzz/fuzz_sources.c). */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/rootfs/rootfs.h"
#include "runtime/rootfs/internal.h"
#include "runtime/session/session.h"

static char root[64];

static void make_base(void) {
        char p[128];
        snprintf(root, sizeof root, "/tmp/rtn-sources-XXXXXX");
        cr_assert_not_null(mkdtemp(root));
        snprintf(p, sizeof p, "%s/etc", root);
        cr_assert_eq(mkdir(p, 0755), 0);
        snprintf(p, sizeof p, "%s/etc/apt", root);
        cr_assert_eq(mkdir(p, 0755), 0);
        snprintf(p, sizeof p, "%s/etc/apt/sources.list.d", root);
        cr_assert_eq(mkdir(p, 0755), 0);
        snprintf(p, sizeof p, "%s/etc/apt/sources.list", root);
        FILE *f = fopen(p, "w");
        cr_assert_not_null(f);
        fputs("deb http://deb.debian.org/debian bookworm main\n"
              "# deb http://commented.example/debian bookworm main\n",
              f);
        fclose(f);
}

/* A FIFO named like a sources file hung `rtn pkg install` (and env_status, through the
 * base's mirrors) in open(2) for good; it is skipped now, as a device would be. */
Test(rt_rootfs_mirrors, fifo_in_sources_list_d, .timeout = 10) {
        make_base();
        char p[128];
        snprintf(p, sizeof p, "%s/etc/apt/sources.list.d/evil.list", root);
        cr_assert_eq(mkfifo(p, 0644), 0);
        char **hosts = NULL;
        size_t n = 0;
        cr_assert_eq(rt_rootfs_mirrors(root, &hosts, &n), 0);
        cr_assert_eq(n, 1);
        cr_assert_str_eq(hosts[0], "deb.debian.org");
        cr_assert_null(hosts[1]);
        rt_strv_free(hosts);
        store_rm_rf_at(AT_FDCWD, root);
}

Test(rt_rootfs_scan_sources, one_line_and_deb822) {
        static const char text[] = "deb [signed-by=/k.gpg] https://Mirror.Example/debian x main\n"
                                   "Types: deb\nURIs: http://a.example/d http://b.example:8080/d\n"
                                   "deb http://mirror.example/other y main\n"
                                   "deb http://user@creds.example/ z main\n"
                                   "deb http://[2001:db8::1]/debian z main\n"
                                   "deb file:///media/cdrom z main\n";
        FILE *f = fmemopen((void *)text, sizeof text - 1, "r");
        cr_assert_not_null(f);
        char **v = calloc(1, sizeof *v);
        size_t n = 0;
        cr_assert_eq(rt_rootfs_scan_sources(f, &v, &n), 0);
        fclose(f);
        cr_assert_eq(n, 3, "%zu hosts", n);
        cr_assert_str_eq(v[0], "Mirror.Example");
        cr_assert_str_eq(v[1], "a.example");
        cr_assert_str_eq(v[2], "b.example");
        rt_strv_free(v);
}
