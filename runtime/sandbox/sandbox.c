/* Starting and stopping a sandbox (docs/architecture.md, steps 1-8). The parent opens every host
 * object by fd, creates the memfd for rtn-init, and clone3()s a child into fresh user, mount, pid,
 * ipc, uts and cgroup namespaces with a pidfd, directly into a cgroup of its own where cgroup v2
 * lets us make one (runtime/sandbox/cgroup.c). The child waits until the parent has written its id
 * maps, builds the root (runtime/sandbox/mount.c), and fexecve()s rtn-init as PID 1 with the
 * control socket on fd 3. Two things are done beside the child, while it mounts, rather than before
 * it: the parent fills the rtn-init memfd, and a short-lived helper makes the network namespace
 * (see make_netns). The parent then sends the policy configuration and the sandbox is ready for
 * spawn requests. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/nsfs.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/exitcode.h"
#include "common/io.h"
#include "common/log.h"
#include "common/sandbox_dirs.h"
#include "common/syscall.h"
#include "netns/netns.h"
#include "runtime/internal.h"
#include "runtime/sandbox/wsprep.h"

#define RT_GO 'G'

static const char *const host_allow[] = {RTN_HOST_BASE_DIRS(RTN_DIR_BARE)};

static int open_dir(const char *path, const char *what, struct rtn_error *err) {
        int fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return rtn_err(err, errno, "open %s %s", what, path);
        return fd;
}

static int plan_host(struct rt_plan *p, struct rtn_error *err) {
        for (size_t i = 0; i < sizeof host_allow / sizeof host_allow[0]; i++) {
                struct rt_hostdir *h = &p->host[p->nhost];
                char path[32];
                struct stat st;
                snprintf(path, sizeof path, "/%s", host_allow[i]);
                if (lstat(path, &st) < 0)
                        continue;
                snprintf(h->name, sizeof h->name, "%s", host_allow[i]);
                h->fd = -1;
                if (S_ISLNK(st.st_mode)) {
                        ssize_t n = readlink(path, h->link, sizeof h->link - 1);
                        if (n <= 0)
                                continue;
                        h->link[n] = '\0';
                } else if (S_ISDIR(st.st_mode)) {
                        h->fd = open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        if (h->fd < 0)
                                return rtn_err(err, errno, "open host %s", path);
                } else {
                        continue;
                }
                p->nhost++;
        }
        return 0;
}

/* A bind source or the workspace is opened without crossing a symlink (openat2(2)
 * RESOLVE_NO_SYMLINKS) and, when it was checked before (rt_binds_check, bind_host_dir), must
 * still be the directory that was checked: a swap between the check and this open is
 * refused, not followed. */
