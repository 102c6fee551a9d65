/* The blocked-call report on rtn's side (runtime/sandbox/blocked.c): INIT_MSG_BLOCKED comes from
 * inside the sandbox, so the decoder rejects wrong sizes, counts and record numbers; names
 * come from rtn's table, a comm is cut to printable ASCII; the stderr lines and the JSON. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>

#include "common/json.h"
#include "runtime/sandbox/blocked.h"

static struct init_blocked msg(uint32_t nrec, uint64_t total) {
        struct init_blocked m = {
                .hdr = {.type = INIT_MSG_BLOCKED, .len = sizeof m, .id = 1},
                .nrec = nrec,
                .total = total,
        };
        return m;
}

Test(rt_blocked_decode, names_and_counts) {
        struct init_blocked m = msg(2, 5);
        m.rec[0] = (struct init_blocked_rec){.nr = SYS_mount, .pid = 7, .count = 1};
        strcpy(m.rec[0].comm, "mount");
        m.rec[1] = (struct init_blocked_rec){.nr = 999999, .pid = 9, .count = 3};
        strcpy(m.rec[1].comm, "x");
        struct rt_blocked b;
        cr_assert_eq(rt_blocked_decode(&m, sizeof m, &b), 0);
        cr_assert_eq(b.n, 2);
        cr_assert_str_eq(b.rec[0].syscall, "mount");
        cr_assert_str_eq(b.rec[1].syscall, "syscall 999999");
        cr_assert_eq(rt_blocked_more(&b), 1);
        char line[256];
        cr_assert_gt(rt_blocked_line(&b, 0, line, sizeof line), 0);
        cr_assert_str_eq(line, "blocked mount(2) by pid 7 (mount): EPERM");
        rt_blocked_line(&b, 1, line, sizeof line);
        cr_assert_str_eq(line, "blocked syscall 999999 by pid 9 (x): EPERM (3 times)");
        rt_blocked_line(&b, 2, line, sizeof line);
        cr_assert_str_eq(line, "… and 1 more blocked call");
        cr_assert_eq(rt_blocked_line(&b, 3, line, sizeof line), -1);
}

Test(rt_blocked_decode, every_notified_kind_is_named) {
        cr_assert_str_eq(rt_blocked_syscall_name(SYS_ptrace), "ptrace");
        cr_assert_str_eq(rt_blocked_syscall_name(SYS_bpf), "bpf");
        cr_assert_str_eq(rt_blocked_syscall_name(SYS_unshare), "unshare");
        cr_assert_str_eq(rt_blocked_syscall_name(SYS_ioctl), "ioctl");
        cr_assert_str_eq(rt_blocked_syscall_name(SYS_personality), "personality");
        cr_assert_null(rt_blocked_syscall_name(SYS_read), "allowed: never notified");
        cr_assert_null(rt_blocked_syscall_name(SYS_clone3), "ENOSYS: never notified");
        cr_assert_null(rt_blocked_syscall_name(SYS_socket), "EAFNOSUPPORT: never notified");
}

Test(rt_blocked_decode, comm_is_printable_ascii) {
        struct init_blocked m = msg(2, 2);
        m.rec[0] = (struct init_blocked_rec){.nr = SYS_mount, .pid = 2, .count = 1};
        memcpy(m.rec[0].comm, "\x1b[31m\xff\"x\\", 10);
        m.rec[1] = (struct init_blocked_rec){.nr = SYS_mount, .pid = 3, .count = 1};
        memset(m.rec[1].comm, 'a', sizeof m.rec[1].comm); /* no NUL at all */
        struct rt_blocked b;
        cr_assert_eq(rt_blocked_decode(&m, sizeof m, &b), 0);
        cr_assert_str_eq(b.rec[0].comm, "?[31m?\"x\\");
        cr_assert_eq(strlen(b.rec[1].comm), INIT_COMM_LEN - 1);
        struct init_blocked e = msg(1, 1);
        e.rec[0] = (struct init_blocked_rec){.nr = SYS_mount, .pid = 2, .count = 1};
        cr_assert_eq(rt_blocked_decode(&e, sizeof e, &b), 0);
        cr_assert_str_eq(b.rec[0].comm, "?", "unknown comm");
}

