/* SHA-256 for the store: layer manifests, file contents and commit records. Internal to the
 * store. Both backends, nettle and libcrypto, are dlopen()ed on first use (store/dl.h) and
 * use the CPU's SHA extensions, but they cost differently. Loading nettle costs ~0.2 ms and
 * no configuration; libcrypto's dlopen plus its first digest (OPENSSL_init reads
 * openssl.cnf and sets up providers) cost 1.5-3 ms and ~1 MiB of RSS, which was most of a
 * one-file `rtn commit` and all the hashing an `rtn exec` on a tip does (it checks the tip's
 * records). libcrypto's code is faster on long inputs, though (1.36-1.46 GB/s against
 * nettle's 1.06-1.35 here), which pays for its load after some tens of MB. So small inputs
 * go to nettle and files of STORE_SHA256_LARGE_MIN bytes or more to libcrypto, each falling
 * back to the other when it cannot be loaded (docs/benchmarks.md). */
#pragma once

#include <nettle/sha2.h>
#include <stddef.h>

#define STORE_SHA256_LEN 32
/* Inputs at least this long are worth loading libcrypto for. */
#define STORE_SHA256_LARGE_MIN (16ULL << 20)

enum store_sha256_backend {
        STORE_SHA256_ANY, /* nettle, else libcrypto: for small inputs */
        STORE_SHA256_LARGE, /* libcrypto, else nettle: for STORE_SHA256_LARGE_MIN or more */
        STORE_SHA256_NETTLE,
        STORE_SHA256_LIBCRYPTO,
};

struct evp_md_ctx_st;

struct store_sha256 {
        enum store_sha256_backend backend; /* the one in use: _NETTLE or _LIBCRYPTO */
        struct sha256_ctx nettle;
        struct evp_md_ctx_st *evp;
};

/* Starts a digest with the given backend, or the first of the preferred ones that loads.
 * -ENOPKG when no backend can be loaded, -ENOMEM. */
int store_sha256_init(struct store_sha256 *h, enum store_sha256_backend want);
void store_sha256_update(struct store_sha256 *h, const void *p, size_t n);
/* Writes the digest and releases h; h may be initialised again. */
void store_sha256_final(struct store_sha256 *h, unsigned char md[STORE_SHA256_LEN]);
/* Releases h without a digest (error paths); safe after final. */
void store_sha256_free(struct store_sha256 *h);
/* One-shot digest with the preferred backend. */
int store_sha256(const void *p, size_t n, unsigned char md[STORE_SHA256_LEN]);
