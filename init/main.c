/* rtn-init: PID 1 inside every sandbox. It is the session's reaper and spawner: it reads
 * spawn requests from rtn over the control socket (fd 3), starts each command under the
 * policy (setsid → stdio → close-on-exec everything else → chdir → rlimits → credentials →
 * capabilities → no_new_privs → Landlock → seccomp last → execve, see init/spawn.c),
 * reports exits, and reaps every orphan. Once configured, the thread that runs its event
 * loop takes the agent's policy from credentials to seccomp itself, so an agent command's
 * child inherits those steps instead of taking them; a second thread keeps rtn-init's
 * credentials for what needs them (init/privileged.c). When rtn goes away (EOF on the
 * socket) it kills everything in the namespace and exits, which ends the sandbox. Once it
 * has started dropping privilege for a command any failure kills that command (fail
 * closed). In the weaker --isolation landlock mode there is no pid namespace: rtn-init is a
 * child subreaper of rtn on the host, and "everything" means its own descendants only. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/exitcode.h"
#include "common/io.h"
#include "common/syscall.h"
#include "init/internal.h"
#include "init/policy.h"

static struct init_state st = {.ruleset_fd = {-1, -1, -1}, .gate_netns = -1, .epfd = -1};
static char msgbuf[INIT_MSG_MAX];

static int send_status(uint32_t type, uint64_t id, int error, uint32_t step, const char *msg) {
        struct init_status s = {
                .hdr = {.type = type, .len = sizeof s, .id = id}, .error = error, .step = step};
        snprintf(s.message, sizeof s.message, "%s", msg ? msg : "");
        ssize_t n = init_ctl_send(&s, sizeof s, NULL, 0);
        return n < 0 ? (int)n : 0;
}

/* The state letter of /proc/PID/stat (after the last ')'), or 0. */
static char proc_state(pid_t pid) {
        char path[48], buf[512];
        snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
        _cleanup_close_ int fd = openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
        if (n <= 0)
                return 0;
        buf[n] = '\0';
        char *p = strrchr(buf, ')');
        return p && p[1] == ' ' ? p[2] : 0;
}

/* Without a pid namespace (INIT_ISOLATION_LANDLOCK) kill(-1) would reach every process the
 * caller owns on the host. Instead: we are a child subreaper, so every orphan below us is
 * re-parented to us; kill our live children, wait (without reaping, so no pid is reused
 * under us) until each is dead and its own children are ours, and repeat until only
 * zombies are left. /proc/PID/task/TID/children: proc(5), CONFIG_PROC_CHILDREN. */
static void kill_descendants(void) {
        char path[64], buf[8192];
        snprintf(path, sizeof path, "/proc/self/task/%d/children", (int)getpid());
        for (int round = 0; round < 10000; round++) {
                _cleanup_close_ int fd = openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
                ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
                if (n <= 0)
                        return;
                buf[n] = '\0';
                bool live = false;
                for (char *p = buf, *end; *p; p = end) {
                        long pid = strtol(p, &end, 10);
                        if (end == p)
                                break;
                        if (pid <= 0 || proc_state((pid_t)pid) == 'Z')
                                continue;
                        live = true;
                        kill((pid_t)pid, SIGKILL);
                        siginfo_t si;
                        while (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) < 0 &&
                               errno == EINTR)
                                ;
                }
                if (!live)
                        return;
        }
}

static void kill_all(void) {
        if (st.cfg.isolation == INIT_ISOLATION_LANDLOCK)
                kill_descendants();
        else
                kill(-1, SIGKILL); /* as PID 1: every other process in our pid namespace */
}

static __attribute__((noreturn)) void shutdown_priv(void *code) {
        kill_all();
        /* Without a pid namespace our zombies would pass to the host's init: reap them. */
        if (st.cfg.isolation == INIT_ISOLATION_LANDLOCK)
                while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
                        ;
        _exit(*(int *)code);
}

static __attribute__((noreturn)) void shutdown_all(int code) {
        init_privileged(shutdown_priv, &code); /* the agent cannot kill provisioning */
        _exit(code);
}

static int refuse(int error, uint32_t step, const char *msg) {
        (void)send_status(INIT_MSG_CONFIGURED, 0, error, step, msg);
        return -1;
}

/* The main thread, which runs the loop, takes the agent's policy now, once, and every agent
 * command inherits it (init/privileged.c); a second thread, started first, keeps our
 * credentials for the loop's privileged calls. A failure here is one every agent command
 * would meet: the configuration is refused. Where no second thread can start the loop
 * stays as it is and each command confines itself. */
