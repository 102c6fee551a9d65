/* Build-time generator of rtn-init's seccomp filters. It prints a C header with one
 * `struct sock_filter` array per policy (agent, provision) for the architecture it was built
 * on; init/seccomp.c includes it, so the static rtn-init carries the finished BPF and needs no
 * libseccomp. libseccomp is used for what it is good at — the native architecture's audit
 * token and its up-to-date syscall name/number tables — but the BPF is emitted here, because
 * libseccomp cannot say "deny these argument values, allow the rest": a conditional rule for a
 * syscall that also has an unconditional one is silently dropped (ioctl TIOCSTI, clone with
 * CLONE_NEW*, socket families, personality all need that "else"). The program is a binary
 * search over runs of syscall numbers that share an action: installing a filter costs time
 * linear in its length (bpf_check_classic, bpf_convert_filter, the JIT's passes) plus, for
 * the kernel's per-syscall action cache (kernel/seccomp.c, seccomp_cache_prepare), one
 * emulation per syscall number of the path that number takes; a flat chain of 750
 * instructions made that ~0.3 ms per command. The generator proves the tree equivalent to the
 * flat chain by emulating both over every number and the argument values that matter. The
 * policy is an allowlist; docs/policy.md explains the choice and lists the errnos.
 *
 * The agent's filter also refuses every mode argument with S_ISUID or S_ISGID (the chmod
 * family, and open/openat/creat/mknod/mknodat that create): nothing the agent writes through a
 * host directory can end up set-id on the host (docs/security-invariants.md, 14). openat2's
 * mode is in a struct seccomp cannot read, so the agent gets ENOSYS for it and callers fall
 * back to openat; the file server (rtn's own code, which passes no mode to openat2) keeps it.
 * Provisioning (dpkg installs set-id binaries into the sandbox's upper) gets neither check:
 * its Landlock rules keep it out of host directories instead (init/landlock.c).
 *
 * Each policy comes in two variants that differ only in what the EPERM-class denials return:
 * SECCOMP_RET_USER_NOTIF, so that rtn-init, holding the filter's listener, records the call
 * (name, pid, comm) for the report and answers EPERM, or plain ERRNO(EPERM) for a task that
 * cannot have a listener (seccomp(2): EBUSY when the stack already has one) or needs none
 * (the file server). The generator proves that mapping USER_NOTIF to ERRNO(EPERM) turns the
 * first variant into the second. With `names` it prints instead the table of the syscall
 * numbers that can be notified, which rtn uses to name them in its report.
 *
 * A last, small program (init_seccomp_host_net_filter) is stacked on the agent's in
 * --isolation landlock only: on the host's network it keeps socket(2) to TCP and
 * NETLINK_ROUTE (build_host_net). */
#define _GNU_SOURCE /* O_TMPFILE */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <linux/sched.h>
#include <seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <netinet/in.h>
#include <sys/socket.h>

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif
#ifndef SECCOMP_RET_KILL_PROCESS
#define SECCOMP_RET_KILL_PROCESS 0x80000000U
#endif
#ifndef SECCOMP_RET_USER_NOTIF
#define SECCOMP_RET_USER_NOTIF 0x7fc00000U
#endif
/* x32 syscalls arrive with the x86_64 audit arch and this bit set (arch/x86/include/uapi/
 * asm/unistd.h, __X32_SYSCALL_BIT). */
#define X32_SYSCALL_BIT 0x40000000U
#define MAX_NR 1024 /* syscall numbers scanned for the "not classified" report */
#define MAX_INSNS 4096 /* BPF_MAXINSNS */

#include "init/seccomp_rules.h"

/* Which filter is being built: the checks on set-id modes and openat2 differ. */
enum policy {
        P_AGENT, /* agent commands */
        P_AGENT_TRACE, /* the same with ptrace of the sandbox's own processes (--allow-ptrace) */
        P_FILES, /* the file server: the agent's, but openat2 allowed */
        P_PROVISION, /* apt and dpkg: no mode checks */
};
static enum policy policy;

