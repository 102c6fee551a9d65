/* `rtn serve --http ADDR:PORT --token-file FILE`: the options of the front end, the token,
 * the listening socket, then the event loop that libmicrohttpd (mhd.c) and the sessions'
 * children (sessions.c) share. The options the front end does not know are every session's
 * `rtn serve` options, passed on as they are. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/duration.h"
#include "common/cleanup.h"
#include "common/clock.h"
#include "common/exitcode.h"
#include "common/log.h"
#include "common/loop.h"
#include "common/term.h"
#include "common/usage.h"
#include "serve/httpd/httpd.h"
#include "mcp/mcp.h"
#include "store/store.h"

/* Options of the front end. name=value or name value, as getopt_long takes them. */
enum { O_HTTP, O_TOKEN, O_IDLE, O_MAX, O_ORIGIN, O_PUBLIC, O_DATA, O_WSROOT };
static const struct {
        const char *name;
        bool arg;
} front_opts[] = {
        [O_HTTP] = {"http", true},           [O_TOKEN] = {"token-file", true},
        [O_IDLE] = {"idle-timeout", true},   [O_MAX] = {"max-sessions", true},
        [O_ORIGIN] = {"allow-origin", true}, [O_PUBLIC] = {"http-public", false},
        [O_DATA] = {"data-dir", true},       [O_WSROOT] = {"workspace-root", true},
};

/* Options of rtn serve that every session would share, refused here with what to use
 * instead. getopt_long takes any unambiguous prefix of a long option, so a prefix is refused
 * too. */
static const struct {
        const char *name, *why;
} shared_opts[] = {
        {"workspace", "every session would share the same host files; --workspace-root DIR gives "
                      "each session a workspace of its own under DIR"},
        {"bind", "every session would share the same host files; --workspace-root DIR gives each "
                 "session a workspace of its own under DIR"},
        {"publish", "a host port reaches one sandbox, and every later session would fail; run "
                    "rtn serve or rtn exec with --publish for the one sandbox that serves"},
};

bool mcp_httpd_requested(int argc, char **argv) {
        bool http = false;
        for (int i = 1; i < argc && strcmp(argv[i], "--"); i++) {
                if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
                        return false;
                if (!strcmp(argv[i], "--http") || !strncmp(argv[i], "--http=", 7))
                        http = true;
        }
        return http;
}

static int front_opt(const char *arg, size_t *ret_namelen) {
        size_t n = strcspn(arg + 2, "=");
        for (size_t i = 0; i < sizeof front_opts / sizeof front_opts[0]; i++)
                if (strlen(front_opts[i].name) == n && !strncmp(arg + 2, front_opts[i].name, n)) {
                        *ret_namelen = n;
                        return (int)i;
                }
        return -1;
}

/* Why a shared option is refused, or NULL. */
static const char *shared_opt(const char *arg) {
        size_t n = strcspn(arg + 2, "=");
        for (size_t i = 0; i < sizeof shared_opts / sizeof shared_opts[0]; i++)
                if (n > 0 && n <= strlen(shared_opts[i].name) &&
                    !strncmp(arg + 2, shared_opts[i].name, n))
                        return shared_opts[i].why;
        return NULL;
}

static int parse_uint(const char *name, const char *v, unsigned long long max,
                      unsigned long long *ret, struct rtn_error *err) {
        char *end;
        errno = 0;
        unsigned long long x = strtoull(v, &end, 10);
        if (errno || end == v || *end || *v == '-' || x == 0 || x > max)
                return rtn_errx(err, EINVAL, "bad --%s value '%s' (1 to %llu)", name, v, max);
        *ret = x;
        return 0;
}

/* RFC 3986's scheme, then "://", a host (a bracketed IPv6 address or a name of the
 * characters a browser's serialization keeps, but '*' and '%': a '*' in a host is no
 * wildcard, it would match nothing), and a port of 1-5 digits without a sign or a
 * leading zero, 1-65535, as browsers send it (RFC 6454, 6.2: the default port left out). */
