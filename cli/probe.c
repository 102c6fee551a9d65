/* `rtn probe`: runs the real sequence once — user namespace, id maps, overlay, netlink,
 * Landlock, seccomp, a command spawned by rtn-init — and reports each piece as ok or missing,
 * with the reason and what to do; which isolation rtn picks by itself here (the Landlock mode
 * where user namespaces are denied) and, inside a container, the flags of its engine that
 * would give more (docs/containers.md). --json prints the same as one object. Exits 1 when
 * rtn cannot run a sandbox here. */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/term.h"
#include "common/io.h"
#include "common/json.h"
#include "common/syscall.h"
#include "common/usage.h"
#include "common/initproto.h"
#include "cli/cli.h"
#include "runtime/exec/exec.h"
#include "runtime/runtime.h"
#include "runtime/sandbox/specopt.h"

struct check {
        const char *name;
        bool ok;
        bool fatal; /* rtn cannot run without it */
        char detail[1024];
};

#define MAX_CHECKS 16
static struct check checks[MAX_CHECKS];
static size_t nchecks;

static struct check *add(const char *name, bool ok, bool fatal, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
static struct check *add(const char *name, bool ok, bool fatal, const char *fmt, ...) {
        struct check *c = &checks[nchecks < MAX_CHECKS - 1 ? nchecks++ : nchecks];
        c->name = name;
        c->ok = ok;
        c->fatal = fatal;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->detail, sizeof c->detail, fmt, ap);
        va_end(ap);
        return c;
}

static long read_long(const char *path) {
        char buf[64];
        if (rtn_read_file_at(AT_FDCWD, path, buf, sizeof buf) < 0)
                return -1;
        return strtol(buf, NULL, 10);
}

/* The mode rtn picks by itself here, as rtn exec and rtn serve would with no --isolation. */
static struct rt_spec spec;
static struct rt_spec_opts spec_opts;
static struct rt_container container;

