/* The upper dir's clean-up before a commit (rt_upper_prune), its removal (store_rm_rf_at) and
 * its copy into a fork's new tmpfs (rt_upper_fork): all act on a tree the agent made, so none may
 * follow a symlink out of it, removal must not depend on how deep the agent made it, and
 * the copy neither refuses what the sandbox could reach nor cuts an xattr. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "runtime/session/session.h"
#include "runtime/session/upper.h"

static char top[256];

/* top/rel; two buffers in turn, so that one call can take two paths. */
static const char *at(const char *rel) {
        static char buf[2][600];
        static int k;
        k ^= 1;
        snprintf(buf[k], sizeof buf[k], "%s/%s", top, rel);
        return buf[k];
}

static void setup(void) {
        snprintf(top, sizeof top, "/tmp/rtn-upper.XXXXXX");
        cr_assert_not_null(mkdtemp(top));
}

static void teardown(void) {
        int d = open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        (void)store_rm_rf_at(d, top + strlen("/tmp/"));
        close(d);
}

TestSuite(rt_upper_prune, .init = setup, .fini = teardown);
TestSuite(store_rm_rf_at, .init = setup, .fini = teardown);
TestSuite(rt_upper_fork, .init = setup, .fini = teardown);
TestSuite(rt_ckpt, .init = setup, .fini = teardown);

/* upper/var is a symlink to a host dir holding an empty "tmp": pruning the skeleton's
 * var/tmp must not rmdir it; the skeleton's own empty dirs still go, real changes stay. */
Test(rt_upper_prune, never_follows_a_symlink_out) {
        const char *dirs[] = {"upper",          "host",      "host/tmp", "upper/home",
                              "upper/home/rtn", "upper/etc", "upper/mnt"};
        for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
                cr_assert_eq(mkdir(at(dirs[i]), 0755), 0, "%s", dirs[i]);
        cr_assert_eq(symlink(at("host"), at("upper/var")), 0);
        cr_assert_eq(close(open(at("upper/etc/changed"), O_CREAT | O_WRONLY | O_CLOEXEC, 0644)), 0);
        rt_upper_prune(at("upper"));
        struct stat st;
        cr_assert_eq(stat(at("host/tmp"), &st), 0, "the host dir behind the symlink was removed");
        cr_assert_eq(lstat(at("upper/var"), &st), 0);
        cr_assert_neq(lstat(at("upper/home"), &st), 0, "an empty skeleton dir was kept");
        cr_assert_neq(lstat(at("upper/mnt"), &st), 0, "an empty skeleton dir was kept");
        cr_assert_eq(lstat(at("upper/etc/changed"), &st), 0, "a change was removed");
}

