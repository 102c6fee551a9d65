#!/usr/bin/env bash
# The layer check: every `#include "dir/..."` in the product's sources must point down the
# allowed graph (docs/HACKING.md, "Where code goes"):
#
#     common  <-  netns, store  <-  runtime  <-  mcp  <-  cli
#     common  <-  init            (rtn-init: common only; the protocol is common/initproto.h)
#
# A module may include its own headers and those of the modules below it, never one above
# or beside it. Includes without a directory are generated headers ($(O)/gen) and are not
# edges. tests/, fuzz/ and tools/ sit outside the graph and may include anything.
# Prints each wrong-way edge as file:line and exits 1 if there is one.
#
#   tools/check-layers.sh [ROOT]      (default: the tree this script is in)
set -uo pipefail

ROOT=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$ROOT" || exit 2

declare -A allowed=(
        [common]="common"
        [netns]="common netns"
        [store]="common store"
        [init]="common init"
        [runtime]="common netns store runtime"
        [mcp]="common netns store runtime mcp"
        [cli]="common netns store runtime mcp cli"
)

bad=0
edges=0
for mod in "${!allowed[@]}"; do
        [ -d "$mod" ] || continue
        while IFS=: read -r file line text; do
                target=${text#*\"}
                target=${target%%/*}
                edges=$((edges + 1))
                case " ${allowed[$mod]} " in
                *" $target "*) ;;
                *)
                        echo "$file:$line: $mod may not include $target/ (${text})"
                        bad=$((bad + 1))
                        ;;
                esac
        done < <(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"[^"/]+/' \
                --include='*.c' --include='*.h' --include='*.S' "$mod")
done

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
