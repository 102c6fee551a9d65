/* env_status's "host_dirs": each host directory bound into the sandbox (the workspace, the
 * --binds, what bind_host_dir added), how writes there behave, and what the sandbox did to
 * keep host-run files out of the agent's reach (runtime/sandbox/protect.c,
 * docs/security-invariants.md 13): the entries made read-only, the directories pinned, and what
 * live mode cannot protect. */
#include <string.h>

#include "common/json.h"
#include "serve/serve.h"

#define SHOWN_MAX 64 /* protected paths listed per bind; the count says how many there are */

static const char live_note[] =
        "live: writes reach the host directory at once and env_reset cannot undo them. "
        "Every git dir (.git) and every file host programs run by themselves (.envrc, .vscode, "
        ".mcp.json, shell rc files ...) present when the sandbox started is read-only and cannot "
        "be moved or replaced, nor can the directories holding them, and so is every path the "
        "repositories' git configuration names as a program or more configuration (hooks, "
        "included files, filters, aliases) and every --protect path; ones the agent creates "
        "(a new .git, .envrc, .vscode ...) are not protected in live mode and reach the host";

static const struct rt_protect_bind *find(const struct rt_sandbox *sb, const char *dst) {
        for (uint32_t i = 0; sb && sb->protect && i < sb->protect->n; i++)
                if (!strcmp(sb->protect->binds[i].mount_point, dst))
                        return &sb->protect->binds[i];
        return NULL;
}

static void protections(struct rtn_json_buf *b, const struct rt_protect_bind *p) {
        rtn_json_kv_str(b, "git",
                        p->whole    ? "read-only (the directory is a git dir)"
                        : p->git_rw ? "writable, but for what git reads configuration or "
                                      "programs from (--workspace-git rw)"
                                    : "read-only");
        rtn_json_key(b, "protected");
        rtn_json_arr_begin(b);
        size_t off = 0;
        for (uint32_t i = 0; i < p->nlisted && i < SHOWN_MAX; i++) {
                rtn_json_str(b, p->list + off);
                off += strlen(p->list + off) + 1;
        }
        rtn_json_arr_end(b);
        rtn_json_kv_int(b, "protected_count", p->whole ? 1 : p->nprotected);
        rtn_json_kv_int(b, "pinned_dirs", p->npinned);
}

static void one(struct rtn_json_buf *b, const struct rt_sandbox *sb, bool alive, const char *dst,
                const char *src, bool rw) {
        rtn_json_obj_begin(b);
        rtn_json_kv_str(b, "mount_point", dst);
        rtn_json_kv_str(b, "host_path", src);
        rtn_json_kv_str(b, "mode", "live");
        rtn_json_kv_str(b, "access", rw ? "rw" : "ro");
        const struct rt_protect_bind *p = rw && alive ? find(sb, dst) : NULL;
        if (p)
                protections(b, p);
        rtn_json_kv_str(b, "note",
                        !rw     ? "read-only: nothing can be written there"
                        : alive ? live_note
                                : "the sandbox is not running");
        rtn_json_obj_end(b);
}

static const char overlay_note[] =
        "overlay: writes stay in the sandbox; env_diff lists them, env_reset drops them, and "
        "workspace_apply writes them to the host directory, refusing set-id files, device "
        "nodes, symlinks that leave it, the files host programs run by themselves, the paths "
        "git's configuration (as it will be once applied) and --protect name, and files "
        "changed on the host meanwhile";

/* An overlay workspace (runtime/session/wsover.h): nothing to protect inside, changes pending. */
static void overlay(struct rtn_json_buf *b, int64_t pending, const char *src) {
        rtn_json_obj_begin(b);
        rtn_json_kv_str(b, "mount_point", "/workspace");
        rtn_json_kv_str(b, "host_path", src);
        rtn_json_kv_str(b, "mode", "overlay");
        rtn_json_kv_str(b, "access", "rw");
        rtn_json_kv_int(b, "pending_changes", pending);
        rtn_json_kv_str(b, "note", overlay_note);
        rtn_json_obj_end(b);
}

void serve_json_host_dirs(struct rtn_json_buf *b, struct serve *sv, int64_t ws_pending) {
        const struct rt_spec *spec = rt_session_spec(sv->sess);
        const struct rt_sandbox *sb = rt_session_sandbox(sv->sess);
        bool alive = rt_session_alive(sv->sess);
        rtn_json_key(b, "host_dirs");
        rtn_json_arr_begin(b);
        if (spec->workspace && spec->workspace_mode == RT_WS_OVERLAY)
                overlay(b, ws_pending, spec->workspace);
        else if (spec->workspace)
                one(b, sb, alive, "/workspace", spec->workspace, true);
        for (size_t i = 0; i < spec->nbinds; i++)
                one(b, sb, alive, spec->binds[i].dst, spec->binds[i].src, spec->binds[i].rw);
        rtn_json_arr_end(b);
}
