/* cgroup v2 for the sandbox. Our cgroup is the "0::" line of /proc/self/cgroup; the cgroup2
 * mount is found with statfs where hosts put it (/sys/fs/cgroup pure v2,
 * /sys/fs/cgroup/unified hybrid), else in /proc/self/mountinfo (find_mount). When that cgroup is
 * writable by us (root, or a subtree delegated by systemd's Delegate=yes) and the memory or the
 * pids controller can be enabled for our children, every sandbox gets a child cgroup
 * rtn-<pid>-<n> of it, created before clone3 and entered with CLONE_INTO_CGROUP, so no task of
 * the sandbox ever runs outside it, and memory.max (with memory.swap.max 0) and pids.max are
 * written there. With neither controller (a hybrid host's v2 hierarchy) the sandbox stays in
 * rtn's cgroup unless RTN_CGROUP=always asks for one all the same (accounting: cpu.stat,
 * pressure files); RTN_CGROUP=never keeps every sandbox in rtn's cgroup. cgroup.kill ends
 * everything in a child cgroup at once should anything be left. At teardown (PID 1
 * reaped, so usually empty) one rmdir, else cgroup.kill, the wait and rmdir; where rtn does
 * not wait for PID 1 (rt_cgroup_release), a forked cleaner does that; the cgroups of an rtn
 * that died (SIGKILL) are removed by the next rtn that sets up here (sweep_stale).
 * Kernel documentation: Documentation/admin-guide/cgroup-v2.rst. */
#include <dirent.h>
#include <linux/magic.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/io.h"
#include "common/syscall.h"
#include "runtime/internal.h"

/* What the first sandbox of this process found and set up; rtn is single-threaded. */
static struct {
        bool done;
        bool open; /* our cgroup is writable and dir_fd open */
        bool use; /* sandboxes get a child cgroup */
        bool bad_mode; /* RTN_CGROUP is not one of its values (why says so) */
        bool memory, pids; /* the controller is enabled for our children */
        int dir_fd; /* O_PATH of our cgroup (the sandboxes' parent) */
        unsigned counter;
        char why[RT_CGROUP_WHY]; /* why no child cgroup at all (!use) */
        char why_memory[RT_CGROUP_WHY], why_pids[RT_CGROUP_WHY];
} cg = {.dir_fd = -1};

/* Undoes mountinfo's octal escapes (\040 for a space) in place. */
static void unescape(char *s) {
        char *o = s;
        for (; *s; s++) {
                if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
                    s[3] >= '0' && s[3] <= '7') {
                        *o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
                        s += 3;
                } else {
                        *o++ = *s;
                }
        }
        *o = '\0';
}

/* Whether the cgroup.procs file at path lists pid. */
static bool lists_pid(const char *path, pid_t pid) {
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        long p;
        while (f && fscanf(f, "%ld", &p) == 1)
                if (p == (long)pid)
                        return true;
        return false;
}

/* The directory of our cgroup (self, the 0:: path) below a cgroup2 mount at mnt that shows
 * root at its top ("/" unless a container bound a subtree there). */
static void cgroup_dir(const char *mnt, const char *root, const char *self, char *ret, size_t len) {
        size_t rl = strcmp(root, "/") == 0 ? 0 : strlen(root);
        const char *rel = self;
        if (rl && strncmp(self, root, rl) == 0 && (self[rl] == '/' || self[rl] == '\0'))
                rel += rl;
        snprintf(ret, len, "%s%s", mnt, strcmp(rel, "/") == 0 ? "" : rel);
}

/* The cgroup2 mount of our mount namespace (proc(5), /proc/pid/mountinfo) below which our
 * cgroup self is found, i.e. lists our pid: a mount covered by another one at the same
 * place (a container's bind of its subtree over the host's mount) is passed over. Without
 * such a mount (or without self), the first cgroup2 mount. */