static void probe_userns(void) {
        rt_spec_opts_isolation(&spec, &spec_opts);
        rt_container_probe(&container, spec.isolation == INIT_ISOLATION_LANDLOCK,
                           spec_opts.isolation_auto);
        long max = read_long("/proc/sys/user/max_user_namespaces");
        long deb = read_long("/proc/sys/kernel/unprivileged_userns_clone");
        long aa = read_long("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
        if (spec.isolation == INIT_ISOLATION_LANDLOCK)
                add("user namespaces", false, false, "%s%s", spec_opts.isolation_auto,
                    max == 0 ? "; user.max_user_namespaces is 0: sysctl -w "
                               "user.max_user_namespaces=15000"
                    : geteuid() != 0 && deb == 0
                            ? "; kernel.unprivileged_userns_clone is 0: sysctl -w "
                              "kernel.unprivileged_userns_clone=1"
                    : geteuid() != 0 && aa == 1
                            ? "; AppArmor restricts unprivileged user namespaces (Ubuntu "
                              "23.10+): make install adds a profile for rtn with 'userns,' "
                              "(tools/apparmor/rtn.in)"
                            : "");
        else if (max == 0)
                add("user namespaces", false, true,
                    "user.max_user_namespaces is 0: "
                    "sysctl -w user.max_user_namespaces=15000");
        else if (geteuid() != 0 && deb == 0)
                add("user namespaces", false, true,
                    "kernel.unprivileged_userns_clone is 0: "
                    "sysctl -w kernel.unprivileged_userns_clone=1");
        else if (geteuid() != 0 && aa == 1)
                add("user namespaces", false, true,
                    "AppArmor restricts unprivileged user "
                    "namespaces (Ubuntu 23.10+): add an AppArmor profile for rtn with 'userns,', "
                    "or sysctl -w kernel.apparmor_restrict_unprivileged_userns=0, or use the "
                    "Landlock-only mode");
        else
                add("user namespaces", true, true, "available (max %ld)", max);
}

static void probe_ids(void) {
        if (spec.isolation == INIT_ISOLATION_LANDLOCK) {
                if (geteuid() == 0)
                        add("id mapping", true, false,
                            "none in the Landlock mode: commands run as uid %u, which owns "
                            "nothing, not as root",
                            (unsigned)rt_landlock_root_uid());
                else
                        add("id mapping", true, false,
                            "none in the Landlock mode: commands run as you (uid %u)",
                            (unsigned)geteuid());
                return;
        }
        struct rt_idmap m;
        struct rtn_error err = {0};
        if (rt_idmap_choose(&m, &err) < 0) {
                add("id mapping", false, true, "%s", err.msg);
                return;
        }
        switch (m.mode) {
        case RT_IDMAP_SINGLE:
                if (m.ns_single) {
                        add("id mapping", true, false,
                            "single id: rtn is root of a user namespace (a user-namespaced "
                            "container) that maps no 65536 ids besides its 0, so inside 0 is "
                            "that root and agent commands run as uid 0 without capabilities; "
                            "65537 ids in the container's namespace (podman --userns=auto:"
                            "size=65537, --uidmap 0:START:65537) give 65536 ids");
                        break;
                }
                if (m.nnp_single) {
                        add("id mapping", true, false,
                            "single id: rtn runs under no_new_privs, under which the setuid "
                            "newuidmap cannot map your /etc/subuid range, so inside 0 is you and "
                            "agent commands run as uid 0 without capabilities; run rtn without "
                            "no_new_privs (systemd: NoNewPrivileges=no) for 65536 ids");
                        break;
                }
                add("id mapping", true, false,
                    "single id: inside 0 is you; agent commands run "
                    "as uid 0 without capabilities. Package installs that chown files to other "
                    "users fail and `rtn rootfs bootstrap` is refused (import a tarball instead); "
                    "an "
                    "/etc/subuid range (usermod --add-subuids) and newuidmap "
                    "(package uidmap) give 65536 ids");
                break;
        case RT_IDMAP_SUBID:
                add("id mapping", true, false,
                    "65536 ids from /etc/subuid (%u) via newuidmap; "
                    "agent uid 1000 is you",
                    (unsigned)m.sub_uid);
                break;
        case RT_IDMAP_ROOT:
                add("id mapping", true, false,
                    "root: 65536 subordinate ids from %u; host uid 0 "
                    "is never mapped",
                    (unsigned)m.sub_uid);
                break;
        }
}

/* The real thing: a sandbox on the host base running /bin/true through rtn-init. */
static void probe_sandbox(void) {
        struct rt_sandbox sb = {.pidfd = -1, .ctl = -1};
        struct rtn_error err = {0};
        bool landlock = spec.isolation == INIT_ISOLATION_LANDLOCK;
        if (rt_sandbox_start(&spec, &sb, &err) < 0) {
                add("sandbox", false, true, "%s", err.msg);
                return;
        }
        if (landlock)
                add("sandbox", true, true,
                    "no namespaces: commands run on this host's filesystem and network, "
                    "confined by Landlock, seccomp and rlimits");
        else
                add("sandbox", true, true,
                    "clone3 namespaces, id maps, overlayfs (userxattr), "
                    "pivot_root, loopback over rtnetlink, rtn-init as PID 1");
        const char *fallback = rt_setup_warning(&sb);
        if (fallback[0])
                add("container fallbacks", false, false, "%s", fallback);
        add("landlock", sb.landlock_abi > 0, true,
            sb.landlock_abi > 0 ? "ABI %d" : "not available (%d): boot with lsm=...,landlock",
            sb.landlock_abi);
        char *argv[] = {"/bin/true", NULL}, *envp[] = {NULL};
        int fds[3];
        fds[0] = fds[1] = fds[2] = open("/dev/null", O_RDWR | O_CLOEXEC);
        int r = rt_sandbox_spawn(&sb, 1, 0, INIT_POLICY_AGENT, "/", argv, envp, fds, 0, 0, &err);
        close(fds[0]);
        int master = -1;
        if (r == 0)
                r = rt_exec_await_spawned(&sb, argv[0], "/", &master, &err);
        rtn_safe_close(master);
        if (r == 0)
                add("seccomp", true, true,
                    "filter loaded for a command (with no_new_privs, "
                    "Landlock and rlimits)");
        else
                add("seccomp", false, true, "a command could not start: %s", err.msg);
        rt_sandbox_destroy(&sb);
}

static void probe_limits(void) {
        struct utsname u;
        int maj = 0, min = 0;
        if (uname(&u) == 0)
                sscanf(u.release, "%d.%d", &maj, &min);
        bool pidmax = maj > 6 || (maj == 6 && min >= 14);
        add("pid namespace pid_max", pidmax, false,
            pidmax ? "kernel %s: per-namespace pid_max"
                   : "kernel %s < 6.14: RLIMIT_NPROC bounds processes",
            u.release);
}

static struct rt_cgroup_state cgs;
static bool cgs_alone; /* rtn is the only process in its cgroup */
/* A sandbox started now would get a child cgroup. */
static bool cgs_child;

/* Whether a sandbox started now would have the controller, without changing anything: it
 * must be listed in our cgroup.controllers and enabled for our children; when it is not
 * enabled yet, rtn enables it at the first sandbox, which a cgroup other than the root only
 * allows when rtn is alone in it (rtn then moves itself into a leaf; runtime/sandbox/cgroup.c). */
static bool controller_usable(bool listed, bool enabled) {
        return cgs.writable && listed && (enabled || strcmp(cgs.self, "/") == 0 || cgs_alone);
}

static const char *cgroup_use(bool listed, bool enabled, const char *ctrl, const char *fallback) {
        static char buf[2][160];
        char *b = buf[ctrl[0] == 'p'];
        if (cgs_child && controller_usable(listed, enabled))
                snprintf(b, sizeof buf[0], "%s.max", ctrl);
        else
                snprintf(b, sizeof buf[0], "%s", fallback);
        return b;
}

static void probe_cgroup(void) {
        if (!cgs.mount[0] || !cgs.self[0]) {
                add("cgroup v2", false, false,
                    "%s: sandboxes stay in rtn's cgroup; memory limit RLIMIT_DATA per process, "
                    "process limit pid_max",
                    cgs.why);
                return;
        }
        const char *mem =
                cgroup_use(cgs.memory, cgs.memory_on, "memory", "RLIMIT_DATA per process");
        const char *pids = cgroup_use(cgs.pids, cgs.pids_on, "pids", "pid_max");
        const char *ctrls = cgs.controllers[0] ? cgs.controllers : "none";
        int mode = rt_cgroup_mode();
        if (mode < 0)
                add("cgroup v2", false, true, "RTN_CGROUP=%s is not auto, always or never",
                    getenv("RTN_CGROUP"));
        else if (!cgs.writable)
                add("cgroup v2", false, false,
                    "%s; controllers: %s. Sandboxes stay in rtn's cgroup; memory limit %s, "
                    "process limit %s",
                    cgs.why, ctrls, mem, pids);
        else if (cgs_child)
                add("cgroup v2", true, false,
                    "mounted at %s; our cgroup %s is writable; controllers: %s. Each sandbox "
                    "gets a child cgroup (removed at the end); memory limit %s, process "
                    "limit %s",
                    cgs.mount, cgs.self, ctrls, mem, pids);
        else
                add("cgroup v2", false, false,
                    "mounted at %s; our cgroup %s is writable; controllers: %s. %s: sandboxes "
                    "stay in rtn's cgroup; memory limit %s, process limit %s",
                    cgs.mount, cgs.self, ctrls,
                    mode == RT_CGROUP_NEVER ? "RTN_CGROUP=never"
                    : cgs.memory || cgs.pids
                            ? "the memory or pids controller is listed, but other processes "
                              "share rtn's cgroup, and cgroup v2's no-internal-process rule "
                              "forbids enabling it for its children (RTN_CGROUP=always gives "
                              "each sandbox a child cgroup all the same)"
                            : "no memory or pids controller to enforce a limit with "
                              "(RTN_CGROUP=always gives each sandbox a child cgroup all the same)",
                    mem, pids);
}

static void print_cgroup_json(struct rtn_json_buf *b) {
        rtn_json_key(b, "cgroup");
        rtn_json_obj_begin(b);
        rtn_json_kv_str(b, "mount", cgs.mount);
        rtn_json_kv_str(b, "cgroup", cgs.self);
        rtn_json_kv_str(b, "dir", cgs.dir);
        rtn_json_kv_bool(b, "writable", cgs.writable);
        rtn_json_kv_str(b, "controllers", cgs.controllers);
        rtn_json_kv_str(b, "subtree_control", cgs.subtree);
        rtn_json_kv_bool(b, "sandbox_cgroup", cgs_child);
        rtn_json_kv_str(b, "memory_limit",
                        cgroup_use(cgs.memory, cgs.memory_on, "memory", "RLIMIT_DATA"));
        rtn_json_kv_str(b, "pids_limit", cgroup_use(cgs.pids, cgs.pids_on, "pids", "pid_max"));
        rtn_json_kv_str(b, "reason", cgs.why);
        rtn_json_obj_end(b);
}

static void probe_isolation(void) {
        if (spec.isolation == INIT_ISOLATION_LANDLOCK)
                add("isolation", false, false,
                    "landlock, picked by rtn by itself since user namespaces are denied "
                    "(rtn exec and rtn serve say so; --isolation full fails closed instead): %s",
                    rt_isolation_warning(spec.isolation));
        else
                add("isolation", true, false,
                    "full: rtn exec and rtn serve run the full sandbox unless --isolation names "
                    "a weaker mode");
        if (!container.engine)
                return;
        char list[700] = "";
        size_t n = 0;
        for (size_t i = 0; i < container.n && n < sizeof list; i++)
                n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", i ? "; " : "",
                                      container.unlock[i]);
        if (container.n)
                add("container", false, false, "%s: these would give rtn more here: %s",
                    container.engine, list);
        else
                add("container", true, false, "%s: it lets rtn run the full sandbox",
                    container.engine);
}

