/* The sandbox's own identity files (docs/architecture.md, step 6, "Identity"), made by the
 * child on its stage before anything of the sandbox runs: /etc/passwd and /etc/group naming
 * root and the agent (`rtn`, home RTN_SANDBOX_HOME) with the base's other entries after them,
 * /etc/hostname and /etc/hosts resolving the hostname and localhost. (An agent that is uid 0
 * is root, and keeps the base's passwd and group.) And RT_APT_ROOT_CONF, the configuration
 * that keeps apt as root where root has no capability to switch users with.
 *
 * They live in one directory on the stage, STAGE/id/etc, which is a lower layer of /etc just
 * above the base (the host's /etc or the rootfs), so they never show up as changes and the
 * sandbox cannot write them: a write copies up into the upper, as for any base file, and
 * provisioning (useradd in a package's postinst) still works on a copy. /etc/hostname and
 * /etc/hosts are also bound read-only over whatever the layers show, as container runtimes
 * do, so they always match the sandbox's hostname. Nothing on the host side ever reads these
 * files back: they are rtn's, and the stage is detached with the old root.
 *
 * The child cannot allocate (clone3 runs no atfork handler), so the base's files are read
 * into a static buffer, bounded, opened without following a symlink and without blocking (a
 * committed layer or a rootfs is what a sandbox wrote: a FIFO there must not hang a start). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/io.h"
#include "common/sandbox_dirs.h"
#include "common/syscall.h"
#include "runtime/internal.h"

#define ID_ETC RT_STAGE "/id/etc"
#define BASE_MAX (512u << 10) /* more than any passwd or group a system has */

static char base_buf[BASE_MAX + 1];

/* The base's etc/NAME (host base: the host's /etc; rootfs: its etc/) opened for reading, or
 * -1 when it is missing, not regular or unreadable. */
static int open_base(const struct rt_plan *p, const char *name) {
        char rel[64];
        int dir = p->base_fd;
        snprintf(rel, sizeof rel, "etc/%s", name);
        for (size_t i = 0; dir < 0 && i < p->nhost; i++)
                if (strcmp(p->host[i].name, "etc") == 0 && p->host[i].fd >= 0) {
                        dir = p->host[i].fd;
                        snprintf(rel, sizeof rel, "%s", name);
                }
        if (dir < 0)
                return -1;
        struct open_how how = {.flags = O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC,
                               .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
                                          RESOLVE_NO_MAGICLINKS};
        _cleanup_close_ int fd = sys_openat2(dir, rel, &how, sizeof how);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
                return -1;
        return TAKE_FD(fd);
}

/* The base's etc/NAME, at most BASE_MAX bytes, into base_buf; "" when open_base finds none. */
static size_t read_base(const struct rt_plan *p, const char *name) {
        _cleanup_close_ int fd = open_base(p, name);
        if (fd < 0)
                return 0;
        ssize_t n = rtn_read_full(fd, base_buf, BASE_MAX);
        if (n <= 0)
                return 0;
        base_buf[n] = '\0';
        return (size_t)n;
}

/* Field 3 (the numeric id) of a passwd or group line, or -1. */
static long line_id(const char *line, size_t len) {
        const char *p = line, *end = line + len;
        for (int colons = 0; p < end && colons < 2; p++)
                if (*p == ':')
                        colons++;
        if (p >= end || *p < '0' || *p > '9')
                return -1;
        long id = 0;
        for (; p < end && *p >= '0' && *p <= '9' && id < 1L << 32; p++)
                id = id * 10 + (*p - '0');
        return p < end && *p == ':' ? id : -1;
}

static bool line_names(const char *line, size_t len, const char *name) {
        size_t n = strlen(name);
        return len > n && memcmp(line, name, n) == 0 && line[n] == ':';
}