Test(rt_blocked_decode, rejects_malformed) {
        struct rt_blocked b;
        struct init_blocked m = msg(1, 3);
        m.rec[0].count = 3;
        cr_assert_eq(rt_blocked_decode(&m, sizeof m, &b), 0);
        m = msg(INIT_BLOCKED_MAX + 1, 100);
        cr_assert_eq(rt_blocked_decode(&m, sizeof m, &b), -EBADMSG, "too many records");
        /* a rejected message leaves no report, not the one decoded before it */
        cr_assert(b.n == 0 && b.total == 0, "stale report: n %u total %lu", b.n,
                  (unsigned long)b.total);
        m = msg(0, 0);
        char longer[sizeof m + 1] = {0};
        memcpy(longer, &m, sizeof m);
        cr_assert_eq(rt_blocked_decode(longer, sizeof longer, &b), -EBADMSG, "long datagram");
        m = msg(1, 1);
        m.rec[0].count = 2;
        cr_assert_eq(rt_blocked_decode(&m, sizeof m, &b), -EBADMSG, "counts above total");
        m.rec[0].count = 0;
        cr_assert_eq(rt_blocked_decode(&m, sizeof m, &b), -EBADMSG, "empty record");
        m = msg(2, UINT64_MAX);
        m.rec[0].count = UINT64_MAX;
        m.rec[1].count = 5;
        cr_assert_eq(rt_blocked_decode(&m, sizeof m, &b), -EBADMSG, "sum overflows");
        m = msg(0, 0);
        cr_assert_eq(rt_blocked_decode(&m, sizeof m - 1, &b), -EBADMSG, "short datagram");
        m.hdr.type = INIT_MSG_EXITED;
        cr_assert_eq(rt_blocked_decode(&m, sizeof m, &b), -EBADMSG, "other type");
}

Test(rt_blocked_json, records_and_more) {
        struct rt_blocked b = {.n = 1, .total = 4};
        b.rec[0] = (struct rt_blocked_rec){.syscall = "bpf", .pid = 12, .comm = "py\"", .count = 3};
        struct rtn_json_buf jb = RTN_JSON_BUF_INIT(0);
        rtn_json_obj_begin(&jb);
        rt_blocked_json(&jb, &b);
        rtn_json_obj_end(&jb);
        cr_assert_eq(jb.err, 0);
        cr_assert_str_eq(jb.data,
                         "{\"blocked\":[{\"syscall\":\"bpf\",\"pid\":12,\"comm\":\"py\\\"\","
                         "\"count\":3}],\"blocked_more\":1}");
        rtn_json_buf_free(&jb);
}

/* Found by fuzz/fuzz_blocked.c (fuzz/corpus/fuzz_blocked/crash-total-above-int64): a total
 * above INT64_MAX was accepted, and the tool result then reported a negative count and
 * "blocked_more". No process makes 2^63 calls: such a report is malformed. */
Test(rt_blocked_decode, total_above_int64_is_malformed) {
        struct rt_blocked b;
        struct init_blocked m = msg(1, (uint64_t)INT64_MAX + 1);
        m.rec[0] = (struct init_blocked_rec){.nr = SYS_mount, .pid = 2, .count = 1};
        cr_assert_eq(rt_blocked_decode(&m, sizeof m, &b), -EBADMSG);
        m.total = INT64_MAX;
        m.rec[0].count = INT64_MAX;
        cr_assert_eq(rt_blocked_decode(&m, sizeof m, &b), 0);
        struct rtn_json_buf jb = RTN_JSON_BUF_INIT(0);
        rtn_json_obj_begin(&jb);
        rt_blocked_json(&jb, &b);
        rtn_json_obj_end(&jb);
        cr_assert_not_null(strstr(jb.data, "\"count\":9223372036854775807"), "%s", jb.data);
        cr_assert_not_null(strstr(jb.data, "\"blocked_more\":0"), "%s", jb.data);
        rtn_json_buf_free(&jb);
}

/* Found by fuzz/fuzz_blocked.c (fuzz/corpus/fuzz_blocked/crash-negative-pid): a negative pid
 * went into the stderr line and the JSON as it came. The kernel reports a caller's pid in
 * rtn-init's namespace, or 0 when it is not visible there; never below 0. */
Test(rt_blocked_decode, negative_pid_is_malformed) {
        struct rt_blocked b;
        struct init_blocked m = msg(1, 1);
        m.rec[0] = (struct init_blocked_rec){.nr = SYS_mount, .pid = -1, .count = 1};
        cr_assert_eq(rt_blocked_decode(&m, sizeof m, &b), -EBADMSG);
        m.rec[0].pid = 0;
        cr_assert_eq(rt_blocked_decode(&m, sizeof m, &b), 0);
}
