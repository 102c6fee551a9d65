/* The rtn verbs implemented in cli/ (argv[0] is the verb; each returns an exit code). The
 * store's are in cli/store.h, `rtn serve` is mcp_cmd_serve (mcp/mcp.h). */
#pragma once

int rt_cmd_exec(int argc, char **argv);
int rt_cmd_probe(int argc, char **argv);
int rt_cmd_pkg(int argc, char **argv);
int rt_cmd_rootfs(int argc, char **argv);
