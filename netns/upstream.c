/* The gate's way out through an operator's proxy (--upstream-proxy; docs/network.md,
 * "Behind a proxy"). Where the machine reaches the web only through a corporate HTTP proxy,
 * the gate still decides every request itself (the allowlist, the address filter on what
 * resolves here, secrets to their host alone) and then, instead of connecting to the address,
 * asks the proxy for a tunnel to the name the sandbox asked for: `CONNECT host:port`, with
 * the proxy's credentials when its URL has them. The credentials are never shown: every
 * message and env_status carry the URL with its password masked (`shown`). With
 * `--upstream-proxy env` the URL is the caller's https_proxy, HTTPS_PROXY, http_proxy or
 * HTTP_PROXY, and the hosts of no_proxy/NO_PROXY go direct, as the caller's own tools do. */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "netns/internal.h"
#include "netns/netns.h"

#define REPLY_TIMEOUT_MS 20000

static const char *const proxy_vars[] = {"https_proxy", "HTTPS_PROXY", "http_proxy", "HTTP_PROXY"};

static void base64(const unsigned char *in, size_t n, char *out) {
        static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        for (size_t i = 0; i < n; i += 3) {
                unsigned v = (unsigned)in[i] << 16 | (i + 1 < n ? (unsigned)in[i + 1] << 8 : 0) |
                             (i + 2 < n ? in[i + 2] : 0);
                *out++ = t[v >> 18 & 63];
                *out++ = t[v >> 12 & 63];
                *out++ = i + 1 < n ? t[v >> 6 & 63] : '=';
                *out++ = i + 2 < n ? t[v & 63] : '=';
        }
        *out = '\0';
}

/* user:password of a URL, percent-decoded, into out (len bytes): its length, or -1. */
static ssize_t pct_decode(const char *s, size_t n, char *out, size_t len) {
        size_t o = 0;
        for (size_t i = 0; i < n; i++) {
                unsigned v;
                char c = s[i];
                if (c == '%' && i + 2 < n && sscanf(s + i + 1, "%2x", &v) == 1) {
                        c = (char)v;
                        i += 2;
                }
                if ((unsigned char)c < 0x20 || c == 0x7f || o + 1 >= len)
                        return -1;
                out[o++] = c;
        }
        out[o] = '\0';
        return (ssize_t)o;
}

/* URL ("http://[user:pass@]host[:port][/]", or without "http://") into u; where says which
 * option or variable it came from. Never shows the URL: it may hold a password. */
static int parse_url(struct netns_upstream *u, const char *url, const char *where,
                     struct rtn_error *err) {
        const char *sep = strstr(url, "://"), *a = url;
        if (sep) {
                if ((size_t)(sep - url) != 4 || strncasecmp(url, "http", 4))
                        return rtn_errx(err, EINVAL,
                                        "%s: the proxy's URL must be http://[USER:PASSWORD@]HOST:"
                                        "PORT (another scheme is not spoken; the URL is not shown)",
                                        where);
                a = sep + 3;
        }
        size_t al = strcspn(a, "/?#");
        const char *at = memrchr(a, '@', al);
        char cred[512] = "", hp[300];
        const char *h = at ? at + 1 : a;
        size_t hl = al - (size_t)(h - a);
        if (at && pct_decode(a, (size_t)(at - a), cred, sizeof cred) < 0)
                return rtn_errx(err, EINVAL, "%s: the proxy's user and password are not readable",
                                where);
        if (hl == 0 || hl >= sizeof hp)
                return rtn_errx(err, EINVAL, "%s: no proxy host in the URL (not shown)", where);
        memcpy(hp, h, hl);
        hp[hl] = '\0';
        char *colon = hp[0] == '[' ? strchr(hp, ']') : hp;
        colon = colon ? strrchr(colon, ':') : NULL;
        unsigned long port = 80;
        char *end = NULL;
        if (colon) {
                *colon = '\0';
                port = strtoul(colon + 1, &end, 10);
                if (!colon[1] || *end || port == 0 || port > 65535)
                        return rtn_errx(err, EINVAL, "%s: the proxy's port must be 1-65535", where);
        }
        if (!netns_host_valid(hp))
                return rtn_errx(err, EINVAL, "%s: the proxy's host is not a host name or address",
                                where);
        snprintf(u->host, sizeof u->host, "%s", hp);
        u->port = (uint16_t)port;
        u->auth[0] = '\0';
        if (at) {
                base64((const unsigned char *)cred, strlen(cred), u->auth);
                explicit_bzero(cred, sizeof cred);
        }
        snprintf(u->shown, sizeof u->shown, "http://%s%s:%u", at ? "***@" : "", u->host, u->port);
        u->set = true;
        return 0;
}

/* no_proxy as curl reads it: names (a name and every name below it, a leading dot or "*."
 * ignored), addresses, "*" for every host; ports dropped. */