static int find_mount(const char *self, char *ret_mnt, size_t mlen, char *ret_root, size_t rlen) {
        _cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
        if (!f)
                return negative_errno();
        char line[4096];
        bool found = false;
        while (fgets(line, sizeof line, f)) {
                char root[1024], mnt[1024], fstype[64], dir[4400], procs[4416];
                const char *sep = strstr(line, " - ");
                if (!sep || sscanf(sep, " - %63s", fstype) != 1 || strcmp(fstype, "cgroup2") != 0)
                        continue;
                if (sscanf(line, "%*s %*s %*s %1023s %1023s", root, mnt) != 2)
                        continue;
                unescape(root);
                unescape(mnt);
                if (!found) {
                        snprintf(ret_mnt, mlen, "%s", mnt);
                        snprintf(ret_root, rlen, "%s", root);
                        found = true;
                }
                if (!self)
                        break;
                cgroup_dir(mnt, root, self, dir, sizeof dir);
                snprintf(procs, sizeof procs, "%s/cgroup.procs", dir);
                if (lists_pid(procs, getpid())) {
                        snprintf(ret_mnt, mlen, "%s", mnt);
                        snprintf(ret_root, rlen, "%s", root);
                        break;
                }
        }
        return found ? 0 : -ENOENT;
}

/* /proc/self/cgroup, read once per probe: find_self and on_v1 both look at it. */
static char self_lines[8192];

static int read_self_lines(void) {
        _cleanup_close_ int fd = open("/proc/self/cgroup", O_RDONLY | O_CLOEXEC);
        ssize_t n = fd < 0 ? -1 : read(fd, self_lines, sizeof self_lines - 1);
        self_lines[n > 0 ? n : 0] = '\0';
        return n < 0 ? negative_errno() : 0;
}

/* Our cgroup in the v2 hierarchy: the "0::PATH" line of /proc/self/cgroup (cgroups(7)). */
static int find_self(char *ret, size_t len) {
        int r = read_self_lines();
        if (r < 0)
                return r;
        for (const char *line = self_lines; *line;) {
                size_t n = strcspn(line, "\n");
                if (strncmp(line, "0::", 3) == 0) {
                        snprintf(ret, len, "%.*s", (int)(n - 3), line + 3);
                        return 0;
                }
                line += n + (line[n] == '\n');
        }
        return -ENOENT;
}

/* Whether word is one of the space-separated words of list. */
static bool has_word(const char *list, const char *word) {
        size_t n = strlen(word);
        for (const char *p = list; (p = strstr(p, word)); p += n)
                if ((p == list || p[-1] == ' ') && (p[n] == '\0' || p[n] == ' ' || p[n] == '\n'))
                        return true;
        return false;
}

static void read_words(const char *dir, const char *file, char *buf, size_t len) {
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", dir, file);
        if (rtn_read_file_at(AT_FDCWD, path, buf, len) < 0)
                buf[0] = '\0';
        buf[strcspn(buf, "\n")] = '\0';
}

/* The usual places of the cgroup2 mount, before mountinfo: statfs is cheap, while reading
 * /proc/self/mountinfo costs ~0.1 ms here (the kernel formats every mount, cgroup v1 ones
 * included). A place counts only when our cgroup below it (self, the 0:: path) lists our
 * pid, which a mount that shows a subtree at its top (a container's) would not: that case,
 * and any other place, is left to find_mount. Our cgroup being the root ("/") is the
 * mount's top, whatever the mount shows. */
