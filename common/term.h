/* Text for a terminal. What the agent controls and the CLI prints — commit messages, file
 * names, process names, paths quoted in error messages — can hold escape sequences (an OSC 52
 * clipboard write behind an erase-line), newlines that forge lines of output, bidi controls
 * that reorder what is shown, and bytes that are not UTF-8. Everything rtn prints for a
 * reader goes through here, always (not only when stdout is a terminal: a log file is read
 * on one later). The rule (docs/security-invariants.md, 19), after git's quoting of paths:
 *   - printable ASCII and valid UTF-8 characters pass unchanged, non-ASCII letters included;
 *   - \a \b \t \n \v \f \r and the backslash are written as C escapes (\n, \\);
 *   - every other byte of a C0 control, DEL, a C1 control (U+0080-U+009F), a bidi or line
 *     separator control (U+061C, U+200E-U+200F, U+2028-U+202E, U+2066-U+2069), and every
 *     byte that is not part of valid UTF-8, is written as a three-digit octal escape (\033);
 *   - with RTN_TERM_QUOTE (names), a name that needed any escape is written in double
 *     quotes, with '"' escaped too, as git writes "a\033b". */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define RTN_TERM_QUOTE 1u

/* Escapes s[0..n) into buf (NUL-terminated, cut at cap - 1 bytes, never inside an escape);
 * returns the length of the whole escaped text. */
size_t rtn_term_escape(const char *s, size_t n, unsigned flags, char *buf, size_t cap);
/* Whether s[0..n) holds a control the rule above escapes: a C0 control, DEL, a C1 control or a
 * bidi or line separator control (a name that would steer a terminal or show reordered). */
bool rtn_term_has_control(const char *s, size_t n);
/* Writes s escaped to f. */
void rtn_term_fputs(FILE *f, const char *s, unsigned flags);
/* printf(3) to f with the formatted text escaped, except for one final newline. */
void rtn_term_printf(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
