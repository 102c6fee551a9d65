#!/usr/bin/env bash
# The terminal check (docs/security-invariants.md, 19): text the CLI prints can hold names the
# agent chose (paths in err.msg, refusal reasons, environment names, commit messages), so
# every printf-family call of cli/ with a %s conversion, every puts/fputs of cli/ of a string
# that is not a literal, and every such call of mcp/ and serve/ that writes to stderr must go through
# common/term.h (rtn_term_printf, rtn_term_fputs) instead. A call that prints only rtn's own
# text (a usage, escaped JSON) says so with the comment  /* rtn's own text */  inside it or
# after it on its line. Prints each offending call as file:line and exits 1 if there is one.
#
#   tools/check-term.sh [ROOT]      (default: the tree this script is in)
set -uo pipefail

ROOT=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$ROOT" || exit 2

exec python3 - cli/*.c $(find mcp serve -name '*.c' | LC_ALL=C sort) <<'PY'
import re, sys

CALL = re.compile(r"(?<![\w.>])(printf|fprintf|vprintf|vfprintf|puts|fputs|perror)\s*\(")
MARK = "/* rtn's own text */"
STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
bad = 0
for path in sys.argv[1:]:
    src = open(path, encoding="utf-8", errors="replace").read()
    for m in CALL.finditer(src):
        i, depth, quoted, esc = m.end(), 1, False, False
        while i < len(src) and depth:
            c = src[i]
            if quoted:
                esc, quoted = (False, quoted) if esc else (c == "\\", c != '"')
            elif c == '"':
                quoted = True
            elif c in "()":
                depth += 1 if c == "(" else -1
            i += 1
        call = src[m.start():i]
        if MARK in call or MARK in src[i:src.find("\n", i)]:
            continue
        fn, args = m.group(1), call[m.end() - m.start():-1].strip()
        if path.startswith(("mcp/", "serve/")) and not re.search(r"\bstderr\b", args):
            continue
        if fn in ("puts", "fputs"):
            if args.startswith('"'):
                continue
            why = "a string that is not a literal"
        elif fn == "perror":
            why = "perror"
        elif re.search(r"%[-+ #0-9.*]*s", "".join(STRING.findall(call))):
            why = "a %s conversion"
        else:
            continue
        line = src.count("\n", 0, m.start()) + 1
        print(f"{path}:{line}: {fn} of {why}: use rtn_term_printf or rtn_term_fputs "
              "(common/term.h)")
        bad += 1
sys.exit(1 if bad else 0)
PY
