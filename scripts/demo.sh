#!/usr/bin/env bash
# Set everything up (scripts/setup.sh), then run the main job.
#
# Until the emulator's Workflow walk-through exists, the main job checks the
# sample job scripts in etc/examples/ with `flux-dws check`: each script's
# #DW lines are validated exactly as a job submission's would be, and a
# refusal is printed as the job's exception would read.  Scripts named
# invalid-* must be refused, the others accepted; the demo fails otherwise.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
bash scripts/setup.sh
# shellcheck disable=SC1091
. "${FLUX_DWS_VENV:-$top/.venv}/bin/activate"
flux-dws version

status=0
for script in etc/examples/*.sh; do
    name=$(basename "$script")
    printf '\n== %s\n' "$name"
    grep '^#DW' "$script" | sed 's/^/   /'
    if out=$(flux-dws check -s "$script"); then verdict=accepted; else verdict=refused; fi
    printf '%s\n' "$out" | sed 's/^/   -> /'
    case "$name:$verdict" in
        invalid-*:refused | [!i]*:accepted | i[!n]*:accepted) ;;
        *) echo "   UNEXPECTED: $name was $verdict"; status=1 ;;
    esac
done
exit $status
