/* The gate's TLS interception for hosts with a secret (docs/network.md, "Secrets"). At a
 * gate's start it makes a CA of its own (an EC P-256 key that lives in this process's memory
 * only, never in a file) and, for each secret's host, a leaf certificate it signs; the
 * sandbox trusts the CA through the bundle rtn installs (runtime/sandbox/identity.c). A
 * CONNECT to such a host is answered by a TLS server with that leaf, and the gate opens a
 * TLS client of its own to the checked address, which verifies the upstream certificate
 * against the host's trust store (OpenSSL's default paths: SSL_CERT_FILE and SSL_CERT_DIR
 * of rtn's environment when set) and the host name. Any other host is never intercepted.
 *
 * OpenSSL (libssl.so.3 and the libcrypto it needs) is loaded the first time a gate with a
 * secret is made, by the loader the store's libraries use too (common/dl.h): rtn without
 * --secret never loads it. Its headers give types and constants; every function is called through a
 * table of dlsym()'d pointers (dlsym on libssl's handle finds libcrypto's symbols, a dependency of
 * it). Macros of OpenSSL's that expand to a call (SSL_CTX_set_min_proto_version,
 * BIO_get_mem_data, SSL_set_tlsext_host_name) are spelled out as the *_ctrl calls they are. */
#include <errno.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/opensslv.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>

#include "common/dl.h"
#include "common/log.h"
#include "netns/internal.h"
#include "netns/netns.h"

#if OPENSSL_VERSION_MAJOR != 3
#error "netns/intercept.c: update the libssl soname for this OpenSSL"
#endif

#define CA_DAYS 825 /* longer than any rtn serve runs; the CA dies with the gate anyway */
#define IO_TIMEOUT_SEC 30
#define IDLE_TIMEOUT_MS 120000

// clang-format off
#define SSL_FNS(X) \
        X(EVP_PKEY_Q_keygen) X(EVP_PKEY_free) X(EVP_sha256) \
        X(X509_new) X(X509_free) X(X509_set_version) X(X509_get_serialNumber) \
        X(ASN1_INTEGER_set_uint64) X(X509_gmtime_adj) X(X509_getm_notBefore) \
        X(X509_getm_notAfter) X(X509_set_pubkey) X(X509_get_subject_name) \
        X(X509_NAME_add_entry_by_txt) X(X509_set_issuer_name) X(X509V3_set_ctx) \
        X(X509V3_EXT_conf_nid) X(X509_add_ext) X(X509_EXTENSION_free) X(X509_sign) \
        X(BIO_new) X(BIO_s_mem) X(BIO_ctrl) X(BIO_free) X(PEM_write_bio_X509) \
        X(ERR_get_error) X(ERR_error_string_n) X(ERR_clear_error) \
        X(X509_verify_cert_error_string) X(RAND_bytes) \
        X(TLS_server_method) X(TLS_client_method) X(SSL_CTX_new) X(SSL_CTX_free) \
        X(SSL_CTX_use_certificate) X(SSL_CTX_use_PrivateKey) \
        X(SSL_CTX_set_default_verify_paths) X(SSL_CTX_set_verify) X(SSL_CTX_ctrl) \
        X(SSL_new) X(SSL_free) X(SSL_set_fd) X(SSL_accept) X(SSL_connect) X(SSL_read) \
        X(SSL_write) X(SSL_shutdown) X(SSL_get_error) X(SSL_ctrl) X(SSL_set1_host) \
        X(SSL_get_servername) X(SSL_get_verify_result) X(SSL_pending) \
        X(SSL_CTX_callback_ctrl)
// clang-format on
#define MEMBER(f) __typeof__(f) *f;
static struct { SSL_FNS(MEMBER) } F;
#undef MEMBER

#define SSL_SYM(f) RTN_DL_SYM(F, f)
static const struct rtn_dl_sym ssl_syms[] = {SSL_FNS(SSL_SYM)};
static struct rtn_dl ssl_lib = RTN_DL_INIT("libssl.so.3", ssl_syms);

