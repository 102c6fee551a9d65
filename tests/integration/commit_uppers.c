/* Test helper: commits uppers one after another to an environment in one process, as that
 * many `rtn commit --upper DIR -m MSG` would (the same store_open, caller's id mapping and
 * commit as its owner, rt_userns_as_owner), for a suite whose filling commits are setup,
 * not what it tests: each `rtn commit` is a start of rtn, an open of the store and, for a
 * caller with a subordinate range, a user namespace made with newuidmap and newgidmap. Here
 * one user namespace makes all the commits.
 *   usage: commit_uppers DATA_DIR ENV PREFIX FIRST LAST
 * commits PREFIX<i> with the message c<i>, for i from FIRST to LAST.
 * Exit: 0 all committed; 1 a commit failed (named on stderr); 2 usage. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "runtime/runtime.h"
#include "store/store.h"

struct job {
        struct store *s;
        const char *env, *prefix;
        long first, last;
};

static int commit_all(void *arg, char *out, size_t outlen, struct rtn_error *err) {
        const struct job *j = arg;
        for (long i = j->first; i <= j->last; i++) {
                char up[4096], msg[32], id[STORE_ID_SIZE];
                snprintf(up, sizeof up, "%s%ld", j->prefix, i);
                snprintf(msg, sizeof msg, "c%ld", i);
                struct store_commit_opts co = {.msg = msg, .upper_lock = -1};
                int r = store_commit_with(j->s, j->env, up, &co, id, err);
                if (r < 0)
                        return rtn_err_wrap(err, "commit %s", up);
        }
        return 0;
}

int main(int argc, char **argv) {
        if (argc != 6) {
                fprintf(stderr, "usage: commit_uppers DATA_DIR ENV PREFIX FIRST LAST\n");
                return 2;
        }
        struct rtn_error err = {0};
        struct rt_idmap m;
        const struct rt_idmap *mp = NULL;
        struct job j = {
                .env = argv[2], .prefix = argv[3], .first = atol(argv[4]), .last = atol(argv[5])};
        if (store_open(argv[1], &j.s, &err) < 0) {
                fprintf(stderr, "commit_uppers: %s\n", err.msg);
                return 1;
        }
        int r = geteuid() == 0 ? 0 : rt_idmap_choose(&m, &err);
        if (r == 0 && geteuid() != 0)
                mp = &m;
        if (r == 0)
                r = rt_userns_as_owner(mp, commit_all, &j, NULL, 0, &err);
        store_close(j.s);
        if (r < 0) {
                fprintf(stderr, "commit_uppers: %s\n", err.msg);
                return 1;
        }
        return 0;
}
