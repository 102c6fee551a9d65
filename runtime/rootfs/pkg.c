/* Package installs (see pkg.h): package names checked, the apt-get command line pointed at the
 * gate, and the gate's proxy for a base. `rtn pkg install` (cli/pkg.c) and rtn serve's
 * pkg_install (serve/tools/pkg.c) run it in a session, each on its own event loop. */
#include "runtime/rootfs/pkg.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/loop.h"
#include "netns/netns.h"
#include "runtime/rootfs/rootfs.h"
#include "runtime/session/session.h"

#define LOWER_DIGIT "abcdefghijklmnopqrstuvwxyz0123456789"

const char rt_pkg_single_uid_note[] =
        "This sandbox maps a single uid (no /etc/subuid range for this user, or newuidmap "
        "missing), so inside root is the only user: packages that own files as other users "
        "or run maintainer scripts that chown to them cannot be installed. Ask for a "
        "subordinate id range (usermod --add-subuids/--add-subgids) or run rtn as root.";

static bool valid_one(const char *s) {
        size_t n = strspn(s, LOWER_DIGIT "+.-");
        if (n < 2 || !strchr(LOWER_DIGIT, s[0]))
                return false;
        s += n;
        if (*s == ':') {
                size_t a = strspn(s + 1, LOWER_DIGIT "-");
                if (a == 0)
                        return false;
                s += 1 + a;
        }
        if (*s == '=') {
                size_t v = strspn(s + 1, "ABCDEFGHIJKLMNOPQRSTUVWXYZ" LOWER_DIGIT ".+~:-");
                return v > 0 && s[1 + v] == '\0' && strchr(LOWER_DIGIT, s[1]);
        }
        if (*s == '/') {
                size_t v = strspn(s + 1, LOWER_DIGIT "-.");
                return v > 0 && s[1 + v] == '\0';
        }
        return *s == '\0';
}

int rt_pkg_validate(char *const *names, size_t n, struct rtn_error *err) {
        if (n == 0)
                return rtn_errx(err, EINVAL, "no package named");
        if (n > RT_PKG_MAX)
                return rtn_errx(err, E2BIG, "%zu packages at once (at most %d)", n, RT_PKG_MAX);
        for (size_t i = 0; i < n; i++) {
                if (names[i][0] == '-')
                        return rtn_errx(err, EINVAL,
                                        "'%.64s' looks like an option; only package "
                                        "names are accepted",
                                        names[i]);
                if (strlen(names[i]) > 200 || !valid_one(names[i]))
                        return rtn_errx(err, EINVAL,
                                        "'%.64s' is not a Debian package name "
                                        "(name[:arch][=version|/release], lowercase)",
                                        names[i]);
        }
        return 0;
}

/* Names are validated (rt_pkg_validate): no quote can occur in them, the quoting is belt
 * and braces. */
static void put_names(FILE *f, char *const *names, size_t n, bool quoted) {
        for (size_t i = 0; i < n; i++)
                fprintf(f, quoted ? " '%s'" : " %s", names[i]);
}

