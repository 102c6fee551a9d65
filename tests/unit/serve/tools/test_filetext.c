/* The file tools' text logic (serve/tools/filetext.c): line numbering with offsets, limits and
 * an output cap, CRLF and empty files, binary detection, exact replacement with zero, one and
 * many matches, base64, paths and modes. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/session/file_client.h"

static struct rt_text_lines number(const char *s, uint64_t off, uint64_t lim, size_t max) {
        struct rt_text_lines t;
        cr_assert_eq(rt_text_number_lines(s, strlen(s), off, lim, max, &t), 0);
        return t;
}

Test(rt_text_number_lines, whole_file) {
        struct rt_text_lines t = number("a\nb\nc\n", 1, 2000, 1 << 20);
        cr_assert_str_eq(t.content, "     1\ta\n     2\tb\n     3\tc\n");
        cr_assert_eq(t.total_lines, 3);
        cr_assert_eq(t.lines_returned, 3);
        cr_assert_not(t.truncated);
        free(t.content);
}

Test(rt_text_number_lines, offset_and_limit) {
        struct rt_text_lines t = number("a\nb\nc\nd", 2, 2, 1 << 20);
        cr_assert_str_eq(t.content, "     2\tb\n     3\tc\n");
        cr_assert_eq(t.start_line, 2);
        cr_assert_eq(t.total_lines, 4); /* a last line without '\n' counts */
        cr_assert(t.truncated);
        free(t.content);
}

Test(rt_text_number_lines, no_newline_the_file_lacks) {
        struct rt_text_lines t = number("a\nb", 1, 2000, 1 << 20);
        cr_assert_str_eq(t.content, "     1\ta\n     2\tb");
        cr_assert_eq(t.total_lines, 2);
        free(t.content);
        t = number("only", 1, 2000, 1 << 20);
        cr_assert_str_eq(t.content, "     1\tonly");
        free(t.content);
}

Test(rt_text_number_lines, offset_past_end) {
        struct rt_text_lines t = number("a\n", 5, 10, 1 << 20);
        cr_assert_str_eq(t.content, "");
        cr_assert_eq(t.lines_returned, 0);
        cr_assert_eq(t.total_lines, 1);
        cr_assert_not(t.truncated);
        free(t.content);
}

Test(rt_text_number_lines, empty_file) {
        struct rt_text_lines t = number("", 1, 10, 1 << 20);
        cr_assert_eq(t.len, 0);
        cr_assert_eq(t.total_lines, 0);
        cr_assert_not(t.truncated);
        free(t.content);
}

Test(rt_text_number_lines, crlf_kept) {
        struct rt_text_lines t = number("x\r\ny\r\n", 1, 10, 1 << 20);
        cr_assert_str_eq(t.content, "     1\tx\r\n     2\ty\r\n");
        cr_assert_eq(t.total_lines, 2);
        free(t.content);
}

Test(rt_text_number_lines, output_cap_truncates) {
        struct rt_text_lines t = number("0123456789\n0123456789\n0123456789\n", 1, 100, 40);
        cr_assert_eq(t.lines_returned, 1);
        cr_assert(t.truncated);
        cr_assert_eq(t.total_lines, 3);
        free(t.content);
}

Test(rt_text_is_binary, cases) {
        cr_assert_not(rt_text_is_binary("plain\n", 6, false));
        cr_assert(rt_text_is_binary("a\0b", 3, false));
        cr_assert(rt_text_is_binary("\xff\xfe", 2, false));
        cr_assert_not(rt_text_is_binary("h\xc3\xa9", 3, false));
        /* a read cut inside "é" is text when the cut is known */
        cr_assert_not(rt_text_is_binary("h\xc3", 2, true));
        cr_assert(rt_text_is_binary("h\xc3", 2, false));
}

Test(rt_text_replace, unique_match) {
        char *out;
        size_t len, count;
        cr_assert_eq(rt_text_replace("hello world", 11, "world", 5, "there", 5, false, 100, &out,
                                     &len, &count),
                     0);
        cr_assert_str_eq(out, "hello there");
        cr_assert_eq(len, 11);
        cr_assert_eq(count, 1);
        free(out);
}

Test(rt_text_replace, zero_matches) {
        char *out = NULL;
        size_t len, count;
        cr_assert_eq(rt_text_replace("abc", 3, "x", 1, "y", 1, true, 100, &out, &len, &count),
                     -ENOENT);
        cr_assert_null(out);
}

Test(rt_text_replace, many_matches_all) {
        char *out;
        size_t len, count;
        cr_assert_eq(rt_text_replace("aaaa", 4, "aa", 2, "b", 1, true, 100, &out, &len, &count), 0);
        cr_assert_str_eq(out, "bb"); /* non-overlapping */
        cr_assert_eq(count, 2);
        free(out);
        cr_assert_eq(rt_text_count("aaaa", 4, "aa", 2), 2);
        cr_assert_eq(rt_text_count("a\r\nb\r\n", 6, "\r\n", 2), 2);
}

Test(rt_text_replace, first_only_and_delete) {
        char *out;
        size_t len, count;
        cr_assert_eq(rt_text_replace("x.x.x", 5, "x", 1, "", 0, false, 100, &out, &len, &count), 0);
        cr_assert_str_eq(out, ".x.x");
        free(out);
}

Test(rt_text_replace, result_too_large) {
        char *out = NULL;
        size_t len, count;
        cr_assert_eq(
                rt_text_replace("ab", 2, "a", 1, "0123456789", 10, true, 8, &out, &len, &count),
                -E2BIG);
        cr_assert_null(out);
}

Test(rt_base64_encode, rfc4648_vectors) {
        static const char *const in[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
        static const char *const want[] = {"",         "Zg==",     "Zm8=",    "Zm9v",
                                           "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
        char buf[16];
        for (size_t i = 0; i < 7; i++) {
                cr_assert_eq(rt_base64_encode((const unsigned char *)in[i], strlen(in[i]), buf),
                             strlen(want[i]));
                cr_assert_str_eq(buf, want[i]);
        }
}

Test(rt_files_display_path, relative_and_absolute) {
        char buf[64];
        cr_assert_eq(rt_files_display_path("a/b", buf, sizeof buf), 0);
        cr_assert_str_eq(buf, "/workspace/a/b");
        cr_assert_eq(rt_files_display_path("/etc/x", buf, sizeof buf), 0);
        cr_assert_str_eq(buf, "/etc/x");
        cr_assert_eq(
                rt_files_display_path("0123456789012345678901234567890123456789012345678901234",
                                      buf, sizeof buf),
                -ENAMETOOLONG);
}

Test(rt_files_parse_mode, cases) {
        uint32_t m = 1;
        cr_assert_eq(rt_files_parse_mode("0644", &m), 0);
        cr_assert_eq(m, 0644);
        cr_assert_eq(rt_files_parse_mode("755", &m), 0);
        cr_assert_eq(m, 0755);
        cr_assert_eq(rt_files_parse_mode("4755", &m), -EINVAL); /* no setuid */
        cr_assert_eq(rt_files_parse_mode("0689", &m), -EINVAL);
        cr_assert_eq(rt_files_parse_mode("64", &m), -EINVAL);
        cr_assert_eq(m, 0755);
}
