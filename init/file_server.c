/* The file server: one long-lived child of rtn-init that serves rtn's file tools (file_read,
 * file_write, file_edit, file_list, file_search) from inside the sandbox. It confines itself
 * exactly as an agent command does (init/spawn.c: rlimits → credentials → capabilities →
 * no_new_privs → the agent Landlock ruleset → seccomp), so what a command in the sandbox may
 * not read or write, the tools cannot either, and it lives in the sandbox's mount namespace,
 * so no path it opens can name a host object the sandbox does not show. Every path is
 * still resolved with openat2(RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS) from an O_PATH fd of
 * "/": `..` stops at the root and /proc/self/fd/N or /proc/PID/root tricks are refused
 * (openat2(2)). Directory walks never follow symlinks (O_NOFOLLOW, AT_SYMLINK_NOFOLLOW).
 * Bulk data travels in memfds that rtn passes along (common/initproto.h); the server allocates
 * nothing per request but what regcomp needs, and each request is bounded in bytes and, with
 * alarm(2), in time: a request still running after INIT_FILES_TIMEOUT_S seconds kills the
 * server and rtn starts another. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <regex.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/exitcode.h"
#include "common/io.h"
#include "common/syscall.h"
#include "init/internal.h"
#include "init/policy.h"

#define SOCK_FD 3
#define ROOT_FD 4
#define BINARY_PROBE 8192
#define SEARCH_BYTES_MAX (1ULL << 30) /* bytes one search reads in all */
#define RESOLVE_RETRIES 16

static char reqbuf[INIT_FILES_REQ_MAX];
static char filebuf[INIT_FILES_READ_MAX]; /* bss: touched only by the server, never by PID 1 */
static struct init_files_resp resp;
static char rel[INIT_FILES_PATH_MAX]; /* path of the walk's current entry, relative */

static struct {
        int fd;
        char buf[65536];
        size_t len;
        uint64_t total, count, max;
        bool full;
} out;

