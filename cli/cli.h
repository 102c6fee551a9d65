/* The rtn verbs implemented in cli/, one file each (argv[0] is the verb; each returns an exit
 * code). `rtn serve` is mcp_cmd_serve (serve/serve.h). */
#pragma once

int cli_cmd_exec(int argc, char **argv);
int cli_cmd_probe(int argc, char **argv);
int cli_cmd_pkg(int argc, char **argv);
int cli_cmd_rootfs(int argc, char **argv);

/* The store's verbs (their shared options: cli/storeopts.h). */
int cli_cmd_commit(int argc, char **argv);
int cli_cmd_log(int argc, char **argv);
int cli_cmd_reflog(int argc, char **argv);
int cli_cmd_rollback(int argc, char **argv);
int cli_cmd_diff(int argc, char **argv);
int cli_cmd_reset(int argc, char **argv);
int cli_cmd_undo(int argc, char **argv);
/* rtn apply [--dry-run]: writes the overlay workspace's pending changes to its host dir. */
int cli_cmd_apply(int argc, char **argv);
int cli_cmd_gc(int argc, char **argv);
int cli_cmd_export(int argc, char **argv);
int cli_cmd_import(int argc, char **argv);
int cli_cmd_store(int argc, char **argv);
int cli_cmd_ps(int argc, char **argv);
int cli_cmd_enter(int argc, char **argv);
int cli_cmd_env(int argc, char **argv);
