/* Host side of the network attacks: `hostlisten DIR` listens on 127.0.0.1 (an ephemeral TCP
 * port, written to DIR/port) and on the abstract unix socket @rtn-sec-PID (name written to
 * DIR/abstract), and appends a line to DIR/accepted for every connection it accepts, until
 * killed. The suites assert that DIR/accepted stays empty. */
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
        put(argv[1], "accepted", "", "w");
        put(argv[1], "abstract", name, "w");
        snprintf(buf, sizeof buf, "%u", ntohs(a.sin_port));
        put(argv[1], "port", buf, "w"); /* last: the suite waits for this file */
        struct pollfd p[2] = {{.fd = t, .events = POLLIN}, {.fd = u, .events = POLLIN}};
        for (;;) {
                if (poll(p, 2, -1) < 0)
                        continue;
                for (int i = 0; i < 2; i++)
                        if (p[i].revents) {
                                int c = accept4(p[i].fd, NULL, NULL, SOCK_CLOEXEC);
                                if (c >= 0)
                                        close(c);
                                put(argv[1], "accepted", i ? "unix\n" : "tcp\n", "a");
                        }
        }
}
