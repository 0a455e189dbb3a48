#!/usr/bin/env bash
# Set everything up (scripts/setup.sh), then run the main job.
#
# The main job: start the emulated Rabbit system (kind), the dws service and
# an emulated Flux job manager (the flux-less harness), run a batch of jobs
# with #DW directives of every kind through it and print the service's live
# view, each job's timeline, environment and outcome, and a summary
# (`flux-dws demo`; it fails if any job ends otherwise than expected or a
# Workflow is left behind).  Then walk one Workflow by hand with the
# Kubernetes client (`flux-dws demo --workflow-only`), and check the
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

printf '\n== Flux jobs with #DW directives: the dws service on the emulated kind system\n'
flux-dws demo --system kind --latency demo

printf '\n== one Workflow walked by hand with the Kubernetes client\n'
flux-dws demo --workflow-only --system kind --latency demo

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