/* A kind as the current policy applies it. */
static enum kind effective(enum kind k) {
        switch (k) {
        case K_MODE1:
        case K_MODE2:
        case K_OPEN:
        case K_OPENAT:
                return policy == P_PROVISION ? K_ALLOW : k;
        case K_OPENAT2:
                return policy == P_AGENT || policy == P_AGENT_TRACE ? K_ENOSYS : K_ALLOW;
        case K_TRACE:
                return policy == P_AGENT_TRACE ? K_ALLOW : K_EPERM;
        case K_ALLOW:
        case K_EPERM:
        case K_ENOSYS:
        case K_IOCTL:
        case K_CLONE:
        case K_SOCKET:
        case K_PERSONA:
        case K_SELF:
                break;
        }
        return k;
}

/* Mode bits no file the agent makes may have; flags under which open's mode is used. */
#define SETID_BITS 06000U /* S_ISUID | S_ISGID */
#define CREATE_FLAGS ((uint32_t)(O_CREAT | (O_TMPFILE & ~O_DIRECTORY)))

/* Every CLONE_NEW* flag (include/uapi/linux/sched.h). CLONE_NEWTIME shares its bit with
 * clone()'s exit-signal byte, where it is harmless; unshare() honours it. */
#define CLONE_NEW_MASK                                                                             \
        (CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER |             \
         CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWTIME)

struct prog {
        struct sock_filter insn[MAX_INSNS];
        size_t n;
};

static void emit(struct prog *p, uint16_t code, uint8_t jt, uint8_t jf, uint32_t k) {
        if (p->n >= MAX_INSNS) {
                fprintf(stderr, "gen-seccomp: filter exceeds %d instructions\n", MAX_INSNS);
                exit(1);
        }
        p->insn[p->n++] = (struct sock_filter){code, jt, jf, k};
}

static void ret(struct prog *p, uint32_t action) {
        emit(p, BPF_RET | BPF_K, 0, 0, action);
}

static uint32_t ret_errno(int e) {
        return SECCOMP_RET_ERRNO | ((uint32_t)e & SECCOMP_RET_DATA);
}

/* What the EPERM-class denials return in the program being built: SECCOMP_RET_USER_NOTIF in
 * the reporting variant, ERRNO(EPERM) in the plain one. ENOSYS and EAFNOSUPPORT are never
 * notified: glibc's clone3 probe and socket family probes would flood the report. */
static uint32_t deny_action;

/* Offset of the low 32 bits of args[i]: the kernel truncates int/unsigned int arguments, so
 * a check must not be fooled by garbage in the high half (ioctl(fd, TIOCSTI | 1UL << 32)). */
static uint32_t arg_lo(unsigned i) {
        uint32_t off = (uint32_t)(offsetof(struct seccomp_data, args) + 8 * i);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        off += 4;
#endif
        return off;
}

/* A block that ends in a return on every path; the caller jumps over it when nr differs. */
/* "deny if arg i has any of bits": a block that returns on every path. */
static void emit_bits(struct prog *p, unsigned i, uint32_t bits) {
        emit(p, BPF_LD | BPF_W | BPF_ABS, 0, 0, arg_lo(i));
        emit(p, BPF_JMP | BPF_JSET | BPF_K, 1, 0, bits);
        ret(p, SECCOMP_RET_ALLOW);
        ret(p, deny_action);
}

/* open/openat: the mode counts only when the flags create (O_CREAT, O_TMPFILE); a mode
 * argument without them is whatever was in the register. */
static void emit_open(struct prog *p, unsigned flags, unsigned mode) {
        emit(p, BPF_LD | BPF_W | BPF_ABS, 0, 0, arg_lo(flags));
        emit(p, BPF_JMP | BPF_JSET | BPF_K, 0, 2, CREATE_FLAGS);
        emit(p, BPF_LD | BPF_W | BPF_ABS, 0, 0, arg_lo(mode));
        emit(p, BPF_JMP | BPF_JSET | BPF_K, 1, 0, SETID_BITS);
        ret(p, SECCOMP_RET_ALLOW);
        ret(p, deny_action);
}

static const char *kind_name(enum kind k);