int httpd_origin_parse(const char *o, const char **ret_host, size_t *ret_host_len,
                       unsigned *ret_port) {
        size_t n = strspn(o, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-.");
        if (!n || !((o[0] | 0x20) >= 'a' && (o[0] | 0x20) <= 'z') || strncmp(o + n, "://", 3))
                return -1;
        const char *host = o + n + 3, *end;
        if (host[0] == '[') {
                end = host + 1 + strspn(host + 1, "0123456789abcdefABCDEF:.");
                if (*end++ != ']' || end == host + 2)
                        return -1;
        } else {
                end = host + strspn(host, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                          "0123456789-._~!$&'()+;=");
                if (end == host)
                        return -1;
        }
        unsigned port = 0;
        if (*end == ':') {
                const char *d = end + 1;
                size_t nd = strspn(d, "0123456789");
                if (!nd || nd > 5 || d[0] == '0' || d[nd])
                        return -1;
                for (size_t i = 0; i < nd; i++)
                        port = port * 10 + (unsigned)(d[i] - '0');
                if (port > 65535)
                        return -1;
        } else if (*end) {
                return -1;
        }
        if (ret_host)
                *ret_host = host;
        if (ret_host_len)
                *ret_host_len = (size_t)(end - host);
        if (ret_port)
                *ret_port = port;
        return 0;
}

static int set_front_opt(struct httpd_opts *o, int which, const char *v, struct rtn_error *err) {
        unsigned long long x = 0;
        int r = 0;
        switch (which) {
        case O_HTTP:
                o->listen = v;
                break;
        case O_TOKEN:
                o->token_file = v;
                break;
        case O_DATA:
                o->data_dir = v;
                break;
        case O_WSROOT:
                o->workspace_root = v;
                break;
        case O_IDLE:
                r = rtn_duration_opt("--idle-timeout", v, &o->idle_usec, err);
                break;
        case O_MAX:
                if ((r = parse_uint("max-sessions", v, HTTPD_MAX_SESSIONS, &x, err)) == 0)
                        o->max_sessions = (unsigned)x;
                break;
        case O_ORIGIN:
                if (o->norigins >= HTTPD_MAX_ORIGINS)
                        return rtn_errx(err, E2BIG, "at most %d --allow-origin", HTTPD_MAX_ORIGINS);
                if (strcmp(v, "null") && httpd_origin_parse(v, NULL, NULL, NULL) < 0)
                        return rtn_errx(err, EINVAL,
                                        "bad --allow-origin '%s': an origin is SCHEME://HOST or "
                                        "SCHEME://HOST:PORT, as a browser sends it (no path, no "
                                        "slash at the end, no *)",
                                        v);
                if (!strcmp(v, "null"))
                        log_warn("--allow-origin null lets every page that sends Origin: null "
                                 "through (sandboxed frames, data: and file: pages of any "
                                 "site); only the token stops them");
                o->origins[o->norigins++] = v;
                break;
        case O_PUBLIC:
                o->public_ok = true;
                break;
        default:
                return rtn_errx(err, EINVAL, "unknown option");
        }
        return r;
}

/* --allow-host-port naming --http's own port: a sandbox of this server would reach the
 * endpoint that drives its sandboxes (each session's rtn serve, and the gate at each
 * request, refuse it too: netns_port_rtns). Said here, before anything listens. */
static int host_port_clash(const struct httpd_opts *o, struct rtn_error *err) {
        static const char opt[] = "--allow-host-port";
        const char *lp = strrchr(o->listen, ':');
        for (size_t i = 0; lp && i < o->child_argc; i++) {
                const char *a = o->child_argv[i], *v = NULL;
                size_t n = strcspn(a, "=");
                if (n <= strlen("--allow-host-") || n > strlen(opt) || strncmp(a, opt, n))
                        continue;
                v = a[n] == '=' ? a + n + 1 : i + 1 < o->child_argc ? o->child_argv[i + 1] : NULL;
                if (v && *v && strtoul(v, NULL, 10) == strtoul(lp + 1, NULL, 10) &&
                    strspn(v, "0123456789") == strlen(v))
                        return rtn_errx(err, EINVAL,
                                        "--allow-host-port %s: that port is rtn's own (--http %s "
                                        "listens on it); open the port of the host's service "
                                        "instead",
                                        v, o->listen);
        }
        return 0;
}

int httpd_parse_opts(int argc, char **argv, struct httpd_opts *o, struct rtn_error *err) {
        *o = (struct httpd_opts){.idle_usec = HTTPD_DEFAULT_IDLE_SECS * RTN_USEC_PER_SEC,
                                 .max_sessions = HTTPD_DEFAULT_MAX_SESSIONS};
        if (!(o->child_argv = calloc((size_t)argc + 4, sizeof *o->child_argv)))
                return rtn_err(err, ENOMEM, "options");
        o->child_argv[o->child_argc++] = "serve";
        o->child_argv[o->child_argc++] = "--http-session";
        for (int i = 1; i < argc; i++) {
                const char *a = argv[i];
                size_t n;
                int which = strncmp(a, "--", 2) || !a[2] ? -1 : front_opt(a, &n);
                if (which < 0) {
                        const char *why = !strncmp(a, "--", 2) && a[2] ? shared_opt(a) : NULL;
                        if (why)
                                return rtn_errx(err, EINVAL, "%s cannot be used with --http: %s", a,
                                                why);
                        o->child_argv[o->child_argc++] = argv[i];
                        continue;
                }
                const char *v = NULL;
                if (a[2 + n] == '=') {
                        if (!front_opts[which].arg)
                                return rtn_errx(err, EINVAL, "--%s takes no value",
                                                front_opts[which].name);
                        v = a + 3 + n;
                } else if (front_opts[which].arg) {
                        if (i + 1 >= argc)
                                return rtn_errx(err, EINVAL, "--%s needs a value",
                                                front_opts[which].name);
                        v = argv[++i];
                }
                int r = set_front_opt(o, which, v, err);
                if (r < 0)
                        return r;
        }
        if (!o->listen)
                return rtn_errx(err, EINVAL, "--http ADDR:PORT is required");
        if (!o->token_file)
                return rtn_errx(err, EINVAL,
                                "--http needs --token-file FILE: every request must carry its "
                                "bearer token");
        return host_port_clash(o, err);
}

void httpd_opts_free(struct httpd_opts *o) {
        free(o->child_argv);
        o->child_argv = NULL;
}

int httpd_read_token(const char *path, char **ret, struct rtn_error *err) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return rtn_err(err, errno, "--token-file %s", path);
        struct stat st;
        if (fstat(fd, &st) < 0)
                return rtn_err(err, errno, "--token-file %s", path);
        if (!S_ISREG(st.st_mode))
                return rtn_errx(err, EINVAL, "--token-file %s is not a regular file", path);
        /* As ssh refuses a private key others can read: a token that is not private is no
         * token. */
        if (st.st_mode & (S_IRWXG | S_IRWXO))
                return rtn_errx(err, EPERM,
                                "--token-file %s is accessible by group or others (mode %04o); "
                                "chmod 600 it",
                                path, (unsigned)(st.st_mode & 07777));
        if (st.st_uid != geteuid() && st.st_uid != 0)
                return rtn_errx(err, EPERM, "--token-file %s belongs to uid %u, not to you", path,
                                (unsigned)st.st_uid);
        char buf[HTTPD_TOKEN_MAX + 2];
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0)
                return rtn_err(err, errno, "read --token-file %s", path);
        while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
                n--;
        if (n > HTTPD_TOKEN_MAX)
                return rtn_errx(err, E2BIG, "--token-file %s: the token is longer than %d bytes",
                                path, HTTPD_TOKEN_MAX);
        if (n < HTTPD_TOKEN_MIN)
                return rtn_errx(err, EINVAL,
                                "--token-file %s: the token has %zd bytes, at least %d needed "
                                "(e.g. head -c 32 /dev/urandom | base64)",
                                path, n, HTTPD_TOKEN_MIN);
        for (ssize_t i = 0; i < n; i++)
                if (buf[i] < 0x21 || buf[i] > 0x7e)
                        return rtn_errx(err, EINVAL,
                                        "--token-file %s: the token must be printable ASCII "
                                        "without spaces, on one line",
                                        path);
        if (!(*ret = strndup(buf, (size_t)n)))
                return rtn_err(err, ENOMEM, "token");
        return 0;
}

