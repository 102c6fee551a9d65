/* The sandbox's filesystem, built by the child between clone3 and fexecve (docs/architecture.md,
 * step 6): a private tmpfs stage, a skeleton layer of mountpoints, overlayfs (userxattr) over the
 * base and committed layers with the upper on the stage tmpfs (or in a session dir; with neither
 * layers nor a session dir, the skeleton itself is the root), fresh /proc,
 * a minimal /dev, /tmp, /workspace and user binds; then pivot_root and detach the old root.
 * Every host object was opened by fd in the parent before clone3 and is named here as
 * /proc/self/fd/N, so nothing is looked up by a host path after the stage hides /tmp. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/io.h"
#include "common/sandbox_dirs.h"
#include "common/syscall.h"
#include "runtime/internal.h"
#include "runtime/sandbox/kept.h"
#include "runtime/sandbox/gitconf.h"
#include "runtime/sandbox/wsprep.h"

/* bwrap uses /tmp as its base path too: in our private mount ns, hiding the host's /tmp
 * costs nothing since every host object is already open. */
#define STAGE RT_STAGE
#define SKEL STAGE "/skel"
#define NEWROOT STAGE "/root"
#define SUBMNT STAGE "/m"
#define OPTS_MAX 4096 /* overlay's option string limit is one page */

const char *rt_fdpath(char buf[32], int fd) {
        snprintf(buf, 32, "/proc/self/fd/%d", fd);
        return buf;
}

static int do_mount(const char *src, const char *dst, const char *type, unsigned long flags,
                    const char *data, const char *shown, struct rtn_error *err) {
        if (mount(src, dst, type, flags, data) == 0)
                return 0;
        if (data && *data)
                return rtn_err(err, errno, "mount %s on %s (%s)", type ? type : src, shown, data);
        return rtn_err(err, errno, "mount %s on %s", type ? type : src, shown);
}

static int set_attr(const char *path, uint64_t set, bool recursive, struct rtn_error *err) {
        struct mount_attr a = {.attr_set = set};
        if (sys_mount_setattr(AT_FDCWD, path, recursive ? AT_RECURSIVE : 0, &a, sizeof a) < 0)
                return rtn_err(err, errno, "mount_setattr %s", path);
        return 0;
}

/* mkdir -p below an existing base directory; mode for created dirs. The leaf is tried first,
 * then back up to the deepest ancestor there is and down again: a directory whose parents
 * exist (most of a start's) costs one system call, not one per component of its path
 * (tests/integration/exec_coldpath.sh). */
static int mkdir_p(const char *path, mode_t mode) {
        if (mkdir(path, mode) == 0 || errno == EEXIST)
                return 0;
        if (errno != ENOENT)
                return negative_errno();
        char buf[4096];
        size_t n = strlen(path);
        if (n >= sizeof buf)
                return -ENAMETOOLONG;
        memcpy(buf, path, n + 1);
        char *cut = buf + n;
        for (;;) {
                char *slash = memrchr(buf, '/', (size_t)(cut - buf));
                if (!slash || slash == buf)
                        return -ENOENT; /* the base itself is missing */
                *slash = '\0';
                cut = slash;
                if (mkdir(buf, mode) == 0 || errno == EEXIST)
                        break;
                if (errno != ENOENT)
                        return negative_errno();
        }
        while (cut < buf + n) { /* each cut back is a NUL: one component more per round */
                *cut = '/';
                cut += strlen(cut);
                if (mkdir(buf, mode) < 0 && errno != EEXIST)
                        return negative_errno();
        }
        return 0;
}

static int mkdir_owned(const char *path, mode_t mode, uid_t uid, gid_t gid, struct rtn_error *err) {
        int r = mkdir_p(path, 0755);
        if (r < 0)
                return rtn_err(err, r, "mkdir %s", path);
        if (chmod(path, mode) < 0 || chown(path, uid, gid) < 0)
                return rtn_err(err, errno, "set owner of %s", path);
        return 0;
}

/* A bind's mount point: a directory, or for a file bind an empty file in its directory. */
static int make_mountpoint(char *path, bool file) {
        if (!file)
                return mkdir_p(path, 0755);
        char *slash = strrchr(path, '/');
        *slash = '\0';
        int r = slash == path ? 0 : mkdir_p(path, 0755);
        *slash = '/';
        if (r < 0)
                return r;
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0)
                return errno == EEXIST ? 0 : negative_errno();
        close(fd);
        return 0;
}

static const char *const skel_dirs[] = {RTN_SKELETON_DIRS(RTN_DIR_BARE)};

static bool under_workspace(const char *dst) {
        return strncmp(dst, "/workspace", 10) == 0 && (dst[10] == '\0' || dst[10] == '/');
}

