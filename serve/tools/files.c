/* `rtn serve`: the file tools (file_read, file_write, file_edit, file_list, file_search).
 * Each is a request to the sandbox's file server (runtime/session/file_client.c →
 * init/file_server.c), which opens, reads, writes and walks with the sandbox user's credentials and
 * policy; this side only formats. Reads, listings and matches come back in a memfd rtn passes
 * along, writes go out as a memfd: nothing is spawned per call, and nothing the sandbox opened is
 * read here. Limits (docs/tools.md): 8 MiB looked at per file, 1 MiB of numbered text or 4 MiB of
 * raw bytes returned, 4 MiB written by file_write, 8 MiB by file_edit, 10000 entries, 10000
 * matches. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/io.h"
#include "common/json.h"
#include "runtime/session/file_client.h"
#include "serve/serve.h"

#define READ_TEXT_MAX (1u << 20)
#define READ_B64_MAX (4u << 20)
#define READ_DEFAULT_LIMIT 2000
#define LIST_MAX 10000
#define SEARCH_DEFAULT_MAX 200

struct fctx {
        struct serve *sv;
        struct mcp_call *call;
        char shown[INIT_FILES_PATH_MAX + 16]; /* the path as the agent sees it */
        char *path; /* as given; the server resolves it */
        int64_t offset, limit;
        bool base64, all;
        char *old_s, *new_s;
        size_t replacements;
        int out_fd;
};

static void fctx_free(struct fctx *c) {
        rtn_safe_close(c->out_fd);
        free(c->path);
        free(c->old_s);
        free(c->new_s);
        free(c);
}

static void finish(struct fctx *c, struct rtn_json_buf *b) {
        mcp_call_finish_json(c->call, b, NULL, false);
        fctx_free(c);
}

