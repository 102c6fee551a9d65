/* `rtn undo`: the `rtn exec --keep` runs as steps of an environment's pending changes
 * (runtime/session/pending.h). The checkpoints are env_undo's (runtime/session/ckpt.c, one
 * mechanism), with the pending dir in the place of a session's tmpfs: pending/<env>/undo/
 * holds the shadow of the pending changes (upper/, an overlay workspace's ws/upper) as the
 * last run left them and, per run, the old versions of what the run changed. A run's end
 * merges its tmpfs over the pending changes, then seals its step (a walk of the pending
 * changes against the shadow, copying only what changed since the last seal); `rtn undo`
 * swaps the newest steps back in, newest first, and forgets them. Both hold the pending
 * lock: a run, an undo, a commit and a reset of one environment never overlap.
 *
 * undo/index, written by rtn itself beside the helper's work, names the steps:
 *
 *   rtn-undo 1 <since> <dropped>              since: rt_ckpt_now of the last seal
 *   <num> <when> <records> <bytes> <cmd>      one line per step, oldest first
 *
 * Everything the helper does with the trees is rt_ckpt's (invariant 31): below the pending
 * dir, nothing followed, no FIFO opened, device nodes refused, in a user namespace mapped
 * like the sandbox. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/io.h"
#include "common/syscall.h"
#include "runtime/session/pending.h"
#include "runtime/session/session.h"
#include "runtime/session/upper.h"

#define INDEX RT_UNDO_DIR "/index"
#define INDEX_HEAD "rtn-undo 1"
#define INDEX_MAX (1u << 20)

struct history {
        bool has; /* the shadow and the index exist */
        int64_t since;
        unsigned dropped;
        struct rt_pending_step *v; /* oldest first */
        size_t n;
};

static void step_name(char buf[16], const struct rt_pending_step *s) {
        snprintf(buf, 16, "s%u", s->num);
}

/* undo/index of the pending dir pdir; a missing or unreadable one is no history. */
static int history_read(int pdir, struct history *h) {
        *h = (struct history){0};
        _cleanup_close_ int fd = openat(pdir, INDEX, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        if (fd < 0)
                return errno == ENOENT ? 0 : negative_errno();
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > INDEX_MAX)
                return -EBADMSG;
        _cleanup_free_ char *buf = malloc((size_t)st.st_size + 1);
        if (!buf)
                return -ENOMEM;
        ssize_t len = rtn_read_full(fd, buf, (size_t)st.st_size);
        if (len < 0)
                return (int)len;
        buf[len] = '\0';
        long long since;
        int at = 0;
        if (sscanf(buf, INDEX_HEAD " %lld %u\n%n", &since, &h->dropped, &at) != 2 || !at)
                return -EBADMSG;
        h->since = since;
        for (char *line = buf + at, *nl; *line; line = nl + 1) {
                if (!(nl = strchr(line, '\n')))
                        return -EBADMSG;
                *nl = '\0';
                struct rt_pending_step s = {0};
                long long when;
                unsigned long long records, bytes;
                int cmd = 0;
                if (sscanf(line, "%u %lld %llu %llu %n", &s.num, &when, &records, &bytes, &cmd) <
                            4 ||
                    !cmd)
                        return -EBADMSG;
                s.when_sec = when, s.records = records, s.bytes = bytes;
                snprintf(s.cmd, sizeof s.cmd, "%s", line + cmd);
                struct rt_pending_step *v = realloc(h->v, (h->n + 1) * sizeof *v);
                if (!v)
                        return -ENOMEM;
                h->v = v;
                h->v[h->n++] = s;
        }
        h->has = true;
        return 0;
}

static int history_write(int pdir, const struct history *h) {
        (void)unlinkat(pdir, INDEX ".new", 0);
        _cleanup_fclose_ FILE *f = NULL;
        int fd = openat(pdir, INDEX ".new", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                        0600);
        if (fd < 0 || !(f = fdopen(fd, "w"))) {
                if (fd >= 0)
                        close(fd);
                return negative_errno();
        }
        fprintf(f, INDEX_HEAD " %lld %u\n", (long long)h->since, h->dropped);
        for (size_t i = 0; i < h->n; i++)
                fprintf(f, "%u %lld %llu %llu %s\n", h->v[i].num, (long long)h->v[i].when_sec,
                        (unsigned long long)h->v[i].records, (unsigned long long)h->v[i].bytes,
                        h->v[i].cmd);
        if (fflush(f) != 0 || ferror(f))
                return -EIO;
        return renameat(pdir, INDEX ".new", pdir, INDEX) < 0 ? negative_errno() : 0;
}