static int build_skel(const struct rt_plan *p, struct rtn_error *err) {
        char path[4200];
        int r;
        for (size_t i = 0; i < p->nhost; i++) {
                snprintf(path, sizeof path, SKEL "/%s", p->host[i].name);
                if (p->host[i].fd >= 0)
                        r = mkdir(path, 0755);
                else
                        r = symlink(p->host[i].link, path);
                if (r < 0)
                        return rtn_err(err, errno, "create skeleton %s", path);
        }
        for (size_t i = 0; i < sizeof skel_dirs / sizeof skel_dirs[0]; i++) {
                snprintf(path, sizeof path, SKEL "/%s", skel_dirs[i]);
                if (mkdir(path, 0755) < 0 && errno != EEXIST)
                        return rtn_err(err, errno, "create skeleton %s", path);
        }
        if (p->spec->ca_pem && mkdir(SKEL "/run/rtn", 0755) < 0)
                return rtn_err(err, errno, "create skeleton /run/rtn");
        if (p->spec->ca_pem && (r = rt_identity_ca_bundle(p, SKEL RT_CA_BUNDLE, err)) < 0)
                return r;
        const struct rt_idmap *m = p->idmap;
        if (chmod(SKEL "/root", 0700) < 0 || chmod(SKEL "/var/tmp", 01777) < 0)
                return rtn_err(err, errno, "chmod skeleton");
        if ((r = mkdir_owned(SKEL "/workspace", 0755, m->agent_uid, m->agent_gid, err)) < 0)
                return r;
        snprintf(path, sizeof path, SKEL "%s", p->home);
        if ((r = mkdir_owned(path, 0700, m->agent_uid, m->agent_gid, err)) < 0)
                return r;
        for (size_t i = 0; i < p->spec->nbinds; i++) {
                const char *dst = p->spec->binds[i].dst;
                if ((p->workspace_fd >= 0 || p->workspace_tree >= 0) && under_workspace(dst))
                        continue; /* created in the bound host dir at bind time */
                snprintf(path, sizeof path, SKEL "%s", dst);
                if ((r = make_mountpoint(path, p->spec->binds[i].file)) < 0)
                        return rtn_err(err, r, "create mountpoint %s", dst);
        }
        return 0;
}

