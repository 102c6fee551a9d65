/* The spawn path of rtn-init. For each request it starts a child that confines itself step by
 * step and execs the command; an O_CLOEXEC socket pair carries {errno, step} back if any step
 * fails, and closes silently on a successful execve, so rtn learns "not found" (127) apart from
 * "cannot execute" (126) apart from a policy failure (125) (the classic self-pipe trick). A
 * socket rather than a pipe because it also carries, with SCM_RIGHTS, the listener of the
 * command's seccomp filter: only the task that installs a filter receives it, and it must
 * reach rtn-init (init/notify.c) but never the command (it is O_CLOEXEC). An agent command
 * started by the confined loop (init/privileged.c) inherits the loop thread's credentials,
 * Landlock domain and filter, so its child takes only the steps up to rlimits, and says what
 * failed through memory it shares with us until execve (child_err).
 * The child shares rtn-init's memory until it execs (clone with CLONE_VM|CLONE_VFORK, as
 * glibc's posix_spawn does): no page tables to copy, no copy-on-write faults in either
 * process, no address space to tear down at execve (docs/benchmarks.md). rtn-init waits
 * meanwhile, so the child runs on a stack of its own and must not change what rtn-init
 * keeps in memory: it only reads the request and the policy, and makes raw syscalls for
 * credentials (glibc's set*id wrappers may signal every thread it knows of, setxid(7)-style,
 * and those threads would be rtn-init's). */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/io.h"
#include "common/sandbox_dirs.h"
#include "common/syscall.h"
#include "init/internal.h"
#include "init/policy.h"

struct spawn_err {
        int32_t error;
        uint32_t step;
};

static struct init_spawn_view view; /* large: keep it off the stack */

int init_keep_host_paths(struct init_state *st, const char *const writable[], uint32_t n) {
        size_t used = 0;
        st->nhost = 0;
        for (uint32_t i = 0; i < n && i < INIT_MAX_WRITABLE; i++) {
                if (!(st->cfg.host_writable & (1u << i)))
                        continue;
                size_t len = strlen(writable[i]) + 1;
                if (used + len > sizeof st->host_strs)
                        return -E2BIG;
                memcpy(st->host_strs + used, writable[i], len);
                st->host[st->nhost++] = st->host_strs + used;
                used += len;
        }
        return 0;
}

int init_policy_prepare(struct init_state *st, const struct init_config_view *v,
                        struct rtn_error *err) {
        const char *const *writable = v->writable;
        uint32_t n = v->nwritable;
        if (st->cfg.isolation == INIT_ISOLATION_NO_LANDLOCK)
                return 0;
        int abi = init_landlock_abi();
        if (abi <= 0)
                return rtn_errx(err, EOPNOTSUPP,
                                "Landlock is not available in this kernel "
                                "(ABI %d); refusing to run without it",
                                abi);
        /* In a full sandbox the pid and net namespaces keep signals and abstract sockets
         * from the host; scoping on top would only cut one command off from another's jobs
         * (each command is its own domain). Without namespaces, scoping is the wall. */
        if (st->cfg.isolation == INIT_ISOLATION_LANDLOCK)
                return init_landlock_prepare_except(
                        INIT_POLICY_AGENT, writable, n, v->readonly, v->nreadonly, 0,
                        INIT_LANDLOCK_SCOPED | INIT_LANDLOCK_HOST, &st->ruleset_fd[0], err);
        /* A full sandbox protects the workspace's entries with mounts (runtime/sandbox/protect.c).
         */
        if (v->nreadonly)
                return rtn_errx(err, EINVAL, "read-only paths are for --isolation landlock");
        int r = init_landlock_prepare(INIT_POLICY_AGENT, writable, n, 0,
                                      st->cfg.agent_root ? INIT_LANDLOCK_ROOTFS : 0,
                                      &st->ruleset_fd[0], err);
        if (r < 0)
                return r;
        /* Only the rulesets a command of this sandbox may use (init_config.policies): an
         * rtn exec runs one agent command, and the other two cost a walk of / each. */
        if (st->cfg.policies & INIT_POLICY_BIT(INIT_POLICY_AGENT_ROOT)) {
                /* A root command by call gets --user root's domain: the agent's own when
                 * the agent is that root already. */
                if (st->cfg.agent_root) {
                        int fd = fcntl(st->ruleset_fd[0], F_DUPFD_CLOEXEC, 3);
                        if (fd < 0)
                                return rtn_err(err, errno, "landlock: dup the agent's ruleset");
                        st->ruleset_fd[INIT_POLICY_AGENT_ROOT] = fd;
                } else if ((r = init_landlock_prepare(
                                    INIT_POLICY_AGENT, writable, n, 0, INIT_LANDLOCK_ROOTFS,
                                    &st->ruleset_fd[INIT_POLICY_AGENT_ROOT], err)) < 0)
                        return r;
        }
        if (!(st->cfg.policies & INIT_POLICY_BIT(INIT_POLICY_PROVISION)))
                return 0; /* built by init_gate_open, if it opens */
        /* No gate yet: provisioning may connect nowhere until init_gate_open names its port.
         * It may only read the host directories (docs/security-invariants.md, 14). */
        return init_landlock_prepare_except(INIT_POLICY_PROVISION, NULL, 0, st->host, st->nhost,
                                            st->gate_port, 0, &st->ruleset_fd[1], err);
}

