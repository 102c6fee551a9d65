/* The sandbox options `rtn exec` and `rtn serve` share: their parsing, checks and the
 * environment they give commands (runtime/sandbox/specopt.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/io.h"

#include "common/duration.h"
#include "runtime/sandbox/specopt.h"
#include "store/store.h"

const struct rt_opt rt_spec_opt_rows[] = {
        {"rootfs",
         required_argument,
         RT_OPT_ROOTFS,
         {"  --rootfs host|NAME|DIR  base filesystem: host (a read-only view of /usr /etc /opt\n"
          "                        ...), a rootfs NAME (rtn rootfs list) or a directory;\n"
          "                        default: the one the environment was made on, else host\n",

          "  --rootfs host|NAME|DIR  base filesystem (default: the environment's, else host;\n"
          "                        NAME: rtn rootfs list)\n"}},
        {"workspace",
         required_argument,
         RT_OPT_WORKSPACE,
         {"  --workspace DIR       DIR at /workspace (default: an empty dir, discarded)\n",

          "  --workspace DIR       DIR at /workspace ('.' = the launch directory)\n"}},
        {"workspace-mode",
         required_argument,
         RT_OPT_WORKSPACE_MODE,
         {"  --workspace-mode live|overlay  live (default): writes to /workspace are on the host\n"
          "                        at once; overlay: they go to the sandbox's upper, and with\n"
          "                        --keep become pending changes (rtn diff, rtn apply writes\n"
          "                        them to DIR, rtn reset drops them); without --keep they are\n"
          "                        discarded when the command ends. A live DIR's .git is\n"
          "                        read-only inside (git commit fails: Read-only file system)\n"
          "                        unless --workspace-git rw\n",

          "  --workspace-mode live|overlay  live (default): the agent's writes to /workspace\n"
          "                        change DIR at once, and env_reset cannot undo them;\n"
          "                        overlay: they stay in the sandbox (env_diff lists them,\n"
          "                        env_reset drops them) until workspace_apply writes them to\n"
          "                        DIR; left unapplied at exit, they become the environment's\n"
          "                        pending changes (rtn diff, rtn apply, rtn reset)\n"}},
        {"workspace-git",
         required_argument,
         RT_OPT_WORKSPACE_GIT,
         {"  --workspace-git ro|rw  a live workspace's .git: ro (default), read-only inside;\n"
          "                        rw, writable so the agent can commit, with its config,\n"
          "                        hooks, info/, commondir, alternates, worktrees/ and\n"
          "                        modules/ still read-only\n",
          NULL}},
        {"bind",
         required_argument,
         RT_OPT_BIND,
         {"  --bind SRC:DST[:ro|rw] bind a host dir or file at DST, anywhere but /proc, /sys,\n"
          "                        /dev and rtn's own files (default rw; a file, or a hidden\n"
          "                        dir of your home, ro only; never a credential store);\n"
          "                        '\\:' is a ':' of a path, SRC may be relative; repeatable\n",
          NULL}},
        {"net",
         required_argument,
         RT_OPT_NET,
         {"  --net loopback|none   loopback only (default), or no network at all\n", NULL}},
        {"hostname",
         required_argument,
         RT_OPT_HOSTNAME,
         {"  --hostname NAME       hostname inside (default rtn)\n", NULL}},
        {"timeout",
         required_argument,
         RT_OPT_TIMEOUT,
         {"  --timeout DURATION    kill the sandbox after DURATION (exit 124): seconds (90,\n"
          "                        1.5) or with a unit (500ms, 30s, 5m, 1h, 1h30m, 2d)\n",

          "  --timeout DURATION    default shell_run timeout (default 600 s; 90, 1.5, 30s, 5m,\n"
          "                        1h)\n"}},
        {"setenv",
         required_argument,
         RT_OPT_SETENV,
         {"  --setenv K=V|K        set an environment variable of the agent's commands (K alone:\n"
          "                        the value rtn has; an error when it has none); repeatable\n",
          NULL}},
        {"env-file",
         required_argument,
         RT_OPT_ENV_FILE,
         {"  --env-file FILE       --setenv for each line of FILE (docker's format: K=V or K,\n"
          "                        # comments, blank lines; values taken as written)\n",
          NULL}},
        {"upper-size",
         required_argument,
         RT_OPT_UPPER_SIZE,
         {"  --upper-size BYTES    room for the sandbox's changes (its upper layer, a tmpfs, an\n"
          "                        overlay workspace's included) and for /tmp, each (default 2G;\n"
          "                        K M G); a write beyond fails with ENOSPC inside; more\n"
          "                        than the machine's memory is refused\n",
          "  --upper-size BYTES    room for a sandbox's changes (its upper layer, a tmpfs, an\n"
          "                        overlay workspace's and /tmp included: one budget, kept with\n"
          "                        the changes; default 2G; K M G); a write beyond fails with\n"
          "                        ENOSPC inside; more than the machine's memory is refused\n"}},
        {"store-max",
         required_argument,
         RT_OPT_STORE_MAX,
         {"  --store-max BYTES     the most the data dir may hold on disk (K M G): a commit that\n"
          "                        would pass it is refused, as one that would leave its\n"
          "                        filesystem less than 5 percent free (1G-quarter of it)\n",
          NULL}},
        {"pids-max",
         required_argument,
         RT_OPT_PIDS_MAX,
         {"  --pids-max N          tasks that may exist in the sandbox at once (default 4096,\n"
          "                        at least 301; cgroup v2 pids.max when available, and the\n"
          "                        pid_max)\n",
          NULL}},
        {"memory-max",
         required_argument,
         RT_OPT_MEMORY_MAX,
         {"  --memory-max BYTES    memory limit of the sandbox (cgroup v2 memory.max when\n"
          "                        available, else RLIMIT_DATA per process, with a warning)\n",
          NULL}},
        {"user",
         required_argument,
         RT_OPT_USER,
         {"  --user root|UID[:GID] run the agent's commands as this user of the sandbox's user\n"
          "                        namespace (default: rtn, 1000; root without a subordinate\n"
          "                        id range, the only id mapped then); root has no\n"
          "                        capabilities and may write the rootfs (apt-get), never\n"
          "                        the host's files as anyone but their owner\n",
          NULL}},
        {"allow-ptrace",
         no_argument,
         RT_OPT_ALLOW_PTRACE,
         {"  --allow-ptrace        let the agent's commands ptrace the sandbox's own processes\n"
          "                        (strace, gdb); never rtn-init nor anything outside\n",
          NULL}},
        {"allow-net",
         required_argument,
         RT_OPT_ALLOW_NET,
         {"  --allow-net HOST      let the agent's commands reach HOST through rtn's proxy: a\n"
          "                        name, .domain (it and every name below), IPv4 or [IPv6]\n"
          "                        address, :PORT (default 80 and 443), or an http(s):// URL\n"
          "                        (its host); an address of this machine only as ADDR:PORT;\n"
          "                        never localhost (see --allow-host-port); repeatable\n",
          NULL}},
        {"allow-host-port",
         required_argument,
         RT_OPT_ALLOW_HOST_PORT,
         {"  --allow-host-port PORT  let the agent's commands reach PORT of this machine's\n"
          "                        loopback (a model server, a registry mirror) at\n"
          "                        " NETNS_HOST_NAME ":PORT through rtn's proxy, and no other\n"
          "                        port; not one of rtn's own listeners; repeatable\n",
          NULL}},
        {"upstream-proxy",
         required_argument,
         RT_OPT_UPSTREAM_PROXY,
         {"  --upstream-proxy URL|env  send what rtn's proxy admits on through this HTTP proxy\n"
          "                        (http://[USER:PASSWORD@]HOST:PORT, with CONNECT); env: the\n"
          "                        caller's https_proxy or http_proxy, honouring no_proxy\n",
          NULL}},
        {"net-policy",
         required_argument,
         RT_OPT_NET_POLICY,
         {"  --net-policy FILE     the same rules from FILE, one a line (docs/network.md)\n",
          NULL}},
        {"secret",
         required_argument,
         RT_OPT_SECRET,
         {"  --secret NAME@HOST    add the header 'Authorization: Bearer VALUE' to the agent's\n"
          "                        requests for HOST (allowed by it; HTTPS intercepted with a\n"
          "                        CA of the sandbox's own, the server verified), VALUE being\n"
          "                        rtn's environment variable NAME; commands see a placeholder\n"
          "                        in NAME; plain http:// to HOST is refused unless written\n"
          "                        NAME@http://HOST (then sent unverified); repeatable\n",
          NULL}},
        {"secret-file",
         required_argument,
         RT_OPT_SECRET_FILE,
         {"  --secret-file NAME@[http://]HOST=FILE\n"
          "                        the same with VALUE read from FILE (its last newline dropped)\n",
          NULL}},
        {"secret-header",
         required_argument,
         RT_OPT_SECRET_HEADER,
         {"  --secret-header NAME=TEMPLATE\n"
          "                        the header for the secrets named NAME before, {} the value\n"
          "                        ('X-Api-Key: {}'; docs/network.md, \"Secrets\")\n",
          NULL}},
        {"publish",
         required_argument,
         RT_OPT_PUBLISH,
         {"  --publish [ADDR:]HOSTPORT:SANDBOXPORT\n"
          "                        forward connections to ADDR:HOSTPORT on the host (ADDR\n"
          "                        127.0.0.1 by default) to SANDBOXPORT on the sandbox's\n"
          "                        loopback; repeatable (docs/network.md)\n",
          NULL}},
        {"protect",
         required_argument,
         RT_OPT_PROTECT,
         {"  --protect PATH        keep PATH (relative to the workspace, or absolute below it or\n"
          "                        a read-write --bind) read-only inside, and refused by rtn\n"
          "                        apply, as the files git's configuration names are; repeatable\n",
          NULL}},
        {"isolation",
         required_argument,
         RT_OPT_ISOLATION,
         {"  --isolation MODE      full (default); landlock: no namespaces, Landlock+seccomp "
          "only;\n"
          "                        namespaces: no Landlock (both weaker, reported on stderr).\n"
          "                        Without it rtn picks landlock by itself where user\n"
          "                        namespaces are denied, and says so (rtn probe), unless\n"
          "                        an option needs them (--allow-net, --bind, --user...)\n",
          NULL}},
        {"env",
         required_argument,
         RT_OPT_ENV,
         {"  --env NAME            start from environment NAME's tip (default: default)\n",

          "  --env NAME            environment whose tip the sandbox starts from (default: "
          "default)\n"}},
        {"data-dir",
         required_argument,
         RT_OPT_DATA_DIR,
         {"  --data-dir DIR        the store (default $RTN_DATA_DIR, $XDG_DATA_HOME/rtn, "
          "~/.local/share/rtn)\n",

          "  --data-dir DIR        store (default $RTN_DATA_DIR, $XDG_DATA_HOME/rtn, "
          "~/.local/share/rtn)\n"}},
};
const size_t rt_spec_opt_nrows = sizeof rt_spec_opt_rows / sizeof rt_spec_opt_rows[0];

int rt_opts_longopts(const struct rt_opt *own, size_t nown, struct option *ret, size_t cap) {
        size_t n = 0;
        if (rt_spec_opt_nrows + nown + 2 > cap)
                return -ENOSPC;
        for (size_t i = 0; i < rt_spec_opt_nrows; i++, n++)
                ret[n] = (struct option){rt_spec_opt_rows[i].name, rt_spec_opt_rows[i].has_arg,
                                         NULL, rt_spec_opt_rows[i].val};
        for (size_t i = 0; i < nown; i++, n++)
                ret[n] = (struct option){own[i].name, own[i].has_arg, NULL, own[i].val};
        ret[n++] = (struct option){"help", no_argument, NULL, 'h'};
        ret[n] = (struct option){0};
        return 0;
}

static void opt_help(FILE *f, const struct rt_opt *row, enum rt_opt_verb verb) {
        fputs(row->help[verb] ? row->help[verb] : row->help[RT_VERB_EXEC], f);
}

void rt_opts_usage(FILE *f, enum rt_opt_verb verb, const char *head, const struct rt_opt *own,
                   size_t nown, const char *tail) {
        fputs(head, f);
        for (size_t i = 0; i < rt_spec_opt_nrows; i++)
                opt_help(f, &rt_spec_opt_rows[i], verb);
        for (size_t i = 0; i < nown; i++)
                opt_help(f, &own[i], verb);
        fputs(tail ? tail : "", f);
        fputs("environment: RTN_CGROUP=auto|always|never  a cgroup v2 child per sandbox where a\n"
              "                        memory or pids controller can enforce its limit (auto, the\n"
              "                        default), always, or never\n",
              f);
}

int rt_parse_size(const char *arg, const char *what, uint64_t *ret, struct rtn_error *err) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(arg, &end, 10);
        unsigned shift = 0;
        if (*end == 'K' || *end == 'k')
                shift = 10, end++;
        else if (*end == 'M' || *end == 'm')
                shift = 20, end++;
        else if (*end == 'G' || *end == 'g')
                shift = 30, end++;
        if (errno || *end || end == arg || arg[0] == '-' || v > (~0ULL >> (shift + 1)))
                return rtn_errx(err, EINVAL, "%s wants a size in bytes (K, M, G suffixes): %s",
                                what, arg);
        *ret = (uint64_t)v << shift;
        return 0;
}

static int parse_isolation(const char *arg, struct rt_spec *s, struct rtn_error *err) {
        if (!strcmp(arg, "full"))
                s->isolation = INIT_ISOLATION_FULL;
        else if (!strcmp(arg, "landlock"))
                s->isolation = INIT_ISOLATION_LANDLOCK;
        else if (!strcmp(arg, "namespaces"))
                s->isolation = INIT_ISOLATION_NO_LANDLOCK;
        else
                return rtn_errx(err, EINVAL, "--isolation must be full, landlock or namespaces");
        return 0;
}

const char *rt_isolation_name(enum init_isolation iso) {
        switch (iso) {
        case INIT_ISOLATION_LANDLOCK:
                return "landlock";
        case INIT_ISOLATION_NO_LANDLOCK:
                return "namespaces";
        case INIT_ISOLATION_FULL:
        default:
                return "full";
        }
}

/* Adds K=V, checked now, so a bad one stops the command before anything starts. */
static int add_setenv(const char *kv, struct rt_spec_opts *o, struct rtn_error *err) {
        if (o->nsetenv >= RT_ENV_MAX)
                return rtn_errx(err, E2BIG, "more than %d --setenv settings", RT_ENV_MAX);
        static struct rt_env probe;
        probe.n = probe.used = 0;
        probe.vars[0] = NULL;
        int r = rt_env_set(&probe, kv, err);
        if (r < 0)
                return r;
        o->setenv[o->nsetenv++] = kv;
        return 0;
}