struct leaf {
        char host[256];
        SSL_CTX *ctx;
};

struct netns_intercept {
        SSL_CTX *up; /* the client side, verifying */
        struct leaf leaf[NETNS_SECRETS_MAX];
        size_t nleaf;
        char *ca_pem;
};

struct netns_tls_conn {
        SSL *ssl;
        int fd;
};

/* OpenSSL's last error as text (its queue is per thread). */
static const char *ssl_why(char *buf, size_t len) {
        unsigned long e = F.ERR_get_error();
        if (!e)
                return "unknown TLS error";
        F.ERR_error_string_n(e, buf, len);
        F.ERR_clear_error();
        return buf;
}

static int add_ext(X509 *x, X509 *issuer, int nid, const char *value) {
        X509V3_CTX ctx;
        F.X509V3_set_ctx(&ctx, issuer, x, NULL, NULL, 0);
        X509_EXTENSION *e = F.X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
        if (!e)
                return -EINVAL;
        int ok = F.X509_add_ext(x, e, -1);
        F.X509_EXTENSION_free(e);
        return ok ? 0 : -EINVAL;
}

/* A certificate for key with subject CN=cn, signed by (issuer, ikey), or self-signed when
 * issuer is NULL; exts are (nid, value) pairs ending in 0. */
static X509 *make_cert(EVP_PKEY *key, const char *cn, X509 *issuer, EVP_PKEY *ikey, const int *nids,
                       const char *const *values) {
        X509 *x = F.X509_new();
        uint64_t serial;
        if (!x || F.RAND_bytes((unsigned char *)&serial, sizeof serial) != 1)
                goto fail;
        serial >>= 1; /* positive, and at most 8 bytes */
        if (!F.X509_set_version(x, X509_VERSION_3) ||
            !F.ASN1_INTEGER_set_uint64(F.X509_get_serialNumber(x), serial) ||
            !F.X509_gmtime_adj(F.X509_getm_notBefore(x), -3600) ||
            !F.X509_gmtime_adj(F.X509_getm_notAfter(x), (long)CA_DAYS * 86400) ||
            !F.X509_set_pubkey(x, key) ||
            !F.X509_NAME_add_entry_by_txt(F.X509_get_subject_name(x), "CN", MBSTRING_ASC,
                                          (const unsigned char *)cn, -1, -1, 0) ||
            !F.X509_set_issuer_name(x, F.X509_get_subject_name(issuer ? issuer : x)))
                goto fail;
        for (size_t i = 0; nids[i]; i++)
                if (add_ext(x, issuer ? issuer : x, nids[i], values[i]) < 0)
                        goto fail;
        if (!F.X509_sign(x, issuer ? ikey : key, F.EVP_sha256()))
                goto fail;
        return x;
fail:
        F.X509_free(x);
        return NULL;
}

static char *cert_pem(X509 *x) {
        BIO *b = F.BIO_new(F.BIO_s_mem());
        char *data = NULL, *pem = NULL;
        if (b && F.PEM_write_bio_X509(b, x)) {
                long n = F.BIO_ctrl(b, BIO_CTRL_INFO, 0, &data);
                if (n > 0 && data)
                        pem = strndup(data, (size_t)n);
        }
        F.BIO_free(b);
        return pem;
}

/* The client's server name must be the leaf's host (the CONNECT host, as a tunnel's
 * ClientHello must name it: gate.c, check_sni): otherwise the handshake fails. */
static int on_servername(SSL *ssl, int *alert, void *host) {
        const char *sni = F.SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
        if (sni && !strcasecmp(sni, host))
                return SSL_TLSEXT_ERR_OK;
        *alert = SSL_AD_UNRECOGNIZED_NAME;
        return SSL_TLSEXT_ERR_ALERT_FATAL;
}

