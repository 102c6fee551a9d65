/* The regression guard of tools/bench (`--check-against FILE`): the ratios a run gives
 * against the last ones recorded. A recorded ratio is one line `KEY VALUE COMMIT [NOTE...]`
 * inside a fence opened by ```ratios (docs/benchmarks.md, "Recorded ratios"; `--lines`
 * prints a run's in one); a key recorded again later in the file replaces what came before,
 * so the section is a log and its last line per key counts. Nothing outside such a fence is
 * read, so a page's prose and tables never pass for a ratio.
 * A line moves when the new value differs from the recorded one by more than the tolerance
 * (15 %) either way: worse is a regression, better is a run to record. Nothing here is
 * timed, so the check is tested with a recorded file and a synthetic result. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/bench.h"

#define FENCE "```"

static bool is_fence(const char *line, const char *info) {
        line += strspn(line, " ");
        if (strncmp(line, FENCE, 3))
                return false;
        if (!info)
                return true;
        line += 3;
        size_t l = strlen(info);
        return !strncmp(line, info, l) && (line[l] == '\0' || isspace((unsigned char)line[l]));
}

/* Parses `KEY VALUE COMMIT ...`; false for a comment, a blank line or anything else. */
static bool parse_line(const char *line, struct bench_line *ret) {
        struct bench_line l = {0};
        char value[32];
        if (sscanf(line, " %47s %31s %47s", l.key, value, l.commit) != 3 ||
            l.key[strspn(l.key, "abcdefghijklmnopqrstuvwxyz0123456789_")] != '\0')
                return false;
        char *end;
        l.value = strtod(value, &end);
        if (*end || end == value || !isfinite(l.value) || l.value < 0)
                return false;
        *ret = l;
        return true;
}

static int put_line(struct bench_line *lines, int n, int max, const struct bench_line *l) {
        for (int i = 0; i < n; i++)
                if (!strcmp(lines[i].key, l->key)) {
                        lines[i] = *l;
                        return n;
                }
        if (n == max)
                return -E2BIG;
        lines[n] = *l;
        return n + 1;
}

int bench_lines_read(const char *path, struct bench_line *ret, int max) {
        FILE *f = fopen(path, "re");
        if (!f)
                return -errno;
        char line[512];
        bool inside = false;
        int n = 0;
        while (n >= 0 && fgets(line, sizeof line, f)) {
                line[strcspn(line, "\n")] = '\0';
                struct bench_line l;
                if (is_fence(line, inside ? NULL : "ratios"))
                        inside = !inside;
                else if (inside && parse_line(line, &l))
                        n = put_line(ret, n, max, &l);
        }
        fclose(f);
        return n;
}

int bench_check(const struct bench_line *old, int nold, const struct bench_line *now, int nnow,
                double tolerance) {
        int moved = 0;
        printf("%-32s %10s %-10s %10s %8s\n", "line", "recorded", "(commit)", "now", "change");
        for (int i = 0; i < nold; i++) {
                const struct bench_line *n = NULL;
                for (int k = 0; k < nnow && !n; k++)
                        if (!strcmp(now[k].key, old[i].key))
                                n = &now[k];
                if (!n) {
                        printf("%-32s %10.2f %-10s %10s\n", old[i].key, old[i].value, old[i].commit,
                               "-");
                        continue;
                }
                double change = old[i].value > 0 ? n->value / old[i].value - 1
                                : n->value > 0   ? INFINITY
                                                 : 0;
                bool m = fabs(change) > tolerance;
                moved += m;
                printf("%-32s %10.2f %-10s %10.2f %+7.0f%%%s\n", old[i].key, old[i].value,
                       old[i].commit, n->value, change * 100,
                       !m           ? ""
                       : change > 0 ? "  MOVED (worse)"
                                    : "  MOVED (better)");
        }
        for (int k = 0; k < nnow; k++) {
                bool seen = false;
                for (int i = 0; i < nold && !seen; i++)
                        seen = !strcmp(now[k].key, old[i].key);
                if (!seen)
                        printf("%-32s %10s %-10s %10.2f\n", now[k].key, "-", "", now[k].value);
        }
        printf("\n%d of %d recorded lines moved by more than %.0f %%\n", moved, nold,
               tolerance * 100);
        return moved;
}
