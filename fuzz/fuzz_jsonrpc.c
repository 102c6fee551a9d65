/* Fuzzes the framing and the JSON-RPC parser: the input is cut into chunks (sizes from its
 * first byte) and fed to the framer; every line is parsed with the server's limits, every
 * message validated, every token read with every accessor. Oracles beyond the sanitizers:
 * a line the reader accepts, written back as a JSON string, must parse again; the writer's
 * output of any bytes must parse. */
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "fuzz/fuzz.h"
#include "mcp/internal.h"

static void poke_tokens(const struct rtn_json_doc *d) {
        char buf[256];
        for (int i = 0; i < d->ntoks; i++) {
                int64_t v;
                double x;
                bool b;
                char *s = NULL;
                (void)rtn_json_get_int(d, i, INT64_MIN, INT64_MAX, &v);
                (void)rtn_json_get_double(d, i, &x);
                (void)rtn_json_get_bool(d, i, &b);
                (void)rtn_json_unescape(d, i, buf, sizeof buf);
                if (rtn_json_get_cstr(d, i, 1 << 20, &s) >= 0)
                        free(s);
                (void)rtn_json_str_eq(d, i, "method");
                if (rtn_json_kind(d, i) == 'o')
                        (void)rtn_json_obj_get(d, i, "id");
                if (rtn_json_next(d, i) <= i)
                        abort();
        }
}

static void writer_roundtrip(const char *line, size_t len) {
        struct rtn_json_buf b = RTN_JSON_BUF_INIT(0);
        rtn_json_strn(&b, line, len);
        struct rtn_json_doc d;
        if (b.err || rtn_json_parse(b.data, b.len, 4, 4, &d, NULL) < 0)
                abort(); /* the writer must always produce valid JSON */
        rtn_json_doc_free(&d);
        rtn_json_buf_free(&b);
}

static void on_line(void *ud, const char *line, size_t len) {
        if (!line)
                return;
        writer_roundtrip(line, len);
        struct rtn_json_doc d;
        if (rtn_json_parse(line, len, 4096, 64, &d, NULL) < 0)
                return;
        poke_tokens(&d);
        struct mcp_msg m;
        const char *why;
        if (rtn_json_kind(&d, 0) == 'a')
                for (int k = 0, j = 1; k < d.toks[0].size; k++, j = rtn_json_next(&d, j))
                        (void)mcp_msg_parse(&d, j, &m, &why);
        else
                (void)mcp_msg_parse(&d, 0, &m, &why);
        rtn_json_doc_free(&d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size == 0)
                return 0;
        size_t chunk = (size_t)data[0] % 64 + 1;
        struct mcp_framer f;
        mcp_framer_init(&f, 4096);
        for (size_t off = 1; off < size; off += chunk) {
                size_t n = size - off < chunk ? size - off : chunk;
                if (mcp_framer_feed(&f, (const char *)data + off, n, on_line, NULL) < 0)
                        abort();
        }
        mcp_framer_eof(&f, on_line, NULL);
        mcp_framer_free(&f);
        return 0;
}