/* 600 levels with 64 descriptors to spare: one open directory per level cannot do it. */
Test(store_rm_rf_at, deeper_than_the_fd_limit) {
        struct rlimit rl = {64, 64};
        cr_assert_eq(mkdir(at("tree"), 0755), 0);
        /* Made writable, then given their modes from the bottom up (a user, unlike root,
         * cannot make a directory in a 0555 one): levels 0555, one of mode 0. */
        static int parent[600];
        int d = open(at("tree"), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        for (int i = 0; i < 600; i++) {
                cr_assert_eq(mkdirat(d, "d", 0755), 0);
                parent[i] = d;
                cr_assert_geq(d = openat(d, "d", O_PATH | O_DIRECTORY | O_CLOEXEC), 0);
        }
        close(d);
        for (int i = 599; i >= 0; i--) {
                cr_assert_eq(fchmodat(parent[i], "d", i == 300 ? 0 : 0555, 0), 0);
                close(parent[i]);
        }
        cr_assert_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
        int top_fd = open(top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        cr_assert_eq(store_rm_rf_at(top_fd, "tree"), 0);
        struct stat st;
        cr_assert_neq(fstatat(top_fd, "tree", &st, AT_SYMLINK_NOFOLLOW), 0);
        close(top_fd);
}

/* A symlink inside the tree is removed, never followed. */
Test(store_rm_rf_at, symlinks_are_not_followed) {
        cr_assert_eq(mkdir(at("tree"), 0755), 0);
        cr_assert_eq(mkdir(at("keep"), 0755), 0);
        cr_assert_eq(close(open(at("keep/f"), O_CREAT | O_WRONLY | O_CLOEXEC, 0644)), 0);
        cr_assert_eq(symlink(at("keep"), at("tree/link")), 0);
        int top_fd = open(top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        cr_assert_eq(store_rm_rf_at(top_fd, "tree"), 0);
        close(top_fd);
        struct stat st;
        cr_assert_eq(stat(at("keep/f"), &st), 0);
}

static void put(const char *rel, const char *text) {
        int fd = open(at(rel), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0640);
        cr_assert_geq(fd, 0, "%s", rel);
        cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
        close(fd);
}

static const char *get(const char *rel) {
        static char buf[64];
        int fd = open(at(rel), O_RDONLY | O_CLOEXEC);
        ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
        if (fd >= 0)
                close(fd);
        buf[n < 0 ? 0 : n] = '\0';
        return n < 0 ? NULL : buf;
}

/* The caller as inside root and nothing else: a sandbox's single-id mapping, which the
 * helper user namespace of rt_upper_fork takes for every caller (root writes the map
 * itself, as the caller may). */
static const struct rt_idmap *caller_map(void) {
        static struct rt_idmap m;
        m = (struct rt_idmap){.mode = RT_IDMAP_SINGLE,
                              .host_uid = geteuid(),
                              .host_gid = getegid(),
                              .count = 1,
                              .agent_drop_caps = true};
        return &m;
}

/* The fork of top/from: its new tmpfs, reached as top/to (a link to its fd), or a failure. */
static int fork_of(const struct rt_idmap *m, int *ret_to, struct rtn_error *err) {
        struct rt_spec spec = {.upper_bytes = 64u << 20};
        int from = open(at("from"), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        cr_assert_geq(from, 0);
        int r = rt_upper_fork(m, &spec, from, ret_to, err);
        close(from);
        if (r == 0) {
                char fdp[32];
                snprintf(fdp, sizeof fdp, "/proc/self/fd/%d", *ret_to);
                cr_assert_eq(symlink(fdp, at("to")), 0);
        }
        return r;
}

/* A fork's new tmpfs gets the source's upper/ and ws/upper as they are, with a work/ of its
 * own: files, a symlink as a link (never followed), hard links as links, an overlay mark;
 * afterwards a write on either side does not reach the other (no inode is shared). */
Test(rt_upper_fork, copies_both_uppers_and_shares_nothing) {
        const char *dirs[] = {"from", "from/upper", "from/upper/d", "from/ws", "from/ws/upper"};
        for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
                cr_assert_eq(mkdir(at(dirs[i]), 0755), 0, "%s", dirs[i]);
        put("from/upper/a", "src\n");
        cr_assert_eq(link(at("from/upper/a"), at("from/upper/d/a2")), 0);
        cr_assert_eq(symlink("/etc/passwd", at("from/upper/d/link")), 0);
        bool marks = setxattr(at("from/upper/d"), "user.overlay.opaque", "y", 1, 0) == 0;
        put("from/ws/upper/w", "ws\n");
        struct rtn_error err = {0};
        int to = -1;
        cr_assert_eq(fork_of(NULL, &to, &err), -EINVAL, "the copy has no mapping");
        cr_assert_eq(fork_of(caller_map(), &to, &err), 0, "%s", err.msg);

        struct statfs sfs;
        cr_assert_eq(fstatfs(to, &sfs), 0);
        cr_assert_eq(sfs.f_type, TMPFS_MAGIC, "the fork's upper is a tmpfs of its own");
        cr_assert_eq((uint64_t)sfs.f_blocks * sfs.f_bsize, 64u << 20, "of the spec's size");
        struct stat w;
        cr_assert_eq(lstat(at("to/work"), &w), 0);
        cr_assert(S_ISDIR(w.st_mode));
        struct stat a, a2, st;
        cr_assert_str_eq(get("to/upper/a"), "src\n");
        cr_assert_str_eq(get("to/ws/upper/w"), "ws\n");
        char target[64] = "";
        cr_assert_eq(readlink(at("to/upper/d/link"), target, sizeof target - 1), 11);
        cr_assert_str_eq(target, "/etc/passwd");
        cr_assert_eq(lstat(at("to/upper/a"), &a), 0);
        cr_assert_eq(lstat(at("to/upper/d/a2"), &a2), 0);
        cr_assert_eq(a.st_ino, a2.st_ino, "a hard link stays one file");
        cr_assert_eq(a.st_mode & 07777, 0640);
        if (marks)
                cr_assert_eq(getxattr(at("to/upper/d"), "user.overlay.opaque", target, 1), 1);
        cr_assert_eq(lstat(at("from/upper/a"), &st), 0);
        cr_assert_neq(st.st_ino, a.st_ino);

        put("to/upper/a", "fork\n");
        put("from/ws/upper/w", "source\n");
        cr_assert_str_eq(get("from/upper/a"), "src\n", "the fork's write reached the source");
        cr_assert_str_eq(get("to/ws/upper/w"), "ws\n", "the source's write reached the fork");
        close(to);
}

/* A source with no overlay workspace gives a fork with no ws/: a sandbox makes it when it
 * mounts one. */
Test(rt_upper_fork, no_ws_without_one) {
        cr_assert_eq(mkdir(at("from"), 0755), 0);
        cr_assert_eq(mkdir(at("from/upper"), 0755), 0);
        struct rtn_error err = {0};
        int to = -1;
        cr_assert_eq(fork_of(caller_map(), &to, &err), 0, "%s", err.msg);
        struct stat st;
        cr_assert_eq(lstat(at("to/upper"), &st), 0);
        cr_assert_neq(lstat(at("to/ws"), &st), 0);
        close(to);
}

/* What the agent made unreadable to itself (a 000 file, a 000 directory) is copied with its
 * mode: the copy runs as root of a user namespace mapped like the sandbox, whose
 * CAP_DAC_OVERRIDE covers the sandbox's ids; an xattr past any small fixed buffer is copied
 * whole. */
Test(rt_upper_fork, odd_modes_and_large_xattrs) {
        const char *dirs[] = {"from", "from/upper", "from/upper/closed"};
        for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
                cr_assert_eq(mkdir(at(dirs[i]), 0755), 0, "%s", dirs[i]);
        put("from/upper/closed/f", "in\n");
        put("from/upper/none", "secret\n");
        static char big[40000];
        memset(big, 'x', sizeof big);
        bool xattrs = setxattr(at("from/upper/none"), "user.big", big, sizeof big, 0) == 0;
        cr_assert_eq(chmod(at("from/upper/none"), 0), 0);
        cr_assert_eq(chmod(at("from/upper/closed"), 0), 0);
        struct rtn_error err = {0};
        int to = -1;
        int r = fork_of(caller_map(), &to, &err);
        cr_assert_eq(chmod(at("from/upper/closed"), 0755), 0);
        cr_assert_eq(r, 0, "%s", err.msg);
        struct stat st;
        cr_assert_eq(lstat(at("to/upper/none"), &st), 0);
        cr_assert_eq(st.st_mode & 07777, 0);
        cr_assert_eq(lstat(at("to/upper/closed"), &st), 0);
        cr_assert_eq(st.st_mode & 07777, 0);
        cr_assert_eq(chmod(at("to/upper/closed"), 0755), 0);
        cr_assert_eq(chmod(at("to/upper/none"), 0600), 0);
        cr_assert_str_eq(get("to/upper/closed/f"), "in\n");
        cr_assert_str_eq(get("to/upper/none"), "secret\n");
        if (xattrs) {
                static char back[sizeof big];
                cr_assert_eq(getxattr(at("to/upper/none"), "user.big", back, sizeof back),
                             (ssize_t)sizeof big);
                cr_assert_eq(memcmp(back, big, sizeof big), 0);
        }
        close(to);
}

/* From here on this test process can make no process: fork, vfork, clone3 and a clone that
 * does not share its memory fail with EPERM (a filter of its own; criterion runs each test in
 * a process of its own). A clone with CLONE_VM is let through: LeakSanitizer's check at exit
 * runs in one such task, and without it that check of this process was lost. */
static void no_more_processes(void) {
        struct sock_filter f[] = {
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 5, 0),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 3, 0),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_fork, 2, 0),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_vfork, 1, 0),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
                /* clone's flags: the low word of its first argument (x86-64) */
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
                BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_VM, 0, 1),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
        };
        struct sock_fprog prog = {.len = sizeof f / sizeof f[0], .filter = f};
        cr_assert_eq(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
        cr_assert_eq(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog), 0);
}

