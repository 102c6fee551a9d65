/* Store work inside a user namespace mapped like a sandbox. An unprivileged caller with a
 * subordinate range owns only part of what its sandboxes write: provisioning runs as inside
 * root (a subordinate id) and apt leaves files only that root may read or remove. A child of
 * rtn that enters a fresh user namespace with the same mapping (newuidmap) and becomes its
 * root has CAP_DAC_OVERRIDE over every mapped id, so it can hash, move and delete such
 * trees. It reports owners as the host numbers (store_set_id_view), so a layer's id is the
 * same as a hash from outside would give, and creates files as the caller (fsuid 1000 =
 * the caller, SECBIT_NO_SETUID_FIXUP keeping the capabilities), so the store stays the
 * caller's. */
#include <errno.h>
#include <fcntl.h>
#include <linux/securebits.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/io.h"
#include "runtime/runtime.h"
#include "store/store.h"

struct userns_result {
        int32_t r;
        struct rtn_error err;
        char out[256] __attribute__((aligned(8)));
};

/* Inside → host, the inverse of rt_idmap_write's SUBID mapping. */
static uint32_t to_host(uint32_t inside, uint32_t sub, uint32_t self) {
        if (inside < 1000)
                return sub + inside;
        if (inside == 1000)
                return self;
        return sub + inside - 1;
}

static const struct rt_idmap *view_map;

/* A single-id mapping maps inside root to the caller alone; anything else is unmapped. */
static uint32_t view_uid(uint32_t id) {
        if (view_map->mode == RT_IDMAP_SINGLE)
                return id == 0 ? (uint32_t)view_map->host_uid : id;
        return to_host(id, view_map->sub_uid, (uint32_t)view_map->host_uid);
}

static uint32_t view_gid(uint32_t id) {
        if (view_map->mode == RT_IDMAP_SINGLE)
                return id == 0 ? (uint32_t)view_map->host_gid : id;
        return to_host(id, view_map->sub_gid, (uint32_t)view_map->host_gid);
}

static __attribute__((noreturn)) void child(const struct rt_idmap *m, int in, int out,
                                            rt_userns_fn fn, void *arg, bool send_fd) {
        struct userns_result res = {0};
        char c = 0;
        if (unshare(CLONE_NEWUSER) < 0 || write(out, &c, 1) != 1 || read(in, &c, 1) != 1)
                _exit(2);
        if (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0 ||
            prctl(PR_SET_SECUREBITS, SECBIT_NO_SETUID_FIXUP | SECBIT_NO_SETUID_FIXUP_LOCKED) < 0) {
                res.r = rtn_err(&res.err, errno, "become root of the helper user namespace");
        } else {
                setfsgid(m->caller_gid_in); /* the caller itself, whatever --user chose */
                setfsuid(m->caller_uid_in);
                view_map = m;
                store_set_id_view(view_uid, view_gid);
                res.r = fn(arg, res.out, sizeof res.out, &res.err);
                fflush(NULL); /* what fn printed: _exit does not */
        }
        /* With send_fd, fn's value is an fd of the helper's that goes with the result. */
        int fd = (int)res.r;
        (void)rtn_send_msg(out, &res, sizeof res, &fd, send_fd && res.r >= 0 ? 1 : 0);
        _exit(0);
}

/* rt_userns_run; *ret_none (when given) says whether the helper failed because no user
 * namespace could be made; with ret_fd, fn returns an fd of the helper's, which comes back
 * (SCM_RIGHTS over the result's socket) as *ret_fd. */
static int run(const struct rt_idmap *m, rt_userns_fn fn, void *arg, char *out, size_t outlen,
               bool *ret_none, int *ret_fd, struct rtn_error *err) {
        int to_child[2], to_parent[2];
        if (pipe2(to_child, O_CLOEXEC) < 0)
                return rtn_err(err, errno, "pipe");
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, to_parent) < 0) {
                close(to_child[0]);
                close(to_child[1]);
                return rtn_err(err, errno, "pipe");
        }
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0) {
                close(to_child[1]);
                close(to_parent[0]);
                child(m, to_child[0], to_parent[1], fn, arg, ret_fd != NULL);
        }
        close(to_child[0]);
        close(to_parent[1]);
        int r = 0;
        char c;
        struct userns_result res;
        if (pid < 0)
                r = rtn_err(err, errno, "fork");
        else if (read(to_parent[0], &c, 1) != 1) {
                r = rtn_errx(err, EPERM, "cannot create a helper user namespace");
                if (ret_none)
                        *ret_none = true;
        } else if ((r = rt_idmap_write(m, pid, err)) == 0 && write(to_child[1], "G", 1) != 1)
                r = rtn_err(err, errno, "start the helper");
        close(to_child[1]);
        int fd = -1;
        size_t nfds = 1;
        if (r == 0 &&
            rtn_recv_msg(to_parent[0], &res, sizeof res, &fd, &nfds) != (ssize_t)sizeof res)
                r = rtn_errx(err, EIO, "the helper user namespace died");
        else if (r == 0 && ret_fd && res.r >= 0 && nfds != 1)
                r = rtn_errx(err, EIO, "the helper user namespace sent no descriptor");
        if (r < 0 && nfds == 1 && fd >= 0)
                fd = rtn_safe_close(fd);
        close(to_parent[0]);
        if (pid > 0)
                while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                        ;
        if (r < 0)
                return r;
        if (res.r < 0 && err)
                *err = res.err;
        if (out && outlen)
                memcpy(out, res.out, outlen < sizeof res.out ? outlen : sizeof res.out);
        if (ret_fd && res.r >= 0) {
                *ret_fd = fd;
                return 0;
        }
        return res.r;
}