pid_t init_job_pid(const struct init_state *st, uint64_t id) {
        for (size_t i = 0; i < INIT_MAX_JOBS; i++)
                if (st->jobs[i].pid > 0 && st->jobs[i].id == id)
                        return st->jobs[i].pid;
        return -1;
}

bool init_job_id(const struct init_state *st, pid_t pid, uint64_t *ret_id) {
        for (size_t i = 0; pid > 0 && i < INIT_MAX_JOBS; i++)
                if (st->jobs[i].pid == pid) {
                        *ret_id = st->jobs[i].id;
                        return true;
                }
        return false;
}

bool init_job_take(struct init_state *st, pid_t pid, uint64_t *ret_id, bool *ret_final) {
        for (size_t i = 0; i < INIT_MAX_JOBS; i++)
                if (st->jobs[i].pid == pid) {
                        *ret_id = st->jobs[i].id;
                        *ret_final = st->jobs[i].final;
                        st->jobs[i].pid = 0;
                        return true;
                }
        return false;
}

/* What a child without an error socket (efd -1: one started by the confined loop, which
 * has no listener to hand over) failed at. It shares our memory until execve, and we run
 * again only once it has exec'd or exited (CLONE_VFORK), so no socket is needed to learn it,
 * as in glibc's posix_spawn. */
static struct spawn_err child_err;

static __attribute__((noreturn)) void die(int efd, uint32_t step, int e) {
        struct spawn_err se = {.error = e > 0 ? e : EINVAL, .step = step};
        if (efd >= 0)
                (void)!write(efd, &se, sizeof se);
        else
                child_err = se;
        _exit(init_spawn_exit_code(step, se.error));
}

/* execvpe with the PATH of the command's own environment (glibc's uses ours). */
static int exec_path(char *const argv[], char *const envp[]) {
        const char *cmd = argv[0];
        if (strchr(cmd, '/')) {
                execve(cmd, argv, envp);
                return errno;
        }
        const char *path = RTN_SANDBOX_PATH;
        for (size_t i = 0; envp[i]; i++)
                if (!strncmp(envp[i], "PATH=", 5))
                        path = envp[i] + 5;
        int saw_eacces = 0, last = ENOENT;
        char buf[4096];
        for (const char *p = path;; p++) {
                const char *c = strchrnul(p, ':');
                size_t dl = (size_t)(c - p);
                if (dl == 0)
                        dl = 1, p = "."; /* empty entry: the current directory (POSIX) */
                if (dl + strlen(cmd) + 2 <= sizeof buf) {
                        memcpy(buf, p, dl);
                        buf[dl] = '/';
                        strcpy(buf + dl + 1, cmd);
                        execve(buf, argv, envp);
                        if (errno == EACCES)
                                saw_eacces = 1;
                        else if (errno != ENOENT && errno != ENOTDIR)
                                last = errno;
                }
                if (*c == '\0')
                        break;
                p = c;
        }
        return saw_eacces ? EACCES : last;
}

