#!/usr/bin/env bash
# Set up everything flux-dws needs on a Debian bookworm machine, idempotently:
# Debian packages, a Python venv (.venv) with the build and test tools, a
# meson build tree (build/) and flux-dws installed into the venv.
#
#   bash scripts/setup.sh            # run as root (or with sudo available)
#
# Environment: FLUX_DWS_VENV (default .venv), PYTHON (default python3).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
venv=${FLUX_DWS_VENV:-$top/.venv}
python=${PYTHON:-python3}

log() { printf 'setup: %s\n' "$*" >&2; }

# --- Debian packages -------------------------------------------------------
# groff-base, man-db: the man page test renders every page (groff -ww) and
# t3400 reads them with man; rpm: rpmbuild for flux-dws.spec (t3402); git,
# xz-utils: meson dist; python3-pip: t3400 installs flux-dws' dependencies
# for flux-core's Python as doc/guide/admin.rst tells a site to; haproxy:
# the balancer in front of two API servers (test_controlplane_balancer.py
# runs it; never started as the system's service); containerd, runc,
# containernetworking-plugins, iptables, busybox-static: the real-stack
# nodes that run Pods (flux_dws.realstack.nodes starts a containerd per
# node with its own root and socket; busybox-static goes into the images
# it makes; containerd's own service is never started); mmdebstrap: the
# MPI image (Open MPI and OpenSSH from Debian's archive, made into a cache).
debs=(gcc pkg-config libjansson-dev sharness perl curl jq groff-base man-db rpm git xz-utils
      python3-pip haproxy containerd runc containernetworking-plugins iptables busybox-static
      mmdebstrap)
missing=()
for p in "${debs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' \
        || missing+=("$p")
done
# kubectl: Debian's kubernetes-client, unless some kubectl is already there
# (it conflicts with other kubectl packages).
command -v kubectl >/dev/null 2>&1 || missing+=(kubernetes-client)
if [ ${#missing[@]} -gt 0 ]; then
    log "installing Debian packages: ${missing[*]}"
    sudo_cmd=""
    [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
    $sudo_cmd apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# --- Python venv -------------------------------------------------------------
if [ ! -x "$venv/bin/python" ]; then
    log "creating venv $venv"
    "$python" -m venv "$venv"
fi
# shellcheck disable=SC1091
. "$venv/bin/activate"
stamp="$venv/.requirements-dev.sha"
want=$(cat requirements-dev.txt requirements-nodeps.txt | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    log "installing Python packages into $venv"
    python -m pip install -q --upgrade pip
    python -m pip install -q -r requirements-dev.txt
    python -m pip install -q --no-deps -r requirements-nodeps.txt
    # a venv of an earlier setup may hold what requirements-nodeps.txt
    # keeps out (the typing backport shadows the standard library's)
    python -m pip uninstall -q -y typing comby 2>/dev/null || :
    echo "$want" > "$stamp"
fi

# --- build -------------------------------------------------------------------
# Where a Flux is on PATH the Flux plugins must be built: -Dflux=enabled makes
# a flux-core that pkg-config cannot find fail here, not skip tests later.
flux_opt=()
if command -v flux >/dev/null 2>&1; then
    flux_opt=(-Dflux=enabled)
    fluxpc="$(dirname "$(dirname "$(command -v flux)")")/lib/pkgconfig"
    [ -f "$fluxpc/flux-core.pc" ] && flux_opt+=("-Dpkg_config_path=$fluxpc")
else
    flux_opt=(-Dflux=auto)
fi
if [ ! -f build/build.ninja ]; then
    meson setup "${flux_opt[@]}" build >/dev/null
else
    meson setup --reconfigure "${flux_opt[@]}" build >/dev/null
fi
meson compile -C build >/dev/null
log "installing flux-dws into $venv"
# meson-python reconfigures build/pip with pyproject's options; one that
# build/pip's meson has not seen yet (a new option) fails that, so then
# build/pip is made again from scratch
pip_install() {
    python -m pip install -q --no-build-isolation --no-deps -Cbuild-dir=build/pip .
}
if ! pip_install >/dev/null 2>&1; then
    log "build/pip could not be reconfigured: making it again"
    rm -rf build/pip
    pip_install
fi
log "ready: $(flux-dws version)"
