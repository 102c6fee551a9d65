/* Fault injection across store/commit.c, gc.c, import.c: a child runs commit, gc, import or
 * rollback and is SIGKILLed at a random moment within the time the operation takes, 50 times
 * each. After every kill the store must open (recovering), verify clean, and still hold every
 * commit a child reported as done, and the reflog must still list every tip the environment
 * had. */
#include "tests/unit/store/helpers.h"

#include <signal.h>
#include <sys/wait.h>
#include <time.h>

/* The rounds are what reaches an operation's short steps: a kill lands in a step with the odds
 * of its share of the time. Measured under the sanitizers on a loaded machine (the library
 * built with -finstrument-functions, the killed child's chain of store functions read after
 * each kill; three runs of 50 rounds each), import's check_chain was first reached at rounds
 * 36 and 35 (and not in the third run), gc's sweep_commits at 15 and 34 and its fsync of a
 * swept directory at 30 (in one run): fewer rounds would leave those steps untested in most
 * runs. */
#define ROUNDS 50

/* The timeout only guards against a hang: 50 rounds of fork, kill and check take 5 to 8 s of
 * CPU under the sanitizers, and their fsyncs wait longer than that on a loaded machine. */
TestSuite(store_faults, .init = t_setup, .fini = t_teardown, .timeout = 240);

enum op { OP_COMMIT, OP_GC, OP_IMPORT, OP_ROLLBACK };

static char rb_target[STORE_ID_SIZE]; /* OP_ROLLBACK's target: the first commit kept */

/* An upper of NFILES small files (40 where the operation copies, hashes or removes them), and
 * with big a 2 MiB sparse file too, which makes the operation that copies and hashes it last
 * long enough for the kill to land in each of its steps. Only the uppers the killed commit
 * takes carry it (and the import's source, made once): every other layer is hashed again by
 * each round's store_verify, so 2 MiB in each would make the checks grow with the square of
 * the rounds without covering more of the operation. */
