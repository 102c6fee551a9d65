/* --secret, --secret-file and --secret-header (netns/secret.c): HOST written http://HOST lets
 * a secret go over plain HTTP (netns_secrets_cleartext), and no error shows the value or a
 * part of the argument that failed its check, in every malformed spelling: the value given
 * with '=', as the NAME, as the HOST, as the FILE or in the TEMPLATE, an unset, empty or
 * CR/LF-carrying variable, the same secret twice. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netns/netns.h"

#define TOK "ghp_Zq9xW2vB7nK4mT8rY1cL5dH3jF6sA0"

static int add(struct netns_secrets *ss, const char *arg, bool from_file, struct rtn_error *err) {
        *err = (struct rtn_error){0};
        return netns_secret_add(ss, arg, from_file, err);
}

Test(netns_secret, cleartext_only_when_every_secret_of_the_host_says_so) {
        struct netns_secrets ss = {0};
        struct rtn_error err;
        setenv("RTN_T_A", "a", 1);
        setenv("RTN_T_B", "b", 1);
        cr_assert_eq(add(&ss, "RTN_T_A@HTTP://Api.Example.org", false, &err), 0, "%s", err.msg);
        cr_assert_str_eq(ss.s[0].host, "api.example.org");
        cr_assert(ss.s[0].cleartext);
        cr_assert(netns_secrets_cleartext(&ss, "api.example.org"));
        cr_assert_eq(add(&ss, "RTN_T_B@api.example.org", false, &err), 0, "%s", err.msg);
        cr_assert_not(ss.s[1].cleartext);
        cr_assert_not(netns_secrets_cleartext(&ss, "api.example.org"));
        cr_assert_eq(add(&ss, "RTN_T_A@https://x.example.org", false, &err), -EINVAL);
        netns_secrets_free(&ss);
}

Test(netns_secret, errors_never_show_a_value) {
        static const struct {
                const char *arg;
                bool file;
                int want;
        } cases[] = {
                {"GH_TOKEN=" TOK "@api.example.org", false, -EINVAL},
                {TOK "@api.example.org", false, -ENOENT},
                {TOK, false, -EINVAL},
                {"RTN_T_TOK@" TOK, false, -EINVAL},
                {"RTN_T_TOK@http://" TOK, false, -EINVAL},
                {"RTN_T_TOK@api.example.org=" TOK, false, -EINVAL},
                {"RTN_T_TOK@api.example.org=" TOK, true, -ENOENT},
                {"RTN_T_TOK@" TOK "=/dev/null", true, -EINVAL},
                {"RTN_T_EMPTY@api.example.org", false, -EINVAL},
                {"RTN_T_NL@api.example.org", false, -EINVAL},
                {"RTN_T_CR@api.example.org", false, -EINVAL},
        };
        setenv("RTN_T_TOK", TOK, 1);
        setenv("RTN_T_EMPTY", "", 1);
        setenv("RTN_T_NL", TOK "\nX-Evil: 1", 1);
        setenv("RTN_T_CR", "a\r" TOK, 1);
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
                struct netns_secrets ss = {0};
                struct rtn_error err;
                cr_assert_eq(add(&ss, cases[i].arg, cases[i].file, &err), cases[i].want, "%s: %s",
                             cases[i].arg, err.msg);
                cr_assert_null(strstr(err.msg, "Zq9x"), "%s echoed: %s", cases[i].arg, err.msg);
                cr_assert_null(strstr(err.msg, "X-Evil"), "%s: %s", cases[i].arg, err.msg);
                cr_assert(strstr(err.msg, "secret #1"), "%s: no position: %s", cases[i].arg,
                          err.msg);
                netns_secrets_free(&ss);
        }
        struct netns_secrets ss = {0};
        struct rtn_error err;
        cr_assert_eq(add(&ss, "RTN_T_TOK@api.example.org", false, &err), 0, "%s", err.msg);
        cr_assert_eq(add(&ss, "RTN_T_TOK@API.example.org.", false, &err), -EEXIST);
        cr_assert(strstr(err.msg, "secret #2, for api.example.org): secret #1 has the same"), "%s",
                  err.msg);
        static const char *const headers[] = {
                "RTN_T_TOK=Authorization: Bearer " TOK, /* no {} */
                TOK "=X-Key: {}", /* no secret has that NAME */
                "RTN_T_TOK:" TOK, /* no '=' */
                "RTN_T_TOK=X-Key: {} " TOK "\r\nX-Evil: {}",
        };
        for (size_t i = 0; i < sizeof headers / sizeof headers[0]; i++) {
                err = (struct rtn_error){0};
                cr_assert_lt(netns_secret_header(&ss, headers[i], &err), 0, "%s", headers[i]);
                cr_assert_null(strstr(err.msg, "Zq9x"), "%s echoed: %s", headers[i], err.msg);
                cr_assert_null(strstr(err.msg, "X-Evil"), "%s: %s", headers[i], err.msg);
        }
        netns_secrets_free(&ss);
}
