/* Sandbox specs and command environments: defaults, and the checks on user-given parts
 * (bind destinations, hostname, KEY=VALUE settings) made before anything is opened. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/sandbox_dirs.h"
#include "netns/netns.h"
#include "runtime/runtime.h"

void rt_spec_init(struct rt_spec *spec) {
        memset(spec, 0, sizeof *spec);
        spec->upper_bytes = RT_DEFAULT_UPPER_BYTES;
        spec->upper_fs = -1;
        spec->pids_max = RT_DEFAULT_PIDS_MAX;
        spec->isolation = INIT_ISOLATION_FULL;
}

static int check_abs_path(const char *p, const char *what, struct rtn_error *err) {
        if (!p || p[0] != '/')
                return rtn_errx(err, EINVAL, "%s must be an absolute path: %s", what, p ? p : "");
        if (strlen(p) > 1024)
                return rtn_errx(err, ENAMETOOLONG, "%s is too long", what);
        for (const char *s = p; *s; s++) {
                if (s[0] == '/' && s[1] == '.' && s[2] == '.' && (s[3] == '/' || s[3] == '\0'))
                        return rtn_errx(err, EINVAL, "%s may not contain '..': %s", what, p);
                if (s[0] == ',' || (unsigned char)s[0] < 0x20)
                        return rtn_errx(err, EINVAL,
                                        "%s may not contain ',' or control "
                                        "characters: %s",
                                        what, p);
        }
        return 0;
}

int rt_spec_check(const struct rt_spec *spec, struct rtn_error *err) {
        int r;
        if (rt_cgroup_mode() < 0)
                return rtn_errx(err, EINVAL, "RTN_CGROUP=%.64s is not auto, always or never",
                                getenv("RTN_CGROUP"));
        if (spec->nbinds > RT_MAX_BINDS)
                return rtn_errx(err, E2BIG, "at most %d binds", RT_MAX_BINDS);
        if (spec->net_none && spec->net_proxy)
                return rtn_errx(err, EINVAL, "--net none leaves no way out for --allow-net");
        for (size_t i = 0; i < spec->nbinds; i++) {
                const char *d = spec->binds[i].dst;
                if ((r = check_abs_path(d, "bind destination", err)) < 0)
                        return r;
                if ((r = rt_mount_point_check(d, false, err)) < 0)
                        return r;
        }
        const char *hn = spec->hostname;
        if (hn) {
                size_t len = strlen(hn);
                if (len == 0 || len > 64)
                        return rtn_errx(err, EINVAL, "hostname must be 1-64 characters");
                for (const char *s = hn; *s; s++)
                        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
                              (*s >= '0' && *s <= '9') || *s == '-' || *s == '.'))
                                return rtn_errx(err, EINVAL, "invalid hostname: %s", hn);
        }
        if (spec->upper_bytes < (1u << 20))
                return rtn_errx(err, EINVAL, "upper size must be at least 1 MiB");
        if (spec->pids_max < RT_MIN_PIDS_MAX || spec->pids_max > (1u << 22))
                return rtn_errx(err, EINVAL, "pids max must be %d..%u", RT_MIN_PIDS_MAX, 1u << 22);
        if (spec->workspace_mode == RT_WS_OVERLAY && !spec->workspace)
                return rtn_errx(err, EINVAL, "--workspace-mode overlay needs --workspace DIR");
        if (spec->workspace_git_rw && spec->workspace_mode == RT_WS_OVERLAY)
                return rtn_errx(err, EINVAL,
                                "--workspace-git rw is for a live workspace: an overlay's .git "
                                "is writable inside already (rtn apply refuses its changes)");
        if (spec->isolation == INIT_ISOLATION_LANDLOCK) {
                const char *why, *opt = rt_spec_ns_option(spec, &why);
                if (opt)
                        return rtn_errx(err, EINVAL,
                                        "%s needs the sandbox's namespaces: not with --isolation "
                                        "landlock (%s)",
                                        opt, why);
                /* Nothing to build these with: no mount namespace, no overlay. */
                if (spec->nlayers || spec->upper_keep)
                        return rtn_errx(err, EINVAL,
                                        "--isolation landlock has no overlay: no layers or kept "
                                        "upper");
        }
        return 0;
}

