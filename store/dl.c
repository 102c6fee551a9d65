/* The tables behind store/dl.h: nettle, libcrypto and libarchive, loaded by the one loader
 * (common/dl.h) the first time the store needs each. A library that is missing, or lacks one
 * of the symbols, leaves its table unusable and every later first call failing; the loader
 * logs the reason at debug level (library code prints nothing above that). */
#define STORE_DL_NO_MACROS 1
#include <archive.h>
#include <archive_entry.h>
#include <nettle/sha2.h>
#include <nettle/version.h>
#include <openssl/evp.h>
#include <openssl/opensslv.h>

#include "common/dl.h"
#include "store/dl.h"

/* The sonames these headers' ABIs ship under (libarchive has kept 13 through 3.x). */
#if NETTLE_VERSION_MAJOR != 3 || NETTLE_VERSION_MINOR < 6
#error "store/dl.c: update the nettle soname for this nettle"
#endif
#if OPENSSL_VERSION_MAJOR != 3
#error "store/dl.c: update the libcrypto soname for this OpenSSL"
#endif
#if ARCHIVE_VERSION_NUMBER < 3000000 || ARCHIVE_VERSION_NUMBER >= 4000000
#error "store/dl.c: update the libarchive soname for this libarchive"
#endif

struct store_nettle_fns store_nettle_fns;
struct store_crypto_fns store_crypto_fns;
struct store_archive_fns store_archive_fns;

#define NETTLE_SYM(f) RTN_DL_SYM(store_nettle_fns, f)
#define CRYPTO_SYM(f) RTN_DL_SYM(store_crypto_fns, f)
#define ARCHIVE_SYM(f) RTN_DL_SYM(store_archive_fns, f)
static const struct rtn_dl_sym nettle_syms[] = {STORE_NETTLE_FNS(NETTLE_SYM)};
static const struct rtn_dl_sym crypto_syms[] = {STORE_CRYPTO_FNS(CRYPTO_SYM)};
static const struct rtn_dl_sym archive_syms[] = {STORE_ARCHIVE_FNS(ARCHIVE_SYM)};

static struct rtn_dl nettle = RTN_DL_INIT("libnettle.so.8", nettle_syms);
static struct rtn_dl crypto = RTN_DL_INIT("libcrypto.so.3", crypto_syms);
static struct rtn_dl archive = RTN_DL_INIT("libarchive.so.13", archive_syms);

bool store_dl_nettle(void) {
        return rtn_dl_load(&nettle) == 0;
}

bool store_dl_crypto(void) {
        return rtn_dl_load(&crypto) == 0;
}

bool store_dl_archive(void) {
        return rtn_dl_load(&archive) == 0;
}
