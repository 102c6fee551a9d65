#!/usr/bin/env bash
# tools/check-layers.sh, the layer check make test runs first, attacked: a copy of the tree
# with one wrong include injected must fail it, naming the file and line, and the same copy
# with an allowed one must pass. Wrong edges: a module up or beside (common to netns, store to
# netns), a room of runtime/ up inside it (runtime/sandbox to runtime/session, the loop the
# rooms were split to break), the protocol core up to runtime/ or serve/, and another
# module's internal.h where the graph allows the module (cli/ to runtime/internal.h, serve/
# and its HTTP front end to mcp/internal.h, which has mcp/wire.h for what a transport needs). Needs no rtn: it reads sources only, so it skips in
# the staged copy the unprivileged users run from (tools/test.sh), which holds none.
. "$(dirname "$0")/../lib.sh"

CHECK=$T_ROOT/tools/check-layers.sh

need_sources() {
        [ -f "$T_ROOT/runtime/runtime.h" ] ||
                t_skip "no product sources in $T_ROOT (a staged copy of the tests)"
}

# One copy of the product's sources per suite, made by the first case that needs it and
# checked clean then, so that an injected include is what fails a case's copy; each case
# then copies it (one cp, not a find and two tars and a check each). In the suite's temp dir
# (tests/lib.sh).
t_suite_tmp || exit 1
MASTER=$T_SUITE_TMP

# A copy of the product's sources in ./tree.
copy_tree() {
        need_sources
        if [ ! -d "$MASTER/tree" ]; then
                mkdir "$MASTER/new"
                (cd "$T_ROOT" && find common netns store runtime mcp serve cli init -name '*.[chS]' -print0 |
                        tar --null -T - -cf -) | tar -C "$MASTER/new" -xf - || t_fail "cannot copy the tree"
                t_exit_is 0 bash "$CHECK" "$MASTER/new"
                mv "$MASTER/new" "$MASTER/tree"
        fi
        cp -a "$MASTER/tree" tree || t_fail "cannot copy the tree"
}

# Adds `#include "TARGET"` at the end of FILE of the copy.
inject() {
        [ -f "tree/$1" ] || t_fail "no $1 in the tree"
        printf '#include "%s"\n' "$2" >>"tree/$1"
}

# The copy must fail the check, naming FILE.
fails_on() {
        t_exit_is 1 bash "$CHECK" "$PWD/tree"
        t_stdout_has "$1:"
}

the_tree_passes() {
        need_sources
        t_exit_is 0 bash "$CHECK" "$T_ROOT"
        t_stdout_has "none wrong-way"
}
t_run the_tree_passes the_tree_passes

wrong_edge() {
        copy_tree
        inject "$1" "$2"
        fails_on "$1"
}
t_run common_up_to_netns wrong_edge common/io.c netns/netns.h
t_run store_beside_to_netns wrong_edge store/store.c netns/netns.h
t_run sandbox_up_to_session wrong_edge runtime/sandbox/mount.c runtime/session/session.h
t_run sandbox_up_to_rootfs wrong_edge runtime/sandbox/spec.c runtime/rootfs/rootfs.h
t_run session_up_to_rootfs wrong_edge runtime/session/session.c runtime/rootfs/pkg.h
t_run runtime_header_up_to_session wrong_edge runtime/runtime.h runtime/session/session.h
t_run cli_to_runtime_internal wrong_edge cli/main.c runtime/internal.h
t_run netns_to_store_internal wrong_edge netns/gate.c store/internal.h
t_run init_to_json wrong_edge init/spawn.c common/json.h
t_run mcp_core_up_to_runtime wrong_edge mcp/server.c runtime/runtime.h
t_run mcp_core_up_to_serve wrong_edge mcp/protocol.c serve/serve.h
t_run runtime_up_to_serve wrong_edge runtime/session/session.c serve/serve.h
t_run serve_to_mcp_internal wrong_edge serve/tools/shell.c mcp/internal.h
t_run httpd_to_mcp_internal wrong_edge serve/httpd/mhd.c mcp/internal.h

right_edge() {
        copy_tree
        inject "$1" "$2"
        t_exit_is 0 bash "$CHECK" "$PWD/tree"
}
t_run session_down_to_sandbox right_edge runtime/session/session.c runtime/sandbox/hostrun.h
t_run rootfs_down_to_session right_edge runtime/rootfs/pkg.c runtime/session/registry.h
t_run sandbox_to_runtime_internal right_edge runtime/sandbox/mount.c runtime/internal.h
t_run cli_to_session right_edge cli/ps.c runtime/session/registry.h
t_run serve_down_to_runtime_and_mcp right_edge serve/tools/shell.c runtime/session/session.h
t_run serve_down_to_mcp right_edge serve/tools/env.c mcp/mcp.h
t_run httpd_down_to_mcp_wire right_edge serve/httpd/conns.c mcp/wire.h

t_done
