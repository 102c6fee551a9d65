/* What file_read and file_edit do with a file's content (serve/tools/filetext.c), which the
 * sandbox wrote: binary detection, `cat -n` numbering with offset, limit and an output cap,
 * exact-string counting and replacement, base64. The input: a flags byte (bit 0: the read
 * was cut, bit 1: replace all), offset, limit and cap (small, so they bite), the lengths of
 * old and new strings, those strings, then the content. Oracles beyond the sanitizers: the
 * numbered text fits its cap, ends in its NUL, counts lines as they are and returns what
 * the offset and limit ask for unless it says truncated; a replacement has the length the
 * counts give and changes as many occurrences as it says; base64 has its exact length and
 * alphabet; text called not binary is valid UTF-8 without NUL in its first 8 KiB. */
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "fuzz/fuzz.h"
#include "fuzz/peer.h"
#include "runtime/session/file_client.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct fuzz_in in = {data, size};
        uint8_t flags = fuzz_u8(&in);
        uint64_t offset = fuzz_u8(&in), limit = fuzz_u8(&in);
        size_t max_bytes = fuzz_u16(&in);
        const uint8_t *old, *rep;
        size_t olen = fuzz_take(&in, fuzz_u8(&in) % 8, &old);
        size_t rlen = fuzz_take(&in, fuzz_u8(&in) % 8, &rep);
        const char *text = (const char *)in.p;
        size_t n = in.n;
        bool cut = flags & 1, all = flags & 2;

        if (!rt_text_is_binary(text, n, cut) && !cut &&
            (memchr(text, '\0', n < 8192 ? n : 8192) || !rtn_utf8_valid(text, n)))
                abort();

        struct rt_text_lines t;
        if (rt_text_number_lines(text, n, offset, limit, max_bytes, &t) == 0) {
                uint64_t lines = 0;
                for (size_t i = 0; i < n; i++)
                        lines += text[i] == '\n';
                if (n && text[n - 1] != '\n')
                        lines++;
                uint64_t first = offset ? offset : 1;
                uint64_t want = lines >= first ? lines - first + 1 : 0;
                if (want > limit)
                        want = limit;
                if (t.len > max_bytes || t.content[t.len] || t.total_lines != lines ||
                    t.start_line != first || t.lines_returned > want ||
                    (!t.truncated && t.lines_returned != want))
                        abort();
                free(t.content);
        }

        if (olen) {
                size_t count = rt_text_count(text, n, (const char *)old, olen);
                char *out = NULL;
                size_t out_len = 0, done = 0;
                int r = rt_text_replace(text, n, (const char *)old, olen, (const char *)rep, rlen,
                                        all, 1u << 16, &out, &out_len, &done);
                if ((count == 0) != (r == -ENOENT))
                        abort();
                if (r == 0) {
                        size_t c = all ? count : 1;
                        if (done != c || out_len != n - c * olen + c * rlen || out[out_len])
                                abort();
                        free(out);
                }
        }

        size_t k = n < 4096 ? n : 4096;
        char *b64 = malloc(4 * ((k + 2) / 3) + 1);
        if (!b64)
                abort();
        size_t blen = rt_base64_encode((const unsigned char *)text, k, b64);
        if (blen != 4 * ((k + 2) / 3) || strlen(b64) != blen ||
            strspn(b64, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=") !=
                    blen)
                abort();
        free(b64);
        return 0;
}
