/* Pure text helpers of the file tools (runtime/session/file_client.h): binary detection, `cat -n`
 * style line numbering with offset/limit and an output cap, exact-string replacement for file_edit,
 * base64 for file_read, and the small argument parsers. No I/O, so the unit tests drive them with
 * plain buffers. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "runtime/session/file_client.h"

#define BINARY_PROBE 8192

bool rt_text_is_binary(const char *data, size_t n, bool cut) {
        if (memchr(data, '\0', n < BINARY_PROBE ? n : BINARY_PROBE))
                return true;
        if (rtn_utf8_valid(data, n))
                return false;
        if (!cut)
                return true;
        /* The read stopped inside a multibyte sequence: drop at most 3 trailing bytes. */
        for (size_t drop = 1; drop <= 3 && drop <= n; drop++)
                if (rtn_utf8_valid(data, n - drop))
                        return false;
        return true;
}

int rt_text_number_lines(const char *data, size_t n, uint64_t offset, uint64_t limit,
                         size_t max_bytes, struct rt_text_lines *ret) {
        struct rt_text_lines t = {.start_line = offset ? offset : 1};
        size_t cap = 4096;
        if (!(t.content = malloc(cap)))
                return -ENOMEM;
        uint64_t line = 0;
        for (const char *p = data, *end = data + n; p < end;) {
                const char *nl = memchr(p, '\n', (size_t)(end - p));
                size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
                line++;
                if (line >= t.start_line && !t.truncated) {
                        if (t.lines_returned >= limit) {
                                t.truncated = true;
                        } else {
                                size_t need = len + 16;
                                if (t.len + need > max_bytes) {
                                        t.truncated = true;
                                } else {
                                        if (t.len + need + 1 > cap) {
                                                while (t.len + need + 1 > cap)
                                                        cap *= 2;
                                                char *c = realloc(t.content, cap);
                                                if (!c) {
                                                        free(t.content);
                                                        return -ENOMEM;
                                                }
                                                t.content = c;
                                        }
                                        int k = snprintf(t.content + t.len, cap - t.len, "%6llu\t",
                                                         (unsigned long long)line);
                                        t.len += (size_t)k;
                                        memcpy(t.content + t.len, p, len);
                                        t.len += len;
                                        if (nl) /* none the file lacks */
                                                t.content[t.len++] = '\n';
                                        t.lines_returned++;
                                }
                        }
                }
                p += len + 1;
        }
        t.content[t.len] = '\0';
        t.total_lines = line;
        *ret = t;
        return 0;
}

size_t rt_text_count(const char *data, size_t n, const char *needle, size_t nlen) {
        size_t count = 0;
        if (nlen == 0)
                return 0;
        for (const char *p = data, *end = data + n; p < end;) {
                const char *hit = memmem(p, (size_t)(end - p), needle, nlen);
                if (!hit)
                        break;
                count++;
                p = hit + nlen;
        }
        return count;
}

int rt_text_replace(const char *data, size_t n, const char *old, size_t olen, const char *rep,
                    size_t rlen, bool all, size_t max_len, char **ret, size_t *ret_len,
                    size_t *ret_count) {
        size_t count = rt_text_count(data, n, old, olen);
        if (count == 0)
                return -ENOENT;
        if (!all)
                count = 1;
        /* n - count*olen + count*rlen, checked without overflow. */
        size_t removed = count * olen;
        if (rlen > 0 && count > (max_len + removed) / rlen)
                return -E2BIG;
        size_t out_len = n - removed + count * rlen;
        if (out_len > max_len)
                return -E2BIG;
        char *out = malloc(out_len + 1);
        if (!out)
                return -ENOMEM;
        size_t o = 0, done = 0;
        const char *p = data, *end = data + n;
        while (done < count) {
                const char *hit = memmem(p, (size_t)(end - p), old, olen);
                memcpy(out + o, p, (size_t)(hit - p));
                o += (size_t)(hit - p);
                memcpy(out + o, rep, rlen);
                o += rlen;
                p = hit + olen;
                done++;
        }
        memcpy(out + o, p, (size_t)(end - p));
        o += (size_t)(end - p);
        out[o] = '\0';
        *ret = out;
        *ret_len = o;
        *ret_count = count;
        return 0;
}

size_t rt_base64_encode(const unsigned char *in, size_t n, char *out) {
        static const char tab[] =
                "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        size_t o = 0, i = 0;
        for (; i + 2 < n; i += 3) {
                uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
                out[o++] = tab[v >> 18];
                out[o++] = tab[(v >> 12) & 63];
                out[o++] = tab[(v >> 6) & 63];
                out[o++] = tab[v & 63];
        }
        if (i < n) {
                uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < n ? (uint32_t)in[i + 1] << 8 : 0);
                out[o++] = tab[v >> 18];
                out[o++] = tab[(v >> 12) & 63];
                out[o++] = i + 1 < n ? tab[(v >> 6) & 63] : '=';
                out[o++] = '=';
        }
        out[o] = '\0';
        return o;
}

int rt_files_display_path(const char *path, char *buf, size_t cap) {
        int n = path[0] == '/' ? snprintf(buf, cap, "%s", path)
                               : snprintf(buf, cap, "/workspace/%s", path);
        return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

int rt_files_parse_mode(const char *s, uint32_t *ret) {
        size_t len = strlen(s);
        if (len < 3 || len > 4)
                return -EINVAL;
        uint32_t v = 0;
        for (size_t i = 0; i < len; i++) {
                if (s[i] < '0' || s[i] > '7')
                        return -EINVAL;
                v = v * 8 + (uint32_t)(s[i] - '0');
        }
        if (v > 0777)
                return -EINVAL;
        *ret = v;
        return 0;
}