static SSL_CTX *leaf_ctx(X509 *ca, EVP_PKEY *ca_key, EVP_PKEY *key, const char *host) {
        char san[300];
        snprintf(san, sizeof san, "DNS:%s", host);
        static const int nids[] = {NID_basic_constraints,
                                   NID_key_usage,
                                   NID_ext_key_usage,
                                   NID_subject_alt_name,
                                   NID_authority_key_identifier,
                                   0};
        const char *values[] = {"critical,CA:FALSE", "critical,digitalSignature",
                                "serverAuth",        san,
                                "keyid:always",      NULL};
        X509 *x = make_cert(key, host, ca, ca_key, nids, values);
        SSL_CTX *ctx = x ? F.SSL_CTX_new(F.TLS_server_method()) : NULL;
        if (ctx && (!F.SSL_CTX_use_certificate(ctx, x) || !F.SSL_CTX_use_PrivateKey(ctx, key) ||
                    !F.SSL_CTX_ctrl(ctx, SSL_CTRL_SET_MIN_PROTO_VERSION, TLS1_2_VERSION, NULL) ||
                    !F.SSL_CTX_callback_ctrl(ctx, SSL_CTRL_SET_TLSEXT_SERVERNAME_CB,
                                             (void (*)(void))on_servername) ||
                    !F.SSL_CTX_ctrl(ctx, SSL_CTRL_SET_TLSEXT_SERVERNAME_ARG, 0, (void *)host))) {
                F.SSL_CTX_free(ctx);
                ctx = NULL;
        }
        F.X509_free(x);
        return ctx;
}

static int make_ca(struct netns_intercept *t, const struct netns_secrets *ss, char *why,
                   size_t wl) {
        EVP_PKEY *ca_key = F.EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
        EVP_PKEY *key = F.EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
        X509 *ca = NULL;
        int r = -EIO;
        static const int nids[] = {NID_basic_constraints, NID_key_usage, NID_subject_key_identifier,
                                   0};
        static const char *const values[] = {"critical,CA:TRUE,pathlen:0",
                                             "critical,keyCertSign,cRLSign", "hash", NULL};
        char cn[64];
        uint32_t tag = 0;
        if (!ca_key || !key || F.RAND_bytes((unsigned char *)&tag, sizeof tag) != 1)
                goto done;
        snprintf(cn, sizeof cn, "rtn sandbox CA %08x", tag);
        if (!(ca = make_cert(ca_key, cn, NULL, NULL, nids, values)) || !(t->ca_pem = cert_pem(ca)))
                goto done;
        for (size_t i = 0; i < ss->n; i++) {
                size_t j = 0;
                while (j < t->nleaf && strcmp(t->leaf[j].host, ss->s[i].host))
                        j++;
                if (j < t->nleaf)
                        continue;
                snprintf(t->leaf[j].host, sizeof t->leaf[j].host, "%s", ss->s[i].host);
                if (!(t->leaf[j].ctx = leaf_ctx(ca, ca_key, key, t->leaf[j].host)))
                        goto done;
                t->nleaf++;
        }
        r = 0;
done:
        if (r < 0)
                snprintf(why, wl, "make the gate's CA: %s", ssl_why((char[256]){0}, 256));
        F.X509_free(ca);
        F.EVP_PKEY_free(ca_key); /* the CA's key is gone: no more certificates can be made */
        F.EVP_PKEY_free(key);
        return r;
}

