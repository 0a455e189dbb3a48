# Sourced by the Go builds of the real-stack tests (t/k8s/build.sh,
# t/mpi/build.sh): their cache directory, and the build done once.
#
#   . t/k8s/build-once.sh
#   build_once_dest DIR PREFIX   sets dest (the cache directory of the Go
#                                module DIR's go.mod and go.sum, PREFIX
#                                before their hash) and bin (dest/bin)
#   build_once_reuse             with built() defined: prints bin and exits
#                                when it is built, else takes dest's lock
#                                (one build at a time per version: CI and
#                                a developer on one machine) and checks
#                                again, for a build that held it
build_once_dest() {
    local cache hash
    command -v go >/dev/null 2>&1 || { echo "build.sh: no go on PATH" >&2; exit 2; }
    cache=${FLUX_DWS_K8S_CACHE:-$HOME/.cache/flux-dws/k8s}
    hash=$(cat "$1/go.mod" "$1/go.sum" | sha256sum | cut -c1-16)
    dest=$cache/$2$hash
    bin=$dest/bin
}
build_once_reuse() {
    if built; then
        echo "$bin"
        exit 0
    fi
    mkdir -p "$dest"
    exec 9>"$dest/.lock"
    flock 9
    if built; then
        echo "$bin"
        exit 0
    fi
}
#   build_once_done DIR TMP T0   the build in TMP made bin, module DIR's
#                                go.mod and go.sum kept beside it, the
#                                time since T0 said; prints bin
build_once_done() {
    cp "$1/go.mod" "$1/go.sum" "$dest/"
    rm -rf "$bin"
    mv "$2" "$bin"
    trap - EXIT
    echo "build.sh: built in $(( $(date +%s) - $3 )) s" >&2
    echo "$bin"
}