static bool find_mount_fast(const char *self, char *ret_mnt, size_t mlen) {
        static const char *const places[] = {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"};
        for (size_t i = 0; i < sizeof places / sizeof places[0]; i++) {
                struct statfs sf;
                if (statfs(places[i], &sf) < 0 || sf.f_type != CGROUP2_SUPER_MAGIC)
                        continue;
                char procs[4400];
                snprintf(procs, sizeof procs, "%s%s/cgroup.procs", places[i],
                         strcmp(self, "/") == 0 ? "" : self);
                if (strcmp(self, "/") != 0 && !lists_pid(procs, getpid()))
                        return false;
                snprintf(ret_mnt, mlen, "%s", places[i]);
                return true;
        }
        return false;
}

int rt_cgroup_probe(struct rt_cgroup_state *ret) {
        struct rt_cgroup_state s = {0};
        char root[1024] = "/";
        bool have_self = find_self(s.self, sizeof s.self) == 0;
        if (!(have_self && find_mount_fast(s.self, s.mount, sizeof s.mount)) &&
            find_mount(have_self ? s.self : NULL, s.mount, sizeof s.mount, root, sizeof root) < 0) {
                snprintf(s.why, sizeof s.why,
                         "no cgroup v2 hierarchy is mounted (no cgroup2 line in "
                         "/proc/self/mountinfo)");
                *ret = s;
                return 0;
        }
        if (!have_self) {
                snprintf(s.why, sizeof s.why, "no cgroup v2 entry (0::) in /proc/self/cgroup");
                *ret = s;
                return 0;
        }
        cgroup_dir(s.mount, root, s.self, s.dir, sizeof s.dir);
        read_words(s.dir, "cgroup.controllers", s.controllers, sizeof s.controllers);
        read_words(s.dir, "cgroup.subtree_control", s.subtree, sizeof s.subtree);
        s.memory = has_word(s.controllers, "memory");
        s.pids = has_word(s.controllers, "pids");
        s.memory_on = has_word(s.subtree, "memory");
        s.pids_on = has_word(s.subtree, "pids");
        char procs[4400];
        snprintf(procs, sizeof procs, "%s/cgroup.procs", s.dir);
        /* A delegated subtree (systemd's Delegate=yes) hands over the directory and its
         * cgroup.procs; both are needed to create a child and move a task into it. */
        s.writable = faccessat(AT_FDCWD, s.dir, W_OK, AT_EACCESS) == 0 &&
                     faccessat(AT_FDCWD, procs, W_OK, AT_EACCESS) == 0;
        if (!s.writable)
                snprintf(s.why, sizeof s.why,
                         "cgroup %s (%s) is not writable by uid %u: not delegated to us "
                         "(systemd-run --user -p Delegate=yes --scope rtn ... delegates one)",
                         s.self, s.dir, (unsigned)geteuid());
        *ret = s;
        return 0;
}

const struct rt_cgroup_state *rt_cgroup_probed(void) {
        static struct rt_cgroup_state s;
        static bool done;
        if (!done)
                (void)rt_cgroup_probe(&s);
        done = true;
        return &s;
}

/* Whether rtn is the only process in the cgroup directory dirfd. */
static bool alone_in(int dirfd) {
        char buf[256];
        if (rtn_read_file_at(dirfd, "cgroup.procs", buf, sizeof buf) < 0)
                return false;
        char *end;
        long pid = strtol(buf, &end, 10);
        return pid == getpid() && (*end == '\0' || (*end == '\n' && end[1] == '\0'));
}

bool rt_cgroup_alone(const struct rt_cgroup_state *s) {
        _cleanup_close_ int fd = open(s->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        return fd >= 0 && alone_in(fd);
}

/* cgroup v2's no-internal-process rule: a cgroup other than the root that holds processes
 * cannot enable domain controllers for its children (EBUSY). When rtn is the only process
 * in its cgroup (a systemd-run --scope or a Delegate=yes service of its own), rtn moves
 * itself into a leaf child rtn-<pid>, as crun and systemd's users do; the leaf goes when
 * rtn does (sweep_stale of the next rtn). Other processes are not ours to move: then the
 * controllers stay off and the reason says so. */
static int enable(const struct rt_cgroup_state *s, const char *ctrl, char *why, size_t len) {
        char req[32];
        snprintf(req, sizeof req, "+%s", ctrl);
        int r = rtn_write_file_at(cg.dir_fd, "cgroup.subtree_control", req);
        if (r == -EBUSY && alone_in(cg.dir_fd)) {
                char leaf[32], pid[16];
                snprintf(leaf, sizeof leaf, "rtn-%d", (int)getpid());
                snprintf(pid, sizeof pid, "%d", (int)getpid());
                r = mkdirat(cg.dir_fd, leaf, 0755) < 0 && errno != EEXIST ? negative_errno() : 0;
                if (r == 0) {
                        char procs[64];
                        snprintf(procs, sizeof procs, "%s/cgroup.procs", leaf);
                        r = rtn_write_file_at(cg.dir_fd, procs, pid);
                }
                if (r == 0)
                        r = rtn_write_file_at(cg.dir_fd, "cgroup.subtree_control", req);
        }
        if (r == -EBUSY)
                snprintf(why, len,
                         "cgroup %s holds processes other than rtn, and cgroup v2's "
                         "no-internal-process rule forbids enabling the %s controller for "
                         "its children",
                         s->self, ctrl);
        else if (r < 0)
                snprintf(why, len, "enabling the %s controller in %s/cgroup.subtree_control: %s",
                         ctrl, s->dir, strerror(-r));
        return r;
}

/* Whether a cgroup v1 hierarchy holds ctrl: a "N:ctrl[,ctrl...]:path" line of
 * /proc/self/cgroup with N > 0 (cgroups(7)). A controller is bound to one version only. */
static bool on_v1(const char *ctrl) {
        char copy[sizeof self_lines];
        memcpy(copy, self_lines, sizeof copy);
        char *save_line = NULL;
        for (char *line = strtok_r(copy, "\n", &save_line); line;
             line = strtok_r(NULL, "\n", &save_line)) {
                char *list = strchr(line, ':'), *end, *save = NULL;
                if (strncmp(line, "0:", 2) == 0 || !list || !(end = strchr(++list, ':')))
                        continue;
                *end = '\0';
                for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save))
                        if (strcmp(t, ctrl) == 0)
                                return true;
        }
        return false;
}

