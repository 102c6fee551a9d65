/* What the store's verbs share (cli/storeopts.c). Each verb takes its own argv (argv[0] is
 * the verb), parses its options with cli_store_parse (--data-dir DIR, --env NAME and the
 * verb's own), prints results to stdout and errors to stderr as "rtn VERB: ...", and
 * returns the exit code (docs/rtn.1, EXIT STATUS): 0 ok, 1 refused (unknown or ambiguous
 * commit, refused import, failed verify, what the user can fix), 125 a usage error or
 * what rtn failed at. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "runtime/runtime.h"
#include "store/store.h"

/* A store verb: its name, its options beyond --data-dir, --env and --help, its operands. */
struct cli_store_verb {
        const char *name; /* "log", "store verify" */
        const char *shorts; /* its short options for getopt, "m:" */
        const char *longopts; /* its long options, space-separated: "message upper" */
        const char *usage; /* --help's text */
        int min_ops, max_ops;
        const char *operand; /* what is missing when fewer than min_ops are given */
};

#define CLI_FORCE_MAX 256

struct cli_store_opts {
        const char *verb; /* for the error prefix */
        const char *data_dir, *env, *msg, *upper, *out;
        unsigned long long max_bytes;
        bool dry_run;
        bool allow_protected; /* rtn apply: write the protected paths its operands name */
        bool patch; /* rtn diff -p: the workspace's changes with their content */
        bool list; /* rtn undo --list */
        const char *force[CLI_FORCE_MAX]; /* rtn apply --force PATH: conflicts to write */
        size_t nforce;
        int64_t reflog_expire; /* seconds */
        int positional; /* index of the first operand in argv */
};

/* Parses v's options and counts its operands into o: -1 to go on, else the exit code the
 * verb returns at once (0 after --help, RTN_EXIT_FAILURE after a usage error, both printed). */
int cli_store_parse(int argc, char **argv, const struct cli_store_verb *v,
                    struct cli_store_opts *o);
/* Prints "rtn VERB: err"; returns 1 for what the user can fix, 125 for what rtn failed at. */
int cli_store_fail(const struct cli_store_opts *o, const struct rtn_error *err);
/* Checks o->env and opens o->data_dir's store: 0, or -1 with err set. ro: for a verb that
 * only reads, which neither creates nor writes the data dir (store_open_ro: *s is NULL
 * when there is no store yet). */
int cli_store_open(const struct cli_store_opts *o, bool ro, struct store **s,
                   struct rtn_error *err);
/* For a verb that lists an environment's history: 0 when there is one to list, or it is the
 * default environment (empty until the first commit); else ENOENT in err, so that a typo in
 * --env is an error, not an empty list. s may be NULL (no store yet). */
int cli_store_env_known(const struct cli_store_opts *o, struct store *s, struct rtn_error *err);
/* The id map the store calls run under: *ret NULL for root (no user namespace needed). */
int cli_store_idmap(struct rt_idmap *m, const struct rt_idmap **ret, struct rtn_error *err);
/* Prints prefix then path to stdout, quoted where it holds anything but text. */
int cli_print_path(const char *prefix, const char *path);

/* A path of the overlay workspace as the user gives it (`.envrc`, `/workspace/.vscode/`,
 * `./a//b`) as rtn's walks name it (`a/b`): malloc'd, or NULL for a path that is empty,
 * climbs with "..", or when memory runs out. */
const char *cli_ws_path(const char *arg);

/* The lines every store verb's --help ends with. */
#define CLI_STORE_OPTS_USAGE                                                                       \
        "  --data-dir DIR        the store (default $RTN_DATA_DIR, $XDG_DATA_HOME/rtn,\n"          \
        "                        ~/.local/share/rtn)\n"                                            \
        "  --env NAME            the environment (default: default)\n"
