/* The network policy's parser and matcher (netns/policy.c): the rules --allow-net and
 * --net-policy take, the errors a bad one gets, and what a rule admits. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <string.h>

#include "netns/netns.h"

static bool admits(const char *rule, const char *host, uint16_t port) {
        struct netns_policy p = {0};
        struct rtn_error err = {0};
        cr_assert_eq(netns_policy_add(&p, rule, &err), 0, "%s: %s", rule, err.msg);
        bool r = netns_policy_allows(&p, host, port);
        netns_policy_free(&p);
        return r;
}

Test(netns_policy, names_domains_ports) {
        cr_assert(admits("deb.debian.org", "deb.debian.org", 80));
        cr_assert(admits("deb.debian.org", "DEB.Debian.ORG.", 443));
        cr_assert_not(admits("deb.debian.org", "deb.debian.org", 8080));
        cr_assert_not(admits("deb.debian.org", "x.deb.debian.org", 443));
        cr_assert(admits(".npmjs.org", "npmjs.org", 443));
        cr_assert(admits(".npmjs.org", "registry.npmjs.org", 443));
        cr_assert_not(admits(".npmjs.org", "evilnpmjs.org", 443));
        cr_assert_not(admits(".npmjs.org", "npmjs.org.evil.example", 443));
        cr_assert(admits("git.example.org:8443", "git.example.org", 8443));
        cr_assert_not(admits("git.example.org:8443", "git.example.org", 443));
}

Test(netns_policy, addresses_only_by_their_own_rule) {
        cr_assert(admits("203.0.113.7", "203.0.113.7", 80));
        cr_assert(admits("203.0.113.7:8080", "203.0.113.7", 8080));
        cr_assert(admits("[2001:db8::1]", "[2001:db8:0::1]", 443));
        cr_assert(admits("203.0.113.7", "203.28935", 80)); /* the same address, spelt short */
        cr_assert(admits("203.0.0.0", "203.0.", 80)); /* a trailing dot leaves an address */
        cr_assert_not(admits("x.example", "203.0.", 80));
        cr_assert_not(admits("own.example", "203.0.113.7", 80));
        cr_assert_not(admits(".example.org", "203.0.113.7", 443));
        cr_assert_not(admits("203.0.113.7", "203.0.113.8", 443));
}

struct bad {
        const char *rule, *msg;
};
static const struct bad bad_cases[] = {
        {"", "empty host"},
        {"bad host", "a character no host name"},
        {"*.example.org", "write a domain as .example.org"},
        {".org", "too wide"},
        {"x.example:0", "1-65535"},
        {"x.example:65536", "1-65535"},
        {"x.example:", "1-65535"},
        {".203.0.113.7", "an address cannot be a domain"},
        {"2001:db8::1", "in brackets"},
        {"ftp://x.example/", "only http:// and https:// URLs"},
        {"https://user:hunter2@x.example/", "user information"},
        {"https:///path", "no host"},
        {"https://x.example:0/", "1-65535"},
        {"-x.example", "is not a host name"},
        {"x_y.example", "a character no host name"},
        {"GH_TOKEN=ghp_x1@example.org", "not shown, as it may be a secret"},
};
#define NBAD (sizeof bad_cases / sizeof bad_cases[0])

/* Indexes, not the cases: criterion hands parameters to the test's process by value. */
ParameterizedTestParameters(netns_policy, bad_rules) {
        static int idx[NBAD];
        for (size_t i = 0; i < NBAD; i++)
                idx[i] = (int)i;
        return cr_make_param_array(int, idx, NBAD);
}
ParameterizedTest(int *i, netns_policy, bad_rules) {
        if (strstr(bad_cases[*i].rule, "hunter2")) {
                struct netns_policy p = {0};
                struct rtn_error err = {0};
                cr_assert_eq(netns_policy_add(&p, bad_cases[*i].rule, &err), -EINVAL);
                cr_assert_null(strstr(err.msg, "hunter2"), "echoed: %s", err.msg);
        }
        const struct bad *b = &bad_cases[*i];
        struct netns_policy p = {0};
        struct rtn_error err = {0};
        cr_assert_eq(netns_policy_add(&p, b->rule, &err), -EINVAL, "%s", b->rule);
        cr_assert(strstr(err.msg, b->msg), "'%s': %s", b->rule, err.msg);
        cr_assert_eq(p.n, 0);
        if (strchr(b->rule, '_'))
                cr_assert_null(strstr(err.msg, b->rule + 2), "echoed: %s", err.msg);
}

