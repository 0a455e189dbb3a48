#!/bin/sh
# flux-dws prolog (runs last: "z"): on a compute node of a rabbit job, let
# nnf-clientmount mount the job's file systems, wait until the dws service
# has reported them mounted (the dws_environment event), then stop
# nnf-clientmount again so that it does not disturb the job.
#
# Environment: FLUX_JOB_ID (set by the prolog runner); NNF_CLIENTMOUNT_CTL,
# the command that starts/stops the daemon (default: systemctl).
ctl=${NNF_CLIENTMOUNT_CTL:-systemctl}

# not a rabbit system: nothing to do
flux getrabbit >/dev/null 2>&1 || exit 0

has_dw=$(flux job info "$FLUX_JOB_ID" jobspec | flux python -c '
import json, sys
spec = json.load(sys.stdin)
print("yes" if "dw" in spec.get("attributes", {}).get("system", {}) else "no")
') || exit 1
test "$has_dw" = yes || exit 0

# seconds; the [rabbit] table may give a number or an FSD ("30m")
timeout=$(flux config get --type=fsd-real --default=1800 rabbit.prolog_timeout) || exit 1

# 0: wait as long as it takes
case $timeout in
    0|0.0|0.00*) wait_for= ;;
    *) wait_for="-t ${timeout}s" ;;
esac

$ctl start nnf-clientmount
# shellcheck disable=SC2086
if ! flux job wait-event -q $wait_for "$FLUX_JOB_ID" dws_environment; then
    flux job raise --type=prolog-timeout "$FLUX_JOB_ID" -- \
        "dws_environment timeout (rabbit.prolog_timeout=${timeout}s)"
    exit 1
fi
$ctl stop nnf-clientmount