static int open_checked(const char *path, uint64_t dev, uint64_t ino, const char *what, int *ret_fd,
                        struct rtn_error *err) {
        struct open_how how = {.flags = O_PATH | O_CLOEXEC,
                               .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
        int fd = sys_openat2(AT_FDCWD, path, &how, sizeof how);
        if (fd < 0)
                return rtn_err(err, errno, "open %s %s%s", what, path,
                               errno == ELOOP ? " (its path crosses a symlink)" : "");
        struct stat st;
        if (ino && (fstat(fd, &st) < 0 || st.st_dev != dev || st.st_ino != ino)) {
                close(fd);
                return rtn_errx(err, ESTALE, "%s %s was replaced after it was checked", what, path);
        }
        *ret_fd = fd;
        return 0;
}

static int open_bind_src(const struct rt_bind *b, int *ret_fd, struct rtn_error *err) {
        return open_checked(b->src, b->dev, b->ino, "bind source", ret_fd, err);
}

static int plan_open(struct rt_plan *p, struct rtn_error *err) {
        const struct rt_spec *s = p->spec;
        int r;
        if (s->rootfs && strcmp(s->rootfs, "host") != 0) {
                if ((p->base_fd = open_dir(s->rootfs, "rootfs", err)) < 0)
                        return p->base_fd;
        } else if ((r = plan_host(p, err)) < 0) {
                return r;
        }
        if (s->nlayers > RT_MAX_LAYERS)
                return rtn_errx(err, E2BIG, "%zu layers (at most %d)", s->nlayers, RT_MAX_LAYERS);
        for (; p->nlayers < s->nlayers; p->nlayers++)
                if ((p->layer_fds[p->nlayers] = open_dir(s->layers[p->nlayers], "layer", err)) < 0)
                        return p->layer_fds[p->nlayers];
        if (s->workspace && s->workspace_mode == RT_WS_OVERLAY && s->ws_dir) {
                /* What earlier --keep runs left, a read-only layer over the host dir. */
                char path[4200];
                snprintf(path, sizeof path, "%s/" RT_WS_DIR "/upper", s->ws_dir);
                p->ws_lower_fd = open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (p->ws_lower_fd < 0 && errno != ENOENT)
                        return rtn_err(err, errno, "open the pending workspace changes %s", path);
        }
        if (s->workspace && p->workspace_tree < 0 &&
            (r = open_checked(s->workspace, s->workspace_dev, s->workspace_ino, "workspace",
                              &p->workspace_fd, err)) < 0)
                return r;
        for (size_t i = 0; i < s->nbinds; i++)
                if (p->bind_trees[i] < 0 &&
                    (r = open_bind_src(&s->binds[i], &p->bind_fds[i], err)) < 0)
                        return r;
        return 0;
}

/* What plan_open opened, closed, so that it can run again. */
static void plan_close(struct rt_plan *p) {
        p->base_fd = rtn_safe_close(p->base_fd);
        for (size_t i = 0; i < p->nhost; i++)
                p->host[i].fd = rtn_safe_close(p->host[i].fd);
        p->nhost = 0;
        for (size_t i = 0; i < p->nlayers; i++)
                p->layer_fds[i] = rtn_safe_close(p->layer_fds[i]);
        p->nlayers = 0;
        p->ws_lower_fd = rtn_safe_close(p->ws_lower_fd);
        p->workspace_fd = rtn_safe_close(p->workspace_fd);
        for (size_t i = 0; i < RT_MAX_BINDS; i++)
                p->bind_fds[i] = rtn_safe_close(p->bind_fds[i]);
}

static void child_fail(int ctl, struct rtn_error *err, uint32_t step) {
        struct init_status st = {.hdr = {.type = INIT_MSG_SETUP_FAILED, .len = sizeof st},
                                 .error = err->code ? err->code : EINVAL,
                                 .step = step};
        snprintf(st.message, sizeof st.message, "%s", err->msg);
        (void)rtn_send_msg(ctl, &st, sizeof st, NULL, 0);
        _exit(RTN_EXIT_FAILURE);
}

static int child_creds(const struct rt_plan *p, struct rtn_error *err) {
        /* Become inside-root now that the maps exist. Host root's supplementary groups must
         * not follow us in (they stay effective on host files); setgroups is only allowed
         * where the parent did not deny it, i.e. when a range is mapped. */
        if (setresgid(0, 0, 0) < 0)
                return rtn_err(err, errno, "setresgid 0");
        if (p->idmap->mode != RT_IDMAP_SINGLE && setgroups(0, NULL) < 0)
                return rtn_err(err, errno, "setgroups");
        if (setresuid(0, 0, 0) < 0)
                return rtn_err(err, errno, "setresuid 0");
        /* After the credential change (which clears it): die with rtn. */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
                return rtn_err(err, errno, "prctl PDEATHSIG");
        return 0;
}

/* The network namespace the helper made (make_netns) arrives on the control socket right
 * behind GO; nothing else is sent before it. The child was born in rtn's network namespace
 * and must never run rtn-init there: anything but a network namespace other than the one
 * it is in is refused. */
static int child_join_netns(const struct rt_plan *p, struct rtn_error *err) {
        struct rt_netns_msg m;
        int fd = -1;
        size_t nfds = 1;
        ssize_t n = rtn_recv_msg(p->ctl_fd, &m, sizeof m, &fd, &nfds);
        if (n < 0)
                return rtn_err(err, (int)n, "read the network namespace");
        _cleanup_close_ int ns = nfds == 1 ? fd : -1;
        if (n != (ssize_t)sizeof m || m.tag != RT_NETNS_TAG)
                return rtn_errx(err, EBADMSG, "no network namespace from rtn");
        if (m.error != 0) {
                m.message[sizeof m.message - 1] = '\0';
                return rtn_errx(err, m.error, "%s", m.message);
        }
        struct stat now, got, owner, mine;
        if (ns < 0 || fstat(ns, &got) < 0 || stat("/proc/self/ns/net", &now) < 0 ||
            ioctl(ns, NS_GET_NSTYPE) != CLONE_NEWNET ||
            (got.st_dev == now.st_dev && got.st_ino == now.st_ino))
                return rtn_errx(err, EBADMSG, "rtn sent no new network namespace");
        /* ...and one that belongs to our user namespace, as one made by clone3 would. */
        _cleanup_close_ int userns = ioctl(ns, NS_GET_USERNS);
        if (userns < 0 || fstat(userns, &owner) < 0 || stat("/proc/self/ns/user", &mine) < 0 ||
            owner.st_dev != mine.st_dev || owner.st_ino != mine.st_ino)
                return rtn_errx(err, EBADMSG,
                                "the network namespace from rtn is not the sandbox's own");
        if (setns(ns, CLONE_NEWNET) < 0)
                return rtn_err(err, errno, "enter the network namespace");
        return 0;
}

static __attribute__((noreturn)) void child_main(struct rt_plan *p) {
        struct rtn_error err = {0};
        /* Host objects are opened here, in our copy of the mount namespace: overlayfs and
         * bind mounts refuse layers whose mounts belong to another namespace
         * (clone_private_mount, may_copy_tree), so the parent cannot open them for us. We
         * still hold the caller's credentials, so what the caller may read, we may open.
         * First while the parent writes our id maps, which these opens do not need, so that
         * GO is there when we look for it (docs/benchmarks.md, "The hand-offs of a cold
         * start"). With no id mapped yet no capability of ours applies to any file, so an
         * open can only be refused now that the maps would allow: what failed is opened
         * again after GO, and its error is that open's. */
        bool opened = plan_open(p, &err) == 0;
        if (!opened) {
                plan_close(p);
                err = (struct rtn_error){0};
        }
        char go = 0;
        ssize_t n = rtn_recv_msg(p->ctl_fd, &go, 1, NULL, NULL);
        if (n != 1 || go != RT_GO)
                _exit(RTN_EXIT_FAILURE); /* the parent failed and told us so, or died */
        if (!opened && plan_open(p, &err) < 0)
                child_fail(p->ctl_fd, &err, INIT_STEP_CONFIG);
        /* Before the credentials change: it makes us non-dumpable for a moment, and
         * /proc/self/oom_score_adj then belongs to host root. */
        if (rt_child_limits(p, &err) < 0)
                child_fail(p->ctl_fd, &err, INIT_STEP_CONFIG);
        if (child_creds(p, &err) < 0)
                child_fail(p->ctl_fd, &err, INIT_STEP_CREDS);
        const char *hn = p->spec->hostname ? p->spec->hostname : RT_DEFAULT_HOSTNAME;
        /* A container's seccomp profile may refuse sethostname (EPERM) even in our own UTS
         * namespace: the default name then stays the container's; one the user asked for
         * fails the start. */
        if (sethostname(hn, strlen(hn)) < 0 && (errno != EPERM || p->spec->hostname)) {
                rtn_err(&err, errno, "sethostname %s", hn);
                child_fail(p->ctl_fd, &err, INIT_STEP_CONFIG);
        }
        if (rt_child_build_root(p, &err) < 0)
                child_fail(p->ctl_fd, &err, INIT_STEP_CONFIG);
        if (child_join_netns(p, &err) < 0)
                child_fail(p->ctl_fd, &err, INIT_STEP_CONFIG);
        if (rt_child_exec_init(p, &err) < 0)
                child_fail(p->ctl_fd, &err, INIT_STEP_CONFIG);
        _exit(RTN_EXIT_FAILURE);
}

int rt_child_exec_init(const struct rt_plan *p, struct rtn_error *err) {
        /* fd 3 is the control socket; dup2 clears O_CLOEXEC on it, everything else is
         * O_CLOEXEC and closes at exec. Move the memfd out of the way first. */
        int init_fd = p->init_fd;
        int r = rt_init_memfd_check(init_fd, err);
        if (r < 0)
                return r;
        if (init_fd == INIT_CTL_FD && (init_fd = fcntl(init_fd, F_DUPFD_CLOEXEC, 10)) < 0)
                return rtn_err(err, errno, "dup rtn-init memfd");
        if (p->ctl_fd != INIT_CTL_FD) {
                if (dup2(p->ctl_fd, INIT_CTL_FD) < 0)
                        return rtn_err(err, errno, "dup2 control socket");
        } else if (fcntl(INIT_CTL_FD, F_SETFD, 0) < 0) {
                return rtn_err(err, errno, "clear FD_CLOEXEC on control socket");
        }
        /* rtn-init gets nothing of rtn's but the control socket: not rtn's stdio (for `rtn
         * serve` that is the MCP transport; commands get theirs through spawn requests),
         * and no fd that reached rtn without O_CLOEXEC. */
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (null < 0)
                return rtn_err(err, errno, "open /dev/null");
        for (int i = 0; i < 3; i++)
                if (dup2(null, i) < 0)
                        return rtn_err(err, errno, "dup2 /dev/null");
        if (sys_close_range(INIT_CTL_FD + 1, ~0U, CLOSE_RANGE_CLOEXEC) < 0)
                return rtn_err(err, errno, "close_range");
        char *argv[] = {"rtn-init", NULL};
        char *envp[] = {NULL};
        syscall(__NR_execveat, init_fd, "", argv, envp, AT_EMPTY_PATH);
        return rtn_err(err, errno, "execute rtn-init");
}

/* The child's or rtn-init's report that the set-up failed, as an error; 0 for any other
 * message. */
static int setup_failed(const void *buf, size_t n, struct rtn_error *err) {
        const struct init_msg_hdr *h = buf;
        if (n < sizeof(struct init_status) || h->type != INIT_MSG_SETUP_FAILED || h->len != n)
                return 0;
        const struct init_status *st = buf;
        char msg[sizeof st->message + 1];
        memcpy(msg, st->message, sizeof st->message);
        msg[sizeof st->message] = '\0';
        return rtn_errx(err, st->error > 0 ? st->error : EINVAL, "%s",
                        msg[0] ? msg : "the sandbox could not be set up (it gave no reason)");
}

/* The kept upper a child made (mount_kept_upper), the first message it sends. */
static int recv_upper(struct rt_sandbox *sb, struct rtn_error *err) {
        union {
                struct rt_upper_msg m;
                char raw[sizeof(struct init_status) + 256];
        } u;
        int fd = -1, r;
        size_t nfds = 1;
        ssize_t n = rt_sandbox_recv(sb, u.raw, sizeof u, &fd, &nfds);
        if (n < 0)
                return rtn_err(err, (int)n, "read the upper from the sandbox");
        if (n == (ssize_t)sizeof u.m && u.m.tag == RT_UPPER_TAG && nfds == 1) {
                sb->upper_fs = fd;
                return 0;
        }
        if (nfds == 1)
                close(fd);
        if (n == 0)
                return rtn_errx(err, EPIPE, "sandbox exited before its upper was made");
        if ((r = setup_failed(u.raw, (size_t)n, err)) < 0)
                return r;
        return rtn_errx(err, EBADMSG, "unexpected message from the sandbox (wanted its upper)");
}

int rt_recv_typed(struct rt_sandbox *sb, void *out, size_t len, uint32_t type, const char *what,
                  struct rtn_error *err) {
        union {
                struct init_status st;
                char raw[sizeof(struct init_status) + 256];
        } u;
        void *buf = u.raw;
        ssize_t n = rt_sandbox_recv(sb, buf, sizeof u, NULL, NULL);
        int r;
        if (n < 0)
                return rtn_err(err, (int)n, "read %s from sandbox", what);
        if (n == 0)
                return rtn_errx(err, EPIPE, "sandbox exited before %s", what);
        const struct init_msg_hdr *h = buf;
        if ((r = setup_failed(buf, (size_t)n, err)) < 0)
                return r;
        if (init_check_msg(buf, (size_t)n, type, len) < 0 || (size_t)n != len)
                return rtn_errx(err, EBADMSG, "unexpected message %u from sandbox (wanted %s)",
                                h->type, what);
        memcpy(out, buf, (size_t)n);
        return (int)n;
}

/* CONFIG, sent, or held in sb (hold) to go out with the first spawn request. */
static int config_make(struct rt_sandbox *sb, const struct rt_spec *s, const char *const readonly[],
                       uint32_t nreadonly, bool hold, struct rtn_error *err) {
        const char *w[INIT_MAX_WRITABLE];
        uint32_t nw = 0, host = 0;
        if (s->isolation == INIT_ISOLATION_LANDLOCK) {
                host |= s->workspace ? 1u << nw : 0;
                w[nw++] = sb->workspace;
                w[nw++] = sb->host_tmp;
        } else {
                host |= s->workspace ? 1u << nw : 0;
                w[nw++] = "/workspace";
                w[nw++] = "/tmp";
                w[nw++] = "/var/tmp";
                w[nw++] = "/dev/shm";
                w[nw++] = sb->home;
        }
        for (size_t i = 0; i < s->nbinds && nw < INIT_MAX_WRITABLE; i++)
                if (s->binds[i].rw) {
                        host |= 1u << nw;
                        w[nw++] = s->binds[i].dst;
                }
        struct init_config fixed = {
                .isolation = s->isolation,
                .agent_uid = sb->idmap.agent_uid,
                .agent_gid = sb->idmap.agent_gid,
                .agent_drop_caps = sb->idmap.agent_drop_caps,
                .agent_root = sb->idmap.agent_root,
                .host_writable = host,
                .allow_ptrace = s->allow_ptrace,
                .policies = s->policies ? s->policies : INIT_POLICIES_ALL,
                .limits = s->limits,
        };
        /* The gate, opened before the first command, builds provisioning's with its port */
        if (s->gate)
                fixed.policies &= ~INIT_POLICY_BIT(INIT_POLICY_PROVISION);
        _cleanup_free_ char *buf = malloc(INIT_MSG_MAX);
        if (!buf)
                return rtn_err(err, ENOMEM, "encode sandbox configuration");
        ssize_t len = init_encode_config(buf, INIT_MSG_MAX, &fixed, w, nw, readonly, nreadonly);
        if (len < 0)
                return rtn_err(err, (int)len, "encode sandbox configuration");
        if (hold) {
                sb->config_held = TAKE_PTR(buf);
                sb->config_held_len = (size_t)len;
                return 0;
        }
        ssize_t n = rtn_send_msg(sb->ctl, buf, (size_t)len, NULL, 0);
        if (n < 0)
                return rtn_err(err, (int)n, "send sandbox configuration");
        return 0;
}

int rt_config_send(struct rt_sandbox *sb, const struct rt_spec *s, const char *const readonly[],
                   uint32_t nreadonly, struct rtn_error *err) {
        return config_make(sb, s, readonly, nreadonly, false, err);
}

/* A held CONFIG, alone: the queue sent no spawn request to carry it. */
static int config_flush(struct rt_sandbox *sb, struct rtn_error *err) {
        _cleanup_free_ char *buf = TAKE_PTR(sb->config_held);
        if (!buf)
                return 0;
        ssize_t n = rtn_send_msg(sb->ctl, buf, sb->config_held_len, NULL, 0);
        return n < 0 ? rtn_err(err, (int)n, "send sandbox configuration") : 0;
}

int rt_config_wait(struct rt_sandbox *sb, struct rtn_error *err) {
        struct init_status st;
        int r = rt_recv_typed(sb, &st, sizeof st, INIT_MSG_CONFIGURED, "configuration reply", err);
        if (r < 0)
                return r;
        if ((size_t)r < sizeof st)
                return rtn_errx(err, EBADMSG, "short configuration reply");
        if (st.error != 0) {
                st.message[sizeof st.message - 1] = '\0';
                return rtn_errx(err, st.error, "rtn-init refused the policy: %s", st.message);
        }
        return 0;
}

int rt_config_exchange(struct rt_sandbox *sb, const struct rt_spec *s, const char *const readonly[],
                       uint32_t nreadonly, struct rtn_error *err) {
        int r = rt_config_send(sb, s, readonly, nreadonly, err);
        return r < 0 ? r : rt_config_wait(sb, err);
}

/* The gate's proxy waits on its listener for connections from the event loop
 * (netns/gate.c): anything else rtn-init might pass, a pipe with data in it say, could be
 * ready for ever and never accept. */
static bool is_listener(int fd) {
        int on = 0;
        socklen_t len = sizeof on;
        return getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &on, &len) == 0 && on;
}

