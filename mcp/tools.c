/* The lookups over a backend's tool table (struct mcp_tool_table; rtn serve's is
 * serve/tools.c) and a tool's entry of tools/list. The input schema sent in tools/list and
 * the validation in args.c are both generated from the same struct mcp_arg_spec rows, so
 * what the client is told and what the server enforces cannot drift apart. A tool whose
 * `requires` flags are off, or one of whose `excludes` flags is on, does not exist at all:
 * it is neither listed nor callable. */
#include <string.h>

#include "mcp/internal.h"

static bool enabled(const struct mcp_tool *t, unsigned flags) {
        return !(t->excludes & flags) && (t->requires & flags) == t->requires;
}

const char *mcp_tool_off_why(const struct mcp_tool_table *table, unsigned flags, const char *name) {
        for (size_t i = 0; table && i < table->n; i++) {
                const struct mcp_tool *t = &table->rows[i];
                if (strcmp(t->name, name) || enabled(t, flags))
                        continue;
                if (t->excludes & flags)
                        return "rtn serve --http does not offer it: every session would share "
                               "the host directory; start the server with --workspace-root DIR "
                               "to give each session a workspace of its own";
                if (t->requires & MCP_TOOLS_HTTP)
                        return "start rtn serve with --http-tools to offer it";
                return "it needs --workspace-mode overlay";
        }
        return NULL;
}

size_t mcp_tool_count(const struct mcp_tool_table *table, unsigned flags) {
        size_t n = 0;
        for (size_t i = 0; table && i < table->n; i++)
                n += enabled(&table->rows[i], flags);
        return n;
}

const struct mcp_tool *mcp_tool_at(const struct mcp_tool_table *table, unsigned flags,
                                   size_t index) {
        for (size_t i = 0; table && i < table->n; i++)
                if (enabled(&table->rows[i], flags) && index-- == 0)
                        return &table->rows[i];
        return NULL;
}

const struct mcp_tool *mcp_tool_find(const struct mcp_tool_table *table, unsigned flags,
                                     const char *name) {
        for (size_t i = 0; table && i < table->n; i++)
                if (enabled(&table->rows[i], flags) && !strcmp(table->rows[i].name, name))
                        return &table->rows[i];
        return NULL;
}

static void write_arg_schema(struct rtn_json_buf *b, const struct mcp_arg_spec *a) {
        static const char *const type_names[] = {[MCP_ARG_STRING] = "string",
                                                 [MCP_ARG_INT] = "integer",
                                                 [MCP_ARG_BOOL] = "boolean",
                                                 [MCP_ARG_STRV] = "array",
                                                 [MCP_ARG_MAP] = "object"};
        rtn_json_key(b, a->name);
        rtn_json_obj_begin(b);
        rtn_json_kv_str(b, "type", type_names[a->type]);
        rtn_json_kv_str(b, "description", a->description);
        switch (a->type) {
        case MCP_ARG_STRING:
                if (a->enumv) {
                        rtn_json_key(b, "enum");
                        rtn_json_arr_begin(b);
                        for (const char *const *e = a->enumv; *e; e++)
                                rtn_json_str(b, *e);
                        rtn_json_arr_end(b);
                } else {
                        rtn_json_kv_int(b, "minLength", a->min);
                        rtn_json_kv_int(b, "maxLength", a->max);
                }
                break;
        case MCP_ARG_INT:
                rtn_json_kv_int(b, "minimum", a->min);
                rtn_json_kv_int(b, "maximum", a->max);
                break;
        case MCP_ARG_BOOL:
                break;
        case MCP_ARG_STRV:
                rtn_json_kv_raw(b, "items", "{\"type\":\"string\"}", 17);
                rtn_json_kv_int(b, "minItems", a->min);
                rtn_json_kv_int(b, "maxItems", a->max);
                break;
        case MCP_ARG_MAP:
                rtn_json_kv_raw(b, "additionalProperties", "{\"type\":\"string\"}", 17);
                rtn_json_kv_int(b, "maxProperties", a->max);
                break;
        }
        rtn_json_obj_end(b);
}

static void write_input_schema(struct rtn_json_buf *b, const struct mcp_tool *t) {
        rtn_json_obj_begin(b);
        rtn_json_kv_str(b, "type", "object");
        rtn_json_key(b, "properties");
        rtn_json_obj_begin(b);
        for (size_t i = 0; i < t->nargs; i++)
                write_arg_schema(b, &t->args[i]);
        rtn_json_obj_end(b);
        rtn_json_key(b, "required");
        rtn_json_arr_begin(b);
        for (size_t i = 0; i < t->nargs; i++)
                if (t->args[i].required)
                        rtn_json_str(b, t->args[i].name);
        rtn_json_arr_end(b);
        rtn_json_kv_bool(b, "additionalProperties", false);
        rtn_json_obj_end(b);
}

/* title and outputSchema arrived in 2025-06-18, annotations in 2025-03-26; older clients get
 * the fields they know. */
void mcp_tool_write(struct rtn_json_buf *b, const struct mcp_tool *t, enum mcp_version v) {
        rtn_json_obj_begin(b);
        rtn_json_kv_str(b, "name", t->name);
        if (v >= MCP_V2025_06_18)
                rtn_json_kv_str(b, "title", t->title);
        rtn_json_kv_str(b, "description", t->description);
        rtn_json_key(b, "inputSchema");
        write_input_schema(b, t);
        if (v >= MCP_V2025_06_18)
                rtn_json_kv_raw(b, "outputSchema", t->output_schema, strlen(t->output_schema));
        if (v >= MCP_V2025_03_26) {
                rtn_json_key(b, "annotations");
                rtn_json_obj_begin(b);
                rtn_json_kv_str(b, "title", t->title);
                rtn_json_kv_bool(b, "readOnlyHint", t->hints & MCP_HINT_READ_ONLY);
                rtn_json_kv_bool(b, "destructiveHint", t->hints & MCP_HINT_DESTRUCTIVE);
                rtn_json_kv_bool(b, "idempotentHint", t->hints & MCP_HINT_IDEMPOTENT);
                rtn_json_kv_bool(b, "openWorldHint", t->hints & MCP_HINT_OPEN_WORLD);
                rtn_json_obj_end(b);
        }
        rtn_json_obj_end(b);
}
