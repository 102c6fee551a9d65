/* Terminal-safe text (see term.h for the rule). */
#include "common/term.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/json.h"

/* Code points that are valid UTF-8 but steer a terminal rather than show a glyph. */
static bool control_cp(uint32_t cp) {
        return (cp >= 0x80 && cp <= 0x9f) || cp == 0x61c || cp == 0x200e || cp == 0x200f ||
               (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

/* The C escape letter of byte c, or 0. */
static char c_escape(unsigned char c, unsigned flags) {
        static const char from[] = "\a\b\t\n\v\f\r\\", to[] = "abtnvfr\\";
        const char *p = c ? memchr(from, c, sizeof from - 1) : NULL;
        if (p)
                return to[p - from];
        return c == '"' && (flags & RTN_TERM_QUOTE) ? '"' : 0;
}

struct out {
        char *buf;
        size_t cap;
        size_t len; /* of the whole text */
        size_t used; /* of what fitted in buf */
};

static void put(struct out *o, const char *s, size_t n) {
        if (o->used == o->len && o->len + n < o->cap) { /* never half an escape */
                memcpy(o->buf + o->len, s, n);
                o->used += n;
        }
        o->len += n;
}

/* Escapes s into o; returns whether anything needed an escape. */
static bool escape(struct out *o, const unsigned char *s, size_t n, unsigned flags) {
        bool any = false;
        for (size_t i = 0; i < n;) {
                uint32_t cp = 0;
                size_t k = s[i] >= 0x80 ? rtn_utf8_seq(s + i, n - i, &cp) : 1;
                char e = s[i] < 0x80 ? c_escape(s[i], flags) : 0;
                if (e) {
                        put(o, (char[]){'\\', e}, 2);
                } else if (s[i] >= 0x80 && k > 0 && !control_cp(cp)) {
                        put(o, (const char *)s + i, k);
                } else if (s[i] >= 0x20 && s[i] < 0x7f) {
                        put(o, (const char *)s + i, 1);
                } else {
                        if (k == 0)
                                k = 1; /* a byte that is not UTF-8: alone */
                        for (size_t j = 0; j < k; j++) {
                                char oct[5];
                                snprintf(oct, sizeof oct, "\\%03o", s[i + j]);
                                put(o, oct, 4);
                        }
                        any = true;
                        i += k;
                        continue;
                }
                any |= e != 0;
                i += k ? k : 1;
        }
        return any;
}

bool rtn_term_has_control(const char *s, size_t n) {
        const unsigned char *p = (const unsigned char *)s;
        for (size_t i = 0; i < n;) {
                uint32_t cp = 0;
                size_t k = p[i] >= 0x80 ? rtn_utf8_seq(p + i, n - i, &cp) : 1;
                if (p[i] < 0x20 || p[i] == 0x7f || (k > 0 && p[i] >= 0x80 && control_cp(cp)))
                        return true;
                i += k ? k : 1;
        }
        return false;
}

size_t rtn_term_escape(const char *s, size_t n, unsigned flags, char *buf, size_t cap) {
        struct out o = {.buf = buf, .cap = cap};
        if (flags & RTN_TERM_QUOTE) {
                struct out probe = {.buf = NULL, .cap = 0};
                if (escape(&probe, (const unsigned char *)s, n, flags)) {
                        put(&o, "\"", 1);
                        escape(&o, (const unsigned char *)s, n, flags);
                        put(&o, "\"", 1);
                } else {
                        put(&o, s, n);
                }
        } else {
                escape(&o, (const unsigned char *)s, n, flags);
        }
        if (cap > 0)
                buf[o.used] = '\0';
        return o.len;
}

void rtn_term_fputs(FILE *f, const char *s, unsigned flags) {
        char small[512];
        size_t n = strlen(s), need = rtn_term_escape(s, n, flags, small, sizeof small);
        if (need < sizeof small) {
                fputs(small, f);
                return;
        }
        _cleanup_free_ char *big = malloc(need + 1);
        if (!big) {
                fputs(small, f); /* cut rather than raw */
                return;
        }
        rtn_term_escape(s, n, flags, big, need + 1);
        fputs(big, f);
}

void rtn_term_printf(FILE *f, const char *fmt, ...) {
        _cleanup_free_ char *text = NULL;
        va_list ap;
        va_start(ap, fmt);
        int n = vasprintf(&text, fmt, ap);
        va_end(ap);
        if (n < 0)
                return;
        bool nl = n > 0 && text[n - 1] == '\n';
        if (nl)
                text[n - 1] = '\0';
        rtn_term_fputs(f, text, 0);
        if (nl)
                fputc('\n', f);
}
