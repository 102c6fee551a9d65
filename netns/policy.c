/* The network policy of agent commands (docs/network.md): which hosts and ports the gate
 * (netns/gate.c) admits. One parser for both doors, `--allow-net HOST[:PORT]` and the lines
 * of a `--net-policy FILE`, so `rtn exec` and `rtn serve` read a rule the same way. A rule is
 * an exact name, a domain (".example.org": the name and every name under it) or an IP
 * literal (1.2.3.4, [2001:db8::1]); a literal is admitted only by a rule that is that
 * literal, never by a name, and inet_aton's short and hex forms ("127.1", "0x7f000001")
 * count as literals, since a resolver would take them as one. Names are kept lower-case
 * without a trailing dot, the form netns_policy_allows compares with. A URL is taken as its
 * HOST[:PORT]. A rule that can never work (the loopback by name or address, an address the
 * gate's filter refuses, the host's own name for --allow-host-port) is refused when read,
 * with what to use instead, rather than accepted and then refused at every request. The
 * ports of --allow-host-port live here too, beside the rules. The policy is fixed
 * when the sandbox starts: nothing an agent can call adds a rule. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/io.h"
#include "netns/netns.h"

static bool label_char(char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
}

/* A DNS name as rules and requests carry it: labels of 1-63 [a-z0-9-] not starting or ending
 * with '-', 253 bytes at most. name is lower-case already. */
static bool name_valid(const char *name) {
        size_t n = strlen(name), lab = 0;
        if (n == 0 || n > 253)
                return false;
        for (size_t i = 0; i <= n; i++) {
                if (i == n || name[i] == '.') {
                        if (lab == 0 || lab > 63 || name[i - 1] == '-' || name[i - lab] == '-')
                                return false;
                        lab = 0;
                } else if (!label_char(name[i])) {
                        return false;
                } else {
                        lab++;
                }
        }
        return true;
}

int netns_host_canon(const char *host, char *buf, size_t len, union netns_ip *ret_ip,
                     int *ret_family) {
        size_t n = strlen(host);
        char lit[INET6_ADDRSTRLEN];
        union netns_ip ip;
        if (strcspn(host, " \t\n\v\f\r") != n)
                return -EINVAL; /* inet_aton would stop at a blank and take the rest */
        if (n >= 2 && host[0] == '[' && host[n - 1] == ']') {
                if (n - 2 >= sizeof lit)
                        return -EINVAL;
                memcpy(lit, host + 1, n - 2);
                lit[n - 2] = '\0';
                if (inet_pton(AF_INET6, lit, &ip.v6) != 1)
                        return -EINVAL;
                *ret_family = AF_INET6;
        } else {
                if (n > 0 && host[n - 1] == '.')
                        n--; /* "example.org." is example.org, and "203.0." is 203.0 */
                if (n == 0 || n >= len || n > 253)
                        return -EINVAL;
                for (size_t i = 0; i < n; i++)
                        buf[i] =
                                (host[i] >= 'A' && host[i] <= 'Z') ? (char)(host[i] + 32) : host[i];
                buf[n] = '\0';
                *ret_family = 0;
                if (inet_aton(buf, &ip.v4) != 1) /* every form a resolver takes for an address */
                        return name_valid(buf) ? 0 : -EINVAL;
                *ret_family = AF_INET;
        }
        if (!inet_ntop(*ret_family, &ip, lit, sizeof lit))
                return -EINVAL;
        if ((size_t)snprintf(buf, len, *ret_family == AF_INET6 ? "[%s]" : "%s", lit) >= len)
                return -EINVAL;
        *ret_ip = ip;
        return 0;
}

static int parse_port(const char *s, uint16_t *ret) {
        unsigned long v = 0;
        if (!*s || strlen(s) > 5)
                return -EINVAL;
        for (; *s; s++) {
                if (*s < '0' || *s > '9')
                        return -EINVAL;
                v = v * 10 + (unsigned long)(*s - '0');
        }
        if (v == 0 || v > 65535)
                return -EINVAL;
        *ret = (uint16_t)v;
        return 0;
}

/* Whether a rule that failed its check may be shown in the message: only when it is made of
 * what host names, addresses and ports are made of. Anything else (a token pasted where a
 * host belongs, "NAME=VALUE@host") may be a secret, and errors then name the rule's place
 * (the option, or FILE:LINE) instead. */
