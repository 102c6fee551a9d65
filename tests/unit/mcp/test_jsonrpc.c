/* Line framing: split lines, several messages per read, CRLF, blank lines, over-long lines,
 * EOF in the middle of a line. Both through the server and on the framer directly. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "mcp/internal.h"
#include "tests/unit/mcp/harness.h"

static struct harness h;

static void setup(void) {
        struct mcp_config cfg;
        mcp_config_init(&cfg);
        cfg.limits.max_line = 1024;
        h_start(&h, &cfg);
}
static void teardown(void) {
        h_stop(&h);
}

static const char ping[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";

Test(mcp_framer_feed, split_line_is_joined, .init = setup, .fini = teardown) {
        h_send_raw(&h, ping, 10);
        cr_assert_null(h_recv(&h, 50));
        h_send_raw(&h, ping + 10, strlen(ping) - 10);
        cr_assert_null(h_recv(&h, 50));
        h_send_raw(&h, "\n", 1);
        cr_assert_not_null(h_recv(&h, 1000));
        cr_assert_eq(h_int(&h, "id"), 1);
}

Test(mcp_framer_feed, several_messages_crlf_and_blank_lines, .init = setup, .fini = teardown) {
        const char in[] = "\n  \r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n"
                          "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n";
        h_send_raw(&h, in, sizeof in - 1);
        cr_assert_not_null(h_recv(&h, 1000));
        cr_assert_eq(h_int(&h, "id"), 1);
        cr_assert_not_null(h_recv(&h, 1000));
        cr_assert_eq(h_int(&h, "id"), 2);
        cr_assert_null(h_recv(&h, 50), "blank lines get no answer");
}

Test(on_line, overlong_line_is_refused_and_the_next_served, .init = setup, .fini = teardown) {
        char big[3000];
        memset(big, 'x', sizeof big);
        h_send_raw(&h, big, sizeof big);
        h_pump(&h, 20);
        h_send_raw(&h, big, sizeof big);
        h_send(&h, "");
        h_send(&h, ping);
        cr_assert_not_null(h_recv(&h, 1000));
        cr_assert_eq(h_int(&h, "error.code"), MCP_INVALID_REQUEST);
        cr_assert(strstr(h_str(&h, "error.message"), "6000 bytes exceeds the limit of 1024"), "%s",
                  h.line);
        cr_assert_not_null(h_recv(&h, 1000));
        cr_assert_eq(h_int(&h, "id"), 1);
}

Test(mcp_framer_eof, last_line_without_newline_is_served, .init = setup, .fini = teardown) {
        h_send_raw(&h, ping, strlen(ping));
        close(h.in_w);
        h.in_w = -1;
        cr_assert_not_null(h_recv(&h, 1000));
        cr_assert_eq(h_int(&h, "id"), 1);
        h_pump(&h, 50);
        cr_assert(rtn_loop_stopped(h.loop));
        cr_assert_eq(h.fb.shutdowns, 1);
}

Test(mcp_framer_eof, truncated_json_is_a_parse_error, .init = setup, .fini = teardown) {
        h_send_raw(&h, ping, strlen(ping) - 3);
        close(h.in_w);
        h.in_w = -1;
        cr_assert_not_null(h_recv(&h, 1000));
        cr_assert_eq(h_int(&h, "error.code"), MCP_PARSE_ERROR);
}

struct lines {
        int n, overlong;
        char last[64];
        size_t last_len;
};

static void collect(void *ud, const char *line, size_t len) {
        struct lines *l = ud;
        if (!line) {
                l->overlong++;
                l->last_len = len;
                return;
        }
        l->n++;
        l->last_len = len;
        snprintf(l->last, sizeof l->last, "%.*s", (int)len, line);
}

Test(mcp_framer_feed, byte_by_byte) {
        struct mcp_framer f;
        struct lines l = {0};
        mcp_framer_init(&f, 8);
        const char in[] = "abc\r\ndefgh\n0123456789\nxy";
        for (size_t i = 0; i < sizeof in - 1; i++)
                cr_assert_eq(mcp_framer_feed(&f, in + i, 1, collect, &l), 0);
        cr_assert_eq(l.n, 2);
        cr_assert_eq(l.overlong, 1);
        cr_assert_eq(l.last_len, 10);
        mcp_framer_eof(&f, collect, &l);
        cr_assert_eq(l.n, 3);
        cr_assert_str_eq(l.last, "xy");
        mcp_framer_free(&f);
}

Test(mcp_framer_eof, overlong_tail_is_reported) {
        struct mcp_framer f;
        struct lines l = {0};
        mcp_framer_init(&f, 4);
        cr_assert_eq(mcp_framer_feed(&f, "123456789", 9, collect, &l), 0);
        cr_assert_eq(l.overlong, 0);
        mcp_framer_eof(&f, collect, &l);
        cr_assert_eq(l.overlong, 1);
        cr_assert_eq(l.last_len, 9);
        mcp_framer_free(&f);
}

/* The front end of `rtn serve --http` relays a progress notification by the token that
 * mcp_call_progress wrote: a string (escapes and all) or a number, and nothing else. */
