/* Secrets the gate adds to requests for one host (docs/network.md, "Secrets"): the parsing
 * of --secret NAME@HOST (the value from rtn's environment variable NAME),
 * --secret-file NAME@HOST=FILE (the value from FILE) and --secret-header NAME=TEMPLATE (the
 * header line, "{}" standing for the value; Authorization: Bearer {} by default), and the
 * header line the gate sends. The value never comes from the command line, where ps(1)
 * shows it, and it is checked here for what would let it end a header line early (CR, LF,
 * NUL, other controls): a value that split the line would add headers of its own. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/io.h"
#include "netns/netns.h"

static bool name_ok(const char *s, size_t len) {
        if (len == 0 || len >= NETNS_SECRET_NAME_MAX || (s[0] >= '0' && s[0] <= '9'))
                return false;
        for (size_t i = 0; i < len; i++)
                if (!(s[i] == '_' || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
                      (s[i] >= '0' && s[i] <= '9')))
                        return false;
        return true;
}

/* Printable ASCII and blanks only: nothing that ends a header line or confuses a parser. */
static bool value_ok(const char *v, size_t len) {
        for (size_t i = 0; i < len; i++)
                if (((unsigned char)v[i] < 0x20 && v[i] != '\t') || (unsigned char)v[i] >= 0x7f)
                        return false;
        return len > 0;
}

static int set_value(struct netns_secret *s, const char *v, size_t len, const char *what,
                     struct rtn_error *err) {
        if (len > NETNS_SECRET_VALUE_MAX)
                return rtn_errx(err, E2BIG, "%s: the value is longer than %d bytes", what,
                                NETNS_SECRET_VALUE_MAX);
        if (!value_ok(v, len))
                return rtn_errx(err, EINVAL,
                                "%s: the value is empty or has a control character or a "
                                "non-ASCII byte (it goes into a header line)",
                                what);
        if (!(s->value = strndup(v, len)))
                return rtn_errx(err, ENOMEM, "%s: out of memory", what);
        return 0;
}

/* FILE's content, one trailing newline (LF or CRLF) dropped. */
static int value_from_file(struct netns_secret *s, const char *path, struct rtn_error *err) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0)
                return rtn_err(err, errno, "--secret-file %s", path);
        if (S_ISDIR(st.st_mode))
                return rtn_errx(err, EISDIR, "--secret-file %s: is a directory", path);
        char buf[NETNS_SECRET_VALUE_MAX + 3];
        ssize_t n = rtn_read_full(fd, buf, sizeof buf);
        if (n < 0)
                return rtn_err(err, (int)-n, "--secret-file %s: read", path);
        size_t len = (size_t)n;
        if (len && buf[len - 1] == '\n')
                len--;
        if (len && buf[len - 1] == '\r')
                len--;
        char what[300];
        snprintf(what, sizeof what, "--secret-file %s", path);
        int r = set_value(s, buf, len, what, err);
        explicit_bzero(buf, sizeof buf);
        return r;
}

int netns_secret_add(struct netns_secrets *ss, const char *arg, bool from_file,
                     struct rtn_error *err) {
        const char *opt = from_file ? "--secret-file" : "--secret";
        if (ss->n >= NETNS_SECRETS_MAX)
                return rtn_errx(err, E2BIG, "%s: at most %d secrets", opt, NETNS_SECRETS_MAX);
        const char *at = strchr(arg, '@');
        const char *eq = from_file && at ? strchr(at, '=') : NULL;
        /* Shown up to a '=' at most: what follows may be a value someone tried to pass. */
        if (!at || (from_file && !eq) || (!from_file && strchr(at, '=')))
                return rtn_errx(err, EINVAL, "%s wants %s: %.*s", opt,
                                from_file ? "NAME@HOST=FILE"
                                          : "NAME@HOST (the value is rtn's "
                                            "environment variable NAME, never an argument)",
                                (int)strcspn(arg, "="), arg);
        struct netns_secret *s = &ss->s[ss->n];
        memset(s, 0, sizeof *s);
        size_t nl = (size_t)(at - arg);
        if (!name_ok(arg, nl))
                return rtn_errx(err, EINVAL, "%s: %.*s is not an environment variable name", opt,
                                (int)(nl < 200 ? nl : 200), arg);
        memcpy(s->name, arg, nl);
        char host[300];
        size_t hl = eq ? (size_t)(eq - at - 1) : strlen(at + 1);
        snprintf(host, sizeof host, "%.*s", (int)(hl < 299 ? hl : 299), at + 1);
        union netns_ip ip;
        int family = 0;
        if (hl >= sizeof host ||
            netns_host_canon(host, s->host, sizeof s->host, &ip, &family) < 0 || family ||
            strchr(s->host, ':'))
                return rtn_errx(err, EINVAL,
                                "%s: %.100s is not a host name (a name, no port, no address)", opt,
                                host);
        snprintf(s->header, sizeof s->header, "%s", NETNS_SECRET_HEADER_DEFAULT);
        int r;
        if (from_file) {
                r = value_from_file(s, eq + 1, err);
        } else {
                const char *v = getenv(s->name);
                if (!v)
                        return rtn_errx(err, ENOENT,
                                        "--secret %s: %s is not set in rtn's environment "
                                        "(or use --secret-file %s@%s=FILE)",
                                        arg, s->name, s->name, s->host);
                char what[300];
                snprintf(what, sizeof what, "--secret %s", s->name);
                r = set_value(s, v, strlen(v), what, err);
        }
        if (r == 0)
                ss->n++;
        return r;
}

