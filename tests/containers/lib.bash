# shellcheck shell=bash
# rtn inside containers (docs/containers.md): Debian's podman with runc (crun refuses hosts
# with hybrid cgroups) on an image made here, since no registry can be reached: a minbase
# Debian 12 from mmdebstrap (tools/image.sh base: make image's own base, so the suite's
# background make image finds it made and runs no second mmdebstrap), cached under
# build/containers/ so a second run reuses it; on it make image's image (the suite's
# background build, loaded) or, where the suite builds none, the base alone (`podman
# import`), with the rtn under test copied in. podman keeps its storage in a temp dir of the
# suite's, removed at the end.
# Sourced by the container suites after tests/lib.sh.

# A case skips, naming what this host lacks, or fails when podman, which it has, failed (a
# broken setup must not pass for a missing feature); the suite's setup runs once (c_setup).
c_need() {
        [ -n "${C_SKIP:-}" ] && t_skip "$C_SKIP"
        [ -n "${C_FAIL:-}" ] && t_fail "$C_FAIL"
        return 0
}

# The ulimits podman asks runc to set must lie within what runc may set (at most this
# shell's hard limits), or it fails with "error setting rlimit type N: operation not
# permitted"; podman's defaults (its own hard limits) are not always that.
c_ulimits() {
        local n u
        n=$(ulimit -Hn)
        u=$(ulimit -Hu)
        [ "$n" = unlimited ] || [ "$n" -gt 4096 ] && n=4096
        [ "$u" = unlimited ] || [ "$u" -gt 4096 ] && u=4096
        echo "--ulimit nofile=$n:$n --ulimit nproc=$u:$u"
}

# A containers.conf whose default_ulimits are c_ulimits' (for `podman kube play`, which has no
# --ulimit), in $C_STATE/containers.conf.
c_containers_conf() {
        local n u
        n=$(c_ulimits | sed -n 's/.*nofile=\([^ ]*\).*/\1/p')
        u=$(c_ulimits | sed -n 's/.*nproc=\([^ ]*\).*/\1/p')
        printf '[containers]\ndefault_ulimits = ["nofile=%s", "nproc=%s"]\n' "$n" "$u" >"$C_STATE/containers.conf"
}

# The podman command line, in C_PODMAN (an array): storage in the suite's temp dir, the run
# root in C_RUNROOT (podman refuses one longer than 50 characters, which a TMPDIR of make
# test's streams is), and libpod's tmp dir there too: c_teardown's `system reset` removes
# it, and the default /run/libpod is every root podman's (tools/image.sh's, building
# meanwhile, included).
c_podman_argv() {
        C_PODMAN=(podman --root "$C_STATE/storage" --runroot "$C_RUNROOT" --tmpdir "$C_RUNROOT/tmp" --runtime runc
                --cgroup-manager cgroupfs --events-backend none --storage-driver overlay)
}

c_podman() {
        c_podman_argv
        "${C_PODMAN[@]}" "$@"
}

