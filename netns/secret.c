/* Secrets the gate adds to requests for one host (docs/network.md, "Secrets"): the parsing
 * of --secret NAME@HOST (the value from rtn's environment variable NAME),
 * --secret-file NAME@HOST=FILE (the value from FILE) and --secret-header NAME=TEMPLATE (the
 * header line, "{}" standing for the value; Authorization: Bearer {} by default), and the
 * header line the gate sends. HOST written http://HOST lets the secret go over plain HTTP
 * too, where no server proves it is HOST; without it only a verified TLS server gets it.
 * The value never comes from the command line, where ps(1) shows it, and it is checked here
 * for what would let it end a header line early (CR, LF, NUL, other controls): a value that
 * split the line would add headers of its own. No error shows the value, nor a part of an
 * argument before it passed its check (a NAME, HOST, FILE or TEMPLATE that fails may be the
 * value, given by mistake): errors name the option and its position instead. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
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

/* FILE's content, one trailing newline (LF or CRLF) dropped. what names the option; the path
 * is not shown (it may be a value given by mistake), errno's text says what failed. */
static int value_from_file(struct netns_secret *s, const char *path, const char *what,
                           struct rtn_error *err) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0)
                return rtn_err(err, errno, "%s: open its FILE", what);
        if (S_ISDIR(st.st_mode))
                return rtn_errx(err, EISDIR, "%s: its FILE is a directory", what);
        char buf[NETNS_SECRET_VALUE_MAX + 3];
        ssize_t n = rtn_read_full(fd, buf, sizeof buf);
        if (n < 0)
                return rtn_err(err, (int)-n, "%s: read its FILE", what);
        size_t len = (size_t)n;
        if (len && buf[len - 1] == '\n')
                len--;
        if (len && buf[len - 1] == '\r')
                len--;
        int r = set_value(s, buf, len, what, err);
        explicit_bzero(buf, sizeof buf);
        return r;
}

/* The position of the secret option being parsed ("secret #2"), the one thing an error may
 * name before the argument's parts have passed their checks: a NAME, HOST or FILE that
 * failed one may be the value itself, given by mistake. */
static void secret_label(const struct netns_secrets *ss, const char *opt, char *buf, size_t len) {
        snprintf(buf, len, "%s (secret #%zu)", opt, ss->n + 1);
}

int netns_secret_add(struct netns_secrets *ss, const char *arg, bool from_file,
                     struct rtn_error *err) {
        const char *opt = from_file ? "--secret-file" : "--secret";
        char what[400];
        secret_label(ss, opt, what, sizeof what);
        if (ss->n >= NETNS_SECRETS_MAX)
                return rtn_errx(err, E2BIG, "%s: at most %d secrets", what, NETNS_SECRETS_MAX);
        const char *at = strchr(arg, '@');
        const char *eq = from_file && at ? strchr(at, '=') : NULL;
        /* Nothing of arg is shown: it may be a value someone tried to pass. */
        if (!at || (from_file && !eq) || (!from_file && strchr(arg, '=')))
                return rtn_errx(err, EINVAL, "%s wants %s (the argument is not shown)", what,
                                from_file ? "NAME@[http://]HOST=FILE"
                                          : "NAME@[http://]HOST (the value is rtn's "
                                            "environment variable NAME, never an argument)");
        struct netns_secret *s = &ss->s[ss->n];
        memset(s, 0, sizeof *s);
        size_t nl = (size_t)(at - arg);
        if (!name_ok(arg, nl))
                return rtn_errx(err, EINVAL,
                                "%s: its NAME is not an environment variable name (letters, "
                                "digits and _; not shown, as it may be a value)",
                                what);
        memcpy(s->name, arg, nl);
        const char *h = at + 1;
        if (!strncasecmp(h, NETNS_SECRET_CLEARTEXT, strlen(NETNS_SECRET_CLEARTEXT))) {
                s->cleartext = true;
                h += strlen(NETNS_SECRET_CLEARTEXT);
        }
        char host[300];
        size_t hl = eq ? (size_t)(eq - h) : strlen(h);
        snprintf(host, sizeof host, "%.*s", (int)(hl < 299 ? hl : 299), h);
        union netns_ip ip;
        int family = 0;
        if (hl >= sizeof host ||
            netns_host_canon(host, s->host, sizeof s->host, &ip, &family) < 0 || family ||
            strchr(s->host, ':'))
                return rtn_errx(err, EINVAL,
                                "%s: its HOST is not a host name (a name, no port, no address; "
                                "not shown, as it may be a value)",
                                what);
        snprintf(what, sizeof what, "%s (secret #%zu, for %s)", opt, ss->n + 1, s->host);
        for (size_t i = 0; i < ss->n; i++)
                if (!strcmp(ss->s[i].name, s->name) && !strcmp(ss->s[i].host, s->host))
                        return rtn_errx(err, EEXIST, "%s: secret #%zu has the same NAME and HOST",
                                        what, i + 1);
        snprintf(s->header, sizeof s->header, "%s", NETNS_SECRET_HEADER_DEFAULT);
        int r;
        if (from_file) {
                r = value_from_file(s, eq + 1, what, err);
        } else {
                const char *v = getenv(s->name);
                if (!v)
                        return rtn_errx(err, ENOENT,
                                        "%s: its NAME is not set in rtn's environment (not "
                                        "shown, as it may be a value; or use --secret-file "
                                        "NAME@HOST=FILE)",
                                        what);
                snprintf(what, sizeof what, "%s %s@%s%s (secret #%zu)", opt, s->name,
                         s->cleartext ? NETNS_SECRET_CLEARTEXT : "", s->host, ss->n + 1);
                r = set_value(s, v, strlen(v), what, err);
        }
        if (r == 0)
                ss->n++;
        return r;
}

/* The NAME of a --secret-header is shown only once it is known as a secret's NAME, and its
 * TEMPLATE never is: a template may hold the value, written where {} belongs. */
int netns_secret_header(struct netns_secrets *ss, const char *arg, struct rtn_error *err) {
        const char *eq = strchr(arg, '=');
        size_t nl = eq ? (size_t)(eq - arg) : 0;
        bool found = false;
        for (size_t i = 0; eq && i < ss->n; i++)
                found |= strlen(ss->s[i].name) == nl && !memcmp(ss->s[i].name, arg, nl);
        if (!eq || !name_ok(arg, nl))
                return rtn_errx(err, EINVAL,
                                "--secret-header wants NAME=TEMPLATE (the argument is not "
                                "shown, as it may hold a value)");
        if (!found)
                return rtn_errx(err, ENOENT,
                                "--secret-header: no --secret or --secret-file before it has its "
                                "NAME (not shown, as it may be a value)");
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
                                "shorter than %d bytes (the template is not shown)",
                                (int)nl, arg, NETNS_SECRET_HEADER_MAX);
        for (size_t i = 0; i < ss->n; i++)
                if (strlen(ss->s[i].name) == nl && !memcmp(ss->s[i].name, arg, nl))
                        snprintf(ss->s[i].header, sizeof ss->s[i].header, "%s", t);
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

bool netns_secrets_cleartext(const struct netns_secrets *ss, const char *host) {
        for (size_t i = 0; i < ss->n; i++)
                if (!strcmp(ss->s[i].host, host) && !ss->s[i].cleartext)
                        return false;
        return true;
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