static void emit_block(struct prog *p, enum kind declared) {
        enum kind k = effective(declared);
        static const uint32_t personas[] = {0x0 /* PER_LINUX */, 0x8 /* PER_LINUX32 */,
                                            0x20000 /* UNAME26 */, 0x20008,
                                            0xffffffff /* query only */};
        static const uint32_t families[] = {AF_UNIX, AF_INET, AF_INET6, AF_NETLINK};
        switch (k) {
        case K_ALLOW:
                ret(p, SECCOMP_RET_ALLOW);
                break;
        case K_EPERM:
                ret(p, deny_action);
                break;
        case K_ENOSYS:
                ret(p, ret_errno(ENOSYS));
                break;
        case K_IOCTL:
                emit(p, BPF_LD | BPF_W | BPF_ABS, 0, 0, arg_lo(1));
                emit(p, BPF_JMP | BPF_JEQ | BPF_K, 2, 0, TIOCSTI);
                emit(p, BPF_JMP | BPF_JEQ | BPF_K, 1, 0, TIOCLINUX);
                ret(p, SECCOMP_RET_ALLOW);
                ret(p, deny_action);
                break;
        case K_SELF:
                emit(p, BPF_LD | BPF_W | BPF_ABS, 0, 0, arg_lo(0));
                emit(p, BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0);
                ret(p, SECCOMP_RET_ALLOW);
                ret(p, deny_action);
                break;
        case K_CLONE: /* flags are arg 0 of clone and unshare on x86_64, arm64, riscv */
                emit(p, BPF_LD | BPF_W | BPF_ABS, 0, 0, arg_lo(0));
                emit(p, BPF_JMP | BPF_JSET | BPF_K, 1, 0, CLONE_NEW_MASK);
                ret(p, SECCOMP_RET_ALLOW);
                ret(p, deny_action);
                break;
        case K_SOCKET:
        case K_PERSONA: {
                const uint32_t *v = k == K_SOCKET ? families : personas;
                size_t n =
                        k == K_SOCKET ? sizeof families / sizeof *v : sizeof personas / sizeof *v;
                emit(p, BPF_LD | BPF_W | BPF_ABS, 0, 0, arg_lo(0));
                for (size_t i = 0; i < n; i++)
                        emit(p, BPF_JMP | BPF_JEQ | BPF_K, (uint8_t)(n - i), 0, v[i]);
                ret(p, k == K_SOCKET ? ret_errno(EAFNOSUPPORT) : deny_action);
                ret(p, SECCOMP_RET_ALLOW);
                break;
        }
        case K_MODE1:
        case K_MODE2:
                emit_bits(p, k == K_MODE1 ? 1 : 2, SETID_BITS);
                break;
        case K_OPEN:
        case K_OPENAT:
                emit_open(p, k == K_OPEN ? 1 : 2, k == K_OPEN ? 2 : 3);
                break;
        case K_OPENAT2: /* effective() never leaves these */
        case K_TRACE:
                fprintf(stderr, "gen-seccomp: %s not resolved\n", kind_name(k));
                exit(1);
        }
}

struct entry {
        int nr;
        enum kind kind;
        const char *name;
};

static struct entry table[MAX_NR];
static size_t ntable;

/* Syscalls newer than the libseccomp of Debian 12 (2.5.4 knows up to 450). Since 424 a new
 * syscall gets the same number on every architecture but alpha (arch/x86/entry/syscalls/
 * syscall_64.tbl, scripts/syscall.tbl), so these hold on x86_64 and arm64. */
static const struct {
        const char *name;
        int nr;
} recent[] = {
        {"cachestat", 451},     {"fchmodat2", 452},      {"map_shadow_stack", 453},
        {"futex_wake", 454},    {"futex_wait", 455},     {"futex_requeue", 456},
        {"statmount", 457},     {"listmount", 458},      {"mseal", 462},
        {"setxattrat", 463},    {"getxattrat", 464},     {"listxattrat", 465},
        {"removexattrat", 466}, {"open_tree_attr", 467}, {"file_getattr", 468},
        {"file_setattr", 469},
};

static int resolve(const char *name) {
        int nr = seccomp_syscall_resolve_name(name);
        if (nr != __NR_SCMP_ERROR)
                return nr; /* negative: a pseudo number, the call does not exist here */
        uint32_t arch = seccomp_arch_native();
        if (arch != SCMP_ARCH_X86_64 && arch != SCMP_ARCH_AARCH64)
                return -1;
        for (size_t i = 0; i < sizeof recent / sizeof *recent; i++)
                if (strcmp(recent[i].name, name) == 0)
                        return recent[i].nr;
        return -1;
}

static void add(const char *name, enum kind k) {
        int nr = resolve(name);
        if (nr < 0) /* unknown, or not on this arch */
                return;
        for (size_t i = 0; i < ntable; i++)
                if (table[i].nr == nr) {
                        fprintf(stderr, "gen-seccomp: %s (%d) classified twice\n", name, nr);
                        exit(1);
                }
        if (ntable >= MAX_NR) {
                fprintf(stderr, "gen-seccomp: too many syscalls\n");
                exit(1);
        }
        table[ntable++] = (struct entry){nr, k, name};
}

