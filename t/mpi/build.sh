#!/usr/bin/env bash
# Build Kubeflow's mpi-operator (the MPIJob controller, kubeflow.org/v2beta1)
# from this Go module, once per version, into
#   ${FLUX_DWS_K8S_CACHE:-$HOME/.cache/flux-dws/k8s}/mpi-<hash of go.mod+go.sum>/bin
# and print that directory.  The MPIJob CRD that ships in the same module
# goes beside it, as bin/../mpijobs-crd.yaml, so that the CRD an API server
# is given always matches the controller built (it is taken from Go's module
# cache at build time, never kept in this repository).  A directory already
# built is reused as it is (a new go.mod or go.sum is a new hash, so a new
# directory).  Nothing is written into the source tree (-mod=readonly:
# go.sum is committed whole); modules go to Go's module cache, objects to
# its build cache.  Same layout and rules as t/k8s/build.sh, whose cache it
# shares (the mpi- prefix keeps the two apart).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../k8s/build-once.sh"
build_once_dest "$here" mpi-
mod=github.com/kubeflow/mpi-operator
built() {
    [ -x "$bin/mpi-operator" ] && [ -s "$dest/mpijobs-crd.yaml" ]
}
build_once_reuse
export GOTOOLCHAIN=local GOFLAGS="-mod=readonly -buildvcs=false -trimpath" CGO_ENABLED=0
ver=$(cd "$here" && go list -m -f '{{.Version}}' "$mod")
# what upstream's Makefile stamps in with -X (its `--version` prints them);
# a pseudo-version ends in the commit's 12-digit hash, a tag has none
sha=${ver##*-}
case $sha in *[!0-9a-f]* | "") sha=$ver ;; esac
pv=$mod/pkg/version
ldflags="-s -w -X $pv.Version=$ver -X $pv.GitSHA=$sha -X $pv.Built=1970-01-01T00:00:00Z"
tmp=$(mktemp -d "$dest/bin.XXXXXX")
trap 'rm -rf "$tmp" "$dest/mpijobs-crd.yaml.tmp"' EXIT
t0=$(date +%s)
echo "build.sh: building mpi-operator $ver into $bin" >&2
(cd "$here" && go build -ldflags "$ldflags" -o "$tmp/mpi-operator" "$mod/cmd/mpi-operator")
# the build has put the module in Go's module cache: its Dir is known now
dir=$(cd "$here" && go list -m -f '{{.Dir}}' "$mod")
crd=$dir/manifests/base/kubeflow.org_mpijobs.yaml
[ -s "$crd" ] || { echo "build.sh: no MPIJob CRD at $crd" >&2; exit 1; }
# files in the module cache are read-only; the copy need not be
install -m 644 "$crd" "$dest/mpijobs-crd.yaml.tmp"
mv "$dest/mpijobs-crd.yaml.tmp" "$dest/mpijobs-crd.yaml"
build_once_done "$here" "$tmp" "$t0"
