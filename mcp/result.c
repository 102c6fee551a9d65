/* Fitting a tool result into a message a client accepts. Both official TypeScript SDKs (1.x
 * and the 2.x client) close the stdio transport when a message with what is buffered behind
 * it passes 10 MiB (their ReadBuffer, STDIO_DEFAULT_MAX_BUFFER_SIZE), and the session goes
 * with it. So a result is never refused for its size: the largest top-level strings (stdout,
 * content) are cut and the longest top-level arrays (entries, matches) lose their last items
 * until it fits, and the member that says so (stdout_truncated, dirty_truncated, truncated)
 * is set. Cutting works on the JSON text itself: a string is cut between two characters,
 * never inside an escape or a UTF-8 sequence, so the result stays valid JSON of the same
 * shape, and the outputSchema still holds. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "mcp/internal.h"

#define FLAG_MAX 64 /* bytes of a flag member's name */

struct member {
        const char *key, *val; /* raw text: the key with its quotes, the value */
        size_t klen, vlen;
        int vtok;
        char kind; /* rtn_json_kind of the value */
        size_t keep; /* strings: bytes of the text kept between the quotes; arrays: items */
        size_t *ends; /* arrays: end offset of each item in the text, once needed */
        const char *first; /* arrays: the first item's text */
        size_t size; /* bytes of the value as it will be written */
        bool cut, flag; /* cut; a flag member set to true */
};

/* The end of the longest prefix of a string token's text (between its quotes) of at most max
 * bytes that ends between two characters. */
static size_t str_cut_at(const char *s, size_t len, size_t max) {
        size_t i = 0, last = 0;
        while (i < len && i <= max) {
                last = i;
                size_t step = 1;
                if (s[i] == '\\')
                        step = s[i + 1] == 'u' ? 6 : 2;
                else if ((unsigned char)s[i] >= 0xc0)
                        step = (unsigned char)s[i] >= 0xf0   ? 4
                               : (unsigned char)s[i] >= 0xe0 ? 3
                                                             : 2;
                i += step;
        }
        return i <= max ? i : last;
}

/* The end offsets (in the text) of array m's items, so that cutting it to n items is a
 * lookup: ends[n - 1] - first + 2 bytes. */
static int arr_ends(const struct rtn_json_doc *d, struct member *m) {
        size_t n = (size_t)d->toks[m->vtok].size;
        if (!(m->ends = calloc(n ? n : 1, sizeof *m->ends)))
                return -ENOMEM;
        for (size_t k = 0, j = (size_t)m->vtok + 1; k < n; k++) {
                const char *v;
                size_t vl;
                rtn_json_span(d, (int)j, &v, &vl);
                if (k == 0)
                        m->first = v;
                m->ends[k] = (size_t)(v + vl - d->js);
                j = (size_t)rtn_json_next(d, (int)j);
        }
        return 0;
}

static size_t arr_size(const struct rtn_json_doc *d, const struct member *m, size_t n) {
        return n == 0 ? 2 : m->ends[n - 1] - (size_t)(m->first - d->js) + 2;
}

/* Cuts member x to at most size bytes (never below its empty form). */
static int cut_to(const struct rtn_json_doc *d, struct member *x, size_t size) {
        if (x->kind == 's') {
                x->keep = str_cut_at(x->val + 1, x->keep, size > 2 ? size - 2 : 0);
                x->size = x->keep + 2;
        } else {
                if (!x->ends && arr_ends(d, x) < 0)
                        return -ENOMEM;
                size_t lo = 0, hi = x->keep; /* the most items that fit in size */
                while (lo < hi) {
                        size_t mid = (lo + hi + 1) / 2;
                        if (arr_size(d, x, mid) <= size)
                                lo = mid;
                        else
                                hi = mid - 1;
                }
                x->keep = lo;
                x->size = arr_size(d, x, lo);
        }
        x->cut = true;
        return 0;
}

static bool cuttable(const struct member *x) {
        return (x->kind == 's' || x->kind == 'a') && x->keep > 0;
}

/* One round of cutting by need bytes, shared fairly: the members above a common level are
 * cut down to it (stdout and stderr of 6 MiB each both keep 3, rather than one keeping all),
 * the level chosen so that what they lose is need. Returns 0 when something was cut, -E2BIG
 * when nothing is left to cut. */
static int cut_round(const struct rtn_json_doc *d, struct member *m, size_t n, size_t *need) {
        size_t lo = 0, hi = 0; /* the highest level at which the members above it lose need */
        for (size_t i = 0; i < n; i++)
                if (cuttable(&m[i]) && m[i].size > hi)
                        hi = m[i].size;
        while (lo < hi) {
                size_t mid = lo + (hi - lo + 1) / 2, lose = 0;
                for (size_t i = 0; i < n; i++)
                        if (cuttable(&m[i]) && m[i].size > mid)
                                lose += m[i].size - mid;
                if (lose >= *need)
                        lo = mid;
                else
                        hi = mid - 1;
        }
        size_t level = lo;
        size_t got = 0;
        bool any = false;
        for (size_t i = 0; i < n; i++) {
                if (!cuttable(&m[i]) || m[i].size <= level)
                        continue;
                size_t before = m[i].size;
                if (cut_to(d, &m[i], level) < 0)
                        return -ENOMEM;
                got += before - m[i].size;
                any = true;
        }
        if (!any)
                return -E2BIG;
        if (got == 0) { /* boundaries kept everything: take one more step off the largest */
                struct member *big = NULL;
                for (size_t i = 0; i < n; i++)
                        if (cuttable(&m[i]) && (!big || m[i].size > big->size))
                                big = &m[i];
                if (!big)
                        return -E2BIG;
                size_t before = big->size;
                if (cut_to(d, big, before > 8 ? before - 8 : 0) < 0)
                        return -ENOMEM;
                got = before - big->size;
        }
        *need = got >= *need ? 0 : *need - got;
        return 0;
}

