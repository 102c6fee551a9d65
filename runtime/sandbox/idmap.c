/* uid/gid maps for the sandbox's user namespace. Three cases (docs/architecture.md):
 * - unprivileged, no subordinate range: a single mapping, inside 0 <-> the caller, with
 *   setgroups denied first (user_namespaces(7); CVE-2014-8989 is why an unprivileged writer
 *   must deny setgroups before writing gid_map). Agent commands run as inside 0 with every
 *   capability stripped.
 * - unprivileged with an /etc/subuid and /etc/subgid range of >= 65536 and newuidmap /
 *   newgidmap installed: 65536 ids, inside 1000 is the caller (so the caller's files, e.g. a
 *   --workspace, belong to the agent), the rest come from the range. Agent runs as 1000.
 *   Under no_new_privs the setuid helpers gain nothing: the single mapping then.
 * - rtn running as root: 65536 ids from root's /etc/subuid entry, else from RT_ROOT_SUBID;
 *   inside 1000 runs the agent. Host uid/gid 0 is never mapped in any case.
 * Root of a user namespace (a user-namespaced container: rootless Podman, --uidmap,
 * --userns=auto, a Kubernetes pod with hostUsers: false) can map only ids its namespace has:
 * a subordinate range its namespace does not map is replaced by 65536 of the namespace's own
 * ids other than its 0 (rootless Podman's 1..65536), and where it has no such range, the
 * single mapping of its own root, as for an unprivileged caller (docs/containers.md).
 * Root that cannot make idmapped mounts (a container's) and must let its agent write a
 * directory maps that directory's owner alone instead (rt_idmap_owner), never host root. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/io.h"
#include "runtime/runtime.h"
#include "store/store.h"

#define RT_ID_COUNT 65536u
#define RT_AGENT_ID 1000u
/* Root's default subordinate range when /etc/subuid has none for root: high and unlikely to
 * collide with real accounts (useradd allocates from 100000 upwards in 65536 steps). */
#define RT_ROOT_SUBID 0x70000000u
#define NEWUIDMAP "/usr/bin/newuidmap"
#define NEWGIDMAP "/usr/bin/newgidmap"

/* Finds "name:start:count" or "uid:start:count" for the caller in an /etc/sub?id file. */
static int subid_lookup(const char *file, const char *name, unsigned long id, uint32_t *ret_start,
                        uint32_t *ret_count) {
        _cleanup_fclose_ FILE *f = fopen(file, "re");
        if (!f)
                return -errno;
        char line[512], idstr[32];
        snprintf(idstr, sizeof idstr, "%lu", id);
        while (fgets(line, sizeof line, f)) {
                char *c1 = strchr(line, ':');
                if (!c1)
                        continue;
                *c1 = '\0';
                if (strcmp(line, idstr) != 0 && (!name || strcmp(line, name) != 0))
                        continue;
                char *end;
                unsigned long start = strtoul(c1 + 1, &end, 10);
                if (*end != ':')
                        continue;
                unsigned long count = strtoul(end + 1, &end, 10);
                if (count < RT_ID_COUNT || start == 0 || start > UINT32_MAX - RT_ID_COUNT)
                        continue;
                *ret_start = (uint32_t)start;
                *ret_count = (uint32_t)count;
                return 0;
        }
        return -ENOENT;
}

/* Where this user namespace maps RT_ID_COUNT ids from WANT on (its parent's: the initial
 * namespace maps them all), *ret = WANT; else the first such run of its ids that leaves out
 * its 0. False when it has none. */
static bool ns_range(const char *map, uint32_t want, uint32_t *ret) {
        _cleanup_fclose_ FILE *f = fopen(map, "re");
        if (!f) {
                *ret = want; /* no map to read: the initial namespace */
                return true;
        }
        unsigned long in, out, n;
        bool found = false;
        uint32_t first = 0;
        while (fscanf(f, "%lu %lu %lu", &in, &out, &n) == 3) {
                if (want >= in && (unsigned long)want - in + RT_ID_COUNT <= n) {
                        *ret = want;
                        return true;
                }
                unsigned long start = in == 0 ? 1 : in;
                if (!found && start + RT_ID_COUNT <= in + n && start <= UINT32_MAX - RT_ID_COUNT) {
                        first = (uint32_t)start;
                        found = true;
                }
        }
        if (found)
                *ret = first;
        return found;
}

