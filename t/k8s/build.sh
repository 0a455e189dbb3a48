#!/usr/bin/env bash
# Build the real control plane of the real-stack tests (kube-apiserver and
# etcd) and what runs Pods (kubelet, kube-controller-manager and
# kube-scheduler: flux_dws.realstack.nodes) from this Go module, once per
# version set, into
#   ${FLUX_DWS_K8S_CACHE:-$HOME/.cache/flux-dws/k8s}/<hash of go.mod+go.sum>/bin
# and print that directory.  A directory already built is reused as it is
# (a new go.mod or go.sum is a new hash, so a new directory).  Nothing is
# written into the source tree (-mod=readonly: go.sum is committed whole);
# modules go to Go's module cache, objects to its build cache.
# flux_dws.realstack.controlplane.binaries() looks in the same place.
# Figures (cold build: time, memory, download): doc/guide/development.rst.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/build-once.sh"
build_once_dest "$here" ""
commands="kube-apiserver kubelet kube-controller-manager kube-scheduler"
built() {
    for c in $commands etcd; do [ -x "$bin/$c" ] || return 1; done
}
build_once_reuse
kver=$(awk '$1 == "k8s.io/kubernetes" { print $2; exit }' "$here/go.mod")
minor=${kver#v1.}; minor=${minor%%.*}
cv=k8s.io/component-base/version
ldflags="-s -w -X $cv.gitVersion=$kver -X $cv.gitMajor=1 -X $cv.gitMinor=$minor"
ldflags="$ldflags -X $cv.gitTreeState=clean -X $cv.buildDate=1970-01-01T00:00:00Z"
export GOTOOLCHAIN=local GOFLAGS="-mod=readonly -buildvcs=false -trimpath" CGO_ENABLED=0
tmp=$(mktemp -d "$dest/bin.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
t0=$(date +%s)
echo "build.sh: building $commands $kver and etcd into $bin" >&2
for c in $commands; do
    (cd "$here" && go build -ldflags "$ldflags" -o "$tmp/$c" "k8s.io/kubernetes/cmd/$c")
done
(cd "$here" && go build -ldflags "-s -w" -o "$tmp/etcd" ./cmd/etcd)
build_once_done "$here" "$tmp" "$t0"
