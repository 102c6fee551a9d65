/* The operator's proxy (netns/upstream.c): the URL --upstream-proxy takes, the caller's
 * variables with `env`, no_proxy, and that no message or shown form holds the password. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "netns/netns.h"

Test(netns_upstream, url_with_credentials_is_masked) {
        struct netns_upstream u;
        struct rtn_error err = {0};
        cr_assert_eq(netns_upstream_parse(&u, "http://alice:pa%3Ass%40word@proxy.corp:3128/", &err),
                     0, "%s", err.msg);
        cr_assert_str_eq(u.host, "proxy.corp");
        cr_assert_eq(u.port, 3128);
        cr_assert_str_eq(u.auth, "YWxpY2U6cGE6c3NAd29yZA=="); /* alice:pa:ss@word */
        cr_assert_str_eq(u.shown, "http://***@proxy.corp:3128");
        cr_assert_eq(netns_upstream_parse(&u, "[::1]:8080", &err), 0, "%s", err.msg);
        cr_assert_str_eq(u.shown, "http://[::1]:8080");
        cr_assert_str_eq(u.auth, "");
        cr_assert_eq(netns_upstream_parse(&u, "proxy.corp", &err), 0, "%s", err.msg);
        cr_assert_eq(u.port, 80);
}

Test(netns_upstream, bad_urls_never_echoed) {
        static const char *const bad[] = {
                "socks5://u:SECRETX@p:1",  "https://u:SECRETX@p:3128", "http://u:SECRETX@",
                "http://u:SECRETX@p:0",    "http://u:SECRETX@p:99999", "http://u:SECRETX@b_d:1",
                "http://u:SECRETX%0a@p:1", "http://u:SECRETX@p:12x",
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
                struct netns_upstream u;
                struct rtn_error err = {0};
                cr_assert_lt(netns_upstream_parse(&u, bad[i], &err), 0, "%s", bad[i]);
                cr_assert_null(strstr(err.msg, "SECRETX"), "echoed: %s", err.msg);
                cr_assert(strstr(err.msg, "--upstream-proxy"), "%s", err.msg);
        }
}

Test(netns_upstream, env_and_no_proxy) {
        struct netns_upstream u;
        struct rtn_error err = {0};
        unsetenv("https_proxy");
        unsetenv("http_proxy");
        unsetenv("HTTP_PROXY");
        unsetenv("no_proxy");
        setenv("HTTPS_PROXY", "http://u:SECRETX@proxy.corp:3128", 1);
        setenv("NO_PROXY", "localhost, .internal.corp,10.1.2.3,*.git.corp,mirror.corp:8080", 1);
        cr_assert_eq(netns_upstream_parse(&u, "env", &err), 0, "%s", err.msg);
        cr_assert_str_eq(u.shown, "http://***@proxy.corp:3128");
        cr_assert(netns_upstream_for(&u, "deb.debian.org"));
        cr_assert_not(netns_upstream_for(&u, "internal.corp"));
        cr_assert_not(netns_upstream_for(&u, "a.internal.corp"));
        cr_assert_not(netns_upstream_for(&u, "A.Internal.Corp."));
        cr_assert(netns_upstream_for(&u, "xinternal.corp"));
        cr_assert_not(netns_upstream_for(&u, "x.git.corp"));
        cr_assert_not(netns_upstream_for(&u, "mirror.corp"));
        cr_assert_not(netns_upstream_for(&u, "10.1.2.3"));
        cr_assert(netns_upstream_for(&u, "10.1.2.4"));
        setenv("no_proxy", "*", 1);
        cr_assert_eq(netns_upstream_parse(&u, "env", &err), 0, "%s", err.msg);
        cr_assert_not(netns_upstream_for(&u, "deb.debian.org"));
        unsetenv("HTTPS_PROXY");
        cr_assert_eq(netns_upstream_parse(&u, "env", &err), -ENOENT);
        cr_assert(strstr(err.msg, "none of https_proxy"), "%s", err.msg);
        setenv("http_proxy", "socks5://u:SECRETX@p:1", 1);
        cr_assert_eq(netns_upstream_parse(&u, "env", &err), -EINVAL);
        cr_assert_null(strstr(err.msg, "SECRETX"), "echoed: %s", err.msg);
        cr_assert(strstr(err.msg, "http_proxy"), "%s", err.msg);
}