static void setup_stdio(int efd, int *fds, size_t nfds, const char *pty_slave) {
        if (pty_slave) {
                int s = openat(AT_FDCWD, pty_slave, O_RDWR); /* after setsid: becomes our ctty */
                if (s < 0 || ioctl(s, TIOCSCTTY, 0) < 0)
                        die(efd, INIT_STEP_PTY, errno);
                for (int i = 0; i < 3; i++)
                        if (dup2(s, i) < 0)
                                die(efd, INIT_STEP_STDIO, errno);
                if (s > 2)
                        close(s);
                return;
        }
        /* A passed fd in 0..2 moves above 2 first, so that dup2 into 0..2 cannot clobber
         * one another; one above stays (received with MSG_CMSG_CLOEXEC, it closes at
         * execve), which spares every spawn three dups (musl's F_DUPFD_CLOEXEC is two calls
         * each). */
        int hi[3];
        for (int i = 0; i < 3; i++) {
                int src = (size_t)i < nfds ? fds[i] : -1;
                if (src < 0)
                        src = openat(AT_FDCWD, "/dev/null", O_RDWR | O_CLOEXEC);
                if (src < 0 || (hi[i] = src > 2 ? src : fcntl(src, F_DUPFD_CLOEXEC, 10)) < 0)
                        die(efd, INIT_STEP_STDIO, errno);
        }
        for (int i = 0; i < 3; i++)
                if (dup2(hi[i], i) < 0)
                        die(efd, INIT_STEP_STDIO, errno);
}

int init_set_creds(const struct init_state *st, uint32_t policy, struct rtn_error *err) {
        /* No user namespace: commands run as the caller, or, when that is root, as the
         * uid rtn chose that owns nothing (runtime/sandbox/landlock_only.c): root would own
         * the system files, whose metadata Landlock does not guard. */
        if (st->cfg.isolation == INIT_ISOLATION_LANDLOCK && geteuid() != 0)
                return 0;
        if (st->cfg.isolation == INIT_ISOLATION_LANDLOCK && st->cfg.agent_uid == 0)
                return rtn_errx(err, EPERM, "no commands as root without a user namespace");
        bool root = policy == INIT_POLICY_PROVISION || policy == INIT_POLICY_AGENT_ROOT;
        uid_t uid = root ? 0 : st->cfg.agent_uid;
        gid_t gid = root ? 0 : st->cfg.agent_gid;
        /* Denied (EPERM) when rtn mapped a single id and wrote setgroups=deny. */
        /* Raw syscalls: the spawn child shares rtn-init's memory (see the top of this file). */
        if (syscall(SYS_setgroups, 0, NULL) < 0 && errno != EPERM)
                return rtn_err(err, errno, "setgroups");
        if (syscall(SYS_setresgid, gid, gid, gid) < 0)
                return rtn_err(err, errno, "setresgid %u", (unsigned)gid);
        /* Shrink the bounding set while CAP_SETPCAP is still ours; the switch to a non-zero
         * uid then clears every other set (capabilities(7), "Effect of user ID changes"). */
        int r;
        if (uid != 0 && (r = init_caps_drop_bounding(err)) < 0)
                return r;
        if (syscall(SYS_setresuid, uid, uid, uid) < 0)
                return rtn_err(err, errno, "setresuid %u", (unsigned)uid);
        if (uid != 0)
                return init_caps_check_none(err);
        if (policy == INIT_POLICY_AGENT_ROOT)
                return init_caps_drop_all(INIT_CAPS_ROOT, err);
        if (policy == INIT_POLICY_AGENT && st->cfg.agent_drop_caps)
                return init_caps_drop_all(st->cfg.agent_root ? INIT_CAPS_ROOT : 0, err);
        return 0;
}

/* A credential change resets the process's dumpable flag to fs.suid_dumpable (commit_creds),
 * and the process is rtn-init: where the host sets that to 1, rtn-init's memory and /proc
 * files would be open to the uid it just took. Set it back, and check. */
static int keep_undumpable(struct rtn_error *err) {
        if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0 || prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) != 0)
                return rtn_errx(err, EPERM, "rtn-init could not stay undumpable");
        return 0;
}

