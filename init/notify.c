/* rtn-init's side of seccomp user notification: the report of blocked system calls. Each
 * command's filter is installed with a listener (init/seccomp.c) that the spawn child hands
 * to rtn-init before execve (init/spawn.c). The EPERM-class denials of the filter are
 * SECCOMP_RET_USER_NOTIF: the kernel suspends the caller and queues a notification here.
 * rtn-init never decides anything: the filter already has, so every notification is answered
 * with error EPERM, and the caller sees exactly the errno the plain filter gives (there is no
 * time-of-check/time-of-use question, since no argument is read). What it keeps per command is
 * the syscall number, the first caller's pid and comm, and a count, for up to
 * INIT_BLOCKED_MAX distinct (syscall, comm) pairs plus a total, sent to rtn with the exit.
 *
 * If rtn-init cannot answer (it died, or closed the listener), the kernel fails the pending
 * and every later notified call with ENOSYS (kernel/seccomp.c, seccomp_notify_detach and
 * seccomp_do_user_notification): a sandboxed process is never left blocked. */
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/io.h"
#include "init/internal.h"

/* Answers per wake-up before the event loop looks at the control socket again: a caller
 * looping on a denied call must not starve rtn. */
#define ANSWER_BATCH 64

void init_blocked_add(struct init_blocked *rep, uint32_t nr, pid_t pid, const char *comm) {
        rep->total++;
        for (uint32_t i = 0; i < rep->nrec; i++) {
                struct init_blocked_rec *r = &rep->rec[i];
                if (r->nr == nr && strncmp(r->comm, comm, sizeof r->comm) == 0) {
                        r->count++;
                        return;
                }
        }
        if (rep->nrec >= INIT_BLOCKED_MAX)
                return; /* only counted: the report says "and N more" */
        struct init_blocked_rec *r = &rep->rec[rep->nrec++];
        *r = (struct init_blocked_rec){.nr = nr, .pid = pid, .count = 1};
        snprintf(r->comm, sizeof r->comm, "%s", comm);
}

/* /proc/PID/comm of the caller, best effort. PID is a thread id in our pid namespace (the
 * kernel translates it for the reader of the listener). */
static void read_comm(struct init_notif *n, pid_t pid, uint64_t notif_id) {
        if (pid == n->last_pid && pid > 0)
                return;
        char path[40], buf[INIT_COMM_LEN + 1];
        snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
        _cleanup_close_ int fd = openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
        ssize_t len = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
        n->last_pid = 0;
        n->last_comm[0] = '\0';
        if (len <= 0)
                return;
        buf[len] = '\0';
        buf[strcspn(buf, "\n")] = '\0';
        /* The pid may have been reused between the notification and the read: only trust the
         * name while the notification is still live (seccomp_unotify(2), "ID_VALID"). */
        if (ioctl(n->fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &notif_id) < 0)
                return;
        snprintf(n->last_comm, sizeof n->last_comm, "%s", buf);
        n->last_pid = pid;
}

/* Takes the next pending notification off n's listener into req: 0, -EAGAIN (nothing
 * pending), -EPIPE (nothing pending, no user left), -ENOENT (the caller went away). */
static int notif_recv(struct init_notif *n, struct seccomp_notif *req) {
        struct pollfd p = {.fd = n->fd, .events = POLLIN};
        if (poll(&p, 1, 0) < 0)
                return negative_errno();
        if (!(p.revents & POLLIN)) /* RECV would block until the next notification */
                return p.revents & POLLHUP ? -EPIPE : -EAGAIN;
        memset(req, 0, sizeof *req); /* the kernel insists on a zeroed buffer */
        if (ioctl(n->fd, SECCOMP_IOCTL_NOTIF_RECV, req) < 0)
                return negative_errno(); /* ENOENT: the caller was killed meanwhile */
        return 0;
}

