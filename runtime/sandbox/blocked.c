/* Decoding and formatting of the blocked-syscall report (runtime/sandbox/blocked.h). */
#include "runtime/sandbox/blocked.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "common/json.h"
#include "seccomp_names.h" /* generated into $(O)/gen by tools/gen-seccomp names */

static const struct rt_seccomp_name *lookup(uint32_t nr) {
        size_t lo = 0, hi = sizeof rt_seccomp_notified / sizeof *rt_seccomp_notified;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if ((uint32_t)rt_seccomp_notified[mid].nr == nr)
                        return &rt_seccomp_notified[mid];
                if ((uint32_t)rt_seccomp_notified[mid].nr < nr)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return NULL;
}

const char *rt_blocked_syscall_name(uint32_t nr) {
        const struct rt_seccomp_name *n = lookup(nr);
        return n ? n->name : NULL;
}

/* A process names itself (prctl PR_SET_NAME): keep printable ASCII, so the name can neither
 * drive the user's terminal nor break the JSON's UTF-8. */
static void clean_comm(const char *in, size_t cap, char out[INIT_COMM_LEN]) {
        size_t i = 0;
        for (; i < cap && i < INIT_COMM_LEN - 1 && in[i]; i++)
                out[i] = in[i] >= 0x20 && in[i] < 0x7f ? in[i] : '?';
        out[i] = '\0';
        if (i == 0)
                strcpy(out, "?");
}

int rt_blocked_decode(const void *buf, size_t len, struct rt_blocked *ret) {
        const struct init_blocked *m = buf;
        *ret = (struct rt_blocked){0};
        /* No process makes 2^63 calls; the JSON reports counts as signed integers. */
        if (init_check_msg(buf, len, INIT_MSG_BLOCKED, sizeof *m) < 0 || len != sizeof *m ||
            m->nrec > INIT_BLOCKED_MAX || m->total > INT64_MAX)
                return -EBADMSG;
        uint64_t sum = 0;
        for (uint32_t i = 0; i < m->nrec; i++) {
                if (m->rec[i].count == 0 || m->rec[i].count > m->total - sum || m->rec[i].pid < 0)
                        return -EBADMSG;
                sum += m->rec[i].count;
        }
        ret->n = m->nrec;
        ret->total = m->total;
        for (uint32_t i = 0; i < m->nrec; i++) {
                struct rt_blocked_rec *r = &ret->rec[i];
                const struct rt_seccomp_name *name = lookup(m->rec[i].nr);
                r->why = name ? name->why : NULL;
                if (name)
                        snprintf(r->syscall, sizeof r->syscall, "%s", name->name);
                else
                        snprintf(r->syscall, sizeof r->syscall, "syscall %" PRIu32, m->rec[i].nr);
                r->pid = m->rec[i].pid;
                r->count = m->rec[i].count;
                clean_comm(m->rec[i].comm, sizeof m->rec[i].comm, r->comm);
        }
        return 0;
}

uint64_t rt_blocked_more(const struct rt_blocked *b) {
        uint64_t sum = 0;
        for (uint32_t i = 0; i < b->n; i++)
                sum += b->rec[i].count;
        return b->total > sum ? b->total - sum : 0;
}

int rt_blocked_line(const struct rt_blocked *b, uint32_t i, char *buf, size_t cap) {
        if (i < b->n) {
                const struct rt_blocked_rec *r = &b->rec[i];
                char times[40] = "";
                if (r->count > 1)
                        snprintf(times, sizeof times, " (%" PRIu64 " times)", r->count);
                /* "mount(2)" for a name; a bare number gets no man-page section */
                bool named = strncmp(r->syscall, "syscall ", 8) != 0;
                return snprintf(buf, cap, "blocked %s%s by pid %" PRId32 " (%s): EPERM%s%s%s",
                                r->syscall, named ? "(2)" : "", r->pid, r->comm, r->why ? ", " : "",
                                r->why ? r->why : "", times);
        }
        uint64_t more = rt_blocked_more(b);
        if (i == b->n && more > 0)
                return snprintf(buf, cap, "… and %" PRIu64 " more blocked call%s", more,
                                more == 1 ? "" : "s");
        return -1;
}

void rt_blocked_json(struct rtn_json_buf *jb, const struct rt_blocked *b) {
        rtn_json_key(jb, "blocked");
        rtn_json_arr_begin(jb);
        for (uint32_t i = 0; i < b->n; i++) {
                rtn_json_obj_begin(jb);
                rtn_json_kv_str(jb, "syscall", b->rec[i].syscall);
                rtn_json_kv_int(jb, "pid", b->rec[i].pid);
                rtn_json_kv_str(jb, "comm", b->rec[i].comm);
                rtn_json_kv_int(jb, "count", (int64_t)b->rec[i].count);
                rtn_json_obj_end(jb);
        }
        rtn_json_arr_end(jb);
        rtn_json_kv_int(jb, "blocked_more", (int64_t)rt_blocked_more(b));
}