static void print_json(void) {
        struct rtn_json_buf b = RTN_JSON_BUF_INIT(0);
        bool can_run = true;
        rtn_json_obj_begin(&b);
        rtn_json_key(&b, "checks");
        rtn_json_arr_begin(&b);
        for (size_t i = 0; i < nchecks; i++) {
                can_run &= checks[i].ok || !checks[i].fatal;
                rtn_json_obj_begin(&b);
                rtn_json_kv_str(&b, "name", checks[i].name);
                rtn_json_kv_bool(&b, "ok", checks[i].ok);
                rtn_json_kv_bool(&b, "required", checks[i].fatal);
                rtn_json_kv_str(&b, "detail", checks[i].detail);
                rtn_json_obj_end(&b);
        }
        rtn_json_arr_end(&b);
        print_cgroup_json(&b);
        rtn_json_key(&b, "isolation");
        rtn_json_obj_begin(&b);
        rtn_json_kv_str(&b, "mode", rt_isolation_name(spec.isolation));
        rtn_json_kv_bool(&b, "automatic", spec_opts.isolation_auto[0] != '\0');
        rtn_json_kv_str(&b, "reason", spec_opts.isolation_auto);
        rtn_json_obj_end(&b);
        rtn_json_key(&b, "container");
        if (container.engine) {
                rtn_json_obj_begin(&b);
                rtn_json_kv_str(&b, "engine", container.engine);
                rtn_json_kv_bool(&b, "proc_masked", container.proc_masked);
                rtn_json_key(&b, "unlock");
                rtn_json_arr_begin(&b);
                for (size_t i = 0; i < container.n; i++)
                        rtn_json_str(&b, container.unlock[i]);
                rtn_json_arr_end(&b);
                rtn_json_obj_end(&b);
        } else {
                rtn_json_null(&b);
        }
        rtn_json_kv_bool(&b, "can_run", can_run);
        rtn_json_obj_end(&b);
        if (!b.err) /* the JSON writer escapes every control character */
                puts(b.data); /* rtn's own text */
        rtn_json_buf_free(&b);
}

