/* One attack against something of the host, named on the command line, with the errno it
 * must fail with:
 *   probe tcp PORT ERRNO        connect to 127.0.0.1:PORT (a host listener)
 *   probe abstract NAME ERRNO   connect to the abstract unix socket @NAME (a host listener)
 *   probe kill PID ERRNO        SIGKILL the host process PID
 *   probe ptrace PID ERRNO      PTRACE_ATTACH to it
 *   probe pidfd PID ERRNO       pidfd_open it
 * ERRNO is a name (ECONNREFUSED, EPERM, ...). Prints "blocked ..." and exits 0 when the call
 * failed with that errno; "ESCAPED ..." and exit 1 otherwise. */
#include <arpa/inet.h>
#include <errno.h>
#include <stddef.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

static const struct {
        const char *name;
        int value;
} errnos[] = {
        {"ECONNREFUSED", ECONNREFUSED}, {"EPERM", EPERM},  {"ESRCH", ESRCH}, {"EACCES", EACCES},
        {"ENETUNREACH", ENETUNREACH},   {"ENOENT", ENOENT}};

static int tcp(const char *port) {
        int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in a = {.sin_family = AF_INET,
                                .sin_port = htons((uint16_t)atoi(port)),
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        return connect(s, (struct sockaddr *)&a, sizeof a);
}

static int abstract(const char *name) {
        int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_un a = {.sun_family = AF_UNIX};
        size_t n = strnlen(name, sizeof a.sun_path - 2);
        memcpy(a.sun_path + 1, name, n);
        return connect(s, (struct sockaddr *)&a,
                       (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n));
}

int main(int argc, char **argv) {
        if (argc != 4)
                return 2;
        int want = -1;
        for (size_t i = 0; i < sizeof errnos / sizeof errnos[0]; i++)
                if (!strcmp(errnos[i].name, argv[3]))
                        want = errnos[i].value;
        if (want < 0)
                return 2;
        const char *what = argv[1], *arg = argv[2];
        long r;
        errno = 0;
        if (!strcmp(what, "tcp"))
                r = tcp(arg);
        else if (!strcmp(what, "abstract"))
                r = abstract(arg);
        else if (!strcmp(what, "kill"))
                r = kill(atoi(arg), SIGKILL);
        else if (!strcmp(what, "ptrace"))
                r = ptrace(PTRACE_ATTACH, atoi(arg), NULL, NULL);
        else if (!strcmp(what, "pidfd"))
                r = syscall(SYS_pidfd_open, atoi(arg), 0);
        else
                return 2;
        int e = errno;
        if (r == -1 && e == want) {
                printf("blocked %s %s: %s\n", what, arg, strerror(e));
                return 0;
        }
        printf("ESCAPED %s %s: %s (expected %s)\n", what, arg, r == -1 ? strerror(e) : "succeeded",
               strerror(want));
        return 1;
}
