/* The server name a TLS client asks for (RFC 8446 4.1.2 ClientHello, RFC 6066 3 server_name),
 * read from the first bytes a client sends through a CONNECT tunnel, so the gate can hold the
 * tunnel to the host the CONNECT named (netns/gate.c). Only the plaintext ClientHello is
 * read; nothing is decrypted or changed. Every length is checked against what encloses it:
 * the record, the handshake message, the extension block, the extension, the name list.
 * The handshake message may span several records (RFC 8446 5.1), so fragments of
 * handshake records are gathered first, up to NETNS_TLS_HELLO_MAX bytes; a record that holds
 * more than the hello, a server_name list of more than one entry and a name of other
 * characters than a host name's are refused (docs/network.md, "What the gate refuses"). */
#include <errno.h>
#include <string.h>

#include "netns/internal.h"

static unsigned be16(const uint8_t *p) {
        return (unsigned)p[0] << 8 | p[1];
}

/* The handshake bytes carried by the leading records of buf, gathered into out.
 * -EAGAIN: the first message is not complete yet. */
static int gather(const uint8_t *buf, size_t len, uint8_t *out, size_t *ret_len) {
        size_t off = 0, have = 0, need = 0;
        for (;;) {
                if (len - off < 5)
                        return -EAGAIN;
                const uint8_t *rec = buf + off;
                size_t rl = be16(rec + 3);
                if (rec[0] != 22 || rec[1] != 3 || rl == 0 || rl > 16384 + 256)
                        return -EPROTO; /* not a handshake record of TLS */
                if (len - off - 5 < rl)
                        return -EAGAIN;
                if (have + rl > NETNS_TLS_HELLO_MAX)
                        return -EPROTO;
                memcpy(out + have, rec + 5, rl);
                have += rl;
                off += 5 + rl;
                if (need == 0 && have >= 4) {
                        if (out[0] != 1)
                                return -EPROTO; /* the first message must be a ClientHello */
                        need = 4 + ((size_t)out[1] << 16 | (size_t)out[2] << 8 | out[3]);
                        if (need > NETNS_TLS_HELLO_MAX)
                                return -EPROTO;
                }
                if (need && have >= need) {
                        if (have > need)
                                return -EPROTO; /* more in the hello's record: not a hello */
                        *ret_len = need;
                        return 0;
                }
        }
}

/* The server_name extension's body: a list of exactly one host_name entry (RFC 6066 3 allows
 * one of each type, and host_name is the only type): a server that reads the first entry and
 * one that reads the last must see the same name. The name is letters, digits, '-', '.' and
 * '_' (what netns_host_canon then judges); anything else is refused, never guessed. */
static int sni_from_ext(const uint8_t *p, size_t len, char *ret, size_t rlen) {
        if (len < 5 || be16(p) != len - 2 || p[2] != 0)
                return -EPROTO;
        size_t nl = be16(p + 3);
        if (nl == 0 || nl != len - 5 || nl >= rlen)
                return -EPROTO; /* empty, truncated, or a second entry after it */
        for (size_t i = 0; i < nl; i++) {
                uint8_t c = p[5 + i];
                if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '.' || c == '_'))
                        return -EPROTO;
        }
        memcpy(ret, p + 5, nl);
        ret[nl] = '\0';
        return 1;
}

int netns_tls_sni(const uint8_t *buf, size_t len, char *ret, size_t rlen) {
        /* On the stack, not thread-local: a __thread buffer is zeroed in every thread of
         * every rtn process when it starts (32 KiB, 8 page faults, at each rtn's start),
         * where a frame's pages are touched only by what gather() copies in. */
        uint8_t msg[NETNS_TLS_HELLO_MAX];
        size_t ml = 0;
        int r = gather(buf, len, msg, &ml);
        if (r < 0)
                return r;
        /* ClientHello: version(2) random(32) session_id<0..32> cipher_suites<2..2^16-2>
         * compression_methods<1..2^8-1> extensions<8..2^16-1> */
        size_t off = 4 + 2 + 32;
        if (ml < off + 1 || msg[off] > 32)
                return -EPROTO;
        off += 1 + msg[off];
        if (ml < off + 2)
                return -EPROTO;
        off += 2 + be16(msg + off);
        if (ml < off + 1)
                return -EPROTO;
        off += 1 + msg[off];
        if (ml < off + 2)
                return -EPROTO;
        size_t el = be16(msg + off);
        off += 2;
        if (el != ml - off)
                return -EPROTO;
        int found = 0;
        while (off + 4 <= ml) {
                unsigned type = be16(msg + off);
                size_t xl = be16(msg + off + 2);
                off += 4;
                if (xl > ml - off)
                        return -EPROTO;
                if (type == 0) {
                        if (found)
                                return -EPROTO; /* two server_name extensions */
                        if ((found = sni_from_ext(msg + off, xl, ret, rlen)) < 0)
                                return found;
                }
                off += xl;
        }
        if (off != ml)
                return -EPROTO;
        if (!found && rlen)
                ret[0] = '\0';
        return 0;
}
