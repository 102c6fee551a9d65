/* The density part of tools/bench: what a sandbox costs the machine while it lives. Each
 * run starts --density N `rtn exec -- sleep` sandboxes at once (the command is
 * `sh -c 'echo; exec sleep ...'`, so each says on one shared pipe when it runs and is then
 * the same sleep), times the start of all N from the first spawn to the N-th line, and reads
 * /proc/meminfo before and after: MemAvailable's drop per sandbox (everything: rtn, rtn-init,
 * the sleep, the kernel's share), and the kernel's own parts, slab and page tables, per
 * sandbox. Every sandbox is stopped at the end of its run, when a start fails, and on
 * SIGINT, SIGTERM or SIGHUP (the bench then exits by the same signal): rtn passes SIGTERM
 * to its command, and a rtn killed outright takes its sandbox along (rtn-init's
 * PDEATHSIG). MemAvailable is the whole machine's: whatever else runs moves it too. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tools/bench.h"

#define DENSITY_START_SEC 300 /* a start of all N slower than this is a failure */
#define DENSITY_STOP_SEC 20 /* SIGTERM, then SIGKILL after this */

static volatile sig_atomic_t stop_sig;

static void on_signal(int sig) {
        stop_sig = sig;
}

struct meminfo {
        long avail_kib, slab_kib, pagetables_kib;
};

static int meminfo_read(struct meminfo *m) {
        FILE *f = fopen("/proc/meminfo", "re");
        if (!f)
                return -errno;
        char line[128];
        long v;
        *m = (struct meminfo){-1, -1, -1};
        while (fgets(line, sizeof line, f)) {
                if (sscanf(line, "MemAvailable: %ld kB", &v) == 1)
                        m->avail_kib = v;
                else if (sscanf(line, "Slab: %ld kB", &v) == 1)
                        m->slab_kib = v;
                else if (sscanf(line, "PageTables: %ld kB", &v) == 1)
                        m->pagetables_kib = v;
        }
        fclose(f);
        return m->avail_kib < 0 || m->slab_kib < 0 || m->pagetables_kib < 0 ? -ENODATA : 0;
}

/* SIGTERM to every rtn still there, SIGKILL to those left after DENSITY_STOP_SEC, and every
 * one reaped. */
static void stop_all(pid_t *pids, int n) {
        for (int i = 0; i < n; i++)
                if (pids[i] > 0)
                        kill(pids[i], SIGTERM);
        double give_up = bench_now() + DENSITY_STOP_SEC;
        int left = 0;
        for (int i = 0; i < n; i++)
                left += pids[i] > 0;
        while (left > 0) {
                pid_t p = waitpid(-1, NULL, WNOHANG);
                if (p > 0) {
                        for (int i = 0; i < n; i++)
                                if (pids[i] == p) {
                                        pids[i] = 0;
                                        left--;
                                }
                        continue;
                }
                if (p < 0 && errno == ECHILD)
                        break;
                if (bench_now() > give_up) {
                        for (int i = 0; i < n; i++)
                                if (pids[i] > 0)
                                        kill(pids[i], SIGKILL);
                        give_up = bench_now() + DENSITY_STOP_SEC;
                }
                usleep(10000);
        }
}

/* Waits for n lines on fd, or for a start to fail, a signal or the time limit. Returns 0,
 * or -errno with why in note. */
