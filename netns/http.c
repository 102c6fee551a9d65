/* The gate's one reading of a request head (docs/network.md, "What the gate refuses";
 * docs/security-invariants.md, invariant 26), and the head rtn writes upstream from it.
 * Every request the gate serves goes through netns_http_parse once: a plain HTTP request, a
 * CONNECT, each request inside an intercepted tunnel, each request pipelined behind another
 * (netns/gate.c). The parse is RFC 9112's grammar held strictly, because the server behind
 * the gate may read leniently what the gate reads strictly: a bare LF or CR ends a line for
 * some servers and not for others, an obs-fold continues a field for some, "Host :" is a
 * Host for some. Whatever is not read one way only is refused, so that the request the gate
 * checked is the request every server reads. Then nothing of the client's head goes upstream
 * as it came: netns_http_upstream_head writes a request line, a Host and the fields from the
 * parse, so even a byte the parse let through cannot carry another line. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "netns/internal.h"
#include "netns/netns.h"

size_t netns_http_head_end(const char *buf, size_t len) {
        /* The first empty line by any server's reading: LF CRLF or LF LF. */
        for (const char *p = buf; (p = memchr(p, '\n', len - (size_t)(p - buf)));) {
                size_t rest = len - (size_t)(p - buf) - 1;
                if (rest >= 1 && p[1] == '\n')
                        return (size_t)(p - buf) + 2;
                if (rest >= 2 && p[1] == '\r' && p[2] == '\n')
                        return (size_t)(p - buf) + 3;
                if (rest < 2)
                        break;
                p++;
        }
        return 0;
}

/* tchar (RFC 9110 5.6.2). */
static bool tchar(unsigned char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               (c && strchr("!#$%&'*+-.^_`|~", c));
}

static bool token(const char *s, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (!tchar((unsigned char)s[i]))
                        return false;
        return n > 0;
}

static bool name_is(const struct netns_http_field *f, const char *name) {
        return f->nl == strlen(name) && !strncasecmp(f->name, name, f->nl);
}

/* Whether the comma-separated list s[0..n) (RFC 9110 5.6.1) holds the token t. Each element
 * is checked to be a token; *ret_ok is false when one is not. */
static bool list_has(const char *s, size_t n, const char *t, size_t tl, bool *ret_ok) {
        bool has = false;
        *ret_ok = true;
        for (size_t i = 0; i <= n;) {
                size_t j = i;
                while (j < n && s[j] != ',')
                        j++;
                size_t a = i, b = j;
                while (a < b && (s[a] == ' ' || s[a] == '\t'))
                        a++;
                while (b > a && (s[b - 1] == ' ' || s[b - 1] == '\t'))
                        b--;
                if (b > a && !token(s + a, b - a))
                        *ret_ok = false;
                if (b - a == tl && !strncasecmp(s + a, t, tl))
                        has = true;
                i = j + 1;
        }
        return has;
}

/* "host[:port]" into host (a [v6] literal keeps its brackets) and port (def when none).
 * Only the characters of a reg-name, an IPv4 address or an IP-literal (RFC 3986 3.2.2). */
static int split_authority(const char *s, size_t n, uint16_t def, char *host, size_t hl,
                           uint16_t *ret_port) {
        size_t h = 0;
        if (n && s[0] == '[') {
                const char *close = memchr(s, ']', n);
                if (!close)
                        return -EINVAL;
                h = (size_t)(close - s) + 1;
                for (size_t i = 1; i + 1 < h; i++)
                        if (!strchr("0123456789abcdefABCDEF:.", s[i]))
                                return -EINVAL;
        } else {
                while (h < n && s[h] != ':')
                        h++;
                for (size_t i = 0; i < h; i++)
                        if (!tchar((unsigned char)s[i]) || strchr("!#$%&'*+^`|~", s[i]))
                                return -EINVAL; /* letters, digits, '-', '.', '_' */
        }
        if (h == 0 || h >= hl)
                return -EINVAL;
        unsigned long port = def;
        if (h < n) {
                if (s[h] != ':' || n - h < 2 || n - h > 6)
                        return -EINVAL;
                port = 0;
                for (size_t i = h + 1; i < n; i++) {
                        if (s[i] < '0' || s[i] > '9')
                                return -EINVAL;
                        port = port * 10 + (unsigned long)(s[i] - '0');
                }
                if (port == 0 || port > 65535)
                        return -EINVAL;
        }
        memcpy(host, s, h);
        host[h] = '\0';
        *ret_port = (uint16_t)port;
        return 0;
}