int netns_intercept_new(const struct netns_secrets *ss, struct netns_intercept **ret,
                        struct rtn_error *err) {
        if (rtn_dl_load(&ssl_lib) < 0)
                return rtn_errx(err, ENOSYS, "--secret needs OpenSSL 3 (libssl3): %s", ssl_lib.why);
        struct netns_intercept *t = calloc(1, sizeof *t);
        char why[300];
        if (!t)
                return rtn_errx(err, ENOMEM, "gate: out of memory");
        int r = make_ca(t, ss, why, sizeof why);
        if (r == 0 && !(t->up = F.SSL_CTX_new(F.TLS_client_method())))
                r = -EIO, snprintf(why, sizeof why, "TLS client: %s", ssl_why((char[256]){0}, 256));
        if (r == 0) {
                F.SSL_CTX_set_verify(t->up, SSL_VERIFY_PEER, NULL);
                F.SSL_CTX_ctrl(t->up, SSL_CTRL_SET_MIN_PROTO_VERSION, TLS1_2_VERSION, NULL);
                if (!F.SSL_CTX_set_default_verify_paths(t->up))
                        r = -EIO, snprintf(why, sizeof why, "the host's trust store: %s",
                                           ssl_why((char[256]){0}, 256));
        }
        if (r < 0) {
                netns_intercept_free(t);
                return rtn_errx(err, -r, "%s", why);
        }
        *ret = t;
        return 0;
}

void netns_intercept_free(struct netns_intercept *t) {
        if (!t)
                return;
        for (size_t i = 0; i < t->nleaf; i++)
                F.SSL_CTX_free(t->leaf[i].ctx);
        F.SSL_CTX_free(t->up);
        free(t->ca_pem);
        free(t);
}

const char *netns_intercept_ca_pem(const struct netns_intercept *t) {
        return t ? t->ca_pem : NULL;
}