/* Whether MAP has ID; the initial namespace (no map to read) has them all. */
static bool ns_has(const char *map, unsigned long id) {
        _cleanup_fclose_ FILE *f = fopen(map, "re");
        if (!f)
                return true;
        unsigned long in, out, n;
        while (fscanf(f, "%lu %lu %lu", &in, &out, &n) == 3)
                if (id >= in && id - in < n)
                        return true;
        return false;
}

/* The highest id MAP has (0 when none but 0). */
static unsigned long ns_top(const char *map) {
        _cleanup_fclose_ FILE *f = fopen(map, "re");
        unsigned long in, out, n, top = 0;
        while (f && fscanf(f, "%lu %lu %lu", &in, &out, &n) == 3)
                if (n && in + n - 1 > top)
                        top = in + n - 1;
        return top;
}

/* Whether MAP maps ID to id 0 of its parent namespace. Host root is 0 of the initial
 * namespace; a parent that is itself a user namespace may have its 0 mapped elsewhere, but
 * that is not known from here, so its 0 is refused too. */
static bool ns_to_root(const char *map, unsigned long id) {
        _cleanup_fclose_ FILE *f = fopen(map, "re");
        if (!f)
                return id == 0;
        unsigned long in, out, n;
        while (fscanf(f, "%lu %lu %lu", &in, &out, &n) == 3)
                if (id >= in && id - in < n)
                        return out + (id - in) == 0;
        return false;
}

int rt_owner_ids(const char *path, const struct stat *st, uid_t *ret_uid, gid_t *ret_gid,
                 struct rtn_error *err) {
        gid_t gid = st->st_gid;
        if (!ns_to_root("/proc/self/uid_map", st->st_uid) &&
            ns_to_root("/proc/self/gid_map", gid)) {
                /* a user's directory in root's group (mkdir as root, then chown USER) */
                char buf[1024];
                struct passwd pw, *pwp = NULL;
                (void)getpwuid_r(st->st_uid, &pw, buf, sizeof buf, &pwp);
                if (pwp)
                        gid = pwp->pw_gid;
        }
        if (ns_to_root("/proc/self/uid_map", st->st_uid) || ns_to_root("/proc/self/gid_map", gid))
                return rtn_errx(err, EPERM,
                                "%s belongs to host root, which no sandbox maps: rtn as root of "
                                "a container cannot make the idmapped mount that lets its agent "
                                "write it (that needs CAP_SYS_ADMIN), so the agent is the "
                                "directory's owner; give it to a user of the container (chown), "
                                "or run rtn as one (podman run --user, "
                                "securityContext.runAsUser)",
                                path);
        *ret_uid = st->st_uid;
        *ret_gid = gid;
        return 0;
}

int rt_idmap_owner(struct rt_idmap *m, const char *path, const struct stat *st,
                   struct rtn_error *err) {
        uid_t uid;
        gid_t gid;
        int r = rt_owner_ids(path, st, &uid, &gid, err);
        if (r < 0)
                return r;
        *m = (struct rt_idmap){.mode = RT_IDMAP_SINGLE,
                               .host_uid = uid,
                               .host_gid = gid,
                               .count = 1,
                               .agent_drop_caps = true,
                               .owner = true};
        return 0;
}

uid_t rt_landlock_root_uid(void) {
        const char *um = "/proc/self/uid_map", *gm = "/proc/self/gid_map";
        if (ns_has(um, RT_LANDLOCK_ROOT_UID) && ns_has(gm, RT_LANDLOCK_ROOT_UID))
                return RT_LANDLOCK_ROOT_UID;
        unsigned long tu = ns_top(um), tg = ns_top(gm), top = tu < tg ? tu : tg;
        if (top == 0 || top >= UINT32_MAX || !ns_has(um, top) || !ns_has(gm, top) ||
            getpwuid((uid_t)top) || getgrgid((gid_t)top))
                return RT_LANDLOCK_ROOT_UID;
        return (uid_t)top;
}

