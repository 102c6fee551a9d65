/* The loader behind store/dl.h: dlopen()s nettle, libcrypto or libarchive the first time the store
 * needs it and fills the table of function pointers with dlsym(). A library that is missing,
 * or lacks one of the symbols, leaves its table unusable and every later first call failing;
 * the reason is logged at debug level (library code prints nothing above that). */
#define STORE_DL_NO_MACROS 1
#include <archive.h>
#include <archive_entry.h>
#include <dlfcn.h>
#include <nettle/sha2.h>
#include <nettle/version.h>
#include <openssl/evp.h>
#include <openssl/opensslv.h>
#include <pthread.h>

#include "common/log.h"
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

static bool nettle_ok, crypto_ok, archive_ok;
static pthread_once_t nettle_once = PTHREAD_ONCE_INIT, crypto_once = PTHREAD_ONCE_INIT,
                      archive_once = PTHREAD_ONCE_INIT;

/* The handle is never closed: the pointers live as long as the process. */
static void *open_lib(const char *soname) {
        void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
        if (!h)
                log_debug("store: dlopen %s: %s", soname, dlerror());
        return h;
}

/* Resolves one table member; POSIX (dlsym(3)) makes the object-to-function pointer
 * conversion valid. */
#define RESOLVE(table, f)                                                                          \
        if (!(table.f = (__typeof__(f) *)dlsym(h, #f))) {                                          \
                log_debug("store: dlsym %s: %s", #f, dlerror());                                   \
                return;                                                                            \
        }
#define RESOLVE_NETTLE(f) RESOLVE(store_nettle_fns, f)
#define RESOLVE_CRYPTO(f) RESOLVE(store_crypto_fns, f)
#define RESOLVE_ARCHIVE(f) RESOLVE(store_archive_fns, f)

static void load_nettle(void) {
        void *h = open_lib("libnettle.so.8");
        if (!h)
                return;
        STORE_NETTLE_FNS(RESOLVE_NETTLE)
        nettle_ok = true;
}

static void load_crypto(void) {
        void *h = open_lib("libcrypto.so.3");
        if (!h)
                return;
        STORE_CRYPTO_FNS(RESOLVE_CRYPTO)
        crypto_ok = true;
}

static void load_archive(void) {
        void *h = open_lib("libarchive.so.13");
        if (!h)
                return;
        STORE_ARCHIVE_FNS(RESOLVE_ARCHIVE)
        archive_ok = true;
}

bool store_dl_nettle(void) {
        pthread_once(&nettle_once, load_nettle);
        return nettle_ok;
}

bool store_dl_crypto(void) {
        pthread_once(&crypto_once, load_crypto);
        return crypto_ok;
}

bool store_dl_archive(void) {
        pthread_once(&archive_once, load_archive);
        return archive_ok;
}