/* Appends "/proc/self/fd/L/sub" for every layer that has sub (sub "" = the layer itself). */
static int add_layers(const struct rt_plan *p, const char *sub, char *opts, size_t cap,
                      size_t *off) {
        for (size_t i = 0; i < p->nlayers; i++) {
                if (*sub) {
                        struct stat st;
                        if (fstatat(p->layer_fds[i], sub, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
                            !S_ISDIR(st.st_mode))
                                continue;
                }
                int n = snprintf(opts + *off, cap - *off, "/proc/self/fd/%d%s%s:", p->layer_fds[i],
                                 *sub ? "/" : "", sub);
                if (n < 0 || (size_t)n >= cap - *off)
                        return -E2BIG;
                *off += (size_t)n;
        }
        return 0;
}

/* overlay on dst with the new mount API, one fsconfig per layer: lowerdir+ (Linux 6.8) lifts
 * the one-page limit of the option string, for deep layer stacks. */
static int mount_overlay_fsconfig(const struct rt_plan *p, const char *sub, const char *bottom,
                                  const char *upper, const char *work, const char *dst,
                                  const char *shown, struct rtn_error *err) {
        _cleanup_close_ int fs = sys_fsopen("overlay", FSOPEN_CLOEXEC);
        if (fs < 0)
                return rtn_err(err, errno, "fsopen overlay for %s", shown);
        char path[4200];
        for (size_t i = 0; i < p->nlayers; i++) {
                struct stat st;
                if (*sub && (fstatat(p->layer_fds[i], sub, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
                             !S_ISDIR(st.st_mode)))
                        continue;
                snprintf(path, sizeof path, "/proc/self/fd/%d%s%s", p->layer_fds[i],
                         *sub ? "/" : "", sub);
                if (sys_fsconfig(fs, FSCONFIG_SET_STRING, "lowerdir+", path, 0) < 0)
                        return rtn_err(err, errno,
                                       "overlay lowerdir+ %s for %s (%zu layers need "
                                       "Linux 6.8)",
                                       path, shown, p->nlayers);
        }
        char bot[256];
        snprintf(bot, sizeof bot, "%s", bottom);
        for (char *tok = strtok(bot, ":"); tok; tok = strtok(NULL, ":"))
                if (sys_fsconfig(fs, FSCONFIG_SET_STRING, "lowerdir+", tok, 0) < 0)
                        return rtn_err(err, errno, "overlay lowerdir+ %s for %s", tok, shown);
        if (sys_fsconfig(fs, FSCONFIG_SET_STRING, "upperdir", upper, 0) < 0 ||
            sys_fsconfig(fs, FSCONFIG_SET_STRING, "workdir", work, 0) < 0 ||
            sys_fsconfig(fs, FSCONFIG_SET_FLAG, "userxattr", NULL, 0) < 0 ||
            sys_fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
                return rtn_err(err, errno, "configure overlay for %s", shown);
        _cleanup_close_ int mnt =
                sys_fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
        if (mnt < 0)
                return rtn_err(err, errno, "fsmount overlay for %s", shown);
        if (sys_move_mount(mnt, "", AT_FDCWD, dst, MOVE_MOUNT_F_EMPTY_PATH) < 0)
                return rtn_err(err, errno, "attach overlay on %s", shown);
        return 0;
}

/* overlay on dst: layers' sub, then the bottom lowers, over upper/sub and work/wname. */
static int mount_overlay(const struct rt_plan *p, const char *sub, const char *bottom,
                         const char *upper, const char *work, const char *dst, const char *shown,
                         struct rtn_error *err) {
        char opts[OPTS_MAX];
        size_t off = 0;
        if (mkdir_p(upper, 0755) < 0 || mkdir_p(work, 0700) < 0)
                return rtn_err(err, errno, "create upper/work dirs for %s", shown);
        int n = snprintf(opts, sizeof opts, "lowerdir=");
        off = (size_t)n;
        if (add_layers(p, sub, opts, sizeof opts, &off) < 0)
                return mount_overlay_fsconfig(p, sub, bottom, upper, work, dst, shown, err);
        n = snprintf(opts + off, sizeof opts - off, "%s,upperdir=%s,workdir=%s,userxattr", bottom,
                     upper, work);
        if (n < 0 || (size_t)n >= sizeof opts - off)
                return mount_overlay_fsconfig(p, sub, bottom, upper, work, dst, shown, err);
        return do_mount("overlay", dst, "overlay", MS_NOSUID | MS_NODEV, opts, shown, err);
}

/* A kept upper (spec.upper_keep): a tmpfs of its own, so it can outlive this sandbox's
 * mount namespace. A new one is made here (its user namespace is ours, so a tmpfs needs no
 * privilege of rtn's) and its detached mount is sent to rtn, which keeps it by that fd; a
 * later sandbox of the same session gets the fd in spec.upper_fs. Either way a clone of it
 * is attached on the stage: attaching the kept mount itself would tie it to this namespace
 * and end it with it. nr_inodes bounds the files as size bounds the bytes: a copy to disk
 * costs each file an inode and maybe a block there. */
/* upper/ and work/ on a kept upper's tmpfs: made with it, and again after a commit emptied it
 * (runtime/session/session.c keeps the tmpfs while an overlay workspace's changes are on it). */
static int upper_dirs(const struct rt_spec *spec, const struct rt_idmap *m, int mnt,
                      struct rtn_error *err) {
        if (mkdirat(mnt, "work", 0700) < 0 && errno != EEXIST)
                return rtn_err(err, errno, "create work/");
        if (spec->tmp_kept && mkdirat(mnt, RT_KEPT_TMP, 0700) == 0 &&
            fchmodat(mnt, RT_KEPT_TMP, 01777, 0) < 0)
                return rtn_err(err, errno, "create " RT_KEPT_TMP "/");
        if (mkdirat(mnt, "upper", 0755) < 0)
                return errno == EEXIST ? 0 : rtn_err(err, errno, "create upper/");
        /* The upper's top becomes a layer's top, whose owner its id hashes: the caller's, as
         * for an upper rtn makes on disk. With a subordinate range the caller is 1000 here
         * (the default agent's id, whatever --user chose), not this namespace's root. */
        if (m->mode == RT_IDMAP_SUBID &&
            fchownat(mnt, "upper", m->caller_uid_in, m->caller_gid_in, AT_SYMLINK_NOFOLLOW) < 0)
                return rtn_err(err, errno, "chown upper/");
        return 0;
}

int rt_upper_fs_new(const struct rt_spec *spec, const struct rt_idmap *m, struct rtn_error *err) {
        uint64_t room = spec->upper_room ? spec->upper_room : spec->upper_bytes;
        char size[24], inodes[24];
        snprintf(size, sizeof size, "%llu", (unsigned long long)room);
        snprintf(inodes, sizeof inodes, "%llu", (unsigned long long)(room / 4096 + 1024));
        _cleanup_close_ int fs = sys_fsopen("tmpfs", FSOPEN_CLOEXEC);
        if (fs < 0 || sys_fsconfig(fs, FSCONFIG_SET_STRING, "size", size, 0) < 0 ||
            sys_fsconfig(fs, FSCONFIG_SET_STRING, "nr_inodes", inodes, 0) < 0 ||
            sys_fsconfig(fs, FSCONFIG_SET_STRING, "mode", "0755", 0) < 0 ||
            sys_fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
                return rtn_err(err, errno, "create the upper's tmpfs (size=%s)", size);
        _cleanup_close_ int mnt =
                sys_fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
        if (mnt < 0)
                return rtn_err(err, errno, "mount the upper's tmpfs");
        int r = upper_dirs(spec, m, mnt, err);
        if (r < 0)
                return r;
        return TAKE_FD(mnt);
}

static int mount_kept_upper(const struct rt_plan *p, struct rtn_error *err) {
        _cleanup_close_ int made = -1;
        int src = p->spec->upper_fs;
        if (src < 0 && (src = made = rt_upper_fs_new(p->spec, p->idmap, err)) < 0)
                return made;
        int r = made < 0 ? upper_dirs(p->spec, p->idmap, src, err) : 0;
        if (r < 0)
                return r;
        _cleanup_close_ int tree =
                sys_open_tree(src, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
        if (tree < 0)
                return rtn_err(err, errno, "clone the kept upper");
        if (mkdir(STAGE "/u", 0755) < 0 ||
            sys_move_mount(tree, "", AT_FDCWD, STAGE "/u", MOVE_MOUNT_F_EMPTY_PATH) < 0)
                return rtn_err(err, errno, "attach the kept upper");
        if (made >= 0) {
                struct rt_upper_msg m = {.tag = RT_UPPER_TAG};
                ssize_t n = rtn_send_msg(p->ctl_fd, &m, sizeof m, &made, 1);
                if (n < 0)
                        return rtn_err(err, (int)n, "hand the upper to rtn");
        }
        return 0;
}

/* A host dir with mounts over entries in it that the kernel locked (a container runtime's
 * /etc/hosts, /etc/resolv.conf, /etc/hostname; a volume below /usr) cannot be an overlay's
 * lower layer (fs/namespace.c, clone_private_mount: EINVAL), nor be bound without them. It
 * is bound with them instead, recursively and read-only: agent commands could not write it
 * anyway (Landlock gives / read and execute only) and provisioning cannot change it, so the
 * layers committed there have nothing in it and stack on the bound dir (layers_have); a
 * layer that does (made where the dir could be overlaid) cannot be stacked on it, which is
 * refused rather than hidden. rtn says so (rt_setup_warning; docs/containers.md). */
/* Whether a committed layer has anything in the host dir NAME: an entry other than an empty
 * directory. Nothing there (the sandbox could not write the dir: it was bound read-only when
 * the layer was made) stacks on the bound dir as it is. */
static bool layers_have(const struct rt_plan *p, const char *name) {
        for (size_t i = 0; i < p->nlayers; i++) {
                struct stat st;
                if (fstatat(p->layer_fds[i], name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue;
                if (!S_ISDIR(st.st_mode))
                        return true;
                /* getdents64, not readdir: the child may not malloc. */
                _cleanup_close_ int d =
                        openat(p->layer_fds[i], name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                char buf[1024] __attribute__((aligned(8)));
                ssize_t n;
                if (d < 0)
                        return true;
                while ((n = getdents64(d, buf, sizeof buf)) > 0)
                        for (ssize_t off = 0; off < n;) {
                                const struct dirent64 *e = (const struct dirent64 *)(buf + off);
                                if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
                                        return true;
                                off += e->d_reclen;
                        }
                if (n < 0)
                        return true;
        }
        return false;
}

static int bind_locked_dir(const struct rt_plan *p, const struct rt_hostdir *h, const char *dst,
                           const char *shown, struct rtn_error *err) {
        if (layers_have(p, h->name))
                return rtn_errx(err, EINVAL,
                                "%s has the container's mounts over files in it, so the "
                                "environment's committed layers cannot be stacked on it; use "
                                "another --env or a --rootfs",
                                shown);
        *err = (struct rtn_error){0};
        _cleanup_close_ int tree = sys_open_tree(
                h->fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_EMPTY_PATH);
        if (tree < 0)
                return rtn_err(err, errno, "clone %s with the mounts in it", shown);
        struct mount_attr a = {.attr_set =
                                       MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV};
        if (sys_mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &a, sizeof a) < 0)
                return rtn_err(err, errno, "make %s read-only", shown);
        if (sys_move_mount(tree, "", AT_FDCWD, dst, MOVE_MOUNT_F_EMPTY_PATH) < 0)
                return rtn_err(err, errno, "attach %s", shown);
        if (p->protect) {
                struct rt_setup_report *s = &p->protect->setup;
                size_t len = strlen(s->ro_dirs);
                snprintf(s->ro_dirs + len, sizeof s->ro_dirs - len, "%s%s", len ? " " : "", shown);
        }
        return 0;
}

/* A bind's mount point below a host dir (--bind SRC:/usr/local/lib/x) is made in the skeleton
 * (build_skel): the host dir's owner is not mapped, so nothing could make it in the overlay.
 * The skeleton's dir then lies between the layers and the host's, holding only that. */
static bool binds_below(const struct rt_plan *p, const char *name) {
        size_t n = strlen(name);
        for (size_t i = 0; i < p->spec->nbinds; i++) {
                const char *d = p->spec->binds[i].dst;
                if (d[0] == '/' && !strncmp(d + 1, name, n) && d[n + 1] == '/')
                        return true;
        }
        return false;
}

static int mount_root(const struct rt_plan *p, struct rtn_error *err) {
        char upper[40], work[64], bottom[160], skel[64], dst[64], fdp[32];
        const char *wbase = STAGE "/work";
        snprintf(upper, sizeof upper, STAGE "/upper");
        int r;
        if (p->spec->upper_keep) {
                if ((r = mount_kept_upper(p, err)) < 0)
                        return r;
                snprintf(upper, sizeof upper, STAGE "/u/upper");
                wbase = STAGE "/u/work";
        }
        /* No committed layer, no rootfs and no kept upper (a plain `rtn exec`): the root
         * needs no overlay of its own. The skeleton, on the stage tmpfs that dies with the
         * sandbox, is writable as it is; a bind of it is the new root (pivot_root wants a
         * mount point, and it keeps the stage's nosuid,nodev), and the host dirs' overlays go
         * straight onto it. */
        bool plain = p->nlayers == 0 && !p->spec->upper_keep && p->base_fd < 0;
        if (plain && (r = do_mount(SKEL, NEWROOT, NULL, MS_BIND, NULL, "/", err)) < 0)
                return r;
        /* Host base: one overlay per allowlisted dir, mounted before the root overlay (whose
         * upper contains theirs; mounting it first would make the kernel warn that the upper
         * is in use) and moved into place after it. */
        for (size_t i = 0; i < p->nhost; i++) {
                const struct rt_hostdir *h = &p->host[i];
                if (h->fd < 0)
                        continue;
                char u[96], w[96], shown[32];
                snprintf(u, sizeof u, "%s/%s", upper, h->name);
                snprintf(w, sizeof w, "%s/%s", wbase, h->name);
                snprintf(dst, sizeof dst, "%s/%s", plain ? NEWROOT : SUBMNT, h->name);
                snprintf(shown, sizeof shown, "/%s", h->name);
                if (!plain && mkdir_p(dst, 0755) < 0)
                        return rtn_err(err, errno, "mkdir %s", dst);
                /* The sandbox's identity files sit between the layers and the host's /etc. */
                skel[0] = '\0';
                if (binds_below(p, h->name))
                        snprintf(skel, sizeof skel, SKEL "/%s:", h->name);
                if (strcmp(h->name, "etc") == 0)
                        snprintf(bottom, sizeof bottom, "%s%s:%s", skel, rt_identity_lower(),
                                 rt_fdpath(fdp, h->fd));
                else
                        snprintf(bottom, sizeof bottom, "%s%s", skel, rt_fdpath(fdp, h->fd));
                r = mount_overlay(p, h->name, bottom, u, w, dst, shown, err);
                if (r == -EINVAL)
                        r = bind_locked_dir(p, h, dst, shown, err);
                if (r < 0)
                        return r;
        }
        if (plain)
                return 0;
        if (p->base_fd >= 0)
                snprintf(bottom, sizeof bottom, SKEL ":" RT_STAGE "/id:%s",
                         rt_fdpath(fdp, p->base_fd));
        else
                snprintf(bottom, sizeof bottom, SKEL);
        snprintf(work, sizeof work, "%s/root", wbase);
        if ((r = mount_overlay(p, "", bottom, upper, work, NEWROOT, "/", err)) < 0)
                return r;
        for (size_t i = 0; i < p->nhost; i++) {
                if (p->host[i].fd < 0)
                        continue;
                char from[64], to[64];
                snprintf(from, sizeof from, SUBMNT "/%s", p->host[i].name);
                snprintf(to, sizeof to, NEWROOT "/%s", p->host[i].name);
                if ((r = do_mount(from, to, NULL, MS_MOVE, NULL, to + strlen(NEWROOT), err)) < 0)
                        return r;
        }
        return 0;
}

/* A fresh procfs of the sandbox's pid namespace. The kernel refuses one in a user namespace
 * unless the procfs already mounted is fully visible (fs/namespace.c, mount_too_revealing):
 * container runtimes mask paths of theirs (/proc/kcore, /proc/keys... under bind mounts), so
 * in a default container it fails with EPERM. Then the host's /proc is bound instead, its
 * masks and read-only parts with it (MS_REC; the kernel locks them): commands see the
 * host's processes, which they can neither signal nor trace (another pid namespace,
 * seccomp), and the blocked-call report may miss the names of callers (rtn-init reads them
 * from /proc by its own pids). rtn says so; docs/containers.md has what each mode costs. */
static int mount_proc(const struct rt_plan *p, struct rtn_error *err) {
        int r = do_mount("proc", NEWROOT "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL,
                         "/proc", err);
        bool fresh = r == 0;
        if (r == -EPERM || r == -EACCES) {
                *err = (struct rtn_error){0};
                r = do_mount("/proc", NEWROOT "/proc", NULL, MS_BIND | MS_REC, NULL, "/proc", err);
                if (r == 0 && p->protect)
                        p->protect->setup.proc = RT_PROC_HOST;
        }
        /* The namespaces' sysctls through the sandbox's own procfs, whose dentries go with it
         * (runtime/sandbox/limits.c); through the host's where it had to be bound */
        const char *proc = fresh ? NEWROOT "/proc" : "/proc";
        if (r < 0 || (r = rt_child_pid_max(p, proc, err)) < 0 ||
            (r = rt_child_budgets(p, proc, err)) < 0)
                return r;
        /* As bwrap does: kernel knobs stay read-only even where the userns would allow a write
         * (net sysctls of our own netns are harmless, but nothing needs them). */
        static const char *const ro[] = {"sys", "sysrq-trigger", "irq", "bus"};
        for (size_t i = 0; i < sizeof ro / sizeof ro[0]; i++) {
                char path[64];
                snprintf(path, sizeof path, NEWROOT "/proc/%s", ro[i]);
                if (access(path, F_OK) < 0)
                        continue;
                if ((r = do_mount(path, path, NULL, MS_BIND | MS_REC, NULL, path, err)) < 0 ||
                    (r = set_attr(path, MOUNT_ATTR_RDONLY, true, err)) < 0)
                        return r;
        }
        return 0;
}

static int mount_dev(struct rtn_error *err) {
        static const char *const nodes[] = {"null", "zero", "full", "random", "urandom", "tty"};
        int r = do_mount("tmpfs", NEWROOT "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC,
                         "mode=0755,size=64k,nr_inodes=64", "/dev", err);
        if (r < 0)
                return r;
        for (size_t i = 0; i < sizeof nodes / sizeof nodes[0]; i++) {
                char src[32], dst[64];
                snprintf(src, sizeof src, "/dev/%s", nodes[i]);
                snprintf(dst, sizeof dst, NEWROOT "/dev/%s", nodes[i]);
                _cleanup_close_ int fd =
                        open(dst, O_CREAT | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0666);
                if (fd < 0)
                        return rtn_err(err, errno, "create /dev/%s", nodes[i]);
                if ((r = do_mount(src, dst, NULL, MS_BIND, NULL, src, err)) < 0)
                        return r;
        }
        if (mkdir(NEWROOT "/dev/pts", 0755) < 0 || mkdir(NEWROOT "/dev/shm", 01777) < 0)
                return rtn_err(err, errno, "mkdir /dev/pts, /dev/shm");
        if ((r = do_mount("devpts", NEWROOT "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC,
                          "newinstance,ptmxmode=0666,mode=0620", "/dev/pts", err)) < 0)
                return r;
        if ((r = do_mount("tmpfs", NEWROOT "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV,
                          "mode=1777,size=64m", "/dev/shm", err)) < 0)
                return r;
        static const char *const links[][2] = {{"pts/ptmx", "ptmx"},
                                               {"/proc/self/fd", "fd"},
                                               {"/proc/self/fd/0", "stdin"},
                                               {"/proc/self/fd/1", "stdout"},
                                               {"/proc/self/fd/2", "stderr"}};
        for (size_t i = 0; i < sizeof links / sizeof links[0]; i++) {
                char dst[64];
                snprintf(dst, sizeof dst, NEWROOT "/dev/%s", links[i][1]);
                if (symlink(links[i][0], dst) < 0)
                        return rtn_err(err, errno, "symlink /dev/%s", links[i][1]);
        }
        return set_attr(NEWROOT "/dev", MOUNT_ATTR_RDONLY, false, err);
}

/* The mountpoint of a bind, resolved inside the new root without following any symlink: a
 * workspace is the agent's, and a symlink it planted there in an earlier run (sub -> /etc,
 * sub -> ../../etc) must not redirect the next sandbox's bind onto a system dir or, through
 * mkdir, onto a host path. Returns an O_PATH fd to mount onto via /proc/self/fd. */
static int open_bind_dst(const struct rt_plan *p, const char *dst, bool file,
                         struct rtn_error *err) {
        _cleanup_close_ int root = open(NEWROOT, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root < 0)
                return rtn_err(err, errno, "open new root");
        struct open_how how = {.flags = O_PATH | O_CLOEXEC,
                               .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS |
                                          RESOLVE_NO_MAGICLINKS};
        int fd = sys_openat2(root, dst + 1, &how, sizeof how);
        if (fd < 0 && errno == ENOENT) {
                /* ENOENT, not ELOOP: no symlink on the existing prefix, so mkdir -p stays
                 * inside; nothing else runs in the sandbox yet to race with it. */
                char path[4200];
                snprintf(path, sizeof path, NEWROOT "%s", dst);
                /* Root's idmapped workspace maps only its owner, as the agent: create the
                 * mountpoint as the agent, or the kernel refuses an unmapped owner
                 * (EOVERFLOW). Elsewhere the mountpoint is ours (inside root). */
                bool as_agent = p->workspace_tree >= 0 && under_workspace(dst);
                if (as_agent) {
                        setfsgid(p->idmap->agent_gid);
                        setfsuid(p->idmap->agent_uid);
                }
                int r = make_mountpoint(path, file);
                if (as_agent) {
                        setfsuid(0);
                        setfsgid(0);
                }
                if (r < 0)
                        return rtn_err(err, r, "create mountpoint %s", dst);
                fd = sys_openat2(root, dst + 1, &how, sizeof how);
        }
        if (fd < 0 && errno == ELOOP)
                return rtn_errx(err, ELOOP,
                                "bind destination %s: a symlink is on the path "
                                "(refused)",
                                dst);
        if (fd < 0)
                return rtn_err(err, errno, "bind destination %s", dst);
        struct stat st;
        if (fstat(fd, &st) < 0 || S_ISDIR(st.st_mode) == file) {
                close(fd);
                return rtn_errx(err, file ? EISDIR : ENOTDIR,
                                "bind destination %s: the source is a %s, the mount point is not",
                                dst, file ? "file" : "directory");
        }
        return fd;
}

/* Clone the source's mount tree, set its flags while detached, attach it onto the fd of the
 * checked mountpoint (open_tree(2), mount_setattr(2), move_mount(2)). */
static int bind_onto(int src_fd, int dst_fd, uint64_t attrs, const char *shown,
                     struct rtn_error *err) {
        _cleanup_close_ int tree = sys_open_tree(
                src_fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_EMPTY_PATH);
        if (tree < 0)
                return rtn_err(err, errno, "clone bind source for %s", shown);
        struct mount_attr a = {.attr_set = attrs};
        if (sys_mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &a, sizeof a) < 0)
                return rtn_err(err, errno, "mount_setattr bind %s", shown);
        if (sys_move_mount(tree, "", dst_fd, "",
                           MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
                return rtn_err(err, errno, "attach bind on %s", shown);
        return 0;
}

/* The next slot of the report rtn reads (env_status), or a scratch one. */
static struct rt_protect_bind *protect_slot(const struct rt_plan *p) {
        static struct rt_protect_bind scratch;
        if (!p->protect || p->protect->n >= sizeof p->protect->binds / sizeof p->protect->binds[0])
                return &scratch;
        return &p->protect->binds[p->protect->n++];
}

/* The overlay workspace: the host dir (root's idmapped clone of it, attached on the stage
 * first, so the agent owns what the owner of the dir owns) is the lowest layer, with the
 * changes earlier `rtn exec --keep` runs left (ws_lower_fd) over it, read-only; the agent's
 * writes go to ws/upper on the kept upper's tmpfs (runtime/session/wsover.h), bounded with the rest
 * of its changes, or, for a sandbox without one, to the stage tmpfs, gone with the sandbox.
 * Committed layers are not below it: /workspace shows the host dir, as a live bind does. The
 * upper's top is the overlay's root, so it has the mode of the layer below and belongs to the
 * agent. */
static int mount_ws_overlay(const struct rt_plan *p, struct rtn_error *err) {
        char host[64], lower[160], upper[64], work[64], opts[320], fdp[32];
        const char *base = p->spec->upper_keep ? STAGE "/u/" RT_WS_DIR : STAGE;
        struct stat st;
        int r;
        if (p->workspace_tree >= 0) {
                if (mkdir(STAGE "/wslower", 0755) < 0 ||
                    sys_move_mount(p->workspace_tree, "", AT_FDCWD, STAGE "/wslower",
                                   MOVE_MOUNT_F_EMPTY_PATH) < 0)
                        return rtn_err(err, errno, "attach idmapped workspace");
                snprintf(host, sizeof host, STAGE "/wslower");
        } else {
                rt_fdpath(host, p->workspace_fd);
        }
        if (p->ws_lower_fd >= 0)
                snprintf(lower, sizeof lower, "%s:%s", rt_fdpath(fdp, p->ws_lower_fd), host);
        else
                snprintf(lower, sizeof lower, "%s", host);
        snprintf(upper, sizeof upper, "%s/%s", base, p->spec->upper_keep ? "upper" : "wsupper");
        snprintf(work, sizeof work, "%s/%s", base, p->spec->upper_keep ? "work" : "wswork");
        if (p->spec->upper_keep && mkdir(base, 0755) < 0 && errno != EEXIST)
                return rtn_err(err, errno, "create %s", base);
        if (access(upper, F_OK) < 0) { /* a session's later sandboxes find it made */
                if (stat(p->ws_lower_fd >= 0 ? fdp : host, &st) < 0)
                        return rtn_err(err, errno, "stat the workspace");
                if ((r = mkdir_owned(upper, st.st_mode & 0777, p->idmap->agent_uid,
                                     p->idmap->agent_gid, err)) < 0)
                        return r;
        }
        if (mkdir(work, 0700) < 0 && errno != EEXIST)
                return rtn_err(err, errno, "create %s", work);
        snprintf(opts, sizeof opts, "lowerdir=%s,upperdir=%s,workdir=%s,userxattr", lower, upper,
                 work);
        return do_mount("overlay", NEWROOT "/workspace", "overlay", MS_NOSUID | MS_NODEV, opts,
                        "/workspace", err);
}

static int mount_workspace(const struct rt_plan *p, int *stand_in, struct rtn_error *err) {
        char fdp[32];
        int r;
        /* An overlay workspace needs no protection inside: nothing reaches the host but
         * through rt_ws_apply, which refuses these files. */
        if ((p->workspace_tree >= 0 || p->workspace_fd >= 0) &&
            p->spec->workspace_mode == RT_WS_OVERLAY)
                return mount_ws_overlay(p, err);
        if (p->workspace_tree >= 0) {
                if (sys_move_mount(p->workspace_tree, "", AT_FDCWD, NEWROOT "/workspace",
                                   MOVE_MOUNT_F_EMPTY_PATH) < 0)
                        return rtn_err(err, errno, "attach idmapped workspace");
        } else if (p->workspace_fd >= 0) {
                if ((r = do_mount(rt_fdpath(fdp, p->workspace_fd), NEWROOT "/workspace", NULL,
                                  MS_BIND | MS_REC, NULL, "/workspace", err)) < 0 ||
                    (r = set_attr(NEWROOT "/workspace", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, true,
                                  err)) < 0)
                        return r;
        } else {
                return 0;
        }
        return rt_protect_bind(NEWROOT "/workspace", "/workspace", p->listed ? &p->listed[0] : NULL,
                               stand_in, protect_slot(p), err);
}

static int mount_bind(const struct rt_plan *p, size_t i, int *stand_in, struct rtn_error *err) {
        const struct rt_bind *b = &p->spec->binds[i];
        char dst[4200];
        int r;
        _cleanup_close_ int dfd = open_bind_dst(p, b->dst, b->file, err);
        if (dfd < 0) /* name the bind: a mount point the agent cannot make is the user's */
                return rtn_err_wrap(err, "bind %s", b->src);
        uint64_t attrs = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
        if (!b->rw)
                attrs |= MOUNT_ATTR_RDONLY;
        if (p->bind_trees[i] >= 0) {
                /* root's rw bind: already cloned and idmapped in rtn's namespace */
                struct mount_attr a = {.attr_set = attrs};
                if (sys_mount_setattr(p->bind_trees[i], "", AT_EMPTY_PATH | AT_RECURSIVE, &a,
                                      sizeof a) < 0 ||
                    sys_move_mount(p->bind_trees[i], "", dfd, "",
                                   MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
                        return rtn_err(err, errno, "attach idmapped bind %s", b->dst);
        } else if ((r = bind_onto(p->bind_fds[i], dfd, attrs, b->dst, err)) < 0) {
                return r;
        }
        snprintf(dst, sizeof dst, NEWROOT "%s", b->dst);
        return b->rw ? rt_protect_bind(dst, b->dst, p->listed ? &p->listed[1 + i] : NULL, stand_in,
                                       protect_slot(p), err)
                     : 0;
}

static int mount_binds(const struct rt_plan *p, struct rtn_error *err) {
        _cleanup_close_ int stand_in = -1;
        int r = mount_workspace(p, &stand_in, err);
        for (size_t i = 0; r >= 0 && i < p->spec->nbinds; i++)
                r = mount_bind(p, i, &stand_in, err);
        return r;
}

static int pivot(struct rtn_error *err) {
        if (chdir(NEWROOT) < 0)
                return rtn_err(err, errno, "chdir new root");
        /* pivot_root(".", ".") stacks the old root on top of the new one; unmounting "."
         * then detaches it (pivot_root(2), "NOTES"), without needing a put_old directory. */
        if (sys_pivot_root(".", ".") < 0)
                return rtn_err(err, errno, "pivot_root");
        if (umount2(".", MNT_DETACH) < 0)
                return rtn_err(err, errno, "detach old root");
        if (chdir("/") < 0)
                return rtn_err(err, errno, "chdir /");
        return 0;
}

/* /tmp: a tmpfs of upper_bytes of its own, or the kept tmpfs's tmp/ (spec.tmp_kept), which
 * that tmpfs's nosuid and nodev cover and its size bounds with the upper. */
static int mount_tmp(const struct rt_plan *p, struct rtn_error *err) {
        if (p->spec->upper_keep && p->spec->tmp_kept)
                return do_mount(STAGE "/u/" RT_KEPT_TMP, NEWROOT "/tmp", NULL, MS_BIND, NULL,
                                "/tmp", err);
        char opts[64];
        snprintf(opts, sizeof opts, "mode=1777,size=%llu",
                 (unsigned long long)p->spec->upper_bytes);
        return do_mount("tmpfs", NEWROOT "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, opts, "/tmp", err);
}

int rt_child_build_root(const struct rt_plan *p, struct rtn_error *err) {
        int r;
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                return rtn_err(err, errno, "make / private");
        char opts[64];
        unsigned long long size =
                p->spec->upper_keep ? 16u << 20 : p->spec->upper_bytes + (1u << 20);
        snprintf(opts, sizeof opts, "mode=0755,size=%llu", size);
        if ((r = do_mount("tmpfs", STAGE, "tmpfs", MS_NOSUID | MS_NODEV, opts, "stage", err)) < 0)
                return r;
        if (mkdir(SKEL, 0755) < 0 || mkdir(NEWROOT, 0755) < 0 || mkdir(STAGE "/work", 0700) < 0)
                return rtn_err(err, errno, "create stage dirs");
        if ((r = rt_identity_make(p, err)) < 0 || (r = build_skel(p, err)) < 0 ||
            (r = mount_root(p, err)) < 0 || (r = rt_identity_bind(NEWROOT, err)) < 0 ||
            (r = mount_proc(p, err)) < 0 || (r = mount_dev(err)) < 0)
                return r;
        if ((r = mount_tmp(p, err)) < 0 || (r = mount_binds(p, err)) < 0)
                return r;
        return pivot(err);
}
