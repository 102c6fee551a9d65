/* Whether a port of the host's loopback is one of rtn's own listeners (docs/network.md,
 * "A service on the host"). --allow-host-port opens a port of the host to a sandbox, and the
 * user may name by mistake one that rtn listens on: `rtn serve --http`, a `--publish` of
 * this or another sandbox. Through it a sandbox would reach another sandbox's server, or an
 * MCP endpoint that drives sandboxes. The kernel's socket tables (/proc/net/tcp, tcp6) name
 * the listening sockets on the port by inode; a process called rtn that holds one of them is
 * rtn. A listener of another user whose rtn processes cannot be read counts as rtn's, as does
 * a table that cannot be read: the answer fails closed. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/io.h"
#include "netns/netns.h"

#define LISTENERS_MAX 16

struct listener {
        unsigned long inode;
        unsigned uid;
};

/* The sockets listening on port (any address) in one of the kernel's tables; their count. */
static int table_listeners(const char *path, uint16_t port, struct listener *out, int n, int max) {
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        char line[512];
        if (!f)
                return errno == ENOENT ? n : negative_errno(); /* no IPv6: no tcp6 */
        if (!fgets(line, sizeof line, f)) /* the header */
                return n;
        while (fgets(line, sizeof line, f)) {
                char local[64];
                unsigned st, uid, lport;
                unsigned long inode;
                /* sl local rem st tx:rx tr:when retrnsmt uid timeout inode */
                if (sscanf(line, " %*s %63s %*s %x %*s %*s %*s %u %*s %lu", local, &st, &uid,
                           &inode) != 4)
                        continue;
                const char *c = strrchr(local, ':');
                if (st != 0x0A || !c || sscanf(c + 1, "%x", &lport) != 1 || lport != port)
                        continue;
                if (n == max)
                        return -E2BIG;
                out[n++] = (struct listener){.inode = inode, .uid = uid};
        }
        return n;
}

/* Whether process pid (a directory of /proc) holds socket inode: 1, 0, or -EACCES when its
 * descriptors cannot be read. */
static int holds(int proc, const char *pid, unsigned long inode) {
        char path[64], want[48], link[64];
        snprintf(path, sizeof path, "%s/fd", pid);
        int dfd = openat(proc, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return errno == ENOENT ? 0 : -EACCES;
        DIR *d = fdopendir(dfd);
        if (!d) {
                close(dfd);
                return -EACCES;
        }
        snprintf(want, sizeof want, "socket:[%lu]", inode);
        int r = 0;
        for (struct dirent *e; r == 0 && (e = readdir(d));) {
                ssize_t k = readlinkat(dirfd(d), e->d_name, link, sizeof link - 1);
                if (k > 0) {
                        link[k] = '\0';
                        r = !strcmp(link, want);
                }
        }
        closedir(d);
        return r;
}

/* Whether a process called rtn holds l: 1, 0, or 1 too when one of l's owner cannot be
 * read (it may be). */
static int rtn_holds(const struct listener *l) {
        _cleanup_close_ int proc = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (proc < 0)
                return negative_errno();
        DIR *d = fdopendir(dup(proc));
        if (!d)
                return negative_errno();
        int r = 0;
        for (struct dirent *e; r == 0 && (e = readdir(d));) {
                char comm[32], path[64];
                struct stat st;
                if (!isdigit((unsigned char)e->d_name[0]))
                        continue;
                snprintf(path, sizeof path, "%s/comm", e->d_name);
                ssize_t k = rtn_read_file_at(proc, path, comm, sizeof comm - 1);
                if (k <= 0)
                        continue;
                comm[k] = '\0';
                if (strcmp(comm, "rtn\n") || fstatat(proc, e->d_name, &st, 0) < 0)
                        continue;
                int h = holds(proc, e->d_name, l->inode);
                r = h > 0 || (h < 0 && st.st_uid == l->uid);
        }
        closedir(d);
        return r;
}

int netns_port_rtns(uint16_t port) {
        struct listener ls[LISTENERS_MAX];
        int n = table_listeners("/proc/net/tcp", port, ls, 0, LISTENERS_MAX);
        if (n >= 0)
                n = table_listeners("/proc/net/tcp6", port, ls, n, LISTENERS_MAX);
        if (n < 0)
                return n;
        for (int i = 0; i < n; i++) {
                int r = rtn_holds(&ls[i]);
                if (r != 0)
                        return r;
        }
        return 0;
}
