/* The http group of tools/bench: `rtn serve --http` against `rtn serve` on stdio, the same
 * tools/call in the same run. Per run: a fresh HTTP server on a free loopback port (its token
 * in a file of the bench's own), a session initialized over one keep-alive connection, then
 * WRITES file_write calls of 1 MiB, each timed from the first byte of the request to the
 * last of its response; then a fresh stdio server and the same calls (bench_mcp.c). The
 * line's ratio is HTTP over stdio of the medians: what the HTTP front end costs a body. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tools/bench.h"

#define WRITE_BYTES (1 << 20)
#define WRITES 10
#define HTTP_TIMEOUT_MS 60000

struct http {
        pid_t pid;
        int err_fd; /* the server's stderr */
        int fd; /* the keep-alive connection */
        unsigned port;
        char sid[64];
        char token[64];
        char buf[65536];
};

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *)a, y = *(const double *)b;
        return (x > y) - (x < y);
}

static int write_all(int fd, const char *p, size_t len) {
        while (len) {
                ssize_t n = write(fd, p, len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                p += n;
                len -= (size_t)n;
        }
        return 0;
}

/* Reads until the server's stderr names its port. */
static int http_port(struct http *h) {
        size_t len = 0;
        for (;;) {
                struct pollfd p = {.fd = h->err_fd, .events = POLLIN};
                if (poll(&p, 1, 10000) <= 0)
                        return -ETIMEDOUT;
                ssize_t n = read(h->err_fd, h->buf + len, sizeof h->buf - 1 - len);
                if (n <= 0)
                        return -EPIPE;
                len += (size_t)n;
                h->buf[len] = '\0';
                char *at = strstr(h->buf, "listening on http://127.0.0.1:");
                if (at && sscanf(at, "listening on http://127.0.0.1:%u/", &h->port) == 1)
                        return 0;
        }
}

static int http_start(const struct bench_opts *o, struct http *h) {
        char tok[4096], data[4096];
        snprintf(tok, sizeof tok, "%s/rtn-bench-token-%d", o->tmp, (int)getpid());
        snprintf(data, sizeof data, "%s/rtn-bench-http-%d", o->tmp, (int)getpid());
        snprintf(h->token, sizeof h->token, "bench-token-%d-0123456789abcdef", (int)getpid());
        int fd = open(tok, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0)
                return -errno;
        int r = write_all(fd, h->token, strlen(h->token));
        close(fd);
        if (r < 0)
                return r;
        int errp[2];
        if (pipe2(errp, O_CLOEXEC) < 0)
                return -errno;
        char *argv[] = {(char *)o->rtn, "serve", "--http", "127.0.0.1:0", "--token-file", tok,
                        "--data-dir",   data,    NULL};
        h->pid = bench_spawn(argv, -1, -1, errp[1]);
        close(errp[1]);
        h->err_fd = errp[0];
        h->fd = -1;
        if (h->pid < 0)
                return (int)h->pid;
        return http_port(h);
}

static void http_stop(const struct bench_opts *o, struct http *h) {
        if (h->fd >= 0)
                close(h->fd);
        if (h->pid > 0) {
                kill(h->pid, SIGTERM);
                waitpid(h->pid, NULL, 0);
        }
        close(h->err_fd);
        char p[4096];
        snprintf(p, sizeof p, "%s/rtn-bench-token-%d", o->tmp, (int)getpid());
        unlink(p);
        snprintf(p, sizeof p, "%s/rtn-bench-http-%d", o->tmp, (int)getpid());
        char *rm[] = {"rm", "-rf", "--", p, NULL};
        (void)bench_run(rm, -1, -1, 2);
}

/* One POST on the keep-alive connection; the response's status, its body in h->buf. */
static int http_post(struct http *h, const char *body, size_t len) {
        if (h->fd < 0) {
                struct sockaddr_in a = {.sin_family = AF_INET,
                                        .sin_port = htons((uint16_t)h->port)};
                a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
                if ((h->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
                    connect(h->fd, (struct sockaddr *)&a, sizeof a) < 0)
                        return -errno;
                int one = 1;
                (void)setsockopt(h->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        }
        char head[512];
        int hl = snprintf(head, sizeof head,
                          "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nAuthorization: Bearer "
                          "%s\r\nContent-Type: application/json\r\nAccept: application/json, "
                          "text/event-stream\r\nContent-Length: %zu\r\n%s%s%s\r\n",
                          h->port, h->token, len, *h->sid ? "Mcp-Session-Id: " : "", h->sid,
                          *h->sid ? "\r\n" : "");
        int r;
        if ((r = write_all(h->fd, head, (size_t)hl)) < 0 || (r = write_all(h->fd, body, len)) < 0)
                return r;
        size_t got = 0;
        char *end = NULL;
        long clen = -1;
        for (;;) {
                if (!end && (end = strstr(h->buf, "\r\n\r\n"))) {
                        char *cl = strcasestr(h->buf, "\r\nContent-Length:");
                        clen = cl && cl < end ? strtol(cl + 17, NULL, 10) : 0;
                        char *sid = strcasestr(h->buf, "\r\nMcp-Session-Id: ");
                        if (sid && sid < end)
                                sscanf(sid + 18, "%63[0-9a-f]", h->sid);
                }
                if (end && (long)(got - (size_t)(end + 4 - h->buf)) >= clen)
                        break;
                struct pollfd p = {.fd = h->fd, .events = POLLIN};
                if (got >= sizeof h->buf - 1 || poll(&p, 1, HTTP_TIMEOUT_MS) <= 0)
                        return -ETIMEDOUT;
                ssize_t n = read(h->fd, h->buf + got, sizeof h->buf - 1 - got);
                if (n <= 0)
                        return n < 0 ? -errno : -EPIPE;
                got += (size_t)n;
                h->buf[got] = '\0';
        }
        int status = 0;
        (void)sscanf(h->buf, "HTTP/1.1 %d", &status);
        memmove(h->buf, end + 4, (size_t)clen);
        h->buf[clen] = '\0';
        return status;
}

static int http_run(const struct bench_opts *o, const char *params, double *ms) {
        static struct http h;
        memset(&h, 0, sizeof h);
        int r = http_start(o, &h);
        static const char init[] =
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
                "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{"
                "\"name\":\"rtn-bench\",\"version\":\"1\"}}}";
        static const char inited[] =
                "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";
        if (r == 0 && (r = http_post(&h, init, sizeof init - 1)) == 200 && *h.sid)
                r = http_post(&h, inited, sizeof inited - 1) == 202 ? 0 : -EPROTO;
        else if (r >= 0)
                r = -EPROTO;
        size_t pl = strlen(params);
        char *req = malloc(pl + 128);
        for (int i = 0; r == 0 && i < WRITES; i++) {
                if (!req) {
                        r = -ENOMEM;
                        break;
                }
                int n = snprintf(req, pl + 128,
                                 "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\","
                                 "\"params\":%s}",
                                 i + 2, params);
                double t0 = bench_now();
                int st = http_post(&h, req, (size_t)n);
                ms[i] = (bench_now() - t0) * 1e3;
                if (st != 200 || strstr(h.buf, "\"isError\":true")) {
                        fprintf(stderr, "bench: HTTP file_write: %d %.300s\n", st, h.buf);
                        r = st < 0 ? st : -EPROTO;
                }
        }
        free(req);
        http_stop(o, &h);
        return r;
}

void bench_http(const struct bench_opts *o) {
        if (!bench_rtn_has(o, "serve")) {
                bench_skip("http_write_1m", "HTTP file_write", "this rtn has no serve verb");
                return;
        }
        static const char pre[] = "{\"name\":\"file_write\",\"arguments\":{\"path\":\"/tmp/f\","
                                  "\"content\":\"";
        char *params = malloc(sizeof pre + WRITE_BYTES + 8);
        if (!params)
                return;
        memcpy(params, pre, sizeof pre - 1);
        memset(params + sizeof pre - 1, 'x', WRITE_BYTES);
        strcpy(params + sizeof pre - 1 + WRITE_BYTES, "\"}}");
        double http[WRITES], stdio[WRITES];
        for (int run = 0; run < o->runs; run++) {
                int r = http_run(o, params, http);
                if (r == 0)
                        r = bench_stdio_call_ms(o, params, WRITES, stdio);
                if (r < 0) {
                        bench_skip("http_write_1m", "HTTP file_write 1 MiB", "run %d: %s", run + 1,
                                   strerror(-r));
                        break;
                }
                qsort(http, WRITES, sizeof *http, cmp_double);
                qsort(stdio, WRITES, sizeof *stdio, cmp_double);
                bench_add(bench_result("http_write_1m", "file_write 1 MiB over HTTP p50", "ms"),
                          http[(WRITES - 1) / 2]);
                bench_add(bench_result("stdio_write_1m", "file_write 1 MiB over stdio p50", "ms"),
                          stdio[(WRITES - 1) / 2]);
                bench_log(o, "http: run %d/%d done", run + 1, o->runs);
        }
        free(params);
}