static int ckpt(const struct rt_idmap *m, int pdir, enum rt_ckpt_op op, const char *step,
                int64_t since, const char *const *spare, size_t nspare, struct rt_ckpt_report *ret,
                struct rtn_error *err) {
        /* the pending changes are the caller's, as for their merge: as their owner */
        return rt_ckpt_as_owner(m, pdir, op, step, since, spare, nspare, ret, err);
}

static void history_clear(const struct rt_idmap *m, int pdir) {
        struct rtn_error e = {0};
        (void)ckpt(m, pdir, RT_CKPT_CLEAR, NULL, 0, NULL, 0, NULL, &e);
}

/* The oldest step forgotten, its record removed. */
static void drop_oldest(const struct rt_idmap *m, int pdir, struct history *h, bool gone) {
        char name[16];
        struct rtn_error e = {0};
        step_name(name, &h->v[0]);
        if (!gone)
                (void)ckpt(m, pdir, RT_CKPT_DROP, name, 0, NULL, 0, NULL, &e);
        memmove(h->v, h->v + 1, (h->n - 1) * sizeof *h->v);
        h->n--;
        h->dropped++;
}

/* The command line, space-separated, as one line of the index. */
static void cmd_line(char buf[RT_PENDING_CMD], int argc, char *const argv[]) {
        size_t n = 0;
        buf[0] = '\0';
        for (int i = 0; i < argc && argv[i] && n + 1 < RT_PENDING_CMD; i++)
                n += (size_t)snprintf(buf + n, RT_PENDING_CMD - n, "%s%s", i ? " " : "", argv[i]);
        for (char *p = buf; *p; p++)
                if ((unsigned char)*p < 0x20 || *p == 0x7f)
                        *p = '?'; /* one line; rtn_term quotes the rest when it is printed */
        if (strlen(buf) == RT_PENDING_CMD - 1)
                memcpy(buf + RT_PENDING_CMD - 4, "...", 4);
}

/* Whether the pending dir's path (below RESOLVE_BENEATH, no symlink) is an empty
 * directory. */
static bool empty_dir(int pdir, const char *path) {
        struct open_how how = {.flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
                               .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
                                          RESOLVE_NO_MAGICLINKS};
        int fd = sys_openat2(pdir, path, &how, sizeof how);
        DIR *d = fd < 0 ? NULL : fdopendir(fd);
        if (!d) {
                if (fd >= 0)
                        close(fd);
                return false;
        }
        struct dirent *e;
        bool empty = true;
        while (empty && (e = readdir(d)))
                empty = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
        closedir(d);
        return empty;
}

/* Whether the step holds only what every run changes: the metadata of the upper's top and of
 * the sandbox's own mountpoints (rt_upper_is_skeleton), which its merge sets afresh, and
 * those mountpoints made empty. */
static bool changed_nothing(int pdir, const char *name) {
        _cleanup_free_ char *list = NULL;
        size_t len = 0;
        if (rt_ckpt_list(pdir, name, &list, &len) < 0)
                return false;
        for (size_t i = 0; i < len; i += strlen(list + i + 1) + 2) {
                const char *p = list + i + 1;
                if (!strcmp(p, "upper") && list[i] == 'M')
                        continue;
                if (strncmp(p, "upper/", 6) || !rt_upper_is_skeleton(p + 6))
                        return false;
                if (list[i] == 'A' && !empty_dir(pdir, p))
                        return false;
                if (list[i] != 'A' && list[i] != 'M')
                        return false;
        }
        return true;
}

