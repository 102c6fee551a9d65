/* Tool arguments: validation of a tools/call's arguments object against the tool's
 * mcp_arg_spec rows (type, required, ranges, sizes, enums, no unknown names), with a message
 * precise enough for a model to fix its call, and the typed getters backends use afterwards.
 * The arguments are copied out of the request line and re-tokenized, so they outlive the
 * input buffer for as long as the call runs. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "mcp/internal.h"

#define MAP_KEY_MAX 256
#define MAP_VALUE_MAX (32 * 1024)
#define STRV_ITEM_MAX 4096

static const struct mcp_arg_spec *spec_find(const struct mcp_tool *t, const struct rtn_json_doc *d,
                                            int key) {
        for (size_t i = 0; i < t->nargs; i++)
                if (rtn_json_str_eq(d, key, t->args[i].name))
                        return &t->args[i];
        return NULL;
}

/* "a number", "an array" ...: what the agent sent instead, for messages that say both what
 * was expected and what came. */
static const char *kind_name(const struct rtn_json_doc *d, int v) {
        switch (rtn_json_kind(d, v)) {
        case 's':
                return "a string";
        case 'd':
                return "a number";
        case 'b':
                return "a boolean";
        case 'a':
                return "an array";
        case 'o':
                return "an object";
        case 'n':
                return "null";
        }
        return "something else";
}

/* A string token: decodable, no NUL, byte length in [min, max]. -EINVAL another type,
 * -EILSEQ a NUL, -E2BIG too long, -ERANGE too short (*ret_len is set then too). */
static int check_string(const struct rtn_json_doc *d, int v, int64_t min, int64_t max,
                        size_t *ret_len) {
        if (rtn_json_kind(d, v) != 's')
                return -EINVAL;
        _cleanup_free_ char *s = NULL;
        int r = rtn_json_get_cstr(d, v, (size_t)max, &s);
        if (r == -EINVAL)
                return -EILSEQ; /* a string, so the refusal was its NUL */
        if (r < 0)
                return r;
        *ret_len = (size_t)r;
        return r < min ? -ERANGE : 0;
}

/* "must be one of "ro" "rw"" into why at n; returns the new length. */
static int enum_list(const struct mcp_arg_spec *a, char *why, size_t wl, int n) {
        n += snprintf(why + n, wl - (size_t)n, " must be one of");
        for (const char *const *e = a->enumv; *e && n > 0 && (size_t)n < wl; e++)
                n += snprintf(why + n, wl - (size_t)n, " \"%s\"", *e);
        return n;
}

static int check_enum(const struct mcp_arg_spec *a, const struct rtn_json_doc *d, int v) {
        for (const char *const *e = a->enumv; *e; e++)
                if (rtn_json_str_eq(d, v, *e))
                        return 0;
        return -EINVAL;
}

/* An enum is checked before the length: a value that is not in the list is the problem to
 * name, whatever its length ("hex" for encoding is not "too short"). */
static int check_string_arg(const struct mcp_arg_spec *a, const struct rtn_json_doc *d, int v,
                            char *why, size_t wl) {
        size_t len = 0;
        if (rtn_json_kind(d, v) != 's') {
                int n = snprintf(why, wl, "%s:", a->name);
                if (a->enumv)
                        n = enum_list(a, why, wl, n);
                else
                        n += snprintf(why + n, wl - (size_t)n, " must be a string");
                if (n > 0 && (size_t)n < wl)
                        snprintf(why + n, wl - (size_t)n, ", got %s", kind_name(d, v));
                return -EINVAL;
        }
        if (a->enumv) {
                if (check_enum(a, d, v) == 0)
                        return 0;
                int n = enum_list(a, why, wl, snprintf(why, wl, "%s:", a->name));
                char got[40];
                int g = rtn_json_unescape(d, v, got, sizeof got);
                if (n > 0 && (size_t)n < wl && g >= 0 && strlen(got) == (size_t)g)
                        snprintf(why + n, wl - (size_t)n, ", got \"%s\"", got);
                return -EINVAL;
        }
        int r = check_string(d, v, a->min, a->max, &len);
        if (r == -E2BIG)
                snprintf(why, wl,
                         "%s: must be %" PRId64 "..%" PRId64 " bytes long, got more than %" PRId64,
                         a->name, a->min, a->max, a->max);
        else if (r == -ERANGE)
                snprintf(why, wl, "%s: must be %" PRId64 "..%" PRId64 " bytes long, got %zu",
                         a->name, a->min, a->max, len);
        else if (r == -EILSEQ)
                snprintf(why, wl, "%s: must be a string without NUL characters", a->name);
        else if (r < 0)
                snprintf(why, wl, "%s: cannot be decoded (%s)", a->name, strerror(-r));
        return r;
}

