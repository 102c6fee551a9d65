/* The request head the gate reads from inside the sandbox (netns/http.c, netns_http_parse,
 * and the head it writes upstream, netns_http_upstream_head): apt, curl, npm and friends, or
 * anything a command sends to 127.0.0.1:PORT. The input is the request head. Oracles beyond
 * the sanitizers:
 *   - whatever the gate accepts, ref_accepts below accepts too: a plain reading of RFC 9112's
 *     grammar (lines end in CRLF, request-line, field-lines, at most one Host (one in
 *     HTTP/1.1 but CONNECT) and one Content-Length, no Transfer-Encoding beside
 *     Content-Length), written apart from the
 *     gate's parser so that the two do not share a mistake;
 *   - an accepted head ends at its first empty line by any server's reading
 *     (netns_http_head_end), so no server sees a second request or another line in it;
 *   - a target taken has a port of 1-65535 and a host with no userinfo, path or query;
 *   - the head rtn writes upstream parses back through the gate's parser to the same
 *     request: method, path, version, Host the target, the fields kept in order and
 *     unchanged, the same Content-Length; and writing it again gives the same bytes (a
 *     CONNECT is never written upstream, and a head of nearly NETNS_HTTP_FIELDS_MAX fields
 *     may grow past it, so those two are not). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fuzz/fuzz.h"
#include "netns/internal.h"
#include "netns/netns.h"

static bool ref_tchar(unsigned char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
               c == '!' || c == '#' || c == '$' || c == '%' || c == '&' || c == '\'' || c == '*' ||
               c == '+' || c == '-' || c == '.' || c == '^' || c == '_' || c == '`' || c == '|' ||
               c == '~';
}

/* RFC 9112: HTTP-message = start-line CRLF *( field-line CRLF ) CRLF, read line by line. */
static bool ref_accepts(const uint8_t *d, size_t n) {
        size_t i = 0, line = 0;
        int hosts = 0, cls = 0, tes = 0;
        bool v11 = false, connect = n >= 8 && !memcmp(d, "CONNECT ", 8);
        for (;;) {
                size_t s = i;
                while (i < n && d[i] != '\r' && d[i] != '\n')
                        i++;
                if (i + 1 >= n || d[i] != '\r' || d[i + 1] != '\n')
                        return false; /* a line ends in CR LF, and only there */
                size_t e = i;
                i += 2;
                if (e == s) /* the empty line: the end of the head, and of the input */
                        return line > 0 && i == n && (!hosts ? !v11 || connect : hosts == 1) &&
                               cls <= 1 && !(cls && tes);
                if (line++ == 0) { /* method SP request-target SP HTTP-version */
                        size_t k = s;
                        while (k < e && ref_tchar(d[k]))
                                k++;
                        if (k == s || k == e || d[k] != ' ')
                                return false;
                        size_t t = ++k;
                        while (k < e && d[k] > 0x20 && d[k] < 0x7f)
                                k++;
                        if (k == t || k == e || d[k] != ' ' || e - k - 1 != 8 ||
                            memcmp(d + k + 1, "HTTP/1.", 7) || (d[e - 1] != '0' && d[e - 1] != '1'))
                                return false;
                        v11 = d[e - 1] == '1';
                        continue;
                }
                size_t k = s; /* field-name ":" OWS field-value OWS */
                while (k < e && ref_tchar(d[k]))
                        k++;
                if (k == s || k == e || d[k] != ':')
                        return false;
                size_t nl = k - s;
                for (size_t j = k + 1; j < e; j++)
                        if ((d[j] < 0x20 && d[j] != '\t') || d[j] == 0x7f)
                                return false;
                const char *name = (const char *)d + s;
                hosts += nl == 4 && !strncasecmp(name, "host", 4);
                tes += nl == 17 && !strncasecmp(name, "transfer-encoding", 17);
                if (nl == 14 && !strncasecmp(name, "content-length", 14)) {
                        size_t v = k + 1, w = e;
                        while (v < w && (d[v] == ' ' || d[v] == '\t'))
                                v++;
                        while (w > v && (d[w - 1] == ' ' || d[w - 1] == '\t'))
                                w--;
                        if (v == w)
                                return false;
                        for (; v < w; v++)
                                if (d[v] < '0' || d[v] > '9')
                                        return false;
                        cls++;
                }
        }
}

