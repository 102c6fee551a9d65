/* common/json: the writer's escaping, UTF-8 repair and cap; the reader's strictness, limits,
 * unescaping (surrogate pairs) and typed accessors. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "common/json.h"

static char *write_str(const char *s, size_t n) {
        struct rtn_json_buf b = RTN_JSON_BUF_INIT(0);
        rtn_json_strn(&b, s, n);
        cr_assert_eq(b.err, 0);
        return rtn_json_buf_steal(&b);
}

Test(rtn_json_str, escapes_and_repairs_utf8) {
        static const struct {
                const char *in;
                size_t n;
                const char *out;
        } cases[] = {
                {"a\"b\\c", 5, "\"a\\\"b\\\\c\""},
                {"\n\r\t\b\f\x01\x1f", 7, "\"\\n\\r\\t\\b\\f\\u0001\\u001f\""},
                {"nul\0x", 5, "\"nul\\u0000x\""},
                {"caf\xc3\xa9 \xf0\x9f\x98\x80", 10, "\"caf\xc3\xa9 \xf0\x9f\x98\x80\""},
                {"\xff", 1, "\"\xef\xbf\xbd\""}, /* never valid */
                {"\xc0\xaf", 2, "\"\xef\xbf\xbd\xef\xbf\xbd\""}, /* overlong '/' */
                {"\xed\xa0\x80", 3, "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\""}, /* surrogate */
                {"\xf4\x90\x80\x80", 4,
                 "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\""}, /* > U+10FFFF */
                {"ab\xe2\x82", 4, "\"ab\xef\xbf\xbd\xef\xbf\xbd\""}, /* truncated */
        };
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
                char *o = write_str(cases[i].in, cases[i].n);
                cr_assert_str_eq(o, cases[i].out, "case %zu", i);
                struct rtn_json_doc d;
                cr_assert_eq(rtn_json_parse(o, strlen(o), 8, 8, &d, NULL), 0,
                             "output of case %zu reparses", i);
                rtn_json_doc_free(&d);
                free(o);
        }
}

Test(rtn_json_obj_begin, nested_with_commas) {
        struct rtn_json_buf b = RTN_JSON_BUF_INIT(0);
        rtn_json_obj_begin(&b);
        rtn_json_kv_int(&b, "a", -5);
        rtn_json_key(&b, "b");
        rtn_json_arr_begin(&b);
        rtn_json_uint(&b, UINT64_MAX);
        rtn_json_bool(&b, true);
        rtn_json_null(&b);
        rtn_json_obj_begin(&b);
        rtn_json_obj_end(&b);
        rtn_json_double(&b, 0.5);
        rtn_json_double(&b, 1.0 / 0.0);
        rtn_json_arr_end(&b);
        rtn_json_kv_raw(&b, "c", "[1,2]", 5);
        rtn_json_key(&b, "d");
        rtn_json_strf(&b, "%d-%s", 7, "x");
        rtn_json_obj_end(&b);
        cr_assert_eq(b.err, 0);
        cr_assert_str_eq(b.data, "{\"a\":-5,\"b\":[18446744073709551615,true,null,{},0.5,null],"
                                 "\"c\":[1,2],\"d\":\"7-x\"}");
        rtn_json_buf_free(&b);
}

Test(rtn_json_append, cap_is_sticky_enobufs) {
        struct rtn_json_buf b = RTN_JSON_BUF_INIT(16);
        rtn_json_str(&b, "0123456789");
        cr_assert_eq(b.err, 0);
        rtn_json_str(&b, "0123456789");
        cr_assert_eq(b.err, -ENOBUFS);
        rtn_json_null(&b);
        cr_assert_eq(b.err, -ENOBUFS);
        cr_assert_null(rtn_json_buf_steal(&b));
        rtn_json_buf_free(&b);
}

