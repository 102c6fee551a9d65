/* Helper of tests/security/reports.sh. `notif flood N` makes N denied mount calls and prints
 * how many failed with EPERM; `notif nested` tries what a sandbox tool inside rtn would do,
 * install a seccomp filter of its own with a listener, and prints the errno (EBUSY: the
 * stack already has rtn's listener, seccomp(2)), then installs one without a listener. */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv) {
        if (argc == 3 && strcmp(argv[1], "flood") == 0) {
                long n = atol(argv[2]), eperm = 0;
                for (long i = 0; i < n; i++)
                        if (mount("none", "/mnt", "tmpfs", 0, NULL) == -1 && errno == EPERM)
                                eperm++;
                printf("eperm %ld of %ld\n", eperm, n);
                return eperm == n ? 0 : 1;
        }
        if (argc == 2 && strcmp(argv[1], "nested") == 0) {
                struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
                struct sock_fprog prog = {.len = 1, .filter = &allow};
                long r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                                 SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
                printf("listener: %s\n", r < 0 ? strerror(errno) : "granted");
                r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
                printf("plain filter: %s\n", r < 0 ? strerror(errno) : "installed");
                return 0;
        }
        fprintf(stderr, "usage: notif flood N | notif nested\n");
        return 2;
}