static int parse_noproxy(struct netns_upstream *u, const char *list) {
        while (list && *list) {
                size_t n = strcspn(list, ", \t");
                char e[256];
                if (n > 0 && n < sizeof e) {
                        memcpy(e, list, n);
                        e[n] = '\0';
                        char *s = e + (e[0] == '*' && e[1] == '.');
                        s += s[0] == '.';
                        char *c = s[0] == '[' ? strchr(s, ']') : strchr(s, ':');
                        if (c && s[0] == '[')
                                c[1] = '\0';
                        else if (c && strchr(c + 1, ':') == NULL)
                                *c = '\0';
                        if (!strcmp(s, "*"))
                                u->noproxy_all = true;
                        else if (*s && u->nnoproxy < NETNS_UPSTREAM_NOPROXY_MAX)
                                snprintf(u->noproxy[u->nnoproxy++], sizeof u->noproxy[0], "%s", s);
                        else if (*s)
                                return -E2BIG;
                }
                list += n;
                list += strspn(list, ", \t");
        }
        return 0;
}

int netns_upstream_parse(struct netns_upstream *u, const char *arg, struct rtn_error *err) {
        *u = (struct netns_upstream){0};
        if (strcmp(arg, "env"))
                return parse_url(u, arg, "--upstream-proxy", err);
        for (size_t i = 0; i < sizeof proxy_vars / sizeof proxy_vars[0]; i++) {
                const char *v = getenv(proxy_vars[i]);
                if (!v || !*v)
                        continue;
                int r = parse_url(u, v, proxy_vars[i], err);
                if (r < 0)
                        return rtn_err_wrap(err, "--upstream-proxy env");
                const char *np = getenv("no_proxy");
                if (parse_noproxy(u, np && *np ? np : getenv("NO_PROXY")) < 0)
                        return rtn_errx(err, E2BIG,
                                        "--upstream-proxy env: no_proxy names more than %d hosts",
                                        NETNS_UPSTREAM_NOPROXY_MAX);
                return 0;
        }
        return rtn_errx(err, ENOENT,
                        "--upstream-proxy env: none of https_proxy, HTTPS_PROXY, http_proxy, "
                        "HTTP_PROXY is set in rtn's environment");
}

bool netns_upstream_for(const struct netns_upstream *u, const char *host) {
        char canon[256], e[256];
        union netns_ip ip, eip;
        int fam = 0, efam = 0;
        if (!u || !u->set || u->noproxy_all)
                return false;
        if (netns_host_canon(host, canon, sizeof canon, &ip, &fam) < 0)
                return true;
        size_t hl = strlen(canon);
        for (size_t i = 0; i < u->nnoproxy; i++) {
                if (netns_host_canon(u->noproxy[i], e, sizeof e, &eip, &efam) < 0)
                        continue;
                size_t el = strlen(e);
                if (!strcmp(canon, e) || (!fam && !efam && hl > el && canon[hl - el - 1] == '.' &&
                                          !strcmp(canon + hl - el, e)))
                        return false;
        }
        return true;
}

/* Reads the proxy's answer head (up to its empty line, byte by byte so nothing of the
 * tunnel is taken) and returns its status code, or -errno. */
static int read_reply(int fd) {
        char buf[4096];
        size_t n = 0;
        while (n < sizeof buf - 1) {
                struct pollfd p = {.fd = fd, .events = POLLIN};
                if (poll(&p, 1, REPLY_TIMEOUT_MS) <= 0)
                        return -ETIMEDOUT;
                ssize_t k = read(fd, buf + n, 1);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        return -ECONNRESET;
                n++;
                buf[n] = '\0';
                if (n >= 4 && !memcmp(buf + n - 4, "\r\n\r\n", 4))
                        break;
        }
        int code = 0;
        if (sscanf(buf, "HTTP/1.%*1[01] %3d", &code) != 1)
                return -EPROTO;
        return code;
}

int netns_upstream_connect(const struct netns_upstream *u, const char *host, uint16_t port,
                           char *why, size_t wl) {
        char serv[8], name[256], req[1024];
        size_t n = strlen(u->host);
        snprintf(serv, sizeof serv, "%u", u->port);
        snprintf(name, sizeof name, "%.*s", u->host[0] == '[' ? (int)n - 2 : (int)n,
                 u->host + (u->host[0] == '['));
        struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV}, *res;
        int g = getaddrinfo(name, serv, &hints, &res);
        if (g != 0)
                return snprintf(why, wl, "upstream proxy %s: %s", u->shown, gai_strerror(g)),
                       -EHOSTUNREACH;
        struct sockaddr_storage a = {0};
        socklen_t al = res->ai_addrlen <= sizeof a ? res->ai_addrlen : 0;
        memcpy(&a, res->ai_addr, al);
        freeaddrinfo(res);
        _cleanup_close_ int fd = netns_connect(&a, al);
        if (fd < 0)
                return snprintf(why, wl, "upstream proxy %s: %s", u->shown, strerror(-fd)), fd;
        int len = snprintf(req, sizeof req, "CONNECT %s:%u HTTP/1.1\r\nHost: %s:%u\r\n%s%s%s\r\n",
                           host, port, host, port, u->auth[0] ? "Proxy-Authorization: Basic " : "",
                           u->auth, u->auth[0] ? "\r\n" : "");
        int r = len > 0 && (size_t)len < sizeof req ? netns_send_all(fd, req, (size_t)len) : -E2BIG;
        explicit_bzero(req, sizeof req);
        if (r == 0)
                r = read_reply(fd);
        if (r < 0)
                return snprintf(why, wl, "upstream proxy %s: %s", u->shown, strerror(-r)), r;
        if (r != 200)
                return snprintf(why, wl, "upstream proxy %s answered %d to CONNECT %.100s:%u",
                                u->shown, r, host, port),
                       -EACCES;
        return TAKE_FD(fd);
}