static int confine_loop(struct rtn_error *err) {
        if (st.cfg.isolation == INIT_ISOLATION_LANDLOCK || init_privileged_start() < 0)
                return 0;
        int listener = -1;
        int r = init_confine_agent(&st, &listener, err);
        if (r < 0)
                return r;
        if (listener >= 0)
                init_notify_add_shared(&st, listener);
        init_loop_confined();
        return 0;
}

/* Reads CONFIG and prepares the policy. Returns 0 when configured; otherwise the refusal has
 * been sent (if it could be) and the caller shuts down: no command may run under a policy
 * that was not prepared, and rtn may already have queued a spawn request behind CONFIG. */
static int configure(void) {
        struct rtn_error err = {0};
        ssize_t n = rtn_recv_msg(INIT_CTL_FD, msgbuf, sizeof msgbuf, NULL, NULL);
        if (n <= 0)
                shutdown_all(1);
        static struct init_config_view v; /* 8 KiB of pointers: off the stack */
        if (init_decode_config(msgbuf, (size_t)n, &v) < 0)
                return refuse(EBADMSG, INIT_STEP_CONFIG, "malformed configuration");
        if (v.msg->isolation > INIT_ISOLATION_LANDLOCK)
                return refuse(EINVAL, INIT_STEP_CONFIG, "unknown isolation mode");
        if (v.msg->policies & ~INIT_POLICIES_ALL)
                return refuse(EINVAL, INIT_STEP_CONFIG, "unknown policies");
        st.cfg = *v.msg;
        st.cfg.strings_len = 0;
        st.cfg.policies |= INIT_POLICY_BIT(INIT_POLICY_AGENT); /* the file server's too */
        /* Not PID 1 without a pid namespace: become the subreaper of everything below. */
        if (st.cfg.isolation == INIT_ISOLATION_LANDLOCK &&
            prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
                return refuse(errno, INIT_STEP_CONFIG, "prctl PR_SET_CHILD_SUBREAPER");
        /* A non-root uid has no capabilities anyway; an agent that is uid 0 inside (a
         * caller without a subordinate range, or --user root) never keeps one, whatever the
         * message said. The rootfs is writable only to such a root (--user root). */
        if (st.cfg.isolation != INIT_ISOLATION_LANDLOCK)
                st.cfg.agent_drop_caps = st.cfg.agent_uid == 0;
        if (st.cfg.agent_root && (st.cfg.agent_uid != 0 || st.cfg.isolation != INIT_ISOLATION_FULL))
                st.cfg.agent_root = 0;
        /* Without a pid and a user namespace the host's processes of the caller's uid would
         * be in reach (rtn refuses the combination; so does rtn-init). */
        if (st.cfg.allow_ptrace && st.cfg.isolation == INIT_ISOLATION_LANDLOCK)
                return refuse(EINVAL, INIT_STEP_CONFIG, "ptrace needs the sandbox's namespaces");
        init_seccomp_allow_ptrace(st.cfg.allow_ptrace != 0);
        /* Inside the user namespace (root there): bound what any command can hold. Without
         * one (landlock mode) rtn-init runs as the caller and has nothing to bound. */
        if (st.cfg.isolation != INIT_ISOLATION_LANDLOCK && init_caps_limit_bounding(&err) < 0)
                return refuse(err.code, INIT_STEP_CREDS, err.msg);
        if (init_keep_host_paths(&st, v.writable, v.nwritable) < 0)
                return refuse(E2BIG, INIT_STEP_CONFIG, "host directory paths too long");
        int r = init_policy_prepare(&st, &v, &err);
        if (r < 0)
                return refuse(-r, INIT_STEP_LANDLOCK, err.msg);
        if ((r = confine_loop(&err)) < 0)
                return refuse(-r, INIT_STEP_CONFIG, err.msg);
        /* Held with READY: sent with the answer to the spawn request queued behind CONFIG,
         * or before the loop first waits (init/ctl.c). */
        struct init_status ok = {.hdr = {.type = INIT_MSG_CONFIGURED, .len = sizeof ok}};
        return init_ctl_hold(&ok, sizeof ok);
}

struct signal_call {
        uint64_t id;
        int signo;
};

static void signal_priv(void *arg) {
        const struct signal_call *c = arg;
        pid_t pid = init_job_pid(&st, c->id);
        if (pid > 0)
                kill(-pid, c->signo);
}

static void kill_all_priv(void *arg) {
        kill_all();
}

static void gate_priv(void *arg) {
        init_gate_open(&st);
}

static void files_priv(void *arg) {
        init_files_start(&st, *(uint64_t *)arg);
}

static void on_ctl(void) {
        int fds[RTN_MAX_PASS_FDS];
        size_t nfds = RTN_MAX_PASS_FDS;
        ssize_t n = rtn_recv_msg(INIT_CTL_FD, msgbuf, sizeof msgbuf, fds, &nfds);
        if (n == 0 || (n < 0 && n != -EMSGSIZE && n != -EAGAIN))
                shutdown_all(0); /* rtn is gone: so is the sandbox */
        if (n < (ssize_t)sizeof(struct init_msg_hdr)) {
                for (size_t i = 0; i < nfds; i++)
                        close(fds[i]);
                return;
        }
        const struct init_msg_hdr *h = (const void *)msgbuf;
        switch ((enum init_msg_type)h->type) {
        case INIT_MSG_SPAWN:
                init_spawn(&st, msgbuf, (size_t)n, fds, nfds);
                nfds = 0; /* init_spawn owns them */
                break;
        case INIT_MSG_SIGNAL: {
                const struct init_signal *m = (const void *)msgbuf;
                if (init_check_msg(msgbuf, (size_t)n, INIT_MSG_SIGNAL, sizeof *m) == 0 &&
                    m->signo > 0 && m->signo < NSIG) {
                        struct signal_call c = {.id = h->id, .signo = m->signo};
                        init_privileged(signal_priv, &c);
                }
                break;
        }
        case INIT_MSG_KILL_ALL:
                init_privileged(kill_all_priv, NULL);
                break;
        case INIT_MSG_GATE_OPEN:
                init_privileged(gate_priv, NULL);
                break;
        case INIT_MSG_FILES_START: {
                uint64_t id = h->id;
                init_privileged(files_priv, &id);
                break;
        }
        case INIT_MSG_READY:
        case INIT_MSG_CONFIG:
        case INIT_MSG_CONFIGURED:
        case INIT_MSG_SPAWNED:
        case INIT_MSG_SPAWN_FAILED:
        case INIT_MSG_EXITED:
        case INIT_MSG_SETUP_FAILED:
        case INIT_MSG_GATE:
        case INIT_MSG_FILES_STARTED:
        case INIT_MSG_BLOCKED:
        default:
                break;
        }
        for (size_t i = 0; i < nfds; i++)
                close(fds[i]);
}

/* The last command of the sandbox has exited (INIT_SPAWN_FINAL): kill every other process
 * and reap them all, so that the exit we report next also says that nothing of the
 * sandbox runs any more. kill(-1) reaches every process but us; one that was forking then
 * is stopped by its fatal signal before it can add a child (copy_process), so once nothing
 * is left to reap, nothing is left. rtn need not then wait for our own exit, in which the
 * kernel tears down the namespaces and mounts (runtime/exec/exec.c). */
static void end_all(void) {
        init_privileged(kill_all_priv, NULL);
        for (;;) {
                pid_t pid = waitpid(-1, NULL, 0);
                if (pid > 0) {
                        if (pid == st.files_pid)
                                st.files_pid = 0;
                        continue;
                }
                if (errno != EINTR)
                        return; /* ECHILD: no process left but ours */
        }
}

static void send_exited(uint64_t id, pid_t pid, int status) {
        struct init_exited m = {.hdr = {.type = INIT_MSG_EXITED, .len = sizeof m, .id = id},
                                .wait_status = status,
                                .pid = pid};
        if (init_ctl_send(&m, sizeof m, NULL, 0) < 0)
                shutdown_all(0);
}

/* Reaps one process that has exited, if any: 0 when none is left, else its pid. *job says
 * whether it was a command's (*id), whose notifications are then closed, and *final whether
 * it was the sandbox's last. */
static pid_t reap_one(int *status, bool *job, uint64_t *id, bool *final) {
        pid_t pid = waitpid(-1, status, WNOHANG);
        if (pid <= 0)
                return 0;
        if (pid == st.files_pid)
                st.files_pid = 0; /* rtn notices on the server's socket */
        /* Calls still pending from this command's processes are put down to it while it is
         * in the job table. */
        init_notify_drain_shared(&st);
        *job = init_job_take(&st, pid, id, final);
        if (*job && init_notify_exited(&st, *id) < 0)
                shutdown_all(0);
        return pid;
}

static void on_sigchld(int sfd) {
        /* SIGCHLD is not queued: one read takes what is pending (a second would only say
         * EAGAIN), and the waitpid loop below reaps every child whose exit it stood for. */
        struct signalfd_siginfo si[4];
        (void)!read(sfd, si, sizeof si);
        for (;;) {
                int status;
                uint64_t id;
                bool job, final;
                pid_t pid = reap_one(&status, &job, &id, &final);
                if (!pid)
                        break;
                if (!job)
                        continue;
                /* Without a pid namespace rtn ends the sandbox itself and waits
                 * (rt_sandbox_release): no blocking reap of the host's processes. */
                if (final && st.cfg.isolation != INIT_ISOLATION_LANDLOCK) {
                        /* Commands that ended before it, their exits not yet read (the
                         * kernel lists the oldest child first), are reported as they ended,
                         * not killed with what is still running. */
                        int s2;
                        uint64_t id2;
                        bool job2, f2;
                        for (pid_t p2; (p2 = reap_one(&s2, &job2, &id2, &f2));)
                                if (job2)
                                        send_exited(id2, p2, s2);
                        end_all();
                }
                send_exited(id, pid, status);
        }
}

static int sigchld_fd = -1;

/* Each round serves what is ready, then sends what it held back (init/ctl.c): a round that
 * finds the start's spawn request queued answers it with READY and CONFIGURED in one
 * message batch; a round that finds nothing sends them before the loop waits. */
static __attribute__((noreturn)) void run_loop(void) {
        for (;;) {
                struct epoll_event ev[16];
                int n = epoll_wait(st.epfd, ev, 16, init_ctl_holding() ? 0 : -1);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        shutdown_all(1);
                }
                /* Listeners first: a blocked caller waits for us, and its calls made before an
                 * exit in this batch belong in that exit's report. */
                for (int i = 0; i < n; i++)
                        if (ev[i].data.u64 == INIT_EV_SHARED)
                                init_notify_event_shared(&st, ev[i].events);
                        else if (ev[i].data.u64 >= INIT_EV_NOTIF_BASE)
                                init_notify_event(&st, ev[i].data.u64 - INIT_EV_NOTIF_BASE,
                                                  ev[i].events);
                for (int i = 0; i < n; i++) {
                        if (ev[i].data.u64 == INIT_EV_SIGCHLD)
                                on_sigchld(sigchld_fd);
                        else if (ev[i].data.u64 == INIT_EV_CTL && (ev[i].events & EPOLLIN))
                                on_ctl();
                        else if (ev[i].data.u64 == INIT_EV_CTL)
                                shutdown_all(0); /* POLLHUP or POLLERR: rtn is gone */
                }
                if (init_ctl_flush() < 0)
                        shutdown_all(0);
        }
}

