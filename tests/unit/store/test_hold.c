/* store/hold.c, live users: gc keeps a layer a sandbox holds (store_stack_get), a commit
 * refuses an upper a live session holds and a tip that moved since the upper was made, and the
 * holds go with the process that held them, even SIGKILLed. */
#include "tests/unit/store/helpers.h"

#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>

TestSuite(store_live, .init = t_setup, .fini = t_teardown);

static bool layer_exists(const char *id) {
        char p[128];
        snprintf(p, sizeof p, "data/layers/%s", id);
        return access(t_path(p), F_OK) == 0;
}

static void layer_of(struct store *s, const char *commit, char layer[STORE_ID_SIZE]) {
        struct store_commit_info c;
        struct rtn_error err = {0};
        cr_assert_eq(store_commit_read(s, commit, &c, NULL, 0, &err), 0, "%s", err.msg);
        memcpy(layer, c.layer, STORE_ID_SIZE);
}

/* The case: gc after a rollback removed a layer a running sandbox was reading.
 * (The reflog keeps it for 30 days anyway; an expiry of 0 is gc of a tip long left.) */
Test(store_live, gc_keeps_held_layers) {
        struct store *s = t_open("data");
        char a[STORE_ID_SIZE], b[STORE_ID_SIZE], lb[STORE_ID_SIZE], got[STORE_ID_SIZE];
        struct rtn_error err = {0};
        t_commit_files(s, "default", "a", a, (const char *[]){"f=a", NULL});
        t_commit_files(s, "default", "b", b, (const char *[]){"g=b", NULL});
        layer_of(s, b, lb);
        struct store_stack st;
        cr_assert_eq(store_stack_get(s, "default", &st, &err), 0, "%s", err.msg);
        cr_assert_str_eq(st.tip, b);
        cr_assert_eq(st.n, 2);
        cr_assert_eq(store_rollback(s, "default", a, got, &err), 0, "%s", err.msg);
        struct store_gc_stats gs;
        cr_assert_eq(store_gc_expire(s, 0, &gs, &err), 0, "%s", err.msg);
        cr_assert_eq(gs.commits, 1);
        cr_assert_eq(gs.layers, 0);
        cr_assert_eq(gs.held, 1);
        cr_assert(layer_exists(lb), "gc removed a layer a sandbox holds");
        char p[600];
        snprintf(p, sizeof p, "%s/g", st.paths[0]);
        cr_assert_str_eq(t_read(p), "b");
        struct store_verify_stats vs;
        cr_assert_eq(store_verify(s, &vs, &err), 0, "%s", err.msg); /* an unreferenced layer */
        store_stack_free(&st);
        cr_assert_eq(store_gc_expire(s, 0, &gs, &err), 0, "%s", err.msg);
        cr_assert_eq(gs.layers, 1);
        cr_assert_eq(gs.held, 0);
        cr_assert(!layer_exists(lb));
        snprintf(p, sizeof p, "data/locks/%s", lb);
        cr_assert_eq(access(t_path(p), F_OK), -1, "the lock file of a removed layer stays");
        store_close(s);
}

/* The holds are the holder's flocks: a holder SIGKILLed holds nothing. */
Test(store_live, holds_die_with_the_holder) {
        struct store *s = t_open("data");
        char a[STORE_ID_SIZE], b[STORE_ID_SIZE], lb[STORE_ID_SIZE], got[STORE_ID_SIZE];
        struct rtn_error err = {0};
        t_commit_files(s, "default", "a", a, (const char *[]){"f=a", NULL});
        t_commit_files(s, "default", "b", b, (const char *[]){"g=b", NULL});
        layer_of(s, b, lb);
        int p[2];
        cr_assert_eq(pipe(p), 0);
        pid_t pid = fork();
        if (pid == 0) {
                struct store *c;
                struct store_stack st;
                if (store_open(t_path("data"), &c, NULL) < 0 ||
                    store_stack_get(c, "default", &st, NULL) < 0)
                        _exit(1);
                if (write(p[1], "h", 1) != 1)
                        _exit(1);
                pause();
                _exit(0);
        }
        close(p[1]);
        char ch;
        cr_assert_eq(read(p[0], &ch, 1), 1);
        cr_assert_eq(store_rollback(s, "default", a, got, &err), 0, "%s", err.msg);
        struct store_gc_stats gs;
        cr_assert_eq(store_gc_expire(s, 0, &gs, &err), 0, "%s", err.msg);
        cr_assert_eq(gs.held, 1);
        kill(pid, SIGKILL);
        cr_assert_eq(waitpid(pid, NULL, 0), pid);
        cr_assert_eq(store_gc_expire(s, 0, &gs, &err), 0, "%s", err.msg);
        cr_assert_eq(gs.layers, 1);
        cr_assert(!layer_exists(lb));
        close(p[0]);
        store_close(s);
}

/* A stack read while gc removes one of its layers: the read notices and reads the new tip,
 * never returning a layer that is gone. */
