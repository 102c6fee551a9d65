/* The rtn side of the sandbox's file server (init/file_server.c): requests queued on the session's
 * event loop, sent in order over the server's SOCK_SEQPACKET socket, answered by callbacks.
 * The server is started on first use (INIT_MSG_FILES_START on the control socket) and again
 * after it died (a request ran past INIT_FILES_TIMEOUT_S, an agent killed it) or after the
 * sandbox restarted. Replies come from inside the sandbox and are checked like any other
 * untrusted input. Also the pure text helpers of the file tools (serve/tools/filetext.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "common/initproto.h"

struct rtn_loop;
struct rt_session;
struct rt_files;

struct rt_files_op {
        uint32_t op; /* enum init_files_op */
        uint32_t flags; /* enum init_files_flags */
        uint32_t mode, depth, max;
        uint64_t expect_dev, expect_ino;
        const char *path, *pattern, *glob; /* NULL = "" */
        int fd; /* content (WRITE) or output (READ, LIST, SEARCH) memfd; borrowed; -1 */
};

struct rt_files_reply {
        int error; /* positive errno, 0 = done */
        const char *message; /* what failed, in a sentence; "" when nothing did */
        uint32_t flags; /* enum init_files_resp_flags */
        uint64_t size, count, dev, ino;
        uint32_t mode;
};

typedef void (*rt_files_fn)(void *ud, const struct rt_files_reply *r);

int rt_files_new(struct rtn_loop *loop, struct rt_session *s, struct rt_files **ret);
/* Answers every pending request with an error (callbacks run), then frees. */
void rt_files_free(struct rt_files *f);
/* Queues a request; fn runs exactly once, later, from the loop. */
int rt_files_call(struct rt_files *f, const struct rt_files_op *op, rt_files_fn fn, void *ud,
                  struct rtn_error *err);

/* ---- text helpers (serve/tools/filetext.c) -------------------------------------------------- */

/* True when data looks binary: a NUL byte in its first 8 KiB, or invalid UTF-8 (a cut
 * sequence at the very end is allowed when cut is true). */
bool rt_text_is_binary(const char *data, size_t n, bool cut);

struct rt_text_lines {
        char *content; /* malloc'd "%6u\t<line>\n"... */
        size_t len;
        uint64_t start_line; /* first line returned, 1-based */
        uint64_t lines_returned;
        uint64_t total_lines; /* lines in data (a last line without '\n' counts) */
        bool truncated; /* lines after the ones returned, or cut at max_bytes */
};
/* Numbers the lines [offset, offset+limit) of data (offset 1-based) like `cat -n`, keeping
 * each line's bytes as they are ('\r' of CRLF included), at most max_bytes of output. */
int rt_text_number_lines(const char *data, size_t n, uint64_t offset, uint64_t limit,
                         size_t max_bytes, struct rt_text_lines *ret);

/* Number of non-overlapping occurrences of needle in data (needle non-empty). */
size_t rt_text_count(const char *data, size_t n, const char *needle, size_t nlen);
/* Replaces the first (all: every) non-overlapping occurrence of old by new into a malloc'd
 * buffer. -ENOENT when old does not occur, -E2BIG when the result exceeds max_len. */
int rt_text_replace(const char *data, size_t n, const char *old, size_t olen, const char *rep,
                    size_t rlen, bool all, size_t max_len, char **ret, size_t *ret_len,
                    size_t *ret_count);

/* Standard base64 (RFC 4648 section 4) with padding; out must hold 4*((n+2)/3)+1 bytes. */
size_t rt_base64_encode(const unsigned char *in, size_t n, char *out);

/* "/workspace/PATH" for a relative path, else PATH; -ENAMETOOLONG when it does not fit. */
int rt_files_display_path(const char *path, char *buf, size_t cap);
/* Octal permission bits "644" / "0644" into *ret (at most 0777); -EINVAL otherwise. */
int rt_files_parse_mode(const char *s, uint32_t *ret);
