/* SHA-256 for the store: layer manifests, file contents and commit records. Internal to the
 * store. The hash comes from nettle when it can be loaded and from libcrypto otherwise, both
 * dlopen()ed on first use (store/dl.h). nettle is preferred because loading it costs ~0.2 ms
 * and no configuration, where libcrypto's dlopen plus its first digest (OPENSSL_init, which
 * reads openssl.cnf and sets up providers) cost 1.5-3 ms and ~1 MiB of RSS: most of a
 * one-file `rtn commit`, and all the hashing an `rtn exec` on a tip does (it checks the
 * tip's records). Both use the CPU's SHA extensions, so large inputs hash as fast either way
 * (docs/benchmarks.md). */
#pragma once

#include <nettle/sha2.h>
#include <stddef.h>

#define STORE_SHA256_LEN 32

enum store_sha256_backend {
        STORE_SHA256_ANY, /* nettle, else libcrypto */
        STORE_SHA256_NETTLE,
        STORE_SHA256_LIBCRYPTO,
};

struct evp_md_ctx_st;

struct store_sha256 {
        enum store_sha256_backend backend; /* the one in use: never STORE_SHA256_ANY */
        struct sha256_ctx nettle;
        struct evp_md_ctx_st *evp;
};

/* Starts a digest with the given backend (STORE_SHA256_ANY: the preferred one that loads).
 * -ENOPKG when no backend can be loaded, -ENOMEM. */
int store_sha256_init(struct store_sha256 *h, enum store_sha256_backend want);
void store_sha256_update(struct store_sha256 *h, const void *p, size_t n);
/* Writes the digest and releases h; h may be initialised again. */
void store_sha256_final(struct store_sha256 *h, unsigned char md[STORE_SHA256_LEN]);
/* Releases h without a digest (error paths); safe after final. */
void store_sha256_free(struct store_sha256 *h);
/* One-shot digest with the preferred backend. */
int store_sha256(const void *p, size_t n, unsigned char md[STORE_SHA256_LEN]);