/* Blocking I/O with a time limit, so a peer that stalls mid-record cannot hold a thread. */
static void set_timeouts(int fd) {
        struct timeval tv = {.tv_sec = IO_TIMEOUT_SEC};
        (void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        (void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

static struct netns_tls_conn *conn_new(SSL_CTX *ctx, int fd) {
        struct netns_tls_conn *c = calloc(1, sizeof *c);
        if (c && !(c->ssl = F.SSL_new(ctx))) {
                free(c);
                return NULL;
        }
        if (c && !F.SSL_set_fd(c->ssl, fd)) {
                netns_tls_close(c);
                return NULL;
        }
        if (c)
                c->fd = fd;
        set_timeouts(fd);
        return c;
}

int netns_tls_accept(struct netns_intercept *t, int fd, const char *host,
                     struct netns_tls_conn **ret, char *why, size_t wl) {
        SSL_CTX *ctx = NULL;
        for (size_t i = 0; i < t->nleaf; i++)
                if (!strcmp(t->leaf[i].host, host))
                        ctx = t->leaf[i].ctx;
        struct netns_tls_conn *c = ctx ? conn_new(ctx, fd) : NULL;
        if (!c)
                return snprintf(why, wl, "no certificate for %.100s", host), -ENOENT;
        char eb[256];
        if (F.SSL_accept(c->ssl) != 1) {
                const char *sni = F.SSL_get_servername(c->ssl, TLSEXT_NAMETYPE_host_name);
                if (sni && strcasecmp(sni, host))
                        snprintf(why, wl,
                                 "TLS server name %.100s differs from the CONNECT host %.100s", sni,
                                 host);
                else
                        snprintf(why, wl,
                                 "a CONNECT tunnel to %.100s carries TLS only, naming %.100s (%s)",
                                 host, host, ssl_why(eb, sizeof eb));
                F.ERR_clear_error();
                netns_tls_close(c);
                return -EACCES;
        }
        *ret = c;
        return 0;
}

int netns_tls_connect(struct netns_intercept *t, int fd, const char *host,
                      struct netns_tls_conn **ret, char *why, size_t wl) {
        struct netns_tls_conn *c = conn_new(t->up, fd);
        if (!c)
                return snprintf(why, wl, "TLS to %.100s: out of memory", host), -ENOMEM;
        char eb[256];
        if (!F.SSL_ctrl(c->ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
                        (void *)host) ||
            !F.SSL_set1_host(c->ssl, host)) {
                netns_tls_close(c);
                return snprintf(why, wl, "TLS to %.100s: %s", host, ssl_why(eb, sizeof eb)), -EIO;
        }
        if (F.SSL_connect(c->ssl) != 1) {
                long v = F.SSL_get_verify_result(c->ssl);
                if (v != X509_V_OK)
                        snprintf(why, wl, "the certificate of %.100s is refused: %s", host,
                                 F.X509_verify_cert_error_string(v));
                else
                        snprintf(why, wl, "TLS to %.100s failed: %s", host, ssl_why(eb, sizeof eb));
                netns_tls_close(c);
                return -EACCES;
        }
        *ret = c;
        return 0;
}

ssize_t netns_tls_read(struct netns_tls_conn *c, void *buf, size_t len) {
        int n = F.SSL_read(c->ssl, buf, len > INT32_MAX ? INT32_MAX : (int)len);
        if (n > 0)
                return n;
        int e = F.SSL_get_error(c->ssl, n);
        F.ERR_clear_error();
        return e == SSL_ERROR_ZERO_RETURN ? 0 : -EIO;
}

int netns_tls_write(struct netns_tls_conn *c, const void *buf, size_t len) {
        const char *p = buf;
        while (len > 0) {
                int n = F.SSL_write(c->ssl, p, len > INT32_MAX ? INT32_MAX : (int)len);
                if (n <= 0) {
                        F.ERR_clear_error();
                        return -EIO;
                }
                p += n;
                len -= (size_t)n;
        }
        return 0;
}

/* Copies both ways as netns_relay does, record by record: what OpenSSL holds decrypted
 * already (SSL_pending) is served before poll(2) is asked. */
uint64_t netns_tls_relay(struct netns_tls_conn *a, struct netns_tls_conn *b, uint64_t a_limit) {
        struct netns_tls_conn *c[2] = {a, b};
        bool open[2] = {a_limit > 0, true};
        char buf[16384];
        while (open[0] || open[1]) {
                int ready = -1;
                for (int i = 0; i < 2 && ready < 0; i++)
                        if (open[i] && F.SSL_pending(c[i]->ssl) > 0)
                                ready = i;
                if (ready < 0) {
                        struct pollfd p[2] = {{.fd = open[0] ? a->fd : -1, .events = POLLIN},
                                              {.fd = open[1] ? b->fd : -1, .events = POLLIN}};
                        int n = poll(p, 2, IDLE_TIMEOUT_MS);
                        if (n < 0 && errno == EINTR)
                                continue;
                        if (n <= 0)
                                return a_limit;
                        ready = p[0].revents ? 0 : 1;
                }
                size_t want = sizeof buf;
                if (ready == 0 && a_limit < want)
                        want = (size_t)a_limit;
                ssize_t k = netns_tls_read(c[ready], buf, want);
                if (k < 0 && ready == 1)
                        return a_limit;
                if (k > 0 && netns_tls_write(c[1 - ready], buf, (size_t)k) < 0)
                        return a_limit;
                if (ready == 0 && k > 0 && a_limit != UINT64_MAX)
                        a_limit -= (uint64_t)k;
                if (ready == 1 && k <= 0)
                        return a_limit; /* the answer is complete; a stays open */
                if (k <= 0 || a_limit == 0) {
                        if (k <= 0)
                                (void)shutdown(b->fd, SHUT_WR);
                        open[0] = false;
                }
        }
        return a_limit;
}

bool netns_tls_pending(struct netns_tls_conn *c) {
        struct pollfd p = {.fd = c->fd, .events = POLLIN};
        return F.SSL_pending(c->ssl) > 0 || poll(&p, 1, 0) == 1;
}

void netns_tls_close(struct netns_tls_conn *c) {
        if (!c)
                return;
        if (c->ssl) {
                (void)F.SSL_shutdown(c->ssl);
                F.SSL_free(c->ssl);
        }
        F.ERR_clear_error();
        free(c);
}
