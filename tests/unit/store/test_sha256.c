/* store/sha256.c: both backends give SHA-256 (FIPS 180-4 examples, fed in pieces of every
 * size so buffering inside a backend cannot hide a bug), small inputs go to nettle and large
 * files to libcrypto, and hashing a commit record loads nettle only, never libcrypto. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nettle/sha2.h>
#include <openssl/evp.h>

#define STORE_DL_NO_MACROS 1
#include "store/dl.h"
#include "store/internal.h"
#include "store/sha256.h"

static void hex(const unsigned char *md, char out[STORE_ID_SIZE]) {
        store_hex(md, STORE_SHA256_LEN, out);
}

/* Digest of n bytes of pattern (repeated), fed in chunks of `step` bytes. */
static void digest(enum store_sha256_backend b, const char *pattern, size_t n, size_t step,
                   char out[STORE_ID_SIZE]) {
        size_t plen = strlen(pattern);
        char *buf = malloc(n + 1);
        cr_assert_not_null(buf);
        for (size_t i = 0; i < n; i++)
                buf[i] = pattern[i % plen];
        struct store_sha256 h;
        cr_assert_eq(store_sha256_init(&h, b), 0);
        enum store_sha256_backend want = b == STORE_SHA256_ANY     ? STORE_SHA256_NETTLE
                                         : b == STORE_SHA256_LARGE ? STORE_SHA256_LIBCRYPTO
                                                                   : b;
        cr_assert_eq(h.backend, want);
        for (size_t off = 0; off < n; off += step)
                store_sha256_update(&h, buf + off, n - off < step ? n - off : step);
        unsigned char md[STORE_SHA256_LEN];
        store_sha256_final(&h, md);
        cr_assert_null(h.evp);
        hex(md, out);
        free(buf);
}

/* The first n bytes of fd through backend b, read in one piece. */
static void digest_fd(int fd, enum store_sha256_backend b, uint64_t n, char out[STORE_ID_SIZE]) {
        unsigned char *buf = malloc(n);
        cr_assert_not_null(buf);
        cr_assert_eq(pread(fd, buf, n, 0), (ssize_t)n);
        struct store_sha256 h;
        cr_assert_eq(store_sha256_init(&h, b), 0);
        store_sha256_update(&h, buf, n);
        unsigned char md[STORE_SHA256_LEN];
        store_sha256_final(&h, md);
        hex(md, out);
        free(buf);
}

struct vec {
        const char *pattern;
        size_t n;
        const char *want;
};

static const struct vec vecs[] = {
        {"x", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
        {"abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
        {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56,
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
        {"a", 1000000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"},
};

ParameterizedTestParameters(store_sha256, fips_examples) {
        static enum store_sha256_backend b[] = {STORE_SHA256_ANY, STORE_SHA256_LARGE,
                                                STORE_SHA256_NETTLE, STORE_SHA256_LIBCRYPTO};
        return cr_make_param_array(enum store_sha256_backend, b, sizeof b / sizeof b[0]);
}

ParameterizedTest(enum store_sha256_backend *b, store_sha256, fips_examples) {
        static const size_t steps[] = {1, 3, 63, 64, 65, 4096, 1 << 20};
        for (size_t v = 0; v < sizeof vecs / sizeof vecs[0]; v++)
                for (size_t s = 0; s < sizeof steps / sizeof steps[0]; s++) {
                        if (vecs[v].n > 100000 && steps[s] < 63)
                                continue; /* a million single-byte calls prove nothing more */
                        char got[STORE_ID_SIZE];
                        digest(*b, vecs[v].pattern, vecs[v].n, steps[s], got);
                        cr_assert_str_eq(got, vecs[v].want, "backend %d, %zu bytes in steps of %zu",
                                         (int)*b, vecs[v].n, steps[s]);
                }
}

Test(store_sha256, free_after_final_and_on_error_paths) {
        struct store_sha256 h;
        cr_assert_eq(store_sha256_init(&h, STORE_SHA256_LIBCRYPTO), 0);
        cr_assert_not_null(h.evp);
        store_sha256_free(&h);
        cr_assert_null(h.evp);
        store_sha256_free(&h); /* twice is harmless */
        cr_assert_eq(store_sha256_init(&h, STORE_SHA256_LIBCRYPTO), 0, "reusable after free");
        store_sha256_free(&h);
}

/* What `rtn exec` on a tip does: read and check the tip's record. It must not load libcrypto
 * (1.5-3 ms and ~1 MiB in every process that checks a record). This binary links libcrypto
 * itself, so the test looks at the store's own table: it is filled only when the store
 * loads the library. Criterion runs each test in a fresh process. */
Test(store_sha256, record_id_loads_nettle_not_libcrypto) {
        char id[STORE_ID_SIZE];
        cr_assert_eq(store_id_of("abc", 3, id), 0);
        cr_assert_str_eq(id, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        cr_assert_not_null(store_nettle_fns.nettle_sha256_digest);
        cr_assert_null(store_crypto_fns.EVP_MD_CTX_new, "libcrypto was loaded to hash a record");
}

/* A file of STORE_SHA256_LARGE_MIN bytes is hashed by libcrypto, a smaller one by nettle;
 * both give the same digest as the other backend on the same bytes. */
Test(store_sha256, large_files_go_to_libcrypto) {
        char path[] = "/tmp/rtn-sha256-test.XXXXXX";
        int fd = mkstemp(path);
        cr_assert_geq(fd, 0);
        unlink(path);
        cr_assert_eq(ftruncate(fd, (off_t)STORE_SHA256_LARGE_MIN), 0);
        cr_assert_eq(pwrite(fd, "x", 1, 12345), 1);
        char small[STORE_ID_SIZE], large[STORE_ID_SIZE];
        cr_assert_eq(store_hash_fd(fd, 4096, small), 0);
        cr_assert_null(store_crypto_fns.EVP_MD_CTX_new, "a 4 KiB file loaded libcrypto");
        cr_assert_eq(store_hash_fd(fd, STORE_SHA256_LARGE_MIN, large), 0);
        cr_assert_not_null(store_crypto_fns.EVP_DigestUpdate, "a large file did not use libcrypto");
        char want[STORE_ID_SIZE];
        digest_fd(fd, STORE_SHA256_NETTLE, 4096, want);
        cr_assert_str_eq(small, want);
        digest_fd(fd, STORE_SHA256_NETTLE, STORE_SHA256_LARGE_MIN, want);
        cr_assert_str_eq(large, want);
        close(fd);
}