static int fail(int r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(int r, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(resp.message, sizeof resp.message, fmt, ap);
        va_end(ap);
        if (n >= 0 && (size_t)n < sizeof resp.message - 2)
                snprintf(resp.message + n, sizeof resp.message - (size_t)n, ": %s", strerror(-r));
        return r;
}

/* "/workspace/PATH" for a relative path: the agent's working directory. */
static int absolute(const char *path, char *buf, size_t cap) {
        int n = path[0] == '/' ? snprintf(buf, cap, "%s", path)
                               : snprintf(buf, cap, "/workspace/%s", path);
        return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

static int resolve_at(int dirfd, const char *path, uint64_t flags, uint64_t mode) {
        /* openat2 refuses O_PATH with any flag but O_DIRECTORY, O_NOFOLLOW, O_CLOEXEC. */
        uint64_t extra = (flags & O_PATH) ? O_CLOEXEC : O_CLOEXEC | O_NOCTTY;
        struct open_how how = {.flags = flags | extra,
                               .mode = mode,
                               .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
        for (int i = 0;; i++) {
                int fd = sys_openat2(dirfd, path, &how, sizeof how);
                if (fd >= 0)
                        return fd;
                /* RESOLVE_IN_ROOT answers EAGAIN when a rename or mount raced the walk. */
                if (errno != EAGAIN || i == RESOLVE_RETRIES)
                        return negative_errno();
        }
}

static int resolve(const char *path, uint64_t flags) {
        char abs[INIT_FILES_PATH_MAX + 16];
        int r = absolute(path, abs, sizeof abs);
        return r < 0 ? r : resolve_at(ROOT_FD, abs, flags, 0);
}

/* ---- READ ------------------------------------------------------------------------------ */

/* Copies the file's first INIT_FILES_READ_MAX + 1 bytes (the one more tells rtn the rest was
 * cut) into rtn's memfd, as cat does (sendfile, else read). The read must happen here: procfs
 * checks permission when a file is read, not when it is opened (/proc/PID/stat hides a process's
 * addresses from a reader that may not ptrace it, /proc/PID/wchan its wait channel, %pK in
 * /proc/net/unix hides kernel pointers from one without CAP_SYSLOG when
 * kernel.kptr_restrict is 1), so rtn reading an fd opened here would get what rtn may see. */
static int op_read(const struct init_files_req_view *v, int out_fd) {
        if (out_fd < 0)
                return fail(-EBADMSG, "no output file");
        /* O_NONBLOCK: opening a FIFO must not hang the server; it is refused below anyway. */
        _cleanup_close_ int fd = resolve(v->path, O_RDONLY | O_NONBLOCK);
        if (fd < 0)
                return fail(fd, "cannot open %s", v->path);
        struct stat st;
        if (fstat(fd, &st) < 0)
                return fail(negative_errno(), "stat %s", v->path);
        if (S_ISDIR(st.st_mode))
                return fail(-EISDIR, "%s is a directory (file_list lists it)", v->path);
        if (!S_ISREG(st.st_mode))
                return fail(-EINVAL, "%s is not a regular file", v->path);
        uint64_t total = 0;
        bool copy = false; /* sendfile(2) copies in the kernel, half the cost of read+write */
        while (total <= INIT_FILES_READ_MAX) {
                size_t want = INIT_FILES_READ_MAX + 1 - total;
                ssize_t n = copy ? read(fd, out.buf, want < sizeof out.buf ? want : sizeof out.buf)
                                 : sendfile(out_fd, fd, NULL, want);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && !copy && total == 0 && (errno == EINVAL || errno == ENOSYS)) {
                        copy = true; /* a file without splice support: read(2) it */
                        continue;
                }
                if (n < 0)
                        return fail(negative_errno(), "read %s", v->path);
                if (n == 0)
                        break;
                int r = copy ? rtn_write_all(out_fd, out.buf, (size_t)n) : 0;
                if (r < 0)
                        return fail(r, "read %s", v->path);
                total += (uint64_t)n;
        }
        resp.size = (uint64_t)st.st_size;
        resp.count = total;
        resp.dev = st.st_dev;
        resp.ino = st.st_ino;
        resp.mode = st.st_mode;
        return 0;
}

/* ---- WRITE ----------------------------------------------------------------------------- */

/* Splits an absolute path into its directory and last component ("." and ".." refused). */
static int split(const char *abs, char *dir, size_t dcap, char *name, size_t ncap) {
        size_t len = strlen(abs);
        while (len > 1 && abs[len - 1] == '/')
                len--;
        const char *end = abs + len, *slash = end;
        while (slash > abs && slash[-1] != '/')
                slash--;
        size_t nlen = (size_t)(end - slash), dlen = (size_t)(slash - abs);
        if (nlen == 0 || nlen >= ncap || dlen >= dcap || (nlen == 1 && slash[0] == '.') ||
            (nlen == 2 && slash[0] == '.' && slash[1] == '.'))
                return -EINVAL;
        memcpy(name, slash, nlen);
        name[nlen] = '\0';
        memcpy(dir, abs, dlen);
        dir[dlen] = '\0';
        if (dlen == 0)
                strcpy(dir, "/");
        return 0;
}

struct target {
        int dirfd;
        char dir[INIT_FILES_PATH_MAX + 16];
        char name[256];
        struct stat st;
        bool exists;
};

/* Opens the target's directory; a last component that is a symlink is replaced by where it
 * points (inside the root: resolved like every other path), once, as `cat > link` would. */
static int open_target(const char *path, struct target *t) {
        char abs[INIT_FILES_PATH_MAX + 16];
        int r = absolute(path, abs, sizeof abs);
        for (int hop = 0; r == 0; hop++) {
                if (split(abs, t->dir, sizeof t->dir, t->name, sizeof t->name) < 0)
                        return fail(-EINVAL, "%s does not name a file", path);
                t->dirfd = rtn_safe_close(t->dirfd);
                if ((t->dirfd = resolve_at(ROOT_FD, t->dir, O_PATH | O_DIRECTORY, 0)) < 0)
                        return fail(t->dirfd, "cannot open the directory of %s", path);
                t->exists = fstatat(t->dirfd, t->name, &t->st, AT_SYMLINK_NOFOLLOW) == 0;
                if (!t->exists && errno != ENOENT)
                        return fail(negative_errno(), "stat %s", path);
                if (!t->exists || !S_ISLNK(t->st.st_mode))
                        return 0;
                if (hop > 0)
                        return fail(-ELOOP, "%s", path);
                _cleanup_close_ int fd = resolve_at(ROOT_FD, abs, O_PATH, 0);
                if (fd < 0)
                        return fail(fd, "%s is a symlink that does not resolve", path);
                char link[32];
                snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
                ssize_t n = readlink(link, abs, sizeof abs - 1);
                if (n <= 0 || abs[0] != '/')
                        return fail(n < 0 ? negative_errno() : -ENOENT, "resolve %s", path);
                abs[n] = '\0';
        }
        return fail(r, "%s", path);
}

static int check_target(const struct init_files_req_view *v, const struct target *t) {
        uint32_t fl = v->msg->flags;
        if (t->exists && (fl & INIT_FILES_CREATE_ONLY))
                return fail(-EEXIST, "%s exists (create_only)", v->path);
        if (!t->exists && (fl & INIT_FILES_MUST_EXIST))
                return fail(-ENOENT, "%s", v->path);
        if (t->exists && S_ISDIR(t->st.st_mode))
                return fail(-EISDIR, "%s", v->path);
        if (t->exists && !S_ISREG(t->st.st_mode))
                return fail(-EINVAL, "%s is not a regular file", v->path);
        if ((fl & INIT_FILES_CHECK_ID) && (!t->exists || t->st.st_dev != v->msg->expect_dev ||
                                           t->st.st_ino != v->msg->expect_ino))
                return fail(-ESTALE, "%s was replaced while it was being edited", v->path);
        return 0;
}

static int copy_content(int from, int to, uint64_t size) {
        for (uint64_t off = 0; off < size;) {
                size_t want = size - off < sizeof out.buf ? (size_t)(size - off) : sizeof out.buf;
                ssize_t n = pread(from, out.buf, want, (off_t)off);
                if (n <= 0)
                        return n < 0 ? negative_errno() : -EIO;
                int r = rtn_write_all(to, out.buf, (size_t)n);
                if (r < 0)
                        return r;
                off += (uint64_t)n;
        }
        return 0;
}

static int op_write(const struct init_files_req_view *v, int content_fd) {
        struct stat cst;
        if (content_fd < 0 || fstat(content_fd, &cst) < 0 || !S_ISREG(cst.st_mode) ||
            (uint64_t)cst.st_size > INIT_FILES_WRITE_MAX)
                return fail(-EBADMSG, "write request without usable content");
        struct target t = {.dirfd = -1};
        int r = open_target(v->path, &t);
        _cleanup_close_ int dirfd = t.dirfd;
        if (r < 0 || (r = check_target(v, &t)) < 0)
                return r;
        mode_t um = umask(0);
        umask(um);
        /* An existing file's set-id bits are dropped, as the kernel drops them on a write
         * (file_remove_privs): the agent's filter refuses a set-id mode anyway, and nothing
         * set-id reaches the host (docs/security-invariants.md, 14). */
        mode_t mode = t.exists                                ? t.st.st_mode & 01777
                      : (v->msg->flags & INIT_FILES_MODE_SET) ? v->msg->mode & 0777
                                                              : 0666 & ~um;
        /* A temp file next to the target, renamed over it: readers see the old or the new
         * content, never a mix (rename(2) is atomic within a directory). */
        static unsigned seq;
        char tmp[300];
        snprintf(tmp, sizeof tmp, ".%.200s.rtn-%d-%u", t.name, (int)getpid(), ++seq);
        _cleanup_close_ int fd =
                openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return fail(negative_errno(), "cannot create a file in %s", t.dir);
        if ((r = copy_content(content_fd, fd, (uint64_t)cst.st_size)) < 0) {
                fail(r, "write %s", v->path);
        } else if (fchmod(fd, mode) < 0 || fsync(fd) < 0) {
                r = fail(negative_errno(), "write %s", v->path);
        } else {
                if (t.exists)
                        (void)!fchown(fd, t.st.st_uid, t.st.st_gid); /* where we may */
                unsigned how = t.exists ? 0 : RENAME_NOREPLACE;
                if (sys_renameat2(dirfd, tmp, dirfd, t.name, how) < 0)
                        r = fail(negative_errno(), "replace %s", v->path);
        }
        if (r < 0) {
                (void)unlinkat(dirfd, tmp, 0);
                return r;
        }
        resp.size = (uint64_t)cst.st_size;
        resp.flags |= t.exists ? 0 : INIT_FILES_CREATED;
        return 0;
}

/* ---- records --------------------------------------------------------------------------- */

static int out_flush(void) {
        int r = rtn_write_all(out.fd, out.buf, out.len);
        out.len = 0;
        return r;
}

/* Appends one record; 1 when a limit is reached (the record is dropped), < 0 on error. */
static int out_put(const void *a, size_t an, const void *b, size_t bn, const void *c, size_t cn) {
        size_t n = an + bn + cn;
        if (out.count >= out.max || out.total + n > INIT_FILES_OUT_MAX) {
                out.full = true;
                return 1;
        }
        if (out.len + n > sizeof out.buf) {
                int r = out_flush();
                if (r < 0)
                        return r;
        }
        memcpy(out.buf + out.len, a, an);
        memcpy(out.buf + out.len + an, b, bn);
        memcpy(out.buf + out.len + an + bn, c, cn);
        out.len += n;
        out.total += n;
        out.count++;
        return 0;
}

static int out_list(const struct stat *st, size_t rlen) {
        struct __attribute__((packed)) {
                uint8_t type;
                uint64_t size;
                uint16_t len;
        } h = {.type = S_ISREG(st->st_mode)   ? 'f'
                       : S_ISDIR(st->st_mode) ? 'd'
                       : S_ISLNK(st->st_mode) ? 'l'
                                              : 'o',
               .size = (uint64_t)st->st_size,
               .len = (uint16_t)rlen};
        return out_put(&h, sizeof h, rel, rlen, NULL, 0);
}

/* ---- walks ----------------------------------------------------------------------------- */

typedef int (*visit_fn)(int dirfd, const char *name, const struct stat *st, size_t rlen,
                        unsigned level, const struct init_files_req_view *v);

/* Calls fn for each entry of dirfd (rel holds the entry's relative path). A positive return
 * from fn stops the whole walk. */
static int walk_dir(int dirfd, size_t rlen, unsigned level, visit_fn fn,
                    const struct init_files_req_view *v) {
        char buf[16384];
        for (;;) {
                ssize_t n = sys_getdents64(dirfd, buf, sizeof buf);
                if (n <= 0)
                        return n < 0 ? negative_errno() : 0;
                for (ssize_t off = 0; off < n;) {
                        struct dirent64 *de = (struct dirent64 *)(buf + off);
                        off += de->d_reclen;
                        const char *nm = de->d_name;
                        if (!strcmp(nm, ".") || !strcmp(nm, ".."))
                                continue;
                        size_t nl = strlen(nm), k = rlen + (rlen > 0) + nl;
                        if (k >= sizeof rel || k > UINT16_MAX)
                                continue;
                        if (rlen > 0)
                                rel[rlen] = '/';
                        memcpy(rel + rlen + (rlen > 0), nm, nl + 1);
                        struct stat st;
                        int r = 0;
                        if (fstatat(dirfd, nm, &st, AT_SYMLINK_NOFOLLOW) == 0)
                                r = fn(dirfd, nm, &st, k, level, v);
                        rel[rlen] = '\0';
                        if (r != 0)
                                return r;
                }
        }
}

static int descend(int dirfd, const char *name, size_t rlen, unsigned level, visit_fn fn,
                   const struct init_files_req_view *v) {
        _cleanup_close_ int fd =
                openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return 0; /* unreadable or swapped for a symlink: skipped, as find(1) would */
        /* A directory that opens but cannot be read (/proc/PID/fd of another domain checks
         * at readdir time) is skipped too; only a stop (> 0) ends the walk. */
        int r = walk_dir(fd, rlen, level + 1, fn, v);
        return r > 0 ? r : 0;
}

static int list_visit(int dirfd, const char *name, const struct stat *st, size_t rlen,
                      unsigned level, const struct init_files_req_view *v) {
        if (!v->glob[0] || fnmatch(v->glob, name, 0) == 0) {
                int r = out_list(st, rlen);
                if (r != 0)
                        return r;
        }
        if (S_ISDIR(st->st_mode) && level + 1 < v->msg->depth)
                return descend(dirfd, name, rlen, level, list_visit, v);
        return 0;
}

static int op_list(const struct init_files_req_view *v) {
        _cleanup_close_ int fd = resolve(v->path, O_PATH);
        if (fd < 0)
                return fail(fd, "cannot open %s", v->path);
        struct stat st;
        if (fstat(fd, &st) < 0)
                return fail(negative_errno(), "stat %s", v->path);
        rel[0] = '\0';
        if (v->msg->depth == 0 || !S_ISDIR(st.st_mode))
                return out_list(&st, 0) < 0 ? fail(-EIO, "list %s", v->path) : 0;
        _cleanup_close_ int dfd = resolve(v->path, O_RDONLY | O_DIRECTORY);
        if (dfd < 0)
                return fail(dfd, "cannot read directory %s", v->path);
        int r = walk_dir(dfd, 0, 0, list_visit, v);
        return r < 0 ? fail(r, "list %s", v->path) : 0;
}

/* ---- SEARCH ---------------------------------------------------------------------------- */

static regex_t re;
static uint64_t searched_bytes;

static int search_fd(int fd, size_t rlen) {
        /* One byte is kept for the NUL that ends the last line: each line is matched as a C
         * string, its newline replaced by a NUL (REG_STARTEND would avoid that, but musl,
         * which rtn-init is built with, lacks it). */
        ssize_t n = rtn_read_full(fd, filebuf, sizeof filebuf - 1);
        if (n <= 0)
                return 0;
        searched_bytes += (uint64_t)n;
        if (memchr(filebuf, '\0', (size_t)n < BINARY_PROBE ? (size_t)n : BINARY_PROBE))
                return 0; /* binary */
        filebuf[n] = '\0';
        uint32_t line = 0;
        for (char *p = filebuf, *end = filebuf + n; p < end; line++) {
                char *nl = memchr(p, '\n', (size_t)(end - p));
                size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
                p[len] = '\0';
                if (regexec(&re, p, 0, NULL, 0) == 0) {
                        struct __attribute__((packed)) {
                                uint32_t line;
                                uint16_t plen, tlen;
                        } h = {.line = line + 1,
                               .plen = (uint16_t)rlen,
                               .tlen = (uint16_t)(len < INIT_FILES_LINE_MAX ? len
                                                                            : INIT_FILES_LINE_MAX)};
                        int r = out_put(&h, sizeof h, rel, rlen, p, h.tlen);
                        if (r != 0)
                                return r;
                }
                p += len + 1;
        }
        return 0;
}

static int search_visit(int dirfd, const char *name, const struct stat *st, size_t rlen,
                        unsigned level, const struct init_files_req_view *v) {
        if (searched_bytes >= SEARCH_BYTES_MAX) {
                out.full = true;
                return 1;
        }
        if (S_ISDIR(st->st_mode)) {
                /* Version control internals are not the agent's text; skip them like rg. */
                if (!strcmp(name, ".git") || level + 1 >= INIT_FILES_DEPTH_MAX)
                        return 0;
                return descend(dirfd, name, rlen, level, search_visit, v);
        }
        if (!S_ISREG(st->st_mode) || (v->glob[0] && fnmatch(v->glob, name, 0) != 0))
                return 0;
        _cleanup_close_ int fd =
                openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
        struct stat fst;
        if (fd < 0 || fstat(fd, &fst) < 0 || !S_ISREG(fst.st_mode))
                return 0; /* unreadable to the sandbox user, or swapped: skipped */
        return search_fd(fd, rlen);
}

static int op_search(const struct init_files_req_view *v) {
        int r = regcomp(&re, v->pattern, REG_EXTENDED | REG_NEWLINE);
        if (r != 0) {
                char why[128];
                regerror(r, &re, why, sizeof why);
                snprintf(resp.message, sizeof resp.message, "invalid regular expression: %s", why);
                return -EINVAL;
        }
        searched_bytes = 0;
        rel[0] = '\0';
        _cleanup_close_ int fd = resolve(v->path, O_RDONLY | O_NONBLOCK);
        struct stat st;
        if (fd < 0)
                r = fail(fd, "cannot open %s", v->path);
        else if (fstat(fd, &st) < 0)
                r = fail(negative_errno(), "stat %s", v->path);
        else if (S_ISREG(st.st_mode))
                r = search_fd(fd, 0);
        else if (S_ISDIR(st.st_mode))
                r = walk_dir(fd, 0, 0, search_visit, v);
        else
                r = fail(-EINVAL, "%s is neither a file nor a directory", v->path);
        regfree(&re);
        return r < 0 ? r : 0;
}

/* ---- the loop -------------------------------------------------------------------------- */

static int dispatch(const struct init_files_req_view *v, int in_fd) {
        out.fd = in_fd;
        out.len = 0;
        out.total = out.count = 0;
        out.full = false;
        out.max = v->msg->max;
        int r;
        switch ((enum init_files_op)v->msg->hdr.type) {
        case INIT_FILES_READ:
                return op_read(v, in_fd);
        case INIT_FILES_WRITE:
                return op_write(v, in_fd);
        case INIT_FILES_LIST:
        case INIT_FILES_SEARCH:
                if (in_fd < 0)
                        return fail(-EBADMSG, "no output file");
                r = v->msg->hdr.type == INIT_FILES_LIST ? op_list(v) : op_search(v);
                if (r == 0 && (r = out_flush()) < 0)
                        fail(r, "write results");
                resp.size = out.total;
                resp.count = out.count;
                resp.flags |= out.full ? INIT_FILES_TRUNCATED : 0;
                return r;
        }
        return fail(-EBADMSG, "unknown request %u", v->msg->hdr.type);
}

static __attribute__((noreturn)) void serve(void) {
        for (;;) {
                int fds[1] = {-1};
                size_t nfds = 1;
                ssize_t n = rtn_recv_msg(SOCK_FD, reqbuf, sizeof reqbuf, fds, &nfds);
                if (n == 0 || (n < 0 && n != -EMSGSIZE))
                        _exit(0); /* rtn is gone */
                int in_fd = nfds ? fds[0] : -1;
                memset(&resp, 0, sizeof resp);
                struct init_files_req_view v;
                if (n >= (ssize_t)sizeof(struct init_msg_hdr))
                        memcpy(&resp.hdr, reqbuf, sizeof resp.hdr);
                int r;
                if (n < 0 || init_decode_files_req(reqbuf, (size_t)n, &v) < 0) {
                        r = fail(-EBADMSG, "malformed file request");
                } else {
                        alarm(INIT_FILES_TIMEOUT_S);
                        r = dispatch(&v, in_fd);
                        alarm(0);
                }
                resp.hdr.len = sizeof resp;
                resp.error = r < 0 ? -r : 0;
                if (rtn_send_msg(SOCK_FD, &resp, sizeof resp, NULL, 0) < 0)
                        _exit(0);
                rtn_safe_close(in_fd);
        }
}

/* Tells rtn why the server could not start (an unsolicited response with id 0), and dies. */
static __attribute__((noreturn)) void child_fail(const char *step, const struct rtn_error *err) {
        memset(&resp, 0, sizeof resp);
        resp.hdr.len = sizeof resp;
        resp.error = err->code ? err->code : EINVAL;
        snprintf(resp.message, sizeof resp.message, "file server: %s: %s", step, err->msg);
        (void)rtn_send_msg(SOCK_FD, &resp, sizeof resp, NULL, 0);
        _exit(RTN_EXIT_FAILURE);
}

static __attribute__((noreturn)) void child(const struct init_state *st, int sock) {
        struct rtn_error err = {0};
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        signal(SIGALRM, SIG_DFL); /* SIGPIPE stays ignored: a vanished rtn is an EPIPE */
        /* fd 3 was the control socket: ours replaces it, so the server cannot speak for init. */
        if (dup2(sock, SOCK_FD) < 0)
                _exit(RTN_EXIT_FAILURE);
        int nul = openat(AT_FDCWD, "/dev/null", O_RDWR | O_CLOEXEC);
        for (int i = 0; i < 3; i++)
                if (nul < 0 || dup2(nul, i) < 0)
                        _exit(RTN_EXIT_FAILURE);
        (void)setsid();
        if (chdir("/") < 0)
                child_fail("chdir", &(struct rtn_error){.code = errno, .msg = "/"});
        if (init_rlimits_apply(&st->cfg.limits, &err) < 0)
                child_fail("rlimits", &err);
        if (init_set_creds(st, INIT_POLICY_AGENT, &err) < 0)
                child_fail("credentials", &err);
        /* After setresuid (which resets it): no ptrace or /proc/PID/mem from the agent. */
        if (prctl(PR_SET_DUMPABLE, 0) < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                child_fail("prctl", &(struct rtn_error){.code = errno, .msg = "no_new_privs"});
        if (st->cfg.isolation != INIT_ISOLATION_NO_LANDLOCK &&
            init_landlock_enforce(st->ruleset_fd[INIT_POLICY_AGENT], &err) < 0)
                child_fail("landlock", &err);
        int root = openat(AT_FDCWD, "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root < 0 || dup3(root, ROOT_FD, O_CLOEXEC) < 0)
                child_fail("open /", &(struct rtn_error){.code = errno, .msg = "/"});
        /* Nothing of init's survives: not the signalfd, not the rulesets, not a job's fd. */
        if (sys_close_range(ROOT_FD + 1, ~0U, 0) < 0)
                child_fail("close_range", &(struct rtn_error){.code = errno, .msg = "fds"});
        if (init_seccomp_install_files(&err) < 0)
                child_fail("seccomp", &err);
        serve();
}

void init_files_start(struct init_state *st, uint64_t id) {
        struct init_status s = {.hdr = {.type = INIT_MSG_FILES_STARTED, .len = sizeof s, .id = id}};
        if (st->files_pid > 0)
                kill(st->files_pid, SIGKILL); /* reaped with the other orphans */
        st->files_pid = 0;
        int sp[2] = {-1, -1};
        pid_t pid = -1;
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0 || (pid = fork()) < 0) {
                s.error = errno;
                snprintf(s.message, sizeof s.message, "start file server: %s", strerror(errno));
        } else if (pid == 0) {
                close(sp[0]);
                child(st, sp[1]);
        } else {
                st->files_pid = pid;
        }
        rtn_safe_close(sp[1]);
        (void)init_ctl_send(&s, sizeof s, &sp[0], s.error == 0 && sp[0] >= 0);
        rtn_safe_close(sp[0]);
}