int rt_sandbox_open_gate(struct rt_sandbox *sb, struct rtn_error *err) {
        struct init_msg_hdr req = {.type = INIT_MSG_GATE_OPEN, .len = sizeof req};
        ssize_t n = rtn_send_msg(sb->ctl, &req, sizeof req, NULL, 0);
        if (n < 0)
                return rtn_err(err, (int)n, "ask rtn-init for the gate");
        struct init_gate g;
        int fd = -1;
        size_t nfds = 1;
        n = rt_sandbox_recv(sb, &g, sizeof g, &fd, &nfds);
        if (n < 0)
                return rtn_err(err, (int)n, "read the gate from rtn-init");
        if (init_check_msg(&g, (size_t)n, INIT_MSG_GATE, sizeof g) < 0 ||
            (g.error == 0 && (nfds != 1 || !is_listener(fd)))) {
                if (nfds == 1)
                        close(fd);
                return rtn_errx(err, EBADMSG, "unexpected reply to the gate request");
        }
        if (g.error != 0) {
                if (nfds == 1)
                        close(fd);
                g.message[sizeof g.message - 1] = '\0';
                return rtn_errx(err, g.error, "rtn-init: %s", g.message);
        }
        sb->gate_fd = fd;
        sb->gate_port = g.port;
        return 0;
}

