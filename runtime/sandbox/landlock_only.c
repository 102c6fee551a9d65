/* --isolation landlock: the named weaker mode for hosts that forbid user namespaces (Ubuntu
 * 24.04's AppArmor restriction). No namespaces and no overlay: rtn-init runs on the host as
 * the caller, a child subreaper of rtn, and confines each command with the same sequence as
 * in a full sandbox — rlimits, capabilities dropped (host root), no_new_privs, a Landlock
 * ruleset that reads only the host's system dirs and writes only the workspace (but for its
 * git dirs and host-run files, runtime/sandbox/protect.c) and a private temp dir, signals and
 * abstract sockets scoped, TCP closed, no host terminal or /dev/shm, and the seccomp
 * allowlist with a second filter that leaves only TCP sockets of the network families.
 * What it cannot give (a /workspace and a private /tmp, hidden host processes, throw-away
 * writes, and below Landlock ABI 9 a wall around the host's pathname unix sockets) is listed
 * in docs/security-invariants.md; rtn exec says so on stderr, with the paths it has instead.
 * As root (a container that denies user namespaces) commands run as a uid that owns nothing
 * (choose_agent). */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/exitcode.h"
#include "common/io.h"
#include "common/syscall.h"
#include "runtime/internal.h"
#include "runtime/sandbox/gitconf.h"
#include "store/store.h"

#define RT_HOSTMODE_GRACE_MS 5000

/* The Landlock ABI that rules connect(2) to pathname unix sockets (LANDLOCK_ACCESS_FS_RESOLVE_UNIX,
 * Linux 7.1); below it the host's sockets stay reachable and the warning says so. */
#define RT_LANDLOCK_ABI_UNIX 9

const char *rt_isolation_warning(enum init_isolation iso) {
        static char buf[1024];
        int abi;
        switch (iso) {
        case INIT_ISOLATION_LANDLOCK:
                abi = sys_landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
                snprintf(buf, sizeof buf,
                         "DEGRADED isolation (--isolation landlock): no namespaces, no overlay; "
                         "the command runs on the host as you, confined by Landlock (reads the "
                         "system dirs, writes only the workspace and a private temp dir, no TCP, "
                         "no other terminal, no /dev/shm), seccomp (no UDP or raw sockets) and "
                         "rlimits. There is no /workspace and /tmp is not writable: the command "
                         "starts in the workspace's host path and gets its temp dir as TMPDIR. "
                         "Host processes are visible; writes to the workspace are not thrown "
                         "away; its git dirs and host-run files stay read-only, and so do the "
                         "directories that hold them.");
                if (abi < RT_LANDLOCK_ABI_UNIX)
                        snprintf(buf + strlen(buf), sizeof buf - strlen(buf),
                                 " The host's pathname unix sockets (the user's D-Bus, "
                                 "docker.sock) can still be connected to: Landlock rules them "
                                 "from ABI %d (Linux 7.1), and this kernel has ABI %d.",
                                 RT_LANDLOCK_ABI_UNIX, abi < 0 ? 0 : abi);
                return buf;
        case INIT_ISOLATION_NO_LANDLOCK:
                return "DEGRADED isolation (--isolation namespaces): no Landlock; namespaces, "
                       "the read-only overlay and seccomp only.";
        case INIT_ISOLATION_FULL:
        default:
                return "";
        }
}

const char *rt_landlock_path(const struct rt_sandbox *sb, const char *path, bool relative,
                             char *buf, size_t cap) {
        static const char ws[] = "/workspace";
        if (!path || !sb || sb->isolation != INIT_ISOLATION_LANDLOCK || !sb->workspace[0])
                return path;
        const char *rest;
        if (strncmp(path, ws, sizeof ws - 1) == 0 &&
            (path[sizeof ws - 1] == '\0' || path[sizeof ws - 1] == '/'))
                rest = path + sizeof ws - 1;
        else if (relative && path[0] != '/')
                rest = path;
        else
                return path;
        int n = snprintf(buf, cap, "%s%s%s", sb->workspace, rest[0] && rest[0] != '/' ? "/" : "",
                         rest);
        return n < 0 || (size_t)n >= cap ? NULL : buf;
}

