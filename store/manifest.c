/* A layer's id: the SHA-256 of its manifest, one line per entry in store_walk's canonical
 * order. Only what overlayfs shows through a lowerdir goes in (type, permission bits,
 * owner, size and content, symlink target, hard-link structure, the xattrs listed in
 * store_xattr_covered); what differs between two copies of the same tree (times, inode
 * numbers, sparse layout, directory order on disk) stays out, so the same content gives the
 * same id on any machine. Grammar in docs/store.md. */
#include "store/internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "store/sha256.h"

#define MANIFEST_HEADER "rtn-layer 1\n"

static void put(struct store_sha256 *ctx, const void *p, size_t n) {
        store_sha256_update(ctx, p, n);
}

static void put_str(struct store_sha256 *ctx, const char *s) {
        put(ctx, s, strlen(s));
}

/* Length-prefixed bytes ("<len>:<bytes>"), so any byte may appear in names and values. */
static void put_blob(struct store_sha256 *ctx, const void *p, size_t n) {
        char num[32];
        snprintf(num, sizeof num, "%zu:", n);
        put_str(ctx, num);
        put(ctx, p, n);
}

static int manifest_entry(const struct store_entry *e, void *userdata) {
        struct store_sha256 *ctx = userdata;
        char buf[128];
        snprintf(buf, sizeof buf, "%c ", (char)e->kind);
        put_str(ctx, buf);
        put_blob(ctx, e->path, strlen(e->path));
        if (e->kind == STORE_K_HARDLINK) {
                put_str(ctx, " ");
                put_blob(ctx, e->target, strlen(e->target));
                put_str(ctx, "\n");
                return 0;
        }
        if (e->kind == STORE_K_WHITEOUT) {
                /* A whiteout only says "deleted": overlayfs never shows its mode, owner or
                 * xattrs, and they are the creating mounter's (inside root, which may be a
                 * subordinate id), which an unprivileged import cannot restore. */
                put_str(ctx, "\n");
                return 0;
        }
        snprintf(buf, sizeof buf, " %04o %u %u", (unsigned)(e->st.st_mode & 07777),
                 (unsigned)e->st.st_uid, (unsigned)e->st.st_gid);
        put_str(ctx, buf);
        if (e->kind == STORE_K_FILE) {
                char hex[STORE_ID_SIZE];
                int r = store_hash_fd(e->fd, (uint64_t)e->st.st_size, hex);
                if (r < 0)
                        return r;
                snprintf(buf, sizeof buf, " %" PRIu64 " %s", (uint64_t)e->st.st_size, hex);
                put_str(ctx, buf);
        } else if (e->kind == STORE_K_SYMLINK) {
                put_str(ctx, " ");
                put_blob(ctx, e->target, strlen(e->target));
        }
        snprintf(buf, sizeof buf, " x%zu", e->nxattrs);
        put_str(ctx, buf);
        for (size_t i = 0; i < e->nxattrs; i++) {
                put_str(ctx, " ");
                put_blob(ctx, e->xattrs[i].name, strlen(e->xattrs[i].name));
                put_blob(ctx, e->xattrs[i].value, e->xattrs[i].len);
        }
        put_str(ctx, "\n");
        return 0;
}

int store_layer_hash(int dirfd, char ret_id[STORE_ID_SIZE], struct rtn_error *err) {
        struct store_sha256 ctx;
        int r = store_sha256_init(&ctx, STORE_SHA256_ANY);
        if (r < 0)
                return rtn_err(err, r, "sha256 init");
        put_str(&ctx, MANIFEST_HEADER);
        r = store_walk(dirfd, manifest_entry, &ctx, err);
        if (r < 0) {
                store_sha256_free(&ctx);
                return rtn_err_wrap(err, "hash layer");
        }
        unsigned char md[STORE_SHA256_LEN];
        store_sha256_final(&ctx, md);
        store_hex(md, sizeof md, ret_id);
        return 0;
}
