/* The TLS ClientHello the gate reads from a CONNECT tunnel to learn the server name the client
 * asks for (netns/tls.c, netns_tls_sni): the bytes are the agent's, so every length in them
 * is hostile. Oracles beyond the sanitizers: a name found is NUL-terminated within its
 * buffer and holds no NUL; a result is one of 0, -EAGAIN, -EPROTO; a prefix of an input
 * that parsed never parses to a different name. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz.h"
#include "netns/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char name[256], again[256];
        memset(name, 'x', sizeof name);
        int r = netns_tls_sni(data, size, name, sizeof name);
        if (r != 0 && r != -EAGAIN && r != -EPROTO)
                abort();
        if (r == 0) {
                if (!memchr(name, '\0', sizeof name))
                        abort();
                for (size_t cut = 0; cut < size; cut += 1 + size / 16) {
                        int r2 = netns_tls_sni(data, cut, again, sizeof again);
                        if (r2 == 0 && strcmp(again, name))
                                abort();
                }
        }
        return 0;
}
