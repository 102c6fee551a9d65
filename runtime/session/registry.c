/* The registry of running sandboxes (runtime/session/registry.h). Each `rtn exec` and
 * `rtn serve` writes <dir>/<pid>-<start> (its pid and its start time in clock ticks since
 * boot, /proc/PID/stat field 22), a few key=value lines, and removes it at exit; a file
 * whose process is gone or is another process by now (the pid was reused: another start
 * time) is stale and is removed by the next listing.
 *
 * One directory per pid namespace (rt_registry_pidns): a pid means nothing in another, and a
 * listing there would remove a running sandbox's entry as stale.
 *
 * The directory is the user's runtime dir, which no sandbox shows (docs/architecture.md,
 * "Running sandboxes"), made 0700 and refused unless it is the caller's own directory and not
 * a symlink; entries are read without following a symlink or blocking, bounded, and only when
 * they are regular files of ours. What an entry says is shown, never acted on: a listing
 * never signals or opens what a file names. */
#include "runtime/session/registry.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/io.h"
#include "common/log.h"
#include "runtime/sandbox/rundir.h"

#define ENTRY_MAX 4096
#define LIST_MAX 1024

/* A directory of ours: made 0700 when create, then opened without following a symlink and
 * checked (owner, type, no access for others). Returns the fd. */
static int own_dir(int at, const char *name, const char *path, bool create, struct rtn_error *err) {
        /* Opened first: at every start but the first each level is there (a mkdir each was
         * three failing calls a start) */
        int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT && create) {
                if (mkdirat(at, name, 0700) < 0 && errno != EEXIST)
                        return rtn_err(err, errno, "create %s", path);
                fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        }
        if (fd < 0)
                return rtn_err(err, errno, "open %s", path);
        struct stat st;
        if (fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 077)) {
                close(fd);
                return rtn_errx(err, EPERM, "%s is not a private directory of uid %u", path,
                                (unsigned)geteuid());
        }
        return fd;
}

