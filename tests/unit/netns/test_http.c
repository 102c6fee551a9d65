/* The gate's one reading of a request head and the head it writes upstream (netns/http.c):
 * every spelling by which a lenient server could read another line, another Host or another
 * body than the gate read is refused; what goes upstream is written from the parse. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "netns/internal.h"
#include "netns/netns.h"

static struct netns_http_req q;

static int parse(const char *head, char *why, size_t wl) {
        why[0] = '\0';
        return netns_http_parse(head, strlen(head), &q, why, wl);
}

static void refused(const char *head, const char *why_has) {
        char why[200];
        cr_assert_lt(parse(head, why, sizeof why), 0, "accepted: %s", head);
        cr_assert(strstr(why, why_has), "'%s' lacks '%s' for: %s", why, why_has, head);
}

Test(netns_http, head_end_by_any_reading) {
        const char *a = "GET / HTTP/1.1\r\nHost: a\r\n\r\nmore";
        cr_assert_eq(netns_http_head_end(a, strlen(a)), strlen(a) - 4);
        cr_assert_eq(netns_http_head_end("GET / HTTP/1.1\n\nX", 17), 16);
        cr_assert_eq(netns_http_head_end("GET / HTTP/1.1\r\nA: b\n\r\nX", 24), 23);
        cr_assert_eq(netns_http_head_end("GET / HTTP/1.1\r\nA: b\r\n", 22), 0);
        cr_assert_eq(netns_http_head_end("GET / HTTP/1.1\r\n\r", 17), 0);
}

Test(netns_http, plain_request_parsed) {
        char why[200];
        cr_assert_eq(parse("POST http://Allowed.test:8080/p?q=1 HTTP/1.1\r\nHost: allowed.test:8080"
                           "\r\nX-A:  b c \t\r\nContent-Length: 0012\r\n\r\n",
                           why, sizeof why),
                     0, "%s", why);
        cr_assert_eq(q.form, NETNS_HTTP_ABSOLUTE);
        cr_assert_str_eq(q.host, "Allowed.test");
        cr_assert_eq(q.port, 8080);
        cr_assert_eq(q.pl, 6);
        cr_assert(!memcmp(q.path, "/p?q=1", 6));
        cr_assert_eq(q.minor, 1);
        cr_assert(q.has_cl);
        cr_assert_eq(q.content_length, 12);
        cr_assert_eq(q.nfields, 3);
        cr_assert_eq(q.f[1].vl, 3);
        cr_assert(!memcmp(q.f[1].value, "b c", 3));
        cr_assert(netns_http_host_is(&q, "allowed.test", 8080, 80));
        cr_assert_not(netns_http_host_is(&q, "allowed.test", 80, 80));
        cr_assert_eq(parse("CONNECT [2001:db8::1]:443 HTTP/1.1\r\n\r\n", why, sizeof why), 0, "%s",
                     why);
        cr_assert_eq(q.form, NETNS_HTTP_AUTHORITY);
        cr_assert_str_eq(q.host, "[2001:db8::1]");
        cr_assert_eq(parse("GET http://a.test HTTP/1.0\r\n\r\n", why, sizeof why), 0, "%s", why);
        cr_assert_eq(q.pl, 0);
        cr_assert_eq(parse("GET / HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: gzip, chunked"
                           "\r\n\r\n",
                           why, sizeof why),
                     0, "%s", why);
        cr_assert(q.chunked);
}

/* Each spelling of a line, a Host or a body that some server reads otherwise. */
Test(netns_http, ambiguous_heads_refused) {
        refused("GET http://a.test/ HTTP/1.1\nHost: evil.test\r\n\r\n", "bare LF");
        refused("GET http://a.test/ HTTP/1.1\r\nHost: a.test\nHost: evil.test\r\n\r\n", "bare LF");
        refused("GET http://a.test/ HTTP/1.1\r\nHost: a.test\n\n", "CRLF CRLF");
        refused("GET http://a.test/ HTTP/1.1\rHost: evil.test\r\nHost: a.test\r\n\r\n", "bare CR");
        refused("GET http://a.test/ HTTP/1.1\r\nX: a\rHost: evil.test\r\nHost: a.test\r\n\r\n",
                "bare CR");
        refused("GET http://a.test/ HTTP/1.1\r\nX: a\r\n Host: evil.test\r\nHost: a.test\r\n\r\n",
                "obs-fold");
        refused("GET http://a.test/ HTTP/1.1\r\nX: a\r\n\tb\r\nHost: a.test\r\n\r\n", "obs-fold");
        refused("GET http://a.test/ HTTP/1.1\r\nHost : evil.test\r\n\r\n",
                "before a header's colon");
        refused("GET http://a.test/ HTTP/1.1\r\nHost\t: evil.test\r\n\r\n",
                "before a header's colon");
        refused("GET http://a.test/ HTTP/1.1\r\nHo st: evil.test\r\nHost: a.test\r\n\r\n",
                "invalid header name");
        refused("GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nX\x01: 1\r\n\r\n",
                "invalid header name");
        refused("GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nNoColon\r\n\r\n",
                "without a colon");
        refused("GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nX: a\x01\r\n\r\n",
                "control character");
        refused("GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nX: a\x7f\r\n\r\n",
                "control character");
        refused("GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nhost: evil.test\r\n\r\n",
                "two Host headers");
        refused("GET http://a.test/ HTTP/1.1\r\nHost: a.test, evil.test\r\n\r\n", "malformed Host");
        refused("GET http://a.test/ HTTP/1.1\r\nHost: \r\n\r\n", "malformed Host");
        refused("GET http://a.test/ HTTP/1.1\r\nX: y\r\n\r\n", "without a Host");
        refused("\r\nGET http://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n", "empty line before");
}