#define BAD(...) (snprintf(why, wl, __VA_ARGS__), -EINVAL)

/* method SP request-target SP HTTP-version, the line without its CRLF (RFC 9112 3). */
static int parse_request_line(const char *s, size_t n, struct netns_http_req *q, char *why,
                              size_t wl) {
        const char *sp1 = memchr(s, ' ', n);
        const char *sp2 = sp1 ? memchr(sp1 + 1, ' ', n - (size_t)(sp1 + 1 - s)) : NULL;
        if (!sp2 || sp2 == sp1 + 1 || !token(s, (size_t)(sp1 - s)))
                return BAD("a malformed request line");
        q->method = s;
        q->ml = (size_t)(sp1 - s);
        q->target = sp1 + 1;
        q->tl = (size_t)(sp2 - sp1 - 1);
        const char *v = sp2 + 1;
        size_t vl = n - (size_t)(v - s);
        if (vl != 8 || memcmp(v, "HTTP/1.", 7) || (v[7] != '0' && v[7] != '1'))
                return BAD("not HTTP/1.0 or HTTP/1.1");
        q->minor = v[7] - '0';
        for (size_t i = 0; i < q->tl; i++)
                if ((unsigned char)q->target[i] <= 0x20 || (unsigned char)q->target[i] >= 0x7f)
                        return BAD("a malformed request target");
        bool connect = q->ml == 7 && !memcmp(s, "CONNECT", 7);
        if (connect) {
                q->form = NETNS_HTTP_AUTHORITY;
                if (split_authority(q->target, q->tl, 0, q->host, sizeof q->host, &q->port) < 0 ||
                    !q->port)
                        return BAD("a CONNECT target that is not host:port");
                return 0;
        }
        if (q->target[0] == '/') {
                q->form = NETNS_HTTP_ORIGIN;
                q->path = q->target;
                q->pl = q->tl;
        } else if (q->tl >= 7 && !strncasecmp(q->target, "http://", 7)) {
                q->form = NETNS_HTTP_ABSOLUTE;
                const char *a = q->target + 7, *end = q->target + q->tl;
                size_t al = strcspn(a, "/? ");
                if (a + al > end)
                        al = (size_t)(end - a);
                if (memchr(a, '@', al))
                        return BAD("a request target with userinfo");
                if (split_authority(a, al, 80, q->host, sizeof q->host, &q->port) < 0)
                        return BAD("a malformed request target");
                q->path = a + al;
                q->pl = (size_t)(end - q->path);
        } else if (q->target[strcspn(q->target, ":/ ")] == ':') { /* scheme ":" */
                return snprintf(why, wl, "only http:// requests and CONNECT are proxied"),
                       -EPROTONOSUPPORT;
        } else {
                return BAD("a malformed request target");
        }
        if (memchr(q->path, '#', q->pl))
                return BAD("a request target with a fragment");
        return 0;
}

/* field-name ":" OWS field-value OWS (RFC 9112 5), the line without its CRLF. */
static int parse_field(const char *s, size_t n, struct netns_http_field *f, char *why, size_t wl) {
        if (s[0] == ' ' || s[0] == '\t')
                return BAD("a folded header line (obs-fold)");
        const char *colon = memchr(s, ':', n);
        if (!colon)
                return BAD("a header line without a colon");
        if (colon > s && (colon[-1] == ' ' || colon[-1] == '\t'))
                return BAD("whitespace before a header's colon");
        if (!token(s, (size_t)(colon - s)))
                return BAD("an invalid header name");
        const char *v = colon + 1, *e = s + n;
        while (v < e && (*v == ' ' || *v == '\t'))
                v++;
        while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
                e--;
        for (const char *p = v; p < e; p++)
                if (((unsigned char)*p < 0x20 && *p != '\t') || *p == 0x7f)
                        return BAD("a control character in the value of %.*s",
                                   (int)(colon - s > 60 ? 60 : colon - s), s);
        *f = (struct netns_http_field){s, v, (size_t)(colon - s), (size_t)(e - v)};
        return 0;
}