int httpd_parse_listen(const char *s, struct sockaddr_storage *ret, socklen_t *ret_len,
                       bool *ret_loopback, struct rtn_error *err) {
        char host[64];
        const char *colon = strrchr(s, ':');
        if (!colon || (size_t)(colon - s) >= sizeof host)
                return rtn_errx(err, EINVAL, "--http %s: expected ADDR:PORT", s);
        memcpy(host, s, (size_t)(colon - s));
        host[colon - s] = '\0';
        char *end;
        errno = 0;
        unsigned long port = strtoul(colon + 1, &end, 10);
        if (errno || end == colon + 1 || *end || port > 65535)
                return rtn_errx(err, EINVAL, "--http %s: bad port", s);
        memset(ret, 0, sizeof *ret);
        size_t hl = strlen(host);
        if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') {
                struct sockaddr_in6 *a = (struct sockaddr_in6 *)ret;
                host[hl - 1] = '\0';
                if (inet_pton(AF_INET6, host + 1, &a->sin6_addr) != 1)
                        return rtn_errx(err, EINVAL, "--http %s: bad IPv6 address", s);
                a->sin6_family = AF_INET6;
                a->sin6_port = htons((uint16_t)port);
                *ret_len = sizeof *a;
                *ret_loopback = IN6_IS_ADDR_LOOPBACK(&a->sin6_addr);
                return 0;
        }
        struct sockaddr_in *a = (struct sockaddr_in *)ret;
        if (inet_pton(AF_INET, host, &a->sin_addr) != 1)
                return rtn_errx(err, EINVAL,
                                "--http %s: ADDR must be an IPv4 address or [IPv6] (e.g. "
                                "127.0.0.1:8080)",
                                s);
        a->sin_family = AF_INET;
        a->sin_port = htons((uint16_t)port);
        *ret_len = sizeof *a;
        *ret_loopback = (ntohl(a->sin_addr.s_addr) >> 24) == 127;
        return 0;
}

