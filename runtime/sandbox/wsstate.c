/* DIR/ws/state, the record of an overlay workspace's pending changes (runtime/sandbox/wsstate.h).
 * A small text file only rtn writes:
 *     rtn-ws 1
 *     dev DEV ino INO
 *     since SEC NSEC
 *     host PATH
 *     rec INO SEC NSEC PATH        (one per file rt_ws_apply wrote)
 * Paths are percent-encoded (bytes up to ' ', DEL and '%'), so a name with a newline stays
 * one line. It is still parsed as if it could be anything: sizes are bounded and a line that
 * does not parse makes the whole record invalid (-EBADMSG). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/clock.h"
#include "common/syscall.h"
#include "runtime/sandbox/wsprep.h"
#include "runtime/sandbox/wsstate.h"

#define STATE_MAX (64u << 20)
/* Past this many, the oldest records are dropped: a file whose record is gone is a conflict
 * if the host changed it since the start, which errs on the safe side. */
#define RECS_MAX 262144

static void encode(FILE *f, const char *s) {
        for (const unsigned char *p = (const unsigned char *)s; *p; p++)
                if (*p <= ' ' || *p == 0x7f || *p == '%')
                        fprintf(f, "%%%02x", *p);
                else
                        fputc(*p, f);
}

static int hexval(char c) {
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        return -1;
}

/* Decodes s in place; -EBADMSG on a bad escape or an encoded NUL. */
static int decode(char *s) {
        char *o = s;
        for (char *p = s; *p; p++) {
                if (*p != '%') {
                        *o++ = *p;
                        continue;
                }
                int hi = hexval(p[1]), lo = hi < 0 ? -1 : hexval(p[2]);
                if (lo < 0 || (hi == 0 && lo == 0))
                        return -EBADMSG;
                *o++ = (char)(hi * 16 + lo);
                p += 2;
        }
        *o = '\0';
        return 0;
}

void rt_ws_state_free(struct rt_ws_state *st) {
        for (size_t i = 0; i < st->nrecs; i++)
                free(st->recs[i].path);
        free(st->recs);
        st->recs = NULL;
        st->nrecs = st->cap = 0;
}

static int cmp_rec(const void *a, const void *b) {
        const struct rt_ws_record *x = a, *y = b;
        return strcmp(x->path, y->path);
}

const struct rt_ws_record *rt_ws_state_find(const struct rt_ws_state *st, const char *path) {
        struct rt_ws_record key = {.path = (char *)path};
        return st->nrecs ? bsearch(&key, st->recs, st->nrecs, sizeof key, cmp_rec) : NULL;
}

int rt_ws_state_put(struct rt_ws_state *st, const char *path, uint64_t ino, struct timespec ctime) {
        size_t lo = 0, hi = st->nrecs;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int c = strcmp(st->recs[mid].path, path);
                if (c == 0) {
                        st->recs[mid].ino = ino;
                        st->recs[mid].ctime = ctime;
                        return 0;
                }
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        if (st->nrecs >= RECS_MAX)
                return 0;
        if (st->nrecs == st->cap) {
                size_t cap = st->cap ? st->cap * 2 : 64;
                struct rt_ws_record *v = realloc(st->recs, cap * sizeof *v);
                if (!v)
                        return -ENOMEM;
                st->recs = v;
                st->cap = cap;
        }
        struct rt_ws_record *v = st->recs;
        char *p = strdup(path);
        if (!p)
                return -ENOMEM;
        memmove(&v[lo + 1], &v[lo], (st->nrecs - lo) * sizeof *v);
        v[lo] = (struct rt_ws_record){.path = p, .ino = ino, .ctime = ctime};
        st->nrecs++;
        return 0;
}

