/* The tool table: every tool docs/tools.md names exists with a description, valid output schema
 * and annotations; optional groups are filtered; the typed argument getters. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "mcp/internal.h"
#include "serve/serve.h"

static const char *const design_tools[] = {
        "shell_run",       "shell_list",       "env_status",        "env_reset",
        "env_discard",     "env_commit",       "env_snapshot_list", "env_rollback",
        "env_gc",          "env_diff",         "pkg_install",       "pkg_query",
        "shell_job_start", "shell_job_status", "shell_job_wait",    "shell_job_output",
        "shell_job_kill",  "shell_job_list",   "bind_host_dir",     "file_read",
        "file_write",      "file_edit",        "file_list",         "file_search",
        "python_exec",     "http_get",         "http_post",         "workspace_apply",
        "sandbox_new",     "sandbox_fork",     "sandbox_list",      "sandbox_close",
        "env_history",     "env_undo",         "env_redo",
};

/* The calls that can change a sandbox's files: each takes a checkpoint first (env_undo). */
static const char *const changing_tools[] = {
        "shell_run",       "python_exec", "file_write",      "file_edit",
        "shell_job_start", "pkg_install", "workspace_apply", "env_rollback",
};

Test(mcp_tool_find, the_changing_tools_take_a_checkpoint) {
        size_t n = 0;
        for (size_t i = 0; i < serve_tool_table.n; i++) {
                const struct mcp_tool *t = &serve_tool_table.rows[i];
                bool want = false;
                for (size_t k = 0; k < sizeof changing_tools / sizeof changing_tools[0]; k++)
                        want |= !strcmp(t->name, changing_tools[k]);
                cr_assert_eq(!!(t->backend & SERVE_TOOL_CHANGES), want, "%s", t->name);
                n += want;
        }
        cr_assert_eq(n, sizeof changing_tools / sizeof changing_tools[0]);
}
#define ALL_TOOLS (MCP_TOOLS_HTTP | MCP_TOOLS_WS_OVERLAY)

Test(mcp_tool_find, every_design_tool_exists_with_valid_schemas) {
        cr_assert_eq(mcp_tool_count(&serve_tool_table, ALL_TOOLS),
                     sizeof design_tools / sizeof design_tools[0]);
        for (size_t i = 0; i < sizeof design_tools / sizeof design_tools[0]; i++) {
                const struct mcp_tool *t =
                        mcp_tool_find(&serve_tool_table, ALL_TOOLS, design_tools[i]);
                cr_assert_not_null(t, "%s missing", design_tools[i]);
                cr_assert(t->title && t->description && strlen(t->description) > 20, "%s", t->name);
                struct rtn_json_doc d;
                const char *why = NULL;
                cr_assert_eq(rtn_json_parse(t->output_schema, strlen(t->output_schema), 4096, 16,
                                            &d, &why),
                             0, "%s outputSchema: %s", t->name, why);
                cr_assert(rtn_json_str_eq(&d, rtn_json_obj_get(&d, 0, "type"), "object"));
                rtn_json_doc_free(&d);
                if (t->hints & MCP_HINT_READ_ONLY)
                        cr_assert(!(t->hints & MCP_HINT_DESTRUCTIVE),
                                  "%s read-only and destructive", t->name);
                /* the full entry, as tools/list sends it, is valid JSON */
                struct rtn_json_buf b = RTN_JSON_BUF_INIT(0);
                mcp_tool_write(&b, t, MCP_V2025_11_25);
                cr_assert_eq(b.err, 0);
                cr_assert_eq(rtn_json_parse(b.data, b.len, 1 << 16, 16, &d, &why), 0, "%s: %s",
                             t->name, why);
                rtn_json_doc_free(&d);
                rtn_json_buf_free(&b);
        }
}

Test(mcp_tool_find, http_tools_need_their_flag) {
        cr_assert_null(mcp_tool_find(&serve_tool_table, 0, "http_get"));
        cr_assert_null(mcp_tool_find(&serve_tool_table, 0, "http_post"));
        cr_assert_not_null(mcp_tool_find(&serve_tool_table, MCP_TOOLS_HTTP, "http_get"));
        cr_assert_eq(mcp_tool_count(&serve_tool_table, 0),
                     mcp_tool_count(&serve_tool_table, MCP_TOOLS_HTTP) - 2);
        cr_assert_null(mcp_tool_at(&serve_tool_table, 0, mcp_tool_count(&serve_tool_table, 0)));
        cr_assert_str_eq(mcp_tool_at(&serve_tool_table, 0, 0)->name, "shell_run");
}