/* Seals the run's step (since h->since), then keeps h within o's bounds. */
static int seal(const struct rt_idmap *m, int pdir, struct history *h, struct rt_pending_step *s,
                const struct rt_pending_undo_opts *o, struct rtn_error *err) {
        char name[16], spare_names[RT_UNDO_DEPTH_MAX][16];
        const char *spare[RT_UNDO_DEPTH_MAX];
        size_t nspare = 0;
        for (; nspare < h->n && nspare < RT_UNDO_DEPTH_MAX; nspare++) {
                step_name(spare_names[nspare], &h->v[nspare]);
                spare[nspare] = spare_names[nspare];
        }
        step_name(name, s);
        int64_t now = rt_ckpt_now();
        struct rt_ckpt_report rep = {0};
        int r = ckpt(m, pdir, RT_CKPT_SEAL, name, h->since, spare, nspare, &rep, err);
        for (size_t i = 0; i < rep.dropped && h->n; i++)
                drop_oldest(m, pdir, h, true);
        if (r < 0)
                return r;
        h->since = now;
        if (changed_nothing(pdir, name)) { /* a run that changed nothing is no step */
                struct rtn_error e = {0};
                (void)ckpt(m, pdir, RT_CKPT_DROP, name, 0, NULL, 0, NULL, &e);
                return 0;
        }
        s->records = rep.records;
        s->bytes = rep.bytes;
        struct rt_pending_step *v = realloc(h->v, (h->n + 1) * sizeof *v);
        if (!v)
                return rtn_errx(err, ENOMEM, "the undo history");
        h->v = v;
        h->v[h->n++] = *s;
        uint64_t total = 0;
        for (size_t i = 0; i < h->n; i++)
                total += h->v[i].bytes;
        while (h->n > o->depth || (h->n > 1 && total > o->bytes)) {
                total -= h->v[0].bytes;
                drop_oldest(m, pdir, h, false);
        }
        return 0;
}

/* Whether the data dir's filesystem has room for what the history may copy now: the new
 * versions (at most the run's tmpfs) and, for a first run, a shadow of what is pending; and
 * whether the pending changes after this run and the shadow of them stay within o->limit.
 * A history is dropped rather than filling the disk or passing --upper-size. */
static bool room(int upper_fs, const char *pending, bool has, const struct rt_pending_undo_opts *o,
                 char *note, size_t notelen) {
        uint64_t bytes = 0, inodes = 0;
        struct statvfs v;
        if (rt_upper_usage(upper_fs, &bytes, &inodes) < 0)
                return true; /* nothing to measure it by: the copies find out */
        uint64_t after = rt_upper_pending_size(pending) + bytes;
        if (o->limit && 2 * after > o->limit) {
                snprintf(note, notelen,
                         "no undo history is kept: the pending changes (about %llu MiB) and a "
                         "copy of them would pass --upper-size (%llu MiB)",
                         (unsigned long long)((after + (1 << 20) - 1) >> 20),
                         (unsigned long long)(o->limit >> 20));
                return false;
        }
        uint64_t need = bytes + inodes * 4096 + (has ? 0 : rt_upper_pending_size(pending));
        if (statvfs(pending, &v) == 0 && need > (uint64_t)v.f_bavail * v.f_frsize) {
                snprintf(note, notelen,
                         "no undo history is kept: the data dir's filesystem has %llu MiB free, "
                         "it may need %llu MiB",
                         (unsigned long long)(((uint64_t)v.f_bavail * v.f_frsize) >> 20),
                         (unsigned long long)((need + (1 << 20) - 1) >> 20));
                return false;
        }
        return true;
}

int rt_pending_keep(const struct rt_idmap *m, int upper_fs, const char *pending, int argc,
                    char *const argv[], const struct rt_pending_undo_opts *o, char *note,
                    size_t notelen, struct rtn_error *err) {
        _cleanup_close_ int pdir = open(pending, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        struct history h;
        struct rtn_error e = {0};
        note[0] = '\0';
        if (pdir < 0)
                return rtn_err(err, errno, "open %s", pending);
        int q = history_read(pdir, &h);
        bool keep = o->depth && room(upper_fs, pending, q == 0 && h.has, o, note, notelen);
        if (q < 0 || !keep) { /* a history that cannot be read is none */
                history_clear(m, pdir);
                free(h.v);
                h = (struct history){0};
        }
        if (keep && !h.has) { /* the first run since a commit: a shadow of what is pending */
                h = (struct history){.since = rt_ckpt_now()};
                if (ckpt(m, pdir, RT_CKPT_BASE, NULL, 0, NULL, 0, NULL, &e) < 0) {
                        history_clear(m, pdir);
                        snprintf(note, notelen, "no undo history is kept: %s", e.msg);
                } else
                        h.has = true;
        }
        int r = rt_upper_merge(m, upper_fs, pending, err);
        if (r < 0 || !h.has) {
                free(h.v);
                return r;
        }
        struct rt_pending_step s = {.num = h.n ? h.v[h.n - 1].num + 1 : 1,
                                    .when_sec = (int64_t)time(NULL)};
        cmd_line(s.cmd, argc, argv);
        /* The steps' old versions get what the pending changes and their shadow leave of
         * o->limit (room() saw the two fit). */
        struct rt_pending_undo_opts b = *o;
        uint64_t twice = 2 * rt_upper_pending_size(pending);
        if (o->limit && (twice >= o->limit || o->limit - twice < b.bytes))
                b.bytes = twice >= o->limit ? 0 : o->limit - twice;
        if ((r = seal(m, pdir, &h, &s, &b, &e)) < 0 || (r = history_write(pdir, &h)) < 0) {
                history_clear(m, pdir);
                snprintf(note, notelen, "the undo history was dropped: %s",
                         e.msg[0] ? e.msg : strerror(-r));
        }
        free(h.v);
        return 0;
}

/* The pending dir's fd; -ENOENT (err untouched) when the environment has none. */
static int open_pending(struct store *s, const char *env, struct rtn_error *err) {
        char dir[4096];
        if (rt_pending_path(s, env, NULL, dir, sizeof dir) < 0)
                return rtn_errx(err, ENAMETOOLONG, "data dir path too long");
        int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT)
                return -ENOENT;
        return fd < 0 ? rtn_err(err, errno, "open %s", dir) : fd;
}

