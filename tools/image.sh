#!/usr/bin/env bash
# The container image of rtn (make image; docs/containers.md), built with no registry: a
# minbase Debian 12 made by mmdebstrap, with what rtn needs at run time besides libc
# (libmnl0, and libmicrohttpd12 for rtn serve --http), imported into a podman storage of its own in a temp dir, rtn copied in, and saved
# as an OCI archive (podman load -i FILE) whose entrypoint is rtn and default arguments
# `serve`, so `podman run IMAGE exec -- CMD` and a pod's `args: ["serve", ...]` both run rtn.
#   tools/image.sh OUT.tar   build the image into OUT.tar from $O/rtn (O=build)
#   tools/image.sh base      make (once) and print the cached Debian base tarball, which the
#                            container suites (tests/containers/lib.bash) use too
# Needs root (rootful podman), podman, runc and mmdebstrap (tools/deps.txt).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
O=${O:-build}
cache=$here/$O/containers
# What rtn needs at run time besides libc: libmnl, and libmicrohttpd for rtn serve --http
# (loaded with dlopen). The cached base is named for its package list, so a changed list
# makes a new one.
pkgs="libmnl0 libmicrohttpd12"
base=$cache/bookworm-minbase-$(printf '%s' "$pkgs" | sha256sum | cut -c1-12).tar

make_base() {
        [ -f "$base" ] && [ -s "$base" ] && return 0
        mkdir -p "$cache"
        rm -rf "$base" "$cache/part.tar"
        # mmdebstrap picks the output's format from its name: the partial file ends in .tar.
        if ! mmdebstrap --quiet --format=tar --variant=minbase --include="${pkgs// /,}" bookworm \
                "$cache/part.tar" >"$cache/mmdebstrap.log" 2>&1; then
                echo "tools/image.sh: mmdebstrap failed (see $cache/mmdebstrap.log)" >&2
                rm -rf "$cache/part.tar"
                return 1
        fi
        mv "$cache/part.tar" "$base"
}

if [ "${1:-}" = base ]; then
        make_base
        echo "$base"
        exit 0
fi
out=${1:?usage: tools/image.sh OUT.tar | base}
[ "$(id -u)" = 0 ] || { echo "tools/image.sh: needs root (rootful podman)" >&2; exit 1; }
make_base
state=$(mktemp -d "${TMPDIR:-/tmp}/rtn-image.XXXXXX")
pm=(podman --root "$state/storage" --runroot "$state/run" --runtime runc
        --cgroup-manager cgroupfs --events-backend none --storage-driver overlay)
cleanup() {
        "${pm[@]}" system reset -f >/dev/null 2>&1 || true
        rm -rf "$state"
}
trap cleanup EXIT
version=$("$here/$O/rtn" --version | awk '{print $2}')
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
