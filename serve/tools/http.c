/* http_get / http_post (see http.h). libcurl's headers give the types and constants only;
 * every function is looked up by common/dl.h's loader, so nothing links against libcurl. */
#include "serve/tools/http.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/clock.h"
#include "common/dl.h"
#include "common/io.h"
#include "common/json.h"
#include "common/loop.h"
#include "mcp/mcp.h"
#include "netns/netns.h"
#include "runtime/session/session.h"

#define MAX_HOPS 5
#define MAX_INFLIGHT 16
#define HEADERS_MAX (64 * 1024)
#define DEFAULT_MAX_BYTES (1024 * 1024)
#define DEFAULT_TIMEOUT_S 30

struct curl_fns {
        CURLcode (*global_init)(long);
        CURL *(*init)(void);
        CURLcode (*setopt)(CURL *, CURLoption, ...);
        CURLcode (*perform)(CURL *);
        CURLcode (*getinfo)(CURL *, CURLINFO, ...);
        void (*cleanup)(CURL *);
        struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
        void (*slist_free_all)(struct curl_slist *);
        const char *(*strerror)(CURLcode);
};

struct req {
        struct rt_http *h;
        struct mcp_call *call; /* NULL once finished elsewhere (shutdown) */
        struct req *next;
        char *url, *body;
        bool post;
        char **headers;
        uint64_t timeout_usec, max_bytes, start_usec, end_usec;
        atomic_bool cancel;
        /* results, written by the thread only */
        long status;
        char *resp, *hdrs, err[512];
        size_t resp_len, hdrs_len;
        bool truncated;
        struct sockaddr_storage pin;
        socklen_t pin_len;
};

struct rt_http {
        struct curl_fns c;
        struct netns_policy own_ok; /* the rules ADDR:PORT that admit an address of this machine */
        struct rtn_loop *loop;
        int pipe[2];
        struct req *reqs;
        unsigned inflight;
};

static struct curl_fns curl_loaded;
static const struct rtn_dl_sym curl_syms[] = {
        {"curl_global_init", (void **)&curl_loaded.global_init},
        {"curl_easy_init", (void **)&curl_loaded.init},
        {"curl_easy_setopt", (void **)&curl_loaded.setopt},
        {"curl_easy_perform", (void **)&curl_loaded.perform},
        {"curl_easy_getinfo", (void **)&curl_loaded.getinfo},
        {"curl_easy_cleanup", (void **)&curl_loaded.cleanup},
        {"curl_slist_append", (void **)&curl_loaded.slist_append},
        {"curl_slist_free_all", (void **)&curl_loaded.slist_free_all},
        {"curl_easy_strerror", (void **)&curl_loaded.strerror},
};
static struct rtn_dl curl_lib = {.soname = "libcurl.so.4",
                                 .alt = "libcurl-gnutls.so.4",
                                 .syms = curl_syms,
                                 .nsyms = sizeof curl_syms / sizeof curl_syms[0]};

static int load_curl(struct curl_fns *c) {
        int r = rtn_dl_load(&curl_lib);
        if (r < 0)
                return r;
        *c = curl_loaded;
        return c->global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -EIO;
}

/* ---- the worker thread ------------------------------------------------------------------ */

static size_t on_body(char *p, size_t sz, size_t n, void *ud) {
        struct req *r = ud;
        size_t len = sz * n, room = r->max_bytes - r->resp_len;
        if (len > room) {
                r->truncated = true;
                len = room;
        }
        memcpy(r->resp + r->resp_len, p, len);
        r->resp_len += len;
        return r->truncated ? 0 : sz * n; /* 0 stops the transfer: we have enough */
}

static size_t on_header(char *p, size_t sz, size_t n, void *ud) {
        struct req *r = ud;
        size_t len = sz * n;
        if (len >= 5 && !strncmp(p, "HTTP/", 5))
                r->hdrs_len = 0; /* a new response (after 100 Continue): keep only the last */
        if (r->hdrs_len + len < HEADERS_MAX) {
                memcpy(r->hdrs + r->hdrs_len, p, len);
                r->hdrs_len += len;
                r->hdrs[r->hdrs_len] = '\0';
        }
        return len;
}