/* The network namespace is not made by clone3: creating one is the dearest step of a start
 * (setup_net runs every pernet initialiser, ~0.6 ms here) and the child needs it only at the
 * very end, when it executes rtn-init. A helper makes it instead, while the child builds the
 * root on the other CPU: it joins the sandbox's user namespace (so the new netns belongs to
 * it, as one made by clone3 would), unshares a network namespace, brings lo up, and sends
 * the namespace to the child over the control socket, right behind GO. The helper shares
 * rtn's memory and runs on a stack of its own while the calling thread waits
 * (CLONE_VM|CLONE_VFORK, as posix_spawn does): no page tables to copy. It allocates nothing,
 * and rtn's other threads (the gate's) never touch what it uses. A failure travels in the
 * message, so the child reports it as it reports its own. */
struct netns_job {
        int userns_fd;
        int ctl;
        bool lo_up;
        bool proxy; /* open the agent's proxy listener (spec.net_proxy) */
        int send_error; /* set by the helper: the errno of its send, 0 when it went */
        int proxy_fd; /* set by the helper: the listener, in rtn's fd table, or -1 */
        uint16_t proxy_port;
};

/* The listener of the agent's proxy (--allow-net; netns/gate.c serves it): TCP on
 * 127.0.0.1, ephemeral port, in the namespace the helper has just made, before any command
 * runs there, so no agent process can hold the port first. */
static int proxy_listen(struct netns_job *j, struct rtn_error *err) {
        int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t len = sizeof a;
        if (s < 0)
                return rtn_err(err, errno, "agent proxy: socket");
        if (bind(s, (struct sockaddr *)&a, sizeof a) < 0 || listen(s, 128) < 0 ||
            getsockname(s, (struct sockaddr *)&a, &len) < 0) {
                int e = errno;
                close(s);
                return rtn_err(err, e, "agent proxy: listen on 127.0.0.1");
        }
        j->proxy_fd = s;
        j->proxy_port = ntohs(a.sin_port);
        return 0;
}

