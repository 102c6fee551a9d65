#!/usr/bin/env bash
# The container image of rtn (make image; docs/containers.md), built with no registry: a
# minbase Debian 12 made by mmdebstrap from the Debian mirror apt uses here, with what rtn needs
# at run time besides libc, what an agent works with (python3, git, curl, a compiler) and
# IMAGE_PACKAGES, imported into a podman storage of its own in a temp dir, rtn copied in, and
# saved as an OCI archive (podman load -i FILE) whose entrypoint is rtn and default arguments
# `serve`, so `podman run IMAGE exec -- CMD` and a pod's `args: ["serve", ...]` both run rtn.
#   tools/image.sh OUT.tar   build the image into OUT.tar from $O/rtn (O=build)
#   tools/image.sh base      make (once) and print the cached Debian base tarball of the
#                            image, which the container suites (tests/containers/lib.bash)
#                            run on too: one mmdebstrap serves both
# IMAGE_PODMAN_ROOT and IMAGE_PODMAN_RUNROOT name a podman storage and run root to build in
# instead of a temp one (the container suite's, which loads the archive next: the base is
# imported once, there); the image is removed from it once saved, the base left.
# Needs root (rootful podman), podman, runc and mmdebstrap (tools/deps.txt).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
O=${O:-build}
cache=$here/$O/containers
# What rtn needs at run time besides libc: libmnl, and libmicrohttpd for rtn serve --http
# (loaded with dlopen), and git, which the container matrix commits with
# (--workspace-git rw). The image adds what an agent works with, and IMAGE_PACKAGES (make
# image IMAGE_PACKAGES="..."). A cached base is named for its package list, so a changed
# list makes a new one.
pkgs="libmnl0 libmicrohttpd12 git"
agent_pkgs="python3 curl ca-certificates gcc libc6-dev make"
list="$pkgs $agent_pkgs${IMAGE_PACKAGES:+ $IMAGE_PACKAGES}"

# The Debian mirror this machine's apt uses for bookworm (/etc/apt/sources.list and
# sources.list.d, one-line or deb822), or nothing (mmdebstrap's default).
mirror() {
        cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | awk '
                $1 == "deb" {
                        for (i = 2; i <= NF && $i ~ /^\[|\]$/; i++) continue
                        if ($(i + 1) == "bookworm") { print $i; exit }
                }'
        cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk 'BEGIN { RS = ""; FS = "\n" } {
                t = u = s = ""
                for (i = 1; i <= NF; i++) {
                        if ($i ~ /^Types:/) t = $i " "
                        if ($i ~ /^Suites:/) s = $i " "
                        if ($i ~ /^URIs:/) { split($i, w, /[ \t]+/); u = w[2] }
                }
                if (t ~ /[ \t]deb[ \t]/ && s ~ /[ \t]bookworm[ \t]/) { print u; exit }
        }'
}

# make_base LIST: prints the cached tarball of a minbase Debian 12 with LIST, made once: a
# second caller meanwhile (the container suite's setup beside its background make image)
# waits on the lock and takes the first's.
make_base() {
        local list=$1 tar part log m
        tar=$cache/bookworm-minbase-$(printf '%s' "$list" | sha256sum | cut -c1-12).tar
        part=${tar%.tar}.part.tar
        log=${tar%.tar}.log
        mkdir -p "$cache"
        exec 9>"$tar.lock"
        flock 9
        if ! [ -s "$tar" ]; then
                rm -rf "$tar" "$part"
                m=$(mirror | head -n 1)
                # mmdebstrap picks the output's format from its name: the partial file ends in
                # .tar.
                if ! mmdebstrap --quiet --format=tar --variant=minbase --include="${list// /,}" \
                        bookworm "$part" ${m:+"$m"} >"$log" 2>&1; then
                        echo "tools/image.sh: mmdebstrap failed (see $log)" >&2
                        rm -rf "$part"
                        return 1
                fi
                mv "$part" "$tar"
        fi
        exec 9>&-
        echo "$tar"
}

if [ "${1:-}" = base ]; then
        make_base "$list"
        exit 0
fi
out=${1:?usage: tools/image.sh OUT.tar | base}
[ "$(id -u)" = 0 ] || { echo "tools/image.sh: needs root (rootful podman)" >&2; exit 1; }
base=$(make_base "$list")
state=$(mktemp -d "${TMPDIR:-/tmp}/rtn-image.XXXXXX")
version=$("$here/$O/rtn" --version | awk '{print $2}')
if [ -n "${IMAGE_PODMAN_ROOT:-}" ]; then
        storage=$IMAGE_PODMAN_ROOT runroot=${IMAGE_PODMAN_RUNROOT:?IMAGE_PODMAN_ROOT needs IMAGE_PODMAN_RUNROOT}
else
        storage=$state/storage
        # podman refuses a run root longer than 50 characters, which one under a TMPDIR may
        # be; its tmp dir (the libpod state that `system reset` removes) is ours too, not the
        # /run/libpod every other podman of root's uses meanwhile
        runroot=$(mktemp -d /tmp/rtnc.XXXXXX)
fi
pm=(podman --root "$storage" --runroot "$runroot" --tmpdir "$runroot/tmp" --runtime runc
        --cgroup-manager cgroupfs --events-backend none --storage-driver overlay)
cleanup() {
        if [ -n "${IMAGE_PODMAN_ROOT:-}" ]; then
                "${pm[@]}" rmi -f "localhost/rtn:$version" >/dev/null 2>&1 || true
                rm -rf "$state"
        else
                "${pm[@]}" system reset -f >/dev/null 2>&1 || true
                rm -rf "$state" "$runroot"
        fi
}
trap cleanup EXIT
"${pm[@]}" import -q "$base" localhost/rtn-base >/dev/null
mkdir "$state/ctx"
cp "$here/$O/rtn" "$state/ctx/rtn"
cat >"$state/ctx/Containerfile" <<EOC
FROM localhost/rtn-base
COPY rtn /usr/local/bin/rtn
LABEL org.opencontainers.image.title=rtn org.opencontainers.image.version=$version
ENTRYPOINT ["/usr/local/bin/rtn"]
CMD ["serve"]
EOC
"${pm[@]}" build -q --network none -t "localhost/rtn:$version" "$state/ctx" >/dev/null
rm -f "$out.tmp"
"${pm[@]}" save -q --format oci-archive -o "$out.tmp" "localhost/rtn:$version"
mv "$out.tmp" "$out"
echo "$out: localhost/rtn:$version (podman load -i $out)"