/* K alone: K=<rtn's own value of K>, kept in o->store. */
static int setenv_from_host(const char *name, size_t len, struct rt_spec_opts *o, const char *where,
                            struct rtn_error *err) {
        char key[256];
        if (len == 0 || len >= sizeof key)
                return rtn_errx(err, EINVAL, "%s: environment name empty or too long", where);
        memcpy(key, name, len);
        key[len] = '\0';
        const char *v = getenv(key);
        if (!v)
                return rtn_errx(err, ENOENT,
                                "%s: %s is not set in rtn's environment (give K=V to set a value)",
                                where, key);
        size_t need = len + 1 + strlen(v) + 1;
        if (need > sizeof o->store - o->used)
                return rtn_errx(err, E2BIG, "%s: environment settings too large", where);
        char *kv = o->store + o->used;
        snprintf(kv, need, "%s=%s", key, v);
        int r = add_setenv(kv, o, err);
        if (r >= 0)
                o->used += need;
        return r;
}

static int parse_setenv(const char *arg, struct rt_spec_opts *o, struct rtn_error *err) {
        if (!strchr(arg, '='))
                return setenv_from_host(arg, strlen(arg), o, "--setenv", err);
        return add_setenv(arg, o, err);
}

/* One line of an env file, docker's format (docker run --env-file): leading blanks dropped,
 * '#' starts a comment line, K=V sets V as written (quotes included), K alone takes rtn's
 * value; a name with a blank in it is refused. */
