/* The blocked-call report (INIT_MSG_BLOCKED, runtime/sandbox/blocked.c), which rtn-init sends from
 * inside the sandbox before a command's exit: decoded, then formatted the two ways rtn uses
 * it, the stderr lines of `rtn exec` and the "blocked" member of a tool result. The input is
 * the datagram after one byte; with that byte's bit 0 set, the header's type and length are
 * patched to a BLOCKED message's so the records behind it are reached. Oracles beyond the
 * sanitizers: a rejected message leaves no report, an accepted one passes
 * fuzz_check_blocked (fuzz/peer.h). */
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz.h"
#include "fuzz/peer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size < 1)
                return 0;
        bool patch = data[0] & 1;
        size_t len = size - 1;
        uint8_t *msg = malloc(len ? len : 1);
        if (!msg)
                return 0;
        memcpy(msg, data + 1, len);
        if (patch && len >= sizeof(struct init_msg_hdr)) {
                struct init_msg_hdr h;
                memcpy(&h, msg, sizeof h);
                h.type = INIT_MSG_BLOCKED;
                h.len = (uint32_t)len;
                memcpy(msg, &h, sizeof h);
        }
        struct rt_blocked b;
        memset(&b, 0xa5, sizeof b);
        int r = rt_blocked_decode(msg, len, &b);
        free(msg);
        if (r < 0) {
                if (b.n != 0 || b.total != 0)
                        abort();
                return 0;
        }
        fuzz_check_blocked(&b);
        return 0;
}
