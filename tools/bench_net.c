/* The network part of tools/bench: what the agent's proxy (netns/gate.c, docs/network.md)
 * costs a download. A 100 MiB file is served over plain HTTP on a documentation-range
 * address (the gate refuses loopback ones) in a network namespace of the bench's own, and
 * fetched by curl on that namespace's host side directly, then by curl inside
 * `rtn exec --allow-net ADDR:PORT` through the proxy, interleaved, each run; both sides
 * report curl's own time_total, so the sandbox's start is not in the ratio. The namespace
 * needs root: as another user the group is skipped, saying so. */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/bench.h"

#define NET_ADDR "203.0.113.1"
#define NET_PORT "18080"
#define NET_MB 100

static const char script[] =
        "set -e\n"
        "ip link set lo up\n"
        "ip addr add " NET_ADDR "/32 dev lo\n"
        "cd \"$1\"\n"
        "python3 -m http.server --bind " NET_ADDR " " NET_PORT " >/dev/null 2>&1 &\n"
        "srv=$!\n"
        "trap 'kill $srv' EXIT\n"
        "for _ in $(seq 100); do\n"
        "  curl -sf -o /dev/null http://" NET_ADDR ":" NET_PORT "/ && break; sleep 0.1\n"
        "done\n"
        "url=http://" NET_ADDR ":" NET_PORT "/blob\n"
        "for _ in $(seq \"$3\"); do\n"
        "  printf 'direct %s\\n' \"$(curl -sSf -o /dev/null -w '%{time_total}' $url)\"\n"
        "  printf 'proxy %s\\n' \"$(\"$2\" exec --quiet --allow-net " NET_ADDR ":" NET_PORT
        " -- curl -sSf -o /dev/null -w '%{time_total}' $url)\"\n"
        "done\n";

void bench_net(const struct bench_opts *o) {
        const char *key = "net_direct", *label = "100 MiB HTTP download, direct";
        if (geteuid() != 0) {
                bench_skip(key, label, "needs root for a test network namespace");
                return;
        }
        char dir[4096], path[4200], out[4200];
        snprintf(dir, sizeof dir, "%s/rtn-bench-net-XXXXXX", o->tmp);
        if (!mkdtemp(dir)) {
                bench_skip(key, label, "mkdtemp in %s: %s", o->tmp, strerror(errno));
                return;
        }
        snprintf(path, sizeof path, "%s/blob", dir);
        char size[32], runs[16], rtn[4096];
        if (!realpath(o->rtn, rtn)) { /* the script runs in dir */
                bench_skip(key, label, "%s: %s", o->rtn, strerror(errno));
                return;
        }
        snprintf(size, sizeof size, "%dM", NET_MB);
        snprintf(runs, sizeof runs, "%d", o->runs);
        char *mk[] = {"truncate", "-s", size, path, NULL};
        char *argv[] = {"unshare", "-n", "sh", "-c", (char *)script, "sh", dir, rtn, runs, NULL};
        snprintf(out, sizeof out, "%s/out", dir);
        int fd = open(out, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        int st = fd < 0 ? -errno : bench_run(mk, -1, -1, 2);
        if (st == 0)
                st = bench_run(argv, -1, fd, o->verbose ? 2 : -1);
        FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
        struct bench_result *d = bench_result(key, label, "s");
        struct bench_result *p = bench_result("net_proxy", "100 MiB HTTP download, via proxy", "s");
        char word[16];
        double v;
        if (f) {
                rewind(f);
                while (fscanf(f, "%15s %lf", word, &v) == 2)
                        bench_add(strcmp(word, "proxy") ? d : p, v);
                fclose(f);
        }
        if (st != 0 || d->n == 0 || p->n == 0)
                snprintf(d->note, sizeof d->note, "the download did not run (status %d)", st);
        char *rm[] = {"rm", "-rf", "--", dir, NULL};
        (void)bench_run(rm, -1, -1, 2);
}
