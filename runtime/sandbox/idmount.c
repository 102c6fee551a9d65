/* An idmapped view of the --workspace for sandboxes started by root. Root's sandboxes run the
 * agent as a subordinate uid, so a workspace owned by root (or by any user) would be
 * read-only inside. Instead of chown'ing the user's files, rtn clones the directory's mount
 * and idmaps it (mount_setattr(2), MOUNT_ATTR_IDMAP): on-disk owner <-> the agent's host uid,
 * both ways, so the agent owns the workspace and the files it writes land on disk owned by
 * the directory's owner. Only root may create idmapped mounts; unprivileged callers do not
 * need one (their sandbox maps the caller to the agent). A container's root cannot either (no
 * CAP_SYS_ADMIN): the kernel's EPERM makes the sandbox map the directory's owner as its agent
 * instead (rt_idmap_owner, runtime/sandbox/sandbox.c's root_binds). */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/io.h"
#include "common/syscall.h"
#include "runtime/internal.h"

#ifndef MOUNT_ATTR_IDMAP
#define MOUNT_ATTR_IDMAP 0x00100000
#endif

/* A user namespace whose only mappings are uid/gid -> host ids, as an fd. */
static int userns_fd(uid_t uid, uid_t host_uid, gid_t gid, gid_t host_gid, struct rtn_error *err) {
        int pfd[2];
        if (pipe2(pfd, O_CLOEXEC) < 0)
                return rtn_err(err, errno, "pipe");
        struct clone_args ca = {.flags = CLONE_NEWUSER, .exit_signal = SIGCHLD};
        pid_t pid = sys_clone3(&ca, sizeof ca);
        if (pid < 0) {
                close(pfd[0]);
                close(pfd[1]);
                return rtn_err(err, errno, "clone3 user namespace for the idmapped workspace");
        }
        if (pid == 0) {
                char c;
                close(pfd[1]);
                (void)!read(pfd[0], &c, 1); /* hold the namespace until the parent is done */
                _exit(0);
        }
        close(pfd[0]);
        char path[64], map[64];
        int r, fd = -1;
        snprintf(map, sizeof map, "%u %u 1\n", (unsigned)uid, (unsigned)host_uid);
        snprintf(path, sizeof path, "/proc/%d/uid_map", (int)pid);
        if ((r = rtn_write_file_at(AT_FDCWD, path, map)) < 0) {
                rtn_err(err, r, "write %s", path);
                goto out;
        }
        snprintf(map, sizeof map, "%u %u 1\n", (unsigned)gid, (unsigned)host_gid);
        snprintf(path, sizeof path, "/proc/%d/gid_map", (int)pid);
        if ((r = rtn_write_file_at(AT_FDCWD, path, map)) < 0) {
                rtn_err(err, r, "write %s", path);
                goto out;
        }
        snprintf(path, sizeof path, "/proc/%d/ns/user", (int)pid);
        if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
                r = rtn_err(err, errno, "open %s", path);
out:
        close(pfd[1]);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                ;
        return fd >= 0 ? fd : r;
}

int rt_idmapped_tree_at(int fd, const char *path, const struct rt_idmap *m, struct rtn_error *err) {
        struct stat st;
        if (fstatat(fd, fd >= 0 ? "" : path, &st, fd >= 0 ? AT_EMPTY_PATH : 0) < 0)
                return rtn_err(err, errno, "stat %s", path);
        _cleanup_close_ int tree = sys_open_tree(
                fd, fd >= 0 ? "" : path,
                OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | (fd >= 0 ? AT_EMPTY_PATH : 0));
        if (tree < 0)
                return rtn_err(err, errno, "open_tree %s", path);
        _cleanup_close_ int ns = userns_fd(st.st_uid, m->sub_uid + m->agent_uid, st.st_gid,
                                           m->sub_gid + m->agent_gid, err);
        if (ns < 0)
                return ns;
        struct mount_attr a = {.attr_set = MOUNT_ATTR_IDMAP | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
                               .userns_fd = (uint64_t)ns};
        if (sys_mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &a, sizeof a) < 0)
                return rtn_err(err, errno,
                               "idmap %s (does its filesystem support idmapped "
                               "mounts?)",
                               path);
        return TAKE_FD(tree);
}