c_base_tar() {
        local o
        o=$(dirname "${RTN#"$T_ROOT"/}")
        [[ $RTN == "$T_ROOT"/*/rtn ]] || o=build
        C_BASE_TAR=$(O=$o "$T_ROOT/tools/image.sh" base 2>"$C_STATE/base.log") || {
                C_BASE_LOG=$(tail -n 3 "$C_STATE/base.log" "$T_ROOT/$o"/containers/*.log 2>/dev/null | tr '\n' ' ')
                return 1
        }
}

# Once per suite: the reasons to skip, the base image, and localhost/rtn-test with the rtn
# under test in /usr/local/bin and a user `agent` (uid 1000).
c_setup() {
        local from
        C_SKIP= C_FAIL= C_IMAGE_FAIL=
        if [ "$(id -u)" != 0 ]; then
                C_SKIP="the container suites run podman as root (rootless podman needs subordinate ids and storage of its own); rtn runs as a user inside the container"
                return
        fi
        for b in podman runc mmdebstrap; do
                command -v "$b" >/dev/null || { C_SKIP="no $b (tools/deps.txt installs it)"; return; }
        done
        C_STATE=$(mktemp -d "${TMPDIR:-/tmp}/rtn-containers.XXXXXX")
        C_RUNROOT=$(mktemp -d /tmp/rtnc.XXXXXX)
        c_image_start
        # Host ids for --uidmap: above every range of /etc/subuid and /etc/subgid and below
        # root's default subordinate block, so they are nobody's.
        C_UIDMAP=$(cat /etc/subuid /etc/subgid 2>/dev/null |
                awk -F: 'BEGIN { n = 1000000 } NF == 3 && $2 + $3 > n { n = $2 + $3 } END { print n + 65536 }')
        if ! c_base_tar; then
                C_SKIP="mmdebstrap could not make a Debian 12 base (no Debian mirror?): $C_BASE_LOG"
                return
        fi
        # On make image's image where the suite builds one (its archive loaded here, as a user
        # would: the image cases run on it), else on the base: one import of the base, not two
        if ! c_image_load; then
                if ! c_podman import -q "$C_BASE_TAR" localhost/rtn-base >/dev/null 2>"$C_STATE/import.log"; then
                        C_FAIL="podman import failed: $(tail -n 3 "$C_STATE/import.log" | tr '\n' ' ')"
                        return
                fi
                from=localhost/rtn-base
        fi
        mkdir -p "$C_STATE/ctx"
        cp "$RTN" "$C_STATE/ctx/rtn"
        # the image's entrypoint (rtn) cleared: the cases run sh -c SCRIPT
        printf '%s\n' "FROM $from" 'COPY rtn /usr/local/bin/rtn' 'ENTRYPOINT []' \
                'RUN useradd -m -u 1000 agent' >"$C_STATE/ctx/Containerfile"
        if ! c_podman build -q --network none -t localhost/rtn-test "$C_STATE/ctx" >"$C_STATE/build.log" 2>&1; then
                C_FAIL="podman build failed: $(tail -n 3 "$C_STATE/build.log" | tr '\n' ' ')"
                return
        fi
        # A seccomp profile that denies user namespaces: podman's default, with clone3
        # refused and unshare/clone refused when they ask for CLONE_NEWUSER.
        python3 - "$C_STATE/no-userns.json" <<'PY' || C_SKIP="no podman default seccomp profile to derive from"
import json, sys
d = json.load(open("/usr/share/containers/seccomp.json"))
for s in d["syscalls"]:
    s["names"] = [n for n in s["names"] if n not in ("clone3", "unshare", "clone")]
d["syscalls"] = [s for s in d["syscalls"] if s["names"]]
NEWUSER = 0x10000000
for name in ("unshare", "clone"):
    d["syscalls"].append({"names": [name], "action": "SCMP_ACT_ALLOW",
                          "args": [{"index": 0, "value": NEWUSER, "valueTwo": 0, "op": "SCMP_CMP_MASKED_EQ"}]})
    d["syscalls"].append({"names": [name], "action": "SCMP_ACT_ERRNO", "errnoRet": 1,
                          "args": [{"index": 0, "value": NEWUSER, "valueTwo": NEWUSER, "op": "SCMP_CMP_MASKED_EQ"}]})
d["syscalls"].append({"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1})
json.dump(d, open(sys.argv[1], "w"))
PY
}

# make image's archive (tools/image.sh from the rtn under test), built in the background from
# c_setup on: it makes the Debian base (mmdebstrap, which waits on the mirror and the disk
# for minutes) while c_base_tar waits for that same base, then imports, builds and saves the
# image, in the suite's podman storage, so that the archive's load (c_image_load) finds the
# base's layer there and the base is imported once; the image it built is removed before the
# load. img.rc holds its exit code once it ends (124 after 30 minutes). Its CPU is the
# suite's (its shell reaps it), shown in the setup's time.
c_image_start() {
        local o
        [[ $RTN == "$T_ROOT"/*/rtn ]] || return 0
        o=$(dirname "${RTN#"$T_ROOT"/}")
        (
                rc=0
                IMAGE_PODMAN_ROOT=$C_STATE/storage IMAGE_PODMAN_RUNROOT=$C_RUNROOT O=$o \
                        timeout 1800 "$T_ROOT/tools/image.sh" "$C_STATE/img.tar" >/dev/null 2>"$C_STATE/img.err" || rc=$?
                echo "$rc" >"$C_STATE/img.rc"
        ) </dev/null &
        C_IMAGE_PID=$!
}

# From c_setup: waits for c_image_start's build and loads its archive into the suite's
# storage; sets `from` to the image's name (localhost/rtn:VERSION). Fails, with the reason
# in C_IMAGE_FAIL for the image cases (c_image), where there is no image to load.
c_image_load() {
        [ -n "${C_IMAGE_PID:-}" ] || {
                C_IMAGE_FAIL="the image is built from a tree's rtn"
                return 1
        }
        wait "$C_IMAGE_PID"
        C_IMAGE_PID=
        case $(<"$C_STATE/img.rc") in
        0) ;;
        124)
                C_IMAGE_FAIL="tools/image.sh did not end within 30 minutes"
                return 1
                ;;
        *)
                C_IMAGE_FAIL="tools/image.sh: $(tail -n 3 "$C_STATE/img.err")"
                return 1
                ;;
        esac
        c_podman load -q -i "$C_STATE/img.tar" >/dev/null 2>"$C_STATE/load.log" || {
                C_IMAGE_FAIL="podman load failed: $(tail -n 3 "$C_STATE/load.log")"
                return 1
        }
        rm -f "$C_STATE/img.tar"
        from=localhost/rtn:$("$RTN" --version | awk '{print $2}')
        C_IMAGE=$from
}