int main(void) {
        /* Nobody inside may read our memory or /proc/1/exe, and nothing we start gains
         * privilege through execve. */
        (void)prctl(PR_SET_NAME, "rtn-init"); /* not "memfd:rtn-init" */
        if (prctl(PR_SET_DUMPABLE, 0) < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                _exit(RTN_EXIT_FAILURE);
        sigset_t mask;
        sigemptyset(&mask);
        sigaddset(&mask, SIGCHLD);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
                _exit(RTN_EXIT_FAILURE);
        signal(SIGPIPE, SIG_IGN);
        int sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
        if (sfd < 0)
                _exit(RTN_EXIT_FAILURE);
        struct init_ready ready = {.hdr = {.type = INIT_MSG_READY, .len = sizeof ready},
                                   .version = INIT_PROTO_VERSION,
                                   .landlock_abi = init_landlock_abi()};
        /* Held until the configuration is applied or refused (init/ctl.c): rtn sends
         * CONFIG without waiting for it. */
        if (init_ctl_hold(&ready, sizeof ready) < 0)
                shutdown_all(1);
        /* The loop's epoll exists before configure(), which adds the confined loop's
         * listener to it. */
        st.epfd = epoll_create1(EPOLL_CLOEXEC);
        struct epoll_event ctl_ev = {.events = EPOLLIN, .data.u64 = INIT_EV_CTL};
        struct epoll_event sig_ev = {.events = EPOLLIN, .data.u64 = INIT_EV_SIGCHLD};
        if (st.epfd < 0 || epoll_ctl(st.epfd, EPOLL_CTL_ADD, INIT_CTL_FD, &ctl_ev) < 0 ||
            epoll_ctl(st.epfd, EPOLL_CTL_ADD, sfd, &sig_ev) < 0)
                shutdown_all(1);
        if (configure() < 0)
                shutdown_all(1);
        sigchld_fd = sfd;
        run_loop();
}
