/* Commit records and environment tips. A commit record is a short text file whose SHA-256
 * is its id and its file name under commits/; it is parsed strictly and must re-encode to
 * the same bytes, so one commit has exactly one spelling. An environment is a file envs/NAME
 * holding its tip id and a newline, replaced atomically (with its reflog: envmeta.c). */
#include "store/internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "store/sha256.h"

#define RECORD_MAX (STORE_MSG_MAX + 512)

int store_id_of(const void *data, size_t len, char ret_id[STORE_ID_SIZE]) {
        unsigned char md[STORE_SHA256_LEN];
        int r = store_sha256(data, len, md);
        if (r < 0)
                return r;
        store_hex(md, sizeof md, ret_id);
        return 0;
}

int store_record_encode(const struct store_commit_info *c, const char *msg, char **ret,
                        size_t *ret_len) {
        size_t mlen = strnlen(msg, STORE_MSG_MAX);
        char parent[80] = "";
        if (c->parent[0])
                snprintf(parent, sizeof parent, "parent %s\n", c->parent);
        char *buf = NULL;
        int n = asprintf(&buf, "rtn-commit 1\n%slayer %s\ntime %" PRId64 "\nmessage %zu\n%.*s",
                         parent, c->layer, c->time, mlen, (int)mlen, msg);
        if (n < 0)
                return -ENOMEM;
        *ret = buf;
        *ret_len = (size_t)n;
        return 0;
}

/* Consumes "<key> <value>\n" from *p; value copied into out (cap bytes). */
static int take_line(const char **p, const char *end, const char *key, char *out, size_t cap) {
        size_t kl = strlen(key);
        if ((size_t)(end - *p) < kl + 1 || memcmp(*p, key, kl) || (*p)[kl] != ' ')
                return -EBADMSG;
        const char *v = *p + kl + 1;
        const char *nl = memchr(v, '\n', (size_t)(end - v));
        if (!nl || (size_t)(nl - v) >= cap)
                return -EBADMSG;
        memcpy(out, v, (size_t)(nl - v));
        out[nl - v] = '\0';
        *p = nl + 1;
        return 0;
}

static int parse_fields(const char *buf, size_t len, struct store_commit_info *c,
                        const char **ret_msg, size_t *ret_mlen) {
        const char *p = buf, *end = buf + len;
        static const char magic[] = "rtn-commit 1\n";
        if (len < sizeof magic - 1 || memcmp(p, magic, sizeof magic - 1))
                return -EBADMSG;
        p += sizeof magic - 1;
        c->parent[0] = '\0';
        if (take_line(&p, end, "parent", c->parent, sizeof c->parent) == 0 &&
            !store_id_valid(c->parent))
                return -EBADMSG;
        char num[32];
        if (take_line(&p, end, "layer", c->layer, sizeof c->layer) < 0 ||
            !store_id_valid(c->layer) || take_line(&p, end, "time", num, sizeof num) < 0)
                return -EBADMSG;
        char *e;
        errno = 0;
        c->time = strtoll(num, &e, 10);
        if (errno || *e || e == num)
                return -EBADMSG;
        if (take_line(&p, end, "message", num, sizeof num) < 0)
                return -EBADMSG;
        unsigned long long ml = strtoull(num, &e, 10);
        if (*e || e == num || ml != (unsigned long long)(end - p) || ml > STORE_MSG_MAX)
                return -EBADMSG;
        *ret_msg = p;
        *ret_mlen = (size_t)ml;
        return 0;
}

int store_record_decode(const char *buf, size_t len, struct store_commit_info *ret, char *msgbuf,
                        size_t msglen) {
        struct store_commit_info c = {0};
        const char *m;
        size_t ml;
        int r = parse_fields(buf, len, &c, &m, &ml);
        if (r < 0)
                return r;
        /* Messages are text without NULs: a NUL would make two spellings of one record. */
        if (memchr(m, '\0', ml))
                return -EBADMSG;
        _cleanup_free_ char *msg = strndup(m, ml);
        _cleanup_free_ char *again = NULL;
        size_t alen;
        if (!msg || store_record_encode(&c, msg, &again, &alen) < 0)
                return -ENOMEM;
        if (alen != len || memcmp(again, buf, len))
                return -EBADMSG;
        if (msgbuf && msglen) {
                snprintf(msgbuf, msglen, "%s", msg);
                c.message = msgbuf;
        }
        *ret = c;
        return 0;
}

int store_commit_read(struct store *s, const char *id, struct store_commit_info *ret_info,
                      char *msgbuf, size_t msglen, struct rtn_error *err) {
        if (!store_id_valid(id))
                return rtn_errx(err, EINVAL, "invalid commit id '%s'", id);
        _cleanup_free_ char *buf = NULL;
        size_t len;
        int r = store_read_small(s->commitsfd, id, RECORD_MAX, &buf, &len);
        if (r < 0)
                return rtn_err(err, r, "read commit %s", id);
        char check[STORE_ID_SIZE];
        if (store_id_of(buf, len, check) < 0 || strcmp(check, id))
                return rtn_errx(err, EUCLEAN, "commit %s: record does not match its id", id);
        struct store_commit_info c;
        r = store_record_decode(buf, len, &c, msgbuf, msglen);
        if (r < 0)
                return rtn_err(err, r, "commit %s: malformed record", id);
        memcpy(c.id, id, STORE_ID_SIZE);
        *ret_info = c;
        return 0;
}

int store_env_valid(const char *env) {
        size_t n = env ? strlen(env) : 0;
        if (n == 0 || n > STORE_ENV_MAX || env[0] == '.' || env[0] == '-')
                return -EINVAL;
        for (size_t i = 0; i < n; i++)
                if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-",
                            env[i]))
                        return -EINVAL;
        return 0;
}

int store_env_check(const char *env, struct rtn_error *err) {
        if (store_env_valid(env) == 0)
                return 0;
        return rtn_errx(err, EINVAL, "invalid environment name '%s' (1-%d of A-Z a-z 0-9 . _ -)%s",
                        env ? env : "", STORE_ENV_MAX,
                        env && strchr(env, '=')
                                ? "; --env names a store environment, a variable is --setenv "
                                  "NAME=VALUE"
                                : "");
}

void store_env_line(const char *id, char ret[STORE_ID_SIZE + 1]) {
        snprintf(ret, STORE_ID_SIZE + 1, "%s\n", id);
}

int store_env_get(struct store *s, const char *env, char ret_id[STORE_ID_SIZE]) {
        _cleanup_free_ char *buf = NULL;
        size_t len;
        int r = store_read_small(s->envsfd, env, STORE_ID_SIZE + 8, &buf, &len);
        if (r < 0)
                return r;
        if (len != STORE_ID_LEN + 1 || buf[STORE_ID_LEN] != '\n')
                return -EBADMSG;
        buf[STORE_ID_LEN] = '\0';
        if (!store_id_valid(buf))
                return -EBADMSG;
        memcpy(ret_id, buf, STORE_ID_SIZE);
        return 0;
}

int store_is_ancestor(struct store *s, const char *ancestor, const char *id) {
        char cur[STORE_ID_SIZE];
        snprintf(cur, sizeof cur, "%s", id);
        while (cur[0]) {
                if (!strcmp(cur, ancestor))
                        return 1;
                struct store_commit_info c;
                int r = store_commit_read(s, cur, &c, NULL, 0, NULL);
                if (r < 0)
                        return r;
                memcpy(cur, c.parent, STORE_ID_SIZE);
        }
        return 0;
}
