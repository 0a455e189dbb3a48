#!/bin/sh
test_description='rabbit job faults on a real kube-apiserver, the dws service as user flux

The real-stack set-up of t3600 (kube-apiserver and etcd built from Go
modules, RBAC on, the emulator'"'"'s controllers attached as an admin, a
4-broker instance with Fluxion whose dws service connects as user flux
with only the workload manager roles), with faults injected into the
attached controllers by flux-dws fault (their webhook server answers the
emulator'"'"'s fault endpoints): a Setup failure, dw_failure_tolerance
with a late rabbit (forceReady), cancel in DataIn, PreRun, PostRun,
DataOut and Teardown, the dws service reloaded mid-job, early release
(release_computes = "after-unmount"), and the instance restarted with a
job held in Setup and one in PostRun.'

# the build cache, named before sharness moves HOME into the trash directory
: "${FLUX_DWS_K8S_CACHE:=$HOME/.cache/flux-dws/k8s}"
export FLUX_DWS_K8S_CACHE

. "$(dirname "$0")"/sharness.sh

skip_all_unless_rabbit_jobs

XFS="#DW jobdw type=xfs capacity=10GiB name=scratch"
# rabbit jobs with a copy_in, a copy_out: their DataIn, DataOut have a
# driver to hold (a state no directive watches completes at once)
STAGEIN="$XFS
#DW copy_in source=/lus/global/in destination=\$DW_JOB_scratch/"
STAGED="$XFS
#DW copy_out source=\$DW_JOB_scratch/ destination=/lus/global/out"

# unstall ID: clear the faults and kick the job's Workflow (a stalled
# state moves on at its object's next change)
unstall() {
	realk8s_fault clear >/dev/null &&
	kubectl annotate --overwrite "workflow/$(wfname "$1")" flux-dws-test/kick="$(date +%s%N)"
}

# wf_state ID STATE: until the job's Workflow is in STATE (30 s)
wf_state() {
	kubectl wait --for=jsonpath="{.status.state}"=$2 "workflow/$(wfname $1)" --timeout=30s
}

# wf_held ID STATE: the job's Workflow is in STATE, its drivers held
wf_held() {
	wf_state $1 $2 &&
	test "$(kubectl get workflow $(wfname $1) -o jsonpath={.status.status})" = DriverWait
}

# cancelled_cleanly ID EVENTS: after flux cancel ID, the job ends, its
# epilog done, its Workflow gone, the faults cleared
cancelled_cleanly() {
	flux cancel $1 &&
	flux job wait-event -t 60 $1 clean &&
	flux job eventlog $1 >$2 &&
	grep "epilog-finish description=\"dws-epilog\" status=0" $2 &&
	workflow_gone $1
}

realk8s_or_skip

test_expect_success 'the controllers attach, flux-dws fault reaches them' '
	attach_controllers attached.log &&
	grep "faults on https://127.0.0.1:[0-9]*/_emulator/ (flux-dws fault --kubeconfig" \
		attached.log &&
	realk8s_fault list | jq -e ".faults == []" &&
	test_must_fail realk8s_fault api-list 2>api.err &&
	grep "no admin endpoint /_emulator/api-faults on attached controllers" api.err
'

test_expect_success 'a rabbit instance whose dws service connects as flux' '
	export KUBECONFIG="$(pwd)/flux.kubeconfig" &&
	rabbit_instance_config "$(pwd)" "epilog-timeout = 600.0" &&
	restartable_instance_opts &&
	FLUX_DISABLE_JOB_CLEANUP=1 && export FLUX_DISABLE_JOB_CLEANUP &&
	start_rabbit_instance "$(pwd)" &&
	unset FLUX_DISABLE_JOB_CLEANUP
'

test_expect_success 'a fatal DWS error in Setup: the job fails with DWS'"'"' message' '
	realk8s_fault add --state Setup --severity Fatal --message "out of space" &&
	id=$(flux submit -N1 --setattr=system.dw="$XFS" true) &&
	test_when_finished "flux cancel $id 2>/dev/null; realk8s_fault clear >/dev/null" &&
	flux job wait-event -t 60 $id clean &&
	flux job eventlog $id >setup-error.events &&
	grep "exception type=\"exception\" severity=0 note=\"DWS/Rabbit interactions failed: workflow hit an error: DW Directive 0: Internal error: out of space\"" \
		setup-error.events &&
	test_must_fail grep "^[0-9.]* start" setup-error.events &&
	grep "epilog-finish description=\"dws-epilog\" status=0" setup-error.events &&
	workflow_gone $id
'

test_expect_success 'a late rabbit, the job tolerates its compute: forceReady, it runs on the others' '
	cp conf/instance.toml instance.toml.good &&
	echo "setup_timeout = 4" >>conf/instance.toml &&
	flux config reload &&
	realk8s_fault stall --kind allocation --rabbit kind-worker3 &&
	rm -f go-late &&
	id=$(flux submit -N4 --setattr=system.dw="$XFS" \
		--setattr=system.dw_failure_tolerance=1 \
		sh -c "while ! test -e \"\$0\"; do sleep 0.1; done" "$PWD/go-late") &&
	test_when_finished "flux cancel $id 2>/dev/null; realk8s_fault clear >/dev/null" &&
	flux job wait-event -t 60 $id start &&
	KUBECONFIG="$(pwd)/admin.kubeconfig" kubectl get clientmounts -A -o json |
		jq -r ".items[] | \"\(.metadata.namespace) \(.spec.mounts | length)\"" |
		sort >late.mounts &&
	test "$(cat late.mounts)" = "$(printf "compute-01 1\ncompute-02 1\ncompute-03 1\n")" &&
	touch go-late &&
	flux job wait-event -t 60 $id clean &&
	flux job eventlog $id >late.events &&
	grep "exception type=\"dws-node-failure\" severity=1 note=\"compute-04\"" late.events &&
	test_must_fail grep "severity=0" late.events &&
	grep "epilog-finish description=\"dws-epilog\" status=0" late.events &&
	flux job status $id &&
	workflow_gone $id &&
	cp instance.toml.good conf/instance.toml &&
	flux config reload
'

test_expect_success 'cancel in DataIn (held): the prolog fails, teardown, nothing left' '
	realk8s_fault stall --state DataIn &&
	id=$(flux submit -N1 --setattr=system.dw="$STAGEIN" true) &&
	test_when_finished "flux cancel $id 2>/dev/null; realk8s_fault clear >/dev/null" &&
	flux job wait-event -t 30 $id prolog-start &&
	wf_held $id DataIn &&
	cancelled_cleanly $id datain.events &&
	grep "prolog-finish description=\"dws-setup\" status=1" datain.events &&
	test_must_fail grep "^[0-9.]* start" datain.events
'

test_expect_success 'cancel in PreRun (held): the prolog fails, teardown, nothing left' '
	realk8s_fault stall --state PreRun &&
	id=$(flux submit -N1 --setattr=system.dw="$XFS" true) &&
	test_when_finished "flux cancel $id 2>/dev/null; realk8s_fault clear >/dev/null" &&
	flux job wait-event -t 30 $id prolog-start &&
	wf_held $id PreRun &&
	cancelled_cleanly $id prerun.events &&
	grep "prolog-finish description=\"dws-setup\" status=1" prerun.events &&
	test_must_fail grep "^[0-9.]* start" prerun.events
'

test_expect_success 'cancel in PostRun and in DataOut (held): Teardown still ends them' '
	for state in PostRun DataOut; do
		realk8s_fault stall --state $state &&
		id=$(submit_held $state -N1 --setattr=system.dw="$STAGED") &&
		test_when_finished "flux cancel $id 2>/dev/null; realk8s_fault clear >/dev/null" &&
		flux job wait-event -t 30 $id start &&
		release_job $state $id &&
		flux job wait-event -t 30 $id epilog-start &&
		wf_held $id $state &&
		cancelled_cleanly $id $state.events &&
		realk8s_fault clear >/dev/null || return 1
	done
'

test_expect_success 'cancel during Teardown (held): the epilog ends once it does' '
	realk8s_fault stall --state Teardown &&
	id=$(submit_held td) &&
	test_when_finished "flux cancel $id 2>/dev/null; realk8s_fault clear >/dev/null" &&
	flux job wait-event -t 30 $id start &&
	release_job td $id &&
	flux job wait-event -t 30 $id epilog-start &&
	wf_held $id Teardown &&
	flux cancel $id &&
	test_must_fail flux job wait-event -t 1 $id epilog-finish &&
	unstall $id &&
	flux job wait-event -t 60 $id clean &&
	flux job eventlog $id >teardown.events &&
	grep "epilog-finish description=\"dws-epilog\" status=0" teardown.events &&
	workflow_gone $id
'

test_expect_success 'the dws service reloaded while a job runs: the job ends cleanly' '
	reload_service_mid_job
'

test_expect_success 'early release: DataOut held, the job ends and frees its computes' '
	cp conf/instance.toml instance.toml.good &&
	echo "release_computes = \"after-unmount\"" >>conf/instance.toml &&
	flux config reload &&
	realk8s_fault stall --state DataOut &&
	id=$(flux submit -N4 --setattr=system.dw="$STAGED" true) &&
	test_when_finished "flux cancel $id 2>/dev/null; realk8s_fault clear >/dev/null" &&
	flux job wait-event -t 60 $id clean &&
	flux job eventlog $id >early.events &&
	grep "epilog-finish description=\"dws-epilog\" status=0" early.events &&
	wf_state $id DataOut &&
	wait_phase $id dataout &&
	test "$(down_ssds | wc -l)" -gt 0 &&
	next=$(flux submit -N4 hostname) &&
	flux job wait-event -t 60 $next clean &&
	flux job status $next &&
	test "$(flux jobs -no {nodelist} $next)" = "$(flux jobs -no {nodelist} $id)" &&
	phase_is $id dataout &&
	unstall $id &&
	workflow_gone $id &&
	wait_down 0 &&
	cp instance.toml.good conf/instance.toml &&
	flux config reload
'

test_expect_success 'a job held in Setup and one in PostRun, the instance restarted: both end cleanly' '
	pr=$(submit_held pr) &&
	test_when_finished "flux cancel $pr 2>/dev/null; realk8s_fault clear >/dev/null" &&
	flux job wait-event -t 30 $pr start &&
	realk8s_fault stall --state PostRun --workflow $(wfname $pr) &&
	release_job pr $pr &&
	flux job wait-event -t 30 $pr epilog-start &&
	wf_held $pr PostRun &&
	realk8s_fault stall --state Setup &&
	su=$(flux submit -N1 --setattr=system.dw="$XFS" printenv DW_JOB_scratch) &&
	test_when_finished "flux cancel $su 2>/dev/null || :" &&
	flux job wait-event -t 30 -m description=dws-setup $su prolog-start &&
	wf_held $su Setup &&
	stop_rabbit_instance &&
	FLUX_DISABLE_JOB_CLEANUP=1 && export FLUX_DISABLE_JOB_CLEANUP &&
	start_rabbit_instance "$(pwd)" &&
	unset FLUX_DISABLE_JOB_CLEANUP &&
	test $(flux jobs -no {state} $su) = RUN &&
	test $(flux jobs -no {state} $pr) = CLEANUP &&
	unstall $su &&
	unstall $pr &&
	ends_cleanly $su su.events &&
	grep "prolog-finish description=\"dws-setup\" status=0" su.events &&
	flux job attach $su | grep "^/mnt/nnf/" &&
	ends_cleanly $pr pr.events &&
	flux job attach $pr | grep "^DW_JOB_scratch=/mnt/nnf/"
'

test_expect_success 'nothing is left on the real API server' '
	test "$(kubectl get workflows -A -o name)" = "" &&
	test "$(kubectl get servers -A -o name)" = ""
'

test_expect_success 'stop the instance, the controllers and the control plane' '
	stop_rabbit_instance &&
	rm -rf "$STATEDIR" &&
	detach_controllers &&
	stop_realk8s
'

test_done