static int cmp_entry(const void *a, const void *b) {
        return ((const struct entry *)a)->nr - ((const struct entry *)b)->nr;
}

static void build_table(void) {
        for (size_t i = 0; i < sizeof allow_names / sizeof *allow_names; i++)
                add(allow_names[i], K_ALLOW);
        for (size_t i = 0; i < sizeof eperm_names / sizeof *eperm_names; i++)
                add(eperm_names[i], K_EPERM);
        for (size_t i = 0; i < sizeof trace_names / sizeof *trace_names; i++)
                add(trace_names[i], K_TRACE);
        for (size_t i = 0; i < sizeof enosys_names / sizeof *enosys_names; i++)
                add(enosys_names[i], K_ENOSYS);
        for (size_t i = 0; i < sizeof special / sizeof *special; i++)
                add(special[i].name, special[i].kind);
        qsort(table, ntable, sizeof *table, cmp_entry);
}

/* arch check → x32 check; the syscall number is then in the accumulator. */
static void emit_prologue(struct prog *p, uint32_t arch) {
        p->n = 0;
        emit(p, BPF_LD | BPF_W | BPF_ABS, 0, 0, offsetof(struct seccomp_data, arch));
        emit(p, BPF_JMP | BPF_JEQ | BPF_K, 1, 0, arch);
        ret(p, SECCOMP_RET_KILL_PROCESS); /* ia32 (int 0x80) on x86_64, any foreign arch */
        emit(p, BPF_LD | BPF_W | BPF_ABS, 0, 0, offsetof(struct seccomp_data, nr));
        if (arch == SCMP_ARCH_X86_64) {
                emit(p, BPF_JMP | BPF_JGE | BPF_K, 0, 1, X32_SYSCALL_BIT);
                ret(p, SECCOMP_RET_KILL_PROCESS);
        }
}

/* A run [lo, next run's lo) of numbers with one action; gaps between classified syscalls
 * are ENOSYS runs. Argument-checking kinds always stand alone. */
struct run {
        uint32_t lo;
        enum kind kind;
};

static struct run runs[2 * MAX_NR + 1];
static size_t nruns;

static bool plain(enum kind k) {
        k = effective(k);
        return k == K_ALLOW || k == K_EPERM || k == K_ENOSYS;
}

static void add_run(uint32_t lo, enum kind k) {
        k = plain(k) ? effective(k) : k;
        if (nruns && plain(k) && runs[nruns - 1].kind == k)
                return; /* extends the previous run */
        runs[nruns++] = (struct run){lo, k};
}

static void build_runs(void) {
        uint32_t next = 0;
        nruns = 0;
        for (size_t i = 0; i < ntable; i++) {
                uint32_t nr = (uint32_t)table[i].nr;
                if (nr > next)
                        add_run(next, K_ENOSYS);
                add_run(nr, table[i].kind);
                next = nr + 1;
        }
        add_run(next, K_ENOSYS); /* everything above the last classified number */
}

/* Runs [a, b) as a balanced tree: "jge runs[mid].lo" picks a half; the left half follows
 * the test, the right half after it (through a `ja`, whose offset is 32 bits, when the left
 * half is longer than a conditional jump's 8-bit offset reaches). The accumulator must hold
 * the syscall number: leaves that read arguments end in a return, so it never changes on a
 * path that still has tests to make. */
static void emit_tree(struct prog *p, size_t a, size_t b) {
        if (b - a == 1) {
                emit_block(p, runs[a].kind);
                return;
        }
        size_t mid = a + (b - a) / 2;
        size_t test = p->n;
        emit(p, BPF_JMP | BPF_JGE | BPF_K, 0, 0, runs[mid].lo);
        size_t left = p->n;
        emit_tree(p, a, mid);
        size_t len = p->n - left;
        if (len <= 255) {
                p->insn[test].jt = (uint8_t)len;
        } else { /* jt: onto the ja, which reaches the right half; jf: past it */
                emit(p, 0, 0, 0, 0); /* room for the ja */
                memmove(&p->insn[left + 1], &p->insn[left], len * sizeof p->insn[0]);
                p->insn[test].jf = 1;
                p->insn[left] = (struct sock_filter){BPF_JMP | BPF_JA, 0, 0, (uint32_t)len};
        }
        emit_tree(p, mid, b);
}

