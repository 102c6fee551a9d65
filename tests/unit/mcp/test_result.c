/* mcp_result_cut: a result cut to a size keeps its shape (valid JSON, the same members), is
 * cut only between characters, and says what was cut. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp/internal.h"

static struct rtn_json_doc out;
static char *out_js; /* what out points into */
/* str's answer, on the heap until the next cut: a static megabyte is read page by page by
 * LeakSanitizer at the exit of every test's process of this binary. */
#define STR_SIZE (1u << 20)
static char *str_buf;

static void out_free(void) {
        rtn_json_doc_free(&out);
        free(out_js);
        out_js = NULL;
        free(str_buf);
        str_buf = NULL;
}

/* Cuts json to max, checks the result is valid JSON of at most max bytes, and parses it into
 * out for the assertions (freed by the next cut or at the test's end). */
static void cut(const char *json, size_t max, const char *note) {
        struct rtn_json_doc d;
        out_free();
        cr_assert_eq(rtn_json_parse(json, strlen(json), 1u << 20, 64, &d, NULL), 0);
        char *res = NULL;
        size_t len = 0;
        cr_assert_eq(mcp_result_cut(&d, max, note, &res, &len), 0);
        rtn_json_doc_free(&d);
        out_js = res;
        cr_assert_eq(len, strlen(res));
        cr_assert_leq(len, max, "%zu > %zu", len, max);
        const char *why = NULL;
        cr_assert_eq(rtn_json_parse(res, len, 1u << 20, 64, &out, &why), 0, "%s: %s", why, res);
}

static const char *str(const char *key) {
        if (!str_buf)
                cr_assert_not_null(str_buf = malloc(STR_SIZE));
        int t = rtn_json_obj_get(&out, 0, key);
        cr_assert_geq(t, 0, "%s missing", key);
        cr_assert_geq(rtn_json_unescape(&out, t, str_buf, STR_SIZE), 0);
        return str_buf;
}

static bool flag(const char *key) {
        bool v = false;
        int t = rtn_json_obj_get(&out, 0, key);
        return t >= 0 && rtn_json_get_bool(&out, t, &v) == 0 && v;
}

static char *repeat(const char *unit, size_t n) {
        size_t u = strlen(unit);
        char *s = malloc(u * n + 1);
        for (size_t i = 0; i < n; i++)
                memcpy(s + i * u, unit, u);
        s[u * n] = '\0';
        return s;
}

Test(mcp_result_cut, largest_string_first_and_its_flag) {
        char *a = repeat("a", 20000), *b = repeat("b", 3000), json[30000];
        snprintf(json, sizeof json,
                 "{\"stdout\":\"%s\",\"stderr\":\"%s\",\"stdout_truncated\":false,"
                 "\"stderr_truncated\":false,\"exit_code\":0}",
                 a, b);
        cut(json, 10000, NULL);
        cr_assert(flag("stdout_truncated"));
        cr_assert_not(flag("stderr_truncated"), "stderr was small enough to keep");
        cr_assert_str_eq(str("stderr"), b);
        cr_assert(strlen(str("stdout")) > 5000);
        cr_assert_eq(strspn(str("stdout"), "a"), strlen(str("stdout")));
        free(a);
        free(b);
}

/* Escapes and multi-byte characters are never split: every prefix the cut can choose is
 * tried. */
Test(mcp_result_cut, never_inside_an_escape_or_a_character) {
        char *s = repeat("\\u0001é\\\"€😀x\\\\", 200), json[8000];
        snprintf(json, sizeof json, "{\"content\":\"%s\",\"truncated\":false}", s);
        for (size_t max = 60; max < strlen(json); max += 7) {
                cut(json, max, NULL);
                cr_assert(flag("truncated"));
                rtn_json_doc_free(&out);
        }
        free(s);
}

Test(mcp_result_cut, arrays_lose_their_last_items) {
        char json[40000];
        size_t n = (size_t)snprintf(json, sizeof json, "{\"entries\":[");
        for (int i = 0; i < 1000; i++)
                n += (size_t)snprintf(json + n, sizeof json - n, "%s{\"path\":\"/w/%04d\"}",
                                      i ? "," : "", i);
        snprintf(json + n, sizeof json - n, "],\"truncated\":false}");
        cut(json, 5000, NULL);
        cr_assert(flag("truncated"));
        int e = rtn_json_obj_get(&out, 0, "entries");
        int kept = out.toks[e].size;
        cr_assert(kept > 100 && kept < 1000, "kept %d", kept);
        int last = e + 1;
        for (int i = 1; i < kept; i++)
                last = rtn_json_next(&out, last);
        char want[32], got[64];
        snprintf(want, sizeof want, "/w/%04d", kept - 1);
        cr_assert_geq(
                rtn_json_unescape(&out, rtn_json_obj_get(&out, last, "path"), got, sizeof got), 0);
        cr_assert_str_eq(got, want, "the first items are kept, in order");
}

/* dirty_files says so in dirty_truncated; a result without any flag gets "truncated". */
Test(mcp_result_cut, flag_names) {
        char *p = repeat("\"/workspace/some/long/path\",", 400), json[20000];
        p[strlen(p) - 1] = '\0';
        snprintf(json, sizeof json,
                 "{\"dirty_files\":[%s],\"dirty_truncated\":false,\"running_jobs\":0}", p);
        cut(json, 2000, NULL);
        cr_assert(flag("dirty_truncated"));
        cr_assert_lt(rtn_json_obj_get(&out, 0, "truncated"), 0);
        rtn_json_doc_free(&out);
        snprintf(json, sizeof json, "{\"env\":\"default\",\"commits\":[%s]}", p);
        cut(json, 2000, "the note");
        cr_assert(flag("truncated"));
        cr_assert_str_eq(str("text_copy"), "the note");
        cr_assert_str_eq(str("env"), "default");
        free(p);
}

Test(mcp_result_cut, too_small_is_an_error) {
        struct rtn_json_doc d;
        const char *json = "{\"a\":1,\"b\":2,\"c\":3}";
        cr_assert_eq(rtn_json_parse(json, strlen(json), 100, 8, &d, NULL), 0);
        char *res = NULL;
        size_t len;
        cr_assert_eq(mcp_result_cut(&d, 10, NULL, &res, &len), -E2BIG);
        rtn_json_doc_free(&d);
}

static void fini(void) {
        out_free();
}
TestSuite(mcp_result_cut, .fini = fini);