static int env_file_line(char *line, struct rt_spec_opts *o, const char *where,
                         struct rtn_error *err) {
        while (*line == ' ' || *line == '\t')
                line++;
        size_t len = strlen(line);
        if (len && line[len - 1] == '\r')
                line[--len] = '\0';
        if (!*line || *line == '#')
                return 0;
        char *eq = strchr(line, '=');
        size_t klen = eq ? (size_t)(eq - line) : len;
        if (strcspn(line, " \t") < klen)
                return rtn_errx(err, EINVAL, "%s: name '%.*s' has a blank in it", where, (int)klen,
                                line);
        if (!eq)
                return setenv_from_host(line, klen, o, where, err);
        if (len + 1 > sizeof o->store - o->used)
                return rtn_errx(err, E2BIG, "%s: environment settings too large", where);
        char *kv = memcpy(o->store + o->used, line, len + 1);
        char msg[sizeof err->msg];
        int r = add_setenv(kv, o, err);
        if (r < 0) {
                snprintf(msg, sizeof msg, "%s", err->msg);
                return rtn_errx(err, -r, "%s: %s", where, msg);
        }
        o->used += len + 1;
        return 0;
}

#define ENV_FILE_MAX (1u << 20)

/* FILE is the user's, like any path on the command line: a pipe (`--env-file <(...)`) is
 * read as a file is, to its end, at most ENV_FILE_MAX bytes. */