bool httpd_token_equal(const char *given, size_t given_len, const char *want, size_t want_len) {
        volatile unsigned char d = given_len != want_len;
        for (size_t i = 0; i < want_len; i++)
                d |= (unsigned char)(want[i] ^ (i < given_len ? given[i] : 0));
        return d == 0;
}

static int open_listener(struct httpd *h, struct rtn_error *err) {
        struct sockaddr_storage sa;
        socklen_t sl;
        int r = httpd_parse_listen(h->o->listen, &sa, &sl, &h->loopback, err);
        if (r < 0)
                return r;
        if (!h->loopback && !h->o->public_ok)
                return rtn_errx(err, EPERM,
                                "--http %s is not a loopback address: anyone who can reach it "
                                "may try the token, over plain HTTP; add --http-public to mean "
                                "it (and put TLS in front)",
                                h->o->listen);
        int fd = socket(sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return rtn_err(err, errno, "socket");
        int one = 1;
        (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, (struct sockaddr *)&sa, sl) < 0 || listen(fd, 1024) < 0 ||
            getsockname(fd, (struct sockaddr *)&sa, &sl) < 0) {
                r = rtn_err(err, errno, "listen on %s", h->o->listen);
                close(fd);
                return r;
        }
        char a[INET6_ADDRSTRLEN];
        if (sa.ss_family == AF_INET6) {
                inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&sa)->sin6_addr, a, sizeof a);
                snprintf(h->host, sizeof h->host, "[%s]", a);
                h->port = ntohs(((struct sockaddr_in6 *)&sa)->sin6_port);
        } else {
                inet_ntop(AF_INET, &((struct sockaddr_in *)&sa)->sin_addr, a, sizeof a);
                snprintf(h->host, sizeof h->host, "%s", a);
                h->port = ntohs(((struct sockaddr_in *)&sa)->sin_port);
        }
        return fd;
}

/* The store every session's server uses: the data dir of the front end, the caller's only.
 * Environments are per server (one token, one principal): a commit made in one session is
 * in the environment the next session starts on (docs/architecture.md, "MCP over HTTP"). */
static int open_base(struct httpd *h, struct rtn_error *err) {
        char data[4096];
        int r;
        if (h->o->data_dir)
                snprintf(data, sizeof data, "%s", h->o->data_dir);
        else if ((r = store_default_dir(data, sizeof data, err)) < 0)
                return r;
        if (!(h->base = strdup(data)))
                return rtn_err(err, ENOMEM, "data dir");
        if (mkdir(data, 0700) < 0 && errno != EEXIST)
                return rtn_err(err, errno, "mkdir %s", data);
        return 0;
}

static void on_signal(struct rtn_loop *l, const struct signalfd_siginfo *si, void *ud) {
        struct httpd *h = ud;
        (void)si;
        h->stopping = true;
        rtn_loop_stop(l, 0);
}

static void on_tick(struct rtn_loop *l, struct rtn_loop_source *t, void *ud) {
        (void)l;
        (void)t;
        struct httpd *h = ud;
        httpd_sessions_tick(h);
        /* Heads already received are read first: a busy server's late tick drops only the
         * connections that really did not finish theirs in time. */
        httpd_mhd_run(h);
        httpd_mhd_tick(h);
        httpd_mhd_run(h);
}