static void plan_controller(const struct rt_cgroup_state *s, const char *ctrl, bool listed,
                            bool enabled, bool *ret_on, char *why, size_t len) {
        *ret_on = false;
        if (!listed) {
                snprintf(why, len,
                         "the %s controller is not available in cgroup %s (cgroup.controllers: "
                         "%s%s)",
                         ctrl, s->dir, s->controllers[0] ? s->controllers : "empty",
                         on_v1(ctrl) ? "; it is bound to a cgroup v1 hierarchy" : "");
                return;
        }
        if (enabled || enable(s, ctrl, why, len) == 0)
                *ret_on = true;
}

/* Waits (up to 5 s) until no task is left in the cgroup: "populated 0" in cgroup.events,
 * whose changes poll(2) reports as POLLPRI (cgroup-v2.rst, "cgroup.events"). Tasks killed
 * a moment ago may still be exiting, and rmdir fails with EBUSY until they are gone. */
static void wait_empty(int fd) {
        _cleanup_close_ int ev = openat(fd, "cgroup.events", O_RDONLY | O_CLOEXEC);
        if (ev < 0)
                return;
        for (int i = 0; i < 50; i++) {
                char buf[256];
                ssize_t n = pread(ev, buf, sizeof buf - 1, 0);
                if (n <= 0)
                        return;
                buf[n] = '\0';
                if (strstr(buf, "populated 0"))
                        return;
                struct pollfd p = {.fd = ev, .events = POLLPRI};
                (void)poll(&p, 1, 100);
        }
}

/* Kills everything in parent/name and removes it, children first (a sandbox cannot mount
 * cgroupfs to make any, seccomp denies mount, but a stale tree is removed whole). */