/* The reader of a call's log line with related_meta: the id, and the span that cut leaves the
 * message a client gets; any other line is no such message. */
Test(mcp_related_request, finds_the_id_and_the_meta_to_cut) {
        const char *id;
        size_t n, cut, cl;
        const char *s = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{"
                        "\"_meta\":{\"rtn/relatedRequest\":\"a}\\\",b\"},\"level\":\"info\"}}";
        cr_assert_eq(mcp_related_request(s, strlen(s), &id, &n, &cut, &cl), 0);
        cr_assert_eq(n, strlen("\"a}\\\",b\""));
        cr_assert(!memcmp(id, "\"a}\\\",b\"", n));
        char rest[256];
        snprintf(rest, sizeof rest, "%.*s%s", (int)cut, s, s + cut + cl);
        cr_assert_str_eq(rest, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\","
                               "\"params\":{\"level\":\"info\"}}");
        const char *other[] = {
                "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{"
                "\"level\":\"info\"}}",
                "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{"
                "\"_meta\":{\"rtn/relatedRequest\":7,\"x\":1},\"level\":\"info\"}}",
                "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{"
                "\"_meta\":{\"rtn/relatedRequest\":\"unterminated",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}",
        };
        for (size_t i = 0; i < sizeof other / sizeof other[0]; i++)
                cr_assert_eq(mcp_related_request(other[i], strlen(other[i]), &id, &n, &cut, &cl),
                             -ENOMSG, "line %zu", i);
}

Test(mcp_progress_token, finds_the_raw_token_of_a_progress_line) {
        const char *tok;
        size_t n;
        const char *s = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{"
                        "\"progressToken\":\"a\\\"b,c\",\"progress\":5}}";
        cr_assert_eq(mcp_progress_token(s, strlen(s), &tok, &n), 0);
        cr_assert_eq(n, strlen("\"a\\\"b,c\""));
        cr_assert(!memcmp(tok, "\"a\\\"b,c\"", n));
        const char *d = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{"
                        "\"progressToken\":42,\"progress\":1}}";
        cr_assert_eq(mcp_progress_token(d, strlen(d), &tok, &n), 0);
        cr_assert_eq(n, 2);
        cr_assert(!memcmp(tok, "42", 2));
        const char *other[] = {
                "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{"
                "\"progressToken\":1,\"level\":\"info\"}}",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}",
                "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{"
                "\"progressToken\":\"unterminated",
        };
        for (size_t i = 0; i < sizeof other / sizeof other[0]; i++)
                cr_assert_eq(mcp_progress_token(other[i], strlen(other[i]), &tok, &n), -ENOMSG,
                             "line %zu", i);
}