static void build_prog(struct prog *p, uint32_t arch) {
        emit_prologue(p, arch);
        build_runs();
        emit_tree(p, 0, nruns);
}

/* The reference: one "jeq nr; block" per syscall in ascending order → default ENOSYS.
 * Anything the table does not name, including numbers newer than this generator, gets
 * ENOSYS. Only used to check the tree. */
static void build_flat(struct prog *p, uint32_t arch) {
        emit_prologue(p, arch);
        for (size_t i = 0; i < ntable; i++) {
                size_t at = p->n;
                emit(p, BPF_JMP | BPF_JEQ | BPF_K, 0, 0, (uint32_t)table[i].nr);
                emit_block(p, table[i].kind);
                size_t len = p->n - at - 1;
                if (len > 255) {
                        fprintf(stderr, "gen-seccomp: block for %s too long\n", table[i].name);
                        exit(1);
                }
                p->insn[at].jf = (uint8_t)len;
        }
        ret(p, ret_errno(ENOSYS));
}

/* The classic BPF subset the programs use (net/core/filter.c, seccomp_check_filter). */
static uint32_t run_prog(const struct prog *p, const struct seccomp_data *d) {
        uint32_t a = 0;
        for (size_t pc = 0; pc < p->n; pc++) {
                const struct sock_filter *f = &p->insn[pc];
                bool t;
                switch (f->code) {
                case BPF_LD | BPF_W | BPF_ABS:
                        memcpy(&a, (const char *)d + f->k, sizeof a);
                        continue;
                case BPF_ALU | BPF_AND | BPF_K:
                        a &= f->k;
                        continue;
                case BPF_RET | BPF_K:
                        return f->k;
                case BPF_JMP | BPF_JA:
                        pc += f->k;
                        continue;
                case BPF_JMP | BPF_JEQ | BPF_K:
                        t = a == f->k;
                        break;
                case BPF_JMP | BPF_JGE | BPF_K:
                        t = a >= f->k;
                        break;
                case BPF_JMP | BPF_JGT | BPF_K:
                        t = a > f->k;
                        break;
                case BPF_JMP | BPF_JSET | BPF_K:
                        t = (a & f->k) != 0;
                        break;
                default:
                        fprintf(stderr, "gen-seccomp: cannot emulate opcode 0x%x\n", f->code);
                        exit(1);
                }
                pc += t ? f->jt : f->jf;
        }
        fprintf(stderr, "gen-seccomp: program falls off its end\n");
        exit(1);
}

/* The inputs both checks below try: every syscall number below MAX_NR and a few above, for
 * the native and a foreign arch token, and every pair of argument values a block tells
 * apart, in args 0 and 1 and again in args 2 and 3 (open's flags and mode are 1 and 2,
 * openat's 2 and 3), with junk in the high half of args[0] and args[2]. Returns false past
 * the last one. */
static const uint32_t vals[] = {0,          1,          0x8,       0x20000,       0x20008,
                                0xffffffff, TIOCSTI,    TIOCLINUX, AF_UNIX,       AF_INET,
                                AF_INET6,   AF_NETLINK, AF_PACKET, CLONE_NEWUSER, CLONE_NEWTIME,
                                CLONE_VM,   O_CREAT,    O_TMPFILE, O_RDWR,        04000,
                                02000,      0755,       06755,     01777};
static const uint32_t high[] = {MAX_NR, 0x3fffffff, X32_SYSCALL_BIT, 0xffffffff};
#define NVALS (sizeof vals / sizeof *vals)
#define NHIGH (sizeof high / sizeof *high)

static bool input(size_t idx, uint32_t arch, struct seccomp_data *d) {
        size_t i = idx / (NVALS * NVALS), x = idx % (NVALS * NVALS);
        if (i >= MAX_NR + NHIGH)
                return false;
        *d = (struct seccomp_data){.nr = (int)(i < MAX_NR ? i : high[i - MAX_NR]),
                                   .arch = x == 1 ? arch ^ 1 : arch};
        d->args[0] = vals[x % NVALS] | 0xdead000000000000ull;
        d->args[1] = vals[x / NVALS];
        d->args[2] = vals[x % NVALS] | 0xbeef000000000000ull;
        d->args[3] = vals[x / NVALS];
        return true;
}

