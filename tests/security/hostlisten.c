/* Host side of the network attacks: `hostlisten DIR` listens on 127.0.0.1 (an ephemeral TCP
 * port, written to DIR/port, and a UDP one, DIR/udpport), on the abstract unix socket
 * @rtn-sec-PID (name written to DIR/abstract) and, where the path fits, on the pathname unix
 * socket DIR/sock, and
 * appends a line to DIR/accepted for every connection it accepts and every datagram it
 * receives, until killed. The suites assert that DIR/accepted stays empty. */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static void put(const char *dir, const char *file, const char *text, const char *mode) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, file);
        FILE *f = fopen(path, mode);
        if (f) {
                fputs(text, f);
                fclose(f);
        }
}

int main(int argc, char **argv) {
        if (argc != 2)
                return 2;
        int t = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t len = sizeof a;
        if (bind(t, (struct sockaddr *)&a, sizeof a) || listen(t, 16) ||
            getsockname(t, (struct sockaddr *)&a, &len))
                return 1;
        char name[64], buf[64];
        snprintf(name, sizeof name, "rtn-sec-%d", (int)getpid());
        int u = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_un ua = {.sun_family = AF_UNIX};
        memcpy(ua.sun_path + 1, name, strlen(name));
        if (bind(u, (struct sockaddr *)&ua,
                 (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name))) ||
            listen(u, 16))
                return 1;
        int d = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in da = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t dlen = sizeof da;
        if (bind(d, (struct sockaddr *)&da, sizeof da) ||
            getsockname(d, (struct sockaddr *)&da, &dlen))
                return 1;
        int pu = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_un pa = {.sun_family = AF_UNIX};
        /* Best effort (DIR may be too long for sun_path): a suite that needs it checks. */
        if ((size_t)snprintf(pa.sun_path, sizeof pa.sun_path, "%s/sock", argv[1]) >=
                    sizeof pa.sun_path ||
            bind(pu, (struct sockaddr *)&pa, sizeof pa) || listen(pu, 16)) {
                close(pu);
                pu = -1;
        }
        put(argv[1], "accepted", "", "w");
        snprintf(buf, sizeof buf, "%u", ntohs(da.sin_port));
        put(argv[1], "udpport", buf, "w");
        put(argv[1], "abstract", name, "w");
        snprintf(buf, sizeof buf, "%u", ntohs(a.sin_port));
        put(argv[1], "port", buf, "w"); /* last: the suite waits for this file */
        static const char *const what[] = {"tcp\n", "unix\n", "path\n", "udp\n"};
        struct pollfd p[4] = {{.fd = t, .events = POLLIN},
                              {.fd = u, .events = POLLIN},
                              {.fd = pu, .events = POLLIN},
                              {.fd = d, .events = POLLIN}};
        for (;;) {
                if (poll(p, 4, -1) < 0)
                        continue;
                for (int i = 0; i < 4; i++)
                        if (p[i].revents) {
                                if (i == 3) {
                                        (void)recv(d, buf, sizeof buf, 0);
                                } else {
                                        int c = accept4(p[i].fd, NULL, NULL, SOCK_CLOEXEC);
                                        if (c >= 0)
                                                close(c);
                                }
                                put(argv[1], "accepted", what[i], "a");
                        }
        }
}
