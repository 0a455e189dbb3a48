#!/usr/bin/env bash
# Set everything up (scripts/setup.sh), then run the main job.
#
# Today the main job is the #DW directive checker over the sample job
# scripts in etc/examples/: each script's #DW lines are validated exactly as
# a job's would be, and the errors are printed as the job would get them.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
bash scripts/setup.sh
# shellcheck disable=SC1091
. "${FLUX_DWS_VENV:-$top/.venv}/bin/activate"
flux-dws version