/* Exits unless tree and flat chain agree on every input. */
static void check_equal(const struct prog *tree, uint32_t arch) {
        static struct prog flat;
        build_flat(&flat, arch);
        struct seccomp_data d;
        for (size_t idx = 0; input(idx, arch, &d); idx++)
                if (run_prog(tree, &d) != run_prog(&flat, &d)) {
                        fprintf(stderr, "gen-seccomp: tree and flat chain differ for nr %d\n",
                                d.nr);
                        exit(1);
                }
}

/* Exits unless the reporting variant is the plain one with ERRNO(EPERM) replaced by
 * USER_NOTIF: same decision for every input, only the way EPERM is delivered differs, and
 * no other errno (ENOSYS, EAFNOSUPPORT) is ever notified. */
static void check_variants(const struct prog *notify, const struct prog *plain, uint32_t arch) {
        struct seccomp_data d;
        for (size_t idx = 0; input(idx, arch, &d); idx++) {
                uint32_t n = run_prog(notify, &d), p = run_prog(plain, &d);
                if (n == ret_errno(EPERM) ||
                    (n == SECCOMP_RET_USER_NOTIF ? p != ret_errno(EPERM) : p != n)) {
                        fprintf(stderr,
                                "gen-seccomp: reporting and plain filter differ for nr %d "
                                "(0x%08x, 0x%08x)\n",
                                d.nr, n, p);
                        exit(1);
                }
        }
}

/* --isolation landlock's second filter, stacked on the agent's (the kernel runs both and the
 * stricter action wins): on the host's network, where Landlock rules TCP only, socket(2) may
 * make TCP (AF_INET/AF_INET6, SOCK_STREAM, protocol 0 or IPPROTO_TCP, whatever SOCK_NONBLOCK
 * and SOCK_CLOEXEC say) and NETLINK_ROUTE sockets, and EACCES for the rest of those families:
 * UDP, raw, ICMP, SCTP and MPTCP sockets, sock_diag and the other netlink families. AF_UNIX
 * and the other families are left to the agent's filter. A foreign arch is left to it too (it
 * kills). */
#define SOCK_TYPE_MASK 0xfU
#define NETLINK_ROUTE_PROTO 0U
static void build_host_net(struct prog *p, uint32_t arch, int socket_nr) {
        p->n = 0;
        const uint32_t deny = ret_errno(EACCES);
        emit(p, BPF_LD | BPF_W | BPF_ABS, 0, 0, offsetof(struct seccomp_data, arch));
        emit(p, BPF_JMP | BPF_JEQ | BPF_K, 1, 0, arch);
        ret(p, SECCOMP_RET_ALLOW);
        emit(p, BPF_LD | BPF_W | BPF_ABS, 0, 0, offsetof(struct seccomp_data, nr));
        emit(p, BPF_JMP | BPF_JEQ | BPF_K, 1, 0, (uint32_t)socket_nr);
        ret(p, SECCOMP_RET_ALLOW);
        emit(p, BPF_LD | BPF_W | BPF_ABS, 0, 0, arg_lo(0)); /* 6: the domain */
        emit(p, BPF_JMP | BPF_JEQ | BPF_K, 3, 0, AF_INET); /* → 11 */
        emit(p, BPF_JMP | BPF_JEQ | BPF_K, 2, 0, AF_INET6); /* → 11 */
        emit(p, BPF_JMP | BPF_JEQ | BPF_K, 9, 0, AF_NETLINK); /* → 19 */
        ret(p, SECCOMP_RET_ALLOW);
        emit(p, BPF_LD | BPF_W | BPF_ABS, 0, 0, arg_lo(1)); /* 11: the type, flags masked */
        emit(p, BPF_ALU | BPF_AND | BPF_K, 0, 0, SOCK_TYPE_MASK);
        emit(p, BPF_JMP | BPF_JEQ | BPF_K, 0, 4, SOCK_STREAM); /* else → 18 */
        emit(p, BPF_LD | BPF_W | BPF_ABS, 0, 0, arg_lo(2)); /* the protocol */
        emit(p, BPF_JMP | BPF_JEQ | BPF_K, 1, 0, 0);
        emit(p, BPF_JMP | BPF_JEQ | BPF_K, 0, 1, IPPROTO_TCP);
        ret(p, SECCOMP_RET_ALLOW);
        ret(p, deny); /* 18 */
        emit(p, BPF_LD | BPF_W | BPF_ABS, 0, 0, arg_lo(2)); /* 19: the netlink family */
        emit(p, BPF_JMP | BPF_JEQ | BPF_K, 0, 1, NETLINK_ROUTE_PROTO);
        ret(p, SECCOMP_RET_ALLOW);
        ret(p, deny);
}