int rt_pending_steps(struct store *s, const char *env, struct rt_pending_step **ret, size_t *ret_n,
                     unsigned *ret_dropped, struct rtn_error *err) {
        _cleanup_close_ int pdir = open_pending(s, env, err);
        struct history h = {0};
        if (pdir < 0 && pdir != -ENOENT)
                return pdir;
        int r = pdir >= 0 ? history_read(pdir, &h) : 0;
        if (r < 0)
                free(h.v);
        if (r < 0)
                return rtn_err(err, -r, "read the undo history of environment %s", env);
        *ret = h.v, *ret_n = h.n, *ret_dropped = h.dropped;
        return 0;
}

static int nothing(struct rtn_error *err, const char *env, unsigned n, size_t have) {
        if (!have)
                return rtn_errx(err, ENOENT,
                                "nothing to undo: no rtn exec --keep run of environment %s "
                                "since its last commit, reset or apply (or the workspace "
                                "changes an rtn serve left it)",
                                env);
        return rtn_errx(err, ENOENT,
                        "cannot undo %u runs: %zu of environment %s can be undone (rtn undo "
                        "--list); nothing was changed",
                        n, have, env);
}

int rt_pending_undo(struct store *s, const char *env, const struct rt_idmap *m, unsigned n,
                    struct rt_pending_step **ret, struct rtn_error *err) {
        _cleanup_close_ int lk = -1;
        int r = rt_pending_lock(s, env, &lk, err);
        if (r < 0)
                return r;
        _cleanup_close_ int pdir = open_pending(s, env, err);
        if (pdir < 0 && pdir != -ENOENT)
                return pdir;
        struct history h = {0};
        if (pdir >= 0 && (r = history_read(pdir, &h)) < 0) {
                free(h.v);
                return rtn_err(err, -r, "read the undo history of environment %s", env);
        }
        _cleanup_free_ struct rt_pending_step *v = h.v;
        if (!n || n > h.n)
                return nothing(err, env, n, h.n);
        struct rt_pending_step *done = calloc(n, sizeof *done);
        if (!done)
                return rtn_errx(err, ENOMEM, "undo");
        for (unsigned i = 0; i < n; i++) {
                char name[16];
                struct rtn_error e = {0};
                step_name(name, &h.v[h.n - 1]);
                if ((r = ckpt(m, pdir, RT_CKPT_SWAP, name, 0, NULL, 0, NULL, err)) < 0) {
                        history_clear(m, pdir);
                        free(done);
                        return rtn_err_wrap(err,
                                            "undo failed after %u of %u runs, and the undo "
                                            "history was dropped",
                                            i, n);
                }
                (void)ckpt(m, pdir, RT_CKPT_DROP, name, 0, NULL, 0, NULL, &e);
                done[i] = h.v[--h.n];
        }
        h.since = rt_ckpt_now();
        struct rtn_error e = {0};
        char dir[4096];
        if (history_write(pdir, &h) < 0)
                history_clear(m, pdir);
        if (rt_pending_path(s, env, NULL, dir, sizeof dir) == 0)
                (void)rt_upper_pending_measure(m, dir, &e);
        *ret = done;
        return 0;
}

void rt_pending_undo_clear(const char *pending, const struct rt_idmap *m) {
        struct rtn_error e = {0};
        (void)rt_remove_tree(m, pending, RT_UNDO_DIR, &e);
}
