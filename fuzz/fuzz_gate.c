/* The request head the gate reads from inside the sandbox (netns/gate.c,
 * netns_gate_parse_target and netns_http_host): apt, curl, npm and friends, or anything a
 * command sends to 127.0.0.1:PORT. The input is the request head. Oracles beyond the
 * sanitizers: a target taken has a port of 1-65535 (the policy decides which), a CONNECT
 * only when the method is exactly CONNECT, a non-empty host with no userinfo, path, query or
 * fragment left in it; a Host value found fits its buffer and has no line break; the head
 * is unchanged. */
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz.h"
#include "netns/internal.h"
#include "netns/netns.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *head = malloc(size + 1), *copy = malloc(size + 1);
        if (!head || !copy)
                abort();
        memcpy(head, data, size);
        head[size] = '\0';
        memcpy(copy, head, size + 1);
        bool is_connect = false;
        char *host = NULL;
        uint16_t port = 0;
        int r = netns_gate_parse_target(head, &is_connect, &host, &port);
        if (memcmp(head, copy, size + 1))
                abort();
        if (r == 0) {
                if (!host || !host[0] || port == 0 || (is_connect && strncmp(head, "CONNECT ", 8)))
                        abort();
                if (!is_connect && strpbrk(host, "@/?#"))
                        abort();
                (void)netns_host_valid(host);
        } else if (host) {
                abort();
        }
        char hv[64];
        int h = netns_http_host(head, hv, sizeof hv);
        if (h > 1 || (h == 1 && (strlen(hv) >= sizeof hv || strpbrk(hv, "\r\n"))))
                abort();
        free(host);
        free(head);
        free(copy);
        return 0;
}