int netns_secret_header(struct netns_secrets *ss, const char *arg, struct rtn_error *err) {
        const char *eq = strchr(arg, '=');
        size_t nl = eq ? (size_t)(eq - arg) : 0;
        if (!eq || !name_ok(arg, nl))
                return rtn_errx(err, EINVAL, "--secret-header wants NAME=TEMPLATE: %s", arg);
        const char *t = eq + 1, *colon = strchr(t, ':'), *ph = strstr(t, "{}");
        size_t name_len = colon ? (size_t)(colon - t) : 0;
        bool token = name_len > 0;
        for (size_t i = 0; i < name_len; i++)
                token &= t[i] > 0x20 && t[i] < 0x7f && !strchr("()<>@,;:\\\"/[]?={}", t[i]);
        if (!token || !ph || ph < colon || strstr(ph + 2, "{}") || !value_ok(t, strlen(t)) ||
            strlen(t) >= NETNS_SECRET_HEADER_MAX)
                return rtn_errx(err, EINVAL,
                                "--secret-header %.*s: the template is 'Header-Name: text' "
                                "with one {} for the value after the colon, printable ASCII, "
                                "shorter than %d bytes",
                                (int)nl, arg, NETNS_SECRET_HEADER_MAX);
        bool found = false;
        for (size_t i = 0; i < ss->n; i++)
                if (strlen(ss->s[i].name) == nl && !memcmp(ss->s[i].name, arg, nl)) {
                        snprintf(ss->s[i].header, sizeof ss->s[i].header, "%s", t);
                        found = true;
                }
        if (!found)
                return rtn_errx(err, ENOENT,
                                "--secret-header %.*s: no --secret or --secret-file names %.*s "
                                "before it",
                                (int)nl, arg, (int)nl, arg);
        return 0;
}

int netns_secrets_copy(const struct netns_secrets *src, struct netns_secrets *dst) {
        memset(dst, 0, sizeof *dst);
        for (size_t i = 0; i < src->n; i++) {
                dst->s[i] = src->s[i];
                if (!(dst->s[i].value = strdup(src->s[i].value))) {
                        netns_secrets_free(dst);
                        return -ENOMEM;
                }
                dst->n = i + 1;
        }
        return 0;
}

void netns_secrets_free(struct netns_secrets *ss) {
        for (size_t i = 0; i < ss->n; i++) {
                if (ss->s[i].value) {
                        explicit_bzero(ss->s[i].value, strlen(ss->s[i].value));
                        free(ss->s[i].value);
                }
                ss->s[i].value = NULL;
        }
        ss->n = 0;
}

bool netns_secrets_for(const struct netns_secrets *ss, const char *host) {
        for (size_t i = 0; i < ss->n; i++)
                if (!strcmp(ss->s[i].host, host))
                        return true;
        return false;
}

size_t netns_secret_line(const struct netns_secret *s, char *buf, size_t len) {
        const char *ph = strstr(s->header, "{}");
        int n = snprintf(buf, len, "%.*s%s%s\r\n", (int)(ph - s->header), s->header, s->value,
                         ph + 2);
        return n > 0 && (size_t)n < len ? (size_t)n : 0;
}

size_t netns_secret_header_name(const struct netns_secret *s) {
        return strcspn(s->header, ":");
}