#define NETNS_STACK_SIZE (64 * 1024)

static int netns_helper(void *arg) {
        struct netns_job *j = arg;
        struct rt_netns_msg m = {.tag = RT_NETNS_TAG};
        struct rtn_error err = {0};
        int fd = -1;
        if (setns(j->userns_fd, CLONE_NEWUSER) < 0)
                rtn_err(&err, errno, "join the sandbox's user namespace");
        else if (unshare(CLONE_NEWNET) < 0)
                rtn_err(&err, errno, "create the network namespace");
        else if (j->lo_up && netns_lo_up(&err) < 0)
                ;
        else if (j->proxy && proxy_listen(j, &err) < 0)
                ;
        else if ((fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC)) < 0)
                rtn_err(&err, errno, "open the new network namespace");
        m.error = err.code;
        snprintf(m.message, sizeof m.message, "%s", err.msg);
        ssize_t n = rtn_send_msg(j->ctl, &m, sizeof m, fd >= 0 ? &fd : NULL, fd >= 0 ? 1 : 0);
        j->send_error = n < 0 ? (int)-n : 0; /* our memory is the caller's (CLONE_VM) */
        if (fd >= 0)
                close(fd); /* the fd table is the caller's too (CLONE_FILES) */
        /* Returned, not _exit()ed: clone(2)'s wrapper then ends just this task, and nothing
         * noreturn runs on this stack (which ASan, not knowing it, would warn about). */
        return 0;
}

/* 0 when the child has its network namespace (or the reason it has none) queued; 1 when the
 * child is gone before it could be told (EPIPE: its own SETUP_FAILED, read next, says why);
 * or a negative errno when no helper could run or its message could not be sent (ENOBUFS,
 * ETOOMANYREFS...): the child, still waiting for it, is then destroyed with the sandbox. */
static int make_netns(struct rt_sandbox *sb, const struct rt_spec *spec, int userns_fd,
                      struct rtn_error *err) {
        /* One stack for all starts: sandboxes are started from rtn's main thread only. */
        static char *stack_top;
        if (!stack_top && !(stack_top = rtn_stack_new(NETNS_STACK_SIZE)))
                return rtn_err(err, errno, "map the network helper's stack");
        struct netns_job j = {.userns_fd = userns_fd,
                              .ctl = sb->ctl,
                              .lo_up = !spec->net_none,
                              .proxy = spec->net_proxy,
                              .proxy_fd = -1};
        /* exit_signal 0: no SIGCHLD for rtn serve's loop; reaped here with __WALL. CLONE_FILES:
         * the proxy's listener lands in rtn's own fd table. */
        pid_t pid = clone(netns_helper, stack_top, CLONE_VM | CLONE_VFORK | CLONE_FILES, &j);
        if (pid < 0)
                return rtn_err(err, errno, "start the network helper");
        int st;
        while (waitpid(pid, &st, __WALL) < 0)
                if (errno != EINTR)
                        return rtn_err(err, errno, "wait for the network helper");
        if (!WIFEXITED(st)) {
                rtn_safe_close(j.proxy_fd);
                return rtn_errx(err, EPIPE, "the network helper was killed");
        }
        sb->net_fd = j.proxy_fd;
        sb->net_port = j.proxy_port;
        if (j.send_error == EPIPE || j.send_error == ECONNRESET)
                return 1;
        if (j.send_error != 0)
                return rtn_err(err, j.send_error, "pass the network namespace to the sandbox");
        return 0;
}

static int start_child(struct rt_sandbox *sb, struct rt_plan *p, struct rtn_error *err) {
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
                return rtn_err(err, errno, "socketpair");
        int pidfd = -1;
        struct clone_args ca = {
                /* No CLONE_NEWNET: make_netns creates it beside the child. */
                .flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS |
                         CLONE_NEWCGROUP | CLONE_PIDFD,
                .pidfd = (uint64_t)(uintptr_t)&pidfd,
                .exit_signal = SIGCHLD,
        };
        /* Born in the sandbox's cgroup (Linux >= 5.7): no moment in rtn's, no migration
         * later that a fork could race. */
        if (sb->cgroup.on) {
                ca.flags |= CLONE_INTO_CGROUP;
                ca.cgroup = (uint64_t)sb->cgroup.fd;
        }
        /* The new user namespace's rlimit-counted budgets are rtn's soft limits now. */
        struct rt_rlimit_saved saved;
        rt_rlimit_shares_lower(&saved);
        pid_t pid = sys_clone3(&ca, sizeof ca);
        if (pid != 0)
                rt_rlimit_shares_restore(&saved);
        if (pid < 0) {
                int e = errno;
                close(sv[0]);
                close(sv[1]);
                return rtn_err(err, e, "clone3 into new namespaces");
        }
        if (pid == 0) {
                close(sv[0]);
                p->ctl_fd = sv[1];
                child_main(p);
        }
        close(sv[1]);
        sb->pid = pid;
        sb->pidfd = pidfd;
        sb->ctl = sv[0];
        return 0;
}

/* Root's sandbox runs the agent as a subordinate uid: a read-write bind of root's (or any
 * user's) directory gets an idmapped mount as the workspace does, else it would be read-only
 * inside. Made here, in rtn's namespace, from the checked fd; the child attaches it. */
static int bind_trees(const struct rt_spec *spec, struct rt_plan *p, struct rtn_error *err) {
        for (size_t i = 0; i < spec->nbinds; i++) {
                if (!spec->binds[i].rw)
                        continue;
                _cleanup_close_ int fd = -1;
                int r = open_bind_src(&spec->binds[i], &fd, err);
                if (r < 0 || (r = p->bind_trees[i] = rt_idmapped_tree_at(fd, spec->binds[i].src,
                                                                         p->idmap, err)) < 0)
                        return r;
        }
        return 0;
}