static int wait_ready(int fd, pid_t *pids, int n, char *note, size_t nl) {
        double give_up = bench_now() + DENSITY_START_SEC;
        int got = 0;
        while (got < n) {
                if (stop_sig) {
                        snprintf(note, nl, "stopped by signal %d", (int)stop_sig);
                        return -EINTR;
                }
                int st;
                pid_t p = waitpid(-1, &st, WNOHANG);
                if (p > 0) {
                        for (int i = 0; i < n; i++)
                                if (pids[i] == p)
                                        pids[i] = 0;
                        snprintf(note, nl, "a sandbox ended after %d of %d started (status %d)",
                                 got, n, WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
                        return -ECHILD;
                }
                if (bench_now() > give_up) {
                        snprintf(note, nl, "%d of %d started in %d s", got, n, DENSITY_START_SEC);
                        return -ETIMEDOUT;
                }
                struct pollfd pfd = {.fd = fd, .events = POLLIN};
                if (poll(&pfd, 1, 100) <= 0)
                        continue;
                char buf[4096];
                ssize_t r = read(fd, buf, sizeof buf);
                for (ssize_t i = 0; i < r; i++)
                        got += buf[i] == '\n';
        }
        return 0;
}

/* One run: returns 0 and fills the results, or -errno with the reason in note. */
static int density_run(const struct bench_opts *o, pid_t *pids, char *note, size_t nl) {
        int n = o->density;
        int pfd[2];
        if (pipe2(pfd, O_CLOEXEC) < 0)
                return snprintf(note, nl, "pipe: %s", strerror(errno)), -errno;
        struct meminfo before, after;
        int r = meminfo_read(&before);
        if (r < 0) {
                snprintf(note, nl, "/proc/meminfo: %s", strerror(-r));
                goto out;
        }
        char *argv[] = {(char *)o->rtn, "exec", "--", "sh", "-c", "echo; exec sleep 86400", NULL};
        double t0 = bench_now();
        for (int i = 0; i < n && !stop_sig; i++) {
                pids[i] = bench_spawn(argv, -1, pfd[1], -1);
                if (pids[i] < 0) {
                        r = pids[i];
                        pids[i] = 0;
                        snprintf(note, nl, "spawn of sandbox %d: %s", i + 1, strerror(-r));
                        goto out;
                }
        }
        if ((r = wait_ready(pfd[0], pids, n, note, nl)) < 0)
                goto out;
        double t = bench_now() - t0;
        usleep(500000); /* let the last starts' transient allocations settle */
        if ((r = meminfo_read(&after)) < 0) {
                snprintf(note, nl, "/proc/meminfo: %s", strerror(-r));
                goto out;
        }
        bench_add(bench_result("density_start", "start of all N sandboxes", "s"), t);
        bench_add(bench_result("density_avail", "MemAvailable drop per sandbox", "MiB"),
                  (double)(before.avail_kib - after.avail_kib) / 1024 / n);
        bench_add(bench_result("density_slab", "slab per sandbox", "MiB"),
                  (double)(after.slab_kib - before.slab_kib) / 1024 / n);
        bench_add(bench_result("density_pagetables", "page tables per sandbox", "MiB"),
                  (double)(after.pagetables_kib - before.pagetables_kib) / 1024 / n);
        bench_log(o, "density: %d sandboxes in %.2f s, MemAvailable -%ld MiB", n, t,
                  (before.avail_kib - after.avail_kib) / 1024);
out:
        stop_all(pids, n);
        close(pfd[0]);
        close(pfd[1]);
        return r;
}

void bench_density(const struct bench_opts *o) {
        char label[64];
        snprintf(label, sizeof label, "%d concurrent rtn exec -- sleep", o->density);
        pid_t *pids = calloc((size_t)o->density, sizeof *pids);
        if (!pids) {
                bench_skip("density_start", label, "out of memory");
                return;
        }
        struct sigaction sa = {.sa_handler = on_signal}, old[3];
        const int sigs[3] = {SIGINT, SIGTERM, SIGHUP};
        for (int i = 0; i < 3; i++)
                sigaction(sigs[i], &sa, &old[i]);
        char note[96] = "";
        for (int run = 0; run < o->density_runs && !stop_sig; run++) {
                if (density_run(o, pids, note, sizeof note) < 0)
                        break;
                bench_log(o, "density: run %d/%d done", run + 1, o->density_runs);
        }
        free(pids);
        for (int i = 0; i < 3; i++)
                sigaction(sigs[i], &old[i], NULL);
        if (stop_sig) {
                signal((int)stop_sig, SIG_DFL);
                raise((int)stop_sig);
        }
        struct bench_result *r = bench_result("density_start", "start of all N sandboxes", "s");
        snprintf(r->label, sizeof r->label, "start of %d sandboxes", o->density);
        if (note[0])
                snprintf(r->note, sizeof r->note, "%s", note);
}
