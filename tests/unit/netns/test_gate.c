/* The gate's proxy (netns/gate.c) on a real loop and real sockets: a client speaks HTTP to
 * it the way apt does, and a local "victim" server on 127.0.0.1 records whether anything ever
 * reached it. Only local servers are used, so every request must be refused: a name not on
 * the allowlist, an allowlisted name that resolves to loopback, a raw IP, a port other than
 * 80/443, a scheme other than http, a malformed head. */
#include <criterion/criterion.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/loop.h"
#include "netns/internal.h"
#include "netns/netns.h"

static int listen_any(uint16_t *port) {
        int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t len = sizeof a;
        cr_assert(s >= 0 && bind(s, (void *)&a, sizeof a) == 0 && listen(s, 8) == 0);
        cr_assert_eq(getsockname(s, (void *)&a, &len), 0);
        *port = ntohs(a.sin_port);
        return s;
}

struct fixture {
        struct rtn_loop *loop;
        struct netns_gate *g;
        uint16_t gate_port, victim_port;
        int victim;
        pthread_t t;
};

static void *loop_main(void *arg) {
        struct fixture *f = arg;
        while (!rtn_loop_stopped(f->loop))
                rtn_loop_run_once(f->loop, 50);
        return NULL;
}

/* A gate whose policy admits allowed.test, .wild.test and, written into the policy as no
 * user can (--allow-net refuses it), localhost: the filter at each request must hold alone.
 * With open_victim, --allow-host-port opens the victim's port. */
static void start_with(struct fixture *f, bool open_victim) {
        struct rtn_error err = {0};
        struct netns_policy p = {0};
        cr_assert_eq(netns_policy_add(&p, "allowed.test", &err), 0, "%s", err.msg);
        cr_assert_eq(netns_policy_add(&p, ".wild.test", &err), 0, "%s", err.msg);
        cr_assert_eq(netns_policy_add(&p, "own.test", &err), 0, "%s", err.msg);
        snprintf(p.rules[2].host, sizeof p.rules[2].host, "localhost");
        f->victim = listen_any(&f->victim_port);
        char port[8];
        snprintf(port, sizeof port, "%u", f->victim_port);
        if (open_victim)
                cr_assert_eq(netns_policy_add_host_port(&p, port, &err), 0, "%s", err.msg);
        cr_assert_eq(rtn_loop_new(&f->loop), 0);
        cr_assert_eq(netns_gate_new_policy(&p, &f->g, &err), 0, "%s", err.msg);
        netns_policy_free(&p);
        int l = listen_any(&f->gate_port);
        cr_assert_eq(netns_gate_attach(f->g, f->loop, l), 0);
        cr_assert_eq(pthread_create(&f->t, NULL, loop_main, f), 0);
}

static void start(struct fixture *f) {
        start_with(f, false);
}

static void stop(struct fixture *f) {
        rtn_loop_stop(f->loop, 0);
        pthread_join(f->t, NULL);
        netns_gate_free(f->g);
        rtn_loop_free(f->loop);
}

