/* Encoders and decoders of the rtn ↔ rtn-init control protocol (common/initproto.h). Linked into
 * both binaries. Decoders treat every datagram as hostile: the sender may be a compromised
 * init, so lengths are checked against what was received and every string must be
 * NUL-terminated inside the message. */
#include "common/initproto.h"

#include <errno.h>
#include <string.h>

static const char *const step_names[] = {
        [INIT_STEP_NONE] = "spawn",
        [INIT_STEP_FORK] = "fork",
        [INIT_STEP_SETSID] = "setsid",
        [INIT_STEP_PTY] = "open pty",
        [INIT_STEP_STDIO] = "set up stdio",
        [INIT_STEP_CHDIR] = "chdir",
        [INIT_STEP_RLIMITS] = "setrlimit",
        [INIT_STEP_CREDS] = "set credentials",
        [INIT_STEP_NNP] = "no_new_privs",
        [INIT_STEP_LANDLOCK] = "landlock",
        [INIT_STEP_SECCOMP] = "seccomp",
        [INIT_STEP_EXEC] = "execve",
        [INIT_STEP_CONFIG] = "configure init",
        [INIT_STEP_PROTOCOL] = "control protocol",
        [INIT_STEP_NETNS] = "enter the gate's netns",
        [INIT_STEP_ENTER] = "enter",
};

const char *init_step_name(uint32_t step) {
        if (step < sizeof step_names / sizeof step_names[0] && step_names[step])
                return step_names[step];
        return "unknown step";
}

const char *init_step_subject(uint32_t step, const char *cmd, const char *cwd) {
        return step == INIT_STEP_CHDIR && cwd ? cwd : cmd;
}

int init_check_msg(const void *buf, size_t len, uint32_t type, size_t min_size) {
        const struct init_msg_hdr *h = buf;
        if (len < sizeof *h || len < min_size)
                return -EBADMSG;
        if (h->type != type || h->len != len)
                return -EBADMSG;
        return 0;
}

/* Appends a NUL-terminated string; returns the new offset or -E2BIG. */
static ssize_t put_str(char *base, size_t cap, size_t off, const char *s) {
        size_t n = strlen(s) + 1;
        if (n > cap - off)
                return -E2BIG;
        memcpy(base + off, s, n);
        return (ssize_t)(off + n);
}

ssize_t init_encode_spawn(void *buf, size_t cap, uint64_t id, uint32_t flags, uint32_t policy,
                          const char *cwd, char *const argv[], char *const envp[], uint16_t rows,
                          uint16_t cols) {
        struct init_spawn *m = buf;
        if (cap < sizeof *m)
                return -E2BIG;
        memset(m, 0, sizeof *m);
        size_t scap = cap - sizeof *m;
        ssize_t off = put_str(m->strings, scap, 0, cwd ? cwd : "/");
        uint32_t argc = 0, envc = 0;
        for (; off >= 0 && argv && argv[argc]; argc++) {
                if (argc >= INIT_MAX_ARGS)
                        return -E2BIG;
                off = put_str(m->strings, scap, (size_t)off, argv[argc]);
        }
        for (; off >= 0 && envp && envp[envc]; envc++) {
                if (envc >= INIT_MAX_ARGS)
                        return -E2BIG;
                off = put_str(m->strings, scap, (size_t)off, envp[envc]);
        }
        if (off < 0)
                return off;
        if (argc == 0)
                return -EINVAL;
        m->hdr.type = INIT_MSG_SPAWN;
        m->hdr.id = id;
        m->flags = flags;
        m->policy = policy;
        m->argc = argc;
        m->envc = envc;
        m->rows = rows;
        m->cols = cols;
        m->strings_len = (uint32_t)off;
        m->hdr.len = (uint32_t)(sizeof *m + (size_t)off);
        return m->hdr.len;
}

/* Splits n NUL-terminated strings off [*p, end); fails unless each terminates in range. */
static int take_strs(const char **p, const char *end, const char **out, uint32_t n) {
        for (uint32_t i = 0; i < n; i++) {
                const char *nul = memchr(*p, '\0', (size_t)(end - *p));
                if (!nul)
                        return -EBADMSG;
                out[i] = *p;
                *p = nul + 1;
        }
        return 0;
}

