/* nettle, libcrypto and libarchive, loaded on first use. Linking them made every rtn process
 * pay for loading and relocating them and what they pull in (libarchive alone brings libxml2,
 * ICU and libstdc++): ~3 ms and ~4 MiB of RSS on every `rtn exec` and `rtn serve`, which
 * never hash or archive anything until asked to commit, export or import
 * (docs/benchmarks.md). Include this after <nettle/sha2.h>, <openssl/evp.h>, or both
 * <archive.h> and <archive_entry.h>. nettle is reached through store_nettle_fns by its
 * exported names (nettle_sha256_*) from store/sha256.c alone. For the other two, the names
 * the store calls keep the libraries' spelling and resolve through a table of dlsym()'d
 * pointers. The first call of a sequence (EVP_MD_CTX_new, archive_{read,write}_new) loads
 * the library, and fails the way that call documents (NULL) when it cannot be loaded, so
 * the callers' error paths cover it; EVP_MD_CTX_free accepts NULL; every other call can only
 * follow a successful first one. */
#pragma once

#include <stdbool.h>

#ifdef NETTLE_SHA2_H_INCLUDED
// clang-format off
#define STORE_NETTLE_FNS(X) \
        X(nettle_sha256_init) \
        X(nettle_sha256_update) \
        X(nettle_sha256_digest)
// clang-format on
#define STORE_DL_MEMBER(f) __typeof__(f) *f;
struct store_nettle_fns {
        STORE_NETTLE_FNS(STORE_DL_MEMBER)
};
extern struct store_nettle_fns store_nettle_fns;
#undef STORE_DL_MEMBER
#endif

#ifdef OPENSSL_EVP_H
// clang-format off
#define STORE_CRYPTO_FNS(X) \
        X(EVP_MD_CTX_new) \
        X(EVP_MD_CTX_free) \
        X(EVP_DigestInit_ex) \
        X(EVP_DigestUpdate) \
        X(EVP_DigestFinal_ex) \
        X(EVP_sha256)
// clang-format on
#define STORE_DL_MEMBER(f) __typeof__(f) *f;
struct store_crypto_fns {
        STORE_CRYPTO_FNS(STORE_DL_MEMBER)
};
extern struct store_crypto_fns store_crypto_fns;
#undef STORE_DL_MEMBER
#endif

#if defined(ARCHIVE_H_INCLUDED) && defined(ARCHIVE_ENTRY_H_INCLUDED)
// clang-format off
#define STORE_ARCHIVE_FNS(X) \
        X(archive_errno) \
        X(archive_error_string) \
        X(archive_entry_new) \
        X(archive_entry_free) \
        X(archive_entry_set_filetype) \
        X(archive_entry_set_gid) \
        X(archive_entry_set_hardlink) \
        X(archive_entry_set_mtime) \
        X(archive_entry_set_pathname) \
        X(archive_entry_set_perm) \
        X(archive_entry_set_rdev) \
        X(archive_entry_set_size) \
        X(archive_entry_set_symlink) \
        X(archive_entry_set_uid) \
        X(archive_entry_xattr_add_entry) \
        X(archive_entry_filetype) \
        X(archive_entry_gid) \
        X(archive_entry_hardlink) \
        X(archive_entry_mtime) \
        X(archive_entry_mtime_nsec) \
        X(archive_entry_pathname) \
        X(archive_entry_perm) \
        X(archive_entry_rdev) \
        X(archive_entry_size) \
        X(archive_entry_size_is_set) \
        X(archive_entry_symlink) \
        X(archive_entry_uid) \
        X(archive_entry_xattr_next) \
        X(archive_entry_xattr_reset) \
        X(archive_write_add_filter_zstd) \
        X(archive_write_close) \
        X(archive_write_data) \
        X(archive_write_free) \
        X(archive_write_header) \
        X(archive_write_new) \
        X(archive_write_open_fd) \
        X(archive_write_open_filename) \
        X(archive_write_set_format_pax_restricted) \
        X(archive_read_data) \
        X(archive_read_data_block) \
        X(archive_read_free) \
        X(archive_read_new) \
        X(archive_read_next_header) \
        X(archive_read_open_fd) \
        X(archive_read_open_filename) \
        X(archive_read_support_filter_zstd) \
        X(archive_read_support_format_tar)
// clang-format on
#define STORE_DL_MEMBER(f) __typeof__(f) *f;
struct store_archive_fns {
        STORE_ARCHIVE_FNS(STORE_DL_MEMBER)
};
extern struct store_archive_fns store_archive_fns;
#undef STORE_DL_MEMBER
#endif

/* Load the library once (thread-safe); true when every symbol resolved. */
bool store_dl_nettle(void);
bool store_dl_crypto(void);
bool store_dl_archive(void);