const char *rt_spec_ns_option(const struct rt_spec *spec, const char **why) {
        static const char *const net = "its commands use the host's network directly",
                                 *mounts = "it runs on the host itself, with no mounts of its own";
        const char *opt = NULL;
        *why = NULL;
        if (spec->net_proxy)
                opt = "--allow-net", *why = net;
        else if (spec->net_none)
                opt = "--net none", *why = net;
        else if (spec->allow_ptrace)
                opt = "--allow-ptrace", *why = "the host's processes would be in reach";
        else if (spec->user_set)
                opt = "--user", *why = "commands run as you there";
        else if (spec->workspace_mode == RT_WS_OVERLAY)
                opt = "--workspace-mode overlay", *why = "it has no overlay";
        else if (spec->workspace_git_rw)
                opt = "--workspace-git rw", *why = mounts;
        else if (spec->nbinds)
                opt = "--bind", *why = mounts;
        else if (spec->rootfs && strcmp(spec->rootfs, "host") != 0)
                opt = "--rootfs", *why = mounts;
        else if (spec->hostname)
                opt = "--hostname", *why = "it has no uts namespace";
        return opt;
}

static int env_put(struct rt_env *env, const char *key, const char *val) {
        size_t need = strlen(key) + 1 + strlen(val) + 1;
        if (env->used + need > sizeof env->storage)
                return -E2BIG;
        size_t klen = strlen(key);
        for (size_t i = 0; i < env->n; i++) {
                if (!strncmp(env->vars[i], key, klen) && env->vars[i][klen] == '=') {
                        env->vars[i] = env->storage + env->used;
                        goto write;
                }
        }
        if (env->n >= RT_ENV_MAX)
                return -E2BIG;
        env->vars[env->n++] = env->storage + env->used;
        env->vars[env->n] = NULL;
write:
        snprintf(env->storage + env->used, need, "%s=%s", key, val);
        env->used += need;
        return 0;
}