/* A session of rtn serve --http has no bind_host_dir, and a call is told what to use. */
Test(mcp_tool_find, http_session_has_no_bind_host_dir) {
        cr_assert_not_null(mcp_tool_find(&serve_tool_table, 0, "bind_host_dir"));
        cr_assert_null(mcp_tool_find(&serve_tool_table, MCP_TOOLS_HTTP_SESSION, "bind_host_dir"));
        cr_assert_eq(mcp_tool_count(&serve_tool_table, MCP_TOOLS_HTTP_SESSION),
                     mcp_tool_count(&serve_tool_table, 0) - 1);
        const char *why =
                mcp_tool_off_why(&serve_tool_table, MCP_TOOLS_HTTP_SESSION, "bind_host_dir");
        cr_assert(why && strstr(why, "--workspace-root"), "%s", why ? why : "(null)");
        cr_assert(strstr(mcp_tool_off_why(&serve_tool_table, 0, "http_get"), "--http-tools"));
        cr_assert_null(mcp_tool_off_why(&serve_tool_table, 0, "shell_run"));
        cr_assert_null(mcp_tool_off_why(&serve_tool_table, 0, "no_such_tool"));
}

/* The methods of the 2026-07-28 revision, from protocol.c's one table. */
Test(mcp_method_modern, only_the_revisions_methods) {
        cr_assert(mcp_method_modern("tools/call"));
        cr_assert(mcp_method_modern("tools/list"));
        cr_assert(mcp_method_modern("server/discover"));
        cr_assert_not(mcp_method_modern("initialize"));
        cr_assert_not(mcp_method_modern("ping"));
        cr_assert_not(mcp_method_modern("logging/setLevel"));
        cr_assert_not(mcp_method_modern("no/such"));
}

/* workspace_apply exists only for an overlay workspace (rtn serve --workspace-mode overlay). */
Test(mcp_tool_find, workspace_apply_needs_its_flag) {
        cr_assert_null(mcp_tool_find(&serve_tool_table, 0, "workspace_apply"));
        cr_assert_null(mcp_tool_find(&serve_tool_table, MCP_TOOLS_HTTP, "workspace_apply"));
        const struct mcp_tool *t =
                mcp_tool_find(&serve_tool_table, MCP_TOOLS_WS_OVERLAY, "workspace_apply");
        cr_assert_not_null(t);
        cr_assert(t->hints & MCP_HINT_DESTRUCTIVE, "it writes the user's directory");
        cr_assert_eq(mcp_tool_count(&serve_tool_table, MCP_TOOLS_WS_OVERLAY),
                     mcp_tool_count(&serve_tool_table, 0) + 1);
}

/* The texts say which paths a reset cannot undo (docs/security-invariants.md, 15). */
Test(mcp_tool_find, texts_name_what_reset_cannot_undo) {
        static const char *const told[] = {"shell_run",    "env_reset",    "env_discard",
                                           "env_commit",   "env_rollback", "env_diff",
                                           "bind_host_dir"};
        for (size_t i = 0; i < sizeof told / sizeof told[0]; i++) {
                const char *d = mcp_tool_find(&serve_tool_table, 0, told[i])->description;
                cr_assert(strstr(d, "live") || strstr(d, "Live"), "%s: %s", told[i], d);
        }
}

static struct mcp_args *args_of(const char *js) {
        struct rtn_json_doc d;
        cr_assert_eq(rtn_json_parse(js, strlen(js), 1000, 10, &d, NULL), 0);
        struct mcp_args *a;
        cr_assert_eq(mcp_args_new(&d, 0, &a), 0);
        rtn_json_doc_free(&d);
        return a;
}

Test(mcp_args_str, typed_getters) {
        struct mcp_args *a = args_of("{\"s\":\"x\\ty\",\"i\":-3,\"b\":true,\"v\":[\"a\",\"b\"],"
                                     "\"m\":{\"K\":\"V\",\"E\":\"\"}}");
        char *s;
        cr_assert_eq(mcp_args_str(a, "s", &s), 0);
        cr_assert_str_eq(s, "x\ty");
        free(s);
        cr_assert_eq(mcp_args_str(a, "i", &s), -EINVAL);
        cr_assert_eq(mcp_args_str(a, "nope", &s), -ENOENT);
        int64_t i;
        cr_assert_eq(mcp_args_int(a, "i", &i), 0);
        cr_assert_eq(i, -3);
        bool b;
        cr_assert_eq(mcp_args_bool(a, "b", &b), 0);
        cr_assert(b);
        char **v;
        size_t n;
        cr_assert_eq(mcp_args_strv(a, "v", &v, &n), 0);
        cr_assert_eq(n, 2);
        cr_assert_str_eq(v[1], "b");
        cr_assert_null(v[2]);
        mcp_strv_free(v);
        cr_assert_eq(mcp_args_map(a, "m", "=", &v), 0);
        cr_assert_str_eq(v[0], "K=V");
        cr_assert_str_eq(v[1], "E=");
        cr_assert_null(v[2]);
        mcp_strv_free(v);
        cr_assert_eq(mcp_args_strv(a, "m", &v, &n), -EINVAL);
        size_t len;
        cr_assert_eq(mcp_args_json(a, &len)[0], '{');
        mcp_args_free(a);
        a = args_of("{}");
        cr_assert_eq(mcp_args_int(a, "i", &i), -ENOENT);
        mcp_args_free(a);
}