static bool is_exec(const char *path) {
        return access(path, X_OK) == 0;
}

int rt_idmap_choose(struct rt_idmap *ret, struct rtn_error *err) {
        struct rt_idmap m = {.host_uid = geteuid(), .host_gid = getegid()};
        char pwbuf[1024];
        struct passwd pw, *pwp = NULL;
        (void)getpwuid_r(m.host_uid, &pw, pwbuf, sizeof pwbuf, &pwp);
        const char *name = pwp ? pwp->pw_name : NULL;
        uint32_t su = 0, sg = 0, cu = 0, cg = 0;
        bool have_sub = subid_lookup("/etc/subuid", name, m.host_uid, &su, &cu) == 0 &&
                        subid_lookup("/etc/subgid", name, m.host_uid, &sg, &cg) == 0;
        uid_t nsu = 0;
        gid_t nsg = 0;
        if (m.host_uid == 0 &&
            ns_range("/proc/self/uid_map", have_sub ? su : RT_ROOT_SUBID, &nsu) &&
            ns_range("/proc/self/gid_map", have_sub ? sg : RT_ROOT_SUBID, &nsg)) {
                m.mode = RT_IDMAP_ROOT;
                m.sub_uid = nsu;
                m.sub_gid = nsg;
        } else if (m.host_uid == 0) {
                m.mode = RT_IDMAP_SINGLE;
                m.ns_single = true;
        } else if (have_sub && is_exec(NEWUIDMAP) && is_exec(NEWGIDMAP) &&
                   !getenv("RTN_NO_SUBID")) {
                /* Under no_new_privs (a hardened service, another sandbox's command) the
                 * setuid newuidmap runs without its privilege and every map write fails. */
                m.nnp_single = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1;
                m.mode = m.nnp_single ? RT_IDMAP_SINGLE : RT_IDMAP_SUBID;
                m.sub_uid = m.nnp_single ? 0 : su;
                m.sub_gid = m.nnp_single ? 0 : sg;
        } else {
                m.mode = RT_IDMAP_SINGLE;
        }
        if (m.mode == RT_IDMAP_SINGLE) {
                m.count = 1;
                m.agent_uid = 0;
                m.agent_gid = 0;
                m.agent_drop_caps = true;
        } else {
                m.count = RT_ID_COUNT;
                m.agent_uid = RT_AGENT_ID;
                m.agent_gid = RT_AGENT_ID;
        }
        m.caller_uid_in = m.agent_uid;
        m.caller_gid_in = m.agent_gid;
        if (m.mode == RT_IDMAP_ROOT && (m.sub_uid == 0 || m.sub_gid == 0))
                return rtn_errx(err, EINVAL, "subordinate id range for root starts at 0");
        *ret = m;
        return 0;
}

int rt_idmap_user_check(const struct rt_idmap *m, const struct rt_spec *spec, uint32_t u,
                        uint32_t g, struct rtn_error *err) {
        if (spec->isolation == INIT_ISOLATION_LANDLOCK)
                return rtn_errx(err, EINVAL,
                                "--user needs the sandbox's user namespace: not with "
                                "--isolation landlock (commands run as you there)");
        if (u >= m->count || g >= m->count)
                return rtn_errx(err, EPERM,
                                "--user %u:%u: this sandbox maps %u id%s (%s), so only %s can "
                                "run inside; a subordinate id range in /etc/subuid and "
                                "/etc/subgid (and newuidmap) gives 65536",
                                u, g, m->count, m->count == 1 ? "" : "s",
                                m->count == 1 ? "yours, as root inside" : "0 and up",
                                m->count == 1 ? "--user root" : "ids below that");
        /* With a subordinate range the caller is 1000 inside, and any other agent makes the
         * files it creates in the caller's directories a subordinate id's on the host, which
         * the caller can no longer change or remove (a tree the default agent cannot make).
         * An overlay workspace keeps them in the upper; rtn apply writes them as the caller. */
        bool host_rw = spec->workspace && spec->workspace_mode != RT_WS_OVERLAY;
        for (size_t i = 0; i < spec->nbinds; i++)
                host_rw = host_rw || spec->binds[i].rw;
        if (m->mode == RT_IDMAP_SUBID && u != RT_AGENT_ID && host_rw)
                return rtn_errx(err, EPERM,
                                "--user %u: with your subordinate id range you are uid %u "
                                "inside, and what another user writes in your directories "
                                "would belong to a subordinate id on the host: use "
                                "--workspace-mode overlay (rtn apply writes the changes as you) "
                                "and read-only binds",
                                u, RT_AGENT_ID);
        return 0;
}

