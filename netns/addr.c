/* The egress address filter and resolver shared by the provisioning gate (netns/gate.c) and
 * the HTTP tools (serve/tools/http.c). The rule is "public unicast only": every range that
 * reaches the host itself, its LAN, its cloud metadata service or a carrier's shared space
 * is refused, and so is every IPv6 form that embeds an IPv4 address, since those would
 * smuggle a refused IPv4 target past a check that only looks at IPv6 ranges (the classic
 * SSRF bypasses: ::ffff:127.0.0.1, 64:ff9b::a00:1, 2002:7f00:1::). The resolver returns
 * one checked address, and none assigned to this machine's interfaces unless a rule ADDR:PORT
 * names it; callers connect to it and nothing else, so a second DNS answer (rebinding) never
 * matters. It is the one resolver for every connection rtn makes on an agent's behalf. The
 * documentation ranges (192.0.2/24, 198.51.100/24, 203.0.113/24, 2001:db8::/32) are not refused:
 * they reach neither the host nor its LAN, and test networks and intercepting resolvers do hand
 * them out for real hosts. */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>

#include "netns/netns.h"

struct v4range {
        uint32_t net;
        unsigned bits;
        const char *why;
};

static const struct v4range v4_refused[] = {
        {0x00000000, 8, "\"this\" network 0.0.0.0/8"},
        {0x0a000000, 8, "private 10.0.0.0/8"},
        {0x64400000, 10, "CGNAT 100.64.0.0/10"},
        {0x7f000000, 8, "loopback 127.0.0.0/8"},
        {0xa9fea9fe, 32, "cloud metadata 169.254.169.254"},
        {0xa9fe0000, 16, "link-local 169.254.0.0/16"},
        {0xac100000, 12, "private 172.16.0.0/12"},
        {0xc0000000, 24, "IETF protocol assignments 192.0.0.0/24"},
        {0xc0586300, 24, "6to4 relay anycast 192.88.99.0/24"},
        {0xc0a80000, 16, "private 192.168.0.0/16"},
        {0xc6120000, 15, "benchmarking 198.18.0.0/15"},
        {0xe0000000, 4, "multicast 224.0.0.0/4"},
        {0xf0000000, 4, "reserved 240.0.0.0/4 and broadcast"},
};

static const char *check_v4(uint32_t a) {
        for (size_t i = 0; i < sizeof v4_refused / sizeof v4_refused[0]; i++) {
                uint32_t mask = v4_refused[i].bits ? ~0u << (32 - v4_refused[i].bits) : 0;
                if ((a & mask) == v4_refused[i].net)
                        return v4_refused[i].why;
        }
        return NULL;
}

static bool prefix6(const uint8_t *a, const uint8_t *p, unsigned bits) {
        unsigned bytes = bits / 8, rest = bits % 8;
        if (memcmp(a, p, bytes) != 0)
                return false;
        return rest == 0 || ((a[bytes] ^ p[bytes]) & (0xff << (8 - rest))) == 0;
}

static const char *check_v6(const uint8_t a[16]) {
        static const uint8_t zero[16],
                mapped[12] = {[10] = 0xff, [11] = 0xff}, nat64[12] = {0x00, 0x64, 0xff, 0x9b},
                ula[1] = {0xfc}, ll[2] = {0xfe, 0x80}, mc[1] = {0xff}, sixto4[2] = {0x20, 0x02},
                teredo[4] = {0x20, 0x01, 0x00, 0x00}, site[2] = {0xfe, 0xc0};
        if (prefix6(a, zero, 96))
                return memcmp(a, zero, 15) == 0 && a[15] <= 1 ? "unspecified or loopback ::/127"
                                                              : "IPv4-compatible ::/96";
        if (prefix6(a, mapped, 96))
                return "IPv4-mapped ::ffff:0:0/96";
        if (prefix6(a, nat64, 96))
                return "NAT64 64:ff9b::/96";
        if (prefix6(a, ula, 7))
                return "unique local fc00::/7";
        if (prefix6(a, ll, 10))
                return "link-local fe80::/10";
        if (prefix6(a, site, 10))
                return "site-local fec0::/10";
        if (prefix6(a, mc, 8))
                return "multicast ff00::/8";
        if (prefix6(a, sixto4, 16))
                return "6to4 2002::/16";
        if (prefix6(a, teredo, 32))
                return "Teredo 2001::/32";
        return NULL;
}

int netns_addr_check(const struct sockaddr *sa, socklen_t len, const char **ret_why) {
        const char *why = "unsupported address family";
        if (sa && sa->sa_family == AF_INET && len >= (socklen_t)sizeof(struct sockaddr_in)) {
                const struct sockaddr_in *in = (const void *)sa;
                why = check_v4(ntohl(in->sin_addr.s_addr));
        } else if (sa && sa->sa_family == AF_INET6 &&
                   len >= (socklen_t)sizeof(struct sockaddr_in6)) {
                const struct sockaddr_in6 *in6 = (const void *)sa;
                why = check_v6(in6->sin6_addr.s6_addr);
        }
        if (ret_why)
                *ret_why = why;
        return why ? -EACCES : 0;
}

const char *netns_addr_str(const struct sockaddr *sa, char *buf, size_t len) {
        char a[INET6_ADDRSTRLEN] = "?";
        if (sa->sa_family == AF_INET)
                inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, a,
                          sizeof a);
        else if (sa->sa_family == AF_INET6)
                inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, a,
                          sizeof a);
        snprintf(buf, len, sa->sa_family == AF_INET6 ? "[%s]" : "%s", a);
        return buf;
}