int init_confine_agent(const struct init_state *st, int *ret_listener, struct rtn_error *err) {
        int r = init_set_creds(st, INIT_POLICY_AGENT, err);
        if (r < 0 || (r = keep_undumpable(err)) < 0)
                return r;
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                return rtn_err(err, errno, "no_new_privs");
        if (st->cfg.isolation != INIT_ISOLATION_NO_LANDLOCK &&
            (r = init_landlock_enforce(st->ruleset_fd[INIT_POLICY_AGENT], err)) < 0)
                return r;
        return init_seccomp_install_notify(INIT_POLICY_AGENT, ret_listener, err);
}

static void set_creds(int efd, const struct init_state *st, uint32_t policy) {
        struct rtn_error err;
        if (init_set_creds(st, policy, &err) < 0)
                die(efd, INIT_STEP_CREDS, err.code);
}

struct child_args {
        const struct init_state *st;
        bool notify; /* install the reporting filter (rtn-init has room for its listener) */
        bool confined; /* started by the confined loop, whose policy it inherits */
        int ep[2];
        int *fds;
        size_t nfds;
        const char *pty_slave;
};

static __attribute__((noreturn)) void child(const struct child_args *a, int efd) {
        const struct init_state *st = a->st;
        struct rtn_error err;
        uint32_t policy = view.msg->policy;
        sigset_t all;
        sigemptyset(&all);
        sigprocmask(SIG_SETMASK, &all, NULL);
        signal(SIGPIPE, SIG_DFL);
        if (setsid() < 0)
                die(efd, INIT_STEP_SETSID, errno);
        setup_stdio(efd, a->fds, a->nfds, a->pty_slave);
        /* Everything but 0-2 closes at execve; the error socket and Landlock fd stay usable. */
        if (sys_close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) < 0)
                die(efd, INIT_STEP_STDIO, errno);
        if (chdir(view.cwd) < 0)
                die(efd, INIT_STEP_CHDIR, errno);
        if (init_rlimits_apply(&st->cfg.limits, &err) < 0)
                die(efd, INIT_STEP_RLIMITS, err.code);
        if (a->confined) /* credentials, no_new_privs, Landlock, seccomp: all inherited */
                die(efd, INIT_STEP_EXEC,
                    exec_path((char *const *)view.argv, (char *const *)view.envp));
        /* Provisioning runs in the gate's netns (its only way out is the gate); agent
         * commands stay in the main one, where nothing listens on the gate's port. setns
         * needs CAP_SYS_ADMIN over the netns's user namespace: do it before set_creds. */
        if (policy == INIT_POLICY_PROVISION && st->gate_netns >= 0 &&
            setns(st->gate_netns, CLONE_NEWNET) < 0)
                die(efd, INIT_STEP_NETNS, errno);
        set_creds(efd, st, policy);
        /* We still share rtn-init's memory (CLONE_VM): the credential change just reset its
         * dumpable flag to fs.suid_dumpable; execve gives the command its own afterwards. */
        if (keep_undumpable(&err) < 0)
                die(efd, INIT_STEP_CREDS, err.code);
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                die(efd, INIT_STEP_NNP, errno);
        /* Without Landlock nothing would keep provisioning (root inside, CAP_FSETID, a
         * filter without the set-id checks) out of the host directories. */
        if (policy == INIT_POLICY_PROVISION && st->cfg.isolation == INIT_ISOLATION_NO_LANDLOCK &&
            st->cfg.host_writable)
                die(efd, INIT_STEP_LANDLOCK, EPERM);
        int ll = st->ruleset_fd[policy];
        if (st->cfg.isolation != INIT_ISOLATION_NO_LANDLOCK && init_landlock_enforce(ll, &err) < 0)
                die(efd, INIT_STEP_LANDLOCK, err.code);
        int listener = -1;
        if (st->cfg.isolation == INIT_ISOLATION_LANDLOCK && init_seccomp_install_host_net(&err) < 0)
                die(efd, INIT_STEP_SECCOMP, err.code);
        /* A root command by call runs the agent's filter. */
        uint32_t filter = policy == INIT_POLICY_PROVISION ? policy : INIT_POLICY_AGENT;
        if (a->notify ? init_seccomp_install_notify(filter, &listener, &err) < 0
                      : init_seccomp_install(filter, &err) < 0)
                die(efd, INIT_STEP_SECCOMP, err.code);
        /* Under the filter now: sendmsg and execve are allowed, and nothing from here on may
         * be a notified call, since rtn-init, which would answer it, waits for our execve. */
        if (listener >= 0) {
                struct spawn_err hello = {0};
                if (rtn_send_msg(efd, &hello, sizeof hello, &listener, 1) < 0)
                        die(efd, INIT_STEP_SECCOMP, errno);
                close(listener);
        }
        die(efd, INIT_STEP_EXEC, exec_path((char *const *)view.argv, (char *const *)view.envp));
}