/* Host variables that describe the user's terminal or locale and nothing else. */
static const char *const env_pass[] = {"LANG", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TZ"};

static bool env_value_ok(const char *v) {
        if (strlen(v) > 128)
                return false;
        for (; *v; v++)
                if ((unsigned char)*v < 0x20 || *v == 0x7f)
                        return false;
        return true;
}

static const char *const proxy_vars[] = {RT_PROXY_VARS};
static const char *const no_proxy_vars[] = {RT_NO_PROXY_VARS};
static const char *const ca_vars[] = {RT_CA_BUNDLE_VARS};

static void env_proxy(struct rt_env *env, uint16_t port) {
        char url[40];
        snprintf(url, sizeof url, "http://127.0.0.1:%u", port);
        for (size_t i = 0; i < sizeof proxy_vars / sizeof proxy_vars[0]; i++)
                env_put(env, proxy_vars[i], url);
        for (size_t i = 0; i < sizeof no_proxy_vars / sizeof no_proxy_vars[0]; i++)
                env_put(env, no_proxy_vars[i], RT_NO_PROXY_LIST);
        env_put(env, "NODE_USE_ENV_PROXY", "1");
}

void rt_env_default(struct rt_env *env, const struct rt_sandbox *sb, uint32_t policy, bool tty) {
        env->n = 0;
        env->used = 0;
        env->vars[0] = NULL;
        bool root_call = policy == INIT_POLICY_PROVISION || policy == INIT_POLICY_AGENT_ROOT;
        bool root = root_call || sb->idmap.agent_uid == 0;
        env_put(env, "PATH", RTN_SANDBOX_PATH);
        env_put(env, "HOME", root_call ? "/root" : sb->home);
        env_put(env, "USER", root ? "root" : "rtn");
        env_put(env, "LOGNAME", root ? "root" : "rtn");
        env_put(env, "SHELL", "/bin/sh");
        if (policy == INIT_POLICY_AGENT_ROOT ||
            (policy == INIT_POLICY_AGENT && sb->idmap.agent_root))
                env_put(env, "APT_CONFIG", RT_APT_ROOT_CONF);
        if (sb->isolation == INIT_ISOLATION_LANDLOCK)
                env_put(env, "TMPDIR", sb->host_tmp); /* /tmp is the host's, not writable */
        if (init_policy_is_agent(policy) && sb->net_port)
                env_proxy(env, sb->net_port);
        const char *term = getenv("TERM");
        env_put(env, "TERM", tty && term && env_value_ok(term) ? term : "dumb");
        for (size_t i = 0; i < sizeof env_pass / sizeof env_pass[0]; i++) {
                const char *v = getenv(env_pass[i]);
                if (v && env_value_ok(v))
                        env_put(env, env_pass[i], v);
        }
}

int rt_env_secrets(struct rt_env *env, const struct netns_secrets *ss, struct rtn_error *err) {
        char v[NETNS_SECRET_NAME_MAX + sizeof NETNS_SECRET_PLACEHOLDER_PREFIX];
        for (size_t i = 0; i < ss->n; i++) {
                snprintf(v, sizeof v, NETNS_SECRET_PLACEHOLDER_PREFIX "%s", ss->s[i].name);
                if (env_put(env, ss->s[i].name, v) < 0)
                        return rtn_errx(err, E2BIG, "environment too large");
        }
        for (size_t i = 0; i < sizeof ca_vars / sizeof ca_vars[0]; i++)
                if (env_put(env, ca_vars[i], RT_CA_BUNDLE) < 0)
                        return rtn_errx(err, E2BIG, "environment too large");
        return 0;
}

int rt_env_set(struct rt_env *env, const char *kv, struct rtn_error *err) {
        const char *eq = strchr(kv, '=');
        if (!eq || eq == kv)
                return rtn_errx(err, EINVAL, "environment setting must be KEY=VALUE: %s", kv);
        char key[256];
        size_t klen = (size_t)(eq - kv);
        if (klen >= sizeof key)
                return rtn_errx(err, EINVAL, "environment name too long");
        memcpy(key, kv, klen);
        key[klen] = '\0';
        for (size_t i = 0; i < klen; i++)
                if (!(key[i] == '_' || (key[i] >= 'A' && key[i] <= 'Z') ||
                      (key[i] >= 'a' && key[i] <= 'z') ||
                      (i > 0 && key[i] >= '0' && key[i] <= '9')))
                        return rtn_errx(err, EINVAL, "invalid environment name: %s", key);
        if (env_put(env, key, eq + 1) < 0)
                return rtn_errx(err, E2BIG, "environment too large");
        return 0;
}

int rt_parse_ws_mode(struct rt_spec *s, const char *arg, struct rtn_error *err) {
        if (!strcmp(arg, "live"))
                s->workspace_mode = RT_WS_LIVE;
        else if (!strcmp(arg, "overlay"))
                s->workspace_mode = RT_WS_OVERLAY;
        else
                return rtn_errx(err, EINVAL, "--workspace-mode must be live or overlay, got %s",
                                arg);
        return 0;
}

const char *rt_ws_mode_name(enum rt_ws_mode m) {
        return m == RT_WS_OVERLAY ? "overlay" : "live";
}

/* SRC:DST[:ro|rw], where "\\:" is a ':' of a path and "\\\\" a backslash. Splits at the
 * unescaped ':'s into dst's fields, unescaping; returns the number of fields (at most 3) or -1
 * for a backslash before anything else. */
static int split_bind(const char *arg, char *fields[3], size_t cap) {
        int n = 0;
        size_t o = 0;
        for (const char *s = arg;; s++) {
                if (*s == '\\') {
                        if (s[1] != ':' && s[1] != '\\')
                                return -1;
                        s++;
                } else if (*s == ':' || *s == '\0') {
                        fields[n][o] = '\0';
                        if (*s == '\0' || ++n == 3)
                                return *s ? 4 : n + 1;
                        o = 0;
                        continue;
                }
                if (o + 1 < cap)
                        fields[n][o++] = *s;
        }
}

/* The binds' paths, cleaned (rt_bind_path_clean): the spec keeps pointers into it for as
 * long as the process runs. */
static char bind_text[RT_MAX_BINDS][3][4096];

int rt_parse_bind(struct rt_spec *s, char *arg, struct rtn_error *err) {
        if (s->nbinds >= RT_MAX_BINDS)
                return rtn_errx(err, E2BIG, "at most %d --bind options", RT_MAX_BINDS);
        struct rt_bind *b = &s->binds[s->nbinds];
        char **f = (char *[3]){bind_text[s->nbinds][0], bind_text[s->nbinds][1],
                               bind_text[s->nbinds][2]};
        if (strlen(arg) >= sizeof bind_text[0][0])
                return rtn_errx(err, ENAMETOOLONG, "--bind %.64s...: too long", arg);
        int n = split_bind(arg, f, sizeof bind_text[0][0]);
        if (n < 0)
                return rtn_errx(err, EINVAL,
                                "--bind %s: a backslash escapes only ':' (\\:) or itself "
                                "(\\\\)",
                                arg);
        if (n < 2 || n > 3 || !f[0][0] || !f[1][0])
                return rtn_errx(err, EINVAL,
                                "--bind wants SRC:DST[:ro|rw] (a ':' in a path is written "
                                "\\:), got %s",
                                arg);
        b->rw = true;
        b->mode_given = n == 3;
        if (n == 3) {
                if (!strcmp(f[2], "ro"))
                        b->rw = false;
                else if (strcmp(f[2], "rw") != 0)
                        return rtn_errx(err, EINVAL, "--bind mode must be ro or rw, got %s", f[2]);
        }
        int r;
        if ((r = rt_bind_path_clean(f[0], sizeof bind_text[0][0], true, "--bind source", err)) <
                    0 ||
            (r = rt_bind_path_clean(f[1], sizeof bind_text[0][0], false, "--bind mount point",
                                    err)) < 0)
                return r;
        b->src = f[0];
        b->dst = f[1];
        s->nbinds++;
        return 0;
}