static bool rule_showable(const char *spec) {
        size_t n = strlen(spec);
        return strspn(spec,
                      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:[]*") == n;
}

/* What to use instead of a rule for this machine's loopback. */
#define HOST_PORT_HINT                                                                             \
        "for a service on this machine's loopback, open its port with --allow-host-port PORT "     \
        "and reach it at " NETNS_HOST_NAME ":PORT"

/* Names of the loopback in every resolver (RFC 6761 reserves .localhost; Debian's
 * /etc/hosts adds the rest). The sandbox's loopback is its own, and the gate refuses a
 * loopback answer at each request: a rule naming one of these never works. */
static bool loopback_name(const char *name) {
        static const char *const names[] = {"localhost", "localhost.localdomain", "ip6-localhost",
                                            "ip6-loopback"};
        size_t n = strlen(name);
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
                if (!strcmp(name, names[i]))
                        return true;
        return n > 10 && !strcmp(name + n - 10, ".localhost");
}

/* Whether a refused address is this machine itself (0/8, 127/8, ::, ::1, or an IPv6 form
 * embedding one of the first two): a rule for it wants --allow-host-port. */
static bool loopback_addr(int family, const union netns_ip *ip) {
        static const uint8_t mapped[12] = {[10] = 0xff, [11] = 0xff}, zero[16];
        const uint8_t *v4 = (const uint8_t *)&ip->v4;
        if (family == AF_INET6) {
                if (!memcmp(ip->v6.s6_addr, zero, 15) && ip->v6.s6_addr[15] <= 1)
                        return true;
                if (memcmp(ip->v6.s6_addr, mapped, 12) && memcmp(ip->v6.s6_addr, zero, 12))
                        return false;
                v4 = ip->v6.s6_addr + 12;
        }
        return v4[0] == 127 || v4[0] == 0;
}

/* A rule no request through the gate can ever use: refused now, with why and what works. */
static int never_reachable(const char *spec, const struct netns_rule *r, struct rtn_error *err) {
        if (!r->family && !strcmp(r->host, NETNS_HOST_NAME))
                return rtn_errx(err, EINVAL,
                                "'%s': --allow-net never opens " NETNS_HOST_NAME
                                ": open a port of this machine's loopback with "
                                "--allow-host-port PORT",
                                spec);
        if (!r->family && loopback_name(r->host))
                return rtn_errx(err, EINVAL,
                                "'%s' names the loopback, which the gate never reaches (the "
                                "sandbox's own loopback is another): " HOST_PORT_HINT,
                                spec);
        if (!r->family)
                return 0;
        struct sockaddr_storage sa = {.ss_family = (sa_family_t)r->family};
        if (r->family == AF_INET)
                ((struct sockaddr_in *)&sa)->sin_addr = r->ip.v4;
        else
                ((struct sockaddr_in6 *)&sa)->sin6_addr = r->ip.v6;
        const char *why = NULL;
        if (netns_addr_check((struct sockaddr *)&sa, sizeof sa, &why) == 0)
                return 0;
        return rtn_errx(err, EINVAL,
                        "'%s' is %s (%s), which the gate never connects to: it reaches public "
                        "addresses only%s",
                        spec, r->host, why,
                        loopback_addr(r->family, &r->ip) ? "; " HOST_PORT_HINT : "");
}

/* An IPv6 address written without brackets: refused, for why it never works when it is a
 * refused address, else with the form to write. */
static int bare_ipv6(const char *spec, struct rtn_error *err) {
        struct netns_rule r = {.family = AF_INET6};
        if (inet_pton(AF_INET6, spec, &r.ip.v6) == 1 &&
            inet_ntop(AF_INET6, &r.ip.v6, r.host, sizeof r.host) && never_reachable(spec, &r, err))
                return -EINVAL;
        return rtn_errx(err, EINVAL, "'%s': write an IPv6 address in brackets, [ADDR]:PORT", spec);
}

/* An http:// or https:// URL given as a rule: its authority (HOST[:PORT]) into buf, 1; 0 when
 * spec is no URL. A path names nothing the gate could hold a request to. */
static int url_authority(const char *spec, char *buf, size_t len, struct rtn_error *err) {
        const char *sep = strstr(spec, "://");
        if (!sep)
                return 0;
        size_t sl = (size_t)(sep - spec);
        if (!((sl == 4 && !strncasecmp(spec, "http", 4)) ||
              (sl == 5 && !strncasecmp(spec, "https", 5))))
                return rtn_errx(err, EINVAL,
                                "only http:// and https:// URLs name a host the gate reaches "
                                "(or write HOST[:PORT]; the rule is not shown)");
        const char *a = sep + 3;
        size_t al = strcspn(a, "/?#");
        if (memchr(a, '@', al))
                return rtn_errx(err, EINVAL,
                                "a URL with user information (user:password@HOST): write the "
                                "host alone (the rule is not shown, as it may hold a password)");
        if (al == 0)
                return rtn_errx(err, EINVAL, "no host in the URL");
        if (al >= len)
                return rtn_errx(err, EINVAL, "the URL's host is longer than %zu bytes", len - 1);
        memcpy(buf, a, al);
        buf[al] = '\0';
        return 1;
}

/* "HOST[:PORT]" into r; what is wrong goes to err, naming the rule when rule_showable. */
static int parse_rule(const char *spec, struct netns_rule *r, struct rtn_error *err) {
        char tmp[300];
        size_t n = strlen(spec);
        if (n == 0)
                return rtn_errx(err, EINVAL, "empty host");
        if (n >= sizeof tmp)
                return rtn_errx(err, EINVAL, "the rule is longer than %zu bytes (not shown)",
                                sizeof tmp - 1);
        if (!rule_showable(spec))
                return rtn_errx(err, EINVAL,
                                "the rule has a character no host name, address or port has "
                                "(HOST[:PORT]; the rule is not shown, as it may be a secret)");
        memcpy(tmp, spec, n + 1);
        if (tmp[0] != '[' && strchr(tmp, ':') != strrchr(tmp, ':'))
                return bare_ipv6(spec, err);
        char *colon = tmp[0] == '[' ? strchr(tmp, ']') : tmp;
        colon = colon ? strrchr(colon, ':') : NULL;
        memset(r, 0, sizeof *r);
        if (colon) {
                *colon = '\0';
                if (parse_port(colon + 1, &r->port) < 0)
                        return rtn_errx(err, EINVAL, "'%s': the port must be 1-65535", spec);
        }
        const char *host = tmp;
        if (host[0] == '.') {
                r->domain = true;
                host++;
        } else if (host[0] == '*' && host[1] == '.') {
                return rtn_errx(err, EINVAL, "'%s': write a domain as .%s", spec, host + 2);
        }
        if (netns_host_canon(host, r->host, sizeof r->host, &r->ip, &r->family) < 0)
                return rtn_errx(err, EINVAL,
                                "'%s' is not a host name, .domain, IPv4 address or [IPv6] "
                                "address",
                                spec);
        if (never_reachable(spec, r, err) < 0)
                return -EINVAL;
        if (r->domain && r->family)
                return rtn_errx(err, EINVAL, "'%s': an address cannot be a domain", spec);
        if (r->domain && !strchr(r->host, '.'))
                return rtn_errx(err, EINVAL,
                                "'%s': a domain rule needs two labels or more "
                                "(a whole top-level domain is too wide)",
                                spec);
        return 0;
}

int netns_policy_add(struct netns_policy *p, const char *spec, struct rtn_error *err) {
        struct netns_rule r;
        char auth[300];
        int e = url_authority(spec, auth, sizeof auth, err);
        if (e < 0)
                return e;
        e = parse_rule(e ? auth : spec, &r, err);
        if (e < 0)
                return e;
        if (p->n >= NETNS_POLICY_MAX_RULES)
                return rtn_errx(err, E2BIG, "more than %d network rules", NETNS_POLICY_MAX_RULES);
        if (p->n == p->cap) {
                size_t cap = p->cap ? p->cap * 2 : 16;
                struct netns_rule *nr = realloc(p->rules, cap * sizeof *nr);
                if (!nr)
                        return rtn_err(err, ENOMEM, "network policy");
                p->rules = nr;
                p->cap = cap;
        }
        p->rules[p->n++] = r;
        return 0;
}

int netns_policy_parse(struct netns_policy *p, const char *text, size_t len, const char *name,
                       struct rtn_error *err) {
        size_t lineno = 0;
        for (size_t off = 0; off < len;) {
                const char *nl = memchr(text + off, '\n', len - off);
                size_t end = nl ? (size_t)(nl - text) : len;
                char line[NETNS_POLICY_LINE_MAX + 1];
                lineno++;
                if (end - off > NETNS_POLICY_LINE_MAX)
                        return rtn_errx(err, EINVAL, "%s:%zu: line longer than %d bytes", name,
                                        lineno, NETNS_POLICY_LINE_MAX);
                memcpy(line, text + off, end - off);
                line[end - off] = '\0';
                if (memchr(line, '\0', end - off))
                        return rtn_errx(err, EINVAL, "%s:%zu: a NUL byte", name, lineno);
                off = end + 1;
                char *hash = strchr(line, '#');
                if (hash)
                        *hash = '\0';
                char *s = line + strspn(line, " \t\r");
                size_t sl = strcspn(s, " \t\r");
                if (sl == 0)
                        continue; /* blank or comment */
                if (s[sl + strspn(s + sl, " \t\r")] != '\0')
                        return rtn_errx(err, EINVAL, "%s:%zu: one HOST[:PORT] per line", name,
                                        lineno);
                s[sl] = '\0';
                int r = netns_policy_add(p, s, err);
                if (r < 0)
                        return rtn_err_wrap(err, "%s:%zu", name, lineno);
        }
        return 0;
}

int netns_policy_load(struct netns_policy *p, const char *path, struct rtn_error *err) {
        _cleanup_free_ char *buf = malloc(NETNS_POLICY_FILE_MAX + 1);
        if (!buf)
                return rtn_err(err, ENOMEM, "read %s", path);
        ssize_t n = rtn_read_file_at(AT_FDCWD, path, buf, NETNS_POLICY_FILE_MAX + 1);
        if (n < 0)
                return rtn_err(err, (int)-n, "read network policy %s", path);
        if ((size_t)n > NETNS_POLICY_FILE_MAX)
                return rtn_errx(err, EFBIG, "network policy %s: larger than %d bytes", path,
                                NETNS_POLICY_FILE_MAX);
        if (memchr(buf, '\0', (size_t)n))
                return rtn_errx(err, EINVAL, "network policy %s: a NUL byte (not a text file)",
                                path);
        return netns_policy_parse(p, buf, (size_t)n, path, err);
}

int netns_policy_add_host_port(struct netns_policy *p, const char *arg, struct rtn_error *err) {
        uint16_t port;
        if (parse_port(arg, &port) < 0)
                return rule_showable(arg)
                               ? rtn_errx(err, EINVAL, "'%s': a port of this machine is 1-65535",
                                          arg)
                               : rtn_errx(err, EINVAL,
                                          "a port of this machine is 1-65535 (the value is not "
                                          "shown, as it may be a secret)");
        if (netns_policy_host_port(p, port))
                return rtn_errx(err, EEXIST, "port %u twice", port);
        if (p->nhost_ports >= NETNS_HOST_PORTS_MAX)
                return rtn_errx(err, E2BIG, "at most %d ports of this machine",
                                NETNS_HOST_PORTS_MAX);
        p->host_ports[p->nhost_ports++] = port;
        return 0;
}

bool netns_policy_host_port(const struct netns_policy *p, uint16_t port) {
        for (size_t i = 0; i < p->nhost_ports; i++)
                if (p->host_ports[i] == port)
                        return true;
        return false;
}

void netns_policy_free(struct netns_policy *p) {
        free(p->rules);
        *p = (struct netns_policy){0};
}

int netns_policy_copy(const struct netns_policy *src, struct netns_policy *ret) {
        struct netns_rule *rules = NULL;
        if (src->n && !(rules = calloc(src->n, sizeof *rules)))
                return -ENOMEM;
        if (src->n)
                memcpy(rules, src->rules, src->n * sizeof *rules);
        *ret = (struct netns_policy){.rules = rules, .n = src->n, .cap = src->n};
        memcpy(ret->host_ports, src->host_ports, sizeof ret->host_ports);
        ret->nhost_ports = src->nhost_ports;
        return 0;
}

static bool port_ok(const struct netns_rule *r, uint16_t port) {
        return r->port ? port == r->port : netns_port_default(port);
}

bool netns_policy_allows(const struct netns_policy *p, const char *host, uint16_t port) {
        char canon[256];
        union netns_ip ip;
        int family = 0;
        if (netns_host_canon(host, canon, sizeof canon, &ip, &family) < 0)
                return false;
        size_t hl = strlen(canon);
        for (size_t i = 0; i < p->n; i++) {
                const struct netns_rule *r = &p->rules[i];
                if (!port_ok(r, port) || r->family != family)
                        continue;
                if (family) {
                        if (!memcmp(&r->ip, &ip, family == AF_INET ? 4 : 16))
                                return true;
                        continue;
                }
                size_t rl = strlen(r->host);
                if (!strcmp(r->host, canon))
                        return true;
                if (r->domain && hl > rl + 1 && canon[hl - rl - 1] == '.' &&
                    !strcmp(canon + hl - rl, r->host))
                        return true;
        }
        return false;
}

bool netns_policy_names_addr(const struct netns_policy *p, const struct sockaddr *sa,
                             uint16_t port) {
        const void *a = NULL;
        if (sa->sa_family == AF_INET)
                a = &((const struct sockaddr_in *)(const void *)sa)->sin_addr;
        else if (sa->sa_family == AF_INET6)
                a = &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
        for (size_t i = 0; a && i < p->n; i++) {
                const struct netns_rule *r = &p->rules[i];
                if (r->family == sa->sa_family && r->port && r->port == port &&
                    !memcmp(&r->ip, a, r->family == AF_INET ? 4 : 16))
                        return true;
        }
        return false;
}

size_t netns_policy_describe(const struct netns_policy *p, size_t i, char *buf, size_t len) {
        if (i >= p->n)
                return 0;
        const struct netns_rule *r = &p->rules[i];
        int n = r->port ? snprintf(buf, len, "%s%s:%u", r->domain ? "." : "", r->host, r->port)
                        : snprintf(buf, len, "%s%s", r->domain ? "." : "", r->host);
        return n < 0 ? 0 : (size_t)n;
}
