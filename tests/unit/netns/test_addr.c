/* The egress address filter and resolver (netns/addr.c): every refused range with an address
 * at its edges, the IPv6 forms that embed IPv4, public addresses that must pass, and the
 * resolver refusing a name that resolves to loopback (/etc/hosts: localhost). */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <errno.h>
#include <string.h>

#include "netns/netns.h"

struct addr_case {
        char addr[48];
        int want; /* 0 or -EACCES */
};

static int check(const char *s, const char **why) {
        struct sockaddr_in in = {.sin_family = AF_INET};
        struct sockaddr_in6 in6 = {.sin6_family = AF_INET6};
        if (inet_pton(AF_INET, s, &in.sin_addr) == 1)
                return netns_addr_check((struct sockaddr *)&in, sizeof in, why);
        cr_assert_eq(inet_pton(AF_INET6, s, &in6.sin6_addr), 1, "bad test address %s", s);
        return netns_addr_check((struct sockaddr *)&in6, sizeof in6, why);
}

ParameterizedTestParameters(netns_addr_check, table) {
        static struct addr_case cases[] = {
                {"0.0.0.0", -EACCES},
                {"0.255.255.255", -EACCES},
                {"10.0.0.1", -EACCES},
                {"10.255.255.255", -EACCES},
                {"100.64.0.1", -EACCES},
                {"100.127.255.254", -EACCES},
                {"100.63.255.255", 0},
                {"100.128.0.0", 0},
                {"127.0.0.1", -EACCES},
                {"127.1.2.3", -EACCES},
                {"169.254.169.254", -EACCES},
                {"169.254.0.1", -EACCES},
                {"172.16.0.1", -EACCES},
                {"172.31.255.255", -EACCES},
                {"172.15.255.255", 0},
                {"172.32.0.0", 0},
                {"192.168.1.1", -EACCES},
                {"192.0.0.8", -EACCES},
                {"198.18.0.1", -EACCES},
                {"224.0.0.1", -EACCES},
                {"255.255.255.255", -EACCES},
                {"240.0.0.1", -EACCES},
                {"8.8.8.8", 0},
                {"151.101.2.132", 0},
                {"203.0.113.80", 0},
                {"::", -EACCES},
                {"::1", -EACCES},
                {"::ffff:127.0.0.1", -EACCES},
                {"::ffff:8.8.8.8", -EACCES},
                {"::127.0.0.1", -EACCES},
                {"64:ff9b::a00:1", -EACCES},
                {"fc00::1", -EACCES},
                {"fdff::1", -EACCES},
                {"fe80::1", -EACCES},
                {"fec0::1", -EACCES},
                {"ff02::1", -EACCES},
                {"2002:7f00:1::1", -EACCES},
                {"2001:0:4136:e378::1", -EACCES},
                {"2a04:4e42::644", 0},
                {"2606:4700:4700::1111", 0},
        };
        return cr_make_param_array(struct addr_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct addr_case *c, netns_addr_check, table) {
        const char *why = NULL;
        int r = check(c->addr, &why);
        cr_assert_eq(r, c->want, "%s: got %d (%s), want %d", c->addr, r, why ? why : "-", c->want);
        cr_assert_eq(why == NULL, r == 0, "%s: reason must be set exactly when refused", c->addr);
}

Test(netns_addr_check, short_or_foreign_sockaddr_refused) {
        struct sockaddr_in in = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(0x08080808)};
        struct sockaddr_un_like {
                sa_family_t f;
                char p[20];
        } un = {.f = AF_UNIX};
        cr_assert_eq(netns_addr_check((struct sockaddr *)&in, sizeof in - 1, NULL), -EACCES);
        cr_assert_eq(netns_addr_check((struct sockaddr *)&un, sizeof un, NULL), -EACCES);
        cr_assert_eq(netns_addr_check(NULL, 0, NULL), -EACCES);
}

Test(netns_resolve, loopback_name_refused) {
        struct sockaddr_storage ss;
        socklen_t len = 0;
        struct rtn_error err = {0};
        cr_assert_eq(netns_resolve("localhost", 80, NULL, &ss, &len, &err), -EACCES);
        cr_assert(strstr(err.msg, "loopback"), "message: %s", err.msg);
        cr_assert_eq(len, 0, "nothing returned on refusal");
}

Test(netns_resolve, literals_checked_like_names) {
        struct sockaddr_storage ss;
        socklen_t len = 0;
        struct rtn_error err = {0};
        cr_assert_eq(netns_resolve("127.0.0.1", 80, NULL, &ss, &len, &err), -EACCES);
        cr_assert_eq(netns_resolve("[::1]", 80, NULL, &ss, &len, &err), -EACCES);
        cr_assert_eq(netns_resolve("169.254.169.254", 80, NULL, &ss, &len, &err), -EACCES);
        cr_assert_eq(netns_resolve("[::ffff:10.0.0.1]", 443, NULL, &ss, &len, &err), -EACCES);
        cr_assert_eq(netns_resolve("8.8.8.8", 443, NULL, &ss, &len, &err), 0);
        cr_assert_eq(ss.ss_family, AF_INET);
        cr_assert_eq(ntohs(((struct sockaddr_in *)&ss)->sin_port), 443);
}

Test(netns_resolve, invalid_names_refused) {
        struct sockaddr_storage ss;
        socklen_t len;
        struct rtn_error err = {0};
        cr_assert_eq(netns_resolve("-oProxy", 80, NULL, &ss, &len, &err), -EINVAL);
        cr_assert_eq(netns_resolve("a b", 80, NULL, &ss, &len, &err), -EINVAL);
        cr_assert_eq(netns_resolve("", 80, NULL, &ss, &len, &err), -EINVAL);
        cr_assert_eq(netns_resolve("[not-v6]", 80, NULL, &ss, &len, &err), -EINVAL);
        int r = netns_resolve("name.invalid", 80, NULL, &ss, &len, &err);
        cr_assert(r == -ENOENT || r == -EHOSTUNREACH, "got %d", r); /* EAI_AGAIN offline */
}

/* This machine's own addresses: loopback is always one (lo), in every spelling; a
 * documentation address no interface has is not. */
static int own(const char *s) {
        struct sockaddr_in in = {.sin_family = AF_INET};
        struct sockaddr_in6 in6 = {.sin6_family = AF_INET6};
        if (inet_pton(AF_INET, s, &in.sin_addr) == 1)
                return netns_addr_own((struct sockaddr *)&in);
        cr_assert_eq(inet_pton(AF_INET6, s, &in6.sin6_addr), 1, "bad test address %s", s);
        return netns_addr_own((struct sockaddr *)&in6);
}

Test(netns_addr_own, loopback_in_every_spelling) {
        cr_assert_eq(own("127.0.0.1"), 1);
        cr_assert_eq(own("::1"), 1);
        cr_assert_eq(own("::ffff:127.0.0.1"), 1);
        cr_assert_eq(own("::127.0.0.1"), 1);
        cr_assert_eq(own("198.51.100.254"), 0);
        cr_assert_eq(own("2001:db8::fe"), 0);
        struct sockaddr un = {.sa_family = AF_UNIX};
        cr_assert_eq(netns_addr_own(&un), -EAFNOSUPPORT);
}