#ifndef STORE_DL_NO_MACROS
#ifdef OPENSSL_EVP_H
#define EVP_MD_CTX_new() (store_dl_crypto() ? store_crypto_fns.EVP_MD_CTX_new() : NULL)
#define EVP_MD_CTX_free(c)                                                                         \
        do {                                                                                       \
                EVP_MD_CTX *c_ = (c);                                                              \
                if (c_)                                                                            \
                        store_crypto_fns.EVP_MD_CTX_free(c_);                                      \
        } while (0)
#define EVP_DigestInit_ex (store_crypto_fns.EVP_DigestInit_ex)
#define EVP_DigestUpdate (store_crypto_fns.EVP_DigestUpdate)
#define EVP_DigestFinal_ex (store_crypto_fns.EVP_DigestFinal_ex)
#define EVP_sha256 (store_crypto_fns.EVP_sha256)
#endif
#if defined(ARCHIVE_H_INCLUDED) && defined(ARCHIVE_ENTRY_H_INCLUDED)
#define archive_write_new() (store_dl_archive() ? store_archive_fns.archive_write_new() : NULL)
#define archive_read_new() (store_dl_archive() ? store_archive_fns.archive_read_new() : NULL)
#define archive_errno (store_archive_fns.archive_errno)
#define archive_error_string (store_archive_fns.archive_error_string)
#define archive_entry_new (store_archive_fns.archive_entry_new)
#define archive_entry_free (store_archive_fns.archive_entry_free)
#define archive_entry_set_filetype (store_archive_fns.archive_entry_set_filetype)
#define archive_entry_set_gid (store_archive_fns.archive_entry_set_gid)
#define archive_entry_set_hardlink (store_archive_fns.archive_entry_set_hardlink)
#define archive_entry_set_mtime (store_archive_fns.archive_entry_set_mtime)
#define archive_entry_set_pathname (store_archive_fns.archive_entry_set_pathname)
#define archive_entry_set_perm (store_archive_fns.archive_entry_set_perm)
#define archive_entry_set_rdev (store_archive_fns.archive_entry_set_rdev)
#define archive_entry_set_size (store_archive_fns.archive_entry_set_size)
#define archive_entry_set_symlink (store_archive_fns.archive_entry_set_symlink)
#define archive_entry_set_uid (store_archive_fns.archive_entry_set_uid)
#define archive_entry_xattr_add_entry (store_archive_fns.archive_entry_xattr_add_entry)
#define archive_entry_filetype (store_archive_fns.archive_entry_filetype)
#define archive_entry_gid (store_archive_fns.archive_entry_gid)
#define archive_entry_hardlink (store_archive_fns.archive_entry_hardlink)
#define archive_entry_mtime (store_archive_fns.archive_entry_mtime)
#define archive_entry_mtime_nsec (store_archive_fns.archive_entry_mtime_nsec)
#define archive_entry_pathname (store_archive_fns.archive_entry_pathname)
#define archive_entry_perm (store_archive_fns.archive_entry_perm)
#define archive_entry_rdev (store_archive_fns.archive_entry_rdev)
#define archive_entry_size (store_archive_fns.archive_entry_size)
#define archive_entry_size_is_set (store_archive_fns.archive_entry_size_is_set)
#define archive_entry_symlink (store_archive_fns.archive_entry_symlink)
#define archive_entry_uid (store_archive_fns.archive_entry_uid)
#define archive_entry_xattr_next (store_archive_fns.archive_entry_xattr_next)
#define archive_entry_xattr_reset (store_archive_fns.archive_entry_xattr_reset)
#define archive_write_add_filter_zstd (store_archive_fns.archive_write_add_filter_zstd)
#define archive_write_close (store_archive_fns.archive_write_close)
#define archive_write_data (store_archive_fns.archive_write_data)
#define archive_write_free (store_archive_fns.archive_write_free)
#define archive_write_header (store_archive_fns.archive_write_header)
#define archive_write_open_filename (store_archive_fns.archive_write_open_filename)
#define archive_write_open_fd (store_archive_fns.archive_write_open_fd)
#define archive_write_set_format_pax_restricted                                                    \
        (store_archive_fns.archive_write_set_format_pax_restricted)
#define archive_read_data (store_archive_fns.archive_read_data)
#define archive_read_data_block (store_archive_fns.archive_read_data_block)
#define archive_read_free (store_archive_fns.archive_read_free)
#define archive_read_next_header (store_archive_fns.archive_read_next_header)
#define archive_read_open_filename (store_archive_fns.archive_read_open_filename)
#define archive_read_open_fd (store_archive_fns.archive_read_open_fd)
#define archive_read_support_filter_zstd (store_archive_fns.archive_read_support_filter_zstd)
#define archive_read_support_format_tar (store_archive_fns.archive_read_support_format_tar)
#endif
#endif
