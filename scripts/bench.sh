#!/usr/bin/env bash
# Set up, then run the benchmarks in t/bench/ and print their figures.
#   bash scripts/bench.sh [NAME...]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
bash scripts/setup.sh
# shellcheck disable=SC1091
. "${FLUX_DWS_VENV:-$top/.venv}/bin/activate"
# benchmarks measure an optimised build
if [ ! -f build-release/build.ninja ]; then
    meson setup build-release --buildtype=release >/dev/null
fi
meson compile -C build-release >/dev/null
PYTHONPATH="$top/src/python:$top/build-release/src/python" python t/bench/run.py "$@"