Test(rtn_json_parse, rejects_what_jsmn_alone_accepts) {
        static const struct {
                const char *js;
                int err;
        } cases[] = {
                {"", -EBADMSG},
                {"  ", -EBADMSG},
                {"{", -EBADMSG},
                {"[1,]", -EBADMSG},
                {"{\"a\":1,}", -EBADMSG},
                {"{\"a\" 1}", -EBADMSG},
                {"[1 2]", -EBADMSG},
                {"{1:2}", -EBADMSG},
                {"01", -EBADMSG},
                {"1.", -EBADMSG},
                {"-", -EBADMSG},
                {"1e", -EBADMSG},
                {"tru", -EBADMSG},
                {"nulll", -EBADMSG},
                {"\"a\tb\"", -EBADMSG},
                {"\"\\x\"", -EBADMSG},
                {"\"\\u12g4\"", -EBADMSG},
                {"\"abc", -EBADMSG},
                {"1 2", -EBADMSG},
                {"{}x", -EBADMSG},
                {"[}", -EBADMSG},
                {"\"\xc3\"", -EILSEQ},
                {"\"\xed\xb0\x80\"", -EILSEQ},
                {"'a'", -EBADMSG},
                {"[1,,2]", -EBADMSG},
                {"{,}", -EBADMSG},
        };
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
                struct rtn_json_doc d;
                const char *why = NULL;
                int r = rtn_json_parse(cases[i].js, strlen(cases[i].js), 100, 10, &d, &why);
                cr_assert_eq(r, cases[i].err, "%s: got %d", cases[i].js, r);
                cr_assert_not_null(why, "%s: a reason is given", cases[i].js);
        }
}

Test(rtn_json_parse, accepts_and_tokenizes) {
        const char js[] = " {\"a\":[1,-2.5e3,true,false,null,\"x\"],\"b\":{\"c\":{}},\"a\":0} ";
        struct rtn_json_doc d;
        cr_assert_eq(rtn_json_parse(js, sizeof js - 1, 100, 10, &d, NULL), 0);
        cr_assert_eq(rtn_json_kind(&d, 0), 'o');
        int a = rtn_json_obj_get(&d, 0, "a");
        cr_assert_eq(rtn_json_kind(&d, a), 'd', "the last duplicate wins");
        int b = rtn_json_obj_get(&d, 0, "b");
        cr_assert_eq(rtn_json_kind(&d, rtn_json_obj_get(&d, b, "c")), 'o');
        cr_assert_eq(rtn_json_obj_get(&d, 0, "zz"), -ENOENT);
        cr_assert_eq(rtn_json_obj_get(&d, a, "zz"), -EINVAL);
        int arr = 2;
        cr_assert_eq(rtn_json_kind(&d, arr), 'a');
        cr_assert_eq(rtn_json_next(&d, arr), arr + 7);
        rtn_json_doc_free(&d);
        static const char *const scalars[] = {"42", " \"s\" ", "null", "-0.5e-3"};
        for (size_t i = 0; i < 4; i++) {
                cr_assert_eq(rtn_json_parse(scalars[i], strlen(scalars[i]), 1, 1, &d, NULL), 0,
                             "%s", scalars[i]);
                cr_assert_eq(d.ntoks, 1);
                rtn_json_doc_free(&d);
        }
}

Test(rtn_json_parse, limits) {
        struct rtn_json_doc d;
        cr_assert_eq(rtn_json_parse("[[[1]]]", 7, 100, 2, &d, NULL), -ELOOP);
        cr_assert_eq(rtn_json_parse("[[[1]]]", 7, 100, 3, &d, NULL), 0);
        rtn_json_doc_free(&d);
        cr_assert_eq(rtn_json_parse("[1,2,3]", 7, 3, 3, &d, NULL), -E2BIG);
        cr_assert_eq(rtn_json_parse("[1,2,3]", 7, 4, 3, &d, NULL), 0);
        rtn_json_doc_free(&d);
        /* a deep document is refused without recursion */
        size_t n = 1 << 20;
        char *deep = malloc(n);
        memset(deep, '[', n);
        cr_assert_eq(rtn_json_parse(deep, n, 1 << 21, 64, &d, NULL), -ELOOP);
        free(deep);
}

