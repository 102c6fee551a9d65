/* `rtn serve`: bind_host_dir. The host path is checked on the trusted side
 * (rt_hostpath_check: user data only, no symlink on the way, identity recorded); the bind is
 * added to the session's spec, where it stays for every later restart of the sandbox, and
 * the sandbox is restarted on the same layers and upper so the bind appears. A mount cannot
 * be attached to a running sandbox from here (mounts of rtn's namespace cannot be moved into
 * the sandbox's, see runtime/sandbox/sandbox.c child_main), so running commands and jobs are
 * killed: docs/tools.md says so. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/json.h"
#include "serve/serve.h"

static int keep_str(struct serve *sv, const char *s, const char **ret) {
        char **v = realloc(sv->bind_strs, (sv->nbind_strs + 1) * sizeof *v);
        if (!v)
                return -ENOMEM;
        sv->bind_strs = v;
        if (!(v[sv->nbind_strs] = strdup(s)))
                return -ENOMEM;
        *ret = v[sv->nbind_strs++];
        return 0;
}

void serve_bind_free(struct serve *sv) {
        for (size_t i = 0; i < sv->nbind_strs; i++)
                free(sv->bind_strs[i]);
        free(sv->bind_strs);
        sv->bind_strs = NULL;
        sv->nbind_strs = 0;
}

static int check(struct serve *sv, const char *host, const char *dst, struct rt_hostpath *hp,
                 struct rtn_error *err) {
        const struct rt_spec *spec = rt_session_spec(sv->sess);
        int r = rt_mount_point_check(dst, true, err);
        if (r < 0)
                return r;
        if (spec->nbinds >= RT_MAX_BINDS)
                return rtn_errx(err, E2BIG, "the sandbox has %d binds, the most it takes",
                                RT_MAX_BINDS);
        for (size_t i = 0; i < spec->nbinds; i++)
                if (!strcmp(spec->binds[i].dst, dst))
                        return rtn_errx(err, EEXIST, "%s is already a bind mount point", dst);
        /* Roots: what the user named on the command line, never what an agent added. */
        const char *roots[RT_MAX_BINDS + 1];
        size_t n = 0;
        const struct rt_spec *user = &sv->scfg.spec;
        if (user->workspace)
                roots[n++] = user->workspace;
        for (size_t i = 0; i < user->nbinds; i++)
                roots[n++] = user->binds[i].src;
        struct rt_hostpath_policy pol = {.home = rt_hostpath_home(),
                                         .data_dir = store_data_dir(sv->store),
                                         .roots = roots,
                                         .nroots = n,
                                         .agent = true};
        return rt_hostpath_check(host, &pol, hp, err);
}

/* Restarts the sandbox with the new bind; on failure takes the bind out again. */
static int restart(struct serve *sv, struct rtn_error *err) {
        rt_session_stop_for(sv->sess, "bind_host_dir restarted the sandbox to add a bind");
        int r = rt_session_ensure(sv->sess, err);
        if (r < 0) {
                struct rtn_error ignored = {0};
                rt_session_spec(sv->sess)->nbinds--;
                (void)rt_session_ensure(sv->sess, &ignored);
        }
        return r;
}

int serve_bind_call(struct serve *sv, struct mcp_call *call, const char *tool,
                    const struct mcp_args *a) {
        char *host = NULL, *dst = NULL, *mode = NULL;
        struct rtn_error err = {0};
        struct rt_hostpath hp = {.fd = -1};
        int r = -EINVAL;
        if (mcp_args_str(a, "host_path", &host) < 0 || mcp_args_str(a, "mount_point", &dst) < 0 ||
            mcp_args_str(a, "mode", &mode) < 0)
                goto out;
        r = 0;
        /* The same spelling --bind takes: a trailing '/' and '.' components dropped. */
        char hbuf[4096], dbuf[4096];
        snprintf(hbuf, sizeof hbuf, "%s", host);
        snprintf(dbuf, sizeof dbuf, "%s", dst);
        struct rt_bind nb = {.rw = !strcmp(mode, "rw"), .mode_given = true, .src = hbuf};
        if (rt_bind_path_clean(hbuf, sizeof hbuf, false, "host_path", &err) < 0 ||
            rt_bind_path_clean(dbuf, sizeof dbuf, false, "mount_point", &err) < 0 ||
            check(sv, hbuf, dbuf, &hp, &err) < 0) {
                mcp_call_finish_error(call, "bind_host_dir: %s", err.msg);
                goto out;
        }
        close(hp.fd);
        if (rt_bind_mode(&nb, &hp, &err) < 0) {
                mcp_call_finish_error(call, "bind_host_dir: %s", err.msg);
                goto out;
        }
        struct rt_spec *spec = rt_session_spec(sv->sess);
        struct rt_bind *b = &spec->binds[spec->nbinds];
        memset(b, 0, sizeof *b);
        if ((r = keep_str(sv, hbuf, &b->src)) < 0 || (r = keep_str(sv, dbuf, &b->dst)) < 0)
                goto out;
        r = 0;
        b->rw = nb.rw;
        b->file = nb.file;
        b->mode_given = true;
        b->dev = hp.dev;
        b->ino = hp.ino;
        spec->nbinds++;
        if (restart(sv, &err) < 0) {
                mcp_call_finish_error(call,
                                      "bind_host_dir: the sandbox did not start with the "
                                      "bind (it runs without it): %s",
                                      err.msg);
                goto out;
        }
        struct rtn_json_buf j = RTN_JSON_BUF_INIT(0);
        rtn_json_obj_begin(&j);
        rtn_json_kv_str(&j, "host_path", b->src);
        rtn_json_kv_str(&j, "mount_point", b->dst);
        rtn_json_kv_str(&j, "mode", b->rw ? "rw" : "ro");
        rtn_json_obj_end(&j);
        mcp_call_finish_json(call, &j, NULL, false);
out:
        free(host);
        free(dst);
        free(mode);
        return r;
}
