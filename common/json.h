/* JSON for the MCP layer and anyone else who speaks it: a writer that appends to a growable
 * buffer with a hard cap (a sticky error once the cap is hit, so callers check once at the
 * end), and a strict reader built on jsmn. jsmn is a tokenizer, not a validator (it accepts
 * `{"a" "b"}` and `[1 2]`), so rtn_json_parse() first checks the full RFC 8259 grammar,
 * UTF-8 and a nesting limit in one linear pass, then lets jsmn fill the tokens.
 *
 * jsmn: Debian's libjsmn-dev is header-only. common/json.c is the one file that compiles its
 * code, as static functions (JSMN_STATIC), so librtn exports no jsmn_* symbols. Everyone
 * else includes this header, never <jsmn.h> directly: the token layout depends on
 * JSMN_PARENT_LINKS (parent links keep jsmn linear on large flat objects, whose ',' handling
 * otherwise scans back over every sibling) and must match across files. */
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifndef JSMN_H
#define JSMN_PARENT_LINKS
#define JSMN_STRICT
#define JSMN_HEADER
#include <jsmn.h>
#undef JSMN_HEADER
#endif

/* ---- writer ---------------------------------------------------------------------------- */

struct rtn_json_buf {
        char *data; /* NUL-terminated while err == 0 */
        size_t len;
        size_t cap;
        size_t max; /* hard cap on len; 0 = 64 MiB */
        int err; /* sticky: 0, -ENOBUFS (cap hit) or -ENOMEM */
        bool comma; /* the next value in the current container needs a ',' first */
};

#define RTN_JSON_BUF_INIT(maxlen)                                                                  \
        { .data = NULL, .len = 0, .cap = 0, .max = (maxlen), .err = 0, .comma = false }

void rtn_json_buf_free(struct rtn_json_buf *b);
/* Empties the buffer for reuse (keeps the allocation and the cap). */
void rtn_json_buf_reset(struct rtn_json_buf *b);
/* Hands the text to the caller (NULL if an error is pending); the buffer becomes empty. */
char *rtn_json_buf_steal(struct rtn_json_buf *b);

void rtn_json_obj_begin(struct rtn_json_buf *b);
void rtn_json_obj_end(struct rtn_json_buf *b);
void rtn_json_arr_begin(struct rtn_json_buf *b);
void rtn_json_arr_end(struct rtn_json_buf *b);
/* An object member name; the next value call writes its value. */
void rtn_json_key(struct rtn_json_buf *b, const char *key);
/* Strings are escaped; invalid UTF-8 (overlong forms, surrogates, > U+10FFFF, truncated
 * sequences) becomes U+FFFD, so any byte string (command output) gives valid JSON. */
void rtn_json_str(struct rtn_json_buf *b, const char *s);
void rtn_json_strn(struct rtn_json_buf *b, const char *s, size_t n);
void rtn_json_strf(struct rtn_json_buf *b, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
void rtn_json_int(struct rtn_json_buf *b, int64_t v);
void rtn_json_uint(struct rtn_json_buf *b, uint64_t v);
/* Non-finite numbers have no JSON form and are written as null. */
void rtn_json_double(struct rtn_json_buf *b, double v);
void rtn_json_bool(struct rtn_json_buf *b, bool v);
void rtn_json_null(struct rtn_json_buf *b);
/* Inserts text that is already one valid JSON value, unchanged. */
void rtn_json_raw(struct rtn_json_buf *b, const char *json, size_t n);
/* Appends bytes outside the value grammar (a newline after a message). */
void rtn_json_append(struct rtn_json_buf *b, const char *s, size_t n);

/* key + value shorthands */
void rtn_json_kv_str(struct rtn_json_buf *b, const char *key, const char *s);
void rtn_json_kv_int(struct rtn_json_buf *b, const char *key, int64_t v);
void rtn_json_kv_bool(struct rtn_json_buf *b, const char *key, bool v);
void rtn_json_kv_raw(struct rtn_json_buf *b, const char *key, const char *json, size_t n);

/* ---- reader ---------------------------------------------------------------------------- */

struct rtn_json_doc {
        const char *js; /* not owned */
        size_t len;
        jsmntok_t *toks; /* owned */
        int ntoks;
};

/* Validates js[0..len) as exactly one JSON value (surrounding whitespace allowed) with at
 * most max_tokens tokens and max_depth nesting, and tokenizes it. Returns 0 or
 * -EBADMSG (not JSON, with a reason in *ret_why when given), -E2BIG (too many tokens),
 * -ELOOP (too deep), -EILSEQ (invalid UTF-8), -ENOMEM. */
int rtn_json_parse(const char *js, size_t len, unsigned max_tokens, unsigned max_depth,
                   struct rtn_json_doc *ret, const char **ret_why);
void rtn_json_doc_free(struct rtn_json_doc *d);

/* Index of the token after the subtree rooted at i. */
int rtn_json_next(const struct rtn_json_doc *d, int i);
/* Value token of member `key` of object token obj (the last one when repeated, as
 * JavaScript's JSON.parse does); -ENOENT when absent, -EINVAL when obj is not an object. */
int rtn_json_obj_get(const struct rtn_json_doc *d, int obj, const char *key);
/* True when token i is a string equal to s (escapes decoded). */
bool rtn_json_str_eq(const struct rtn_json_doc *d, int i, const char *s);
/* The raw text of token i including a string's quotes. */
void rtn_json_span(const struct rtn_json_doc *d, int i, const char **ret, size_t *ret_len);

/* Decodes string token i into buf (cap bytes incl. the NUL), \uXXXX and surrogate pairs to
 * UTF-8, a lone surrogate to U+FFFD. Returns the length, -EINVAL (not a string), -ENOBUFS
 * (does not fit). The result may hold NUL bytes; rtn_json_get_cstr refuses them. */
int rtn_json_unescape(const struct rtn_json_doc *d, int i, char *buf, size_t cap);
/* Allocates the decoded string; -EINVAL not a string or holds a NUL, -E2BIG longer than
 * max_len bytes, -ENOMEM. */
int rtn_json_get_cstr(const struct rtn_json_doc *d, int i, size_t max_len, char **ret);
/* An integer (no fraction or exponent) in [min, max]: -EINVAL not an integer, -ERANGE out
 * of range. */
int rtn_json_get_int(const struct rtn_json_doc *d, int i, int64_t min, int64_t max, int64_t *ret);
int rtn_json_get_double(const struct rtn_json_doc *d, int i, double *ret);
int rtn_json_get_bool(const struct rtn_json_doc *d, int i, bool *ret);
bool rtn_json_is_null(const struct rtn_json_doc *d, int i);
/* The JSON type of token i: 'o'bject, 'a'rray, 's'tring, 'd' number, 'b'ool, 'n'ull. */
char rtn_json_kind(const struct rtn_json_doc *d, int i);

/* UTF-8 validity of a byte string (RFC 3629: no overlongs, no surrogates, <= U+10FFFF). */
bool rtn_utf8_valid(const char *s, size_t n);
/* Length (1-4) of the valid UTF-8 sequence at s[0..n), its code point in *ret_cp; 0 when the
 * bytes there are not one. */
size_t rtn_utf8_seq(const unsigned char *s, size_t n, uint32_t *ret_cp);
