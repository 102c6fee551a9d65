/* Drives a real mcp_server over two pipes on a real event loop: tests write request lines
 * into the input pipe and read response lines from the output pipe, pumping the loop in
 * between. Responses are parsed with common/json so assertions name fields, not substrings. */
#pragma once

#include <stdbool.h>

#include "common/json.h"
#include "common/loop.h"
#include "mcp/mcp.h"
#include "tests/unit/mcp/fake_backend.h"

#define H_BUF_SIZE (1 << 21)

struct harness {
        struct rtn_loop *loop;
        struct mcp_server *server;
        struct mcp_config cfg;
        struct fake_backend fb;
        int in_w, in_r, out_r, out_w;
        /* On the heap, from h_start to h_stop: a static buffer of megabytes is read page by
         * page by LeakSanitizer at the exit of every test's process, needed or not. */
        char *buf; /* H_BUF_SIZE bytes of output not yet split into lines */
        size_t len;
        char *str; /* H_BUF_SIZE bytes: h_str's answer */
        char *line; /* the last line received */
        struct rtn_json_doc doc; /* ... parsed */
};

/* cfg may be NULL for defaults. */
void h_start(struct harness *h, const struct mcp_config *cfg);
void h_stop(struct harness *h);
void h_send(struct harness *h, const char *line);
void h_send_raw(struct harness *h, const void *data, size_t n);
/* Next output line, parsed into h->doc; NULL when none came within timeout_ms. */
const char *h_recv(struct harness *h, int timeout_ms);
/* Sends initialize with version and returns the negotiated version's response line. */
const char *h_init(struct harness *h, const char *version);
/* Field lookup along a dotted path ("result.tools"); -1 when absent. */
int h_tok(struct harness *h, const char *path);
/* Integer / string value at a path (asserting its type). */
long long h_int(struct harness *h, const char *path);
const char *h_str(struct harness *h, const char *path);
bool h_bool(struct harness *h, const char *path);
bool h_has(struct harness *h, const char *path);
/* Runs the loop for ms without expecting anything. */
void h_pump(struct harness *h, int ms);