/* rm -rf of a temp dir the command wrote: the store's remover, which never follows a symlink
 * and keeps few directories open however deep the command made the tree. */
static void rm_tree(const char *path) {
        (void)store_rm_rf_at(AT_FDCWD, path);
}

static int make_tmpdir(char *buf, size_t len, const char *what, struct rtn_error *err) {
        const char *base = getenv("TMPDIR");
        if (!base || base[0] != '/' || strlen(base) > 256)
                base = "/tmp";
        snprintf(buf, len, "%s/rtn-%s.XXXXXX", base, what);
        if (!mkdtemp(buf))
                return rtn_err(err, errno, "create %s dir in %s", what, base);
        return 0;
}

static int setup_dirs(const struct rt_spec *spec, struct rt_sandbox *sb, struct rtn_error *err) {
        int r;
        if (spec->workspace) {
                char real[PATH_MAX];
                if (!realpath(spec->workspace, real))
                        return rtn_err(err, errno, "workspace %s", spec->workspace);
                if (strlen(real) >= sizeof sb->workspace)
                        return rtn_errx(err, ENAMETOOLONG, "workspace path too long: %s", real);
                snprintf(sb->workspace, sizeof sb->workspace, "%s", real);
        } else {
                if ((r = make_tmpdir(sb->workspace, sizeof sb->workspace, "ws", err)) < 0)
                        return r;
                sb->remove_workspace = true;
        }
        if ((r = make_tmpdir(sb->host_tmp, sizeof sb->host_tmp, "tmp", err)) < 0)
                return r;
        snprintf(sb->home, sizeof sb->home, "%s", sb->host_tmp);
        return 0;
}

static int start_init(struct rt_sandbox *sb, struct rtn_error *err) {
        _cleanup_close_ int memfd = rt_init_memfd(err);
        if (memfd < 0)
                return memfd;
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
                return rtn_err(err, errno, "socketpair");
        int pidfd = -1;
        /* No namespaces and no PDEATHSIG: if rtn dies, rtn-init sees EOF on its socket and
         * kills its descendants first; SIGKILL from a death signal would orphan them. */
        struct clone_args ca = {
                .flags = CLONE_PIDFD, .pidfd = (uint64_t)(uintptr_t)&pidfd, .exit_signal = SIGCHLD};
        pid_t pid = sys_clone3(&ca, sizeof ca);
        /* A seccomp profile that denies clone3 (ENOSYS in Docker's, EPERM in one that denies
         * user namespaces) may still let clone(2) make a plain child. */
        if (pid < 0 && (errno == ENOSYS || errno == EPERM))
                pid = sys_clone_pidfd(&pidfd);
        if (pid < 0) {
                int e = errno;
                close(sv[0]);
                close(sv[1]);
                return rtn_err(err, e, "clone3 rtn-init");
        }
        if (pid == 0) {
                struct rtn_error cerr = {0};
                struct rt_plan p = {.init_fd = memfd, .ctl_fd = sv[1]};
                close(sv[0]);
                rt_child_exec_init(&p, &cerr);
                _exit(RTN_EXIT_FAILURE);
        }
        close(sv[1]);
        sb->pid = pid;
        sb->pidfd = pidfd;
        sb->ctl = sv[0];
        return 0;
}

/* The workspace's git dirs and host-run files (runtime/sandbox/protect.c), as absolute host paths
 * for rtn-init's Landlock rules: no mounts here, so Landlock keeps them read-only and the
 * directories on the way to them unchanged (init/landlock.c, add_all_but). Pins need no
 * path of their own: every directory on the way to an exception gets read rights only. */
struct readonly {
        const char *top;
        char *paths[INIT_MAX_READONLY];
        uint32_t n;
};