static int registry_fd(char *path, size_t len, bool create, struct rtn_error *err) {
        char base[512], sub[600], run[600], reg[640], ns[24];
        _cleanup_close_ int top = -1;
        if (rt_run_base(base, sizeof base)) {
                top = own_dir(AT_FDCWD, base, base, false, err);
        } else if (geteuid() == 0) {
                top = open(base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (top < 0)
                        return rtn_err(err, errno, "open %s", base);
        } else {
                top = own_dir(AT_FDCWD, base, base, create, err);
        }
        if (top < 0)
                return top;
        snprintf(sub, sizeof sub, "%s/rtn", base);
        snprintf(run, sizeof run, "%s/rtn/running", base);
        snprintf(ns, sizeof ns, "%llu", rt_registry_pidns());
        snprintf(reg, sizeof reg, "%s/%s", run, ns);
        _cleanup_close_ int rtn = own_dir(top, "rtn", sub, create, err);
        if (rtn < 0)
                return rtn;
        _cleanup_close_ int running = own_dir(rtn, "running", run, create, err);
        if (running < 0)
                return running;
        int fd = own_dir(running, ns, reg, create, err);
        if (fd >= 0 && path)
                snprintf(path, len, "%s", reg);
        return fd;
}

int rt_registry_open(bool create, struct rtn_error *err) {
        return registry_fd(NULL, 0, create, err);
}

int rt_registry_dir(char *buf, size_t len, bool create, struct rtn_error *err) {
        int fd = registry_fd(buf, len, create, err);
        if (fd < 0)
                return fd;
        close(fd);
        return 0;
}

/* Field 22 of /proc/PID/stat (starttime), 0 when the process does not exist or is not ours. */
static unsigned long long start_of(int pid) {
        char path[64], buf[1024];
        struct stat st;
        snprintf(path, sizeof path, "/proc/%d", pid);
        if (stat(path, &st) < 0 || st.st_uid != geteuid())
                return 0;
        snprintf(path, sizeof path, "/proc/%d/stat", pid);
        if (rtn_read_file_at(AT_FDCWD, path, buf, sizeof buf) <= 0)
                return 0;
        const char *p = strrchr(buf, ')'); /* comm may hold spaces and parentheses */
        unsigned long long start = 0;
        for (int field = 2; p && *p && field < 22; p++)
                if (*p == ' ')
                        field++;
        if (p)
                start = strtoull(p, NULL, 10);
        return start;
}

static int entry_pid;
static char entry_path[700];
static char entry_text[ENTRY_MAX]; /* as rt_registry_add wrote it, for rt_registry_set_sandboxes */
static size_t entry_len;

static void remove_entry(void) {
        char sock[sizeof entry_path + sizeof RT_REGISTRY_SOCK];
        if (!entry_path[0] || getpid() != entry_pid) /* not in a child rtn forked */
                return;
        snprintf(sock, sizeof sock, "%s%s", entry_path, RT_REGISTRY_SOCK);
        unlink(sock);
        unlink(entry_path);
}

/* Read once per process (the enter socket's name, then the entry's, on a start's path); a
 * child rtn forked reads its own. */
int rt_registry_self(char *buf, size_t len) {
        static int pid;
        static unsigned long long start;
        if (pid != getpid()) {
                pid = getpid();
                start = start_of(pid);
        }
        if (!start)
                return -ESRCH;
        snprintf(buf, len, "%d-%llu", pid, start);
        return 0;
}

static void put_clean(char *out, size_t cap, size_t *off, const char *s) {
        for (; *s && *off + 1 < cap; s++)
                out[(*off)++] = (unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s;
        out[*off] = '\0';
}

static void put_line(char *out, size_t cap, size_t *off, const char *key, const char *val) {
        put_clean(out, cap, off, key);
        put_clean(out, cap, off, "=");
        put_clean(out, cap, off, val ? val : "");
        if (*off + 1 < cap)
                out[(*off)++] = '\n';
        out[*off] = '\0';
}

/* Removes the entries of processes that are gone (a run SIGKILLed before its atexit), so each
 * start recovers what the last one could not clean up. By name alone (PID-START): a
 * kill(pid, 0) each, no entry opened, so N running sandboxes cost a start N cheap system
 * calls; an entry whose pid was reused stays until a listing compares its start time. */
static void sweep_dead(int dfd) {
        int fd = dup(dfd);
        DIR *d = fd < 0 ? NULL : fdopendir(fd);
        if (!d) {
                if (fd >= 0)
                        close(fd);
                return;
        }
        for (struct dirent *e; (e = readdir(d));) {
                int pid;
                unsigned long long start;
                char end[sizeof RT_REGISTRY_SOCK + 1] = "";
                int n = sscanf(e->d_name, "%d-%llu%6s", &pid, &start, end);
                if ((n == 2 || (n == 3 && !strcmp(end, RT_REGISTRY_SOCK))) && pid > 0 &&
                    kill(pid, 0) < 0 && errno == ESRCH)
                        (void)unlinkat(dfd, e->d_name, 0);
        }
        closedir(d);
}

void rt_registry_unavailable(const struct rtn_error *err) {
        if (err->code == EPERM)
                log_warn("rtn ps and rtn enter will not see this sandbox: %s", err->msg);
        else
                log_debug("not in the registry of running sandboxes: %s", err->msg);
}

int rt_registry_add(const char *kind, const char *env, const char *data_dir, int argc, char **argv,
                    struct rtn_error *err) {
        char dir[600], text[ENTRY_MAX], cmd[1024], since[32], name[64], tmp[80];
        _cleanup_close_ int dfd = registry_fd(dir, sizeof dir, true, err);
        if (dfd < 0)
                return dfd;
        sweep_dead(dfd);
        int pid = getpid();
        size_t off = 0, coff = 0;
        /* "rtn KIND", not argv[0]: a verb's getopt prefix ("rtn exec", common/usage.h) is
         * there by now. */
        put_clean(cmd, sizeof cmd, &coff, "rtn ");
        put_clean(cmd, sizeof cmd, &coff, kind);
        for (int i = 1; i < argc && coff + 2 < sizeof cmd; i++) {
                cmd[coff++] = ' ';
                cmd[coff] = '\0';
                put_clean(cmd, sizeof cmd, &coff, argv[i]);
        }
        cmd[coff] = '\0';
        snprintf(since, sizeof since, "%lld", (long long)time(NULL));
        put_line(text, sizeof text, &off, "kind", kind);
        put_line(text, sizeof text, &off, "since", since);
        put_line(text, sizeof text, &off, "env", env);
        put_line(text, sizeof text, &off, "data_dir", data_dir);
        put_line(text, sizeof text, &off, "command", cmd);
        if (rt_registry_self(name, sizeof name) < 0)
                return rtn_errx(err, ESRCH, "register in %s: /proc/%d/stat unreadable", dir, pid);
        snprintf(tmp, sizeof tmp, ".%s.tmp", name);
        _cleanup_close_ int fd =
                openat(dfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 || rtn_write_all(fd, text, off) < 0 || renameat(dfd, tmp, dfd, name) < 0) {
                int e = errno;
                unlinkat(dfd, tmp, 0);
                return rtn_err(err, e, "register in %s", dir);
        }
        bool first = !entry_path[0];
        snprintf(entry_path, sizeof entry_path, "%s/%s", dir, name);
        entry_pid = pid;
        memcpy(entry_text, text, off);
        entry_len = off;
        if (first)
                atexit(remove_entry);
        return 0;
}

int rt_registry_set_sandboxes(const char *list) {
        char text[ENTRY_MAX], tmp[sizeof entry_path + 8];
        size_t off = entry_len;
        if (!entry_path[0] || getpid() != entry_pid)
                return -ENOENT;
        memcpy(text, entry_text, off);
        put_line(text, sizeof text, &off, "sandboxes", list);
        snprintf(tmp, sizeof tmp, "%s.tmp", entry_path);
        char *slash = strrchr(tmp, '/');
        memmove(slash + 2, slash + 1, strlen(slash + 1) + 1); /* ".PID-START.tmp": no entry */
        slash[1] = '.';
        _cleanup_close_ int fd =
                open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 || rtn_write_all(fd, text, off) < 0 || rename(tmp, entry_path) < 0) {
                int e = errno;
                unlink(tmp);
                return -e;
        }
        return 0;
}

static void field(const char *text, const char *key, char *out, size_t cap) {
        size_t n = strlen(key);
        out[0] = '\0';
        for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
                if (!strncmp(l, key, n) && l[n] == '=') {
                        size_t len = strcspn(l + n + 1, "\n");
                        snprintf(out, cap, "%.*s", (int)len, l + n + 1);
                        return;
                }
}

/* Reads entry name of dfd into r; 1 when it is live, 0 when stale (removed), < 0 when it is
 * not an entry of ours (left alone). */
static int read_entry(int dfd, const char *name, struct rt_running *r) {
        int pid;
        unsigned long long start;
        char end;
        if (sscanf(name, "%d-%llu%c", &pid, &start, &end) != 2 || pid <= 0)
                return -EINVAL;
        _cleanup_close_ int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid())
                return -EPERM;
        if (start_of(pid) != start) {
                char sock[96];
                snprintf(sock, sizeof sock, "%s%s", name, RT_REGISTRY_SOCK);
                unlinkat(dfd, sock, 0); /* rtn enter's socket goes with its entry */
                unlinkat(dfd, name, 0);
                return 0;
        }
        char text[ENTRY_MAX + 1], since[32];
        ssize_t n = rtn_read_full(fd, text, ENTRY_MAX);
        if (n < 0)
                return (int)n;
        text[n] = '\0';
        r->pid = pid;
        r->start = start;
        field(text, "kind", r->kind, sizeof r->kind);
        field(text, "sandboxes", r->sandboxes, sizeof r->sandboxes);
        field(text, "since", since, sizeof since);
        r->since = strtoll(since, NULL, 10);
        field(text, "env", r->env, sizeof r->env);
        field(text, "data_dir", r->data_dir, sizeof r->data_dir);
        field(text, "command", r->command, sizeof r->command);
        return 1;
}

