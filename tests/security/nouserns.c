/* `nouserns CMD...` runs CMD where user namespaces are denied the way a container's seccomp
 * profile denies them (Docker's: clone3 ENOSYS, unshare and clone with CLONE_NEWUSER EPERM),
 * so that rtn picks its Landlock mode by itself (runtime/sandbox/isolation.c). The filter
 * needs no_new_privs, which rtn-init sets anyway. */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define ARG0 (offsetof(struct seccomp_data, args))

int main(int argc, char **argv) {
        if (argc < 2)
                return 2;
        struct sock_filter f[] = {
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 1),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_unshare, 1, 0),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 3),
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG0),
                BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_NEWUSER, 0, 1),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        struct sock_fprog prog = {.len = sizeof f / sizeof f[0], .filter = f};
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
            prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0) {
                perror("nouserns: seccomp");
                return 125;
        }
        execvp(argv[1], argv + 1);
        perror("nouserns: exec");
        return 127;
}