bool netns_host_valid(const char *host) {
        size_t n = strlen(host);
        if (n >= 2 && host[0] == '[' && host[n - 1] == ']') {
                char lit[INET6_ADDRSTRLEN];
                struct in6_addr a;
                if (n - 2 >= sizeof lit)
                        return false;
                memcpy(lit, host + 1, n - 2);
                lit[n - 2] = '\0';
                return inet_pton(AF_INET6, lit, &a) == 1;
        }
        if (n == 0 || n > 253 || host[0] == '-' || host[0] == '.')
                return false;
        return strspn(host, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-") ==
               n;
}

/* The IPv4 address an IPv4-mapped (::ffff:a.b.c.d) or -compatible (::a.b.c.d) IPv6 address
 * embeds. */
static bool embedded_v4(const struct in6_addr *a, struct in_addr *ret) {
        static const uint8_t mapped[12] = {[10] = 0xff, [11] = 0xff}, compat[12];
        if (memcmp(a->s6_addr, mapped, 12) && memcmp(a->s6_addr, compat, 12))
                return false;
        memcpy(&ret->s_addr, a->s6_addr + 12, 4);
        return true;
}

/* Whether a (one address, either family) is the interface address b. */
static bool same_addr(const struct sockaddr *a, const struct sockaddr *b) {
        struct in_addr a4, b4;
        bool av4 = a->sa_family == AF_INET, bv4 = b->sa_family == AF_INET;
        if (av4)
                a4 = ((const struct sockaddr_in *)(const void *)a)->sin_addr;
        else if (!embedded_v4(&((const struct sockaddr_in6 *)(const void *)a)->sin6_addr, &a4))
                a4.s_addr = 0;
        else
                av4 = true;
        if (bv4)
                b4 = ((const struct sockaddr_in *)(const void *)b)->sin_addr;
        else if (embedded_v4(&((const struct sockaddr_in6 *)(const void *)b)->sin6_addr, &b4))
                bv4 = true;
        if (av4 || bv4)
                return av4 && bv4 && a4.s_addr == b4.s_addr;
        return !memcmp(&((const struct sockaddr_in6 *)(const void *)a)->sin6_addr,
                       &((const struct sockaddr_in6 *)(const void *)b)->sin6_addr, 16);
}

int netns_addr_own(const struct sockaddr *sa) {
        if (!sa || (sa->sa_family != AF_INET && sa->sa_family != AF_INET6))
                return -EAFNOSUPPORT;
        struct ifaddrs *ifs;
        if (getifaddrs(&ifs) < 0)
                return negative_errno();
        int own = 0;
        for (struct ifaddrs *i = ifs; i && !own; i = i->ifa_next)
                if (i->ifa_addr &&
                    (i->ifa_addr->sa_family == AF_INET || i->ifa_addr->sa_family == AF_INET6))
                        own = same_addr(sa, i->ifa_addr);
        freeifaddrs(ifs);
        return own;
}

/* The first address of host that passes the filter and is no address of this machine, unless
 * exempt (may be NULL) has a rule ADDR:PORT that names it. */
int netns_resolve(const char *host, uint16_t port, const struct netns_policy *exempt,
                  struct sockaddr_storage *ret, socklen_t *ret_len, struct rtn_error *err) {
        char name[256], serv[8], abuf[INET6_ADDRSTRLEN + 2];
        if (!netns_host_valid(host))
                return rtn_errx(err, EINVAL, "invalid host name '%.100s'", host);
        size_t n = strlen(host);
        if (host[0] == '[') /* a bracketed literal: getaddrinfo wants it bare */
                snprintf(name, sizeof name, "%.*s", (int)(n - 2), host + 1);
        else
                snprintf(name, sizeof name, "%s", host);
        snprintf(serv, sizeof serv, "%u", port);
        struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV}, *res;
        int g = getaddrinfo(name, serv, &hints, &res);
        if (g != 0)
                return rtn_errx(err, g == EAI_NONAME || g == EAI_NODATA ? ENOENT : EHOSTUNREACH,
                                "resolve %s: %s", name, gai_strerror(g));
        const char *why = NULL;
        int r = rtn_errx(err, EACCES, "%s has no address", name);
        for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
                if (ai->ai_addrlen > sizeof *ret)
                        continue;
                netns_addr_str(ai->ai_addr, abuf, sizeof abuf);
                if (netns_addr_check(ai->ai_addr, ai->ai_addrlen, &why) < 0) {
                        r = rtn_errx(err, EACCES, "%s resolves to %s, a refused address (%s)", name,
                                     abuf, why);
                        continue;
                }
                int own = netns_addr_own(ai->ai_addr);
                if (own > 0 && exempt && netns_policy_names_addr(exempt, ai->ai_addr, port))
                        own = 0;
                if (own < 0) {
                        r = rtn_errx(err, EACCES,
                                     "%s resolves to %s; this machine's addresses could not be "
                                     "read to tell whether it is one of them",
                                     name, abuf);
                        continue;
                }
                if (own > 0) {
                        r = rtn_errx(err, EACCES,
                                     "%s resolves to %s, an address of this machine (only "
                                     "--allow-net %s:%u admits it)",
                                     name, abuf, abuf, port);
                        continue;
                }
                memcpy(ret, ai->ai_addr, ai->ai_addrlen);
                *ret_len = ai->ai_addrlen;
                r = 0;
                break;
        }
        freeaddrinfo(res);
        return r;
}