/* Exits unless the host network filter decides these as documented (docs/policy.md). */
static void check_host_net(const struct prog *p, uint32_t arch, int socket_nr) {
        static const struct {
                uint32_t domain, type, protocol;
                bool allowed;
        } cases[] = {
                {AF_INET, SOCK_STREAM, 0, true},
                {AF_INET6, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP, true},
                {AF_INET, SOCK_DGRAM, 0, false},
                {AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_UDP, false},
                {AF_INET, SOCK_RAW, IPPROTO_ICMP, false},
                {AF_INET, SOCK_DGRAM, IPPROTO_ICMP, false},
                {AF_INET, SOCK_STREAM, 262 /* IPPROTO_MPTCP */, false},
                {AF_INET, SOCK_STREAM, 132 /* IPPROTO_SCTP */, false},
                {AF_INET, SOCK_SEQPACKET, 0, false},
                {AF_NETLINK, SOCK_RAW, NETLINK_ROUTE_PROTO, true},
                {AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, 4 /* NETLINK_SOCK_DIAG */, false},
                {AF_NETLINK, SOCK_RAW, 15 /* NETLINK_KOBJECT_UEVENT */, false},
                {AF_UNIX, SOCK_DGRAM, 0, true},
                {AF_PACKET, SOCK_RAW, 0, true}, /* the agent's filter refuses the family */
        };
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
                struct seccomp_data d = {.nr = socket_nr, .arch = arch};
                d.args[0] = cases[i].domain | 0xdead000000000000ull;
                d.args[1] = cases[i].type | 0xbeef000000000000ull;
                d.args[2] = cases[i].protocol;
                uint32_t got = run_prog(p, &d);
                if ((got == SECCOMP_RET_ALLOW) != cases[i].allowed ||
                    (!cases[i].allowed && got != ret_errno(EACCES))) {
                        fprintf(stderr, "gen-seccomp: host network filter case %zu: 0x%08x\n", i,
                                got);
                        exit(1);
                }
        }
        struct seccomp_data other = {
                .nr = socket_nr + 1, .arch = arch, .args = {AF_INET, SOCK_DGRAM}};
        if (run_prog(p, &other) != SECCOMP_RET_ALLOW) {
                fprintf(stderr, "gen-seccomp: host network filter denies another syscall\n");
                exit(1);
        }
}

static void print_prog(const char *name, const struct prog *p) {
        printf("static const struct sock_filter %s[%zu] = {\n", name, p->n);
        for (size_t i = 0; i < p->n; i++)
                printf("        {0x%04x, %3u, %3u, 0x%08x},\n", p->insn[i].code, p->insn[i].jt,
                       p->insn[i].jf, p->insn[i].k);
        printf("};\n\n");
}

static const char *kind_name(enum kind k) {
        switch (k) {
        case K_ALLOW:
                return "allow";
        case K_EPERM:
                return "EPERM";
        case K_ENOSYS:
                return "ENOSYS";
        case K_IOCTL:
                return "allow; TIOCSTI/TIOCLINUX EPERM";
        case K_CLONE:
                return "allow; CLONE_NEW* EPERM";
        case K_SOCKET:
                return "allow AF_UNIX/INET/INET6/NETLINK; else EAFNOSUPPORT";
        case K_PERSONA:
                return "allow 0, 0x8, 0x20000, 0x20008, query; else EPERM";
        case K_SELF:
                return "allow pid 0 (the caller); else EPERM";
        case K_MODE1:
        case K_MODE2:
                return "agent: allow; a set-id mode EPERM";
        case K_OPEN:
        case K_OPENAT:
                return "agent: allow; creating with a set-id mode EPERM";
        case K_OPENAT2:
                return "agent: ENOSYS; file server, provision: allow";
        case K_TRACE:
                return "EPERM; agent of --allow-ptrace: allow";
        }
        return "?";
}

