/* One x32 system call (getpid with the x32 bit set) and nothing else: the seccomp filter must
 * kill the process with SIGSYS, and rtn exec must say so on stderr (tests/security/syscalls.sh).
 * Unlike `int 0x80` (int80.c), the x32 bit reaches the filter on every x86_64 kernel, with or
 * without x32 or ia32 support built in. */
#include <sys/syscall.h>
#include <unistd.h>

int main(void) {
        return syscall(0x40000000L | SYS_getpid) > 0 ? 0 : 1;
}
