/* A git config file (runtime/sandbox/gitconf_parse.c, rt_gitconf_parse), which the agent may have
 * written: an included file of the work tree, read on the trusted side to find what git will
 * run. Oracles beyond the sanitizers: every key has a non-empty lower-case section and a name
 * of letters, digits and '-' that starts with a letter; no key, subsection or value is longer
 * than the input; the parse gives 0 or -EINVAL and nothing else; parsing the same input again
 * gives the same keys. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz.h"
#include "runtime/sandbox/gitconf.h"

struct seen {
        size_t size;
        unsigned long n, sum;
};

static int check(void *arg, const char *section, const char *sub, const char *name,
                 const char *value) {
        struct seen *s = arg;
        if (!*section || !isalpha((unsigned char)name[0]) || strlen(section) > s->size ||
            strlen(name) > s->size || (sub && strlen(sub) > s->size) ||
            (value && strlen(value) > s->size))
                abort();
        for (const char *p = section; *p; p++)
                if (isupper((unsigned char)*p) || !(isalnum((unsigned char)*p) || *p == '-'))
                        abort();
        for (const char *p = name; *p; p++)
                if (isupper((unsigned char)*p) || !(isalnum((unsigned char)*p) || *p == '-'))
                        abort();
        s->n++;
        s->sum = s->sum * 31 + strlen(name) + (value ? strlen(value) : 7);
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct seen a = {.size = size}, b = {.size = size};
        int r = rt_gitconf_parse((const char *)data, size, check, &a);
        if (r != 0 && r != -EINVAL)
                abort();
        if (rt_gitconf_parse((const char *)data, size, check, &b) != r || a.n != b.n ||
            a.sum != b.sum)
                abort();
        return 0;
}
