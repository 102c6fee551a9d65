/* JSON writer and UTF-8 helpers (see json.h). The writer never fails mid-way: the first
 * error (cap hit, allocation failure) sticks in buf->err and later calls do nothing, so a
 * caller builds a whole message and checks once. The reader validates the RFC 8259 grammar
 * itself with an explicit stack (no recursion, so hostile nesting cannot exhaust the C stack)
 * before handing the text to jsmn, which only tokenizes (common/json_read.c). */
#include "common/json.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"

#define JSON_DEFAULT_MAX (64u << 20)

/* ---- UTF-8 ----------------------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at s (1-4), or 0 when it is invalid (RFC 3629 table 3:
 * the second-byte ranges rule out overlongs, surrogates and code points past U+10FFFF).
 * Static, so that the loops below inline it; rtn_utf8_seq is its public face. */
static inline size_t utf8_seq(const unsigned char *s, size_t n, uint32_t *ret_cp) {
        unsigned char c = s[0];
        if (c < 0x80) {
                *ret_cp = c;
                return 1;
        }
        size_t len;
        unsigned char lo = 0x80, hi = 0xbf;
        uint32_t cp;
        if (c >= 0xc2 && c <= 0xdf) {
                len = 2;
                cp = c & 0x1f;
        } else if (c >= 0xe0 && c <= 0xef) {
                len = 3;
                cp = c & 0x0f;
                if (c == 0xe0)
                        lo = 0xa0;
                else if (c == 0xed)
                        hi = 0x9f;
        } else if (c >= 0xf0 && c <= 0xf4) {
                len = 4;
                cp = c & 0x07;
                if (c == 0xf0)
                        lo = 0x90;
                else if (c == 0xf4)
                        hi = 0x8f;
        } else
                return 0;
        if (n < len || s[1] < lo || s[1] > hi)
                return 0;
        cp = (cp << 6) | (s[1] & 0x3f);
        for (size_t i = 2; i < len; i++) {
                if ((s[i] & 0xc0) != 0x80)
                        return 0;
                cp = (cp << 6) | (s[i] & 0x3f);
        }
        *ret_cp = cp;
        return len;
}

size_t rtn_utf8_seq(const unsigned char *s, size_t n, uint32_t *ret_cp) {
        return utf8_seq(s, n, ret_cp);
}

bool rtn_utf8_valid(const char *s, size_t n) {
        const unsigned char *p = (const unsigned char *)s;
        uint32_t cp;
        for (size_t i = 0; i < n;) {
                size_t k = utf8_seq(p + i, n - i, &cp);
                if (k == 0)
                        return false;
                i += k;
        }
        return true;
}

/* ---- writer ---------------------------------------------------------------------------- */

void rtn_json_buf_free(struct rtn_json_buf *b) {
        free(b->data);
        b->data = NULL;
        b->len = b->cap = 0;
        b->err = 0;
        b->comma = false;
}

void rtn_json_buf_reset(struct rtn_json_buf *b) {
        b->len = 0;
        b->err = 0;
        b->comma = false;
        if (b->data)
                b->data[0] = '\0';
}

char *rtn_json_buf_steal(struct rtn_json_buf *b) {
        if (b->err || !b->data) {
                rtn_json_buf_free(b);
                return NULL;
        }
        char *p = TAKE_PTR(b->data);
        b->len = b->cap = 0;
        b->comma = false;
        return p;
}

static bool reserve(struct rtn_json_buf *b, size_t extra) {
        if (b->err)
                return false;
        size_t max = b->max ? b->max : JSON_DEFAULT_MAX;
        if (extra > max || b->len > max - extra) {
                b->err = -ENOBUFS;
                return false;
        }
        size_t need = b->len + extra + 1;
        if (need <= b->cap)
                return true;
        size_t ncap = b->cap ? b->cap : 256;
        while (ncap < need)
                ncap *= 2;
        char *p = realloc(b->data, ncap);
        if (!p) {
                b->err = -ENOMEM;
                return false;
        }
        b->data = p;
        b->cap = ncap;
        return true;
}

void rtn_json_append(struct rtn_json_buf *b, const char *s, size_t n) {
        if (!reserve(b, n))
                return;
        memcpy(b->data + b->len, s, n);
        b->len += n;
        b->data[b->len] = '\0';
}

static void put_c(struct rtn_json_buf *b, char c) {
        rtn_json_append(b, &c, 1);
}

/* Starts a value: the separating comma when one is due. */
static void value_begin(struct rtn_json_buf *b) {
        if (b->comma)
                put_c(b, ',');
        b->comma = false;
}

void rtn_json_obj_begin(struct rtn_json_buf *b) {
        value_begin(b);
        put_c(b, '{');
}

void rtn_json_obj_end(struct rtn_json_buf *b) {
        put_c(b, '}');
        b->comma = true;
}

void rtn_json_arr_begin(struct rtn_json_buf *b) {
        value_begin(b);
        put_c(b, '[');
}

void rtn_json_arr_end(struct rtn_json_buf *b) {
        put_c(b, ']');
        b->comma = true;
}