Test(rtn_json_unescape, escapes_and_surrogates) {
        const char js[] =
                "[\"a\\n\\u00e9\\ud83d\\ude00\\/\", \"\\ud800x\", \"\\u0000\", \"long string\"]";
        struct rtn_json_doc d;
        cr_assert_eq(rtn_json_parse(js, sizeof js - 1, 100, 10, &d, NULL), 0);
        char buf[32];
        cr_assert_eq(rtn_json_unescape(&d, 1, buf, sizeof buf), 9);
        cr_assert_str_eq(buf, "a\n\xc3\xa9\xf0\x9f\x98\x80/");
        cr_assert_eq(rtn_json_unescape(&d, 2, buf, sizeof buf), 4);
        cr_assert_str_eq(buf, "\xef\xbf\xbdx", "lone surrogate becomes U+FFFD");
        cr_assert_eq(rtn_json_unescape(&d, 3, buf, sizeof buf), 1);
        char *s = NULL;
        cr_assert_eq(rtn_json_get_cstr(&d, 3, 100, &s), -EINVAL, "embedded NUL refused");
        cr_assert_eq(rtn_json_unescape(&d, 4, buf, 5), -ENOBUFS);
        cr_assert_eq(rtn_json_get_cstr(&d, 4, 4, &s), -E2BIG);
        cr_assert_eq(rtn_json_get_cstr(&d, 4, 11, &s), 11);
        cr_assert_str_eq(s, "long string");
        free(s);
        cr_assert_eq(rtn_json_unescape(&d, 0, buf, sizeof buf), -EINVAL);
        cr_assert(rtn_json_str_eq(&d, 1, "a\n\xc3\xa9\xf0\x9f\x98\x80/"));
        cr_assert(!rtn_json_str_eq(&d, 1, "a"));
        rtn_json_doc_free(&d);
}

Test(rtn_json_get_int, ranges_and_types) {
        const char js[] = "[9223372036854775807,-9223372036854775808,9223372036854775808,1.0,1e2,"
                          "\"1\",5,true]";
        struct rtn_json_doc d;
        cr_assert_eq(rtn_json_parse(js, sizeof js - 1, 100, 10, &d, NULL), 0);
        int64_t v;
        cr_assert_eq(rtn_json_get_int(&d, 1, INT64_MIN, INT64_MAX, &v), 0);
        cr_assert_eq(v, INT64_MAX);
        cr_assert_eq(rtn_json_get_int(&d, 2, INT64_MIN, INT64_MAX, &v), 0);
        cr_assert_eq(v, INT64_MIN);
        cr_assert_eq(rtn_json_get_int(&d, 3, INT64_MIN, INT64_MAX, &v), -ERANGE);
        cr_assert_eq(rtn_json_get_int(&d, 4, 0, 10, &v), -EINVAL);
        cr_assert_eq(rtn_json_get_int(&d, 5, 0, 1000, &v), -EINVAL);
        cr_assert_eq(rtn_json_get_int(&d, 6, 0, 10, &v), -EINVAL);
        cr_assert_eq(rtn_json_get_int(&d, 7, 6, 10, &v), -ERANGE);
        cr_assert_eq(rtn_json_get_int(&d, 7, 0, 10, &v), 0);
        cr_assert_eq(v, 5);
        bool b;
        cr_assert_eq(rtn_json_get_bool(&d, 8, &b), 0);
        cr_assert(b);
        cr_assert_eq(rtn_json_get_bool(&d, 7, &b), -EINVAL);
        double x;
        cr_assert_eq(rtn_json_get_double(&d, 5, &x), 0);
        cr_assert_eq(x, 100.0);
        rtn_json_doc_free(&d);
        cr_assert_eq(rtn_json_parse("1e999", 5, 1, 1, &d, NULL), 0);
        cr_assert_eq(rtn_json_get_double(&d, 0, &x), -ERANGE);
        rtn_json_doc_free(&d);
}
