#!/bin/sh
test_description='drain and undrain a rabbit from Flux under a real broker and Fluxion

flux dws rabbits drain RABBITS --reason TEXT does what the nnf CLI'"'"'s
"rabbit drain" does (the Node tainted cray.nnf.node.drain=true, the
Storage annotated drain_date/drain_reason); nnf-sos reports the Storage
Drained and the service takes the rabbit'"'"'s ssds down in Fluxion: no new
rabbit job gets it, a running one keeps its storage.  undrain undoes it.
A drain made with kubectl the nnf CLI'"'"'s way shows the same, a drain
survives a service reload, only the instance owner may drain, and bad
arguments get one line and no traceback (issue 47).  A drain whose Node
write fails takes its annotations back and says so; a rollback that
keeps failing names the half-drained rabbit and undrain clears it.'

. "$(dirname "$0")"/sharness.sh

skip_all_unless_flux
skip_all_unless_fluxion "a drained rabbit is told to Fluxion"
skip_all_unless_plugins
dws_pythonpath

XFS="#DW jobdw type=xfs capacity=10GiB name=scratch"
GUEST="FLUX_HANDLE_ROLEMASK=0x2 FLUX_HANDLE_USERID=$(($(id -u) + 1))"

dws() {
	flux python -m flux_dws "$@"
}

# one_line FILE: FILE is one line, and no Python traceback
one_line() {
	cat "$1" &&
	test "$(wc -l <"$1")" = 1 &&
	! grep -q Traceback "$1"
}

test_expect_success 'start the emulator and a rabbit instance' '
	start_emulator --system kind --latency zero &&
	rabbit_instance_config "$(pwd)" &&
	start_rabbit_instance "$(pwd)" &&
	wait_rabbits ".rabbits[1].fluxion == \"up\""
'

test_expect_success 'a rabbit job runs on compute-04 and stays running' '
	id=$(flux submit -N1 --requires=host:compute-04 --setattr=system.dw="$XFS" \
		sleep inf) &&
	echo $id >running.id &&
	flux job wait-event -t 60 $id start
'