static int check_items(const struct mcp_arg_spec *a, const struct rtn_json_doc *d, int v, char *why,
                       size_t wl) {
        bool map = a->type == MCP_ARG_MAP;
        if (rtn_json_kind(d, v) != (map ? 'o' : 'a')) {
                snprintf(why, wl, "%s: must be %s, got %s", a->name,
                         map ? "an object of strings" : "an array of strings", kind_name(d, v));
                return -EINVAL;
        }
        int n = d->toks[v].size;
        if (n < a->min || n > a->max) {
                snprintf(why, wl, "%s: must have %" PRId64 "..%" PRId64 " %s, got %d", a->name,
                         a->min, a->max, map ? "entries" : "items", n);
                return -EINVAL;
        }
        int j = v + 1;
        for (int k = 0; k < n; k++) {
                size_t len;
                if (map) {
                        _cleanup_free_ char *key = NULL;
                        if (rtn_json_get_cstr(d, j, MAP_KEY_MAX, &key) <= 0 || strchr(key, '=')) {
                                snprintf(why, wl,
                                         "%s: names must be 1..%d bytes without '=' or NUL",
                                         a->name, MAP_KEY_MAX);
                                return -EINVAL;
                        }
                        j++;
                }
                int r = check_string(d, j, 0, map ? MAP_VALUE_MAX : STRV_ITEM_MAX, &len);
                if (r < 0) {
                        const char *what = map ? "values" : "items";
                        if (r == -EINVAL)
                                snprintf(why, wl, "%s: %s must be strings, got %s (%s %d)", a->name,
                                         what, kind_name(d, j), map ? "entry" : "item", k + 1);
                        else
                                snprintf(why, wl,
                                         "%s: %s must be strings of at most %d bytes without NUL "
                                         "(%s %d)",
                                         a->name, what, map ? MAP_VALUE_MAX : STRV_ITEM_MAX,
                                         map ? "entry" : "item", k + 1);
                        return -EINVAL;
                }
                j = rtn_json_next(d, j);
        }
        return 0;
}

/* The number as sent, for "got 0" (at most 24 bytes of it). */
static void number_text(const struct rtn_json_doc *d, int v, char *buf, size_t cap) {
        const char *raw;
        size_t n;
        rtn_json_span(d, v, &raw, &n);
        snprintf(buf, cap, "%.*s%s", (int)(n > 24 ? 24 : n), raw, n > 24 ? "..." : "");
}

static int check_arg(const struct mcp_arg_spec *a, const struct rtn_json_doc *d, int v, char *why,
                     size_t wl) {
        int64_t i;
        bool b;
        char got[32];
        switch (a->type) {
        case MCP_ARG_STRING:
                return check_string_arg(a, d, v, why, wl);
        case MCP_ARG_INT:
                if (rtn_json_get_int(d, v, a->min, a->max, &i) < 0) {
                        if (rtn_json_kind(d, v) == 'd')
                                number_text(d, v, got, sizeof got);
                        snprintf(why, wl,
                                 "%s: must be an integer in %" PRId64 "..%" PRId64 ", got %s",
                                 a->name, a->min, a->max,
                                 rtn_json_kind(d, v) == 'd' ? got : kind_name(d, v));
                        return -EINVAL;
                }
                return 0;
        case MCP_ARG_BOOL:
                if (rtn_json_get_bool(d, v, &b) < 0) {
                        snprintf(why, wl, "%s: must be true or false, got %s", a->name,
                                 kind_name(d, v));
                        return -EINVAL;
                }
                return 0;
        case MCP_ARG_STRV:
        case MCP_ARG_MAP:
                return check_items(a, d, v, why, wl);
        }
        return -EINVAL;
}

int mcp_args_validate(const struct mcp_tool *t, const struct rtn_json_doc *d, int args, char *why,
                      size_t whylen) {
        if (args >= 0 && rtn_json_kind(d, args) != 'o') {
                snprintf(why, whylen, "arguments must be an object");
                return -EINVAL;
        }
        if (args >= 0) {
                int j = args + 1;
                for (int k = 0; k < d->toks[args].size; k++) {
                        const struct mcp_arg_spec *a = spec_find(t, d, j);
                        if (!a) {
                                char name[64];
                                if (rtn_json_unescape(d, j, name, sizeof name) < 0)
                                        snprintf(name, sizeof name, "(a long name)");
                                snprintf(why, whylen, "unknown argument \"%s\" for tool %s", name,
                                         t->name);
                                return -EINVAL;
                        }
                        int r = check_arg(a, d, j + 1, why, whylen);
                        if (r < 0)
                                return -EINVAL;
                        j = rtn_json_next(d, j + 1);
                }
        }
        for (size_t i = 0; i < t->nargs; i++)
                if (t->args[i].required &&
                    (args < 0 || rtn_json_obj_get(d, args, t->args[i].name) < 0)) {
                        snprintf(why, whylen, "missing required argument \"%s\"", t->args[i].name);
                        return -EINVAL;
                }
        return 0;
}