int rt_idmap_user(struct rt_idmap *m, const struct rt_spec *spec, struct rtn_error *err) {
        if (!spec->user_set)
                return 0;
        uint32_t u = spec->user_uid, g = spec->user_gid;
        int r = rt_idmap_user_check(m, spec, u, g, err);
        if (r < 0)
                return r;
        m->agent_uid = u;
        m->agent_gid = g;
        m->agent_drop_caps = u == 0;
        m->agent_root = u == 0;
        return 0;
}

int rt_user_parse(const char *arg, struct rt_spec *spec, struct rtn_error *err) {
        unsigned long id[2];
        if (!strcmp(arg, "root")) {
                id[0] = id[1] = 0;
        } else {
                const char *p = arg;
                for (int i = 0; i < 2; i++) {
                        char *end;
                        if (*p < '0' || *p > '9')
                                goto bad;
                        errno = 0;
                        id[i] = strtoul(p, &end, 10);
                        if (errno || id[i] >= RT_ID_COUNT)
                                goto bad;
                        if (i == 0 && *end == '\0') {
                                id[1] = id[0];
                                break;
                        }
                        if (*end != (i == 0 ? ':' : '\0'))
                                goto bad;
                        p = end + 1;
                }
        }
        spec->user_set = true;
        spec->user_uid = (uint32_t)id[0];
        spec->user_gid = (uint32_t)id[1];
        return 0;
bad:
        return rtn_errx(err, EINVAL, "--user wants root, UID or UID:GID, ids below %u: %s",
                        RT_ID_COUNT, arg);
}

/* newuidmap or newgidmap PID 0 SUB 1000 1000 ID 1 1001 SUB+1000 64535, started with
 * posix_spawn (CLONE_VM|CLONE_VFORK in glibc: no copy of rtn's page tables, no copy-on-write
 * faults after it, which cost more than the tool's own run on a busy VM), stdout to
 * /dev/null, no environment (the tools are setuid). */
static int spawn_newidmap(const char *tool, pid_t child, uint32_t sub, unsigned long id,
                          pid_t *ret_pid, struct rtn_error *err) {
        char a[9][24];
        snprintf(a[0], 24, "%d", (int)child);
        snprintf(a[1], 24, "0");
        snprintf(a[2], 24, "%u", sub);
        snprintf(a[3], 24, "%u", RT_AGENT_ID);
        snprintf(a[4], 24, "%u", RT_AGENT_ID);
        snprintf(a[5], 24, "%lu", id);
        snprintf(a[6], 24, "1");
        snprintf(a[7], 24, "%u", RT_AGENT_ID + 1);
        snprintf(a[8], 24, "%u", sub + RT_AGENT_ID);
        char count[24];
        snprintf(count, sizeof count, "%u", RT_ID_COUNT - RT_AGENT_ID - 1);
        char *argv[] = {(char *)tool, a[0], a[1], a[2], a[3],  a[4],
                        a[5],         a[6], a[7], a[8], count, NULL};
        char *envp[] = {NULL};
        posix_spawn_file_actions_t fa;
        int r = posix_spawn_file_actions_init(&fa);
        if (r == 0)
                r = posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
        if (r == 0)
                r = posix_spawn(ret_pid, tool, &fa, NULL, argv, envp);
        posix_spawn_file_actions_destroy(&fa);
        if (r != 0)
                return rtn_err(err, r, "start %s", tool);
        return 0;
}