/* Makes the sandbox's /etc/NAME with text in it: the open fd, or -errno with err set. */
static int create_etc(const char *name, const char *text, struct rtn_error *err) {
        char path[64];
        snprintf(path, sizeof path, ID_ETC "/%s", name);
        _cleanup_close_ int fd =
                open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0 || rtn_write_all(fd, text, strlen(text)) < 0)
                return rtn_err(err, errno, "write the sandbox's /etc/%s", name);
        return TAKE_FD(fd);
}

/* Writes head, then the base's lines that name neither root nor the agent (by name or id),
 * kept in place in base_buf and written at once: a write per line cost a start ~50 system
 * calls for a host's passwd. */
static int write_db(const struct rt_plan *p, const char *name, const char *head,
                    struct rtn_error *err) {
        _cleanup_close_ int out = create_etc(name, head, err);
        if (out < 0)
                return out;
        size_t n = read_base(p, name), kept = 0;
        long agent = (long)p->idmap->agent_uid;
        for (size_t off = 0; off < n;) {
                const char *line = base_buf + off;
                const char *nl = memchr(line, '\n', n - off);
                size_t len = nl ? (size_t)(nl - line) : n - off;
                off += len + 1;
                long id = line_id(line, len);
                if (id < 0 || id == 0 || id == agent || line_names(line, len, "root") ||
                    line_names(line, len, RTN_SANDBOX_USER))
                        continue;
                memmove(base_buf + kept, line, len); /* kept <= line - base_buf: only down */
                kept += len;
                base_buf[kept++] = '\n'; /* over the line's newline or the NUL at base_buf[n] */
        }
        if (rtn_write_all(out, base_buf, kept) < 0)
                return rtn_err(err, errno, "write the sandbox's /etc/%s", name);
        return 0;
}

static int write_small(const char *name, const char *text, struct rtn_error *err) {
        int fd = create_etc(name, text, err);
        return fd < 0 ? fd : (close(fd), 0);
}

/* RT_CA_BUNDLE is the base's system bundle (copied as it is, at most CA_BASE_MAX bytes,
 * without splitting a certificate) followed by the gate's CA certificate. Only the
 * certificate: its key never leaves rtn's memory. */
#define CA_BASE_MAX (8u << 20)
int rt_identity_ca_bundle(const struct rt_plan *p, const char *path, struct rtn_error *err) {
        _cleanup_close_ int out =
                open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (out < 0)
                return rtn_err(err, errno, "write the sandbox's %s", RT_CA_BUNDLE);
        _cleanup_close_ int in = open_base(p, RT_CA_BUNDLE_BASE);
        static const char end[] = "-----END CERTIFICATE-----\n";
        for (off_t pos = 0; in >= 0 && pos < CA_BASE_MAX;) {
                ssize_t n = pread(in, base_buf, BASE_MAX, pos);
                if (n <= 0)
                        break;
                base_buf[n] = '\0';
                const char *last = NULL;
                for (const char *e = base_buf; (e = strstr(e, end)); e += sizeof end - 1)
                        last = e + sizeof end - 1;
                if (!last)
                        break;
                if (rtn_write_all(out, base_buf, (size_t)(last - base_buf)) < 0)
                        return rtn_err(err, errno, "write the sandbox's %s", RT_CA_BUNDLE);
                pos += last - base_buf;
        }
        if (rtn_write_all(out, p->spec->ca_pem, strlen(p->spec->ca_pem)) < 0)
                return rtn_err(err, errno, "write the sandbox's %s", RT_CA_BUNDLE);
        return 0;
}