static int parse_line(char *line, struct rt_ws_state *st, unsigned *seen) {
        char *rest;
        unsigned long long a, b, c;
        int n = 0;
        if (sscanf(line, "dev %llu ino %llu%n", &a, &b, &n) == 2 && !line[n]) {
                st->dev = a;
                st->ino = b;
                *seen |= 1;
        } else if (sscanf(line, "since %llu %llu%n", &a, &b, &n) == 2 && !line[n] &&
                   b < RTN_NSEC_PER_SEC) {
                st->since = (struct timespec){.tv_sec = (time_t)a, .tv_nsec = (long)b};
                *seen |= 2;
        } else if (!strncmp(line, "host /", 6)) {
                rest = line + 5;
                if (decode(rest) < 0 || strlen(rest) >= sizeof st->host)
                        return -EBADMSG;
                strcpy(st->host, rest);
                *seen |= 4;
        } else if (sscanf(line, "rec %llu %llu %llu %n", &a, &b, &c, &n) == 3 && line[n] &&
                   c < RTN_NSEC_PER_SEC) {
                rest = line + n;
                if (decode(rest) < 0)
                        return -EBADMSG;
                struct timespec t = {.tv_sec = (time_t)b, .tv_nsec = (long)c};
                return rt_ws_state_put(st, rest, a, t);
        } else {
                return -EBADMSG;
        }
        return 0;
}

int rt_ws_state_read(const char *dir, struct rt_ws_state *ret) {
        char path[4200];
        snprintf(path, sizeof path, "%s/" RT_WS_DIR "/state", dir);
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        if (!f)
                return -errno;
        struct stat sb;
        if (fstat(fileno(f), &sb) < 0 || !S_ISREG(sb.st_mode) || sb.st_size > STATE_MAX)
                return -EBADMSG;
        struct rt_ws_state st = {0};
        _cleanup_free_ char *line = NULL;
        size_t cap = 0;
        ssize_t n = getline(&line, &cap, f);
        if (n < 0 || strcmp(line, "rtn-ws 1\n") != 0)
                return -EBADMSG;
        unsigned seen = 0;
        int r = 0;
        while (r == 0 && (n = getline(&line, &cap, f)) > 0) {
                if (line[n - 1] != '\n') {
                        r = -EBADMSG;
                        break;
                }
                line[n - 1] = '\0';
                r = parse_line(line, &st, &seen);
        }
        if (r == 0 && seen != 7)
                r = -EBADMSG;
        if (r < 0) {
                rt_ws_state_free(&st);
                return r;
        }
        *ret = st;
        return 0;
}

int rt_ws_state_write(const char *dir, const struct rt_ws_state *st, struct rtn_error *err) {
        char path[4200], tmp[4200];
        snprintf(path, sizeof path, "%s/" RT_WS_DIR "/state", dir);
        snprintf(tmp, sizeof tmp, "%s/" RT_WS_DIR "/.state.%d", dir, (int)getpid());
        _cleanup_close_ int fd =
                open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return rtn_err(err, errno, "create %s", tmp);
        FILE *f = fdopen(fd, "w");
        if (!f)
                return rtn_err(err, errno, "write %s", tmp);
        fd = -1; /* the FILE owns it now */
        fprintf(f, "rtn-ws 1\ndev %" PRIu64 " ino %" PRIu64 "\nsince %lld %ld\nhost ", st->dev,
                st->ino, (long long)st->since.tv_sec, st->since.tv_nsec);
        encode(f, st->host);
        fputc('\n', f);
        for (size_t i = 0; i < st->nrecs; i++) {
                fprintf(f, "rec %" PRIu64 " %lld %ld ", st->recs[i].ino,
                        (long long)st->recs[i].ctime.tv_sec, st->recs[i].ctime.tv_nsec);
                encode(f, st->recs[i].path);
                fputc('\n', f);
        }
        bool bad = fflush(f) != 0 || fsync(fileno(f)) != 0;
        int e = errno;
        if (fclose(f) != 0 || bad) {
                unlink(tmp);
                return rtn_err(err, bad ? e : errno, "write %s", tmp);
        }
        if (rename(tmp, path) < 0) {
                e = errno;
                unlink(tmp);
                return rtn_err(err, e, "rename %s", path);
        }
        return 0;
}

int rt_ws_open_host(const struct rt_ws_state *st, struct rtn_error *err) {
        struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                               .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
        int fd = sys_openat2(AT_FDCWD, st->host, &how, sizeof how);
        if (fd < 0)
                return rtn_err(err, errno, "open the workspace %s%s", st->host,
                               errno == ELOOP ? " (its path crosses a symlink)" : "");
        struct stat sb;
        if (fstat(fd, &sb) < 0 || sb.st_dev != st->dev || sb.st_ino != st->ino) {
                close(fd);
                return rtn_errx(err, ESTALE,
                                "the workspace %s is no longer the directory the changes "
                                "were made on (it was replaced or moved)",
                                st->host);
        }
        return fd;
}
