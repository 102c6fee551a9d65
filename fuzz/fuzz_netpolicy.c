/* A --net-policy file (netns/policy.c, netns_policy_parse): the operator's, but read by the
 * same code as --allow-net, so a typo must give a clear error and nothing else. Oracles
 * beyond the sanitizers: on success every rule is written back (netns_policy_describe) as a
 * HOST[:PORT] that parses again to the same rule and that the policy admits on its port;
 * on failure the message names the file; no rule admits an address through a name. */
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz.h"
#include "netns/netns.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct netns_policy p = {0};
        struct rtn_error err = {0};
        int r = netns_policy_parse(&p, (const char *)data, size, "policy", &err);
        if (r < 0 && strncmp(err.msg, "policy", 6))
                abort();
        for (size_t i = 0; r == 0 && i < p.n; i++) {
                char buf[300];
                struct netns_policy q = {0};
                if (!netns_policy_describe(&p, i, buf, sizeof buf))
                        abort();
                if (netns_policy_add(&q, buf, &err) < 0 || q.n != 1 ||
                    strcmp(q.rules[0].host, p.rules[i].host) ||
                    q.rules[0].port != p.rules[i].port || q.rules[0].domain != p.rules[i].domain)
                        abort();
                uint16_t port = p.rules[i].port ? p.rules[i].port : 443;
                if (!netns_policy_allows(&p, p.rules[i].host, port))
                        abort();
                if (!p.rules[i].family && netns_policy_allows(&q, "127.0.0.1", port) &&
                    strcmp(p.rules[i].host, "127.0.0.1"))
                        abort();
                netns_policy_free(&q);
        }
        netns_policy_free(&p);
        return 0;
}