int init_decode_spawn(const void *buf, size_t len, struct init_spawn_view *ret) {
        const struct init_spawn *m = buf;
        int r = init_check_msg(buf, len, INIT_MSG_SPAWN, sizeof *m);
        if (r < 0)
                return r;
        if (m->strings_len != len - sizeof *m || m->argc == 0 || m->argc > INIT_MAX_ARGS ||
            m->envc > INIT_MAX_ARGS)
                return -EBADMSG;
        const char *p = m->strings, *end = m->strings + m->strings_len;
        if ((r = take_strs(&p, end, &ret->cwd, 1)) < 0 ||
            (r = take_strs(&p, end, ret->argv, m->argc)) < 0 ||
            (r = take_strs(&p, end, ret->envp, m->envc)) < 0)
                return r;
        if (p != end)
                return -EBADMSG;
        ret->argv[m->argc] = NULL;
        ret->envp[m->envc] = NULL;
        ret->msg = m;
        return 0;
}

ssize_t init_encode_config(void *buf, size_t cap, const struct init_config *fixed,
                           const char *const writable[], uint32_t nwritable,
                           const char *const readonly[], uint32_t nreadonly) {
        struct init_config *m = buf;
        if (cap < sizeof *m)
                return -E2BIG;
        if (nwritable > INIT_MAX_WRITABLE || nreadonly > INIT_MAX_READONLY)
                return -E2BIG;
        memcpy(m, fixed, sizeof *m);
        ssize_t off = 0;
        for (uint32_t i = 0; i < nwritable && off >= 0; i++)
                off = put_str(m->strings, cap - sizeof *m, (size_t)off, writable[i]);
        for (uint32_t i = 0; i < nreadonly && off >= 0; i++)
                off = put_str(m->strings, cap - sizeof *m, (size_t)off, readonly[i]);
        if (off < 0)
                return off;
        m->hdr.type = INIT_MSG_CONFIG;
        m->nwritable = nwritable;
        m->nreadonly = nreadonly;
        m->strings_len = (uint32_t)off;
        m->hdr.len = (uint32_t)(sizeof *m + (size_t)off);
        return m->hdr.len;
}

int init_decode_config(const void *buf, size_t len, struct init_config_view *ret) {
        const struct init_config *m = buf;
        int r = init_check_msg(buf, len, INIT_MSG_CONFIG, sizeof *m);
        if (r < 0)
                return r;
        if (m->strings_len != len - sizeof *m || m->nwritable > INIT_MAX_WRITABLE ||
            m->nreadonly > INIT_MAX_READONLY)
                return -EBADMSG;
        const char *p = m->strings, *end = m->strings + m->strings_len;
        if ((r = take_strs(&p, end, ret->writable, m->nwritable)) < 0 ||
            (r = take_strs(&p, end, ret->readonly, m->nreadonly)) < 0)
                return r;
        if (p != end)
                return -EBADMSG;
        ret->nwritable = m->nwritable;
        ret->nreadonly = m->nreadonly;
        ret->msg = m;
        return 0;
}

ssize_t init_encode_files_req(void *buf, size_t cap, const struct init_files_req *fixed,
                              const char *path, const char *pattern, const char *glob) {
        struct init_files_req *m = buf;
        if (cap < sizeof *m)
                return -E2BIG;
        uint32_t type = fixed->hdr.type;
        if (type < INIT_FILES_READ || type > INIT_FILES_SEARCH)
                return -EINVAL;
        memcpy(m, fixed, sizeof *m);
        size_t scap = cap - sizeof *m;
        ssize_t off = put_str(m->strings, scap, 0, path ? path : "");
        if (off >= 0)
                off = put_str(m->strings, scap, (size_t)off, pattern ? pattern : "");
        if (off >= 0)
                off = put_str(m->strings, scap, (size_t)off, glob ? glob : "");
        if (off < 0)
                return off;
        m->strings_len = (uint32_t)off;
        m->hdr.len = (uint32_t)(sizeof *m + (size_t)off);
        return m->hdr.len;
}

int init_decode_files_req(const void *buf, size_t len, struct init_files_req_view *ret) {
        const struct init_files_req *m = buf;
        if (len < sizeof *m || m->hdr.len != len || m->strings_len != len - sizeof *m ||
            m->hdr.type < INIT_FILES_READ || m->hdr.type > INIT_FILES_SEARCH)
                return -EBADMSG;
        const char *s[3];
        const char *p = m->strings, *end = m->strings + m->strings_len;
        int r = take_strs(&p, end, s, 3);
        if (r < 0)
                return r;
        if (p != end)
                return -EBADMSG;
        ret->msg = m;
        ret->path = s[0];
        ret->pattern = s[1];
        ret->glob = s[2];
        return 0;
}

void init_limits_default(struct init_limits *ret) {
        *ret = (struct init_limits){
                .nofile = 4096,
                .nproc = 0,
                .fsize_bytes = 1ULL << 30,
                .data_bytes = 0,
                .cpu_seconds = 0,
                .core_bytes = 0,
        };
}
