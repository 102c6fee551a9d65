/* The ClientHello reader of the gate's tunnels (netns/tls.c): a name read one way only, or
 * the hello refused. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "netns/internal.h"

/* A ClientHello whose server_name extension's body is sni[0..sl) (none when sl is 0), in
 * one record, or in two split at split (0: one), with extra bytes after it in its record. */
static size_t hello(uint8_t *out, const uint8_t *sni, size_t sl, size_t split, size_t extra) {
        uint8_t m[600];
        size_t n = 4;
        m[n++] = 3, m[n++] = 3;
        memset(m + n, 7, 32), n += 32;
        m[n++] = 0; /* session id */
        m[n++] = 0, m[n++] = 2, m[n++] = 0x13, m[n++] = 1; /* one cipher suite */
        m[n++] = 1, m[n++] = 0; /* null compression */
        size_t el = sl ? 4 + sl : 0;
        m[n++] = (uint8_t)(el >> 8), m[n++] = (uint8_t)el;
        if (sl) {
                m[n++] = 0, m[n++] = 0, m[n++] = (uint8_t)(sl >> 8), m[n++] = (uint8_t)sl;
                memcpy(m + n, sni, sl), n += sl;
        }
        m[0] = 1, m[1] = 0, m[2] = (uint8_t)((n - 4) >> 8), m[3] = (uint8_t)(n - 4);
        memset(m + n, 0, extra), n += extra;
        size_t cuts[3] = {0, split ? split : n, n}, o = 0;
        for (int i = 0; i < 2 && cuts[i] < n; i++) {
                size_t rl = cuts[i + 1] - cuts[i];
                out[o++] = 22, out[o++] = 3, out[o++] = 1;
                out[o++] = (uint8_t)(rl >> 8), out[o++] = (uint8_t)rl;
                memcpy(out + o, m + cuts[i], rl), o += rl;
        }
        return o;
}

static int sni_of(const uint8_t *ext, size_t el, size_t split, size_t extra, char *name) {
        uint8_t buf[800];
        size_t n = hello(buf, ext, el, split, extra);
        return netns_tls_sni(buf, n, name, 256);
}

Test(netns_tls, one_name_read) {
        static const uint8_t ext[] = {0, 11, 0, 0, 8, 'a', '.', 'e', 'x', '-', 'a', '_', 'b'};
        char name[256];
        cr_assert_eq(sni_of(ext, sizeof ext, 0, 0, name), 0);
        cr_assert_str_eq(name, "a.ex-a_b");
        cr_assert_eq(sni_of(ext, sizeof ext, 30, 0, name), 0); /* over two records */
        cr_assert_str_eq(name, "a.ex-a_b");
        cr_assert_eq(sni_of(NULL, 0, 0, 0, name), 0);
        cr_assert_str_eq(name, "");
}

/* A list of two names (a server reading the first and one reading the last disagree), an
 * entry of another type, a name with characters no host name has, bytes after the hello in
 * its record, a truncated list. */
Test(netns_tls, ambiguous_hellos_refused) {
        char name[256];
        static const uint8_t two[] = {0, 13, 0, 0, 4, 'a', '.', 'i', 'o', 0, 0, 3, 'b', '.', 'c'};
        cr_assert_eq(sni_of(two, sizeof two, 0, 0, name), -EPROTO);
        static const uint8_t other[] = {0, 6, 1, 0, 3, 'a', '.', 'b'};
        cr_assert_eq(sni_of(other, sizeof other, 0, 0, name), -EPROTO);
        static const uint8_t nul[] = {0, 6, 0, 0, 3, 'a', 0, 'b'};
        cr_assert_eq(sni_of(nul, sizeof nul, 0, 0, name), -EPROTO);
        static const uint8_t slash[] = {0, 6, 0, 0, 3, 'a', '/', 'b'};
        cr_assert_eq(sni_of(slash, sizeof slash, 0, 0, name), -EPROTO);
        static const uint8_t ok[] = {0, 6, 0, 0, 3, 'a', '.', 'b'};
        cr_assert_eq(sni_of(ok, sizeof ok, 0, 5, name), -EPROTO);
        static const uint8_t cut[] = {0, 6, 0, 0, 4, 'a', '.', 'b'};
        cr_assert_eq(sni_of(cut, sizeof cut, 0, 0, name), -EPROTO);
        static const uint8_t empty[] = {0, 3, 0, 0, 0};
        cr_assert_eq(sni_of(empty, sizeof empty, 0, 0, name), -EPROTO);
}