int rt_pkg_command(char *const *names, size_t n, uint16_t port, enum rt_idmode mode,
                   char **ret_cmd) {
        char *c = NULL;
        size_t len = 0;
        /* apt's lists, downloaded .debs and logs live in RT_PKG_APT_DIR for the length of the
         * install and are removed after it, so a layer holds what was installed and nothing
         * of the way there (what Dockerfiles get from rm -rf /var/lib/apt/lists). It is in
         * /var, which only provisioning may write (docs/policy.md, "Agent rules"), not in
         * /tmp, where a concurrent agent command could swap a .deb between its check and
         * its unpacking. dpkg's own log goes nowhere. Every name given that is installed
         * already (at the version given, if one is) means nothing to do: no apt-get, no
         * write, exit RT_PKG_EXIT_UNCHANGED. The lists are thrown away with the install, so
         * apt fetches no translated descriptions (Acquire::Languages=none), which nothing
         * would read: a third less to download, decompress and write per update. Nor does apt
         * write its binary caches (Dir::Cache::srcpkgcache empty: apt then keeps them in
         * memory): two files the size of the lists (37 MB each for bookworm), thrown away
         * with them, cost more than apt-get install parsing the lists a second time. */
        FILE *f = open_memstream(&c, &len);
        if (!f)
                return -ENOMEM;
        fputs("export DEBIAN_FRONTEND=noninteractive; D=" RT_PKG_APT_DIR "; "
              "installed() { for p; do case $p in */*) return 1;; esac; "
              "s=$(dpkg-query -W -f='${db:Status-Abbrev}${Version}' \"${p%%=*}\" "
              "2>/dev/null) || return 1; case $s in 'ii '*) ;; *) return 1;; esac; "
              "case $p in *=*) [ \"${s#ii }\" = \"${p#*=}\" ] || return 1;; esac; done; }; "
              "if installed",
              f);
        put_names(f, names, n, true);
        fputs("; then echo 'rtn: already installed:", f);
        put_names(f, names, n, false);
        fprintf(f,
                "; nothing to do' >&2; exit %d; fi; "
                "rm -rf \"$D\" && mkdir -p \"$D/lists/partial\" \"$D/cache/archives/partial\" "
                "\"$D/log\" || exit; "
                "O='-o Acquire::http::Proxy=http://127.0.0.1:%u/ "
                "-o Acquire::https::Proxy=http://127.0.0.1:%u/ "
                "-o Acquire::Retries=1 -o Acquire::Languages=none -o Dir::Cache::srcpkgcache= "
                "-o Dpkg::Use-Pty=0 -o APT::Color=0 "
                "-o Dir::State::Lists=" RT_PKG_APT_DIR "/lists "
                "-o Dir::Cache=" RT_PKG_APT_DIR "/cache -o Dir::Log=" RT_PKG_APT_DIR "/log "
                "-o Dpkg::Options::=--log=/dev/null "
                "-o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold%s'; "
                "apt-get $O -q update && apt-get $O -q -y --no-install-recommends "
                "install --",
                RT_PKG_EXIT_UNCHANGED, port, port,
                mode == RT_IDMAP_SINGLE ? " -o APT::Sandbox::User=root" : "");
        put_names(f, names, n, true);
        fputs("; r=$?; rm -rf \"$D\"; exit $r", f);
        if (fclose(f) != 0 || !c) {
                free(c);
                return -ENOMEM;
        }
        *ret_cmd = c;
        return 0;
}

int rt_pkg_gate_new(const char *rootfs, const char *const *allow, size_t nallow,
                    struct netns_gate **ret, struct rtn_error *err) {
        char **hosts = NULL;
        size_t n = 0;
        int r = rt_rootfs_mirrors(rootfs, &hosts, &n);
        if (r < 0)
                return rtn_err(err, r, "read the apt sources of %s", rootfs ? rootfs : "the host");
        const char **all = calloc(n + nallow + 1, sizeof *all);
        if (!all) {
                rt_strv_free(hosts);
                return rtn_err(err, ENOMEM, "gate");
        }
        for (size_t i = 0; i < n; i++)
                all[i] = hosts[i];
        for (size_t i = 0; i < nallow; i++)
                all[n + i] = allow[i];
        r = netns_gate_new(all, n + nallow, ret, err);
        free(all);
        rt_strv_free(hosts);
        return r;
}

int rt_pkg_gate_attach(struct netns_gate *g, struct rtn_loop *loop, const struct rt_sandbox *sb,
                       pid_t *attached, struct rtn_error *err) {
        if (sb->gate_fd < 0)
                return rtn_errx(err, ENOTCONN, "the sandbox has no provisioning gate");
        if (*attached == sb->pid)
                return 0;
        int fd = fcntl(sb->gate_fd, F_DUPFD_CLOEXEC, 3);
        int r = fd < 0 ? negative_errno() : netns_gate_attach(g, loop, fd);
        if (r < 0)
                return rtn_err(err, r, "serve the gate");
        *attached = sb->pid;
        return 0;
}
