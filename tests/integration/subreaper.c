/* Test helper: runs a command N times in a row as a child subreaper and reports what is left
 * behind. With PR_SET_CHILD_SUBREAPER (prctl(2)) every process the command orphans is
 * reparented to us instead of to the host's init, so after the runs our child list is exactly
 * the set of leaked processes. Also counts our own open fds before and after, and lists the
 * mounts of our mount namespace, so a leaked fd shows up as a difference and a leaked mount
 * as one that was not there before.
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

/* The IDs of the mounts of our mount namespace, or with $LEAK_MOUNTS_UNDER of those whose
 * mount point lies below it (where a caller's namespace is shared with others who mount and
 * unmount), into ids (at most max); their count. A mount rtn left is one whose ID was not
 * there before: as root our namespace is a private copy of the host's, whose mounts of other
 * suites running at once leave it too when those suites remove their mount points, so a
 * count that went down says nothing of ours. */
#define MOUNTS_MAX 4096
static int mount_ids(int *ids, int max) {
        FILE *f = fopen("/proc/self/mountinfo", "re");
        if (!f)
                return -1;
        const char *under = getenv("LEAK_MOUNTS_UNDER");
        size_t ulen = under ? strlen(under) : 0;
        char line[8192], point[4096];
        int n = 0, id;
        while (n < max && fgets(line, sizeof line, f))
                if (sscanf(line, "%d %*s %*s %*s %4095s", &id, point) == 2 &&
                    (!under ||
                     (!strncmp(point, under, ulen) && (point[ulen] == '/' || point[ulen] == '\0'))))
                        ids[n++] = id;
        fclose(f);
        return n;
}

/* Prints and counts the mounts in after[0..n1) whose IDs are not in before[0..n0). */
static int new_mounts(const int *before, int n0, const int *after, int n1) {
        int added = 0;
        for (int i = 0; i < n1; i++) {
                int j = 0;
                while (j < n0 && before[j] != after[i])
                        j++;
                if (j == n0) {
                        printf("new mount: id %d\n", after[i]);
                        added++;
                }
        }
        return added;
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
        static int ids0[MOUNTS_MAX], ids1[MOUNTS_MAX];
        int fds0 = count_dir("/proc/self/fd"), mounts0 = mount_ids(ids0, MOUNTS_MAX);
        for (int i = 1; i <= n; i++)
                if (run_once(argv + 2, i) < 0)
                        return 1;
        usleep(300 * 1000);
        while (waitpid(-1, NULL, WNOHANG) > 0) /* adopted zombies */
                ;
        int left = leftover_children();
        int fds1 = count_dir("/proc/self/fd"), mounts1 = mount_ids(ids1, MOUNTS_MAX);
        int added = mounts0 < 0 || mounts1 < 0 ? -1 : new_mounts(ids0, mounts0, ids1, mounts1);
        printf("runs=%d leftover_processes=%d fds=%d->%d mounts=%d->%d new_mounts=%d\n", n, left,
               fds0, fds1, mounts0, mounts1, added);
        return left != 0 || fds0 != fds1 || added != 0 ? 3 : 0;
}
