/* The blocked-call report on rtn-init's side (init/notify.c, init/seccomp.c): the reporting
 * filter hands out a listener, a notified call gets EPERM once answered and is recorded with
 * its number, pid and comm; records are capped; the kernel refuses a second listener on the
 * same filter stack (EBUSY), where init_seccomp_install_notify falls back to the plain filter;
 * a call notified to a closed listener fails with ENOSYS. Real kernel, forked children. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "init/internal.h"
#include "init/policy.h"
#include "tests/unit/init/child.h"

Test(init_blocked_add, same_pair_counts_once) {
        struct init_blocked rep = {0};
        init_blocked_add(&rep, 165, 7, "mount");
        init_blocked_add(&rep, 165, 8, "mount");
        init_blocked_add(&rep, 165, 9, "umount"); /* same call, other comm: a record */
        init_blocked_add(&rep, 250, 7, "mount");
        cr_assert_eq(rep.total, 4);
        cr_assert_eq(rep.nrec, 3);
        cr_assert_eq(rep.rec[0].count, 2);
        cr_assert_eq(rep.rec[0].pid, 7, "the first caller is kept");
        cr_assert_str_eq(rep.rec[1].comm, "umount");
        cr_assert_eq(rep.rec[2].nr, 250);
}

Test(init_blocked_add, capped_but_counted) {
        struct init_blocked rep = {0};
        char comm[INIT_COMM_LEN];
        for (int i = 0; i < 1000; i++) {
                snprintf(comm, sizeof comm, "p%d", i % 40);
                init_blocked_add(&rep, 165, i + 2, comm);
        }
        cr_assert_eq(rep.nrec, INIT_BLOCKED_MAX);
        cr_assert_eq(rep.total, 1000);
        uint64_t sum = 0;
        for (uint32_t i = 0; i < rep.nrec; i++)
                sum += rep.rec[i].count;
        cr_assert_eq(sum, 25 * INIT_BLOCKED_MAX); /* 1000 / 40 calls per comm */
}

Test(init_blocked_add, long_comm_is_cut) {
        struct init_blocked rep = {0};
        init_blocked_add(&rep, 1, 2, "a-very-long-command-name");
        cr_assert_eq(strlen(rep.rec[0].comm), INIT_COMM_LEN - 1);
}

/* no_new_privs, a deadline (a lost notification must fail the test, not hang it), then the
 * agent's reporting filter with its listener in *lst. */
static int listen_self(int fd, int *lst) {
        struct rtn_error err = {0};
        CHILD_CHECK(fd, prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0, "nnp");
        alarm(20);
        CHILD_CHECK(fd, init_seccomp_install_notify(INIT_POLICY_AGENT, lst, &err) == 0, "%s",
                    err.msg);
        CHILD_CHECK(fd, *lst >= 0, "no listener");
        return 0;
}

/* The grandchild makes three mounts and a keyctl, each must fail with EPERM once answered. */
static int denied_calls(void) {
        for (int i = 0; i < 3; i++)
                if (mount("none", "/", "tmpfs", 0, NULL) != -1 || errno != EPERM)
                        return 1;
        if (syscall(SYS_keyctl, 0, 0, 0, 0, 0) != -1 || errno != EPERM)
                return 2;
        if (unshare(CLONE_FILES) != 0) /* allowed: never notified */
                return 3;
        return 0;
}