static const char probe_usage[] =
        "usage: rtn probe [--json]\n"
        "Checks what this kernel and host allow, by running the real sequence once; says which\n"
        "isolation rtn picks by itself here (the Landlock mode where user namespaces are\n"
        "denied) and, inside a container, the container flags that would give more; exits 1\n"
        "when rtn cannot run a sandbox here.\n"
        "  --json                the same as one JSON object\n";

int cli_cmd_probe(int argc, char **argv) {
        static const struct option longopts[] = {
                {"json", no_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'}, {0}};
        bool json = false;
        int c;
        rtn_usage_prog(argv, "probe");
        optind = 0;
        while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
                if (c == 'h')
                        return rtn_usage_help(probe_usage);
                if (c != 'j')
                        return rtn_usage_error("probe", NULL);
                json = true;
        }
        if (optind < argc)
                return rtn_usage_error("probe", "unexpected operand '%s'", argv[optind]);
        /* Read before the sandbox: its start may move rtn into a leaf cgroup of its own. */
        (void)rt_cgroup_probe(&cgs);
        cgs_alone = cgs.writable && rt_cgroup_alone(&cgs);
        int mode = rt_cgroup_mode();
        cgs_child = cgs.writable &&
                    (mode == RT_CGROUP_ALWAYS ||
                     (mode == RT_CGROUP_AUTO && (controller_usable(cgs.memory, cgs.memory_on) ||
                                                 controller_usable(cgs.pids, cgs.pids_on))));
        rt_spec_init(&spec);
        init_limits_default(&spec.limits);
        probe_userns();
        probe_ids();
        probe_sandbox();
        probe_isolation();
        probe_limits();
        probe_cgroup();
        bool can_run = true;
        for (size_t i = 0; i < nchecks; i++)
                can_run &= checks[i].ok || !checks[i].fatal;
        if (json) {
                print_json();
        } else {
                for (size_t i = 0; i < nchecks; i++)
                        rtn_term_printf(stdout, "%-8s %-22s %s\n", checks[i].ok ? "ok" : "missing",
                                        checks[i].name, checks[i].detail);
                rtn_term_printf(
                        stdout, "%s\n",
                        can_run ? "rtn can run sandboxes here."
                                : "rtn cannot run sandboxes here: see the missing lines above.");
        }
        return can_run ? 0 : 1;
}
