/* The strict JSON reader behind rtn_json_parse() and the token accessors (see json.h).
 * Validation is a single pass over the bytes with an explicit container stack, so neither
 * nesting nor size can exhaust the C stack, and it counts tokens exactly so the token array
 * is allocated once, at the size jsmn will fill. This is the one file that compiles jsmn's
 * code, as static functions (JSMN_STATIC). */
#define JSMN_PARENT_LINKS
#define JSMN_STRICT
#define JSMN_STATIC
#include <jsmn.h>

#include "common/json.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"

struct vstate {
        const unsigned char *p;
        size_t n, i;
        unsigned tokens;
        const char *why;
};

static bool is_ws(char c) {
        return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static void skip_ws(struct vstate *v) {
        while (v->i < v->n && (v->p[v->i] == ' ' || v->p[v->i] == '\t' || v->p[v->i] == '\n' ||
                               v->p[v->i] == '\r'))
                v->i++;
}

static int hexval(unsigned char c) {
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

/* A string starting at v->i (the opening quote). */
static int v_string(struct vstate *v) {
        v->i++;
        while (v->i < v->n) {
                unsigned char c = v->p[v->i];
                if (c == '"') {
                        v->i++;
                        return 0;
                }
                if (c < 0x20) {
                        v->why = "control character in string";
                        return -EBADMSG;
                }
                if (c == '\\') {
                        if (v->i + 1 >= v->n)
                                break;
                        c = v->p[v->i + 1];
                        if (c == 'u') {
                                for (size_t k = 2; k < 6; k++)
                                        if (v->i + k >= v->n || hexval(v->p[v->i + k]) < 0) {
                                                v->why = "bad \\u escape";
                                                return -EBADMSG;
                                        }
                                v->i += 6;
                        } else if (strchr("\"\\/bfnrt", c) && c) {
                                v->i += 2;
                        } else {
                                v->why = "bad escape";
                                return -EBADMSG;
                        }
                        continue;
                }
                if (c >= 0x80) {
                        size_t j = v->i, k = 1;
                        /* rtn_utf8_valid on the one sequence */
                        unsigned char lead = c;
                        k = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
                        if (j + k > v->n || !rtn_utf8_valid((const char *)v->p + j, k)) {
                                v->why = "invalid UTF-8";
                                return -EILSEQ;
                        }
                        v->i += k;
                        continue;
                }
                v->i++;
        }
        v->why = "unterminated string";
        return -EBADMSG;
}

static bool is_digit(unsigned char c) {
        return c >= '0' && c <= '9';
}

/* number = [ minus ] int [ frac ] [ exp ] (RFC 8259 section 6) */
static int v_number(struct vstate *v) {
        size_t i = v->i;
        if (i < v->n && v->p[i] == '-')
                i++;
        if (i < v->n && v->p[i] == '0')
                i++;
        else if (i < v->n && is_digit(v->p[i]))
                while (i < v->n && is_digit(v->p[i]))
                        i++;
        else
                goto bad;
        if (i < v->n && v->p[i] == '.') {
                i++;
                if (i >= v->n || !is_digit(v->p[i]))
                        goto bad;
                while (i < v->n && is_digit(v->p[i]))
                        i++;
        }
        if (i < v->n && (v->p[i] == 'e' || v->p[i] == 'E')) {
                i++;
                if (i < v->n && (v->p[i] == '+' || v->p[i] == '-'))
                        i++;
                if (i >= v->n || !is_digit(v->p[i]))
                        goto bad;
                while (i < v->n && is_digit(v->p[i]))
                        i++;
        }
        v->i = i;
        return 0;
bad:
        v->why = "bad number";
        return -EBADMSG;
}

static int v_scalar(struct vstate *v) {
        static const char *const lits[] = {"true", "false", "null"};
        unsigned char c = v->p[v->i];
        if (c == '"')
                return v_string(v);
        if (c == '-' || is_digit(c))
                return v_number(v);
        for (size_t k = 0; k < ARRAY_SIZE(lits); k++) {
                size_t l = strlen(lits[k]);
                if (v->n - v->i >= l && !memcmp(v->p + v->i, lits[k], l)) {
                        v->i += l;
                        return 0;
                }
        }
        v->why = "unexpected character";
        return -EBADMSG;
}

/* One pass over the whole text. stack[d] is '{' or '['; `want` is what may come next. */
static int validate(struct vstate *v, unsigned max_tokens, unsigned max_depth) {
        _cleanup_free_ char *stack = malloc(max_depth + 1);
        if (!stack)
                return -ENOMEM;
        unsigned depth = 0;
        enum { VALUE, KEY_OR_END, VALUE_OR_END, COMMA_OR_END } want = VALUE;
        for (;;) {
                skip_ws(v);
                if (v->i >= v->n) {
                        v->why = "unexpected end of input";
                        return -EBADMSG;
                }
                unsigned char c = v->p[v->i];
                if ((want == KEY_OR_END && c == '}') || (want == VALUE_OR_END && c == ']') ||
                    (want == COMMA_OR_END && c == (stack[depth - 1] == '{' ? '}' : ']'))) {
                        v->i++;
                        depth--;
                } else if (want == COMMA_OR_END) {
                        if (c != ',') {
                                v->why = "expected ',' or end of container";
                                return -EBADMSG;
                        }
                        v->i++;
                        want = stack[depth - 1] == '{' ? KEY_OR_END : VALUE;
                        if (want == KEY_OR_END) { /* after ',' a key is required */
                                skip_ws(v);
                                if (v->i >= v->n || v->p[v->i] != '"') {
                                        v->why = "expected member name";
                                        return -EBADMSG;
                                }
                        }
                        continue;
                } else if (want == KEY_OR_END) {
                        if (c != '"') {
                                v->why = "expected member name";
                                return -EBADMSG;
                        }
                        int r = v_string(v);
                        if (r < 0)
                                return r;
                        if (++v->tokens > max_tokens)
                                return -E2BIG;
                        skip_ws(v);
                        if (v->i >= v->n || v->p[v->i] != ':') {
                                v->why = "expected ':'";
                                return -EBADMSG;
                        }
                        v->i++;
                        want = VALUE;
                        continue;
                } else if (c == '{' || c == '[') {
                        if (depth >= max_depth)
                                return -ELOOP;
                        if (++v->tokens > max_tokens)
                                return -E2BIG;
                        stack[depth++] = (char)c;
                        v->i++;
                        want = c == '{' ? KEY_OR_END : VALUE_OR_END;
                        continue;
                } else {
                        int r = v_scalar(v);
                        if (r < 0)
                                return r;
                        if (++v->tokens > max_tokens)
                                return -E2BIG;
                }
                /* a value (scalar or closed container) is complete */
                if (depth == 0)
                        break;
                want = COMMA_OR_END;
        }
        skip_ws(v);
        if (v->i != v->n) {
                v->why = "trailing data after value";
                return -EBADMSG;
        }
        return 0;
}

/* jsmn in strict mode wants a delimiter after every primitive, so it refuses a bare
 * top-level scalar ("42"); the validator has vouched for the text, so that one token is
 * filled here. */
static int tokenize(const char *js, size_t len, jsmntok_t *toks, unsigned ntoks) {
        size_t i = 0;
        while (i < len && is_ws(js[i]))
                i++;
        if (i < len && js[i] != '{' && js[i] != '[') {
                size_t e = len;
                while (e > i && is_ws(js[e - 1]))
                        e--;
                bool str = js[i] == '"';
                toks[0] = (jsmntok_t){.type = str ? JSMN_STRING : JSMN_PRIMITIVE,
                                      .start = (int)(i + str),
                                      .end = (int)(e - str),
                                      .size = 0,
                                      .parent = -1};
                return 1;
        }
        jsmn_parser p;
        jsmn_init(&p);
        return jsmn_parse(&p, js, len, toks, ntoks);
}

int rtn_json_parse(const char *js, size_t len, unsigned max_tokens, unsigned max_depth,
                   struct rtn_json_doc *ret, const char **ret_why) {
        if (len > INT_MAX)
                return -E2BIG; /* jsmn token offsets are int */
        struct vstate v = {.p = (const unsigned char *)js, .n = len};
        int r = validate(&v, max_tokens, max_depth ? max_depth : 1);
        if (ret_why)
                *ret_why = v.why;
        if (r < 0)
                return r;
        _cleanup_free_ jsmntok_t *toks = calloc(v.tokens, sizeof *toks);
        if (!toks)
                return -ENOMEM;
        r = tokenize(js, len, toks, v.tokens);
        if (r != (int)v.tokens) { /* cannot happen after validation; fail closed */
                if (ret_why)
                        *ret_why = "tokenizer disagrees with validator";
                return -EBADMSG;
        }
        *ret = (struct rtn_json_doc){.js = js, .len = len, .toks = TAKE_PTR(toks), .ntoks = r};
        return 0;
}

void rtn_json_doc_free(struct rtn_json_doc *d) {
        free(d->toks);
        d->toks = NULL;
        d->ntoks = 0;
}

int rtn_json_next(const struct rtn_json_doc *d, int i) {
        /* With parent links a subtree is contiguous: skip while tokens end inside ours. */
        int end = d->toks[i].end;
        int j = i + 1;
        while (j < d->ntoks && d->toks[j].start < end)
                j++;
        return j;
}

int rtn_json_obj_get(const struct rtn_json_doc *d, int obj, const char *key) {
        if (obj < 0 || obj >= d->ntoks || d->toks[obj].type != JSMN_OBJECT)
                return -EINVAL;
        int found = -ENOENT;
        int j = obj + 1;
        for (int k = 0; k < d->toks[obj].size; k++) {
                if (rtn_json_str_eq(d, j, key))
                        found = j + 1;
                j = rtn_json_next(d, j + 1);
        }
        return found;
}

void rtn_json_span(const struct rtn_json_doc *d, int i, const char **ret, size_t *ret_len) {
        const jsmntok_t *t = &d->toks[i];
        int q = t->type == JSMN_STRING;
        *ret = d->js + t->start - q;
        *ret_len = (size_t)(t->end - t->start + 2 * q);
}

/* Encodes a code point (<= U+10FFFF, no surrogates) as UTF-8. */
static size_t utf8_put(char *out, uint32_t cp) {
        if (cp < 0x80) {
                out[0] = (char)cp;
                return 1;
        }
        if (cp < 0x800) {
                out[0] = (char)(0xc0 | (cp >> 6));
                out[1] = (char)(0x80 | (cp & 0x3f));
                return 2;
        }
        if (cp < 0x10000) {
                out[0] = (char)(0xe0 | (cp >> 12));
                out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
                out[2] = (char)(0x80 | (cp & 0x3f));
                return 3;
        }
        out[0] = (char)(0xf0 | (cp >> 18));
        out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
        out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[3] = (char)(0x80 | (cp & 0x3f));
        return 4;
}

/* The code unit of "\uXXXX" at s (validated already). */
static uint32_t u4(const char *s) {
        uint32_t v = 0;
        for (int k = 0; k < 4; k++)
                v = (v << 4) | (uint32_t)hexval((unsigned char)s[k]);
        return v;
}

/* Decodes one escape at s[0]=='\\'; writes UTF-8 to out (>= 4 bytes); returns bytes
 * consumed. */
static size_t unescape_one(const char *s, const char *end, char *out, size_t *ret_outlen) {
        static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
        if (s[1] != 'u') {
                out[0] = to[strchr(from, s[1]) - from];
                *ret_outlen = 1;
                return 2;
        }
        uint32_t cp = u4(s + 2);
        size_t used = 6;
        if (cp >= 0xd800 && cp <= 0xdbff && end - s >= 12 && s[6] == '\\' && s[7] == 'u') {
                uint32_t lo = u4(s + 8);
                if (lo >= 0xdc00 && lo <= 0xdfff) {
                        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                        used = 12;
                }
        }
        if (cp >= 0xd800 && cp <= 0xdfff)
                cp = 0xfffd; /* lone surrogate: not representable in UTF-8 */
        *ret_outlen = utf8_put(out, cp);
        return used;
}

int rtn_json_unescape(const struct rtn_json_doc *d, int i, char *buf, size_t cap) {
        if (i < 0 || i >= d->ntoks || d->toks[i].type != JSMN_STRING || cap == 0)
                return -EINVAL;
        const char *s = d->js + d->toks[i].start, *end = d->js + d->toks[i].end;
        size_t o = 0;
        while (s < end) {
                char tmp[4];
                size_t n;
                if (*s == '\\')
                        s += unescape_one(s, end, tmp, &n);
                else {
                        tmp[0] = *s++;
                        n = 1;
                }
                if (o + n >= cap)
                        return -ENOBUFS;
                memcpy(buf + o, tmp, n);
                o += n;
        }
        buf[o] = '\0';
        return o > INT_MAX ? -ENOBUFS : (int)o;
}

bool rtn_json_str_eq(const struct rtn_json_doc *d, int i, const char *s) {
        if (i < 0 || i >= d->ntoks || d->toks[i].type != JSMN_STRING)
                return false;
        const jsmntok_t *t = &d->toks[i];
        size_t n = strlen(s), raw = (size_t)(t->end - t->start);
        if (!memchr(d->js + t->start, '\\', raw))
                return raw == n && !memcmp(d->js + t->start, s, n);
        if (raw < n) /* decoding never makes a string longer */
                return false;
        char buf[256];
        if (n >= sizeof buf)
                return false;
        int r = rtn_json_unescape(d, i, buf, sizeof buf);
        return r >= 0 && (size_t)r == n && !memcmp(buf, s, n);
}

int rtn_json_get_cstr(const struct rtn_json_doc *d, int i, size_t max_len, char **ret) {
        if (i < 0 || i >= d->ntoks || d->toks[i].type != JSMN_STRING)
                return -EINVAL;
        size_t raw = (size_t)(d->toks[i].end - d->toks[i].start);
        /* decoding never grows: "\uXXXX" (6) → <= 3 bytes, a pair (12) → 4 */
        _cleanup_free_ char *buf = malloc(raw + 1);
        if (!buf)
                return -ENOMEM;
        int r = rtn_json_unescape(d, i, buf, raw + 1);
        if (r < 0)
                return r;
        if ((size_t)r > max_len)
                return -E2BIG;
        if (strlen(buf) != (size_t)r)
                return -EINVAL; /* embedded NUL */
        *ret = TAKE_PTR(buf);
        return r;
}

char rtn_json_kind(const struct rtn_json_doc *d, int i) {
        if (i < 0 || i >= d->ntoks)
                return 0;
        const jsmntok_t *t = &d->toks[i];
        switch (t->type) {
        case JSMN_OBJECT:
                return 'o';
        case JSMN_ARRAY:
                return 'a';
        case JSMN_STRING:
                return 's';
        case JSMN_PRIMITIVE:
                switch (d->js[t->start]) {
                case 't':
                case 'f':
                        return 'b';
                case 'n':
                        return 'n';
                default:
                        return 'd';
                }
        case JSMN_UNDEFINED:
                break;
        }
        return 0;
}

bool rtn_json_is_null(const struct rtn_json_doc *d, int i) {
        return rtn_json_kind(d, i) == 'n';
}

int rtn_json_get_bool(const struct rtn_json_doc *d, int i, bool *ret) {
        if (rtn_json_kind(d, i) != 'b')
                return -EINVAL;
        *ret = d->js[d->toks[i].start] == 't';
        return 0;
}

int rtn_json_get_int(const struct rtn_json_doc *d, int i, int64_t min, int64_t max, int64_t *ret) {
        if (rtn_json_kind(d, i) != 'd')
                return -EINVAL;
        const char *s = d->js + d->toks[i].start, *e = d->js + d->toks[i].end;
        bool neg = *s == '-';
        if (neg)
                s++;
        uint64_t v = 0;
        for (; s < e; s++) {
                if (!is_digit((unsigned char)*s))
                        return -EINVAL; /* fraction or exponent */
                if (v > (UINT64_MAX - 9) / 10)
                        return -ERANGE;
                v = v * 10 + (uint64_t)(*s - '0');
        }
        int64_t r;
        if (neg) {
                if (v > (uint64_t)INT64_MAX + 1)
                        return -ERANGE;
                r = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
        } else {
                if (v > (uint64_t)INT64_MAX)
                        return -ERANGE;
                r = (int64_t)v;
        }
        if (r < min || r > max)
                return -ERANGE;
        *ret = r;
        return 0;
}

int rtn_json_get_double(const struct rtn_json_doc *d, int i, double *ret) {
        if (rtn_json_kind(d, i) != 'd')
                return -EINVAL;
        char buf[64];
        size_t n = (size_t)(d->toks[i].end - d->toks[i].start);
        if (n >= sizeof buf)
                return -ERANGE;
        memcpy(buf, d->js + d->toks[i].start, n);
        buf[n] = '\0';
        errno = 0;
        double v = strtod(buf, NULL);
        if (errno == ERANGE || !isfinite(v))
                return -ERANGE;
        *ret = v;
        return 0;
}
