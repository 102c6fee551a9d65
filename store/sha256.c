/* The store's SHA-256 (store/sha256.h): one interface over nettle and libcrypto, each loaded
 * by store/dl.c the first time it is needed, so a process that never hashes loads neither
 * and one that hashes only small inputs loads only the small one. */
#include "store/sha256.h"

#include <errno.h>
#include <openssl/evp.h>

#include "store/dl.h" /* after the library headers: lazy-loaded names */

static int init_libcrypto(struct store_sha256 *h) {
        EVP_MD_CTX *c = EVP_MD_CTX_new();
        if (!c)
                return store_dl_crypto() ? -ENOMEM : -ENOPKG;
        if (EVP_DigestInit_ex(c, EVP_sha256(), NULL) != 1) {
                EVP_MD_CTX_free(c);
                return -ENOMEM;
        }
        h->evp = c;
        h->backend = STORE_SHA256_LIBCRYPTO;
        return 0;
}

static int init_nettle(struct store_sha256 *h) {
        if (!store_dl_nettle())
                return -ENOPKG;
        store_nettle_fns.nettle_sha256_init(&h->nettle);
        h->backend = STORE_SHA256_NETTLE;
        return 0;
}

int store_sha256_init(struct store_sha256 *h, enum store_sha256_backend want) {
        h->evp = NULL;
        int r;
        switch (want) {
        case STORE_SHA256_ANY:
                r = init_nettle(h);
                return r == -ENOPKG ? init_libcrypto(h) : r;
        case STORE_SHA256_LARGE:
                r = init_libcrypto(h);
                return r == -ENOPKG ? init_nettle(h) : r;
        case STORE_SHA256_NETTLE:
                return init_nettle(h);
        case STORE_SHA256_LIBCRYPTO:
                return init_libcrypto(h);
        }
        return -EINVAL;
}

void store_sha256_update(struct store_sha256 *h, const void *p, size_t n) {
        if (h->backend == STORE_SHA256_NETTLE)
                store_nettle_fns.nettle_sha256_update(&h->nettle, n, p);
        else
                EVP_DigestUpdate(h->evp, p, n);
}

void store_sha256_final(struct store_sha256 *h, unsigned char md[STORE_SHA256_LEN]) {
        if (h->backend == STORE_SHA256_NETTLE)
                store_nettle_fns.nettle_sha256_digest(&h->nettle, STORE_SHA256_LEN, md);
        else
                EVP_DigestFinal_ex(h->evp, md, NULL);
        store_sha256_free(h);
}

void store_sha256_free(struct store_sha256 *h) {
        EVP_MD_CTX_free(h->evp);
        h->evp = NULL;
}

int store_sha256(const void *p, size_t n, unsigned char md[STORE_SHA256_LEN]) {
        struct store_sha256 h;
        int r = store_sha256_init(&h, STORE_SHA256_ANY);
        if (r < 0)
                return r;
        store_sha256_update(&h, p, n);
        store_sha256_final(&h, md);
        return 0;
}