static int by_since(const void *a, const void *b) {
        const struct rt_running *x = a, *y = b;
        return x->since < y->since ? -1 : x->since > y->since ? 1 : x->pid - y->pid;
}

int rt_registry_list(void (*fn)(const struct rt_running *r, void *arg), void *arg,
                     struct rtn_error *err) {
        int dfd = registry_fd(NULL, 0, false, err);
        if (dfd < 0)
                return dfd == -ENOENT ? 0 : dfd;
        DIR *d = fdopendir(dfd);
        if (!d) {
                close(dfd);
                return rtn_err(err, errno, "read the registry");
        }
        _cleanup_free_ struct rt_running *all = calloc(LIST_MAX, sizeof *all);
        size_t n = 0;
        struct dirent *e;
        while (all && n < LIST_MAX && (e = readdir(d)))
                if (e->d_name[0] != '.' && read_entry(dirfd(d), e->d_name, &all[n]) == 1)
                        n++;
        closedir(d);
        if (!all)
                return rtn_errx(err, ENOMEM, "out of memory");
        qsort(all, n, sizeof *all, by_since);
        for (size_t i = 0; i < n; i++)
                fn(&all[i], arg);
        return 0;
}

int rt_registry_find(int pid, struct rt_running *ret, struct rtn_error *err) {
        int dfd = registry_fd(NULL, 0, false, err);
        if (dfd < 0 && dfd != -ENOENT)
                return dfd;
        DIR *d = dfd < 0 ? NULL : fdopendir(dfd);
        if (!d) {
                if (dfd >= 0)
                        close(dfd);
                return rtn_errx(err, ENOENT, "no sandbox of uid %u has pid %d (rtn ps lists them)",
                                (unsigned)geteuid(), pid);
        }
        char prefix[32];
        int n = snprintf(prefix, sizeof prefix, "%d-", pid);
        int r = -ENOENT;
        for (struct dirent *e; r != 1 && (e = readdir(d));)
                if (!strncmp(e->d_name, prefix, (size_t)n))
                        r = read_entry(dirfd(d), e->d_name, ret);
        closedir(d);
        if (r != 1)
                return rtn_errx(err, ENOENT, "no sandbox of uid %u has pid %d (rtn ps lists them)",
                                (unsigned)geteuid(), pid);
        return 0;
}

bool rt_registry_same_dir(const char *a, const char *b) {
        char ra[PATH_MAX], rb[PATH_MAX];
        if (realpath(a, ra) && realpath(b, rb))
                return !strcmp(ra, rb);
        return !strcmp(a, b);
}
