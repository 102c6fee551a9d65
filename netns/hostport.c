/* Whether a port of the host's loopback is one of rtn's own listeners (docs/network.md,
 * "A service on the host"). --allow-host-port opens a port of the host to a sandbox, and the
 * user may name by mistake one that rtn listens on: `rtn serve --http`, a `--publish` of
 * this or another sandbox. Through it a sandbox would reach another sandbox's server, or an
 * MCP endpoint that drives sandboxes. The kernel's socket tables (/proc/net/tcp, tcp6) name
 * the listening sockets on the port by inode; a process called rtn that holds one of them is
 * rtn. Each process is read through its /proc directory, opened once: a pid reused meanwhile
 * is another process, never read as this one. Processes change between two reads, and a
 * reader that is not root is refused the descriptors of a zombie, of a process that is
 * exiting or changing credentials, of a non-dumpable one and of another user's. One that is
 * gone, no longer called rtn, or exiting with no thread left holds nothing (a zombie's
 * descriptors are closed); one that stays unreadable over a few reads holds the listener
 * when it runs as the listener's user (another user's `rtn serve --http`, an rtn made
 * non-dumpable), as a table that cannot be read is rtn's: the answer fails closed. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/clock.h"
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

/* PF_EXITING of the task's flags (include/linux/sched.h; field 9 of /proc/PID/stat): set
 * when do_exit begins, before it drops the memory map and closes the descriptors. */
#define TASK_PF_EXITING 0x4u
/* Reads of a process called rtn whose descriptors cannot be read, and the pause before the
 * second (times 4 before each next): a process that changes credentials, or execs a setuid
 * program, is non-dumpable, and so unreadable, before its new uid or name shows (commit_creds,
 * begin_new_exec); rtn's sandbox child does between its setresgid and setresuid. The gate
 * waits at most 21 pauses, on a port it then refuses. */
#define UNREADABLE_TRIES 4
#define UNREADABLE_PAUSE_USEC 1000

/* What /proc/PID/stat says of a process. */
struct task_stat {
        bool rtn; /* its name is rtn */
        bool exiting; /* its main thread is exiting, or has (a zombie) */
        long nthreads; /* its live threads, and the main one until it is reaped */
};

/* The stat of the process open at dir: 0, or -ENOENT/-ESRCH when it is gone (reaped: the
 * directory, opened before, names the process it was opened for, never a new one with the
 * same pid), another -errno when it cannot be read. */
static int task_stat(int dir, struct task_stat *ret) {
        char buf[1024], state;
        unsigned flags;
        ssize_t n = rtn_read_file_at(dir, "stat", buf, sizeof buf);
        if (n < 0)
                return (int)n;
        /* pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
         * utime stime cutime cstime priority nice num_threads; comm may hold ") " itself */
        const char *lp = strchr(buf, '('), *rp = strrchr(buf, ')');
        if (!lp || !rp || rp < lp ||
            sscanf(rp + 1, " %c %*d %*d %*d %*d %*d %u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %ld",
                   &state, &flags, &ret->nthreads) != 3)
                return -EIO;
        ret->rtn = rp - lp == 4 && !strncmp(lp + 1, "rtn", 3);
        ret->exiting = (flags & TASK_PF_EXITING) || state == 'Z' || state == 'X';
        return 0;
}

/* Whether the process open at dir holds socket inode: 1, 0 (also when it is gone), or
 * -EACCES when its descriptors, or one of them, cannot be read. */
static int holds(int dir, unsigned long inode) {
        char want[48], link[64];
        int dfd = openat(dir, "fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return errno == ENOENT || errno == ESRCH ? 0 : -EACCES;
        DIR *d = fdopendir(dfd);
        if (!d) {
                close(dfd);
                return -EACCES;
        }
        snprintf(want, sizeof want, "socket:[%lu]", inode);
        int r = 0;
        for (;;) {
                errno = 0;
                struct dirent *e = readdir(d);
                if (!e) {
                        if (errno)
                                r = errno == ENOENT || errno == ESRCH ? 0 : -EACCES;
                        break;
                }
                if (e->d_name[0] == '.')
                        continue;
                ssize_t k = readlinkat(dirfd(d), e->d_name, link, sizeof link - 1);
                if (k < 0 && errno != ENOENT) { /* ENOENT: closed since the listing */
                        r = -EACCES;
                        break;
                }
                if (k > 0) {
                        link[k] = '\0';
                        if (!strcmp(link, want)) {
                                r = 1;
                                break;
                        }
                }
        }
        closedir(d);
        return r;
}

/* Whether the process open at dir, called rtn when its name was read, holds l: 1 or 0. Its
 * descriptors are read again while they cannot be, for a process changes between two reads:
 * it exits, waits to be reaped, execs, changes credentials. One that is gone, no longer
 * called rtn, or exiting with no thread left (a zombie: its descriptors are closed, and
 * nothing of it accepts a connection again) holds nothing. One that stays unreadable holds
 * l when its user is l's (kept fail-closed: another user's `rtn serve --http`, and a
 * non-dumpable rtn, whose /proc/PID/fd only root reads). A main thread that exited before
 * the others leaves no table to read through it: unreadable too. */
static int rtn_task_holds(int dir, const struct listener *l) {
        uint64_t pause_usec = UNREADABLE_PAUSE_USEC;
        for (int i = 0;; i++) {
                struct task_stat ts;
                struct stat st;
                int r = task_stat(dir, &ts);
                if (r == -ENOENT || r == -ESRCH || (r == 0 && !ts.rtn) ||
                    (r == 0 && ts.exiting && ts.nthreads <= 1))
                        return 0;
                r = r < 0 || ts.exiting ? -EACCES : holds(dir, l->inode);
                if (r >= 0)
                        return r;
                /* the uid a process's directory shows is its euid, dumpable or not */
                if (fstat(dir, &st) < 0 || st.st_uid != l->uid)
                        return 0;
                if (i + 1 == UNREADABLE_TRIES)
                        return 1;
                nanosleep(&(struct timespec){.tv_nsec = (long)(pause_usec * RTN_NSEC_PER_USEC)},
                          NULL);
                pause_usec *= 4;
        }
}

/* Whether a process called rtn holds l: 1 or 0. */
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
                if (!isdigit((unsigned char)e->d_name[0]))
                        continue;
                snprintf(path, sizeof path, "%s/comm", e->d_name);
                ssize_t k = rtn_read_file_at(proc, path, comm, sizeof comm - 1);
                if (k <= 0)
                        continue;
                comm[k] = '\0';
                if (strcmp(comm, "rtn\n"))
                        continue;
                /* every later read, its name's first, goes through this directory */
                _cleanup_close_ int dir =
                        openat(proc, e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (dir >= 0)
                        r = rtn_task_holds(dir, l);
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
