/* --upstream-proxy URL (netns/upstream.c, netns_upstream_parse): the operator's, but it
 * carries a password, so a typo must give a clear error that never shows it. The input is
 * the URL. Oracles beyond the sanitizers: on failure the message names the option and holds
 * no byte run of the URL's user information (what lies between "://" and the last '@');
 * on success the shown form holds neither, the port is 1-65535, and a host that passed
 * parses again as the proxy's host. */
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz.h"
#include "netns/netns.h"

/* The URL's user information, when it has some of 4 bytes or more (shorter runs may occur
 * in any message by chance). */
static bool userinfo(const char *url, char *ret, size_t len) {
        const char *a = strstr(url, "://");
        a = a ? a + 3 : url;
        size_t al = strcspn(a, "/?#");
        const char *at = memrchr(a, '@', al);
        size_t n = at ? (size_t)(at - a) : 0;
        if (n < 4 || n >= len)
                return false;
        memcpy(ret, a, n);
        ret[n] = '\0';
        return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size > 1024 || memchr(data, '\0', size) || (size == 3 && !memcmp(data, "env", 3)))
                return 0;
        char url[1025], cred[1025];
        memcpy(url, data, size);
        url[size] = '\0';
        struct netns_upstream u;
        struct rtn_error err = {0};
        bool has_cred = userinfo(url, cred, sizeof cred);
        if (netns_upstream_parse(&u, url, &err) < 0) {
                if (!strstr(err.msg, "--upstream-proxy") || (has_cred && strstr(err.msg, cred)))
                        abort();
                return 0;
        }
        if (u.port == 0 || !u.set || !netns_host_valid(u.host))
                abort();
        if (has_cred && (strstr(u.shown, cred) || !strstr(u.shown, "***@")))
                abort();
        if (strchr(u.shown, '@') && !strstr(u.shown, "http://***@"))
                abort();
        return 0;
}