int rt_userns_run(const struct rt_idmap *m, rt_userns_fn fn, void *arg, char *out, size_t outlen,
                  struct rtn_error *err) {
        return run(m, fn, arg, out, outlen, NULL, NULL, err);
}

int rt_userns_run_fd(const struct rt_idmap *m, rt_userns_fn fn, void *arg, int *ret_fd,
                     struct rtn_error *err) {
        return run(m, fn, arg, NULL, 0, NULL, ret_fd, err);
}

int rt_userns_as_owner(const struct rt_idmap *m, rt_userns_fn fn, void *arg, char *out,
                       size_t outlen, struct rtn_error *err) {
        /* root works as itself, whichever mapping its sandbox had */
        if (!m || m->mode == RT_IDMAP_ROOT || m->owner)
                return fn(arg, out, outlen, err);
        bool none = false;
        int r = run(m, fn, arg, out, outlen, &none, NULL, err);
        /* Where no user namespace can be made (the Landlock-only mode), a single-id caller
         * still owns every file: it works as itself, refused only by modes it set. */
        if (none && m->mode == RT_IDMAP_SINGLE)
                return fn(arg, out, outlen, err);
        return r;
}

/* ---- store operations that must see every file a sandbox wrote ------------------------ */

struct store_call {
        struct store *st;
        const char *env, *upper, *msg;
        const struct store_commit_opts *commit;
        int64_t expire;
};

static int do_commit(void *arg, char *out, size_t outlen, struct rtn_error *err) {
        struct store_call *a = arg;
        return store_commit_with(a->st, a->env, a->upper, a->commit, out, err);
}

static int do_gc(void *arg, char *out, size_t outlen, struct rtn_error *err) {
        struct store_call *a = arg;
        return store_gc_expire(a->st, a->expire, (struct store_gc_stats *)(void *)out, err);
}

static int do_verify(void *arg, char *out, size_t outlen, struct rtn_error *err) {
        struct store_call *a = arg;
        return store_verify(a->st, (struct store_verify_stats *)(void *)out, err);
}

static int do_export(void *arg, char *out, size_t outlen, struct rtn_error *err) {
        struct store_call *a = arg;
        return store_export(a->st, a->env, a->msg, a->upper, err);
}

int rt_store_commit(const struct rt_idmap *m, struct store *st, const char *env, const char *upper,
                    const struct store_commit_opts *o, char ret_id[STORE_ID_SIZE],
                    struct rtn_error *err) {
        struct store_call a = {.st = st, .env = env, .upper = upper, .commit = o};
        _Static_assert(STORE_ID_SIZE <= 255, "commit id fits the result");
        return rt_userns_as_owner(m, do_commit, &a, ret_id, STORE_ID_SIZE, err);
}

int rt_store_gc(const struct rt_idmap *m, struct store *st, int64_t expire,
                struct store_gc_stats *ret, struct rtn_error *err) {
        struct store_call a = {.st = st, .expire = expire};
        _Static_assert(sizeof *ret <= 255, "gc stats fit the result");
        return rt_userns_as_owner(m, do_gc, &a, (char *)ret, sizeof *ret, err);
}

int rt_store_verify(const struct rt_idmap *m, struct store *st, struct store_verify_stats *ret,
                    struct rtn_error *err) {
        struct store_call a = {.st = st};
        _Static_assert(sizeof *ret <= 255, "verify stats fit the result");
        return rt_userns_as_owner(m, do_verify, &a, (char *)ret, sizeof *ret, err);
}

int rt_store_export(const struct rt_idmap *m, struct store *st, const char *env, const char *name,
                    const char *out_path, struct rtn_error *err) {
        struct store_call a = {.st = st, .env = env, .msg = name, .upper = out_path};
        return rt_userns_as_owner(m, do_export, &a, NULL, 0, err);
}
