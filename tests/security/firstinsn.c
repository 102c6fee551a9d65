/* Built static with no libc (-nostdlib): its _start is the first code that runs after
 * execve, with nothing before it that could install a policy. It copies /proc/self/status
 * to stdout, then tries to open its own /proc/self/comm for writing — allowed by file
 * permissions to any process, refused (EACCES) only by a Landlock domain whose rules make
 * /proc read-only — and prints "landlock-write-comm: N" with the negated errno (or 0).
 * tests/security/policy.sh checks NoNewPrivs 1, Seccomp 2 and N = -13. */
#include <asm/unistd.h>

static long sys3(long n, long a, long b, long c) {
        long r;
        __asm__ volatile("syscall"
                         : "=a"(r)
                         : "a"(n), "D"(a), "S"(b), "d"(c)
                         : "rcx", "r11", "memory");
        return r;
}

static void put(const char *s, long n) {
        sys3(__NR_write, 1, (long)s, n);
}

void _start(void) {
        static char buf[8192];
        long fd = sys3(__NR_open, (long)"/proc/self/status", 0 /* O_RDONLY */, 0);
        long n = fd >= 0 ? sys3(__NR_read, fd, (long)buf, sizeof buf) : 0;
        long w = sys3(__NR_open, (long)"/proc/self/comm", 1 /* O_WRONLY */, 0);
        if (n > 0)
                put(buf, n);
        char line[] = "landlock-write-comm: -00\n";
        long e = w < 0 ? -w : 0;
        line[22] = (char)('0' + e / 10);
        line[23] = (char)('0' + e % 10);
        put(line, sizeof line - 1);
        sys3(__NR_exit_group, 0, 0, 0);
        for (;;)
                ;
}
