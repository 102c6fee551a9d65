/* The `rtn serve` part of tools/bench: a minimal MCP client that starts `rtn serve`, keeps
 * its stdio open and speaks JSON-RPC lines (initialize, notifications/initialized, then
 * requests one at a time, each timed from the write of the request line to the read of the
 * response line with its id). Per run, on a fresh server: peak and current RSS once it has
 * initialized (idle, no sandbox yet), the first shell_run (which starts the sandbox), the RSS
 * that sandbox added (the server and every process below it, rtn-init included), p50/p99
 * of shell_run `true` and `echo x`, and ping round trips per second. The fork group: on a
 * fresh server, the cold first shell_run, sandbox_fork of a sandbox holding 10 MB and 1 GB
 * of changes (their ratio to that cold start), and 100 forks open at once and then running,
 * with the RSS of the server and everything below it. */
#include <dirent.h>
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

#define RESPONSE_TIMEOUT_MS 60000

struct client {
        pid_t pid;
        int to, from;
        char buf[1 << 20];
        size_t len, consumed;
        long next_id;
};

static int client_start_args(const struct bench_opts *o, struct client *c, char *const *extra) {
        int in[2], out[2];
        if (pipe2(in, O_CLOEXEC) < 0)
                return -errno;
        if (pipe2(out, O_CLOEXEC) < 0) {
                int e = -errno;
                close(in[0]);
                close(in[1]);
                return e;
        }
        char *argv[16] = {(char *)o->rtn, "serve"};
        for (int i = 0; extra && extra[i] && i < 13; i++)
                argv[2 + i] = extra[i];
        c->pid = bench_spawn(argv, in[0], out[1], o->verbose ? 2 : -1);
        close(in[0]);
        close(out[1]);
        c->to = in[1];
        c->from = out[0];
        c->len = c->consumed = 0;
        c->next_id = 1;
        return c->pid < 0 ? (int)c->pid : 0;
}

static int client_start(const struct bench_opts *o, struct client *c) {
        return client_start_args(o, c, NULL);
}

static void client_stop(struct client *c) {
        close(c->to); /* stdin EOF: the server shuts down */
        close(c->from);
        int st;
        for (int i = 0; i < 50; i++) {
                if (waitpid(c->pid, &st, WNOHANG) == c->pid)
                        return;
                usleep(100000);
        }
        kill(c->pid, SIGKILL);
        waitpid(c->pid, &st, 0);
}