/* Only a rule that is the address with that port, written out, admits an address of this
 * machine (netns_resolve). */
Test(netns_policy, names_addr_only_with_its_port) {
        struct netns_policy p = {0};
        struct rtn_error err = {0};
        static const char *const rules[] = {"203.0.113.7:8080", "203.0.113.8", "[2001:db8::1]:443",
                                            "own.example:8080"};
        for (size_t i = 0; i < 4; i++)
                cr_assert_eq(netns_policy_add(&p, rules[i], &err), 0, "%s", err.msg);
        struct sockaddr_in a = {.sin_family = AF_INET};
        struct sockaddr_in6 b = {.sin6_family = AF_INET6};
        inet_pton(AF_INET, "203.0.113.7", &a.sin_addr);
        cr_assert(netns_policy_names_addr(&p, (struct sockaddr *)&a, 8080));
        cr_assert_not(netns_policy_names_addr(&p, (struct sockaddr *)&a, 80));
        inet_pton(AF_INET, "203.0.113.8", &a.sin_addr); /* no port written: not enough */
        cr_assert_not(netns_policy_names_addr(&p, (struct sockaddr *)&a, 80));
        inet_pton(AF_INET6, "2001:db8::1", &b.sin6_addr);
        cr_assert(netns_policy_names_addr(&p, (struct sockaddr *)&b, 443));
        inet_pton(AF_INET6, "::ffff:203.0.113.7", &b.sin6_addr);
        cr_assert_not(netns_policy_names_addr(&p, (struct sockaddr *)&b, 8080));
        netns_policy_free(&p);
}

Test(netns_policy, file_lines_comments_and_errors) {
        static const char ok[] = "# mirrors\ndeb.debian.org\n\n  .npmjs.org   # npm\n"
                                 "203.0.113.7:8080\r\n";
        struct netns_policy p = {0};
        struct rtn_error err = {0};
        cr_assert_eq(netns_policy_parse(&p, ok, strlen(ok), "f", &err), 0, "%s", err.msg);
        cr_assert_eq(p.n, 3);
        cr_assert(netns_policy_allows(&p, "203.0.113.7", 8080));
        netns_policy_free(&p);
        static const char bad[] = "deb.debian.org\nfoo bar\n";
        cr_assert_eq(netns_policy_parse(&p, bad, strlen(bad), "f", &err), -EINVAL);
        cr_assert_str_eq(err.msg, "f:2: one HOST[:PORT] per line");
        netns_policy_free(&p);
        static const char nul[] = "a.example\0b\n";
        cr_assert_eq(netns_policy_parse(&p, nul, sizeof nul - 1, "f", &err), -EINVAL);
        cr_assert(strstr(err.msg, "f:1: a NUL byte"), "%s", err.msg);
        netns_policy_free(&p);
}

/* Names and addresses no request through the gate can ever reach are refused when the rule
 * is read, every spelling of them, with the reason and what to use instead. */
static const char *const never[] = {
        "localhost",
        "LOCALHOST",
        "localhost.",
        "LocalHost:8080",
        "app.localhost",
        ".localhost",
        "localhost.localdomain",
        "ip6-localhost",
        "ip6-loopback",
        "127.0.0.1",
        "127.1",
        "0x7f.1",
        "0x7f000001",
        "2130706433",
        "0177.0.0.1",
        "127.0.0.1:11434",
        "127.255.255.254",
        "[::1]",
        "[::1]:8080",
        "::1",
        "[0:0:0:0:0:0:0:1]",
        "::ffff:127.0.0.1",
        "[::ffff:127.0.0.1]",
        "[::ffff:7f00:1]",
        "0.0.0.0",
        "0",
        "[::]",
        "169.254.169.254",
        "[fe80::1]",
        "10.0.0.5",
        "192.168.1.10:3128",
        "host.rtn.internal",
        "HOST.rtn.internal.:80",
        "http://localhost:8080/v1",
        "https://127.0.0.1/",
        "http://[::1]:11434/api",
};
#define NNEVER (sizeof never / sizeof never[0])