int rt_identity_make(const struct rt_plan *p, struct rtn_error *err) {
        const char *hn = p->spec->hostname ? p->spec->hostname : RT_DEFAULT_HOSTNAME;
        unsigned agent = p->idmap->agent_uid, agent_gid = p->idmap->agent_gid;
        char head[512], text[256];
        int r;
        if (mkdir(RT_STAGE "/id", 0755) < 0 || mkdir(ID_ETC, 0755) < 0)
                return rtn_err(err, errno, "create %s", ID_ETC);
        /* An agent that is uid 0 inside (a caller without a subordinate range) is root, whom
         * the base's passwd names already; and it would own files made here, which a
         * base's are not (invariant 3): the base's passwd and group stay. */
        if (agent != 0) {
                snprintf(head, sizeof head,
                         "root:x:0:0:root:/root:/bin/sh\n%s:x:%u:%u:%s:%s:/bin/sh\n",
                         RTN_SANDBOX_USER, agent, agent_gid, RTN_SANDBOX_USER, p->home);
                if ((r = write_db(p, "passwd", head, err)) < 0)
                        return r;
                snprintf(head, sizeof head, "root:x:0:\n%s:x:%u:\n", RTN_SANDBOX_USER, agent_gid);
                if ((r = write_db(p, "group", head, err)) < 0)
                        return r;
        }
        /* Root as the agent (--user root, shell_run's user) holds no CAP_SETUID or CAP_SETGID,
         * so apt could not switch to its _apt user to download (setgroups: EPERM): its
         * commands get APT_CONFIG=RT_APT_ROOT_CONF (rt_env_default), which tells apt to stay
         * root, as `rtn pkg install` does where setgroups is denied (runtime/rootfs/pkg.c). */
        if (mkdir(ID_ETC "/apt", 0755) < 0)
                return rtn_err(err, errno, "create the sandbox's /etc/apt");
        if ((r = write_small(RT_APT_ROOT_CONF + sizeof "/etc",
                             "// rtn: root here has no capability to switch users with\n"
                             "APT::Sandbox::User \"root\";\n",
                             err)) < 0)
                return r;
        snprintf(text, sizeof text, "%s\n", hn);
        if ((r = write_small("hostname", text, err)) < 0)
                return r;
        /* 127.0.1.1 for the hostname, as Debian's installer writes it: the whole of 127/8 is
         * the sandbox's lo, so a server bound there is reachable by that name. */
        snprintf(text, sizeof text,
                 "127.0.0.1\tlocalhost\n127.0.1.1\t%s\n::1\tlocalhost ip6-localhost "
                 "ip6-loopback\n",
                 hn);
        return write_small("hosts", text, err);
}

const char *rt_identity_lower(void) {
        return ID_ETC;
}

/* Binds the stage's etc/NAME read-only over the new root's, which the lower above made
 * exist. A committed layer may have replaced it with something else (a symlink, a
 * directory, a whiteout); the layers are the sandbox's own, so that is its business and the
 * file is left as they show it. */
static int bind_one(int root, const char *name, struct rtn_error *err) {
        char rel[32], src[64];
        snprintf(rel, sizeof rel, "etc/%s", name);
        snprintf(src, sizeof src, ID_ETC "/%s", name);
        struct open_how how = {.flags = O_PATH | O_CLOEXEC,
                               .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS |
                                          RESOLVE_NO_MAGICLINKS};
        _cleanup_close_ int dst = sys_openat2(root, rel, &how, sizeof how);
        struct stat st;
        if (dst < 0 || fstat(dst, &st) < 0 || !S_ISREG(st.st_mode))
                return 0;
        _cleanup_close_ int tree =
                sys_open_tree(AT_FDCWD, src, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
        struct mount_attr a = {.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
                                           MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC};
        if (tree < 0 || sys_mount_setattr(tree, "", AT_EMPTY_PATH, &a, sizeof a) < 0 ||
            sys_move_mount(tree, "", dst, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) <
                    0)
                return rtn_err(err, errno, "bind the sandbox's /etc/%s", name);
        return 0;
}

int rt_identity_bind(const char *newroot, struct rtn_error *err) {
        _cleanup_close_ int root = open(newroot, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root < 0)
                return rtn_err(err, errno, "open new root");
        int r = bind_one(root, "hostname", err);
        return r < 0 ? r : bind_one(root, "hosts", err);
}
