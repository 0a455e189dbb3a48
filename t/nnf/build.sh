#!/usr/bin/env bash
# Build the real DWS and NNF controllers of the referee and the real-stack
# tests from the upstream source in ../shared/nnf (NNF_SRC): dws-manager,
# nnf-sos-manager, nnf-dm-manager and clientmountd (nnf-sos' mount-daemon),
# once per version set, into
#   ${FLUX_DWS_NNF_CACHE:-$HOME/.cache/flux-dws/nnf}/<hash of SHA256SUMS>/
# (src/: the unpacked trees, read at test time for their CRDs, RBAC and
# profiles; bin/: the managers) and print that directory.  A directory
# already built is reused as it is.  Their code is vendored: no network,
# nothing written into the source tree, nothing of theirs committed.
# Exit 77 with the reason when the source or go is not there.
# flux_dws.realstack.nnf.build() looks in the same place.
# Figures (cold build: time, memory): doc/guide/development.rst.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=${NNF_SRC:-$(cd "$here/../../.." && pwd)/shared/nnf}
if ! test -f "$src/SHA256SUMS"; then
    echo "build.sh: no NNF source at $src (set NNF_SRC)" >&2
    exit 77
fi
command -v go >/dev/null 2>&1 || { echo "build.sh: no go on PATH" >&2; exit 77; }
cache=${FLUX_DWS_NNF_CACHE:-$HOME/.cache/flux-dws/nnf}
hash=$(sha256sum <"$src/SHA256SUMS" | cut -c1-16)
dest=$cache/$hash
built() {
    for b in dws-manager nnf-sos-manager nnf-dm-manager clientmountd; do
        test -x "$dest/bin/$b" || return 1
    done
}
if built; then
    echo "$dest"
    exit 0
fi
mkdir -p "$dest"
exec 9>"$dest/.lock"
flock 9
if built; then
    echo "$dest"
    exit 0
fi
t0=$(date +%s)
(cd "$src" && sha256sum --quiet -c SHA256SUMS) || { echo "build.sh: $src/SHA256SUMS does not check" >&2; exit 2; }
rm -rf "$dest/src"
mkdir -p "$dest/src.tmp"
for tarball in "$src"/*.tar.xz; do
    tar xf "$tarball" -C "$dest/src.tmp"
done
mv "$dest/src.tmp" "$dest/src"
tree() { ls -d "$dest/src/$1"-v* | head -1; }
export GOTOOLCHAIN=local GOFLAGS="-mod=vendor -buildvcs=false -trimpath" CGO_ENABLED=0
tmp=$(mktemp -d "$dest/bin.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "build.sh: building the DWS, nnf-sos and nnf-dm managers into $dest/bin" >&2
(cd "$(tree dws)" && go build -ldflags "-s -w" -o "$tmp/dws-manager" ./cmd/)
(cd "$(tree nnf-sos)" && go build -ldflags "-s -w" -o "$tmp/nnf-sos-manager" ./cmd/)
(cd "$(tree nnf-sos)" && go build -ldflags "-s -w" -o "$tmp/clientmountd" ./mount-daemon/)
(cd "$(tree nnf-dm)" && go build -ldflags "-s -w" -o "$tmp/nnf-dm-manager" ./cmd/)
rm -rf "$dest/bin"
mv "$tmp" "$dest/bin"
trap - EXIT
echo "build.sh: built in $(( $(date +%s) - t0 )) s" >&2
echo "$dest"