static int parse_env_file(const char *path, struct rt_spec_opts *o, struct rtn_error *err) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0)
                return rtn_err(err, errno, "--env-file %s", path);
        if (S_ISDIR(st.st_mode))
                return rtn_errx(err, EISDIR, "--env-file %s: is a directory", path);
        _cleanup_free_ char *buf = malloc(ENV_FILE_MAX + 1);
        if (!buf)
                return rtn_errx(err, ENOMEM, "--env-file %s: out of memory", path);
        ssize_t n = rtn_read_full(fd, buf, ENV_FILE_MAX + 1);
        if (n < 0)
                return rtn_err(err, (int)-n, "--env-file %s: read", path);
        if (n > ENV_FILE_MAX)
                return rtn_errx(err, EFBIG, "--env-file %s: larger than 1 MiB", path);
        buf[n] = '\0';
        if (strlen(buf) != (size_t)n)
                return rtn_errx(err, EINVAL, "--env-file %s: has a NUL byte", path);
        char where[320];
        unsigned lineno = 0;
        for (char *line = buf, *next; line; line = next) {
                next = strchr(line, '\n');
                if (next)
                        *next++ = '\0';
                snprintf(where, sizeof where, "--env-file %s, line %u", path, ++lineno);
                int r = env_file_line(line, o, where, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The options that set the spec's places and names. */
static int spec_place_opt(int c, char *arg, struct rt_spec *s, struct rt_spec_opts *o,
                          struct rtn_error *err) {
        switch (c) {
        case RT_OPT_ROOTFS:
                s->rootfs = arg;
                return 0;
        case RT_OPT_WORKSPACE:
                if (!arg[0])
                        return rtn_errx(err, EINVAL, "--workspace wants a directory");
                if (!realpath(arg, o->workspace_abs))
                        return rtn_err(err, errno, "--workspace %s", arg);
                s->workspace = o->workspace_abs;
                return 0;
        case RT_OPT_WORKSPACE_MODE:
                return rt_parse_ws_mode(s, arg, err);
        case RT_OPT_WORKSPACE_GIT:
                if (strcmp(arg, "ro") && strcmp(arg, "rw"))
                        return rtn_errx(err, EINVAL, "--workspace-git must be ro or rw, got %s",
                                        arg);
                s->workspace_git_rw = !strcmp(arg, "rw");
                return 0;
        case RT_OPT_BIND:
                return rt_parse_bind(s, arg, err);
        case RT_OPT_NET:
                if (strcmp(arg, "none") && strcmp(arg, "loopback"))
                        return rtn_errx(err, EINVAL, "--net must be loopback or none");
                s->net_none = !strcmp(arg, "none");
                return 0;
        case RT_OPT_HOSTNAME:
                s->hostname = arg;
                return 0;
        case RT_OPT_TIMEOUT:
                return rtn_duration_opt("--timeout", arg, &o->timeout_usec, err);
        case RT_OPT_DATA_DIR:
                o->data_dir = arg;
                return 0;
        case RT_OPT_ENV:
                o->env = arg;
                return store_env_check(arg, err);
        default:
                return rtn_errx(err, EINVAL, "not a sandbox option");
        }
}

int rt_spec_opt(int c, char *arg, struct rt_spec *s, struct rt_spec_opts *o,
                struct rtn_error *err) {
        uint64_t v;
        int r;
        switch (c) {
        case RT_OPT_ROOTFS:
        case RT_OPT_WORKSPACE:
        case RT_OPT_WORKSPACE_MODE:
        case RT_OPT_WORKSPACE_GIT:
        case RT_OPT_BIND:
        case RT_OPT_NET:
        case RT_OPT_HOSTNAME:
        case RT_OPT_TIMEOUT:
        case RT_OPT_DATA_DIR:
        case RT_OPT_ENV:
                r = spec_place_opt(c, arg, s, o, err);
                break;
        case RT_OPT_UPPER_SIZE:
                r = rt_parse_size(arg, "--upper-size", &s->upper_bytes, err);
                break;
        case RT_OPT_STORE_MAX:
                r = rt_parse_size(arg, "--store-max", &o->store_max, err);
                break;
        case RT_OPT_MEMORY_MAX:
                r = rt_parse_size(arg, "--memory-max", &s->memory_bytes, err);
                if (r >= 0 && s->memory_bytes == 0) /* a limit nothing can run under */
                        return rtn_errx(err, EINVAL, "--memory-max wants a size above 0");
                break;
        case RT_OPT_PIDS_MAX:
                if ((r = rt_parse_size(arg, "--pids-max", &v, err)) < 0)
                        return r;
                if (v > UINT32_MAX)
                        return rtn_errx(err, EINVAL, "--pids-max too large");
                s->pids_max = (uint32_t)v;
                o->pids_asked = true;
                break;
        case RT_OPT_ISOLATION:
                r = parse_isolation(arg, s, err);
                o->isolation_asked = true;
                break;
        case RT_OPT_SETENV:
                r = parse_setenv(arg, o, err);
                break;
        case RT_OPT_ENV_FILE:
                r = parse_env_file(arg, o, err);
                break;
        case RT_OPT_PROTECT:
                if (s->nprotect >= RT_PROTECT_PATHS_MAX)
                        return rtn_errx(err, E2BIG, "--protect: at most %d paths",
                                        RT_PROTECT_PATHS_MAX);
                if (!*arg)
                        return rtn_errx(err, EINVAL, "--protect wants a path");
                o->protect[s->nprotect++] = arg;
                s->protect = o->protect;
                r = 0;
                break;
        case RT_OPT_USER:
                r = rt_user_parse(arg, s, err);
                break;
        case RT_OPT_ALLOW_PTRACE:
                s->allow_ptrace = true;
                r = 0;
                break;
        case RT_OPT_ALLOW_NET:
                if ((r = netns_policy_add(&o->net, arg, err)) < 0)
                        rtn_err_wrap(err, "--allow-net");
                s->net_proxy = true;
                break;
        case RT_OPT_ALLOW_HOST_PORT:
                if ((r = netns_policy_add_host_port(&o->net, arg, err)) < 0)
                        rtn_err_wrap(err, "--allow-host-port");
                s->net_proxy = true;
                break;
        case RT_OPT_UPSTREAM_PROXY:
                r = netns_upstream_parse(&o->upstream, arg, err);
                break;
        case RT_OPT_NET_POLICY:
                r = netns_policy_load(&o->net, arg, err);
                s->net_proxy = true;
                break;
        case RT_OPT_SECRET:
        case RT_OPT_SECRET_FILE:
                if ((r = netns_secret_add(&o->secrets, arg, c == RT_OPT_SECRET_FILE, err)) < 0)
                        return r;
                /* The secret's host is allowed by it (ports 80 and 443). */
                if ((r = netns_policy_add(&o->net, o->secrets.s[o->secrets.n - 1].host, err)) < 0)
                        return rtn_err_wrap(err, "--secret");
                s->net_proxy = true;
                break;
        case RT_OPT_SECRET_HEADER:
                r = netns_secret_header(&o->secrets, arg, err);
                break;
        case RT_OPT_PUBLISH:
                if (o->npublish >= NETNS_PUBLISH_MAX)
                        return rtn_errx(err, E2BIG, "--publish: at most %d ports",
                                        NETNS_PUBLISH_MAX);
                if ((r = netns_port_parse(arg, &o->publish[o->npublish], err)) < 0)
                        return rtn_err_wrap(err, "--publish");
                o->npublish++;
                break;
        default:
                return 0;
        }
        return r < 0 ? r : 1;
}

/* A port --allow-host-port opens must not be one rtn itself listens on: a --publish host port
 * would lead the sandbox into a sandbox's server, and rtn serve --http's to an endpoint that
 * drives sandboxes. */
static int host_ports_check(const struct rt_spec *spec, const struct rt_spec_opts *o,
                            struct rtn_error *err) {
        if (o->net.nhost_ports && spec->net_none)
                return rtn_errx(err, EINVAL,
                                "--allow-host-port needs the sandbox's loopback: not with --net "
                                "none");
        if (o->net.nhost_ports && spec->isolation == INIT_ISOLATION_LANDLOCK)
                return rtn_errx(err, EINVAL,
                                "--allow-host-port needs a network namespace: not with "
                                "--isolation landlock (its commands use the host's network "
                                "directly)");
        for (size_t i = 0; i < o->npublish; i++)
                if (netns_policy_host_port(&o->net, o->publish[i].host_port))
                        return rtn_errx(err, EINVAL,
                                        "--allow-host-port %u: that port is rtn's own (--publish "
                                        "%s:%u:%u listens on it); open the port of the host's "
                                        "service instead",
                                        o->publish[i].host_port, o->publish[i].addr,
                                        o->publish[i].host_port, o->publish[i].sandbox_port);
        /* One rtn listens on now (rtn serve --http, another sandbox's --publish); the gate
         * asks again at each request, for one that comes later. */
        for (size_t i = 0; i < o->net.nhost_ports; i++)
                if (netns_port_rtns(o->net.host_ports[i]) > 0)
                        return rtn_errx(err, EINVAL,
                                        "--allow-host-port %u: that port is rtn's own (rtn serve "
                                        "--http or a --publish listens on it); open the port of "
                                        "the host's service instead",
                                        o->net.host_ports[i]);
        return 0;
}

int rt_spec_opts_check(const struct rt_spec *spec, const struct rt_spec_opts *o,
                       struct rtn_error *err) {
        int r = host_ports_check(spec, o, err);
        if (r < 0)
                return r;
        if (o->npublish && spec->net_none)
                return rtn_errx(err, EINVAL,
                                "--publish needs the sandbox's loopback: not with --net none");
        /* That mode shares the host's network: a server inside listens on the host already. */
        if (o->npublish && spec->isolation == INIT_ISOLATION_LANDLOCK)
                return rtn_errx(
                        err, EINVAL,
                        "--publish needs a network namespace: not with --isolation landlock "
                        "(its commands use the host's network directly)");
        return 0;
}

void rt_spec_opts_isolation(struct rt_spec *spec, struct rt_spec_opts *o) {
        /* The strongest isolation the host allows: named --isolation full fails closed. */
        char why[256];
        o->isolation_auto[0] = '\0';
        /* Not for options that need the namespaces (the Landlock mode refuses them, and in
         * it commands use the host's network, so --allow-net would widen to everything): the
         * start fails and says which option needs them, not what a mode nobody asked for
         * lacks. */
        const char *lacks, *needs = rt_spec_ns_option(spec, &lacks);
        if (!needs)
                needs = o->npublish ? "--publish" : o->net.nhost_ports ? "--allow-host-port" : NULL;
        if (spec->isolation == INIT_ISOLATION_FULL && !o->isolation_asked && needs &&
            rt_userns_denied(why, sizeof why)) {
                snprintf(o->isolation_auto, sizeof o->isolation_auto,
                         "user namespaces are denied here (%s), and %s needs them: the sandbox "
                         "will not start (rtn probe names what would allow them)",
                         why, needs);
        } else if (spec->isolation == INIT_ISOLATION_FULL && !o->isolation_asked &&
                   rt_userns_denied(why, sizeof why)) {
                spec->isolation = INIT_ISOLATION_LANDLOCK;
                snprintf(o->isolation_auto, sizeof o->isolation_auto,
                         "user namespaces are denied here (%s): rtn chose --isolation landlock "
                         "by itself (--isolation full refuses instead; rtn probe names what "
                         "would allow them)",
                         why);
        }
}

void rt_spec_opts_limits(struct rt_spec *spec, struct rt_spec_opts *o,
                         struct rt_limit_warnings *ret) {
        /* No pid namespace in the Landlock-only mode: RLIMIT_NPROC (per uid, counting the
         * caller's other processes too) is the only process limit there is. */
        if (spec->isolation == INIT_ISOLATION_LANDLOCK && spec->limits.nproc == 0)
                spec->limits.nproc = spec->pids_max;
        rt_limits_choose(spec, o->pids_asked, ret);
}

bool rt_spec_opts_fallback(struct rt_spec *spec, struct rt_spec_opts *o,
                           struct rt_limit_warnings *ret) {
        if (spec->isolation != INIT_ISOLATION_FULL || o->isolation_asked)
                return false;
        rt_spec_opts_isolation(spec, o);
        if (spec->isolation == INIT_ISOLATION_FULL)
                return false;
        rt_spec_opts_limits(spec, o, ret);
        return true;
}

int rt_spec_opts_env(const struct rt_spec_opts *o, struct rt_env *env, const struct rt_sandbox *sb,
                     uint32_t policy, bool tty, char *const *extra, struct rtn_error *err) {
        int r;
        rt_env_default(env, sb, policy, tty);
        for (size_t i = 0; o && init_policy_is_agent(policy) && i < o->nsetenv; i++)
                if ((r = rt_env_set(env, o->setenv[i], err)) < 0)
                        return r;
        if (init_policy_is_agent(policy) && sb->net_port && o && o->secrets.n &&
            (r = rt_env_secrets(env, &o->secrets, err)) < 0)
                return r;
        for (size_t i = 0; extra && extra[i]; i++)
                if ((r = rt_env_set(env, extra[i], err)) < 0)
                        return r;
        return 0;
}

int rt_spec_opts_gate(const struct rt_spec_opts *o, struct rt_spec *spec, struct netns_gate **ret,
                      struct rtn_error *err) {
        struct netns_gate *g = NULL;
        int r;
        *ret = NULL;
        if (!spec->net_proxy || !o)
                return 0;
        if ((r = netns_gate_new_policy(&o->net, &g, err)) < 0)
                return r;
        netns_gate_set_upstream(g, &o->upstream);
        if (o->secrets.n && (r = netns_gate_set_secrets(g, &o->secrets, err)) < 0) {
                netns_gate_free(g);
                return r;
        }
        spec->ca_pem = netns_gate_ca_pem(g);
        *ret = g;
        return 0;
}
