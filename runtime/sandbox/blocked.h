/* The report of system calls the sandbox's seccomp filter blocked (docs/policy.md,
 * "Visibility"): decoded from rtn-init's INIT_MSG_BLOCKED, which arrives just before a
 * command's INIT_MSG_EXITED, and formatted for `rtn exec`'s stderr and for the MCP results of
 * `rtn serve`. The message comes from inside the sandbox: the decoder checks every count, and
 * the syscall names come from rtn's own table (generated with the filter), never from the
 * message. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "common/initproto.h"

struct rtn_json_buf;

struct rt_blocked_rec {
        char syscall[32]; /* "mount", or "syscall 123" for a number rtn cannot name */
        int32_t pid; /* the first caller, as seen inside the sandbox */
        char comm[INIT_COMM_LEN]; /* printable ASCII only ('?' for anything else); "?" unknown */
        uint64_t count;
        const char *why; /* for a call refused for its arguments alone ("a setuid/setgid
                            mode"), from rtn's table; else NULL */
};

struct rt_blocked {
        uint32_t n;
        uint64_t total; /* every blocked call; total minus the records' counts were not kept */
        struct rt_blocked_rec rec[INIT_BLOCKED_MAX];
};

/* Decodes a datagram; -EBADMSG, with *ret emptied (no report), unless it is a well-formed
 * INIT_MSG_BLOCKED. */
int rt_blocked_decode(const void *buf, size_t len, struct rt_blocked *ret);
/* The name of a notified syscall number, or NULL. */
const char *rt_blocked_syscall_name(uint32_t nr);
/* Calls blocked but not in a record. */
uint64_t rt_blocked_more(const struct rt_blocked *b);
/* "blocked mount(2) by pid 7 (mount): EPERM" plus the reason where the call is otherwise
 * allowed (", a setuid/setgid mode") and " (3 times)"; for record i < b->n, or
 * "… and N more blocked calls" for i == b->n when there are more. Returns the length
 * snprintf would, or -1 when there is no such line. */
int rt_blocked_line(const struct rt_blocked *b, uint32_t i, char *buf, size_t cap);
/* "blocked":[{"syscall","pid","comm","count"}...],"blocked_more":N (the key, a value). */
void rt_blocked_json(struct rtn_json_buf *jb, const struct rt_blocked *b);