static int wait_newidmap(const char *tool, pid_t pid, pid_t child, struct rtn_error *err) {
        int st;
        while (waitpid(pid, &st, 0) < 0)
                if (errno != EINTR)
                        return rtn_err(err, errno, "wait %s", tool);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
                return rtn_errx(err, EPERM,
                                "%s %d failed (status %d): check /etc/subuid and "
                                "/etc/subgid",
                                tool, (int)child, st);
        return 0;
}

/* Both maps at once: the two tools write different files of the child and wait for nothing
 * of each other, so the start waits for the slower one, not for the sum. */
static int run_newidmaps(const struct rt_idmap *m, pid_t child, struct rtn_error *err) {
        pid_t up, gp;
        int r = spawn_newidmap(NEWUIDMAP, child, m->sub_uid, m->host_uid, &up, err);
        if (r < 0)
                return r;
        struct rtn_error gerr;
        int g = spawn_newidmap(NEWGIDMAP, child, m->sub_gid, m->host_gid, &gp, &gerr);
        r = wait_newidmap(NEWUIDMAP, up, child, err);
        if (g == 0)
                g = wait_newidmap(NEWGIDMAP, gp, child, &gerr);
        if (r == 0 && g < 0) {
                *err = gerr;
                r = g;
        }
        return r;
}

static int write_map(pid_t child, const char *file, const char *map, struct rtn_error *err) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/%s", (int)child, file);
        int r = rtn_write_file_at(AT_FDCWD, path, map);
        if (r < 0)
                return rtn_err(err, r, "write %s (\"%s\")", path, map);
        return 0;
}

int rt_idmap_write(const struct rt_idmap *m, pid_t child, struct rtn_error *err) {
        char map[128];
        int r;
        switch (m->mode) {
        case RT_IDMAP_SINGLE:
                if ((r = write_map(child, "setgroups", "deny", err)) < 0)
                        return r;
                snprintf(map, sizeof map, "0 %u 1\n", (unsigned)m->host_uid);
                if ((r = write_map(child, "uid_map", map, err)) < 0)
                        return r;
                snprintf(map, sizeof map, "0 %u 1\n", (unsigned)m->host_gid);
                return write_map(child, "gid_map", map, err);
        case RT_IDMAP_SUBID:
                return run_newidmaps(m, child, err);
        case RT_IDMAP_ROOT:
                snprintf(map, sizeof map, "0 %u %u\n", (unsigned)m->sub_uid, m->count);
                if ((r = write_map(child, "uid_map", map, err)) < 0)
                        return r;
                snprintf(map, sizeof map, "0 %u %u\n", (unsigned)m->sub_gid, m->count);
                return write_map(child, "gid_map", map, err);
        }
        return rtn_errx(err, EINVAL, "unknown id mapping mode %d", (int)m->mode);
}

/* rm -rf dir/name inside a user namespace mapped like a SUBID sandbox (rt_userns_run): files
 * that inside root or other subordinate ids created (an apt install, the overlay's own work
 * dirs) belong to ids the caller cannot touch outside. */
struct rm_args {
        const char *dir, *name;
};

static int rm_inside(void *arg, char *out, size_t outlen, struct rtn_error *err) {
        const struct rm_args *a = arg;
        _cleanup_close_ int d = open(a->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        int r = d < 0 ? negative_errno() : store_rm_rf_at(d, a->name);
        if (r < 0 && r != -ENOENT)
                return rtn_err(err, r, "remove %s/%s even inside a user namespace", a->dir,
                               a->name);
        return 0;
}

int rt_remove_tree(const struct rt_idmap *m, const char *dir, const char *name,
                   struct rtn_error *err) {
        _cleanup_close_ int d = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (d < 0)
                return rtn_err(err, errno, "open %s", dir);
        int r = store_rm_rf_at(d, name);
        if (r == 0 || r == -ENOENT)
                return 0;
        if ((r == -EACCES || r == -EPERM) && m && m->mode == RT_IDMAP_SUBID)
                return rt_userns_run(m, rm_inside, &(struct rm_args){dir, name}, NULL, 0, err);
        return rtn_err(err, r, "remove %s/%s", dir, name);
}