static void make_upper(const char *rel, int round, int nfiles, bool big) {
        char p[128], c[64];
        t_mkdir(rel);
        for (int i = 0; i < nfiles; i++) {
                snprintf(p, sizeof p, "%s/f%02d", rel, i);
                snprintf(c, sizeof c, "round %d file %d", round, i);
                t_write(p, c);
        }
        if (!big)
                return;
        snprintf(p, sizeof p, "%s/big", rel);
        int fd = open(t_path(p), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        cr_assert_eq(pwrite(fd, &round, sizeof round, 2 << 20), (ssize_t)sizeof round);
        close(fd);
}

/* In the child: runs the operation, reports a commit id on fd when it completed. */
static void child(enum op op, int fd, int round) {
        struct store *s;
        struct rtn_error err;
        char id[STORE_ID_SIZE] = "";
        char up[32];
        snprintf(up, sizeof up, "up%d", round);
        if (store_open(t_path("data"), &s, &err) < 0)
                _exit(2);
        int r;
        if (op == OP_COMMIT)
                r = store_commit(s, "default", t_path(up), "m", id, &err);
        else if (op == OP_GC) /* the reflog would keep the garbage */
                r = store_gc_expire(s, 0, NULL, &err);
        else if (op == OP_ROLLBACK)
                r = store_rollback(s, "default", rb_target, id, &err);
        else
                r = store_import(s, "imported", t_path("src.tar.zst"), 0, id, &err);
        if (r >= 0 && write(fd, id, STORE_ID_SIZE) != STORE_ID_SIZE)
                _exit(3);
        _exit(r >= 0 ? 0 : 1);
}

static double now(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Runs one round; returns the child's duration if it ran to the end. */
static double round_once(enum op op, int round, long kill_after_us, char done[STORE_ID_SIZE]) {
        int p[2];
        cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
        double t0 = now();
        pid_t pid = fork();
        if (pid == 0) {
                close(p[0]);
                child(op, p[1], round);
        }
        close(p[1]);
        if (kill_after_us >= 0) {
                usleep((useconds_t)kill_after_us);
                kill(pid, SIGKILL);
        }
        int st;
        cr_assert_eq(waitpid(pid, &st, 0), pid);
        double dt = now() - t0;
        ssize_t n = read(p[0], done, STORE_ID_SIZE);
        close(p[0]);
        if (n != STORE_ID_SIZE)
                done[0] = '\0';
        cr_assert(WIFSIGNALED(st) || WEXITSTATUS(st) == 0, "round %d exited %d", round,
                  WEXITSTATUS(st));
        return dt;
}

struct listed {
        char (*ids)[STORE_ID_SIZE];
        size_t n;
};

static int list_cb(const struct store_reflog_entry *e, void *ud) {
        struct listed *l = ud;
        l->ids = realloc(l->ids, (l->n + 1) * STORE_ID_SIZE);
        cr_assert_not_null(l->ids);
        memcpy(l->ids[l->n++], e->id, STORE_ID_SIZE);
        return 0;
}

static bool listed_has(const struct listed *l, const char *id) {
        for (size_t i = 0; i < l->n; i++)
                if (!strcmp(l->ids[i], id))
                        return true;
        return false;
}

/* env "default-rb": default, whose tip a rollback moved (no ancestry to check). */
static void check(const char (*kept)[STORE_ID_SIZE], size_t n, const char *env) {
        struct store *s = t_open("data");
        struct rtn_error err = {0};
        struct store_verify_stats vs;
        cr_assert_eq(store_verify(s, &vs, &err), 0, "%s", err.msg);
        struct store_commit_info c;
        for (size_t i = 0; i < n; i++)
                if (kept[i][0])
                        cr_assert_eq(store_commit_read(s, kept[i], &c, NULL, 0, &err), 0,
                                     "committed %s lost: %s", kept[i], err.msg);
        char tip[STORE_ID_SIZE];
        if (n && kept[n - 1][0] && strcmp(env, "default-rb")) {
                cr_assert_eq(store_tip(s, env, tip, &err), 0);
                cr_assert_eq(store_is_ancestor(s, kept[n - 1], tip), 1);
        }
        if (!strcmp(env, "default-rb"))
                env = "default";
        struct listed l = {0};
        cr_assert_eq(store_reflog(s, env, list_cb, &l, &err), 0, "%s", err.msg);
        for (size_t i = 0; i < n; i++)
                if (kept[i][0] && strcmp(env, "imported"))
                        cr_assert(listed_has(&l, kept[i]), "tip %s left the reflog", kept[i]);
        free(l.ids);
        store_close(s);
}

static void seed(void) {
        struct store *src = t_open("src"), *s = t_open("data");
        char id[STORE_ID_SIZE];
        struct rtn_error err = {0};
        for (int i = 0; i < 3; i++) {
                char up[32];
                snprintf(up, sizeof up, "seed%d", i);
                make_upper(up, 1000 + i, 40, true);
                cr_assert_eq(store_commit(src, "default", t_path(up), "s", id, &err), 0);
        }
        cr_assert_eq(store_export(src, "default", NULL, t_path("src.tar.zst"), &err), 0);
        store_close(src);
        store_close(s);
}

/* An unreachable commit and layer (committed to "side", then rolled back), plus a tmp/
 * leftover, for gc to remove. */
static void make_garbage(int r) {
        struct store *s = t_open("data");
        struct rtn_error err = {0};
        char first[STORE_ID_SIZE], second[STORE_ID_SIZE], up[32];
        snprintf(up, sizeof up, "side%da", r);
        make_upper(up, 2000 + r, 40, false);
        cr_assert_eq(store_commit(s, "side", t_path(up), "a", first, &err), 0, "%s", err.msg);
        snprintf(up, sizeof up, "side%db", r);
        make_upper(up, 3000 + r, 40, false);
        cr_assert_eq(store_commit(s, "side", t_path(up), "b", second, &err), 0, "%s", err.msg);
        cr_assert_eq(store_rollback(s, "side", first, second, &err), 0, "%s", err.msg);
        store_close(s);
        snprintf(up, sizeof up, "data/tmp/junk%d", r);
        make_upper(up, r, 40, false);
}

/* A commit made by this process (never killed), whose id must stay in the reflog. A rollback
 * moves the tip and the reflog and never opens a layer, so one file is all its upper needs:
 * each round's store_verify hashes every one of these layers again. */
static void commit_kept(int r, char *ret, char (*kept)[STORE_ID_SIZE], size_t *nk) {
        struct store *s = t_open("data");
        struct rtn_error err = {0};
        char up[32];
        snprintf(up, sizeof up, "rb%d", r);
        make_upper(up, 5000 + r, 1, false);
        cr_assert_eq(store_commit(s, "default", t_path(up), "rb", kept[*nk], &err), 0, "%s",
                     err.msg);
        if (ret)
                memcpy(ret, kept[*nk], STORE_ID_SIZE);
        (*nk)++;
        store_close(s);
}

static void fault_loop(enum op op) {
        static char kept[2 * ROUNDS + 2][STORE_ID_SIZE];
        size_t nk = 0;
        if (op == OP_IMPORT) /* the import's source; no other operation reads it */
                seed();
        else
                store_close(t_open("data"));
        srand((unsigned)getpid());
        if (op == OP_COMMIT || op == OP_GC) /* what the first commit takes */
                make_upper("up0", 0, 40, op == OP_COMMIT);
        if (op == OP_GC) { /* committed data gc must keep */
                struct store *s = t_open("data");
                struct rtn_error err = {0};
                cr_assert_eq(store_commit(s, "default", t_path("up0"), "keep", kept[nk++], &err),
                             0);
                store_close(s);
                make_garbage(0);
        }
        if (op == OP_ROLLBACK) /* rolled back to again and again, over new commits */
                commit_kept(0, rb_target, kept, &nk);
        double full = round_once(op, 0, -1, kept[nk]);
        nk += op != OP_GC && op != OP_ROLLBACK && kept[nk][0] != '\0';
        const char *env = op == OP_IMPORT     ? "imported"
                          : op == OP_ROLLBACK ? "default-rb"
                                              : "default";
        for (int r = 1; r <= ROUNDS; r++) {
                char up[32];
                snprintf(up, sizeof up, "up%d", r);
                if (op == OP_COMMIT)
                        make_upper(up, r, 40, true);
                if (op == OP_GC)
                        make_garbage(r);
                if (op == OP_ROLLBACK)
                        commit_kept(r, NULL, kept, &nk);
                long us = (long)(full * 1.2e6 * rand() / RAND_MAX);
                char done[STORE_ID_SIZE];
                round_once(op, r, us, done);
                if (done[0] && op != OP_GC && op != OP_ROLLBACK)
                        memcpy(kept[nk++], done, STORE_ID_SIZE);
                check(kept, nk, env);
                snprintf(up, sizeof up, "up%d", r);
                (void)store_rm_rf_at(AT_FDCWD, t_path(up));
        }
}

Test(store_faults, commit_killed) {
        fault_loop(OP_COMMIT);
}

Test(store_faults, gc_killed) {
        fault_loop(OP_GC);
}

Test(store_faults, import_killed) {
        fault_loop(OP_IMPORT);
}

Test(store_faults, rollback_killed) {
        fault_loop(OP_ROLLBACK);
}