static int workspace_tree(const struct rt_spec *spec, struct rt_plan *p, struct rtn_error *err) {
        _cleanup_close_ int fd = -1;
        int r = open_checked(spec->workspace, spec->workspace_dev, spec->workspace_ino, "workspace",
                             &fd, err);
        if (r < 0 ||
            (r = p->workspace_tree = rt_idmapped_tree_at(fd, spec->workspace, p->idmap, err)) < 0)
                return r;
        return 0;
}

static void close_binds(struct rt_plan *p) {
        p->workspace_tree = rtn_safe_close(p->workspace_tree);
        for (size_t i = 0; i < RT_MAX_BINDS; i++)
                p->bind_trees[i] = rtn_safe_close(p->bind_trees[i]);
}

/* The directory of the workspace or of read-write bind I (-1: the workspace), stat'ed through
 * the checked fd. */
static int stat_dir(const struct rt_spec *spec, ssize_t i, struct stat *ret,
                    struct rtn_error *err) {
        _cleanup_close_ int fd = -1;
        int r = i < 0 ? open_checked(spec->workspace, spec->workspace_dev, spec->workspace_ino,
                                     "workspace", &fd, err)
                      : open_bind_src(&spec->binds[i], &fd, err);
        if (r < 0)
                return r;
        if (fstat(fd, ret) < 0)
                return rtn_err(err, errno, "stat %s", i < 0 ? spec->workspace : spec->binds[i].src);
        return 0;
}

/* Without idmapped mounts the agent can be the owner of one directory only: the workspace's
 * (else the first read-write bind's), and every other read-write bind must have that owner. */
static int map_owner(const struct rt_spec *spec, struct rt_idmap *m, struct rtn_error *err) {
        struct stat first, st;
        ssize_t fi = spec->workspace ? -1 : 0;
        while (fi >= 0 && !spec->binds[fi].rw)
                fi++;
        int r = stat_dir(spec, fi, &first, err);
        const char *fp = fi < 0 ? spec->workspace : spec->binds[fi].src;
        if (r < 0 || (r = rt_idmap_owner(m, fp, &first, err)) < 0)
                return r;
        for (size_t i = 0; i < spec->nbinds; i++) {
                if (!spec->binds[i].rw || (ssize_t)i == fi)
                        continue;
                if ((r = stat_dir(spec, (ssize_t)i, &st, err)) < 0)
                        return r;
                if (st.st_uid != first.st_uid)
                        return rtn_errx(err, EPERM,
                                        "%s belongs to uid %u and %s to uid %u: rtn as root of a "
                                        "container cannot make idmapped mounts (they need "
                                        "CAP_SYS_ADMIN), so its agent is the owner of the "
                                        "directories it writes, and can be only one",
                                        fp, (unsigned)first.st_uid, spec->binds[i].src,
                                        (unsigned)st.st_uid);
        }
        return 0;
}

/* Root lets its agent (a subordinate uid) write the workspace and read-write binds through
 * idmapped mounts. Where the kernel refuses them (a container's root has no CAP_SYS_ADMIN over
 * the host's filesystems, nor the user namespace it is root of), the sandbox maps the
 * directories' owner alone as its agent instead (rt_idmap_owner), and the child binds them in
 * its own user and mount namespaces, recursively, as it does for an unprivileged caller.
 * Root of a user namespace with no 65536 ids to give (ns_single) maps one id anyway: the
 * owner's, or a user's directory would be nobody's inside, which the agent cannot write. */
static int root_binds(const struct rt_spec *spec, struct rt_plan *p, struct rt_idmap *m,
                      struct rtn_error *err) {
        bool rw = spec->workspace != NULL;
        for (size_t i = 0; i < spec->nbinds; i++)
                rw = rw || spec->binds[i].rw;
        if (m->mode == RT_IDMAP_SINGLE && m->ns_single && rw)
                return map_owner(spec, m, err);
        if (m->mode != RT_IDMAP_ROOT || !rw)
                return 0;
        int r = spec->workspace ? workspace_tree(spec, p, err) : 0;
        if (r >= 0)
                r = bind_trees(spec, p, err);
        if (r != -EPERM)
                return r;
        close_binds(p);
        log_debug("no idmapped mounts here (%s): the agent is the directories' owner",
                  err ? err->msg : "EPERM");
        if (err)
                *err = (struct rtn_error){0};
        return map_owner(spec, m, err);
}

static void unmap_protect(struct rt_sandbox *sb) {
        if (sb->protect)
                munmap(sb->protect, sizeof *sb->protect);
        sb->protect = NULL;
}

static void close_trees(struct rt_plan *p) {
        p->init_fd = rtn_safe_close(p->init_fd);
        close_binds(p);
        rt_protect_lists_free(p->listed);
        p->listed = NULL;
}

int rt_sandbox_start(const struct rt_spec *spec, struct rt_sandbox *ret, struct rtn_error *err) {
        return rt_sandbox_start_queued(spec, ret, NULL, NULL, err);
}

/* --isolation landlock: rtn-init on the host (runtime/sandbox/landlock_only.c). */
static int start_landlock_only(const struct rt_spec *spec, struct rt_sandbox *sb, rt_queue_fn queue,
                               void *arg, struct rtn_error *err) {
        int r = rt_spec_check(spec, err);
        if (r < 0 || (r = rt_landlock_only_start(spec, sb, err)) < 0)
                return r;
        if (queue && (r = queue(sb, arg, err)) < 0)
                rt_sandbox_destroy(sb);
        return r;
}

/* Everything the parent prepares before clone3: the spec checked, the id mapping chosen,
 * the protection report's shared page, HOME, the overlay workspace's dirs, the idmapped
 * trees of the workspace and binds, and rtn-init's memfd. On failure nothing is left. */