/* What the fields say about the request: its one Host, its body's framing, the names its
 * Connection header makes hop-by-hop (checked to be tokens). */
static int read_fields(struct netns_http_req *q, char *why, size_t wl) {
        int ncl = 0, nte = 0, nhost = 0;
        bool ok;
        for (size_t i = 0; i < q->nfields; i++) {
                const struct netns_http_field *f = &q->f[i];
                if (name_is(f, "host")) {
                        if (nhost++)
                                return BAD("two Host headers");
                        q->hostv = f->value;
                        q->hostl = f->vl;
                } else if (name_is(f, "content-length")) {
                        if (ncl++)
                                return BAD("two Content-Length headers");
                        if (f->vl == 0 || f->vl > 15)
                                return BAD("a malformed Content-Length");
                        uint64_t v = 0;
                        for (size_t k = 0; k < f->vl; k++) {
                                if (f->value[k] < '0' || f->value[k] > '9')
                                        return BAD("a malformed Content-Length");
                                v = v * 10 + (uint64_t)(f->value[k] - '0');
                        }
                        q->content_length = v;
                        q->has_cl = true;
                } else if (name_is(f, "transfer-encoding")) {
                        if (nte++)
                                return BAD("two Transfer-Encoding headers");
                        const char *last = f->value + f->vl;
                        while (last > f->value && last[-1] != ',')
                                last--;
                        size_t ll = (size_t)(f->value + f->vl - last);
                        while (ll && (*last == ' ' || *last == '\t'))
                                last++, ll--;
                        (void)list_has(f->value, f->vl, "", 0, &ok);
                        if (!ok || ll != 7 || strncasecmp(last, "chunked", 7) ||
                            list_has(f->value, (size_t)(last - f->value), "chunked", 7, &ok))
                                return BAD("a Transfer-Encoding other than chunked last");
                        q->chunked = true;
                } else if (name_is(f, "connection")) {
                        (void)list_has(f->value, f->vl, "", 0, &ok);
                        if (!ok)
                                return BAD("a malformed Connection header");
                }
        }
        if (q->has_cl && q->chunked)
                return BAD("both Content-Length and Transfer-Encoding");
        if (q->chunked && q->minor == 0)
                return BAD("Transfer-Encoding in an HTTP/1.0 request");
        if (nhost == 0 && q->minor == 1 && q->form != NETNS_HTTP_AUTHORITY)
                return BAD("an HTTP/1.1 request without a Host header");
        if (nhost) {
                char host[256];
                uint16_t port;
                if (split_authority(q->hostv, q->hostl, q->form == NETNS_HTTP_AUTHORITY ? 0 : 1,
                                    host, sizeof host, &port) < 0)
                        return BAD("a malformed Host header");
        }
        return 0;
}

int netns_http_parse(const char *buf, size_t len, struct netns_http_req *q, char *why, size_t wl) {
        memset(q, 0, sizeof *q);
        if (len < 4 || memcmp(buf + len - 4, "\r\n\r\n", 4))
                return BAD("a head that does not end in CRLF CRLF");
        size_t line = 0;
        for (size_t off = 0; off < len - 2;) {
                const char *s = buf + off;
                const char *e = memchr(s, '\n', len - off);
                if (!e || e == s || e[-1] != '\r')
                        return BAD("a line that does not end in CRLF (a bare LF)");
                size_t n = (size_t)(e - 1 - s);
                if (memchr(s, '\r', n))
                        return BAD("a bare CR inside a line");
                if (memchr(s, '\0', n))
                        return BAD("a NUL byte in the head");
                int r;
                if (line == 0) {
                        if (n == 0)
                                return BAD("an empty line before the request line");
                        r = parse_request_line(s, n, q, why, wl);
                } else if (q->nfields == NETNS_HTTP_FIELDS_MAX) {
                        r = BAD("more than %d header fields", NETNS_HTTP_FIELDS_MAX);
                } else {
                        r = parse_field(s, n, &q->f[q->nfields++], why, wl);
                }
                if (r < 0)
                        return r;
                line++;
                off += n + 2;
        }
        q->head_len = len;
        return read_fields(q, why, wl);
}