Test(netns_http, framing_refused) {
        refused("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked"
                "\r\n\r\n",
                "both Content-Length and Transfer-Encoding");
        refused("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n",
                "two Content-Length");
        refused("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5, 5\r\n\r\n",
                "malformed Content-Length");
        refused("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: +5\r\n\r\n",
                "malformed Content-Length");
        refused("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999\r\n\r\n",
                "malformed Content-Length");
        refused("POST / HTTP/1.1\r\nHost: a\r\nContent-Length:\r\n\r\n",
                "malformed Content-Length");
        refused("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, gzip\r\n\r\n",
                "chunked last");
        refused("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, chunked\r\n\r\n",
                "chunked last");
        refused("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: xchunked\r\n\r\n",
                "chunked last");
        refused("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n"
                "Transfer-Encoding: chunked\r\n\r\n",
                "two Transfer-Encoding");
        refused("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", "HTTP/1.0");
        refused("GET / HTTP/1.1\r\nHost: a\r\nConnection: close, a b\r\n\r\n",
                "malformed Connection");
}

Test(netns_http, request_line_shape_refused) {
        refused("GET http://a.test/ HTTP/2.0\r\nHost: a.test\r\n\r\n", "not HTTP/1.0 or HTTP/1.1");
        refused("GET http://a.test/ HTTP/1.10\r\nHost: a.test\r\n\r\n", "not HTTP/1.0");
        refused("GET http://a.test/ http/1.1\r\nHost: a.test\r\n\r\n", "not HTTP/1.0");
        refused("GET http://a.test/\r\nHost: a.test\r\n\r\n", "malformed request line");
        refused("GET  http://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n", "malformed request line");
        refused("GET http://a.test/  HTTP/1.1\r\nHost: a.test\r\n\r\n", "not HTTP/1.0");
        refused("G(T http://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n", "malformed request line");
        refused("GET http://a.test/\x7f HTTP/1.1\r\nHost: a.test\r\n\r\n",
                "malformed request target");
        refused("GET http://a.test/#f HTTP/1.1\r\nHost: a.test\r\n\r\n", "fragment");
        refused("GET http://u@a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n", "userinfo");
        refused("GET http://a.test:0/ HTTP/1.1\r\nHost: a.test\r\n\r\n",
                "malformed request target");
        refused("GET http://a.test:65536/ HTTP/1.1\r\nHost: a.test\r\n\r\n", "malformed request");
        refused("GET http://a.test:/ HTTP/1.1\r\nHost: a.test\r\n\r\n", "malformed request target");
        refused("GET http://a%2etest/ HTTP/1.1\r\nHost: a.test\r\n\r\n",
                "malformed request target");
        refused("GET https://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n", "only http://");
        refused("OPTIONS * HTTP/1.1\r\nHost: a.test\r\n\r\n", "malformed request target");
        refused("CONNECT a.test HTTP/1.1\r\n\r\n", "not host:port");
        refused("CONNECT http://a.test/ HTTP/1.1\r\n\r\n", "not host:port");
        static const char nul[] = "GET http://a.test/ HTTP/1.1\r\nHost: a.test\0\r\n\r\n";
        char why[200];
        cr_assert_lt(netns_http_parse(nul, sizeof nul - 1, &q, why, sizeof why), 0);
        cr_assert(strstr(why, "NUL"), "%s", why);
}

/* What goes upstream is written from the parse: origin-form, rtn's Host, the fields kept in
 * order, the hop-by-hop ones gone (with every name Connection lists), the framing from the
 * parse, Connection: close. */
Test(netns_http, upstream_head_written_from_the_parse) {
        char why[200], *out = NULL;
        struct netns_secrets none = {0};
        cr_assert_eq(parse("POST http://a.test:8080?x HTTP/1.1\r\nHost: A.test:8080\r\n"
                           "X-One: 1\r\nConnection: keep-alive, X-Hop\r\nX-Hop: gone\r\n"
                           "Proxy-Authorization: Basic x\r\nKeep-Alive: 5\r\nTE: trailers\r\n"
                           "Upgrade: h2c\r\nContent-Length: 007\r\nx-two:\t2 \r\nclose: 1\r\n\r\n",
                           why, sizeof why),
                     0, "%s", why);
        ssize_t n = netns_http_upstream_head(&none, &q, q.host, q.port, 80, false, &out);
        cr_assert_gt(n, 0);
        cr_assert_str_eq(out, "POST /?x HTTP/1.1\r\nHost: a.test:8080\r\nX-One: 1\r\n"
                              "x-two: 2\r\nContent-Length: 7\r\nConnection: close\r\n\r\n");
        netns_http_head_free(out, (size_t)n);
        cr_assert_eq(parse("GET /in/tls HTTP/1.0\r\nHost: s.test\r\n\r\n", why, sizeof why), 0);
        n = netns_http_upstream_head(&none, &q, "s.test", 443, 443, false, &out);
        cr_assert_str_eq(out, "GET /in/tls HTTP/1.0\r\nHost: s.test\r\nConnection: close\r\n\r\n");
        netns_http_head_free(out, (size_t)n);
}
