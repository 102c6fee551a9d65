/* common/term: what the agent controls reaches a terminal as text, never as control: escape
 * sequences, newlines, bidi controls and bytes that are not UTF-8 are escaped, printable
 * UTF-8 passes, and names that needed an escape are quoted as git quotes paths. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/term.h"

struct esc_case {
        const char *in;
        unsigned flags;
        const char *out;
};

static const struct esc_case cases[] = {
        {"plain text", 0, "plain text"},
        {"caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80", 0,
         "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80"},
        /* an OSC 52 clipboard write hidden behind an erase-line */
        {"fix\x1b[2K\r\x1b]52;c;ZWNobyBwd25lZA==\x07", 0,
         "fix\\033[2K\\r\\033]52;c;ZWNobyBwd25lZA==\\a"},
        {"a\nb\tc\\d", 0, "a\\nb\\tc\\\\d"},
        {"\x7f\x01", 0, "\\177\\001"},
        {"\xc2\x9b"
         "31m",
         0, "\\302\\23331m"}, /* C1 CSI as UTF-8 */
        {"\x9b"
         "31m",
         0, "\\23331m"}, /* a lone byte: not UTF-8 */
        {"abc\xe2\x80\xaetxt.exe", 0, "abc\\342\\200\\256txt.exe"}, /* U+202E */
        {"\xff\xfe", 0, "\\377\\376"},
        {"\xe6\x97", 0, "\\346\\227"}, /* a cut sequence */
        {"dir/name.txt", RTN_TERM_QUOTE, "dir/name.txt"},
        {"say \"hi\"", 0, "say \"hi\""},
        {"say \"hi\"", RTN_TERM_QUOTE, "\"say \\\"hi\\\"\""},
        {"evil\x1b]0;x\x07\nname", RTN_TERM_QUOTE, "\"evil\\033]0;x\\a\\nname\""},
};

/* Indexes: the cases' strings are pointers, which do not survive the trip to the process a
 * parameterized test runs in. */
ParameterizedTestParameters(rtn_term_escape, table) {
        static int idx[sizeof cases / sizeof cases[0]];
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
                idx[i] = (int)i;
        return cr_make_param_array(int, idx, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(int *i, rtn_term_escape, table) {
        const struct esc_case *c = &cases[*i];
        char buf[256];
        size_t n = rtn_term_escape(c->in, strlen(c->in), c->flags, buf, sizeof buf);
        cr_assert_str_eq(buf, c->out);
        cr_assert_eq(n, strlen(c->out));
}

/* A buffer too small holds a prefix that ends between two escapes; the length returned is
 * the whole. */
Test(rtn_term_escape, cut_never_splits_an_escape) {
        const char *in = "ab\x1b\x1b\x1b";
        for (size_t cap = 1; cap < 16; cap++) {
                char buf[16];
                size_t n = rtn_term_escape(in, strlen(in), 0, buf, cap);
                cr_assert_eq(n, strlen("ab\\033\\033\\033"));
                size_t len = strlen(buf);
                cr_assert_lt(len, cap);
                cr_assert(len == 0 || len == 1 || len == 2 || len == 6 || len == 10 || len == 14,
                          "cap %zu: %s", cap, buf);
        }
}

/* rtn_term_printf keeps the one final newline it was given, and escapes any other. */
Test(rtn_term_printf, final_newline_only) {
        char *out = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&out, &size);
        rtn_term_printf(f, "%s %s\n", "A", "/x\ny\x1b");
        fclose(f);
        cr_assert_str_eq(out, "A /x\\ny\\033\n");
        free(out);
}

/* rtn_term_has_control finds what the rule escapes as a control, and nothing else: letters,
 * a backslash and bytes that are not UTF-8 are not controls. */
Test(rtn_term_has_control, controls_only) {
        static const char *const yes[] = {"a\nb",
                                          "\x1b[31m",
                                          "x\x7f",
                                          "\xc2\x9b"
                                          "31m",
                                          "x\xe2\x80\xaeyz",
                                          "\xe2\x81\xa6",
                                          "\xd8\x9c"};
        static const char *const no[] = {"",         "plain",        "caf\xc3\xa9",     "a\\b",
                                         "\xff\xfe", "\xe2\x80\xa0", "\xf0\x9f\x98\x80"};
        for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
                cr_assert(rtn_term_has_control(yes[i], strlen(yes[i])), "%zu", i);
        for (size_t i = 0; i < sizeof no / sizeof *no; i++)
                cr_assert(!rtn_term_has_control(no[i], strlen(no[i])), "%zu", i);
}