/* "host[:port]" a Host header names against host and port (def: the scheme's port). */
bool netns_http_host_is(const struct netns_http_req *q, const char *host, uint16_t port,
                        uint16_t def) {
        char hh[256], a[256], b[256];
        union netns_ip ip;
        int fa = 0, fb = 0;
        uint16_t hport = 0;
        if (!q->hostv || split_authority(q->hostv, q->hostl, def, hh, sizeof hh, &hport) < 0 ||
            hport != port)
                return false;
        if (netns_host_canon(hh, a, sizeof a, &ip, &fa) < 0 ||
            netns_host_canon(host, b, sizeof b, &ip, &fb) < 0)
                return false;
        return fa == fb && !strcmp(a, b);
}

/* Whether field f stays behind at the gate: Host (rtn writes its own), the framing (rtn
 * writes Content-Length from the parse), the hop-by-hop fields (RFC 9110 7.6.1: Connection,
 * those it names, Proxy-*, Keep-Alive, TE, Upgrade, Trailer, and "close", which rtn's
 * Connection names), and for a host with a secret any field
 * of a secret's name (the sandbox's placeholder). */
static bool dropped(const struct netns_http_req *q, const struct netns_http_field *f,
                    const struct netns_secrets *ss, const char *canon) {
        /* "close" too: rtn's own `Connection: close` makes a field of that name hop-by-hop */
        static const char *const drop[] = {"host",       "content-length", "transfer-encoding",
                                           "connection", "keep-alive",     "te",
                                           "upgrade",    "trailer",        "close"};
        bool ok;
        for (size_t i = 0; i < sizeof drop / sizeof drop[0]; i++)
                if (name_is(f, drop[i]))
                        return true;
        if (f->nl >= 6 && !strncasecmp(f->name, "proxy-", 6))
                return true;
        for (size_t i = 0; i < q->nfields; i++)
                if (name_is(&q->f[i], "connection") &&
                    list_has(q->f[i].value, q->f[i].vl, f->name, f->nl, &ok))
                        return true;
        for (size_t i = 0; canon && i < ss->n; i++) {
                size_t nl = netns_secret_header_name(&ss->s[i]);
                if (!strcmp(ss->s[i].host, canon) && f->nl == nl &&
                    !strncasecmp(f->name, ss->s[i].header, nl))
                        return true;
        }
        return false;
}

ssize_t netns_http_upstream_head(const struct netns_secrets *ss, const struct netns_http_req *q,
                                 const char *host, uint16_t port, uint16_t def, bool inject,
                                 char **ret) {
        char canon[256], line[NETNS_SECRET_HEADER_MAX + NETNS_SECRET_VALUE_MAX + 4];
        union netns_ip ip;
        int family = 0;
        bool sec = inject && netns_host_canon(host, canon, sizeof canon, &ip, &family) == 0;
        size_t len = 0;
        char *text = NULL;
        FILE *out = open_memstream(&text, &len);
        if (!out)
                return -ENOMEM;
        /* origin-form (RFC 9112 3.2.1): the absolute-form's path and query, "/" when empty */
        fprintf(out, "%.*s %s%.*s HTTP/1.%d\r\n", (int)q->ml, q->method,
                q->pl && q->path[0] == '/' ? "" : "/", (int)q->pl, q->path, q->minor);
        fprintf(out, port == def ? "Host: %s\r\n" : "Host: %s:%u\r\n", host, port);
        for (size_t i = 0; i < q->nfields; i++)
                if (!dropped(q, &q->f[i], ss, sec ? canon : NULL))
                        fprintf(out, "%.*s: %.*s\r\n", (int)q->f[i].nl, q->f[i].name,
                                (int)q->f[i].vl, q->f[i].value);
        for (size_t i = 0; sec && i < ss->n; i++)
                if (!strcmp(ss->s[i].host, canon))
                        fwrite(line, 1, netns_secret_line(&ss->s[i], line, sizeof line), out);
        explicit_bzero(line, sizeof line);
        if (q->has_cl)
                fprintf(out, "Content-Length: %llu\r\n", (unsigned long long)q->content_length);
        fputs("Connection: close\r\n\r\n", out);
        if (fclose(out) != 0) {
                free(text);
                return -ENOMEM;
        }
        *ret = text;
        return (ssize_t)len;
}

/* The head made by netns_http_upstream_head, wiped (it may hold a secret) and freed. */
void netns_http_head_free(char *h, size_t len) {
        if (h)
                explicit_bzero(h, len);
        free(h);
}