static int remove_cgroup(int parent, const char *name, int depth) {
        _cleanup_close_ int fd =
                openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? 0 : negative_errno();
        /* cgroup.kill (Linux >= 5.14) SIGKILLs the whole subtree. Before 5.14 it does not
         * exist: the sandbox's tasks die with its pid namespace all the same. */
        (void)rtn_write_file_at(fd, "cgroup.kill", "1");
        int dfd = depth < 8 ? openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
        DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
        if (!d)
                rtn_safe_close(dfd);
        for (struct dirent *de; d && (de = readdir(d));)
                if (de->d_type == DT_DIR && strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
                        (void)remove_cgroup(fd, de->d_name, depth + 1);
        if (d)
                closedir(d);
        wait_empty(fd);
        for (int i = 0; i < 50; i++) {
                if (unlinkat(parent, name, AT_REMOVEDIR) == 0 || errno == ENOENT)
                        return 0;
                if (errno != EBUSY)
                        return negative_errno();
                struct timespec ts = {.tv_nsec = 20 * 1000 * 1000};
                nanosleep(&ts, NULL);
        }
        return -EBUSY;
}

/* An rtn killed by SIGKILL leaves its cgroups behind (its sandboxes die with it: their PID 1
 * has PDEATHSIG). Every rtn-<pid>[-<n>] child of ours whose rtn is gone (kill(pid, 0) says
 * ESRCH; our own pid can only be a predecessor's) is killed and removed, like the store's
 * recovery of tmp dirs. rtn processes sharing this cgroup from different pid namespaces
 * would see each other as gone: not a set-up rtn supports. */
static void sweep_stale(void) {
        int dfd = openat(cg.dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
        if (!d) {
                rtn_safe_close(dfd);
                return;
        }
        for (struct dirent *de; (de = readdir(d));) {
                int pid, end = 0;
                if (de->d_type != DT_DIR || sscanf(de->d_name, "rtn-%d%n", &pid, &end) != 1 ||
                    pid <= 0 || (de->d_name[end] != '\0' && de->d_name[end] != '-'))
                        continue;
                if (pid != getpid() && (kill(pid, 0) == 0 || errno != ESRCH))
                        continue;
                /* Held: the cleaner of rt_cgroup_release is removing it. */
                _cleanup_close_ int fd =
                        openat(cg.dir_fd, de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK)
                        continue;
                (void)remove_cgroup(cg.dir_fd, de->d_name, 0);
        }
        closedir(d);
}

int rt_cgroup_mode(void) {
        const char *m = getenv("RTN_CGROUP");
        if (!m || !*m || strcmp(m, "auto") == 0)
                return RT_CGROUP_AUTO;
        if (strcmp(m, "always") == 0)
                return RT_CGROUP_ALWAYS;
        if (strcmp(m, "never") == 0)
                return RT_CGROUP_NEVER;
        return -EINVAL;
}

/* A child cgroup is made when a controller is there to enforce a limit with (RTN_CGROUP
 * auto): one without any would give rtn nothing it uses (the pid namespace already ends
 * every task) and cost every start a cgroup's creation and removal. */
static void prepare(void) {
        if (cg.done)
                return;
        cg.done = true;
        int mode = rt_cgroup_mode();
        if (mode < 0) {
                cg.bad_mode = true;
                snprintf(cg.why, sizeof cg.why, "RTN_CGROUP=%.64s is not auto, always or never",
                         getenv("RTN_CGROUP"));
                return;
        }
        if (mode == RT_CGROUP_NEVER) {
                snprintf(cg.why, sizeof cg.why, "RTN_CGROUP=never");
                return;
        }
        const struct rt_cgroup_state *s = rt_cgroup_probed();
        if (!s->writable) {
                snprintf(cg.why, sizeof cg.why, "%s", s->why);
                return;
        }
        cg.dir_fd = open(s->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (cg.dir_fd < 0) {
                snprintf(cg.why, sizeof cg.why, "open cgroup %s: %s", s->dir, strerror(errno));
                return;
        }
        plan_controller(s, "memory", s->memory, s->memory_on, &cg.memory, cg.why_memory,
                        sizeof cg.why_memory);
        plan_controller(s, "pids", s->pids, s->pids_on, &cg.pids, cg.why_pids, sizeof cg.why_pids);
        cg.open = true;
        cg.use = mode == RT_CGROUP_ALWAYS || cg.memory || cg.pids;
        /* Only a start that makes a cgroup sweeps: one that makes none would list the
         * directory for nothing (tests/integration/exec_coldpath.sh), and a killed rtn's
         * sandbox died with its PID 1 all the same; what it left is an empty directory. */
        if (cg.use)
                sweep_stale();
}

void rt_limits_choose(struct rt_spec *spec, bool pids_asked, struct rt_limit_warnings *w) {
        w->memory[0] = w->pids[0] = '\0';
        const char *why_mem = cg.why_memory, *why_pids = cg.why_pids;
        bool mem = false, pids = false;
        if (spec->isolation == INIT_ISOLATION_LANDLOCK) {
                why_mem = why_pids = "--isolation landlock runs without a cgroup of its own";
        } else {
                prepare();
                mem = cg.memory;
                pids = cg.pids;
                if (!cg.open)
                        why_mem = why_pids = cg.why;
        }
        if (spec->memory_bytes && !mem) {
                /* RLIMIT_DATA bounds each process's private writable memory, not the sandbox's:
                 * weaker (N processes may use N times it; shared mappings and tmpfs are not
                 * counted). Not RLIMIT_AS: it counts reservations never touched, and V8 died
                 * at start under it (docs/policy.md, "Resource limits"). */
                spec->limits.data_bytes = spec->memory_bytes;
                snprintf(w->memory, sizeof w->memory,
                         "memory limit is RLIMIT_DATA per process, not a cgroup memory.max for the "
                         "sandbox: %s",
                         why_mem);
        }
        if (pids_asked && !pids && spec->isolation != INIT_ISOLATION_LANDLOCK)
                snprintf(w->pids, sizeof w->pids,
                         "process limit is the pid namespace's pid_max, not a cgroup pids.max: %s",
                         why_pids);
}

static int write_limits(const struct rt_cgroup *c, const struct rt_spec *spec,
                        struct rtn_error *err) {
        char val[32];
        int r;
        if (cg.memory && spec->memory_bytes) {
                snprintf(val, sizeof val, "%llu", (unsigned long long)spec->memory_bytes);
                if ((r = rtn_write_file_at(c->fd, "memory.max", val)) < 0)
                        return rtn_err(err, r, "write %s to %s/memory.max", val, c->name);
                /* Without it the limit would be dodged by swapping out (memory.swap.max is
                 * absent without swap accounting: then there is nothing to dodge with). */
                r = rtn_write_file_at(c->fd, "memory.swap.max", "0");
                if (r < 0 && r != -ENOENT)
                        return rtn_err(err, r, "write 0 to %s/memory.swap.max", c->name);
        }
        if (cg.pids) {
                snprintf(val, sizeof val, "%u", spec->pids_max);
                if ((r = rtn_write_file_at(c->fd, "pids.max", val)) < 0)
                        return rtn_err(err, r, "write %s to %s/pids.max", val, c->name);
        }
        return 0;
}

int rt_cgroup_create(const struct rt_spec *spec, struct rt_cgroup *ret, struct rtn_error *err) {
        prepare();
        struct rt_cgroup c = {.fd = -1};
        if (cg.bad_mode)
                return rtn_errx(err, EINVAL, "%s", cg.why);
        if (!cg.use) {
                *ret = c;
                return 0;
        }
        /* A name can be taken by a predecessor with our pid whose cleaner is still at work
         * (sweep_stale leaves it alone): the next one is free. */
        int r;
        for (int tries = 0;; tries++) {
                snprintf(c.name, sizeof c.name, "rtn-%d-%u", (int)getpid(), cg.counter++);
                r = mkdirat(cg.dir_fd, c.name, 0755) < 0 ? -errno : 0;
                if (r != -EEXIST || tries == 63)
                        break;
        }
        if (r < 0)
                return rtn_err(err, -r, "create cgroup %s", c.name);
        c.on = true;
        /* Not O_PATH: clone3's CLONE_INTO_CGROUP takes a real open of the directory. */
        c.fd = openat(cg.dir_fd, c.name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        r = c.fd < 0 ? rtn_err(err, errno, "open cgroup %s", c.name) : 0;
        if (r == 0)
                r = write_limits(&c, spec, err);
        if (r < 0) {
                rt_cgroup_destroy(&c);
                return r;
        }
        *ret = c;
        return 0;
}

/* Closes every fd but the n in keep (which it sorts). */
static void close_all_but(int *keep, size_t n) {
        for (size_t i = 1; i < n; i++)
                for (size_t k = i; k > 0 && keep[k - 1] > keep[k]; k--) {
                        int t = keep[k];
                        keep[k] = keep[k - 1];
                        keep[k - 1] = t;
                }
        unsigned from = 0;
        for (size_t i = 0; i < n; i++) {
                if (keep[i] < 0 || (unsigned)keep[i] < from)
                        continue;
                if ((unsigned)keep[i] > from)
                        (void)sys_close_range(from, (unsigned)keep[i] - 1, 0);
                from = (unsigned)keep[i] + 1;
        }
        (void)sys_close_range(from, ~0U, 0);
}

/* A sandbox whose PID 1 (pidfd) was just sent SIGKILL, with nothing else left in it (rtn
 * exec's end, rt_sandbox_release): its cgroup empties only once rtn-init has finished
 * exiting, which is the namespaces' teardown (unmounts, RCU grace periods). Rather than wait
 * for it, a forked cleaner waits for rtn-init's end on the pidfd (immediate, where
 * cgroup.events is notified at most every 10 ms), removes the cgroup, and falls back to
 * destroy's way; rtn goes on. The cleaner holds an exclusive flock of the cgroup's
 * directory, taken before the fork so that no moment is left without it: another rtn's
 * sweep_stale, finding the lock held, leaves the cgroup to it instead of waiting too;
 * should the cleaner die, the lock goes with it and the next sweep removes the cgroup.
 * Without fork, destroy's wait. */
void rt_cgroup_release(struct rt_cgroup *c, int pidfd) {
        if (!c->on)
                return;
        c->on = false;
        if (unlinkat(cg.dir_fd, c->name, AT_REMOVEDIR) == 0 || errno == ENOENT) {
                c->fd = rtn_safe_close(c->fd);
                return;
        }
        pid_t pid = flock(c->fd, LOCK_EX) == 0 ? fork() : -1;
        if (pid != 0) {
                c->fd = rtn_safe_close(c->fd);
                if (pid < 0)
                        (void)remove_cgroup(cg.dir_fd, c->name, 0);
                return;
        }
        /* Nothing else of rtn's stays open: a caller reading rtn's output to EOF must not
         * wait for the cleaner. */
        close_all_but((int[]){c->fd, cg.dir_fd, pidfd}, 3);
        /* rtn blocks the signals it reads from its signalfd: the cleaner takes them as any
         * process does (Ctrl-C, a unit's SIGTERM). Killed, it leaves the cgroup to the next
         * rtn's sweep. */
        sigset_t none;
        sigemptyset(&none);
        (void)sigprocmask(SIG_SETMASK, &none, NULL);
        struct pollfd p = {.fd = pidfd, .events = POLLIN};
        if (pidfd >= 0)
                (void)poll(&p, 1, 5000);
        if (unlinkat(cg.dir_fd, c->name, AT_REMOVEDIR) == 0 || errno == ENOENT)
                _exit(0);
        _exit(remove_cgroup(cg.dir_fd, c->name, 0) < 0);
}

void rt_cgroup_destroy(struct rt_cgroup *c) {
        if (!c->on)
                return;
        c->fd = rtn_safe_close(c->fd);
        /* Usually the sandbox's PID 1 has just been reaped, and with it every task of its pid
         * namespace: the cgroup is empty and a plain rmdir removes it. Anything else (EBUSY:
         * tasks left, a start that failed half-way; ENOTEMPTY: child cgroups) goes through
         * cgroup.kill and the wait. */
        if (unlinkat(cg.dir_fd, c->name, AT_REMOVEDIR) < 0 && errno != ENOENT)
                (void)remove_cgroup(cg.dir_fd, c->name, 0);
        c->on = false;
}