/* The enforcement point: curl may open a socket to the pinned address only. */
static curl_socket_t on_open(void *ud, curlsocktype purpose, struct curl_sockaddr *a) {
        struct req *r = ud;
        if (purpose != CURLSOCKTYPE_IPCXN || a->addrlen != r->pin_len ||
            memcmp(&a->addr, &r->pin, r->pin_len) != 0 ||
            netns_addr_check(&a->addr, a->addrlen, NULL) < 0)
                return CURL_SOCKET_BAD;
        return socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
}

static int on_xfer(void *ud, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un) {
        return atomic_load(&((struct req *)ud)->cancel) ? 1 : 0;
}

/* scheme://[userinfo@]host[:port]/... → host (as written) and port; userinfo is refused. */
static int parse_url(const char *url, char *host, size_t hl, uint16_t *port) {
        const char *p;
        if (!strncasecmp(url, "http://", 7))
                p = url + 7, *port = 80;
        else if (!strncasecmp(url, "https://", 8))
                p = url + 8, *port = 443;
        else
                return -EPROTONOSUPPORT;
        size_t alen = strcspn(p, "/?#");
        if (memchr(p, '@', alen) || alen == 0 || alen >= hl)
                return -EINVAL;
        memcpy(host, p, alen);
        host[alen] = '\0';
        char *colon = host[0] == '[' ? strchr(host, ']') : host;
        colon = colon ? strchr(colon, ':') : NULL;
        if (colon) {
                char *end;
                unsigned long v = strtoul(colon + 1, &end, 10);
                if (*end || v == 0 || v > 65535)
                        return -EINVAL;
                *port = (uint16_t)v;
                *colon = '\0';
        }
        return netns_host_valid(host) ? 0 : -EINVAL;
}

/* One hop: resolve and pin, then perform. Returns the CURLcode, or -1 with r->err set. */
static int hop(struct req *r, CURL *e, const struct curl_fns *c, const char *url, bool post,
               uint64_t left_usec) {
        char host[300], pin[400], abuf[64];
        uint16_t port;
        struct rtn_error err = {0};
        int q = parse_url(url, host, sizeof host, &port);
        if (q < 0) {
                snprintf(r->err, sizeof r->err,
                         "%s: only http:// and https:// URLs with a host "
                         "name and no user info are fetched",
                         url);
                return -1;
        }
        if (netns_resolve(host, port, &r->h->own_ok, &r->pin, &r->pin_len, &err) < 0) {
                snprintf(r->err, sizeof r->err, "refused: %s", err.msg);
                return -1;
        }
        netns_addr_str((struct sockaddr *)&r->pin, abuf, sizeof abuf);
        snprintf(pin, sizeof pin, "%s:%u:%s", host[0] == '[' ? "" : host, port, abuf);
        struct curl_slist *res = host[0] == '[' ? NULL : c->slist_append(NULL, pin);
        r->resp_len = r->hdrs_len = 0;
        r->truncated = false;
        c->setopt(e, CURLOPT_URL, url);
        c->setopt(e, CURLOPT_RESOLVE, res);
        c->setopt(e, CURLOPT_TIMEOUT_MS, (long)((left_usec + 999) / 1000));
        c->setopt(e, CURLOPT_HTTPGET, 1L);
        if (post) {
                c->setopt(e, CURLOPT_POSTFIELDS, r->body);
                c->setopt(e, CURLOPT_POSTFIELDSIZE, (long)strlen(r->body));
        }
        CURLcode cc = c->perform(e);
        c->setopt(e, CURLOPT_RESOLVE, NULL);
        c->slist_free_all(res);
        return (int)cc;
}

