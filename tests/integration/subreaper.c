/* Test helper: runs a command N times in a row as a child subreaper and reports what is left
 * behind. With PR_SET_CHILD_SUBREAPER (prctl(2)) every process the command orphans is
 * reparented to us instead of to the host's init, so after the runs our child list is exactly
 * the set of leaked processes. Also counts our own open fds and the mounts of our mount
 * namespace before and after, so a leak of either shows up as a difference.
 *   usage: subreaper N CMD [ARG...]
 * Leftover processes are printed, then killed.
 * Exit: 0 clean; 1 a run failed (its status is printed); 2 usage/system error; 3 leftovers. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static int count_dir(const char *path) {
        DIR *d = opendir(path);
        if (!d)
                return -1;
        int n = 0;
        struct dirent *e;
        while ((e = readdir(d)))
                if (e->d_name[0] != '.')
                        n++;
        closedir(d);
        return n - 1; /* the fd opendir itself holds */
}

/* The mounts of our mount namespace, or with $LEAK_MOUNTS_UNDER those whose mount point lies
 * below it (where a caller's namespace is shared with others who mount and unmount). */
static int count_mounts(void) {
        FILE *f = fopen("/proc/self/mountinfo", "re");
        if (!f)
                return -1;
        const char *under = getenv("LEAK_MOUNTS_UNDER");
        size_t ulen = under ? strlen(under) : 0;
        char line[8192], point[4096];
        int n = 0;
        while (fgets(line, sizeof line, f))
                if (!under ||
                    (sscanf(line, "%*s %*s %*s %*s %4095s", point) == 1 &&
                     !strncmp(point, under, ulen) && (point[ulen] == '/' || point[ulen] == '\0')))
                        n++;
        fclose(f);
        return n;
}

/* Prints and counts processes whose parent is us (our adopted orphans). */
static int leftover_children(void) {
        DIR *d = opendir("/proc");
        if (!d)
                return -1;
        int n = 0;
        struct dirent *e;
        pid_t self = getpid();
        while ((e = readdir(d))) {
                char path[300], buf[512];
                if (e->d_name[0] < '0' || e->d_name[0] > '9')
                        continue;
                snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
                FILE *f = fopen(path, "re");
                if (!f)
                        continue;
                size_t len = fread(buf, 1, sizeof buf - 1, f);
                fclose(f);
                buf[len] = '\0';
                /* "pid (comm) state ppid ...": comm may hold spaces; parse after the last ')'. */
                char *rp = strrchr(buf, ')');
                int ppid = 0;
                char state = 0;
                if (rp && sscanf(rp + 1, " %c %d", &state, &ppid) == 2 && ppid == self) {
                        rp[1] = '\0';
                        fprintf(stderr, "subreaper: leftover process %s\n", buf);
                        kill(atoi(e->d_name), SIGKILL); /* leave the host clean either way */
                        n++;
                }
        }
        closedir(d);
        return n;
}

static int run_once(char **argv, int i) {
        pid_t pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
                if (fd >= 0)
                        dup2(fd, 0);
                execvp(argv[0], argv);
                _exit(127);
        }
        int status;
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return -errno;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                fprintf(stderr, "subreaper: run %d of %s: status %#x\n", i, argv[0], status);
                return -ECHILD;
        }
        return 0;
}

int main(int argc, char **argv) {
        if (argc < 3 || atoi(argv[1]) <= 0) {
                fprintf(stderr, "usage: subreaper N CMD [ARG...]\n");
                return 2;
        }
        if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0) {
                perror("subreaper: PR_SET_CHILD_SUBREAPER");
                return 2;
        }
        int n = atoi(argv[1]);
        int fds0 = count_dir("/proc/self/fd"), mounts0 = count_mounts();
        for (int i = 1; i <= n; i++)
                if (run_once(argv + 2, i) < 0)
                        return 1;
        usleep(300 * 1000);
        while (waitpid(-1, NULL, WNOHANG) > 0) /* adopted zombies */
                ;
        int left = leftover_children();
        int fds1 = count_dir("/proc/self/fd"), mounts1 = count_mounts();
        printf("runs=%d leftover_processes=%d fds=%d->%d mounts=%d->%d\n", n, left, fds0, fds1,
               mounts0, mounts1);
        return left != 0 || fds0 != fds1 || mounts0 != mounts1 ? 3 : 0;
}