Test(mcp_args_validate, limits_of_every_kind) {
        const struct mcp_tool *t = mcp_tool_find(&serve_tool_table, 0, "pkg_install");
        static const struct {
                const char *js;
                int r;
        } cases[] = {
                {"{\"packages\":[\"jq\"]}", 0},
                {"{\"packages\":[]}", -EINVAL},
                {"{\"packages\":[\"jq\",1]}", -EINVAL},
                {"{\"packages\":\"jq\"}", -EINVAL},
                {"{\"packages\":[\"jq\"],\"timeout\":86401}", -EINVAL},
                {"{\"packages\":[\"jq\"],\"timeout\":86400}", 0},
                {"{\"packages\":[\"jq\"],\"timeout\":true}", -EINVAL},
        };
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
                struct rtn_json_doc d;
                char why[256] = "";
                cr_assert_eq(rtn_json_parse(cases[i].js, strlen(cases[i].js), 1000, 10, &d, NULL),
                             0);
                cr_assert_eq(mcp_args_validate(t, &d, 0, why, sizeof why), cases[i].r, "%s: %s",
                             cases[i].js, why);
                rtn_json_doc_free(&d);
        }
        char why[256];
        cr_assert_eq(mcp_args_validate(mcp_tool_find(&serve_tool_table, 0, "env_status"), NULL, -1,
                                       why, sizeof why),
                     0);
        cr_assert_eq(mcp_args_validate(t, NULL, -1, why, sizeof why), -EINVAL);
        cr_assert_str_eq(why, "missing required argument \"packages\"");
}

/* Every refusal names what was expected and what came: the JSON type for a wrong type, the
 * allowed values for an enum (never its length), the number or size that was out of range. */
Test(mcp_args_validate, errors_name_the_real_problem) {
        static const struct {
                const char *tool, *js, *why;
        } cases[] = {
                {"shell_run", "{\"command\":1}", "command: must be a string, got a number"},
                {"shell_run", "{\"command\":true}", "command: must be a string, got a boolean"},
                {"shell_run", "{\"command\":[\"ls\"]}", "command: must be a string, got an array"},
                {"shell_run", "{\"command\":{}}", "command: must be a string, got an object"},
                {"shell_run", "{\"command\":null}", "command: must be a string, got null"},
                {"shell_run", "{\"command\":\"\"}", "command: must be 1..131072 bytes long, got 0"},
                {"shell_run", "{\"command\":\"a\\u0000b\"}",
                 "command: must be a string without NUL characters"},
                {"shell_run", "{\"command\":\"x\",\"timeout\":\"5\"}",
                 "timeout: must be an integer in 1..86400, got a string"},
                {"shell_run", "{\"command\":\"x\",\"timeout\":0}",
                 "timeout: must be an integer in 1..86400, got 0"},
                {"shell_run", "{\"command\":\"x\",\"timeout\":1.5}",
                 "timeout: must be an integer in 1..86400, got 1.5"},
                {"shell_run", "{\"command\":\"x\",\"env\":[]}",
                 "env: must be an object of strings, got an array"},
                {"shell_run", "{\"command\":\"x\",\"env\":{\"A\":\"1\",\"B\":2}}",
                 "env: values must be strings, got a number (entry 2)"},
                {"file_read", "{\"path\":\"/a\",\"encoding\":\"hex\"}",
                 "encoding: must be one of \"text\" \"base64\", got \"hex\""},
                {"file_read", "{\"path\":\"/a\",\"encoding\":\"utf-8-sig\"}",
                 "encoding: must be one of \"text\" \"base64\", got \"utf-8-sig\""},
                {"file_read", "{\"path\":\"/a\",\"encoding\":16}",
                 "encoding: must be one of \"text\" \"base64\", got a number"},
                {"bind_host_dir", "{\"host_path\":\"/x\",\"mount_point\":\"/m\",\"mode\":\"rwx\"}",
                 "mode: must be one of \"ro\" \"rw\", got \"rwx\""},
                {"file_edit",
                 "{\"path\":\"/"
                 "a\",\"old_string\":\"x\",\"new_string\":\"y\",\"replace_all\":\"yes\"}",
                 "replace_all: must be true or false, got a string"},
                {"pkg_install", "{\"packages\":\"jq\"}",
                 "packages: must be an array of strings, got a string"},
                {"pkg_install", "{\"packages\":[]}", "packages: must have 1..64 items, got 0"},
                {"pkg_install", "{\"packages\":[\"jq\",7]}",
                 "packages: items must be strings, got a number (item 2)"},
        };
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
                struct rtn_json_doc d;
                char why[256] = "";
                cr_assert_eq(rtn_json_parse(cases[i].js, strlen(cases[i].js), 1000, 10, &d, NULL),
                             0);
                const struct mcp_tool *t = mcp_tool_find(&serve_tool_table, 0, cases[i].tool);
                cr_assert_not_null(t);
                cr_assert_eq(mcp_args_validate(t, &d, 0, why, sizeof why), -EINVAL, "%s",
                             cases[i].js);
                cr_assert_str_eq(why, cases[i].why, "%s", cases[i].js);
                rtn_json_doc_free(&d);
        }
}