static bool same(const char *a, size_t al, const char *b, size_t bl) {
        return al == bl && !memcmp(a, b, al);
}

/* The head written from q parses back to q's request. */
static void check_rewrite(const struct netns_http_req *q) {
        const char *host = q->form == NETNS_HTTP_ORIGIN ? "origin.test" : q->host;
        uint16_t port = q->form == NETNS_HTTP_ORIGIN ? 443 : q->port;
        uint16_t def = q->form == NETNS_HTTP_ORIGIN ? 443 : 80;
        struct netns_secrets none = {0};
        static struct netns_http_req b;
        char why[200], *out = NULL, *again = NULL;
        ssize_t ol = netns_http_upstream_head(&none, q, host, port, def, false, &out);
        if (ol < 0)
                abort();
        if (netns_http_parse(out, (size_t)ol, &b, why, sizeof why) < 0 ||
            netns_http_head_end(out, (size_t)ol) != (size_t)ol)
                abort();
        if (b.form != NETNS_HTTP_ORIGIN || !same(b.method, b.ml, q->method, q->ml) ||
            b.minor != q->minor || b.has_cl != q->has_cl || b.content_length != q->content_length ||
            b.chunked)
                abort();
        if (q->form != NETNS_HTTP_AUTHORITY && !same(b.path, b.pl, q->path, q->pl) &&
            !(q->pl == 0 && same(b.path, b.pl, "/", 1)) &&
            !(b.pl == q->pl + 1 && b.path[0] == '/' && !memcmp(b.path + 1, q->path, q->pl)))
                abort();
        char hp[300];
        int hl = snprintf(hp, sizeof hp, port == def ? "%s" : "%s:%u", host, port);
        if (!same(b.hostv, b.hostl, hp, (size_t)hl) || b.nfields < 2 || b.f[0].value != b.hostv)
                abort();
        /* its fields but Host first and the framing and Connection last: q's, in order */
        size_t j = 0, last = b.nfields - 1 - b.has_cl;
        for (size_t i = 1; i < last; i++) {
                while (j < q->nfields &&
                       !(same(b.f[i].name, b.f[i].nl, q->f[j].name, q->f[j].nl) &&
                         same(b.f[i].value, b.f[i].vl, q->f[j].value, q->f[j].vl)))
                        j++;
                if (j++ == q->nfields)
                        abort();
        }
        ssize_t al = netns_http_upstream_head(&none, &b, host, port, def, false, &again);
        if (al != ol || memcmp(out, again, (size_t)ol))
                abort();
        netns_http_head_free(out, (size_t)ol);
        netns_http_head_free(again, (size_t)al);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static struct netns_http_req q;
        char why[200];
        char *head = malloc(size ? size : 1);
        if (!head)
                abort();
        memcpy(head, data, size);
        int r = netns_http_parse(head, size, &q, why, sizeof why);
        if (memcmp(head, data, size))
                abort();
        if (r == 0) {
                if (!ref_accepts(data, size) || netns_http_head_end(head, size) != size)
                        abort();
                if (q.form != NETNS_HTTP_ORIGIN &&
                    (!q.host[0] || strpbrk(q.host, "@/?# \t\r\n") || (q.port == 0)))
                        abort();
                if (q.form == NETNS_HTTP_AUTHORITY && !same(q.method, q.ml, "CONNECT", 7))
                        abort();
                /* a CONNECT is never rewritten; the head written adds Host, Content-Length
                 * and Connection to what it keeps */
                if (q.form != NETNS_HTTP_AUTHORITY && q.nfields + 3 <= NETNS_HTTP_FIELDS_MAX)
                        check_rewrite(&q);
        } else if (!why[0] || (r != -EINVAL && r != -EPROTONOSUPPORT)) {
                abort();
        }
        free(head);
        return 0;
}