static int readonly_cb(void *arg, const char *rel, enum rt_protect_kind kind,
                       struct rtn_error *err) {
        struct readonly *ro = arg;
        if (kind == RT_PROTECT_PIN)
                return 0;
        if (ro->n >= INIT_MAX_READONLY)
                return rtn_errx(err, E2BIG,
                                "the workspace has more than %d git dirs and host-run files "
                                "to protect; bind a smaller directory",
                                INIT_MAX_READONLY);
        if (asprintf(&ro->paths[ro->n], "%s/%s", ro->top, rel) < 0)
                return rtn_err(err, ENOMEM, "protect %s", rel);
        ro->n++;
        return 0;
}

static void readonly_free(struct readonly *ro) {
        for (uint32_t i = 0; i < ro->n; i++)
                free(ro->paths[i]);
        ro->n = 0;
}

static int protect_workspace(const struct rt_spec *spec, const struct rt_sandbox *sb,
                             struct readonly *ro, struct rtn_error *err) {
        ro->top = sb->workspace;
        if (!spec->workspace)
                return 0; /* a fresh temp dir: nothing in it yet */
        _cleanup_close_ int top = open(sb->workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (top < 0)
                return rtn_err(err, errno, "open workspace %s", sb->workspace);
        bool whole = false;
        int r = rt_protect_walk(top, sb->workspace, readonly_cb, ro, &whole, err);
        if (r >= 0 && whole && !(ro->paths[ro->n++] = strdup(sb->workspace)))
                r = rtn_err(err, ENOMEM, "protect %s", sb->workspace);
        /* what git's configuration and --protect name (runtime/sandbox/gitconf.h) */
        struct rt_pathlist *lists = NULL;
        if (r >= 0 && !whole && (r = rt_protect_lists(spec, &lists, err)) >= 0) {
                size_t off = 0;
                const char *rel, *why;
                while (r >= 0 && rt_pathlist_next(&lists[0], &off, &rel, &why))
                        r = readonly_cb(ro, rel, RT_PROTECT_RO, err);
        }
        rt_protect_lists_free(lists);
        return r;
}

/* Whether ID is one of this user namespace's (/proc/self/uid_map or gid_map): a chown or
 * setuid to an id the namespace does not map fails with EINVAL. */
static bool id_mapped(const char *map, unsigned id) {
        FILE *f = fopen(map, "re");
        if (!f)
                return true; /* no map to read: the initial namespace maps every id */
        unsigned long in, out, n;
        bool ok = false;
        while (!ok && fscanf(f, "%lu %lu %lu", &in, &out, &n) == 3)
                ok = id >= in && id - in < n;
        fclose(f);
        return ok;
}

/* Host root owns the system files, and Landlock does not cover chmod, chown, utimes or
 * xattrs: a confined root could still change their metadata. Without a user namespace to
 * map it away, root's commands run as RT_LANDLOCK_ROOT_UID instead, a uid that owns nothing:
 * no passwd entry, above rtn's own subordinate block (refused if the system names it); in a
 * user namespace that does not map it, its highest id (rt_landlock_root_uid). With a
 * --workspace that a user other than host root owns, they run as that owner, as the full
 * sandbox's agent is where root cannot make idmapped mounts (rt_idmap_owner), so they can
 * write it. */
static int choose_agent(const struct rt_spec *spec, struct rt_sandbox *sb, struct rtn_error *err) {
        sb->idmap.mode = RT_IDMAP_SINGLE;
        sb->idmap.agent_drop_caps = false;
        if (geteuid() != 0) {
                sb->idmap.agent_uid = geteuid();
                sb->idmap.agent_gid = getegid();
                return 0;
        }
        struct stat st;
        struct rtn_error ignored = {0};
        if (spec->workspace && stat(spec->workspace, &st) == 0 && S_ISDIR(st.st_mode) &&
            rt_owner_ids(spec->workspace, &st, &sb->idmap.agent_uid, &sb->idmap.agent_gid,
                         &ignored) == 0) {
                sb->idmap.owner = true;
                return 0;
        }
        uid_t id = rt_landlock_root_uid();
        if (getpwuid(id) || getgrgid(id))
                return rtn_errx(err, EEXIST,
                                "--isolation landlock as root runs commands as uid %u, which "
                                "must own nothing, but the system names it (passwd or group)",
                                (unsigned)id);
        /* uid 0 of a user namespace that maps a single id (inside another sandbox, say) is
         * an ordinary user outside and has no uid to give its commands. */
        if (!id_mapped("/proc/self/uid_map", id) || !id_mapped("/proc/self/gid_map", id))
                return rtn_errx(err, EINVAL,
                                "--isolation landlock as root runs commands as uid %u, which "
                                "this user namespace does not map (its root is another user "
                                "outside, so there is no uid to run them as)",
                                (unsigned)id);
        sb->idmap.agent_uid = id;
        sb->idmap.agent_gid = id;
        return 0;
}

/* Root's agent must be able to write its temp dir (and a workspace rtn made). */
static int give_dirs(const struct rt_sandbox *sb, struct rtn_error *err) {
        if (geteuid() != 0)
                return 0;
        if (chown(sb->host_tmp, sb->idmap.agent_uid, sb->idmap.agent_gid) < 0)
                return rtn_err(err, errno, "chown %s", sb->host_tmp);
        if (sb->remove_workspace &&
            chown(sb->workspace, sb->idmap.agent_uid, sb->idmap.agent_gid) < 0)
                return rtn_err(err, errno, "chown %s", sb->workspace);
        return 0;
}

int rt_landlock_only_start(const struct rt_spec *spec, struct rt_sandbox *sb,
                           struct rtn_error *err) {
        int r;
        sb->isolation = INIT_ISOLATION_LANDLOCK;
        if ((r = choose_agent(spec, sb, err)) < 0)
                return r;
        if ((r = setup_dirs(spec, sb, err)) < 0 || (r = give_dirs(sb, err)) < 0 ||
            (r = start_init(sb, err)) < 0)
                goto fail;
        /* CONFIG goes out at once: rtn-init says READY only with its answer to it
         * (init/ctl.c). Without Landlock it refuses the configuration, but the reason given
         * is READY's ABI, read first. */
        struct readonly ro = {0};
        if ((r = protect_workspace(spec, sb, &ro, err)) < 0) {
                readonly_free(&ro);
                goto fail;
        }
        /* A send that failed because rtn-init is gone: what it said before, read next, tells
         * why better. */
        struct rtn_error send_err = {0};
        int sent = rt_config_send(sb, spec, (const char *const *)ro.paths, ro.n, &send_err);
        readonly_free(&ro);
        struct init_ready ready;
        if ((r = rt_recv_typed(sb, &ready, sizeof ready, INIT_MSG_READY, "rtn-init start", err)) <
            0)
                goto fail;
        if ((r = sent) < 0) {
                *err = send_err;
                goto fail;
        }
        sb->landlock_abi = ready.landlock_abi;
        if (ready.landlock_abi <= 0) {
                r = rtn_errx(err, EOPNOTSUPP,
                             "--isolation landlock needs Landlock, and this "
                             "kernel has none (ABI %d)",
                             ready.landlock_abi);
                goto fail;
        }
        if ((r = rt_config_wait(sb, err)) < 0)
                goto fail;
        return 0;
fail:
        sb->ctl = rtn_safe_close(sb->ctl);
        rt_landlock_only_destroy(sb);
        return r;
}

void rt_landlock_only_destroy(struct rt_sandbox *sb) {
        if (sb->pidfd >= 0) {
                /* The control socket is closed: rtn-init kills its descendants and exits.
                 * Give it a moment, then make sure. */
                struct pollfd pfd = {.fd = sb->pidfd, .events = POLLIN};
                if (poll(&pfd, 1, RT_HOSTMODE_GRACE_MS) == 0)
                        (void)sys_pidfd_send_signal(sb->pidfd, SIGKILL, NULL, 0);
                siginfo_t si;
                while (waitid(P_PIDFD, (id_t)sb->pidfd, &si, WEXITED) < 0 && errno == EINTR)
                        ;
                sb->pidfd = rtn_safe_close(sb->pidfd);
        }
        sb->pid = -1;
        if (sb->host_tmp[0])
                rm_tree(sb->host_tmp);
        if (sb->remove_workspace && sb->workspace[0])
                rm_tree(sb->workspace);
        sb->host_tmp[0] = '\0';
        sb->remove_workspace = false;
}