/* Every connection is an fd, and so are a session's pipes and pidfd: the soft limit goes up to
 * the hard one (the children get the old one back), and the connections without the token
 * are capped to what is left after the sessions' room. */
static void raise_nofile(struct httpd *h) {
        struct rlimit rl;
        h->max_unauth = HTTPD_MAX_UNAUTH;
        if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
                return;
        h->nofile = rl;
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
                rl = h->nofile;
        rlim_t need = (rlim_t)h->o->max_sessions * 8 + 128; /* sessions, their requests, ours */
        rlim_t room = rl.rlim_cur > need ? rl.rlim_cur - need : 16;
        if (room < h->max_unauth)
                h->max_unauth = room < 16 ? 16 : (unsigned)room;
        log_debug("httpd: RLIMIT_NOFILE %llu, %u connections without the token at most",
                  (unsigned long long)rl.rlim_cur, h->max_unauth);
}

static int setup(struct httpd *h, struct rtn_error *err) {
        int r;
        if ((r = httpd_read_token(h->o->token_file, &h->token, err)) < 0)
                return r;
        h->token_len = strlen(h->token);
        if ((h->exe_fd = open("/proc/self/exe", O_PATH | O_CLOEXEC)) < 0)
                return rtn_err(err, errno, "open /proc/self/exe");
        if ((r = open_base(h, err)) < 0)
                return r;
        if (h->o->workspace_root &&
            (h->wsroot_fd =
                     open(h->o->workspace_root, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
                return rtn_err(err, errno, "--workspace-root %s", h->o->workspace_root);
        if ((r = rtn_loop_new(&h->loop)) < 0)
                return rtn_err(err, -r, "event loop");
        if ((r = rtn_loop_add_signal(h->loop, SIGTERM, on_signal, h)) < 0 ||
            (r = rtn_loop_add_signal(h->loop, SIGINT, on_signal, h)) < 0 ||
            (r = rtn_loop_add_signal(h->loop, SIGPIPE, NULL, NULL)) < 0)
                return rtn_err(err, -r, "signals");
        raise_nofile(h);
        int fd = open_listener(h, err);
        if (fd < 0)
                return fd;
        if ((r = httpd_mhd_start(h, fd, err)) < 0) {
                close(fd);
                return r;
        }
        if ((r = rtn_loop_add_timer(h->loop, RTN_USEC_PER_SEC, RTN_USEC_PER_SEC, on_tick, h,
                                    &h->tick)) < 0)
                return rtn_err(err, -r, "timer");
        return 0;
}

int mcp_httpd_cmd(int argc, char **argv) {
        struct httpd_opts o;
        struct httpd h = {.exe_fd = -1, .wsroot_fd = -1};
        struct rtn_error err = {0};
        struct mcp_config cfg;
        mcp_config_init(&cfg);
        h.o = &o;
        h.max_body = cfg.limits.max_line;
        int r = httpd_parse_opts(argc, argv, &o, &err);
        bool usage = r < 0; /* a usage error: docs/rtn.1, CONVENTIONS */
        if (r == 0)
                r = setup(&h, &err);
        if (r < 0) {
                if (usage)
                        (void)rtn_usage_error("serve", "%s", err.msg);
                else
                        rtn_term_printf(stderr, "rtn serve: %s\n", err.msg);
                goto out;
        }
        if (!h.loopback)
                rtn_term_printf(
                        stderr,
                        "rtn serve: WARNING: serving plain HTTP on %s, beyond this machine: the "
                        "token and every result cross the network unencrypted unless TLS is in "
                        "front\n",
                        o.listen);
        rtn_term_printf(stderr, "rtn serve: listening on http://%s:%u/mcp\n", h.host, h.port);
        r = rtn_loop_run(h.loop);
        httpd_mhd_stop(&h); /* no new request while the sessions end */
        httpd_sessions_stop(&h);
out:
        if (h.loop)
                rtn_loop_free(h.loop);
        rtn_safe_close(h.exe_fd);
        rtn_safe_close(h.wsroot_fd);
        free(h.base);
        free(h.token);
        httpd_opts_free(&o);
        return usage ? RTN_EXIT_FAILURE : r < 0 ? 1 : 0;
}
