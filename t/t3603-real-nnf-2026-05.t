#!/bin/sh
# t3602 on the May 2026 NNF release (../shared/nnf/2026-05: DWS v0.1.17,
# nnf-sos v0.1.34, nnf-dm v0.1.28): what a site that upgraded nnf-sos
# without asking its workload manager runs.  The same cases, the same
# helpers; only the release set differs: FLUX_DWS_NNF_DIR_2026_05 (the
# set test.sh built in the background) or else its source
# (FLUX_DWS_NNF_SRC_2026_05, by default 2026-05/ beside t3602's source),
# built by t/nnf/build.sh into its own cache directory.  Sourced, not
# run: sharness names this script's trash directory after it, so it
# runs beside t3602.
nnf_may_src=${FLUX_DWS_NNF_SRC_2026_05:-${FLUX_DWS_NNF_SRC:-$(cd "$(dirname "$0")/../.." && pwd)/shared/nnf}/2026-05}
if test -n "${FLUX_DWS_NNF_DIR_2026_05:-}"; then
	FLUX_DWS_NNF_DIR=$FLUX_DWS_NNF_DIR_2026_05
	export FLUX_DWS_NNF_DIR
else
	unset FLUX_DWS_NNF_DIR # March's, from test.sh: the source decides
fi
FLUX_DWS_NNF_SRC=$nnf_may_src
export FLUX_DWS_NNF_SRC
. "$(dirname "$0")"/t3602-real-nnf.t