static void set_common(struct req *r, CURL *e, const struct curl_fns *c, struct curl_slist *hl) {
        c->setopt(e, CURLOPT_NOSIGNAL, 1L);
        c->setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
        c->setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
        c->setopt(e, CURLOPT_PROXY, ""); /* never an environment proxy */
        c->setopt(e, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
        c->setopt(e, CURLOPT_ACCEPT_ENCODING, "");
        c->setopt(e, CURLOPT_USERAGENT, "rtn-http/1");
        c->setopt(e, CURLOPT_HTTPHEADER, hl);
        c->setopt(e, CURLOPT_WRITEFUNCTION, on_body);
        c->setopt(e, CURLOPT_WRITEDATA, r);
        c->setopt(e, CURLOPT_HEADERFUNCTION, on_header);
        c->setopt(e, CURLOPT_HEADERDATA, r);
        c->setopt(e, CURLOPT_OPENSOCKETFUNCTION, on_open);
        c->setopt(e, CURLOPT_OPENSOCKETDATA, r);
        c->setopt(e, CURLOPT_NOPROGRESS, 0L);
        c->setopt(e, CURLOPT_XFERINFOFUNCTION, on_xfer);
        c->setopt(e, CURLOPT_XFERINFODATA, r);
}

static void run_req(struct req *r) {
        const struct curl_fns *c = &r->h->c;
        CURL *e = c->init();
        struct curl_slist *hl = NULL;
        _cleanup_free_ char *url = NULL;
        if (!e || !(r->resp = malloc(r->max_bytes + 1)) || !(r->hdrs = malloc(HEADERS_MAX))) {
                snprintf(r->err, sizeof r->err, "out of memory");
                goto out;
        }
        for (size_t i = 0; r->headers && r->headers[i]; i++)
                hl = c->slist_append(hl, r->headers[i]);
        set_common(r, e, c, hl);
        url = strdup(r->url);
        bool post = r->post;
        for (int n = 0; url; n++) {
                uint64_t used = rtn_now_usec() - r->start_usec;
                if (used >= r->timeout_usec) {
                        snprintf(r->err, sizeof r->err, "timed out");
                        break;
                }
                int cc = hop(r, e, c, url, post, r->timeout_usec - used);
                if (cc < 0)
                        break;
                if (cc != CURLE_OK && !(cc == CURLE_WRITE_ERROR && r->truncated)) {
                        snprintf(r->err, sizeof r->err, "%s: %s", url,
                                 atomic_load(&r->cancel) ? "cancelled" : c->strerror(cc));
                        break;
                }
                char *loc = NULL;
                c->getinfo(e, CURLINFO_RESPONSE_CODE, &r->status);
                c->getinfo(e, CURLINFO_REDIRECT_URL, &loc);
                free(r->url);
                r->url = url;
                url = NULL;
                if (!loc || r->status < 300 || r->status > 399 || r->status == 304)
                        break;
                if (n + 1 >= MAX_HOPS) {
                        snprintf(r->err, sizeof r->err, "more than %d redirects", MAX_HOPS);
                        break;
                }
                /* 303, and 301/302 after a POST, become a GET (what browsers do). */
                if (r->status == 303 || r->status == 301 || r->status == 302)
                        post = false;
                url = strdup(loc);
        }
out:
        if (e)
                c->cleanup(e);
        c->slist_free_all(hl);
        r->end_usec = rtn_now_usec();
}

static void *req_main(void *arg) {
        struct req *r = arg;
        run_req(r);
        (void)!write(r->h->pipe[1], &r, sizeof r); /* atomic: < PIPE_BUF */
        return NULL;
}

/* ---- the loop side ---------------------------------------------------------------------- */

static void req_free(struct req *r) {
        free(r->url);
        free(r->body);
        mcp_strv_free(r->headers);
        free(r->resp);
        free(r->hdrs);
        free(r);
}

/* Text when the body is valid UTF-8 without NUL bytes; base64 otherwise. */
static bool valid_utf8(const unsigned char *s, size_t n) {
        size_t i = 0;
        while (i < n) {
                unsigned char c = s[i];
                size_t k;
                if (c == 0)
                        return false;
                if (c < 0x80) {
                        i++;
                        continue;
                }
                if ((c & 0xe0) == 0xc0 && c >= 0xc2)
                        k = 1;
                else if ((c & 0xf0) == 0xe0)
                        k = 2;
                else if ((c & 0xf8) == 0xf0 && c <= 0xf4)
                        k = 3;
                else
                        return false;
                if (i + k >= n)
                        return false;
                for (size_t j = 1; j <= k; j++)
                        if ((s[i + j] & 0xc0) != 0x80)
                                return false;
                i += k + 1;
        }
        return true;
}

static char *base64(const unsigned char *p, size_t n) {
        static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        char *out = malloc(4 * ((n + 2) / 3) + 1), *o = out;
        for (size_t i = 0; out && i < n; i += 3) {
                uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) |
                             (i + 2 < n ? p[i + 2] : 0);
                *o++ = t[v >> 18];
                *o++ = t[(v >> 12) & 63];
                *o++ = i + 1 < n ? t[(v >> 6) & 63] : '=';
                *o++ = i + 2 < n ? t[v & 63] : '=';
        }
        if (out)
                *o = '\0';
        return out;
}

