/* store/dl.c: the lazily loaded nettle, libcrypto and libarchive resolve to the same functions the
 * dynamic linker would have bound, and the store's hashing through them is SHA-256. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <string.h>

#include <archive.h>
#include <archive_entry.h>
#include <nettle/sha2.h>
#include <openssl/evp.h>

#define STORE_DL_NO_MACROS 1
#include "store/dl.h"
#include "store/internal.h"

Test(store_dl_nettle, resolves_every_symbol) {
        cr_assert(store_dl_nettle());
        cr_assert(store_dl_nettle(), "a second call reports the same");
        /* This binary links nettle itself: dlopen must have found that very copy. */
        cr_assert_eq(store_nettle_fns.nettle_sha256_init, &nettle_sha256_init);
        cr_assert_eq(store_nettle_fns.nettle_sha256_update, &nettle_sha256_update);
        cr_assert_eq(store_nettle_fns.nettle_sha256_digest, &nettle_sha256_digest);
}

Test(store_dl_crypto, resolves_every_symbol) {
        cr_assert(store_dl_crypto());
        cr_assert(store_dl_crypto(), "a second call reports the same");
        /* This binary links libcrypto itself (these references make --as-needed keep it):
         * dlopen must have found that very copy. */
        cr_assert_eq((void *)store_crypto_fns.EVP_sha256, (void *)&EVP_sha256);
        cr_assert_eq((void *)store_crypto_fns.EVP_MD_CTX_new, (void *)&EVP_MD_CTX_new);
}

Test(store_dl_crypto, store_id_is_sha256) {
        char id[STORE_ID_SIZE];
        cr_assert_eq(store_id_of("abc", 3, id), 0);
        cr_assert_str_eq(id, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

Test(store_dl_archive, resolves_every_symbol) {
        cr_assert(store_dl_archive());
        cr_assert_eq((void *)store_archive_fns.archive_write_new,
                     dlsym(RTLD_DEFAULT, "archive_write_new"));
        struct archive *a = store_archive_fns.archive_read_new();
        cr_assert_not_null(a);
        cr_assert_eq(store_archive_fns.archive_read_free(a), ARCHIVE_OK);
}