int mcp_args_new(const struct rtn_json_doc *d, int args, struct mcp_args **ret) {
        _cleanup_free_ struct mcp_args *a = calloc(1, sizeof *a);
        if (!a)
                return -ENOMEM;
        const char *raw = "{}";
        size_t n = 2;
        if (args >= 0)
                rtn_json_span(d, args, &raw, &n);
        a->json = strndup(raw, n);
        if (!a->json)
                return -ENOMEM;
        /* Already validated as part of the request: the limits only need to admit it. */
        int r = rtn_json_parse(a->json, n, (unsigned)d->ntoks + 1, 1024, &a->doc, NULL);
        if (r < 0) {
                free(a->json);
                return r;
        }
        *ret = TAKE_PTR(a);
        return 0;
}

void mcp_args_free(struct mcp_args *a) {
        if (!a)
                return;
        rtn_json_doc_free(&a->doc);
        free(a->json);
        free(a);
}

static int arg_tok(const struct mcp_args *a, const char *key) {
        return rtn_json_obj_get(&a->doc, 0, key);
}

int mcp_args_str(const struct mcp_args *a, const char *key, char **ret) {
        int t = arg_tok(a, key);
        if (t < 0)
                return t;
        int r = rtn_json_get_cstr(&a->doc, t, a->doc.len, ret);
        return r < 0 ? -EINVAL : 0;
}

int mcp_args_int(const struct mcp_args *a, const char *key, int64_t *ret) {
        int t = arg_tok(a, key);
        if (t < 0)
                return t;
        return rtn_json_get_int(&a->doc, t, INT64_MIN, INT64_MAX, ret) < 0 ? -EINVAL : 0;
}

int mcp_args_bool(const struct mcp_args *a, const char *key, bool *ret) {
        int t = arg_tok(a, key);
        if (t < 0)
                return t;
        return rtn_json_get_bool(&a->doc, t, ret);
}

void mcp_strv_free(char **v) {
        if (!v)
                return;
        for (char **p = v; *p; p++)
                free(*p);
        free(v);
}

static void strv_freep(char ***v) {
        mcp_strv_free(*v);
}

int mcp_args_strv(const struct mcp_args *a, const char *key, char ***ret, size_t *ret_n) {
        const struct rtn_json_doc *d = &a->doc;
        int t = arg_tok(a, key);
        if (t < 0)
                return t;
        if (rtn_json_kind(d, t) != 'a')
                return -EINVAL;
        size_t n = (size_t)d->toks[t].size;
        __attribute__((cleanup(strv_freep))) char **v = calloc(n + 1, sizeof *v);
        if (!v)
                return -ENOMEM;
        int j = t + 1;
        for (size_t k = 0; k < n; k++, j = rtn_json_next(d, j))
                if (rtn_json_get_cstr(d, j, d->len, &v[k]) < 0)
                        return -EINVAL;
        *ret = TAKE_PTR(v);
        if (ret_n)
                *ret_n = n;
        return 0;
}

int mcp_args_map(const struct mcp_args *a, const char *key, const char *sep, char ***ret) {
        const struct rtn_json_doc *d = &a->doc;
        int t = arg_tok(a, key);
        if (t < 0)
                return t;
        if (rtn_json_kind(d, t) != 'o')
                return -EINVAL;
        size_t n = (size_t)d->toks[t].size;
        __attribute__((cleanup(strv_freep))) char **v = calloc(n + 1, sizeof *v);
        if (!v)
                return -ENOMEM;
        int j = t + 1;
        for (size_t k = 0; k < n; k++) {
                _cleanup_free_ char *name = NULL, *val = NULL;
                if (rtn_json_get_cstr(d, j, d->len, &name) < 0 ||
                    rtn_json_get_cstr(d, j + 1, d->len, &val) < 0)
                        return -EINVAL;
                if (asprintf(&v[k], "%s%s%s", name, sep, val) < 0) {
                        v[k] = NULL;
                        return -ENOMEM;
                }
                j = rtn_json_next(d, j + 1);
        }
        *ret = TAKE_PTR(v);
        return 0;
}

const char *mcp_args_json(const struct mcp_args *a, size_t *ret_len) {
        if (ret_len)
                *ret_len = a->doc.len;
        return a->json;
}