/* Response headers as an object; a name seen twice gets its values joined with ", ". */
static void json_headers(struct rtn_json_buf *b, char *h) {
        const char *names[128], *vals[128];
        size_t n = 0;
        for (char *save = NULL, *l = strtok_r(h, "\r\n", &save); l && n < 128;
             l = strtok_r(NULL, "\r\n", &save)) {
                char *colon = strchr(l, ':');
                if (!colon || !strncmp(l, "HTTP/", 5))
                        continue;
                *colon = '\0';
                names[n] = l;
                vals[n++] = colon + 1 + strspn(colon + 1, " \t");
        }
        rtn_json_key(b, "headers");
        rtn_json_obj_begin(b);
        for (size_t i = 0; i < n; i++) {
                bool seen = false;
                for (size_t k = 0; k < i && !seen; k++)
                        seen = !strcasecmp(names[k], names[i]);
                if (seen)
                        continue;
                struct rtn_json_buf v = RTN_JSON_BUF_INIT(0);
                for (size_t k = i; k < n; k++)
                        if (!strcasecmp(names[k], names[i])) {
                                if (v.len)
                                        rtn_json_append(&v, ", ", 2);
                                rtn_json_append(&v, vals[k], strlen(vals[k]));
                        }
                rtn_json_key(b, names[i]);
                rtn_json_strn(b, v.data ? v.data : "", v.len);
                rtn_json_buf_free(&v);
        }
        rtn_json_obj_end(b);
}

static void finish_req(struct req *r) {
        if (r->err[0]) {
                mcp_call_finish_error(r->call, "%s %s", r->post ? "http_post" : "http_get", r->err);
                return;
        }
        struct rtn_json_buf b = RTN_JSON_BUF_INIT(0);
        rtn_json_obj_begin(&b);
        rtn_json_kv_str(&b, "url", r->url);
        rtn_json_kv_int(&b, "status", r->status);
        json_headers(&b, r->hdrs);
        bool text = valid_utf8((const unsigned char *)r->resp, r->resp_len);
        rtn_json_key(&b, "body");
        if (text) {
                rtn_json_strn(&b, r->resp, r->resp_len);
        } else {
                _cleanup_free_ char *enc = base64((const unsigned char *)r->resp, r->resp_len);
                rtn_json_str(&b, enc ? enc : "");
        }
        rtn_json_kv_str(&b, "body_encoding", text ? "text" : "base64");
        rtn_json_kv_bool(&b, "truncated", r->truncated);
        rtn_json_kv_int(&b, "duration_ms", (int64_t)((r->end_usec - r->start_usec) / 1000));
        rtn_json_obj_end(&b);
        mcp_call_finish_json(r->call, &b, NULL, false);
}

static void on_done(struct rtn_loop *l, int fd, uint32_t ev, void *ud) {
        struct rt_http *h = ud;
        struct req *r;
        while (read(fd, &r, sizeof r) == (ssize_t)sizeof r) {
                for (struct req **p = &h->reqs; *p; p = &(*p)->next)
                        if (*p == r) {
                                *p = r->next;
                                break;
                        }
                h->inflight--;
                if (r->call)
                        finish_req(r);
                req_free(r);
        }
}