test_expect_success 'drain kind-worker[2-3]: the Nodes are tainted, the Storages annotated and Drained' '
	dws rabbits drain "kind-worker[2-3]" --reason "firmware update" >drain.out &&
	cat drain.out &&
	grep "^drained kind-worker\[2-3\]$" drain.out &&
	kubectl get node kind-worker3 -o json >node.json &&
	jq -e "[.spec.taints[] | select(.key == \"cray.nnf.node.drain\" and .value == \"true\")
		| .effect] | sort == [\"NoExecute\", \"NoSchedule\"]" node.json &&
	jq -e "[.spec.taints[] | select(.key == \"cray.nnf.node\")] | length == 1" node.json &&
	kubectl get storage kind-worker3 -o json >storage.json &&
	jq -e ".metadata.annotations.drain_reason == \"firmware update\"" storage.json &&
	jq -e ".metadata.annotations.drain_date | test(\"^[0-9-]+T[0-9:]+Z$\")" storage.json &&
	jq -e ".metadata.annotations[\"flux-dws.io/drained-by\"] == \"$(id -u)\"" storage.json &&
	wait_rabbits ".rabbits[0].fluxion == \"down\" and .rabbits[1].fluxion == \"down\"" &&
	kubectl get storage kind-worker2 -o json | jq -e ".status.status == \"Drained\""
'

test_expect_success 'flux dws rabbits shows the drain: date, reason and who' '
	dws rabbits -v kind-worker3 >rabbits.out &&
	cat rabbits.out &&
	grep "kind-worker3 *Drained" rabbits.out &&
	grep "drained 20[0-9-]*T[0-9:]*Z: firmware update (by $(id -un))" rabbits.out &&
	dws rabbits --json kind-worker3 |
		jq -e ".rabbits[0].storage.drain_reason == \"firmware update\""
'

test_expect_success 'not on a terminal, the drain reason is whole, on the rabbit'"'"'s line' '
	COLUMNS=80 dws rabbits >plain.out &&
	cat plain.out &&
	grep "^kind-worker3 .* drained 20[0-9-]*T[0-9:]*Z: firmware update (by $(id -un))$" \
		plain.out &&
	! grep "^  why:" plain.out &&
	grep "^RABBIT *STORAGE *FLUXION *COMPUTES *DRAINED *JOBS *WHY$" plain.out
'

test_expect_success 'flux dws rabbits -o: presets, fields, --no-header, help' '
	dws rabbits -n -o "{name} {drained_by} {drain_reason}" "kind-worker[2-3]" >fields.out &&
	cat fields.out &&
	printf "kind-worker%s $(id -un) firmware update\n" 2 3 >fields.expected &&
	test_cmp fields.expected fields.out &&
	dws rabbits --format=drain kind-worker2 >drain.fmt &&
	grep "^RABBIT *STORAGE *FLUXION *DRAIN-DATE *DRAINED-BY *DRAIN-REASON$" drain.fmt &&
	grep "^kind-worker2 *Drained *down *20[0-9-]*T[0-9:]*Z *$(id -un) *firmware update$" \
		drain.fmt &&
	dws rabbits -v -o long kind-worker3 >long.out &&
	grep "^RABBIT  *STORAGE  *STATE  *FLUXION  *COMPUTES  *LINKS-DOWN" long.out &&
	dws rabbits -o help >help.out &&
	grep "^  drain_reason  *DRAIN-REASON" help.out &&
	test_expect_code 2 dws rabbits -o "{name} {reason}" 2>badfield.err &&
	grep "flux-dws rabbits: error: argument -o/--format: unknown field .reason." badfield.err &&
	test_expect_code 2 dws rabbits -o wide 2>badpreset.err &&
	grep "argument -o/--format: unknown format .wide.: not a preset" badpreset.err
'

test_expect_success 'a new rabbit job on a free compute of a drained rabbit waits' '
	id=$(flux submit -N1 --requires=host:compute-01 --setattr=system.dw="$XFS" true) &&
	echo $id >blocked.id &&
	flux job wait-event -t 60 $id priority &&
	test_must_fail flux job wait-event -t 3 $id alloc &&
	test "$(flux jobs -no {state} $id)" = SCHED &&
	test -z "$(flux resource drain -no {nodelist})"
'

test_expect_success 'the drain survives a reload of the dws service' '
	flux module remove dws &&
	flux module load "$top_srcdir/src/modules/dws.py" &&
	wait_rabbits ".rabbits[1].fluxion == \"down\"" &&
	dws rabbits --json kind-worker3 |
		jq -e ".rabbits[0].up == false and .rabbits[0].storage.drain_reason == \"firmware update\""
'

test_expect_success 'a guest may not drain or undrain' '
	test_must_fail env $GUEST flux python -m flux_dws rabbits undrain kind-worker2 \
		2>guest.err &&
	one_line guest.err &&
	grep "^flux-dws rabbits undrain: Request requires owner credentials$" guest.err &&
	test_must_fail env $GUEST flux python -m flux_dws rabbits drain kind-worker3 \
		--reason x 2>guest2.err &&
	one_line guest2.err &&
	grep "owner credentials" guest2.err &&
	kubectl get storage kind-worker2 -o json | jq -e ".status.status == \"Drained\""
'

test_expect_success 'bad arguments: one line each, no traceback' '
	test_must_fail dws rabbits drain nosuch --reason x 2>unknown.err &&
	one_line unknown.err &&
	grep "^flux-dws rabbits drain: unknown rabbit: nosuch$" unknown.err &&
	test_expect_code 2 dws rabbits drain "kind-worker[3-" --reason x 2>malformed.err &&
	grep "flux-dws rabbits drain: error: argument RABBITS:" malformed.err &&
	! grep Traceback malformed.err &&
	test_expect_code 2 dws rabbits drain kind-worker3 --reason "" 2>empty.err &&
	grep "error: argument -r/--reason: the reason is empty$" empty.err &&
	test_expect_code 2 dws rabbits drain kind-worker3 2>noreason.err &&
	grep "required: -r/--reason" noreason.err &&
	test_expect_code 2 dws rabbits undrain 2>none.err &&
	grep "required: RABBITS" none.err
'

test_expect_success 'undrain kind-worker2: the taint and annotations go, the waiting job runs' '
	dws rabbits undrain kind-worker2 >undrain.out &&
	grep "^undrained kind-worker2$" undrain.out &&
	kubectl get node kind-worker2 -o json |
		jq -e "[.spec.taints[] | .key] == [\"cray.nnf.node\"]" &&
	kubectl get storage kind-worker2 -o json |
		jq -e ".metadata.annotations.drain_reason == null" &&
	id=$(cat blocked.id) &&
	flux job wait-event -t 60 $id alloc &&
	flux job wait-event -t 60 $id clean &&
	flux job status $id
'

test_expect_success 'the job running on kind-worker3 ran through its drain and ends cleanly' '
	id=$(cat running.id) &&
	test "$(flux jobs -no {state} $id)" = RUN &&
	flux cancel $id &&
	flux job wait-event -t 60 $id clean &&
	! flux job eventlog $id | grep "exception.*dws" &&
	dws rabbits undrain kind-worker3 &&
	wait_rabbits ".rabbits[1].fluxion == \"up\""
'

test_expect_success 'a drain made the nnf CLI way (kubectl) shows, and flux undrains it' '
	kubectl annotate storage kind-worker2 drain_date=2026-11-26T04:00:00 \
		drain_reason=none &&
	kubectl patch node kind-worker2 --type merge -p "{\"spec\":{\"taints\":[
		{\"key\":\"cray.nnf.node\",\"value\":\"true\",\"effect\":\"NoSchedule\"},
		{\"key\":\"cray.nnf.node.drain\",\"value\":\"true\",\"effect\":\"NoSchedule\"},
		{\"key\":\"cray.nnf.node.drain\",\"value\":\"true\",\"effect\":\"NoExecute\"}]}}" &&
	wait_rabbits ".rabbits[0].fluxion == \"down\"" &&
	dws rabbits -v kind-worker2 >nnf.out &&
	cat nnf.out &&
	grep "drained 2026-11-26T04:00:00: none$" nnf.out &&
	dws rabbits undrain "kind-worker[2-3]" &&
	wait_rabbits ".rabbits[0].fluxion == \"up\" and .rabbits[1].fluxion == \"up\""
'

test_expect_success 'a reason of 200 bytes shows whole, in a pipe as in a file' '
	reason="$(printf "%0200d" 0 | tr 0 r | sed "s/^r\{10\}/vendor fix/")" &&
	test ${#reason} = 200 &&
	dws rabbits drain kind-worker2 --reason "$reason" &&
	wait_rabbits "any(.rabbits[]; .name == \"kind-worker2\" and .fluxion == \"down\")" &&
	dws rabbits kind-worker2 | grep -F ": $reason (by $(id -un))" &&
	dws rabbits -n -o "{drain_reason}" kind-worker2 >reason.out &&
	test "$(cat reason.out)" = "$reason" &&
	dws rabbits undrain kind-worker2 &&
	wait_rabbits "any(.rabbits[]; .name == \"kind-worker2\" and .fluxion == \"up\")"
'

test_expect_success 'a drain whose taint fails is taken back, and says so' '
	flux-dws fault api --status 403 --method PATCH --path "/nodes/kind-worker3" \
		--message "nodes kind-worker3 is forbidden" >/dev/null &&
	test_must_fail dws rabbits drain kind-worker3 --reason "taint fails" 2>taint.err &&
	one_line taint.err &&
	grep "rabbit kind-worker3: tainting its Kubernetes Node: nodes kind-worker3 is forbidden; its drain annotations were taken back$" taint.err &&
	kubectl get storage kind-worker3 -o json |
		jq -e ".metadata.annotations.drain_reason == null" &&
	kubectl get node kind-worker3 -o json |
		jq -e "[.spec.taints[] | .key] == [\"cray.nnf.node\"]"
'

test_expect_success 'a rollback that keeps failing names the half-drained rabbit; undrain clears it' '
	flux-dws fault api --status 403 --method PATCH --path "/nodes/kind-worker3" >/dev/null &&
	flux-dws fault api --status 409 --method PATCH --path "/storages/kind-worker3" \
		--skip 1 --count 3 --message conflict >/dev/null &&
	test_must_fail dws rabbits drain kind-worker3 --reason "rollback fails" 2>rollback.err &&
	one_line rollback.err &&
	grep "taking its drain annotations back failed 3 times (conflict): its Storage says drained, its Node is not tainted; .flux dws undrain kind-worker3. clears them$" rollback.err &&
	kubectl get storage kind-worker3 -o json |
		jq -e ".metadata.annotations.drain_reason == \"rollback fails\"" &&
	flux dmesg | grep "dws.err.*kind-worker3.*its Node is not tainted" &&
	flux-dws fault api-clear >/dev/null &&
	dws rabbits undrain kind-worker3 &&
	kubectl get storage kind-worker3 -o json |
		jq -e ".metadata.annotations.drain_reason == null"
'

test_expect_success 'stop the instance' '
	stop_rabbit_instance &&
	stop_emulator
'
test_done