/* Sends req through the gate and returns the status line's code and the reply in buf. */
static int ask(struct fixture *f, const char *req, char *buf, size_t len) {
        int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in a = {.sin_family = AF_INET,
                                .sin_port = htons(f->gate_port),
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        cr_assert_eq(connect(s, (void *)&a, sizeof a), 0);
        cr_assert_eq(write(s, req, strlen(req)), (ssize_t)strlen(req));
        size_t got = 0;
        ssize_t n;
        while (got < len - 1 && (n = read(s, buf + got, len - 1 - got)) > 0)
                got += (size_t)n;
        buf[got] = '\0';
        close(s);
        int code = 0;
        sscanf(buf, "HTTP/1.1 %d", &code);
        return code;
}

static bool victim_touched(struct fixture *f) {
        struct pollfd p = {.fd = f->victim, .events = POLLIN};
        return poll(&p, 1, 100) > 0;
}

/* tmpl with each "VPORT" replaced by port, into req. */
static void fill(char *req, size_t len, const char *tmpl, uint16_t port) {
        char p[8];
        snprintf(p, sizeof p, "%u", port);
        snprintf(req, len, "%s", tmpl);
        for (char *v; (v = strstr(req, "VPORT"));) {
                memmove(v + strlen(p), v + 5, strlen(v + 5) + 1);
                memcpy(v, p, strlen(p));
        }
}

/* req may hold "VPORT", replaced by the victim's port. The reply's status must be code. */
static void refused_with(int code, const char *tmpl, const char *why) {
        struct fixture f = {0};
        char req[512], buf[2048];
        start(&f);
        fill(req, sizeof req, tmpl, f.victim_port);
        cr_assert_eq(ask(&f, req, buf, sizeof buf), code, "reply: %s", buf);
        cr_assert(strstr(buf, why), "reply lacks '%s': %s", why, buf);
        cr_assert_not(victim_touched(&f), "the local server was reached");
        char last[256];
        cr_assert_eq(netns_gate_refusals(f.g, last, sizeof last), 1);
        cr_assert(strstr(last, why), "refusal note: %s", last);
        stop(&f);
}

/* A refusal by the policy. */
static void refused(const char *tmpl, const char *why) {
        refused_with(403, tmpl, why);
}

/* A head the gate does not read one way only (netns/http.c). */
static void bad(const char *tmpl, const char *why) {
        refused_with(400, tmpl, why);
}

Test(netns_gate, name_not_on_allowlist) {
        refused("GET http://example.org/x HTTP/1.1\r\nHost: example.org\r\n\r\n",
                "example.org is not on the allowlist");
}

Test(netns_gate, allowlisted_name_resolving_to_loopback) {
        refused("CONNECT localhost:443 HTTP/1.1\r\nHost: localhost:443\r\n\r\n",
                "refused address (loopback");
}

Test(netns_gate, raw_ip_of_a_host_service) {
        refused("GET http://127.0.0.1:VPORT/ HTTP/1.1\r\nHost: 127.0.0.1:VPORT\r\n\r\n",
                "only ports 80 and 443");
        refused("GET http://127.0.0.1/ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
                "127.0.0.1 is not on the allowlist");
        refused("CONNECT [::1]:443 HTTP/1.1\r\n\r\n", "[::1] is not on the allowlist");
}

Test(netns_gate, other_ports_schemes_and_garbage) {
        refused("CONNECT allowed.test:22 HTTP/1.1\r\n\r\n", "only ports 80 and 443");
        bad("GET ftp://allowed.test/ HTTP/1.1\r\n\r\n", "only http://");
        bad("GET /relative HTTP/1.1\r\nHost: allowed.test\r\n\r\n", "only http://");
        bad("GET http://user@allowed.test/ HTTP/1.1\r\n\r\n", "userinfo");
        bad("NONSENSE\r\n\r\n", "a malformed request line");
}

/* ".wild.test" is the domain and every name under it (docs/network.md), never a name that
 * merely ends in the same letters. */
Test(netns_gate, domain_rule_matches_it_and_below_only) {
        refused("CONNECT evilwild.test:443 HTTP/1.1\r\n\r\n", "is not on the allowlist");
        refused("CONNECT wild.test.evil.example:443 HTTP/1.1\r\n\r\n", "is not on the allowlist");
        /* the domain and a name below it are admitted by the rule, then stopped by DNS (or
         * the address filter) */
        const char *ok[] = {"CONNECT a.wild.test:443 HTTP/1.1\r\n\r\n",
                            "CONNECT wild.test:443 HTTP/1.1\r\n\r\n"};
        for (size_t i = 0; i < 2; i++) {
                struct fixture f = {0};
                char buf[2048];
                start(&f);
                cr_assert_eq(ask(&f, ok[i], buf, sizeof buf), 403);
                cr_assert_null(strstr(buf, "allowlist"), "reply: %s", buf);
                stop(&f);
        }
}

/* Plain HTTP is held to the host of its request line: a Host header naming another host
 * (a shared address would serve that one) is refused before anything goes upstream. */
Test(netns_gate, host_header_must_name_the_target) {
        bad("GET http://allowed.test/ HTTP/1.1\r\nHost: evil.example\r\n\r\n",
            "the Host header names evil.example, not allowed.test");
        bad("GET http://allowed.test/ HTTP/1.1\r\nHost: allowed.test:8080\r\n\r\n",
            "the Host header names allowed.test:8080");
        bad("GET http://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\nhost: evil.example"
            "\r\n\r\n",
            "two Host headers");
        bad("GET http://allowed.test/ HTTP/1.1\r\n\r\n", "without a Host header");
        bad("CONNECT allowed.test:443 HTTP/1.1\r\nHost: evil.example:443\r\n\r\n",
            "the Host header names evil.example:443");
        refused_with(411,
                     "POST http://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n"
                     "Transfer-Encoding: chunked\r\n\r\n",
                     "chunked request body");
        /* lines a lenient server might read another Host out of */
        bad("GET http://allowed.test/ HTTP/1.1\nHost: evil.example\r\n\r\n", "a bare LF");
        bad("GET http://allowed.test/ HTTP/1.1\r\nHost: allowed.test\nHost: evil.example\r\n"
            "\r\n",
            "a bare LF");
        bad("GET http://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\nHost : evil.example"
            "\r\n\r\n",
            "whitespace before a header's colon");
        bad("GET http://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\nX-A: b\r\n"
            " Host: evil.example\r\n\r\n",
            "obs-fold");
        bad("GET http://allowed.test/ HTTP/1.1\r\nX-A: b\rHost: evil.example\r\n"
            "Host: allowed.test\r\n\r\n",
            "a bare CR");
}

/* An address is admitted only by a rule that names that address; every spelling a
 * resolver takes for one counts as an address. */
Test(netns_gate, address_spellings_are_addresses) {
        refused("CONNECT 127.1:443 HTTP/1.1\r\n\r\n", "127.0.0.1 is not on the allowlist");
        refused("CONNECT 0x7f000001:443 HTTP/1.1\r\n\r\n", "127.0.0.1 is not on the allowlist");
        refused("CONNECT 2130706433:443 HTTP/1.1\r\n\r\n", "127.0.0.1 is not on the allowlist");
        bad("CONNECT 127.0.0.1\tallowed.test:443 HTTP/1.1\r\n\r\n", "a malformed request target");
}

/* The denials of a stretch of time, merged: what a command's result reports. */
Test(netns_gate, denials_since_a_point) {
        struct fixture f = {0};
        char buf[2048];
        start(&f);
        ask(&f, "CONNECT evil.example:443 HTTP/1.1\r\n\r\n", buf, sizeof buf);
        uint64_t seq = netns_gate_seq(f.g), more = 0;
        cr_assert_eq(seq, 1);
        for (int i = 0; i < 3; i++)
                ask(&f, "CONNECT other.example:443 HTTP/1.1\r\n\r\n", buf, sizeof buf);
        struct netns_denial d[4];
        cr_assert_eq(netns_gate_denials(f.g, seq, UINT64_MAX, d, 4, &more), 1);
        cr_assert_str_eq(d[0].host, "other.example");
        cr_assert_eq(d[0].port, 443);
        cr_assert_eq(d[0].count, 3);
        cr_assert_eq(more, 0);
        cr_assert_eq(netns_gate_denials(f.g, 0, seq, d, 4, &more), 1);
        cr_assert_str_eq(d[0].host, "evil.example");
        cr_assert_eq(netns_gate_denials(f.g, NETNS_GATE_ALL, 0, d, 4, &more), 2);
        cr_assert_eq(netns_gate_denials(f.g, NETNS_GATE_ALL, 0, d, 1, &more), 1);
        cr_assert_eq(more, 3);
        stop(&f);
}

/* --allow-host-port: host.rtn.internal on the opened port reaches the host's loopback there
 * (plain HTTP and a CONNECT tunnel carrying anything); every other spelling of the loopback
 * and every other port of it is refused before a byte reaches it. */
static void host_port_reaches(const char *tmpl, const char *want) {
        struct fixture f = {0};
        char req[512], buf[2048];
        start_with(&f, true);
        fill(req, sizeof req, tmpl, f.victim_port);
        int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in a = {.sin_family = AF_INET,
                                .sin_port = htons(f.gate_port),
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        cr_assert_eq(connect(s, (void *)&a, sizeof a), 0);
        cr_assert_eq(write(s, req, strlen(req)), (ssize_t)strlen(req));
        int c = accept4(f.victim, NULL, NULL, SOCK_CLOEXEC);
        cr_assert(c >= 0, "the host's service was not reached");
        struct pollfd pf = {.fd = c, .events = POLLIN};
        cr_assert_eq(poll(&pf, 1, 5000), 1);
        ssize_t n = read(c, buf, sizeof buf - 1);
        cr_assert(n > 0);
        buf[n] = '\0';
        cr_assert(strstr(buf, want), "upstream got: %s", buf);
        close(c);
        close(s);
        stop(&f);
}

Test(netns_gate, host_port_reached_by_its_name) {
        host_port_reaches("GET http://host.rtn.internal:VPORT/v1 HTTP/1.1\r\n"
                          "Host: host.rtn.internal:VPORT\r\n\r\n",
                          "GET /v1 HTTP/1.1\r\nHost: host.rtn.internal:");
        host_port_reaches("GET http://HOST.rtn.internal.:VPORT/ HTTP/1.1\r\n"
                          "Host: host.rtn.internal.:VPORT\r\n\r\n",
                          "GET / HTTP/1.1\r\n");
        host_port_reaches("CONNECT host.rtn.internal:VPORT HTTP/1.1\r\n\r\nSSH-2.0-VPORT\r\n",
                          "SSH-2.0-");
}

static void host_port_refused(const char *tmpl, const char *why) {
        struct fixture f = {0};
        char req[512], buf[2048];
        start_with(&f, true);
        fill(req, sizeof req, tmpl, f.victim_port);
        cr_assert_eq(ask(&f, req, buf, sizeof buf), 403, "reply: %s", buf);
        cr_assert(strstr(buf, why), "reply lacks '%s': %s", why, buf);
        cr_assert_not(victim_touched(&f), "the host's service was reached");
        stop(&f);
}

Test(netns_gate, host_port_only_by_its_name_and_port) {
        host_port_refused("GET http://127.0.0.1:VPORT/ HTTP/1.1\r\nHost: 127.0.0.1:VPORT\r\n\r\n",
                          "rtn gate refused");
        host_port_refused("CONNECT 127.0.0.1:VPORT HTTP/1.1\r\nHost: 127.0.0.1:VPORT\r\n\r\n",
                          "rtn gate refused");
        host_port_refused("CONNECT [::1]:VPORT HTTP/1.1\r\n\r\nVPORT", "rtn gate refused");
        host_port_refused("CONNECT [::ffff:127.0.0.1]:VPORT HTTP/1.1\r\n\r\nVPORT",
                          "rtn gate refused");
        host_port_refused("CONNECT 2130706433:VPORT HTTP/1.1\r\n\r\nVPORT", "rtn gate refused");
        host_port_refused("CONNECT localhost:VPORT HTTP/1.1\r\n\r\nVPORT", "rtn gate refused");
        host_port_refused("CONNECT x.wild.test:VPORT HTTP/1.1\r\n\r\nVPORT", "rtn gate refused");
        /* another port of the host's name */
        host_port_refused("CONNECT host.rtn.internal:1 HTTP/1.1\r\n\r\nVPORT",
                          "port 1 of host.rtn.internal is not open");
        host_port_refused("GET http://host.rtn.internal/ HTTP/1.1\r\nHost: host.rtn.internal"
                          "\r\n\r\n",
                          "port 80 of host.rtn.internal is not open");
}

/* A listener of rtn's own (this test's process is no rtn, so one of a process called rtn is
 * made: a child renamed rtn holds the socket) is never opened, even when named. */
Test(netns_gate, host_port_of_rtn_refused) {
        struct fixture f = {0};
        char req[256], buf[2048];
        start_with(&f, true);
        pid_t pid = fork();
        if (pid == 0) {
                prctl(PR_SET_NAME, "rtn");
                pause();
                _exit(0);
        }
        cr_assert(pid > 0);
        for (int i = 0; i < 100 && netns_port_rtns(f.victim_port) != 1; i++)
                usleep(10000);
        cr_assert_eq(netns_port_rtns(f.victim_port), 1);
        fill(req, sizeof req, "CONNECT host.rtn.internal:VPORT HTTP/1.1\r\n\r\n", f.victim_port);
        int code = ask(&f, req, buf, sizeof buf);
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        cr_assert_eq(code, 403, "reply: %s", buf);
        cr_assert(strstr(buf, "one of rtn's own listeners"), "%s", buf);
        cr_assert_not(victim_touched(&f));
        stop(&f);
}

/* The relay (netns/gate.c, relay_loop) moves a request's body and its answer whole, in
 * both directions at once, and sends no client byte upstream past the Content-Length: a
 * server behind a port of the host takes a body of REQ_BODY bytes, sees nothing after it,
 * and answers ANSWER bytes, each a pattern the other side checks byte for byte. */
#define REQ_BODY 300000
#define ANSWER (6u << 20)

static unsigned char pattern(size_t i) {
        return (unsigned char)(i * 7 + (i >> 13));
}

struct upstream {
        int listen_fd;
        const char *fail; /* what went wrong, or NULL */
};

static void *upstream_main(void *arg) {
        struct upstream *u = arg;
        static char head[4096];
        int c = accept4(u->listen_fd, NULL, NULL, SOCK_CLOEXEC);
        size_t hl = 0, body = 0;
        char *end = NULL;
        while (!end && hl < sizeof head - 1) {
                ssize_t n = read(c, head + hl, sizeof head - 1 - hl);
                if (n <= 0)
                        return u->fail = "no head", close(c), NULL;
                hl += (size_t)n;
                head[hl] = '\0';
                end = strstr(head, "\r\n\r\n");
        }
        if (!end || !strstr(head, "Content-Length: 300000\r\n"))
                return u->fail = "a head without the body's length", close(c), NULL;
        for (size_t i = (size_t)(end + 4 - head); i < hl; i++, body++)
                if ((unsigned char)head[i] != pattern(body))
                        return u->fail = "the body changed", close(c), NULL;
        static unsigned char buf[65536];
        while (body < REQ_BODY) {
                ssize_t n = read(c, buf, sizeof buf);
                if (n <= 0)
                        return u->fail = "the body was cut", close(c), NULL;
                for (ssize_t i = 0; i < n; i++, body++)
                        if (body >= REQ_BODY || buf[i] != pattern(body))
                                return u->fail = "bytes past or other than the body", close(c),
                                       NULL;
        }
        struct pollfd p = {.fd = c, .events = POLLIN};
        if (poll(&p, 1, 200) != 0)
                return u->fail = "bytes after the body reached the server", close(c), NULL;
        _cleanup_free_ char *out = malloc(ANSWER + 128);
        if (!out)
                return u->fail = "no memory for the answer", close(c), NULL;
        int ol = snprintf(out, 128, "HTTP/1.1 200 OK\r\nContent-Length: %u\r\n\r\n", ANSWER);
        for (size_t i = 0; i < ANSWER; i++)
                out[(size_t)ol + i] = (char)pattern(i);
        for (size_t off = 0, len = (size_t)ol + ANSWER; off < len;) {
                ssize_t n = write(c, out + off, len - off);
                if (n <= 0)
                        return u->fail = "the answer could not be sent", close(c), NULL;
                off += (size_t)n;
        }
        close(c);
        return NULL;
}

Test(netns_gate, relay_moves_body_and_answer_whole) {
        struct fixture f = {0};
        start_with(&f, true);
        struct upstream u = {.listen_fd = f.victim};
        pthread_t t;
        cr_assert_eq(pthread_create(&t, NULL, upstream_main, &u), 0);
        _cleanup_free_ char *req = malloc(REQ_BODY + 512);
        cr_assert_not_null(req);
        int hl = snprintf(req, 512,
                          "POST http://host.rtn.internal:%u/up HTTP/1.1\r\n"
                          "Host: host.rtn.internal:%u\r\nContent-Length: %u\r\n\r\n",
                          f.victim_port, f.victim_port, REQ_BODY);
        for (size_t i = 0; i < REQ_BODY; i++)
                req[(size_t)hl + i] = (char)pattern(i);
        memcpy(req + hl + REQ_BODY, "EXTRA", 5); /* past the body: never sent on */
        int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in a = {.sin_family = AF_INET,
                                .sin_port = htons(f.gate_port),
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        cr_assert_eq(connect(s, (void *)&a, sizeof a), 0);
        size_t len = (size_t)hl + REQ_BODY + 5;
        for (size_t off = 0; off < len;) {
                ssize_t n = write(s, req + off, len - off);
                cr_assert(n > 0, "write: %s", strerror(errno));
                off += (size_t)n;
        }
        shutdown(s, SHUT_WR);
        const size_t got_size = ANSWER + 4096;
        _cleanup_free_ char *got = malloc(got_size);
        cr_assert_not_null(got);
        size_t n = 0;
        for (ssize_t k; n < got_size && (k = read(s, got + n, got_size - n)) > 0;)
                n += (size_t)k;
        close(s);
        pthread_join(t, NULL);
        cr_assert_null(u.fail, "upstream: %s", u.fail);
        got[n < got_size ? n : got_size - 1] = '\0';
        char *body = strstr(got, "\r\n\r\n");
        cr_assert(body && !strncmp(got, "HTTP/1.1 200 OK\r\n", 17), "answer: %.200s", got);
        body += 4;
        cr_assert_eq(n - (size_t)(body - got), ANSWER, "answer of %zu bytes",
                     n - (size_t)(body - got));
        for (size_t i = 0; i < ANSWER; i++)
                cr_assert_eq((unsigned char)body[i], pattern(i), "answer byte %zu changed", i);
        stop(&f);
}

/* The relay reads on after a full read without polling (netns/gate.c, RELAY_BURST), and
 * those reads too stop at a_limit: with more than a burst's first read queued on a (1 MiB on
 * a socket whose buffer holds it), exactly a_limit bytes reach b, in order, and the rest
 * stays unread on a. */
Test(netns_gate, relay_reads_on_but_not_past_the_limit) {
        int a[2], b[2];
        cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, a), 0);
        cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, b), 0);
        int big = 4 << 20;
        cr_assert_eq(setsockopt(a[1], SOL_SOCKET, SO_SNDBUF, &big, sizeof big), 0);
        cr_assert_eq(setsockopt(b[0], SOL_SOCKET, SO_SNDBUF, &big, sizeof big), 0);
        const size_t queued = 1u << 20, limit = 600000;
        _cleanup_free_ unsigned char *buf = malloc(queued);
        cr_assert_not_null(buf);
        for (size_t i = 0; i < queued; i++)
                buf[i] = pattern(i);
        for (size_t off = 0; off < queued;) {
                ssize_t n = write(a[1], buf + off, queued - off);
                cr_assert(n > 0, "write: %s", strerror(errno));
                off += (size_t)n;
        }
        cr_assert_eq(shutdown(b[1], SHUT_WR), 0); /* b's side ends: the relay returns */
        netns_relay(a[0], b[0], limit);
        size_t got = 0;
        for (ssize_t k; (k = recv(b[1], buf, queued, MSG_DONTWAIT)) > 0;) {
                for (ssize_t i = 0; i < k; i++)
                        cr_assert_eq(buf[i], pattern(got + (size_t)i), "byte %zu changed",
                                     got + (size_t)i);
                got += (size_t)k;
        }
        cr_assert_eq(got, limit, "%zu bytes reached b", got);
        int left = 0;
        cr_assert_eq(ioctl(a[0], FIONREAD, &left), 0);
        cr_assert_eq((size_t)left, queued - limit, "%d bytes left unread on a", left);
        close(a[0]), close(a[1]), close(b[0]), close(b[1]);
}