static void finish_error(struct fctx *c, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
static void finish_error(struct fctx *c, const char *fmt, ...) {
        char msg[1024];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        mcp_call_finish_error(c->call, "%s", msg);
        fctx_free(c);
}

static struct fctx *fctx_new(struct serve *sv, struct mcp_call *call, const struct mcp_args *a,
                             const char *key) {
        struct fctx *c = calloc(1, sizeof *c);
        if (!c)
                return NULL;
        c->sv = sv;
        c->call = call;
        c->out_fd = -1;
        if (mcp_args_str(a, key, &c->path) < 0 && !(c->path = strdup("/workspace"))) {
                free(c);
                return NULL;
        }
        if (rt_files_display_path(c->path, c->shown, sizeof c->shown) < 0)
                snprintf(c->shown, sizeof c->shown, "%s", c->path);
        return c;
}

static int send_op(struct fctx *c, struct rt_files_op *op, rt_files_fn fn) {
        struct rtn_error err = {0};
        op->path = c->path;
        int r;
        if (!c->sv->files && (r = rt_files_new(c->sv->loop, c->sv->sess, &c->sv->files)) < 0) {
                finish_error(c, "file server: %s", strerror(-r));
                return 0;
        }
        if (rt_files_call(c->sv->files, op, fn, c, &err) < 0) {
                finish_error(c, "file request failed: %s", err.msg);
                return 0;
        }
        return 0;
}

/* Reads what the server copied into our memfd (at most cap bytes; r->count is untrusted);
 * *cut when the file had more. */
static int slurp(int fd, const struct rt_files_reply *r, size_t cap, char **ret, size_t *ret_len,
                 bool *cut) {
        size_t want = r->count < (uint64_t)cap + 1 ? (size_t)r->count : cap + 1;
        char *buf = malloc(want + 1);
        if (!buf)
                return -ENOMEM;
        ssize_t n = pread(fd, buf, want, 0);
        if (n < 0) {
                free(buf);
                return negative_errno();
        }
        *cut = (size_t)n > cap;
        *ret_len = *cut ? cap : (size_t)n;
        *ret = buf;
        return 0;
}

/* An anonymous file holding data, for the server to read a write's content from. */
static int memfd_with(const char *data, size_t len) {
        _cleanup_close_ int fd = memfd_create("rtn-file", MFD_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        int r = rtn_write_all(fd, data, len);
        return r < 0 ? r : TAKE_FD(fd);
}

/* A READ of c->path into a fresh memfd (c->out_fd), which the server fills. */
static int send_read(struct fctx *c, rt_files_fn fn) {
        if ((c->out_fd = memfd_create("rtn-read", MFD_CLOEXEC)) < 0) {
                finish_error(c, "memfd: %s", strerror(errno));
                return 0;
        }
        struct rt_files_op op = {.op = INIT_FILES_READ, .fd = c->out_fd};
        return send_op(c, &op, fn);
}

/* ---- file_read ------------------------------------------------------------------------- */

static void read_b64(struct fctx *c, const char *data, size_t n, uint64_t size, bool cut) {
        size_t k = n < READ_B64_MAX ? n : READ_B64_MAX;
        _cleanup_free_ char *enc = malloc(4 * ((k + 2) / 3) + 1);
        if (!enc)
                return finish_error(c, "out of memory");
        size_t elen = rt_base64_encode((const unsigned char *)data, k, enc);
        struct rtn_json_buf b = RTN_JSON_BUF_INIT(0);
        rtn_json_obj_begin(&b);
        rtn_json_kv_str(&b, "path", c->shown);
        rtn_json_key(&b, "content");
        rtn_json_strn(&b, enc, elen);
        rtn_json_kv_str(&b, "encoding", "base64");
        rtn_json_kv_int(&b, "size", (int64_t)size);
        rtn_json_kv_bool(&b, "truncated", cut || k < n);
        rtn_json_obj_end(&b);
        finish(c, &b);
}

static void read_text(struct fctx *c, const char *data, size_t n, uint64_t size, bool cut) {
        if (rt_text_is_binary(data, n, cut))
                return finish_error(c,
                                    "%s looks binary (a NUL byte or invalid UTF-8); read it "
                                    "with encoding \"base64\"",
                                    c->shown);
        struct rt_text_lines t;
        if (rt_text_number_lines(data, n, (uint64_t)c->offset, (uint64_t)c->limit, READ_TEXT_MAX,
                                 &t) < 0)
                return finish_error(c, "out of memory");
        struct rtn_json_buf b = RTN_JSON_BUF_INIT(0);
        rtn_json_obj_begin(&b);
        rtn_json_kv_str(&b, "path", c->shown);
        rtn_json_key(&b, "content");
        rtn_json_strn(&b, t.content, t.len);
        rtn_json_kv_str(&b, "encoding", "text");
        rtn_json_kv_int(&b, "start_line", (int64_t)t.start_line);
        rtn_json_kv_int(&b, "lines_returned", (int64_t)t.lines_returned);
        if (!cut) /* unknown beyond the part read */
                rtn_json_kv_int(&b, "total_lines", (int64_t)t.total_lines);
        rtn_json_kv_int(&b, "size", (int64_t)size);
        rtn_json_kv_bool(&b, "truncated", t.truncated || cut);
        rtn_json_obj_end(&b);
        free(t.content);
        finish(c, &b);
}

static void read_done(void *ud, const struct rt_files_reply *r) {
        struct fctx *c = ud;
        if (r->error)
                return finish_error(c, "%s", r->message[0] ? r->message : strerror(r->error));
        _cleanup_free_ char *data = NULL;
        size_t n = 0;
        bool cut = false;
        int e = slurp(c->out_fd, r, INIT_FILES_READ_MAX, &data, &n, &cut);
        if (e < 0)
                return finish_error(c, "read %s: %s", c->shown, strerror(-e));
        uint64_t size = cut || r->size > n ? r->size : n; /* /proc files say 0 */
        if (c->base64)
                read_b64(c, data, n, size, cut);
        else
                read_text(c, data, n, size, cut);
}

int serve_file_read(struct serve *sv, struct mcp_call *call, const char *tool,
                    const struct mcp_args *a) {
        struct fctx *c = fctx_new(sv, call, a, "path");
        if (!c)
                return -ENOMEM;
        _cleanup_free_ char *enc = NULL;
        c->offset = 1;
        c->limit = READ_DEFAULT_LIMIT;
        (void)mcp_args_int(a, "offset", &c->offset);
        (void)mcp_args_int(a, "limit", &c->limit);
        c->base64 = mcp_args_str(a, "encoding", &enc) == 0 && !strcmp(enc, "base64");
        return send_read(c, read_done);
}

/* ---- file_write ------------------------------------------------------------------------ */

static void write_done(void *ud, const struct rt_files_reply *r) {
        struct fctx *c = ud;
        if (r->error == ENOENT && !c->old_s) /* file_write makes no directories */
                return finish_error(c,
                                    "%s; file_write does not create directories: make them "
                                    "first (shell_run mkdir -p)",
                                    r->message[0] ? r->message : strerror(r->error));
        if (r->error)
                return finish_error(c, "%s", r->message[0] ? r->message : strerror(r->error));
        struct rtn_json_buf b = RTN_JSON_BUF_INIT(0);
        rtn_json_obj_begin(&b);
        rtn_json_kv_str(&b, "path", c->shown);
        if (c->old_s) { /* file_edit */
                rtn_json_kv_int(&b, "replacements", (int64_t)c->replacements);
        } else {
                rtn_json_kv_int(&b, "bytes_written", (int64_t)r->size);
                rtn_json_kv_bool(&b, "created", r->flags & INIT_FILES_CREATED);
        }
        rtn_json_obj_end(&b);
        finish(c, &b);
}

int serve_file_write(struct serve *sv, struct mcp_call *call, const char *tool,
                     const struct mcp_args *a) {
        _cleanup_free_ char *content = NULL, *mode = NULL;
        bool create_only = false;
        if (mcp_args_str(a, "content", &content) < 0)
                return -EINVAL;
        struct fctx *c = fctx_new(sv, call, a, "path");
        if (!c)
                return -ENOMEM;
        struct rt_files_op op = {.op = INIT_FILES_WRITE};
        (void)mcp_args_bool(a, "create_only", &create_only);
        if (create_only)
                op.flags |= INIT_FILES_CREATE_ONLY;
        if (mcp_args_str(a, "mode", &mode) == 0) {
                if (rt_files_parse_mode(mode, &op.mode) < 0) {
                        finish_error(c,
                                     "mode must be octal permission bits 000-0777, e.g. "
                                     "\"0644\"; got \"%s\"",
                                     mode);
                        return 0;
                }
                op.flags |= INIT_FILES_MODE_SET;
        }
        _cleanup_close_ int fd = memfd_with(content, strlen(content));
        if (fd < 0) {
                finish_error(c, "memfd: %s", strerror(-fd));
                return 0;
        }
        op.fd = fd;
        return send_op(c, &op, write_done);
}

/* ---- file_edit ------------------------------------------------------------------------- */

static void edit_read_done(void *ud, const struct rt_files_reply *r) {
        struct fctx *c = ud;
        if (r->error)
                return finish_error(c, "%s", r->message[0] ? r->message : strerror(r->error));
        _cleanup_free_ char *data = NULL, *out = NULL;
        size_t n = 0, olen = strlen(c->old_s), out_len = 0;
        bool cut = false;
        int e = slurp(c->out_fd, r, INIT_FILES_READ_MAX, &data, &n, &cut);
        c->out_fd = rtn_safe_close(c->out_fd);
        if (e < 0)
                return finish_error(c, "read %s: %s", c->shown, strerror(-e));
        if (cut)
                return finish_error(c, "%s is larger than %u MiB; edit it with shell_run", c->shown,
                                    INIT_FILES_READ_MAX >> 20);
        size_t count = rt_text_count(data, n, c->old_s, olen);
        if (count == 0)
                return finish_error(c,
                                    "old_string was not found in %s (0 matches); file_read "
                                    "it and copy the text exactly, whitespace included",
                                    c->shown);
        if (count > 1 && !c->all)
                return finish_error(c,
                                    "old_string occurs %zu times in %s; add surrounding "
                                    "lines to make it unique, or set replace_all",
                                    count, c->shown);
        e = rt_text_replace(data, n, c->old_s, olen, c->new_s, strlen(c->new_s), c->all,
                            INIT_FILES_WRITE_MAX, &out, &out_len, &c->replacements);
        if (e < 0)
                return finish_error(c, "edit %s: %s", c->shown,
                                    e == -E2BIG ? "the result would exceed 8 MiB" : strerror(-e));
        _cleanup_close_ int fd = memfd_with(out, out_len);
        if (fd < 0)
                return finish_error(c, "memfd: %s", strerror(-fd));
        /* The file must still be the one just read: an edit never lands on a replacement. */
        struct rt_files_op op = {.op = INIT_FILES_WRITE,
                                 .fd = fd,
                                 .flags = INIT_FILES_MUST_EXIST | INIT_FILES_CHECK_ID,
                                 .expect_dev = r->dev,
                                 .expect_ino = r->ino};
        send_op(c, &op, write_done);
}

int serve_file_edit(struct serve *sv, struct mcp_call *call, const char *tool,
                    const struct mcp_args *a) {
        struct fctx *c = fctx_new(sv, call, a, "path");
        if (!c)
                return -ENOMEM;
        if (mcp_args_str(a, "old_string", &c->old_s) < 0 ||
            mcp_args_str(a, "new_string", &c->new_s) < 0) {
                fctx_free(c);
                return -EINVAL;
        }
        (void)mcp_args_bool(a, "replace_all", &c->all);
        if (!strcmp(c->old_s, c->new_s)) {
                finish_error(c, "old_string and new_string are the same: nothing to change");
                return 0;
        }
        return send_read(c, edit_read_done);
}

/* ---- file_list, file_search ------------------------------------------------------------ */

struct rec {
        const char *rel, *text;
        uint16_t rlen, tlen;
        char type;
        uint64_t num; /* size or line */
        size_t order;
};

static int rec_cmp(const void *a, const void *b) {
        const struct rec *x = a, *y = b;
        size_t n = x->rlen < y->rlen ? x->rlen : y->rlen;
        int c = memcmp(x->rel, y->rel, n);
        if (c == 0 && x->rlen != y->rlen)
                c = x->rlen < y->rlen ? -1 : 1;
        if (c == 0)
                c = x->order < y->order ? -1 : 1;
        return c;
}

/* Splits the server's records (untrusted: every length is checked) into recs. */
static size_t parse_recs(const char *buf, size_t len, bool search, struct rec *recs, size_t max) {
        size_t n = 0, hdr = search ? 8 : 11;
        for (size_t off = 0; off + hdr <= len && n < max; n++) {
                struct rec *r = &recs[n];
                const unsigned char *p = (const unsigned char *)buf + off;
                if (search) {
                        uint32_t line;
                        memcpy(&line, p, 4);
                        memcpy(&r->rlen, p + 4, 2);
                        memcpy(&r->tlen, p + 6, 2);
                        r->num = line;
                } else {
                        r->type = (char)p[0];
                        memcpy(&r->num, p + 1, 8);
                        memcpy(&r->rlen, p + 9, 2);
                        r->tlen = 0;
                }
                if (off + hdr + r->rlen + r->tlen > len)
                        break;
                r->rel = buf + off + hdr;
                r->text = r->rel + r->rlen;
                r->order = n;
                off += hdr + r->rlen + r->tlen;
        }
        return n;
}

static void json_joined(struct rtn_json_buf *b, const char *shown, const struct rec *r) {
        size_t sl = strlen(shown);
        while (sl > 1 && shown[sl - 1] == '/')
                sl--;
        if (r->rlen == 0)
                rtn_json_strn(b, shown, sl);
        else
                rtn_json_strf(b, "%.*s%s%.*s", (int)sl, shown, sl == 1 ? "" : "/", (int)r->rlen,
                              r->rel);
}

static const char *type_name(char t) {
        return t == 'f' ? "file" : t == 'd' ? "dir" : t == 'l' ? "symlink" : "other";
}

int serve_files_walk_json(struct rtn_json_buf *b, const char *shown, bool search, const char *buf,
                          size_t len, uint64_t count, bool truncated) {
        _cleanup_free_ struct rec *recs = calloc(LIST_MAX, sizeof *recs);
        if (!recs)
                return -ENOMEM;
        size_t n = parse_recs(buf, len, search, recs, LIST_MAX);
        qsort(recs, n, sizeof *recs, rec_cmp);
        rtn_json_obj_begin(b);
        if (!search)
                rtn_json_kv_str(b, "path", shown);
        rtn_json_key(b, search ? "matches" : "entries");
        rtn_json_arr_begin(b);
        for (size_t i = 0; i < n; i++) {
                rtn_json_obj_begin(b);
                rtn_json_key(b, "path");
                json_joined(b, shown, &recs[i]);
                if (search) {
                        rtn_json_kv_int(b, "line", (int64_t)recs[i].num);
                        rtn_json_key(b, "text");
                        rtn_json_strn(b, recs[i].text, recs[i].tlen);
                } else {
                        rtn_json_kv_str(b, "type", type_name(recs[i].type));
                        rtn_json_kv_int(b, "size",
                                        (int64_t)(recs[i].num > INT64_MAX ? 0 : recs[i].num));
                }
                rtn_json_obj_end(b);
        }
        rtn_json_arr_end(b);
        rtn_json_kv_bool(b, "truncated", truncated || n < count);
        rtn_json_obj_end(b);
        return 0;
}

static void walk_done(void *ud, const struct rt_files_reply *r, bool search) {
        struct fctx *c = ud;
        if (r->error)
                return finish_error(c, "%s", r->message[0] ? r->message : strerror(r->error));
        size_t len = r->size < INIT_FILES_OUT_MAX ? (size_t)r->size : INIT_FILES_OUT_MAX;
        _cleanup_free_ char *buf = malloc(len + 1);
        if (!buf)
                return finish_error(c, "out of memory");
        ssize_t got = pread(c->out_fd, buf, len, 0);
        struct rtn_json_buf b = RTN_JSON_BUF_INIT(0);
        if (serve_files_walk_json(&b, c->shown, search, buf, got > 0 ? (size_t)got : 0, r->count,
                                  r->flags & INIT_FILES_TRUNCATED) < 0) {
                rtn_json_buf_free(&b);
                return finish_error(c, "out of memory");
        }
        finish(c, &b);
}

static void list_done(void *ud, const struct rt_files_reply *r) {
        walk_done(ud, r, false);
}

static void search_done(void *ud, const struct rt_files_reply *r) {
        walk_done(ud, r, true);
}

static int tool_walk(struct serve *sv, struct mcp_call *call, const struct mcp_args *a,
                     bool search) {
        _cleanup_free_ char *glob = NULL, *pattern = NULL;
        struct fctx *c = fctx_new(sv, call, a, "path");
        if (!c)
                return -ENOMEM;
        int64_t depth = 1, max = search ? SEARCH_DEFAULT_MAX : LIST_MAX;
        (void)mcp_args_int(a, "depth", &depth);
        (void)mcp_args_int(a, "max_matches", &max);
        (void)mcp_args_str(a, "glob", &glob);
        if (search && mcp_args_str(a, "pattern", &pattern) < 0) {
                fctx_free(c);
                return -EINVAL;
        }
        if ((c->out_fd = memfd_create("rtn-walk", MFD_CLOEXEC)) < 0) {
                finish_error(c, "memfd: %s", strerror(errno));
                return 0;
        }
        struct rt_files_op op = {
                .op = search ? INIT_FILES_SEARCH : INIT_FILES_LIST,
                .fd = c->out_fd,
                .depth = (uint32_t)depth,
                .max = (uint32_t)(max > LIST_MAX ? LIST_MAX : max),
                .glob = glob,
                .pattern = pattern,
        };
        return send_op(c, &op, search ? search_done : list_done);
}

int serve_file_list(struct serve *sv, struct mcp_call *call, const char *tool,
                    const struct mcp_args *a) {
        return tool_walk(sv, call, a, false);
}

int serve_file_search(struct serve *sv, struct mcp_call *call, const char *tool,
                      const struct mcp_args *a) {
        return tool_walk(sv, call, a, true);
}
