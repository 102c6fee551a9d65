/* One attack against something of the host, named on the command line, with the errno it
 * must fail with:
 *   probe tcp PORT ERRNO        connect to 127.0.0.1:PORT (a host listener)
 *   probe mptcp PORT ERRNO      the same over an MPTCP socket
 *   probe udp PORT ERRNO        send a datagram to 127.0.0.1:PORT
 *   probe udp6 PORT ERRNO       the same from an AF_INET6 socket (::ffff:127.0.0.1)
 *   probe raw - ERRNO           a raw ICMP socket
 *   probe ping - ERRNO          an ICMP datagram ("ping") socket
 *   probe diag - ERRNO          a NETLINK_SOCK_DIAG socket (every socket of the host)
 *   probe abstract NAME ERRNO   connect to the abstract unix socket @NAME (a host listener)
 *   probe unix PATH ERRNO       connect to the pathname unix socket PATH (a host listener)
 *   probe open PATH ERRNO       open PATH for reading and writing (a terminal, a shm object)
 *   probe create PATH ERRNO     create the file PATH
 *   probe kill PID ERRNO        SIGKILL the host process PID
 *   probe ptrace PID ERRNO      PTRACE_ATTACH to it
 *   probe pidfd PID ERRNO       pidfd_open it
 * ERRNO is a name (ECONNREFUSED, EPERM, ...). Prints "blocked ..." and exits 0 when the call
 * failed with that errno; "ESCAPED ..." and exit 1 otherwise. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
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
} errnos[] = {{"ECONNREFUSED", ECONNREFUSED},
              {"EPERM", EPERM},
              {"ESRCH", ESRCH},
              {"EACCES", EACCES},
              {"ENETUNREACH", ENETUNREACH},
              {"ENOENT", ENOENT},
              {"EAFNOSUPPORT", EAFNOSUPPORT}};

static int tcp(const char *port) {
        int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in a = {.sin_family = AF_INET,
                                .sin_port = htons((uint16_t)atoi(port)),
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        return connect(s, (struct sockaddr *)&a, sizeof a);
}

static int mptcp(const char *port) {
        int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 262 /* IPPROTO_MPTCP */);
        if (s < 0)
                return -1;
        struct sockaddr_in a = {.sin_family = AF_INET,
                                .sin_port = htons((uint16_t)atoi(port)),
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        return connect(s, (struct sockaddr *)&a, sizeof a);
}

static int udp(const char *port, int family) {
        int s = socket(family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (s < 0)
                return -1;
        if (family == AF_INET) {
                struct sockaddr_in a = {.sin_family = AF_INET,
                                        .sin_port = htons((uint16_t)atoi(port)),
                                        .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
                return (int)sendto(s, "x", 1, 0, (struct sockaddr *)&a, sizeof a);
        }
        struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)atoi(port))};
        inet_pton(AF_INET6, "::ffff:127.0.0.1", &a.sin6_addr);
        return (int)sendto(s, "x", 1, 0, (struct sockaddr *)&a, sizeof a);
}

static int unix_path(const char *path) {
        int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_un a = {.sun_family = AF_UNIX};
        snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
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
        else if (!strcmp(what, "mptcp"))
                r = mptcp(arg);
        else if (!strcmp(what, "udp"))
                r = udp(arg, AF_INET);
        else if (!strcmp(what, "udp6"))
                r = udp(arg, AF_INET6);
        else if (!strcmp(what, "raw"))
                r = socket(AF_INET, SOCK_RAW, IPPROTO_ICMP);
        else if (!strcmp(what, "ping"))
                r = socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP);
        else if (!strcmp(what, "diag"))
                r = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
        else if (!strcmp(what, "abstract"))
                r = abstract(arg);
        else if (!strcmp(what, "unix"))
                r = unix_path(arg);
        else if (!strcmp(what, "open"))
                r = open(arg, O_RDWR | O_NOCTTY | O_CLOEXEC);
        else if (!strcmp(what, "create"))
                r = open(arg, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
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
