/* The head of a request as the gate sends it upstream (netns/gate.c): origin-form, the
 * client's hop-by-hop headers dropped, `Connection: close`, and for a host with a secret
 * (netns/secret.c) the secret's header in place of any the sandbox sent. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "netns/internal.h"
#include "netns/netns.h"

/* The request line in origin-form, as a proxy forwards to an origin server (RFC 9112 3.2.1):
 * `GET http://host/p?q HTTP/1.1` becomes `GET /p?q HTTP/1.1` (a request read inside TLS is
 * in origin-form already); the Host header (checked, or added when the client sent none)
 * names the host. */
static void put_request_line(FILE *out, const char *buf, const char *hostport, bool absolute) {
        const char *sp1 = strchr(buf, ' '), *eol = strstr(buf, "\r\n");
        char hv[300];
        if (!absolute) {
                fwrite(buf, 1, (size_t)(eol + 2 - buf), out);
                return;
        }
        const char *sp2 = memchr(sp1 + 1, ' ', (size_t)(eol - sp1 - 1));
        const char *path = sp1 + 1 + 7; /* past "http://", checked by the parser */
        path += strcspn(path, "/?#");
        if (path > sp2)
                path = sp2;
        fwrite(buf, 1, (size_t)(sp1 + 1 - buf), out);
        if (path == sp2 || *path != '/')
                fputc('/', out);
        fwrite(path, 1, (size_t)(eol + 2 - path), out);
        if (netns_http_host(buf, hv, sizeof hv) == 0)
                fprintf(out, "Host: %s\r\n", hostport);
}

/* Whether header line h is dropped on the way upstream: the client's hop-by-hop headers,
 * and for a host with a secret, any header of a secret's name (the sandbox's placeholder). */
static bool dropped(const char *h, const struct netns_secrets *ss, const char *canon) {
        static const char *const drop[] = {
                "connection:", "proxy-connection:", "keep-alive:", "proxy-authorization:"};
        for (size_t i = 0; i < sizeof drop / sizeof drop[0]; i++)
                if (!strncasecmp(h, drop[i], strlen(drop[i])))
                        return true;
        for (size_t i = 0; canon && i < ss->n; i++) {
                size_t nl = netns_secret_header_name(&ss->s[i]);
                if (!strcmp(ss->s[i].host, canon) && !strncasecmp(h, ss->s[i].header, nl) &&
                    h[nl] == ':')
                        return true;
        }
        return false;
}

/* The head as it goes upstream: origin-form, `Connection: close`, the hop-by-hop headers
 * dropped; with inject, every secret of host replaces any header of its name. Into a
 * malloc'd *ret; its length, or -ENOMEM. */
ssize_t netns_http_upstream_head(const struct netns_secrets *ss, const char *buf, size_t head_len,
                                 const char *host, uint16_t port, bool absolute, bool inject,
                                 char **ret) {
        char hostport[300], canon[256], line[NETNS_SECRET_HEADER_MAX + NETNS_SECRET_VALUE_MAX + 4];
        union netns_ip ip;
        int family = 0;
        bool sec = inject && netns_host_canon(host, canon, sizeof canon, &ip, &family) == 0;
        size_t len = 0;
        char *text = NULL;
        FILE *out = open_memstream(&text, &len);
        if (!out)
                return -ENOMEM;
        snprintf(hostport, sizeof hostport, port == 80 ? "%s" : "%s:%u", host, port);
        put_request_line(out, buf, hostport, absolute);
        for (const char *h = strstr(buf, "\r\n") + 2; h < buf + head_len - 2;) {
                const char *e = strstr(h, "\r\n");
                if (!dropped(h, ss, sec ? canon : NULL))
                        fwrite(h, 1, (size_t)(e + 2 - h), out);
                h = e + 2;
        }
        for (size_t i = 0; sec && i < ss->n; i++)
                if (!strcmp(ss->s[i].host, canon))
                        fwrite(line, 1, netns_secret_line(&ss->s[i], line, sizeof line), out);
        explicit_bzero(line, sizeof line);
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
