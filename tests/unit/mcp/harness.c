/* The test harness (see harness.h). */
#include "tests/unit/mcp/harness.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/io.h"
#include "serve/serve.h"

void h_start(struct harness *h, const struct mcp_config *cfg) {
        memset(h, 0, sizeof *h);
        h->buf = malloc(H_BUF_SIZE);
        h->str = malloc(H_BUF_SIZE);
        cr_assert(h->buf && h->str);
        if (cfg)
                h->cfg = *cfg;
        else
                mcp_config_init(&h->cfg);
        if (!h->cfg.tools) /* the real tools' schemas, answered by the fake backend */
                h->cfg.tools = &serve_tool_table;
        int in[2], out[2];
        cr_assert_eq(pipe2(in, O_CLOEXEC), 0);
        cr_assert_eq(pipe2(out, O_CLOEXEC | O_NONBLOCK), 0);
        h->in_r = in[0];
        h->in_w = in[1];
        h->out_r = out[0];
        h->out_w = out[1];
        cr_assert_eq(rtn_loop_new(&h->loop), 0);
        struct rtn_error err = {0};
        int r = mcp_server_new(&h->cfg, h->loop, h->in_r, h->out_w, &fake_backend_ops, &h->fb,
                               &h->server, &err);
        cr_assert_eq(r, 0, "mcp_server_new: %s", err.msg);
        cr_assert_eq(h->fb.attached, 1);
}

void h_stop(struct harness *h) {
        mcp_server_free(h->server);
        rtn_loop_free(h->loop);
        rtn_json_doc_free(&h->doc);
        free(h->line);
        free(h->buf);
        free(h->str);
        h->buf = h->str = NULL;
        for (int *fd = &h->in_w; fd <= &h->out_w; fd++)
                if (*fd >= 0)
                        close(*fd);
}

void h_send_raw(struct harness *h, const void *data, size_t n) {
        cr_assert_eq(rtn_write_all(h->in_w, data, n), 0);
}

void h_send(struct harness *h, const char *line) {
        h_send_raw(h, line, strlen(line));
        h_send_raw(h, "\n", 1);
}

static long long now_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static bool take_line(struct harness *h) {
        char *nl = memchr(h->buf, '\n', h->len);
        if (!nl)
                return false;
        size_t n = (size_t)(nl - h->buf);
        free(h->line);
        rtn_json_doc_free(&h->doc);
        h->line = strndup(h->buf, n);
        memmove(h->buf, nl + 1, h->len - n - 1);
        h->len -= n + 1;
        const char *why = NULL;
        int r = rtn_json_parse(h->line, n, 1 << 20, 256, &h->doc, &why);
        cr_assert_eq(r, 0, "server wrote invalid JSON (%s): %.200s", why ? why : "", h->line);
        return true;
}

const char *h_recv(struct harness *h, int timeout_ms) {
        long long end = now_ms() + timeout_ms;
        for (;;) {
                if (take_line(h))
                        return h->line;
                ssize_t n = read(h->out_r, h->buf + h->len, H_BUF_SIZE - h->len);
                if (n > 0) {
                        h->len += (size_t)n;
                        continue;
                }
                long long left = end - now_ms();
                if (left <= 0 || rtn_loop_stopped(h->loop))
                        return NULL;
                rtn_loop_run_once(h->loop, left < 20 ? (int)left : 20);
        }
}

void h_pump(struct harness *h, int ms) {
        long long end = now_ms() + ms;
        while (now_ms() < end && !rtn_loop_stopped(h->loop))
                rtn_loop_run_once(h->loop, 10);
}

const char *h_init(struct harness *h, const char *version) {
        char req[512];
        snprintf(req, sizeof req,
                 "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"
                 "\"protocolVersion\":\"%s\","
                 "\"capabilities\":{},\"clientInfo\":{\"name\":\"test\",\"version\":\"1\"}}}",
                 version);
        h_send(h, req);
        const char *l = h_recv(h, 2000);
        cr_assert_not_null(l, "no initialize response");
        h_send(h, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
        return l;
}

int h_tok(struct harness *h, const char *path) {
        char key[128];
        int t = 0;
        while (*path && t >= 0) {
                size_t n = strcspn(path, ".");
                snprintf(key, sizeof key, "%.*s", (int)n, path);
                path += n + (path[n] == '.');
                char *end;
                long idx = strtol(key, &end, 10);
                if (*end == '\0' && rtn_json_kind(&h->doc, t) == 'a') {
                        if (idx >= h->doc.toks[t].size)
                                return -1;
                        t++;
                        while (idx-- > 0)
                                t = rtn_json_next(&h->doc, t);
                } else
                        t = rtn_json_obj_get(&h->doc, t, key);
        }
        return t < 0 ? -1 : t;
}

bool h_has(struct harness *h, const char *path) {
        return h_tok(h, path) >= 0;
}

bool h_bool(struct harness *h, const char *path) {
        bool v;
        int t = h_tok(h, path);
        cr_assert_geq(t, 0, "%s missing in %.300s", path, h->line);
        cr_assert_eq(rtn_json_get_bool(&h->doc, t, &v), 0, "%s not a boolean", path);
        return v;
}

long long h_int(struct harness *h, const char *path) {
        int64_t v;
        int t = h_tok(h, path);
        cr_assert_geq(t, 0, "%s missing in %.300s", path, h->line);
        cr_assert_eq(rtn_json_get_int(&h->doc, t, INT64_MIN, INT64_MAX, &v), 0, "%s not an integer",
                     path);
        return v;
}

const char *h_str(struct harness *h, const char *path) {
        int t = h_tok(h, path);
        cr_assert_geq(t, 0, "%s missing in %.300s", path, h->line);
        cr_assert_geq(rtn_json_unescape(&h->doc, t, h->str, H_BUF_SIZE), 0, "%s not a string",
                      path);
        return h->str;
}
