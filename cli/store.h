/* The store's CLI verbs: rtn commit|log|reflog|rollback|diff|gc|export|import and `rtn store
 * verify`. Each takes its own argv (argv[0] is the verb), parses its options with
 * getopt_long (--data-dir DIR, --env NAME and the verb's own), prints results to stdout
 * and errors as "rtn: ..." to stderr, and returns the exit code: 0 ok, 1 user error
 * (bad arguments, unknown or ambiguous commit, refused import, failed verify), 125 internal
 * error. */
#pragma once

int rt_cmd_commit(int argc, char **argv);
int rt_cmd_log(int argc, char **argv);
int rt_cmd_reflog(int argc, char **argv);
int rt_cmd_rollback(int argc, char **argv);
int rt_cmd_diff(int argc, char **argv);
int rt_cmd_reset(int argc, char **argv);
/* rtn apply [--dry-run]: writes the overlay workspace's pending changes to its host dir. */
int rt_cmd_apply(int argc, char **argv);
int rt_cmd_gc(int argc, char **argv);
int rt_cmd_export(int argc, char **argv);
int rt_cmd_import(int argc, char **argv);
int rt_cmd_store(int argc, char **argv);