static int open_pty(const struct init_spawn *m, char slave[32]) {
        int master = openat(AT_FDCWD, "/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (master < 0)
                return negative_errno();
        int n, unlock = 0;
        if (ioctl(master, TIOCSPTLCK, &unlock) < 0 || ioctl(master, TIOCGPTN, &n) < 0) {
                int e = negative_errno();
                close(master);
                return e;
        }
        snprintf(slave, 32, "/dev/pts/%d", n);
        struct winsize ws = {.ws_row = m->rows, .ws_col = m->cols};
        if (ws.ws_row && ws.ws_col)
                (void)ioctl(master, TIOCSWINSZ, &ws);
        return master;
}

static void reply_failed(uint64_t id, int e, uint32_t step) {
        struct init_status s = {.hdr = {.type = INIT_MSG_SPAWN_FAILED, .len = sizeof s, .id = id},
                                .error = e,
                                .step = step};
        snprintf(s.message, sizeof s.message, "%s: %s", init_step_name(step), strerror(e));
        (void)init_ctl_send(&s, sizeof s, NULL, 0);
}

static int child_entry(void *arg) {
        const struct child_args *a = arg;
        if (a->ep[0] >= 0)
                close(a->ep[0]);
        child(a, a->ep[1]);
}

/* The child's stack, made once: rtn-init is suspended while a child runs on it, so one is
 * enough. 256 KiB covers child()'s frames (exec_path's 4 KiB buffer, rtn_error messages);
 * the lowest page stays PROT_NONE so an overflow faults instead of writing rtn-init's data. */
#define CHILD_STACK_SIZE (256 * 1024)
static void *child_stack_top(void) {
        static void *top;
        if (!top)
                top = rtn_stack_new(CHILD_STACK_SIZE);
        return top;
}

/* Returns the child's pid, or -errno. */
static pid_t start_child(struct child_args *a) {
        void *stack = child_stack_top();
        if (!stack)
                return -ENOMEM;
        pid_t pid = clone(child_entry, stack, CLONE_VM | CLONE_VFORK | SIGCHLD, a);
        return pid < 0 ? -errno : pid;
}

/* Reads what the child said before its execve, which has happened (or the child died) by
 * the time the vfork parent runs again: the listener (a zero spawn_err with one fd), and a
 * spawn_err naming the failed step if one failed; then EOF. Returns 0 when the command runs,
 * -1 with *se filled when it does not. A message that arrives damaged (its fd dropped for
 * want of fds here) does not mean the command is not running: it is skipped, and the
 * command then runs without a listener (its notified calls get ENOSYS). */
static int await_exec(int sock, struct spawn_err *se, int *ret_listener) {
        for (;;) {
                int fd = -1;
                size_t nfd = 1;
                ssize_t n = rtn_recv_msg(sock, se, sizeof *se, &fd, &nfd);
                if (n == -EMSGSIZE)
                        continue;
                if (n != (ssize_t)sizeof *se) /* EOF: closed by execve */
                        return 0;
                if (se->error != 0) {
                        rtn_safe_close(fd);
                        return -1;
                }
                if (nfd == 1) {
                        rtn_safe_close(*ret_listener);
                        *ret_listener = fd;
                }
        }
}

static struct init_job *free_slot(struct init_state *st) {
        for (size_t i = 0; i < INIT_MAX_JOBS; i++)
                if (st->jobs[i].pid == 0)
                        return &st->jobs[i];
        return NULL;
}

struct spawn_call {
        struct init_state *st;
        uint64_t id;
        int *fds;
        size_t nfds;
};

/* One spawn, start to SPAWNED or SPAWN_FAILED. An agent command started by the confined
 * loop inherits the loop thread's policy; any other gets the whole policy sequence in its
 * child, started from the privileged thread (init_privileged runs it inline when the loop
 * is not confined). */
static void spawn_one(void *arg) {
        const struct spawn_call *call = arg;
        struct init_state *st = call->st;
        uint64_t id = call->id;
        int *fds = call->fds;
        size_t nfds = call->nfds;
        int master = -1, ep[2] = {-1, -1}, listener = -1;
        char slave[32];
        struct init_job *slot = free_slot(st);
        bool pty = view.msg->flags & INIT_SPAWN_PTY;
        if (!pty && nfds != 3) {
                reply_failed(id, EBADMSG, INIT_STEP_PROTOCOL);
                goto out;
        }
        if (!slot || init_job_pid(st, id) > 0) {
                reply_failed(id, slot ? EEXIST : EAGAIN, INIT_STEP_FORK);
                goto out;
        }
        if (pty && (master = open_pty(view.msg, slave)) < 0) {
                reply_failed(id, -master, INIT_STEP_PTY);
                goto out;
        }
        struct child_args ca = {.st = st, .fds = fds, .nfds = nfds};
        ca.confined = view.msg->policy == INIT_POLICY_AGENT && init_loop_is_confined();
        ca.notify = !ca.confined && init_notify_has_room(st);
        if (!ca.confined && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ep) < 0) {
                reply_failed(id, errno, INIT_STEP_FORK);
                goto out;
        }
        ca.ep[0] = ep[0];
        ca.ep[1] = ep[1];
        ca.pty_slave = pty ? slave : NULL;
        child_err = (struct spawn_err){0};
        pid_t pid = start_child(&ca);
        ep[1] = rtn_safe_close(ep[1]);
        if (pid < 0) {
                reply_failed(id, (int)-pid, INIT_STEP_FORK);
                goto out;
        }
        for (size_t i = 0; i < nfds; i++)
                fds[i] = rtn_safe_close(fds[i]);
        struct spawn_err se = child_err;
        if (se.error != 0 || (!ca.confined && await_exec(ep[0], &se, &listener) < 0)) {
                reply_failed(id, se.error, se.step); /* the child exits; reaped as an orphan */
                goto out;
        }
        slot->id = id;
        slot->pid = pid;
        slot->final = view.msg->flags & INIT_SPAWN_FINAL;
        if (listener >= 0)
                init_notify_add(st, id, TAKE_FD(listener));
        struct init_spawned sp = {.hdr = {.type = INIT_MSG_SPAWNED, .len = sizeof sp, .id = id},
                                  .pid = pid};
        (void)init_ctl_send(&sp, sizeof sp, &master, master >= 0 ? 1 : 0);
out:
        for (size_t i = 0; i < nfds; i++)
                rtn_safe_close(fds[i]);
        rtn_safe_close(master);
        rtn_safe_close(listener);
        rtn_safe_close(ep[0]);
        rtn_safe_close(ep[1]);
}