/* The escape of byte c (not part of a valid UTF-8 sequence that passes as is) into esc;
 * returns its length. */
static size_t escape_of(unsigned char c, char esc[8]) {
        static const char hex[] = "0123456789abcdef";
        static const char from[] = "\"\\\n\r\t\b\f", to[] = "\"\\nrtbf";
        const char *f = c ? memchr(from, c, sizeof from - 1) : NULL;
        esc[0] = '\\';
        if (f) {
                esc[1] = to[f - from];
                return 2;
        }
        if (c < 0x20) {
                memcpy(esc, "\\u00", 4);
                esc[4] = hex[c >> 4];
                esc[5] = hex[c & 15];
                return 6;
        }
        memcpy(esc, "\xef\xbf\xbd", 3); /* invalid UTF-8: one byte becomes U+FFFD */
        return 3;
}

/* Escapes go through a small local buffer, appended in blocks: output of control bytes
 * (every byte an escape) is common enough that an append per escape was the cost. */
static void put_escaped(struct rtn_json_buf *b, const char *s, size_t n) {
        const unsigned char *p = (const unsigned char *)s;
        char blk[4096];
        size_t bl = 0;
        put_c(b, '"');
        size_t run = 0; /* bytes copied verbatim, flushed in one append */
        for (size_t i = 0; i < n;) {
                unsigned char c = p[i];
                uint32_t cp;
                size_t k = c >= 0x20 && c != '"' && c != '\\' ? utf8_seq(p + i, n - i, &cp) : 0;
                if (k > 0) {
                        if (bl) {
                                rtn_json_append(b, blk, bl);
                                bl = 0;
                        }
                        run += k;
                        i += k;
                        continue;
                }
                if (run) {
                        rtn_json_append(b, (const char *)p + i - run, run);
                        run = 0;
                }
                if (bl > sizeof blk - 8) {
                        rtn_json_append(b, blk, bl);
                        bl = 0;
                }
                bl += escape_of(c, blk + bl);
                i++;
        }
        if (bl)
                rtn_json_append(b, blk, bl);
        rtn_json_append(b, (const char *)p + n - run, run);
        put_c(b, '"');
}

void rtn_json_key(struct rtn_json_buf *b, const char *key) {
        value_begin(b);
        put_escaped(b, key, strlen(key));
        put_c(b, ':');
}

void rtn_json_strn(struct rtn_json_buf *b, const char *s, size_t n) {
        value_begin(b);
        put_escaped(b, s ? s : "", s ? n : 0);
        b->comma = true;
}

void rtn_json_str(struct rtn_json_buf *b, const char *s) {
        rtn_json_strn(b, s, s ? strlen(s) : 0);
}

void rtn_json_strf(struct rtn_json_buf *b, const char *fmt, ...) {
        char *s = NULL;
        va_list ap;
        va_start(ap, fmt);
        int n = vasprintf(&s, fmt, ap);
        va_end(ap);
        if (n < 0) {
                if (!b->err)
                        b->err = -ENOMEM;
                return;
        }
        rtn_json_strn(b, s, (size_t)n);
        free(s);
}

static void put_num(struct rtn_json_buf *b, const char *s) {
        value_begin(b);
        rtn_json_append(b, s, strlen(s));
        b->comma = true;
}

void rtn_json_int(struct rtn_json_buf *b, int64_t v) {
        char s[24];
        snprintf(s, sizeof s, "%" PRId64, v);
        put_num(b, s);
}

void rtn_json_uint(struct rtn_json_buf *b, uint64_t v) {
        char s[24];
        snprintf(s, sizeof s, "%" PRIu64, v);
        put_num(b, s);
}

void rtn_json_double(struct rtn_json_buf *b, double v) {
        char s[32];
        if (!isfinite(v))
                snprintf(s, sizeof s, "null");
        else
                snprintf(s, sizeof s, "%.17g", v);
        put_num(b, s);
}

void rtn_json_bool(struct rtn_json_buf *b, bool v) {
        put_num(b, v ? "true" : "false");
}

void rtn_json_null(struct rtn_json_buf *b) {
        put_num(b, "null");
}

void rtn_json_raw(struct rtn_json_buf *b, const char *json, size_t n) {
        value_begin(b);
        rtn_json_append(b, json, n);
        b->comma = true;
}

void rtn_json_kv_str(struct rtn_json_buf *b, const char *key, const char *s) {
        rtn_json_key(b, key);
        rtn_json_str(b, s);
}

void rtn_json_kv_int(struct rtn_json_buf *b, const char *key, int64_t v) {
        rtn_json_key(b, key);
        rtn_json_int(b, v);
}

void rtn_json_kv_bool(struct rtn_json_buf *b, const char *key, bool v) {
        rtn_json_key(b, key);
        rtn_json_bool(b, v);
}

void rtn_json_kv_raw(struct rtn_json_buf *b, const char *key, const char *json, size_t n) {
        rtn_json_key(b, key);
        rtn_json_raw(b, json, n);
}
