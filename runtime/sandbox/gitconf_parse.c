/* git's config file syntax (runtime/sandbox/gitconf.h, rt_gitconf_parse), after config.c's
 * get_base_var, get_extended_base_var, get_value and parse_value. The input may be a file the
 * agent wrote: every read is bounded by len, and the key and value buffers are as large as the
 * input. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/sandbox/gitconf.h"

struct parser {
        const char *buf;
        size_t len, pos;
        bool eof;
        char *sect; /* "section" or "section\0sub" (sub_off > 0) */
        size_t sect_len, sub_off;
        char *name, *value;
};

/* The next byte, with CRLF as LF; at the end a LF, once, then eof. */
static int next_char(struct parser *p) {
        if (p->pos >= p->len) {
                p->eof = true;
                return '\n';
        }
        int c = (unsigned char)p->buf[p->pos++];
        if (c == '\r' && p->pos < p->len && p->buf[p->pos] == '\n')
                c = (unsigned char)p->buf[p->pos++];
        return c;
}

static bool key_char(int c) {
        return isascii(c) && (isalnum(c) || c == '-');
}

static bool space(int c) {
        return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* [section "sub"]: after the space, up to and including ']'. */
static int extended_sect(struct parser *p, int c) {
        do {
                if (c == '\n')
                        return -EINVAL;
                c = next_char(p);
        } while (c == ' ' || c == '\t');
        if (c != '"')
                return -EINVAL;
        p->sect[p->sect_len++] = '\0';
        p->sub_off = p->sect_len;
        for (;;) {
                c = next_char(p);
                if (c == '\n')
                        return -EINVAL;
                if (c == '"')
                        break;
                if (c == '\\') {
                        c = next_char(p);
                        if (c == '\n')
                                return -EINVAL;
                }
                p->sect[p->sect_len++] = (char)c;
        }
        p->sect[p->sect_len] = '\0';
        /* [a.b "c"]: git's key is a.b.c.NAME, whose section is a and subsection b.c */
        char *dot = strchr(p->sect, '.');
        if (dot) {
                p->sect[p->sub_off - 1] = '.';
                *dot = '\0';
                p->sub_off = (size_t)(dot - p->sect) + 1;
        }
        return next_char(p) == ']' && p->sect[0] ? 0 : -EINVAL;
}

/* After '[': the section's name, lower-cased, and its subsection. */
static int section(struct parser *p) {
        p->sect_len = 0;
        p->sub_off = 0;
        for (;;) {
                int c = next_char(p);
                if (p->eof)
                        return -EINVAL;
                if (c == ']')
                        break;
                if (space(c)) {
                        p->sect[p->sect_len] = '\0';
                        return p->sect_len ? extended_sect(p, c) : -EINVAL;
                }
                if (!key_char(c) && c != '.')
                        return -EINVAL;
                p->sect[p->sect_len++] = (char)tolower(c);
        }
        p->sect[p->sect_len] = '\0';
        /* [section.sub]: the legacy form, all of it lower-cased, split at the first dot */
        char *dot = strchr(p->sect, '.');
        if (dot) {
                *dot = '\0';
                p->sub_off = (size_t)(dot - p->sect) + 1;
        }
        return p->sect[0] ? 0 : -EINVAL;
}

/* A value, from after '=' to the end of its line. */
static int value(struct parser *p) {
        size_t len = 0, spaces = 0;
        bool quote = false, comment = false;
        for (;;) {
                int c = next_char(p);
                if (c == '\n') {
                        if (quote)
                                return -EINVAL;
                        p->value[len] = '\0';
                        return 0;
                }
                if (comment)
                        continue;
                if (space(c) && !quote) {
                        if (len)
                                spaces++;
                        continue;
                }
                if (!quote && (c == ';' || c == '#')) {
                        comment = true;
                        continue;
                }
                for (; spaces; spaces--)
                        p->value[len++] = ' ';
                if (c == '\\') {
                        c = next_char(p);
                        switch (c) {
                        case '\n':
                                if (p->eof)
                                        return -EINVAL;
                                continue;
                        case 't':
                                c = '\t';
                                break;
                        case 'b':
                                c = '\b';
                                break;
                        case 'n':
                                c = '\n';
                                break;
                        case '\\':
                        case '"':
                                break;
                        default:
                                return -EINVAL;
                        }
                        p->value[len++] = (char)c;
                        continue;
                }
                if (c == '"') {
                        quote = !quote;
                        continue;
                }
                p->value[len++] = (char)c;
        }
}

/* A key starting with c, then its value (NULL for a bare key); calls fn. */
static int key(struct parser *p, int c, rt_gitconf_fn fn, void *arg) {
        size_t n = 0;
        for (;;) {
                p->name[n++] = (char)tolower(c);
                c = next_char(p);
                if (p->eof || !key_char(c))
                        break;
        }
        p->name[n] = '\0';
        while (c == ' ' || c == '\t')
                c = next_char(p);
        const char *v = NULL;
        if (c != '\n') {
                if (c != '=')
                        return -EINVAL;
                int r = value(p);
                if (r < 0)
                        return r;
                v = p->value;
        }
        if (!p->sect_len)
                return -EINVAL; /* a key before any section */
        return fn(arg, p->sect, p->sub_off ? p->sect + p->sub_off : NULL, p->name, v);
}

int rt_gitconf_parse(const char *buf, size_t len, rt_gitconf_fn fn, void *arg) {
        struct parser p = {.buf = buf, .len = len};
        p.sect = malloc(len + 2);
        p.name = malloc(len + 1);
        p.value = malloc(len + 1);
        int r = 0;
        if (!p.sect || !p.name || !p.value) {
                r = -ENOMEM;
                goto out;
        }
        if (len >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3))
                p.pos = 3;
        while (r >= 0) {
                int c = next_char(&p);
                if (p.eof)
                        break;
                if (space(c))
                        continue;
                if (c == '#' || c == ';') {
                        while (!p.eof && c != '\n')
                                c = next_char(&p);
                        continue;
                }
                if (c == '[')
                        r = section(&p);
                else if (isascii(c) && isalpha(c))
                        r = key(&p, c, fn, arg);
                else
                        r = -EINVAL;
        }
out:
        free(p.sect);
        free(p.name);
        free(p.value);
        return r < 0 ? r : 0;
}
