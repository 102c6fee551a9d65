/* One ia32 system call (`int 0x80`, getpid) and nothing else: the seccomp filter must kill
 * the process with SIGSYS, and rtn exec must say so on stderr (tests/security/syscalls.sh). */
int main(void) {
        long r;
        __asm__ volatile("int $0x80" : "=a"(r) : "a"(20L) : "memory");
        return r > 0 ? 0 : 1;
}