/* Syscalls this libseccomp knows that no list names: they get ENOSYS. Listed so a reviewer
 * sees what a newer kernel added and can classify it. */
static void print_unclassified(void) {
        printf("/* Known to libseccomp but not classified (default ENOSYS):");
        int col = 0;
        for (int nr = 0; nr < MAX_NR; nr++) {
                char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
                if (!name)
                        continue;
                int found = 0;
                for (size_t i = 0; i < ntable && !found; i++)
                        found = table[i].nr == nr;
                if (!found)
                        printf("%s %s", col++ % 8 ? "" : "\n *", name);
                free(name);
        }
        printf("\n */\n\n");
}

/* Syscalls that can be notified (the EPERM class), by number, for rtn's report. */
static void print_names(uint32_t arch) {
        printf("/* Generated by tools/gen-seccomp for audit arch 0x%08x: the syscalls whose denial "
               "rtn-init\n * reports (SECCOMP_RET_USER_NOTIF), by number. Do not edit; see "
               "docs/policy.md. */\n#pragma once\n\n"
               "struct rt_seccomp_name {\n        int nr;\n        const char *name;\n"
               "        const char *why; /* what was refused, when the call is allowed "
               "otherwise */\n};\n\n"
               "static const struct rt_seccomp_name rt_seccomp_notified[] = {\n",
               arch);
        for (size_t i = 0; i < ntable; i++) {
                enum kind k = table[i].kind;
                if (k == K_ALLOW || k == K_ENOSYS || k == K_SOCKET || k == K_OPENAT2)
                        continue;
                bool setid = k == K_MODE1 || k == K_MODE2 || k == K_OPEN || k == K_OPENAT;
                printf("        {%d, \"%s\", %s},\n", table[i].nr, table[i].name,
                       setid ? "\"a setuid/setgid mode\"" : "NULL");
        }
        printf("};\n");
}

int main(int argc, char **argv) {
        static struct prog notify, plain;
        uint32_t arch = seccomp_arch_native();
        const struct scmp_version *v = seccomp_version();
        build_table();
        if (argc > 1 && strcmp(argv[1], "names") == 0) {
                print_names(arch);
                return ferror(stdout) ? 1 : 0;
        }
        printf("/* Generated by tools/gen-seccomp (libseccomp %u.%u.%u tables) for audit arch "
               "0x%08x. Do not edit; see docs/policy.md. */\n#pragma once\n\n"
               "#include <linux/filter.h>\n\n#define INIT_SECCOMP_AUDIT_ARCH 0x%08xU\n\n",
               v->major, v->minor, v->micro, arch, arch);
        printf("/* Classified syscalls (EPERM: reported through SECCOMP_RET_USER_NOTIF in the "
               "*_notify_filter\n * variants):\n");
        for (size_t i = 0; i < ntable; i++)
                printf(" *   %4d %-24s %s\n", table[i].nr, table[i].name, kind_name(table[i].kind));
        printf(" */\n\n");
        print_unclassified();
        static const struct {
                enum policy policy;
                const char *name;
                bool notify; /* a reporting variant too */
        } out[] = {{P_AGENT, "agent", true},
                   {P_AGENT_TRACE, "agent_trace", true},
                   {P_PROVISION, "provision", true},
                   {P_FILES, "files", false}};
        for (size_t i = 0; i < sizeof out / sizeof *out; i++) {
                char name[64];
                policy = out[i].policy;
                deny_action = SECCOMP_RET_USER_NOTIF;
                build_prog(&notify, arch);
                check_equal(&notify, arch);
                deny_action = ret_errno(EPERM);
                build_prog(&plain, arch);
                check_equal(&plain, arch);
                check_variants(&notify, &plain, arch);
                if (out[i].notify) {
                        snprintf(name, sizeof name, "init_seccomp_%s_notify_filter", out[i].name);
                        print_prog(name, &notify);
                }
                snprintf(name, sizeof name, "init_seccomp_%s_filter", out[i].name);
                print_prog(name, &plain);
        }
        int socket_nr = resolve("socket");
        if (socket_nr < 0) {
                fprintf(stderr, "gen-seccomp: no socket syscall on this architecture\n");
                return 1;
        }
        build_host_net(&plain, arch, socket_nr);
        check_host_net(&plain, arch, socket_nr);
        print_prog("init_seccomp_host_net_filter", &plain);
        return ferror(stdout) ? 1 : 0;
}