# make image's image, loaded by c_setup: prints its name (localhost/rtn:VERSION), or skips
# where the suite builds none (an rtn not of a tree), or fails where the build or the load
# did.
c_image() {
        [ -n "${C_IMAGE:-}" ] && echo "$C_IMAGE" && return 0
        [[ $RTN == "$T_ROOT"/*/rtn ]] || t_skip "$C_IMAGE_FAIL"
        t_fail "$C_IMAGE_FAIL"
}

# Runs sh -c SCRIPT in a container (podman run options first: --user agent,
# --security-opt ...), keeping stdout, stderr and the exit code as t_cmd does.
c_sh() {
        local opts=()
        while [ "$#" -gt 1 ]; do
                opts+=("$1")
                shift
        done
        c_podman_argv
        # shellcheck disable=SC2046
        t_cmd "${C_PODMAN[@]}" run --rm -i --network none $(c_ulimits) "${opts[@]}" \
                localhost/rtn-test sh -c "$1"
}

# Cases whose containers have the same configuration share one start (each podman run costs
# about 0.6 s of CPU here, podman's, conmon's and runc's): C_GROUP_OPTS[GROUP] holds its podman
# options (split into words), C_GROUP_PARTS[GROUP] its parts in order, and C_PART[PART] each
# part's script. c_part GROUP PART runs, the first time a case of GROUP asks, one container
# in which each part runs in turn as sh -c SCRIPT, after rtn's state and the files the parts
# before it made are removed (rtn's data and run dirs, /tmp, /var/tmp and the top-level
# directories the parts make: C_PART_DIRS), so that each starts as in a container of its
# own; each part's stdout, stderr and exit code are kept in a directory of the suite's, and
# c_part hands PART's to its case as t_cmd does. Where podman itself failed, a part it did
# not run gets podman's.
declare -A C_GROUP_OPTS C_GROUP_PARTS C_PART
C_PART_DIRS='/w /r /u'
c_part() {
        local g=$1 p=$2 d=$C_STATE/parts/$1 n q script=''
        if [ ! -e "$d/ran" ]; then
                mkdir -p "$d"
                chmod 777 "$d"
                for n in ${C_GROUP_PARTS[$g]}; do
                        q=${C_PART[$n]//"'"/"'\\''"}
                        script+="rm -rf ~/.local/share/rtn /run/rtn /tmp/* /var/tmp/* $C_PART_DIRS 2>/dev/null
sh -c '$q' >/parts/$n.out 2>/parts/$n.err </dev/null; echo \$? >/parts/$n.rc
"
                done
                # shellcheck disable=SC2086
                T_CMD_TIMEOUT=300 c_sh -v "$d:/parts" ${C_GROUP_OPTS[$g]} "$script"
                mv "$T_OUT_FILE" "$d/podman.out"
                mv "$T_ERR_FILE" "$d/podman.err"
                echo "$T_RC" >"$d/podman.rc"
                touch "$d/ran"
        fi
        if [ -f "$d/$p.rc" ]; then
                T_OUT_FILE=$d/$p.out T_ERR_FILE=$d/$p.err
        else
                T_OUT_FILE=$d/podman.out T_ERR_FILE=$d/podman.err p=podman
        fi
        T_RC=$(<"$d/$p.rc")
        T_LAST_CMD="podman run ${C_GROUP_OPTS[$g]} ... (part $2 of $g): sh -c ${C_PART[$2]}"
}

# A script for c_sh: rtn serve over stdio (rtn serve ARGS...) gets initialize, then
# tools/call shell_run of COMMAND (id 2) and env_status (id 3), its stdin held open until
# both answered (read from a fifo as they come; a watchdog, started before the fifo's writer
# is open so that it does not hold it, ends the server after 30 s, and its sleep with it when
# it is no longer needed); the answers go to stdout, rtn serve's stderr to stderr.
c_serve_script() {
        local cmd=$1
        shift
        cat <<SCRIPT
d=\$(mktemp -d); mkfifo "\$d/i" "\$d/o"
rtn serve $* <"\$d/i" >"\$d/o" & p=\$!
(exec >/dev/null 2>&1; sleep 30 & s=\$!; trap 'kill \$s; exit' TERM; wait \$s; kill \$p) & w=\$!
exec 3>"\$d/i" 4<"\$d/o"
printf '%s\\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \\
        '{"jsonrpc":"2.0","method":"notifications/initialized"}' \\
        '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"shell_run","arguments":{"command":"$cmd"}}}' \\
        '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"env_status","arguments":{}}}' >&3
a= b=
while [ -z "\$a" ] || [ -z "\$b" ]; do
        IFS= read -r l <&4 || break
        printf '%s\\n' "\$l"
        case \$l in *'"id":2,'*) a=1 ;; *'"id":3,'*) b=1 ;; esac
done
exec 3>&-; kill \$w 2>/dev/null; cat <&4; exec 4<&-; wait \$p || :
SCRIPT
}

# After the last case: the containers, images and storage go.
c_teardown() {
        [ -n "${C_STATE:-}" ] || return 0
        # a build no case waited for (they skipped) ends before its output dir goes
        [ -z "${C_IMAGE_PID:-}" ] || wait "$C_IMAGE_PID" 2>/dev/null
        c_podman system reset -f >/dev/null 2>&1
        rm -rf "$C_STATE" "${C_RUNROOT:-}"
}