void init_spawn(struct init_state *st, const void *msg, size_t len, int *fds, size_t nfds) {
        struct spawn_call call = {
                .st = st, .id = ((const struct init_msg_hdr *)msg)->id, .fds = fds, .nfds = nfds};
        if (init_decode_spawn(msg, len, &view) < 0 || view.msg->policy > INIT_POLICY_AGENT_ROOT) {
                reply_failed(call.id, EBADMSG, INIT_STEP_PROTOCOL);
        } else if (st->cfg.isolation == INIT_ISOLATION_LANDLOCK &&
                   view.msg->policy != INIT_POLICY_AGENT) {
                reply_failed(call.id, EPERM, INIT_STEP_LANDLOCK); /* no provisioning on the host */
        } else if (!(st->cfg.policies & INIT_POLICY_BIT(view.msg->policy))) {
                /* Not in the configuration (init_config.policies): no ruleset was built */
                reply_failed(call.id, EPERM, INIT_STEP_LANDLOCK);
        } else {
                st->spawned = true;
                if (view.msg->policy != INIT_POLICY_AGENT)
                        init_privileged(spawn_one, &call);
                else
                        spawn_one(&call);
                return;
        }
        for (size_t i = 0; i < nfds; i++)
                rtn_safe_close(fds[i]);
}