ParameterizedTestParameters(netns_policy, never_reachable) {
        static int idx[NNEVER];
        for (size_t i = 0; i < NNEVER; i++)
                idx[i] = (int)i;
        return cr_make_param_array(int, idx, NNEVER);
}
ParameterizedTest(int *i, netns_policy, never_reachable) {
        const char *rule = never[*i];
        struct netns_policy p = {0};
        struct rtn_error err = {0};
        cr_assert_eq(netns_policy_add(&p, rule, &err), -EINVAL, "%s was accepted", rule);
        cr_assert_eq(p.n, 0);
        cr_assert(strstr(err.msg, "never"), "'%s': no reason: %s", rule, err.msg);
        bool local = (strstr(rule, "local") && !strstr(rule, "fe80")) || strstr(rule, "127") ||
                     (strstr(rule, "::1") && !strstr(rule, "fe80")) || strstr(rule, "7f") ||
                     strstr(rule, "2130706433") || strstr(rule, "0177") ||
                     strstr(rule, "internal") || !strcmp(rule, "0") || strstr(rule, "0.0.0.0") ||
                     !strcmp(rule, "[::]");
        if (local)
                cr_assert(strstr(err.msg, "--allow-host-port"), "'%s': no way out: %s", rule,
                          err.msg);
}

/* A URL is taken as its host, and its port when it has one; its path names nothing. */
Test(netns_policy, urls_are_their_host) {
        cr_assert(admits("https://deb.debian.org", "deb.debian.org", 443));
        cr_assert(admits("https://deb.debian.org/", "deb.debian.org", 80));
        cr_assert(admits("HTTPS://Deb.Debian.Org/debian/dists?x#y", "deb.debian.org", 443));
        cr_assert(admits("http://host.example:8080/path", "host.example", 8080));
        cr_assert_not(admits("http://host.example:8080/path", "host.example", 80));
        cr_assert(admits("http://[2001:db8::1]:8443/", "[2001:db8::1]", 8443));
        cr_assert(admits("https://.npmjs.org", "registry.npmjs.org", 443));
        struct netns_policy p = {0};
        struct rtn_error err = {0};
        cr_assert_eq(netns_policy_add(&p, "http://host.example:8080/path", &err), 0, "%s", err.msg);
        char buf[300];
        netns_policy_describe(&p, 0, buf, sizeof buf);
        cr_assert_str_eq(buf, "host.example:8080");
        netns_policy_free(&p);
        static const char file[] = "https://deb.debian.org/debian\n";
        cr_assert_eq(netns_policy_parse(&p, file, strlen(file), "f", &err), 0, "%s", err.msg);
        cr_assert(netns_policy_allows(&p, "deb.debian.org", 443));
        netns_policy_free(&p);
}

/* --allow-host-port PORT: decimal 1-65535, each once, at most NETNS_HOST_PORTS_MAX. */
Test(netns_policy, host_ports) {
        struct netns_policy p = {0};
        struct rtn_error err = {0};
        cr_assert_eq(netns_policy_add_host_port(&p, "11434", &err), 0, "%s", err.msg);
        cr_assert_eq(p.nhost_ports, 1);
        cr_assert_eq(p.host_ports[0], 11434);
        static const char *const bad[] = {"0",    "65536",        "",   "80a", "-1",
                                          "0x50", "localhost:80", "+80"};
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
                cr_assert_eq(netns_policy_add_host_port(&p, bad[i], &err), -EINVAL, "%s", bad[i]);
                cr_assert(strstr(err.msg, "1-65535"), "%s: %s", bad[i], err.msg);
        }
        cr_assert_eq(netns_policy_add_host_port(&p, "11434", &err), -EEXIST);
        cr_assert(strstr(err.msg, "twice"), "%s", err.msg);
        char n[8];
        for (int i = 1; i < NETNS_HOST_PORTS_MAX; i++) {
                snprintf(n, sizeof n, "%d", 2000 + i);
                cr_assert_eq(netns_policy_add_host_port(&p, n, &err), 0, "%s", err.msg);
        }
        cr_assert_eq(netns_policy_add_host_port(&p, "3000", &err), -E2BIG);
        struct netns_policy q = {0};
        cr_assert_eq(netns_policy_copy(&p, &q), 0);
        cr_assert_eq(q.nhost_ports, NETNS_HOST_PORTS_MAX);
        cr_assert_eq(q.host_ports[0], 11434);
        netns_policy_free(&q);
        netns_policy_free(&p);
}
