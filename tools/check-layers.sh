#!/usr/bin/env bash
# The layer check: every `#include "dir/..."` in the product's sources must point down the
# allowed graph (docs/HACKING.md, "Where code goes"):
#
#     common  <-  netns, store  <-  runtime  <-  serve  <-  cli
#     common  <-  mcp  <-  serve  (mcp: the protocol core; serve: rtn's tools behind it)
#     common  <-  init            (rtn-init: common only; the protocol is common/initproto.h)
#
# and, inside runtime/, its rooms in their own order:
#
#     runtime (runtime.h, internal.h)  <-  runtime/sandbox  <-  runtime/session  <-  runtime/rootfs
#                                                                                  <-  runtime/exec
#
# A room is a directory with a row below; a file belongs to the deepest room that holds it,
# and so does the header it includes. A room may include its own headers and those of the
# rooms its row names, never one above or beside it; "X/*" names room X and every room
# below it in the tree. Includes without a directory are generated headers ($(O)/gen) and are
# not edges. tests/, fuzz/ and tools/ sit outside the graph and may include anything.
#
# A module's internal.h is for that module alone (the top-level directory: runtime/sandbox/
# may include runtime/internal.h, cli/ may not): an include of another module's internal.h
# is refused even where the graph would allow the module (rtn serve --http's front end has
# mcp/wire.h for what it needs of the protocol core).
#
# Prints each wrong edge as file:line and exits 1 if there is one.
#
#   tools/check-layers.sh [ROOT]      (default: the tree this script is in)
set -uo pipefail
set -f # the rows hold "X/*", a pattern of rooms, never of files

ROOT=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$ROOT" || exit 2

declare -A allowed=(
        [common]="common"
        [netns]="common netns"
        [store]="common store"
        [init]="common init"
        [runtime]="common netns store runtime"
        [runtime/sandbox]="common netns store runtime runtime/sandbox"
        [runtime/session]="common netns store runtime runtime/sandbox runtime/session"
        [runtime/rootfs]="common netns store runtime runtime/sandbox runtime/session runtime/rootfs"
        [runtime/exec]="common netns store runtime runtime/sandbox runtime/session runtime/rootfs runtime/exec"
        [mcp]="common mcp"
        [serve]="common netns store runtime/* mcp serve/*"
        [cli]="common netns store runtime/* mcp serve/* cli"
)

# The deepest room holding path (a file or an include's target), or "" for none.
room_of() {
        local p=$1 best="" r
        for r in "${!allowed[@]}"; do
                case "$p" in
                "$r"/*) [ ${#r} -gt ${#best} ] && best=$r ;;
                esac
        done
        printf '%s' "$best"
}

# Whether the row of room from allows target room to.
may_include() {
        local to=$1 e
        for e in $2; do
                case "$e" in
                */\*) [[ $to == "${e%/\*}" || $to == "${e%/\*}"/* ]] && return 0 ;;
                *) [[ $to == "$e" ]] && return 0 ;;
                esac
        done
        return 1
}

bad=0
edges=0
declare -A room_cache=()
while IFS=: read -r file line text; do
        target=${text#*\"}
        target=${target%%\"*}
        from=${room_cache[${file%/*}]-}
        if [ -z "$from" ]; then
                from=$(room_of "$file")
                room_cache[${file%/*}]=$from
        fi
        [ -n "$from" ] || continue
        to=${room_cache[${target%/*}]-}
        if [ -z "$to" ]; then
                to=$(room_of "$target")
                room_cache[${target%/*}]=$to
        fi
        edges=$((edges + 1))
        if [ -z "$to" ] || ! may_include "$to" "${allowed[$from]}"; then
                echo "$file:$line: ${from} may not include ${to:-${target%%/*}}/ (${text})"
                bad=$((bad + 1))
        elif [[ $target == */internal.h && ${target%%/*} != "${file%%/*}" ]]; then
                echo "$file:$line: ${target} is ${target%%/*}/'s own; ${file%%/*}/ includes its public header (${text})"
                bad=$((bad + 1))
        fi
done < <(for mod in "${!allowed[@]}"; do
        case "$mod" in */*) continue ;; esac
        [ -d "$mod" ] || continue
        grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"[^"/]+/' \
                --include='*.c' --include='*.h' --include='*.S' "$mod"
done)

# rtn-init parses no JSON: common/json.h would pull jsmn into PID 1.
while IFS=: read -r file line text; do
        echo "$file:$line: init may not include common/json.h (rtn-init parses no JSON)"
        bad=$((bad + 1))
done < <(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"common/json\.h"' init)

if [ "$bad" -gt 0 ]; then
        echo "check-layers: $bad wrong-way include(s) of $edges"
        exit 1
fi
echo "check-layers: $edges includes, none wrong-way"
