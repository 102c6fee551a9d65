/* The request line the provisioning gate reads from inside the sandbox (netns/gate.c,
 * netns_gate_parse_target): apt and friends, or anything a provisioning command sends to
 * 127.0.0.1:PORT. The input is the request head. Oracles beyond the sanitizers: a target
 * taken has a port of 80 or 443, a CONNECT only when the method is exactly CONNECT, a host
 * with no userinfo, path, query or fragment left in it, and the head is unchanged. */
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
                if (!host || (port != 80 && port != 443) ||
                    (is_connect && strncmp(head, "CONNECT ", 8)))
                        abort();
                if (!is_connect && strpbrk(host, "@/?#"))
                        abort();
                (void)netns_host_valid(host);
        } else if (host) {
                abort();
        }
        free(host);
        free(head);
        free(copy);
        return 0;
}
