/* Resource bombs (tests/security/resources.sh):
 *   bomb fork MAX    fork children that sleep until fork fails; prints how many and why.
 *                    Exit 0 when fork failed with EAGAIN before MAX children, else 1.
 *   bomb mem MAX_MB  allocate and touch 16 MiB chunks until malloc fails; exit 0 when it
 *                    failed before MAX_MB, else 1. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fork_bomb(long max) {
        long n = 0;
        for (; n < max; n++) {
                pid_t p = fork();
                if (p == 0) {
                        pause();
                        _exit(0);
                }
                if (p < 0) {
                        int e = errno;
                        printf("fork failed after %ld children: %s\n", n, strerror(e));
                        return e == EAGAIN ? 0 : 1;
                }
        }
        printf("forked %ld children, no limit hit\n", n);
        return 1;
}

static int mem_bomb(long max_mb) {
        long mb = 0;
        for (; mb < max_mb; mb += 16) {
                char *p = malloc(16 << 20);
                if (!p) {
                        printf("malloc failed after %ld MiB: %s\n", mb, strerror(errno));
                        return 0;
                }
                memset(p, 0xa5, 16 << 20);
        }
        printf("allocated %ld MiB, no limit hit\n", mb);
        return 1;
}

int main(int argc, char **argv) {
        setvbuf(stdout, NULL, _IONBF, 0);
        if (argc == 3 && !strcmp(argv[1], "fork"))
                return fork_bomb(atol(argv[2]));
        if (argc == 3 && !strcmp(argv[1], "mem"))
                return mem_bomb(atol(argv[2]));
        return 2;
}