static int notif_deny(struct init_notif *n, const struct seccomp_notif *req) {
        struct seccomp_notif_resp resp = {.id = req->id, .val = 0, .error = -EPERM, .flags = 0};
        if (ioctl(n->fd, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0)
                return negative_errno(); /* ENOENT: the caller was killed meanwhile */
        return 0;
}

int init_notify_answer(struct init_notif *n) {
        struct seccomp_notif req;
        int r = notif_recv(n, &req);
        if (r < 0)
                return r;
        if (!n->reported) {
                read_comm(n, (pid_t)req.pid, req.id);
                init_blocked_add(&n->rep, (uint32_t)req.data.nr, (pid_t)req.pid, n->last_comm);
        }
        return notif_deny(n, &req);
}

/* ---- the shared listener of the confined loop's filter ----
 * Every agent command the confined loop started runs under the loop thread's filter, so
 * their calls all arrive on one listener and must be told apart here. A command is the leader of a
 * session of its own (the spawn child's setsid), so a caller belongs to the live command whose pid
 * is its session id; one that started a session of its own is followed up its parents instead. A
 * caller that belongs to no live command (a background process whose command has ended, as
 * with a per-command listener) still gets EPERM; it is just not reported. The report of
 * each command is a listener-less init_notif (fd -1) made on its first blocked call. */
#define ANCESTRY_MAX 64

/* ppid and session of pid from /proc/PID/stat (after the comm, which may hold anything). */
static int proc_ids(pid_t pid, pid_t *ppid, pid_t *sid) {
        char path[40], buf[512];
        snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
        _cleanup_close_ int fd = openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
        ssize_t len = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
        if (len <= 0)
                return -ESRCH;
        buf[len] = '\0';
        const char *p = strrchr(buf, ')');
        int pp, pg, se;
        if (!p || sscanf(p + 1, " %*c %d %d %d", &pp, &pg, &se) != 3)
                return -EINVAL;
        *ppid = pp;
        *sid = se;
        return 0;
}

static bool job_of(const struct init_state *st, pid_t pid, uint64_t *ret_id) {
        pid_t ppid, sid;
        if (proc_ids(pid, &ppid, &sid) < 0)
                return false;
        if (sid > 1 && init_job_id(st, sid, ret_id))
                return true;
        for (int i = 0; i < ANCESTRY_MAX && pid > 1; i++) {
                if (init_job_id(st, pid, ret_id))
                        return true;
                pid = ppid;
                if (pid > 1 && proc_ids(pid, &ppid, &sid) < 0)
                        return false;
        }
        return false;
}

/* The open report of command id, made when missing; NULL when there is no slot for it. */
static struct init_notif *report_of(struct init_state *st, uint64_t id) {
        size_t free_slot = INIT_MAX_JOBS;
        for (size_t i = 0; i < INIT_MAX_JOBS; i++) {
                struct init_notif *n = st->notifs[i];
                if (n && n->fd < 0 && !n->reported && n->rep.hdr.id == id)
                        return n;
                if (!n && free_slot == INIT_MAX_JOBS)
                        free_slot = i;
        }
        if (free_slot == INIT_MAX_JOBS)
                return NULL;
        struct init_notif *n = calloc(1, sizeof *n);
        if (!n)
                return NULL;
        n->fd = -1;
        n->hung = true; /* nothing to wait for: closed as soon as it is reported */
        n->rep.hdr =
                (struct init_msg_hdr){.type = INIT_MSG_BLOCKED, .len = sizeof n->rep, .id = id};
        st->notifs[free_slot] = n;
        st->nnotifs++;
        return n;
}

static int answer_shared(struct init_state *st, struct init_notif *n) {
        struct seccomp_notif req;
        int r = notif_recv(n, &req);
        if (r < 0)
                return r;
        /* No cache of the answer: a pid can be reused quickly in a sandbox's small pid space,
         * and a caller wrongly put down to another command (a provisioning one, say) would be
         * worse than one /proc read per blocked call. */
        pid_t pid = (pid_t)req.pid;
        uint64_t id;
        bool known = job_of(st, pid, &id);
        /* The pid may have been reused since the notification: trust what /proc said only
         * while it is still live (seccomp_unotify(2), "ID_VALID"). */
        struct init_notif *rep;
        if (known && ioctl(n->fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &req.id) == 0 &&
            (rep = report_of(st, id))) {
                read_comm(n, pid, req.id);
                init_blocked_add(&rep->rep, (uint32_t)req.data.nr, pid, n->last_comm);
        }
        return notif_deny(n, &req);
}

/* Answers what is pending on n (a command's listener, or the shared one), at most
 * ANSWER_BATCH; the last result (-EAGAIN: nothing left, -EPIPE: hung up, no user left). */
static int answer_batch(struct init_state *st, struct init_notif *n) {
        int r = 0;
        for (int i = 0; i < ANSWER_BATCH; i++)
                if ((r = n->shared ? answer_shared(st, n) : init_notify_answer(n)) < 0 &&
                    r != -ENOENT)
                        break;
        return r;
}

static void notif_close(struct init_state *st, size_t slot) {
        struct init_notif *n = st->notifs[slot];
        (void)epoll_ctl(st->epfd, EPOLL_CTL_DEL, n->fd, NULL); /* ENOENT when hung: fine */
        rtn_safe_close(n->fd);
        free(n);
        st->notifs[slot] = NULL;
        st->nnotifs--;
}

/* rtn-init's own descriptors besides listeners: control socket, signalfd, epoll, Landlock
 * rulesets, the gate's netns, and a spawn's passed fds, pty and socket pair in flight. */
#define OTHER_FDS 32

bool init_notify_has_room(const struct init_state *st) {
        /* A listener that cannot be received (no fd left: SCM_RIGHTS drops it) would give
         * the command ENOSYS; without one it gets the plain filter and plain EPERM. */
        static rlim_t soft;
        if (!soft) {
                struct rlimit rl;
                soft = getrlimit(RLIMIT_NOFILE, &rl) == 0 ? rl.rlim_cur : 1024;
        }
        return st->nnotifs < INIT_MAX_JOBS && st->nnotifs + OTHER_FDS < soft;
}

/* Allocated per listener, not kept in a static table: the records are ~0.6 KiB each, and
 * a table for every possible command would cost each sandbox its pages. */
void init_notify_add(struct init_state *st, uint64_t id, int fd) {
        for (size_t i = 0; i < INIT_MAX_JOBS; i++) {
                if (st->notifs[i])
                        continue;
                struct init_notif *n = calloc(1, sizeof *n);
                if (!n)
                        break;
                n->fd = fd;
                n->rep.hdr = (struct init_msg_hdr){
                        .type = INIT_MSG_BLOCKED, .len = sizeof n->rep, .id = id};
                st->notifs[i] = n;
                st->nnotifs++;
                struct epoll_event ev = {.events = EPOLLIN, .data.u64 = INIT_EV_NOTIF_BASE + i};
                if (epoll_ctl(st->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
                        notif_close(st, i);
                return;
        }
        rtn_safe_close(fd);
}

void init_notify_add_shared(struct init_state *st, int fd) {
        struct init_notif *n = calloc(1, sizeof *n);
        struct epoll_event ev = {.events = EPOLLIN, .data.u64 = INIT_EV_SHARED};
        if (!n || epoll_ctl(st->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
                /* Agent commands then get ENOSYS for the calls the filter denies with a
                 * report; better than no rtn-init at all, and ENOMEM only. */
                free(n);
                rtn_safe_close(fd);
                return;
        }
        n->fd = fd;
        n->shared = true;
        st->shared_notif = n;
}

void init_notify_drain_shared(struct init_state *st) {
        if (st->shared_notif)
                (void)answer_batch(st, st->shared_notif);
}

void init_notify_event_shared(struct init_state *st, uint32_t events) {
        struct init_notif *n = st->shared_notif;
        if (!n)
                return;
        if (events & EPOLLIN)
                (void)answer_batch(st, n);
        /* POLLHUP only once the loop thread and every command it started are gone. */
        if (events & (EPOLLHUP | EPOLLERR)) {
                (void)epoll_ctl(st->epfd, EPOLL_CTL_DEL, n->fd, NULL);
                rtn_safe_close(n->fd);
                free(n);
                st->shared_notif = NULL;
        }
}

void init_notify_event(struct init_state *st, size_t slot, uint32_t events) {
        if (slot >= INIT_MAX_JOBS || !st->notifs[slot])
                return;
        struct init_notif *n = st->notifs[slot];
        if (events & EPOLLIN)
                (void)answer_batch(st, n);
        /* POLLHUP: no task uses the filter any more (kernel/seccomp.c, seccomp_notify_poll;
         * a task lets go of it when it is reaped, in release_task), so nothing can be pending.
         * Until the command's exit has been reported the records are still needed. */
        if (!(events & (EPOLLHUP | EPOLLERR)))
                return;
        if (n->reported) {
                notif_close(st, slot);
        } else {
                (void)epoll_ctl(st->epfd, EPOLL_CTL_DEL, n->fd, NULL);
                n->hung = true;
        }
}

int init_notify_exited(struct init_state *st, uint64_t id) {
        for (size_t i = 0; i < INIT_MAX_JOBS; i++) {
                struct init_notif *n = st->notifs[i];
                if (!n || n->reported || n->rep.hdr.id != id)
                        continue;
                /* Calls made by the command's other processes up to now belong to it too
                 * (the shared listener's were answered before its job left the table,
                 * init_notify_drain_shared). Usually the command was the filter's last user
                 * (it was just reaped): close now rather than on the POLLHUP wake-up. */
                if (n->fd >= 0)
                        n->hung |= answer_batch(st, n) == -EPIPE;
                n->reported = true;
                ssize_t r = 0;
                if (n->rep.total > 0)
                        r = init_ctl_send(&n->rep, sizeof n->rep, NULL, 0);
                if (n->hung)
                        notif_close(st, i);
                return r < 0 ? (int)r : 0;
        }
        return 0;
}