/* Once --undo-depth steps are kept, every changing call of `rtn serve` drops the oldest, and
 * a step whose seal found nothing changed never got a directory: dropping it must not cost a
 * helper process (a fork into a new user namespace) per call. A step that is there still
 * goes through the helper, which this process can no longer make. */
Test(rt_ckpt, drop_of_a_step_never_made_makes_no_helper) {
        cr_assert_eq(mkdir(at("fs"), 0755), 0);
        int fs = open(at("fs"), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        cr_assert_geq(fs, 0);
        struct rtn_error err = {0};
        no_more_processes();
        cr_assert_eq(rt_ckpt(caller_map(), fs, RT_CKPT_DROP, "s1", 0, NULL, 0, NULL, &err), 0,
                     "no undo/ at all: %s", err.msg);
        cr_assert_eq(mkdir(at("fs/undo"), 0700), 0);
        cr_assert_eq(rt_ckpt(caller_map(), fs, RT_CKPT_DROP, "s1", 0, NULL, 0, NULL, &err), 0,
                     "no undo/s1: %s", err.msg);
        cr_assert_eq(mkdir(at("fs/undo/s2"), 0700), 0);
        cr_assert_lt(rt_ckpt(caller_map(), fs, RT_CKPT_DROP, "s2", 0, NULL, 0, NULL, &err), 0,
                     "a step that is there goes to the helper");
        struct stat st;
        cr_assert_eq(lstat(at("fs/undo/s2"), &st), 0);
        close(fs);
}