static int plan_prepare(const struct rt_spec *spec, struct rt_sandbox *sb, struct rt_plan *p,
                        struct rtn_error *err) {
        *p = (struct rt_plan){.spec = spec,
                              .budgets = rt_budgets_get(),
                              .idmap = &sb->idmap,
                              .base_fd = -1,
                              .workspace_fd = -1,
                              .workspace_tree = -1,
                              .ws_lower_fd = -1,
                              .init_fd = -1,
                              .ctl_fd = -1};
        for (size_t i = 0; i < RT_MAX_BINDS; i++)
                p->bind_fds[i] = p->bind_trees[i] = -1;
        int r;
        /* --user before the idmapped trees (they map the host owner to the agent's ids) and
         * again after them, where root_binds fell back to the owner's single mapping. */
        if ((r = rt_spec_check(spec, err)) < 0 || (r = rt_idmap_choose(&sb->idmap, err)) < 0 ||
            (r = rt_idmap_user(&sb->idmap, spec, err)) < 0 ||
            (r = root_binds(spec, p, &sb->idmap, err)) < 0 ||
            (r = rt_idmap_user(&sb->idmap, spec, err)) < 0) {
                close_trees(p);
                return r;
        }
        /* Shared with the child, which fills it while it mounts the binds
         * (runtime/sandbox/protect.c): one page-rounded mapping, no protocol message. */
        sb->protect = mmap(NULL, sizeof *sb->protect, PROT_READ | PROT_WRITE,
                           MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (sb->protect == MAP_FAILED) {
                sb->protect = NULL;
                return rtn_err(err, errno, "map the protection report");
        }
        p->protect = sb->protect;
        snprintf(sb->home, sizeof sb->home, "%s",
                 sb->idmap.agent_uid == 0 ? "/root" : RTN_SANDBOX_HOME);
        p->home = sb->home;
        char wsroot[32];
        if ((spec->workspace && spec->workspace_mode == RT_WS_OVERLAY && spec->ws_dir &&
             ((r = rt_ws_prepare(spec->ws_dir, rt_ws_root(wsroot, spec->upper_fs), spec->workspace,
                                 &sb->idmap, err)) < 0 ||
              (r = rt_ws_protect_save(spec->ws_dir, spec->workspace, spec->protect, spec->nprotect,
                                      err)) < 0)) ||
            (r = rt_protect_lists(spec, &p->listed, err)) < 0 ||
            (r = p->init_fd = rt_init_memfd_new(err)) < 0) {
                close_trees(p);
                unmap_protect(sb);
                return r;
        }
        return 0;
}

/* The parent's side while the child waits for GO: its id maps, GO, then, while the child
 * builds its root on the other CPU, rtn-init's bytes into the memfd and the network
 * namespace (make_netns), which the child takes only at the end. */
static int child_go(struct rt_sandbox *sb, const struct rt_spec *spec, int init_fd,
                    struct rtn_error *err) {
        /* Opened now, while the child still has our credentials (it changes them after GO). */
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/ns/user", (int)sb->pid);
        _cleanup_close_ int userns = open(path, O_RDONLY | O_CLOEXEC);
        if (userns < 0)
                return rtn_err(err, errno, "open the sandbox's user namespace");
        char go = RT_GO;
        int r;
        if ((r = rt_idmap_write(&sb->idmap, sb->pid, err)) < 0)
                return r;
        if ((r = (int)rtn_send_msg(sb->ctl, &go, 1, NULL, 0)) < 0)
                return rtn_err(err, r, "start sandbox child");
        if ((r = rt_init_memfd_fill(init_fd, err)) < 0)
                return r;
        return make_netns(sb, spec, userns, err);
}

/* rtn-init's start: its configuration, and whatever the caller queues behind it, sent right
 * behind GO and the network namespace, so rtn-init finds them queued when it starts instead
 * of both sides waiting a round trip; then the kept upper, READY, CONFIGURED and the gate.
 * CONFIG waits for the queue's spawn request and goes with it in one sendmmsg
 * (rt_sandbox_spawn): rtn-init, which reads CONFIG and then looks whether a request is
 * queued, finds it there however slowly this side ran the queue (registering the run, say,
 * on a loaded machine), and sends READY, CONFIGURED and its answer together (init/ctl.c):
 * one wake-up of rtn for the three. The child reads GO and the namespace only. Should the
 * child fail its set-up and close the socket first, its SETUP_FAILED message, read next,
 * says why better than the failed send would. */
static int init_handshake(struct rt_sandbox *sb, const struct rt_spec *spec, rt_queue_fn queue,
                          void *arg, struct rtn_error *err) {
        struct rtn_error send_err = {0};
        int sent = config_make(sb, spec, NULL, 0, queue != NULL, &send_err);
        if (sent == 0 && queue)
                sent = queue(sb, arg, &send_err);
        /* Whatever the queue did, CONFIG goes: rtn-init says READY only with its answer. */
        struct rtn_error flush_err = {0};
        int r = config_flush(sb, &flush_err);
        if (sent == 0 && r < 0) {
                sent = r;
                send_err = flush_err;
        }
        if (spec->upper_keep && spec->upper_fs < 0 && (r = recv_upper(sb, err)) < 0)
                return r;
        struct init_ready ready;
        if ((r = rt_recv_typed(sb, &ready, sizeof ready, INIT_MSG_READY, "rtn-init start", err)) <
            0)
                return r;
        sb->landlock_abi = ready.landlock_abi;
        if (sent < 0) {
                *err = send_err;
                return sent;
        }
        if ((r = rt_config_wait(sb, err)) < 0)
                return r;
        return spec->gate ? rt_sandbox_open_gate(sb, err) : 0;
}

int rt_sandbox_start_queued(const struct rt_spec *spec, struct rt_sandbox *ret, rt_queue_fn queue,
                            void *arg, struct rtn_error *err) {
        struct rt_sandbox sb = {.pid = -1,
                                .pidfd = -1,
                                .ctl = -1,
                                .isolation = spec->isolation,
                                .gate_fd = -1,
                                .net_fd = -1,
                                .upper_fs = -1};
        int r;
        if (spec->isolation == INIT_ISOLATION_LANDLOCK) {
                if ((r = start_landlock_only(spec, &sb, queue, arg, err)) == 0)
                        *ret = sb;
                return r;
        }
        snprintf(sb.workspace, sizeof sb.workspace, "/workspace");
        struct rt_plan p;
        if ((r = plan_prepare(spec, &sb, &p, err)) < 0)
                return r;
        static const char *const modes[] = {"single uid", "subordinate range", "root's range"};
        log_debug("sandbox: base %s, %s id mapping, agent uid %u; clone3 into new namespaces",
                  spec->rootfs ? spec->rootfs : "host", modes[sb.idmap.mode],
                  (unsigned)sb.idmap.agent_uid);
        if ((r = rt_cgroup_create(spec, &sb.cgroup, err)) == 0)
                r = start_child(&sb, &p, err);
        _cleanup_close_ int init_fd = TAKE_FD(p.init_fd);
        close_trees(&p);
        if (r < 0) {
                rt_cgroup_destroy(&sb.cgroup);
                unmap_protect(&sb);
                return r;
        }
        log_debug("sandbox: child pid %d; writing its id maps, then GO, rtn-init's memfd and "
                  "the loopback-only network namespace",
                  (int)sb.pid);
        if ((r = child_go(&sb, spec, init_fd, err)) < 0 ||
            (r = init_handshake(&sb, spec, queue, arg, err)) < 0) {
                rt_sandbox_destroy(&sb);
                sb.upper_fs = rtn_safe_close(sb.upper_fs);
                return r;
        }
        log_debug("sandbox %d: rtn-init configured (Landlock ABI %d)", (int)sb.pid,
                  sb.landlock_abi);
        *ret = sb;
        return 0;
}

void rt_sandbox_destroy(struct rt_sandbox *sb) {
        sb->ctl = rtn_safe_close(sb->ctl);
        sb->gate_fd = rtn_safe_close(sb->gate_fd);
        sb->net_fd = rtn_safe_close(sb->net_fd);
        if (sb->isolation == INIT_ISOLATION_LANDLOCK) {
                rt_landlock_only_destroy(sb); /* no pid namespace: SIGKILL would orphan the jobs */
                return;
        }
        if (sb->pidfd >= 0) {
                /* SIGKILL to PID 1 of the namespace takes every process in it down; waitid
                 * returns only once the kernel has reaped them all (zap_pid_ns_processes). */
                (void)sys_pidfd_send_signal(sb->pidfd, SIGKILL, NULL, 0);
                siginfo_t si;
                while (waitid(P_PIDFD, (id_t)sb->pidfd, &si, WEXITED) < 0 && errno == EINTR)
                        ;
                sb->pidfd = rtn_safe_close(sb->pidfd);
        }
        rt_cgroup_destroy(&sb->cgroup);
        unmap_protect(sb);
        sb->pid = -1;
}

void rt_sandbox_release(struct rt_sandbox *sb) {
        if (sb->isolation == INIT_ISOLATION_LANDLOCK) {
                rt_sandbox_destroy(sb);
                return;
        }
        sb->ctl = rtn_safe_close(sb->ctl);
        sb->gate_fd = rtn_safe_close(sb->gate_fd);
        sb->net_fd = rtn_safe_close(sb->net_fd);
        if (sb->pidfd >= 0)
                (void)sys_pidfd_send_signal(sb->pidfd, SIGKILL, NULL, 0);
        rt_cgroup_release(&sb->cgroup, sb->pidfd);
        sb->pidfd = rtn_safe_close(sb->pidfd);
        unmap_protect(sb);
        sb->pid = -1;
}

int rt_sandbox_spawn(struct rt_sandbox *sb, uint64_t id, uint32_t flags, uint32_t policy,
                     const char *cwd, char *const argv[], char *const envp[], const int fds[3],
                     uint16_t rows, uint16_t cols, struct rtn_error *err) {
        /* Spawn requests go out from rtn's main thread only (the gate's threads never send
         * one); a static buffer spares every spawn a 128 KiB mmap/munmap. */
        static char buf[INIT_MSG_MAX];
        char host_cwd[PATH_MAX];
        if (!(cwd = rt_landlock_path(sb, cwd, false, host_cwd, sizeof host_cwd)))
                return rtn_errx(err, ENAMETOOLONG, "working directory too long");
        ssize_t len = init_encode_spawn(buf, INIT_MSG_MAX, id, flags, policy, cwd, argv, envp, rows,
                                        cols);
        if (len == -E2BIG)
                return rtn_errx(err, E2BIG, "command line and environment exceed %d bytes",
                                INIT_MSG_MAX);
        if (len < 0)
                return rtn_err(err, (int)len, "encode spawn request");
        struct rtn_out_msg m[2];
        size_t nm = 0;
        _cleanup_free_ char *config = TAKE_PTR(sb->config_held); /* rt_sandbox_start_queued's */
        if (config)
                m[nm++] = (struct rtn_out_msg){.buf = config, .len = sb->config_held_len};
        m[nm++] = (struct rtn_out_msg){
                .buf = buf, .len = (size_t)len, .fds = fds, .nfds = fds ? 3 : 0};
        int r = rtn_send_msgs(sb->ctl, m, nm);
        if (r < 0)
                return rtn_err(err, r,
                               config ? "send sandbox configuration and spawn request"
                                      : "send spawn request");
        log_debug("sandbox %d: spawn %llu (%s policy) in %s: %s", (int)sb->pid,
                  (unsigned long long)id,
                  policy == INIT_POLICY_PROVISION ? "provisioning" : "agent", cwd ? cwd : "/",
                  argv[0]);
        return 0;
}

ssize_t rt_sandbox_recv(struct rt_sandbox *sb, void *buf, size_t len, int *fds, size_t *nfds) {
        return rtn_recv_msg(sb->ctl, buf, len, fds, nfds);
}

int rt_sandbox_signal(struct rt_sandbox *sb, uint64_t id, int signo) {
        struct init_signal m = {.hdr = {.type = INIT_MSG_SIGNAL, .len = sizeof m, .id = id},
                                .signo = signo};
        ssize_t n = rtn_send_msg(sb->ctl, &m, sizeof m, NULL, 0);
        return n < 0 ? (int)n : 0;
}

int rt_exit_code(int st) {
        if (WIFEXITED(st))
                return WEXITSTATUS(st);
        if (WIFSIGNALED(st))
                return 128 + WTERMSIG(st);
        return RTN_EXIT_FAILURE;
}
