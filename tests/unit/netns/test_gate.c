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
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/loop.h"
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

static void start(struct fixture *f) {
        const char *hosts[] = {"localhost", "allowed.test", ".wild.test"};
        struct rtn_error err = {0};
        cr_assert_eq(rtn_loop_new(&f->loop), 0);
        cr_assert_eq(netns_gate_new(hosts, 3, &f->g, &err), 0, "%s", err.msg);
        int l = listen_any(&f->gate_port);
        cr_assert_eq(netns_gate_attach(f->g, f->loop, l), 0);
        f->victim = listen_any(&f->victim_port);
        cr_assert_eq(pthread_create(&f->t, NULL, loop_main, f), 0);
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

/* req may hold "VPORT", replaced by the victim's port. The reply's status must be code. */
static void refused_with(int code, const char *tmpl, const char *why) {
        struct fixture f = {0};
        char req[512], buf[2048], port[8];
        start(&f);
        snprintf(port, sizeof port, "%u", f.victim_port);
        snprintf(req, sizeof req, "%s", tmpl);
        for (char *v; (v = strstr(req, "VPORT"));) {
                memmove(v + strlen(port), v + 5, strlen(v + 5) + 1);
                memcpy(v, port, strlen(port));
        }
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