static struct member *find(struct member *m, size_t n, const char *name) {
        size_t len = strlen(name);
        for (size_t i = 0; i < n; i++)
                if (m[i].klen == len + 2 && !memcmp(m[i].key + 1, name, len))
                        return &m[i];
        return NULL;
}

/* The member that says cut's value was cut: NAME_truncated, else PREFIX_truncated for a
 * NAME of PREFIX_REST (dirty_files: dirty_truncated), else truncated. Returns the one that
 * exists, or writes the name to add into ret_add. */
static struct member *flag_of(struct member *m, size_t n, const struct member *cut,
                              char ret_add[FLAG_MAX]) {
        char name[FLAG_MAX];
        int kl = (int)cut->klen - 2;
        const char *us = memchr(cut->key + 1, '_', (size_t)kl);
        struct member *f;
        snprintf(name, sizeof name, "%.*s_truncated", kl, cut->key + 1);
        if ((f = find(m, n, name)))
                return f;
        if (us) {
                snprintf(name, sizeof name, "%.*s_truncated", (int)(us - cut->key - 1),
                         cut->key + 1);
                if ((f = find(m, n, name)))
                        return f;
        }
        if ((f = find(m, n, "truncated")))
                return f;
        snprintf(ret_add, FLAG_MAX, "truncated");
        return NULL;
}

static void write_member(struct rtn_json_buf *b, const struct rtn_json_doc *d,
                         const struct member *m) {
        rtn_json_append(b, m->key, m->klen);
        rtn_json_append(b, ":", 1);
        if (m->flag)
                rtn_json_append(b, "true", 4);
        else if (!m->cut)
                rtn_json_append(b, m->val, m->vlen);
        else if (m->kind == 's') {
                rtn_json_append(b, m->val, m->keep + 1);
                rtn_json_append(b, "\"", 1);
        } else if (m->keep == 0) {
                rtn_json_append(b, "[]", 2);
        } else {
                rtn_json_append(b, "[", 1);
                rtn_json_append(b, m->first, m->size - 2);
                rtn_json_append(b, "]", 1);
        }
}

static void free_members(struct member *m, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(m[i].ends);
        free(m);
}

static int collect(const struct rtn_json_doc *d, struct member **ret, size_t *ret_n) {
        size_t n = (size_t)d->toks[0].size;
        struct member *m = calloc(n ? n : 1, sizeof *m);
        if (!m)
                return -ENOMEM;
        for (size_t k = 0, i = 1; k < n; k++) {
                struct member *x = &m[k];
                rtn_json_span(d, (int)i, &x->key, &x->klen);
                x->vtok = (int)i + 1;
                rtn_json_span(d, x->vtok, &x->val, &x->vlen);
                x->kind = rtn_json_kind(d, x->vtok);
                x->keep = x->kind == 's' ? x->vlen - 2 : (size_t)d->toks[x->vtok].size;
                if (x->kind != 's' && x->kind != 'a')
                        x->keep = 0;
                x->size = x->vlen;
                i = (size_t)rtn_json_next(d, x->vtok);
        }
        *ret = m;
        *ret_n = n;
        return 0;
}

int mcp_result_cut(const struct rtn_json_doc *d, size_t max, const char *note, char **ret,
                   size_t *ret_len) {
        if (rtn_json_kind(d, 0) != 'o')
                return -EINVAL;
        struct member *m;
        size_t n;
        int r = collect(d, &m, &n);
        if (r < 0)
                return r;
        /* Room for what this adds (an existing flag's false becomes true, shorter; at most one
         * ,"truncated":true is added, and the note), then cut until the rest fits. */
        size_t extra = 18 + (note ? 2 * strlen(note) + 16 : 0);
        size_t len = d->len, need = len + extra > max ? len + extra - max : 0;
        while (need > 0 && (r = cut_round(d, m, n, &need)) == 0)
                ;
        if (r < 0) {
                free_members(m, n);
                return r;
        }
        char add[1][FLAG_MAX]; /* flag_of adds only "truncated" */
        size_t nadd = 0;
        for (size_t i = 0; i < n; i++) {
                if (!m[i].cut)
                        continue;
                char name[FLAG_MAX];
                struct member *f = flag_of(m, n, &m[i], name);
                if (f) {
                        f->flag = true;
                        continue;
                }
                bool dup = false;
                for (size_t k = 0; k < nadd; k++)
                        dup |= !strcmp(add[k], name);
                if (!dup && nadd < ARRAY_SIZE(add))
                        snprintf(add[nadd++], FLAG_MAX, "%s", name);
        }
        struct rtn_json_buf b = RTN_JSON_BUF_INIT(0);
        rtn_json_append(&b, "{", 1);
        for (size_t i = 0; i < n; i++) {
                if (i)
                        rtn_json_append(&b, ",", 1);
                write_member(&b, d, &m[i]);
        }
        free_members(m, n);
        b.comma = n > 0;
        for (size_t k = 0; k < nadd; k++)
                rtn_json_kv_bool(&b, add[k], true);
        if (note)
                rtn_json_kv_str(&b, "text_copy", note);
        rtn_json_append(&b, "}", 1);
        if (b.err) {
                r = b.err;
                rtn_json_buf_free(&b);
                return r;
        }
        *ret_len = b.len;
        *ret = rtn_json_buf_steal(&b);
        return 0;
}