static int client_send(struct client *c, const char *line) {
        size_t len = strlen(line);
        while (len) {
                ssize_t n = write(c->to, line, len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                line += n;
                len -= (size_t)n;
        }
        return 0;
}

/* Next line from the server, NUL-terminated in place; NULL on EOF, error or timeout. */
static char *client_line(struct client *c) {
        if (c->consumed) {
                memmove(c->buf, c->buf + c->consumed, c->len - c->consumed);
                c->len -= c->consumed;
                c->consumed = 0;
        }
        for (;;) {
                char *nl = memchr(c->buf, '\n', c->len);
                if (nl) {
                        *nl = '\0';
                        c->consumed = (size_t)(nl - c->buf) + 1;
                        return c->buf;
                }
                if (c->len == sizeof c->buf - 1)
                        return NULL; /* a line longer than we keep */
                struct pollfd p = {.fd = c->from, .events = POLLIN};
                if (poll(&p, 1, RESPONSE_TIMEOUT_MS) <= 0)
                        return NULL;
                ssize_t n = read(c->from, c->buf + c->len, sizeof c->buf - 1 - c->len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return NULL;
                c->len += (size_t)n;
        }
}

/* A response carries our id followed by ',' or '}' and a result or an error member;
 * notifications (progress, log messages) in between are skipped. */
static bool is_response(const char *line, long id) {
        char pat[40];
        int l = snprintf(pat, sizeof pat, "\"id\":%ld", id);
        for (const char *p = strstr(line, pat); p; p = strstr(p + 1, pat))
                if (p[l] == ',' || p[l] == '}')
                        return strstr(line, "\"result\"") || strstr(line, "\"error\"");
        return false;
}

/* Sends one request and returns its response line (valid until the next call). */
static char *client_call(struct client *c, const char *method, const char *params) {
        static char line[4096];
        long id = c->next_id++;
        snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"%s\"%s%s}\n", id,
                 method, params ? ",\"params\":" : "", params ? params : "");
        if (client_send(c, line) < 0)
                return NULL;
        for (;;) {
                char *r = client_line(c);
                if (!r || is_response(r, id))
                        return r;
        }
}

static const char init_params[] = "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
                                  "\"clientInfo\":{\"name\":\"rtn-bench\",\"version\":\"1\"}}";

static int client_init(struct client *c) {
        char *r = client_call(c, "initialize", init_params);
        if (!r || !strstr(r, "\"result\""))
                return -EPROTO;
        return client_send(c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
}

/* kB of a field ("VmRSS:", "VmHWM:") of /proc/PID/status; 0 when gone. */
static long status_kb(pid_t pid, const char *field) {
        char path[64], line[256];
        long kb = 0;
        snprintf(path, sizeof path, "/proc/%d/status", pid);
        FILE *f = fopen(path, "re");
        while (f && fgets(line, sizeof line, f))
                if (!strncmp(line, field, strlen(field)))
                        kb = strtol(line + strlen(field), NULL, 10);
        if (f)
                fclose(f);
        return kb;
}

static pid_t ppid_of(pid_t pid) {
        char path[64], buf[512];
        snprintf(path, sizeof path, "/proc/%d/stat", pid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return 0;
        ssize_t n = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (n <= 0)
                return 0;
        buf[n] = '\0';
        char *p = strrchr(buf, ')'); /* comm may hold spaces and parentheses */
        int ppid = 0;
        if (p)
                sscanf(p + 1, " %*c %d", &ppid);
        return ppid;
}

/* RSS of pid and every process below it, in kB. */
static long tree_rss_kb(pid_t root) {
        long total = status_kb(root, "VmRSS:");
        DIR *d = opendir("/proc");
        struct dirent *e;
        while (d && (e = readdir(d))) {
                pid_t pid = (pid_t)strtol(e->d_name, NULL, 10);
                if (pid <= 0 || pid == root)
                        continue;
                for (pid_t p = ppid_of(pid); p > 1; p = ppid_of(p))
                        if (p == root) {
                                total += status_kb(pid, "VmRSS:");
                                break;
                        }
        }
        if (d)
                closedir(d);
        return total;
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *)a, y = *(const double *)b;
        return (x > y) - (x < y);
}

/* p50 of n sorted samples, in ms, added to the result key/label. */
static void add_p50(const double *sorted, int n, const char *key, const char *label) {
        char k[48], l[64];
        snprintf(k, sizeof k, "%s_p50", key);
        snprintf(l, sizeof l, "%s p50", label);
        bench_add(bench_result(k, l, "ms"), sorted[(n - 1) / 2]);
}

/* calls round trips of one tools/call; adds p50 and p99 in ms. With floor, each call is
 * followed by a posix_spawn of /bin/true, timed the same way: the floor beside the calls,
 * under the same load at the same moments, which the ratio is taken against. */
static int time_calls(const struct bench_opts *o, struct client *c, const char *params,
                      const char *key, const char *label, bool floor) {
        double *lat = calloc((size_t)o->calls, sizeof *lat);
        double *spawn = calloc((size_t)o->calls, sizeof *spawn);
        if (!lat || !spawn) {
                free(lat);
                free(spawn);
                return -ENOMEM;
        }
        char *true_argv[] = {"/bin/true", NULL};
        for (int i = 0; i < o->calls; i++) {
                double t0 = bench_now();
                char *r = client_call(c, "tools/call", params);
                lat[i] = (bench_now() - t0) * 1e3;
                if (!r || strstr(r, "\"isError\":true")) {
                        fprintf(stderr, "bench: %s failed: %.300s\n", label, r ? r : "no answer");
                        free(lat);
                        free(spawn);
                        return -EPROTO;
                }
                if (floor) {
                        t0 = bench_now();
                        (void)bench_run(true_argv, -1, -1, -1);
                        spawn[i] = (bench_now() - t0) * 1e3;
                }
        }
        if (floor) {
                qsort(spawn, (size_t)o->calls, sizeof *spawn, cmp_double);
                add_p50(spawn, o->calls, "spawn_true_beside",
                        "posix_spawn /bin/true, beside calls");
        }
        free(spawn);
        qsort(lat, (size_t)o->calls, sizeof *lat, cmp_double);
        add_p50(lat, o->calls, key, label);
        char k[48], l[64];
        snprintf(k, sizeof k, "%s_p99", key);
        snprintf(l, sizeof l, "%s p99", label);
        bench_add(bench_result(k, l, "ms"), lat[(int)((o->calls - 1) * 0.99)]);
        free(lat);
        return 0;
}

static int time_pings(const struct bench_opts *o, struct client *c) {
        double t0 = bench_now();
        for (int i = 0; i < o->calls; i++) {
                char *r = client_call(c, "ping", NULL);
                if (!r || !strstr(r, "\"result\""))
                        return -EPROTO;
        }
        double dt = bench_now() - t0;
        bench_add(bench_result("ping_rate", "ping round trips per second", "1/s"), o->calls / dt);
        return 0;
}

static const char call_true[] = "{\"name\":\"shell_run\",\"arguments\":{\"command\":\"true\"}}";
static const char call_echo[] = "{\"name\":\"shell_run\",\"arguments\":{\"command\":\"echo x\"}}";

static int one_run(const struct bench_opts *o, struct client *c) {
        int r = client_init(c);
        if (r < 0)
                return r;
        if (!client_call(c, "ping", NULL))
                return -EPROTO;
        long idle_hwm = status_kb(c->pid, "VmHWM:"), idle_rss = status_kb(c->pid, "VmRSS:");
        bench_add(bench_result("serve_idle_hwm", "rtn serve idle, peak RSS", "MiB"),
                  idle_hwm / 1024.0);
        double t0 = bench_now();
        char *first = client_call(c, "tools/call", call_true);
        double dt = (bench_now() - t0) * 1e3;
        if (!first || strstr(first, "\"isError\":true")) {
                bench_skip("shell_run_true_p50", "shell_run", "first shell_run failed: %.60s",
                           first ? first : "no answer");
                return -EPROTO;
        }
        bench_add(bench_result("shell_run_first", "shell_run true, first (starts sandbox)", "ms"),
                  dt);
        bench_add(bench_result("session_rss", "RSS added by a live session", "MiB"),
                  (tree_rss_kb(c->pid) - idle_rss) / 1024.0);
        if ((r = time_calls(o, c, call_true, "shell_run_true", "shell_run true (warm)", true)) <
                    0 ||
            (r = time_calls(o, c, call_echo, "shell_run_echo", "shell_run echo x (warm)", false)) <
                    0)
                return r;
        return time_pings(o, c);
}

void bench_serve(const struct bench_opts *o) {
        if (!bench_rtn_has(o, "serve")) {
                bench_skip("serve", "rtn serve", "this rtn has no serve verb yet");
                return;
        }
        static struct client c;
        for (int run = 0; run < o->runs; run++) {
                int r = client_start(o, &c);
                if (r == 0)
                        r = one_run(o, &c);
                client_stop(&c);
                if (r < 0) {
                        fprintf(stderr, "bench: rtn serve run %d: %s\n", run + 1, strerror(-r));
                        return;
                }
                bench_log(o, "serve: run %d/%d done", run + 1, o->runs);
        }
}

/* ---- one large tools/call over stdio (the http group's reference) ---------------------- */

int bench_stdio_call_ms(const struct bench_opts *o, const char *params, int calls, double *ret) {
        static struct client c;
        int r = client_start(o, &c);
        if (r == 0)
                r = client_init(&c);
        size_t pl = strlen(params);
        char *line = malloc(pl + 128);
        for (int i = 0; r == 0 && i < calls; i++) {
                long id = c.next_id++;
                if (!line) {
                        r = -ENOMEM;
                        break;
                }
                snprintf(line, pl + 128,
                         "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"tools/call\","
                         "\"params\":%s}\n",
                         id, params);
                double t0 = bench_now();
                if ((r = client_send(&c, line)) < 0)
                        break;
                char *l;
                while ((l = client_line(&c)) && !is_response(l, id))
                        ;
                if (!l || strstr(l, "\"isError\":true") || strstr(l, "\"error\"")) {
                        fprintf(stderr, "bench: stdio call failed: %.300s\n", l ? l : "no answer");
                        r = -EPROTO;
                        break;
                }
                ret[i] = (bench_now() - t0) * 1e3;
        }
        free(line);
        client_stop(&c);
        return r;
}

int bench_stdio_seq_ms(const struct bench_opts *o, char *const *extra, const char *const *params,
                       int calls, double *ret) {
        static struct client c;
        int r = client_start_args(o, &c, extra);
        if (r == 0)
                r = client_init(&c);
        for (int i = 0; r == 0 && i < calls; i++) {
                double t0 = bench_now();
                char *l = client_call(&c, "tools/call", params[i]);
                if (!l || strstr(l, "\"isError\":true")) {
                        fprintf(stderr, "bench: stdio call failed: %.300s\n", l ? l : "no answer");
                        r = -EPROTO;
                        break;
                }
                ret[i] = (bench_now() - t0) * 1e3;
        }
        client_stop(&c);
        return r;
}

/* ---- sandbox_fork ----------------------------------------------------------------------- */

#define FORKS_ALIVE 100

/* One tools/call that must succeed; its time in ms, or < 0. */
static double timed_tool(struct client *c, const char *params, const char *what) {
        double t0 = bench_now();
        char *r = client_call(c, "tools/call", params);
        double dt = (bench_now() - t0) * 1e3;
        if (!r || strstr(r, "\"isError\":true")) {
                fprintf(stderr, "bench: %s failed: %.300s\n", what, r ? r : "no answer");
                return -1;
        }
        return dt;
}

static int fork_sized(struct client *c, int mb, const char *key, const char *label, double cold) {
        char p[512];
        snprintf(p, sizeof p,
                 "{\"name\":\"shell_run\",\"arguments\":{\"command\":\"rm -f /var/tmp/fill; "
                 "head -c %dM /dev/urandom > /var/tmp/fill\",\"timeout\":600}}",
                 mb);
        if (timed_tool(c, p, "fill the sandbox") < 0)
                return -EPROTO;
        double dt = timed_tool(c, "{\"name\":\"sandbox_fork\",\"arguments\":{}}", label);
        if (dt < 0)
                return -EPROTO;
        bench_add(bench_result(key, label, "ms"), dt);
        char k[48], l[64];
        snprintf(k, sizeof k, "%s_ratio", key);
        snprintf(l, sizeof l, "%s / cold run", label);
        bench_add(bench_result(k, l, "x"), dt / cold);
        return timed_tool(c,
                          "{\"name\":\"shell_run\",\"arguments\":{\"command\":\"rm -f "
                          "/var/tmp/fill\"}}",
                          "empty the sandbox") < 0
                       ? -EPROTO
                       : 0;
}

static int close_sandbox(struct client *c, int n) {
        char p[128];
        snprintf(p, sizeof p, "{\"name\":\"sandbox_close\",\"arguments\":{\"sandbox\":\"sb-%d\"}}",
                 n);
        return timed_tool(c, p, "sandbox_close") < 0 ? -EPROTO : 0;
}

static int fork_run(const struct bench_opts *o, struct client *c) {
        int r = client_init(c);
        if (r < 0)
                return r;
        long idle_rss = status_kb(c->pid, "VmRSS:");
        double cold = timed_tool(c, call_true, "first shell_run");
        if (cold < 0)
                return -EPROTO;
        bench_add(bench_result("fork_cold_first", "shell_run true, cold (fork run)", "ms"), cold);
        if ((r = fork_sized(c, 10, "fork_10mb", "sandbox_fork, 10 MB changed", cold)) < 0 ||
            (r = close_sandbox(c, 2)) < 0 ||
            (r = fork_sized(c, 1024, "fork_1gb", "sandbox_fork, 1 GB changed", cold)) < 0 ||
            (r = close_sandbox(c, 3)) < 0)
                return r;
        long base_rss = tree_rss_kb(c->pid);
        double t0 = bench_now();
        for (int i = 0; i < FORKS_ALIVE; i++)
                if (timed_tool(c, "{\"name\":\"sandbox_fork\",\"arguments\":{}}", "fork") < 0)
                        return -EPROTO;
        bench_add(bench_result("forks_100_each", "sandbox_fork x100, mean per fork", "ms"),
                  (bench_now() - t0) * 1e3 / FORKS_ALIVE);
        bench_add(bench_result("forks_100_rss", "RSS, 100 forks open", "MiB"),
                  (tree_rss_kb(c->pid) - idle_rss) / 1024.0);
        for (int i = 0; i < FORKS_ALIVE; i++) {
                char p[160];
                snprintf(p, sizeof p,
                         "{\"name\":\"shell_run\",\"arguments\":{\"command\":\"true\","
                         "\"sandbox\":\"sb-%d\"}}",
                         4 + i);
                if (timed_tool(c, p, "shell_run in a fork") < 0)
                        return -EPROTO;
        }
        bench_add(bench_result("forks_100_running_rss", "RSS, 100 forks running", "MiB"),
                  (tree_rss_kb(c->pid) - idle_rss) / 1024.0);
        bench_add(bench_result("forks_one_running_rss", "RSS, 1 sandbox running (fork run)", "MiB"),
                  (base_rss - idle_rss) / 1024.0);
        return 0;
}

void bench_fork(const struct bench_opts *o) {
        if (!bench_rtn_has(o, "serve")) {
                bench_skip("fork", "sandbox_fork", "this rtn has no serve verb yet");
                return;
        }
        /* 1 GB of changes and its copy: room beyond the default 2 GiB upper. */
        char *const args[] = {"--upper-size", "3G", "--max-sandboxes", "128", NULL};
        static struct client c;
        for (int run = 0; run < o->runs; run++) {
                int r = client_start_args(o, &c, args);
                if (r == 0)
                        r = fork_run(o, &c);
                client_stop(&c);
                if (r < 0) {
                        fprintf(stderr, "bench: fork run %d: %s\n", run + 1, strerror(-r));
                        return;
                }
                bench_log(o, "fork: run %d/%d done", run + 1, o->runs);
        }
}