static int http_new(struct rt_http **ret, struct rtn_loop *loop, const struct netns_policy *net) {
        struct rt_http *h = calloc(1, sizeof *h);
        if (!h)
                return -ENOMEM;
        int r = load_curl(&h->c);
        if (r == 0)
                r = netns_policy_copy(net, &h->own_ok);
        if (r == 0 && pipe2(h->pipe, O_CLOEXEC | O_NONBLOCK) < 0)
                r = negative_errno();
        else if (r == 0 && (r = rtn_loop_add_fd(loop, h->pipe[0], EPOLLIN, on_done, h)) < 0) {
                close(h->pipe[0]);
                close(h->pipe[1]);
        }
        if (r < 0) {
                netns_policy_free(&h->own_ok);
                free(h);
                return r;
        }
        (void)rtn_fd_nonblock(h->pipe[1], 0); /* the threads' end may block, never drop */
        h->loop = loop;
        *ret = h;
        return 0;
}

int rt_http_start(struct rt_http **hp, struct rtn_loop *loop, const struct netns_policy *net,
                  struct mcp_call *call, bool post, const struct mcp_args *a) {
        int r;
        if (!*hp && (r = http_new(hp, loop, net)) < 0) {
                if (r == -ENOMEM)
                        mcp_call_finish_error(call, "out of memory");
                else
                        mcp_call_finish_error(call,
                                              "libcurl cannot be loaded (%s); install libcurl4",
                                              strerror(-r));
                return 0;
        }
        struct rt_http *h = *hp;
        if (h->inflight >= MAX_INFLIGHT) {
                mcp_call_finish_error(call, "%d requests are running, the most at once",
                                      MAX_INFLIGHT);
                return 0;
        }
        struct req *q = calloc(1, sizeof *q);
        int64_t t = DEFAULT_TIMEOUT_S, mb = DEFAULT_MAX_BYTES;
        if (!q)
                return -ENOMEM;
        q->h = h;
        q->call = call;
        q->post = post;
        (void)mcp_args_int(a, "timeout", &t);
        (void)mcp_args_int(a, "max_bytes", &mb);
        q->timeout_usec = (uint64_t)t * RTN_USEC_PER_SEC;
        q->max_bytes = (uint64_t)mb;
        q->start_usec = rtn_now_usec();
        atomic_init(&q->cancel, false);
        if (mcp_args_str(a, "url", &q->url) < 0 ||
            (post && mcp_args_str(a, "body", &q->body) < 0)) {
                req_free(q);
                return -EINVAL;
        }
        (void)mcp_args_map(a, "headers", ": ", &q->headers);
        pthread_attr_t at;
        pthread_t tid;
        pthread_attr_init(&at);
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        r = pthread_create(&tid, &at, req_main, q);
        pthread_attr_destroy(&at);
        if (r != 0) {
                req_free(q);
                return -r;
        }
        q->next = h->reqs;
        h->reqs = q;
        h->inflight++;
        return 0;
}

bool rt_http_cancel(struct rt_http *h, struct mcp_call *call) {
        for (struct req *r = h ? h->reqs : NULL; r; r = r->next)
                if (r->call == call) {
                        atomic_store(&r->cancel, true); /* its thread ends it soon */
                        return true;
                }
        return false;
}

void rt_http_shutdown(struct rt_http *h) {
        for (struct req *r = h ? h->reqs : NULL; r; r = r->next)
                if (r->call) {
                        atomic_store(&r->cancel, true);
                        mcp_call_finish_error(r->call, "the server is shutting down");
                        r->call = NULL;
                }
        if (h) {
                rtn_loop_del_fd(h->loop, h->pipe[0]);
                h->loop = NULL;
        }
}

void rt_http_free(struct rt_http *h) {
        if (!h)
                return;
        /* Threads still running own their request and write to the pipe: leave both (the
         * process is about to exit); otherwise release everything. */
        if (h->inflight > 0)
                return;
        close(h->pipe[0]);
        close(h->pipe[1]);
        netns_policy_free(&h->own_ok);
        free(h);
}