static int check_answer(int fd, void *arg) {
        int lst = -1;
        if (listen_self(fd, &lst))
                return 1;
        CHILD_CHECK(fd, fcntl(lst, F_GETFD) == FD_CLOEXEC, "listener not O_CLOEXEC");
        pid_t pid = fork();
        CHILD_CHECK(fd, pid >= 0, "fork");
        if (pid == 0)
                _exit(denied_calls());
        struct init_notif n = {.fd = lst};
        for (int answered = 0; answered < 4;) {
                struct pollfd p = {.fd = lst, .events = POLLIN};
                CHILD_CHECK(fd, poll(&p, 1, 10000) == 1, "no notification");
                int r = init_notify_answer(&n);
                CHILD_CHECK(fd, r == 0, "answer: %d", r);
                answered++;
        }
        CHILD_CHECK(fd, init_notify_answer(&n) == -EAGAIN, "nothing more is pending");
        int st;
        CHILD_CHECK(fd, waitpid(pid, &st, 0) == pid, "wait");
        CHILD_CHECK(fd, WIFEXITED(st) && WEXITSTATUS(st) == 0, "grandchild status 0x%x", st);
        CHILD_CHECK(fd, n.rep.total == 4 && n.rep.nrec == 2, "total %lu nrec %u",
                    (unsigned long)n.rep.total, n.rep.nrec);
        CHILD_CHECK(fd, n.rep.rec[0].nr == SYS_mount && n.rep.rec[0].count == 3, "mount record");
        CHILD_CHECK(fd, n.rep.rec[1].nr == SYS_keyctl && n.rep.rec[1].count == 1, "keyctl");
        CHILD_CHECK(fd, n.rep.rec[0].pid == pid, "pid %d, want %d", n.rep.rec[0].pid, pid);
        char comm[INIT_COMM_LEN] = "";
        CHILD_CHECK(fd, prctl(PR_GET_NAME, comm) == 0, "PR_GET_NAME");
        CHILD_CHECK(fd, strcmp(n.rep.rec[0].comm, comm) == 0, "comm '%s', want '%s'",
                    n.rep.rec[0].comm, comm);
        return 0;
}

Test(init_seccomp_install_notify, answers_eperm_and_records) {
        struct child_result r = run_child(check_answer, NULL);
        assert_child_ok(r);
}

/* seccomp(2), EBUSY: "the caller's filter stack already has a listener". A program inside
 * the sandbox (a nested sandbox tool) therefore cannot use user notification. */
static int check_ebusy(int fd, void *arg) {
        struct rtn_error err = {0};
        int lst = -1, second = 7;
        if (listen_self(fd, &lst))
                return 1;
        struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
        struct sock_fprog prog = {.len = 1, .filter = &allow};
        CHILD_EXPECT_ERRNO(fd,
                           syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                                   SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog),
                           EBUSY);
        CHILD_CHECK(fd, syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) == 0,
                    "a filter without a listener is still fine");
        CHILD_CHECK(fd, init_seccomp_install_notify(INIT_POLICY_AGENT, &second, &err) == 0,
                    "fallback: %s", err.msg);
        CHILD_CHECK(fd, second == -1, "second listener %d", second);
        /* the plain filter's ERRNO outranks the first one's USER_NOTIF: no notification */
        CHILD_EXPECT_ERRNO(fd, mount("none", "/", "tmpfs", 0, NULL), EPERM);
        struct pollfd p = {.fd = lst, .events = POLLIN};
        CHILD_CHECK(fd, poll(&p, 1, 0) == 0, "nothing was notified");
        return 0;
}

Test(init_seccomp_install_notify, second_listener_is_ebusy_and_falls_back) {
        struct child_result r = run_child(check_ebusy, NULL);
        assert_child_ok(r);
}

/* With the listener gone (rtn-init died or closed it) a notified call fails with ENOSYS
 * instead of blocking (kernel/seccomp.c, seccomp_do_user_notification). */
static int check_closed(int fd, void *arg) {
        int lst = -1;
        if (listen_self(fd, &lst))
                return 1;
        close(lst);
        CHILD_EXPECT_ERRNO(fd, mount("none", "/", "tmpfs", 0, NULL), ENOSYS);
        CHILD_EXPECT_ERRNO(fd, unshare(CLONE_NEWUSER), ENOSYS);
        CHILD_EXPECT_ERRNO(fd, syscall(SYS_clone3, NULL, 0), ENOSYS); /* plain ENOSYS anyway */
        return 0;
}

Test(init_seccomp_install_notify, closed_listener_gives_enosys) {
        struct child_result r = run_child(check_closed, NULL);
        assert_child_ok(r);
}