Test(store_live, stack_never_holds_a_removed_layer) {
        struct store *s = t_open("data");
        char a[STORE_ID_SIZE], b[STORE_ID_SIZE], got[STORE_ID_SIZE];
        struct rtn_error err = {0};
        t_commit_files(s, "default", "a", a, (const char *[]){"f=a", NULL});
        for (int round = 0; round < 30; round++) {
                char f[16];
                snprintf(f, sizeof f, "g=%d", round);
                t_commit_files(s, "default", "b", b, (const char *[]){f, NULL});
                pid_t pid = fork();
                if (pid == 0) { /* the writer: rollback and remove b's layer */
                        struct store *w;
                        struct rtn_error e;
                        if (store_open(t_path("data"), &w, NULL) < 0 ||
                            store_rollback(w, "default", a, got, &e) < 0 ||
                            store_gc_expire(w, 0, NULL, &e) < 0)
                                _exit(1);
                        _exit(0);
                }
                struct store_stack st;
                cr_assert_eq(store_stack_get(s, "default", &st, &err), 0, "%s", err.msg);
                for (size_t i = 0; i < st.n; i++)
                        cr_assert_eq(access(st.paths[i], F_OK), 0, "round %d: %s is gone", round,
                                     st.paths[i]);
                int ws;
                cr_assert_eq(waitpid(pid, &ws, 0), pid);
                cr_assert(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
                for (size_t i = 0; i < st.n; i++)
                        cr_assert_eq(access(st.paths[i], F_OK), 0, "round %d: %s removed held",
                                     round, st.paths[i]);
                store_stack_free(&st);
        }
        store_close(s);
}

/* The case: a commit of an upper a running sandbox writes (rtn exec --keep's, a
 * server's) made a layer that no longer matched its id. Refused while the session's lock is
 * held; the owner of the session commits it passing the lock it holds. */
Test(store_live, commit_refuses_a_held_upper) {
        struct store *s = t_open("data");
        struct rtn_error err = {0};
        char *dir, id[STORE_ID_SIZE], up[600];
        int lock;
        cr_assert_eq(store_session_new(s, &dir, &lock, &err), 0, "%s", err.msg);
        snprintf(up, sizeof up, "%s/upper/f", dir);
        int fd = open(up, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        cr_assert_eq(write(fd, "x", 1), 1);
        close(fd);
        snprintf(up, sizeof up, "%s/upper", dir);
        cr_assert_eq(store_commit(s, "default", up, "m", id, &err), -EBUSY);
        cr_assert(strstr(err.msg, "in use"), "%s", err.msg);
        cr_assert_eq(access(up, F_OK), 0, "a refused commit moved the upper");
        int claim;
        cr_assert_eq(store_upper_claim(up, &claim, &err), -EBUSY);
        struct store_commit_opts o = {.msg = "m", .upper_lock = lock};
        cr_assert_eq(store_commit_with(s, "default", up, &o, id, &err), 0, "%s", err.msg);
        cr_assert_eq(access(up, F_OK), -1);
        close(lock);
        /* Released: anyone may take it. */
        cr_assert_eq(mkdir(up, 0755), 0);
        cr_assert_eq(store_upper_claim(up, &claim, &err), 0, "%s", err.msg);
        cr_assert_geq(claim, 0);
        close(claim);
        /* An upper outside a session dir has no lock to ask. */
        t_mkdir("plain");
        cr_assert_eq(store_upper_claim(t_path("plain"), &claim, &err), 0);
        cr_assert_eq(claim, -1);
        free(dir);
        store_close(s);
}

/* Two servers on one environment: the second commit names the tip its sandbox was built on,
 * which the first moved, and is refused; told to rebase, it commits on the new tip. */
Test(store_live, commit_refuses_a_moved_tip) {
        struct store *s = t_open("data");
        struct rtn_error err = {0};
        char a[STORE_ID_SIZE], b[STORE_ID_SIZE], c[STORE_ID_SIZE];
        t_commit_files(s, "default", "a", a, (const char *[]){"f=a", NULL});
        t_commit_files(s, "default", "b", b, (const char *[]){"f=b", NULL}); /* the first */
        t_mkdir("second");
        t_write("second/g", "2");
        struct store_commit_opts o = {.msg = "second", .parent = a, .upper_lock = -1};
        cr_assert_eq(store_commit_with(s, "default", t_path("second"), &o, c, &err), -ESTALE);
        cr_assert(strstr(err.msg, "moved") && strstr(err.msg, "nothing was committed"), "%s",
                  err.msg);
        cr_assert_eq(access(t_path("second/g"), F_OK), 0);
        o.parent = b;
        cr_assert_eq(store_commit_with(s, "default", t_path("second"), &o, c, &err), 0, "%s",
                     err.msg);
        struct store_commit_info info;
        cr_assert_eq(store_commit_read(s, c, &info, NULL, 0, &err), 0);
        cr_assert_str_eq(info.parent, b);
        /* An env without commits: the parent is "". */
        t_mkdir("fresh");
        t_write("fresh/h", "1");
        o.parent = "";
        cr_assert_eq(store_commit_with(s, "new", t_path("fresh"), &o, c, &err), 0, "%s", err.msg);
        store_close(s);
}
