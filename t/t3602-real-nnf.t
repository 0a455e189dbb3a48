#!/bin/sh
test_description='rabbit jobs on the real DWS, nnf-sos and nnf-dm controllers

The real control plane (kube-apiserver and etcd, t/k8s/build.sh) with the
upstream DWS, nnf-sos and nnf-dm managers built from ../shared/nnf by
t/nnf/build.sh (flux_dws.realstack.nnf: DWS webhook and controller, the
nnf-sos storage controller, per rabbit an nnf-sos node controller --mock
and an nnf-dm node manager), their CRDs, rules, profiles and workload
manager roles, and a 4-broker instance with Fluxion and a statedir whose
dws service connects as user flux.  A state is held by stopping the
manager that moves it (SIGSTOP: nnf_manager pause) and released by
continuing it; the control plane'"'"'s faults the same way: kube-apiserver
and etcd restarted (data kept), etcd held, etcd compacted so that every
watch is answered 410.  Skipped with the reason when either is not
built; a failure under FLUX_DWS_REQUIRE_REALK8S=1.'

: "${FLUX_DWS_K8S_CACHE:=$HOME/.cache/flux-dws/k8s}"
: "${FLUX_DWS_NNF_CACHE:=$HOME/.cache/flux-dws/nnf}"
export FLUX_DWS_K8S_CACHE FLUX_DWS_NNF_CACHE

. "$(dirname "$0")"/sharness.sh

skip_all_unless_rabbit_jobs

nnf_src=${FLUX_DWS_NNF_SRC:-$(cd "$top_srcdir/.." && pwd)/shared/nnf}
if ! test -f "$nnf_src/SHA256SUMS"; then
	skip_all="no NNF source to build the real controllers from ($nnf_src; FLUX_DWS_NNF_SRC)"
	test_done
fi

# copy_in sources, copy_out destinations: the LustreFileSystem's mount
# root, out of the trash directory (a #DW argument takes no blank)
LUS=$(mktemp -d "${TMPDIR:-/tmp}/flux-dws-lus.XXXXXX")
XFS="#DW jobdw type=xfs capacity=10GiB name=scratch"
STAGEIN="$XFS
#DW copy_in source=$LUS/in/ destination=\$DW_JOB_scratch/"
STAGED="$XFS
#DW copy_out source=\$DW_JOB_scratch/ destination=$LUS/out/"
RABBITS="kind-worker2 kind-worker3"

# managers VERB PREFIX: nnf_manager VERB on PREFIX-RABBIT for each rabbit
managers() {
	for r in $RABBITS; do
		nnf_manager $1 $2-$r || return 1
	done
}

# held ID STATE: the job's Workflow is asked for STATE and not there yet
# (a manager that moves it is stopped); 30 s
held() {
	kubectl wait --for=jsonpath="{.spec.desiredState}"=$2 "workflow/$(wfname $1)" \
		--timeout=30s &&
	test "$(kubectl get workflow $(wfname $1) -o jsonpath={.status.ready})" != true
}

# cancelled_then_released ID EVENTS VERB NAME...: flux cancel ID, then
# nnf_manager resume (managers resume for NAME of form @PREFIX) each NAME;
# the job ends, its epilog done, its Workflow gone
cancelled_then_released() {
	id=$1 events=$2 && shift 2 &&
	flux cancel $id &&
	for name in "$@"; do
		case $name in
		@*) managers resume ${name#@} ;;
		*) nnf_manager resume $name ;;
		esac || return 1
	done &&
	flux job wait-event -t 60 $id clean &&
	flux job eventlog $id >$events &&
	grep "epilog-finish description=\"dws-epilog\" status=0" $events &&
	workflow_gone $id
}

# after_proposal ARGS...: flux submit ARGS held (urgency 0) until its
# Proposal is done, for a test that then holds a manager Proposal needs;
# let it go with flux job urgency ID default
after_proposal() {
	hp=$(flux submit --urgency=hold "$@") &&
	flux job wait-event -t 30 $hp dependency-remove >/dev/null &&
	echo $hp
}

# node_ready RABBIT STATUS: what a kubelet posts, its Node's Ready
# condition (True or False); nnf-sos reads it into the rabbit's Storage
node_ready() {
	KUBECONFIG="$(pwd)/admin.kubeconfig" kubectl patch node $1 \
		--subresource=status --type=merge \
		-p "{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"$2\",\"reason\":\"Test\",\"message\":\"test\"}]}}"
}

REALK8S_ARGS="--controllers nnf --lustre-root $LUS"
realk8s_or_skip

test_expect_success 'the real managers run; the WLM identity has only the WLM roles' '
	KUBECONFIG=$(pwd)/admin.kubeconfig kubectl get storages -o name >storages &&
	test $(wc -l <storages) = 2 &&
	test_must_fail nnf_manager pause nnf-dm-nowhere 2>nowhere.err &&
	grep "error: pause nnf-dm-nowhere: no manager .nnf-dm-nowhere.; the managers: dws-webhook, " nowhere.err &&
	export KUBECONFIG="$(pwd)/flux.kubeconfig" &&
	kubectl auth can-i create workflows.dataworkflowservices.github.io &&
	test_must_fail kubectl auth can-i create nnfstorages.nnf.cray.hpe.com &&
	test_must_fail kubectl auth can-i patch nodes
'

test_expect_success 'a rabbit instance whose dws service connects as flux' '
	rabbit_instance_config "$(pwd)" &&
	restartable_instance_opts &&
	start_rabbit_instance "$(pwd)"
'

test_expect_success 'xfs: Proposal to Teardown on the real controllers' '
	xfs_through_every_state
'

test_expect_success 'gfs2, raw and lustre' '
	gfs2_raw_and_lustre
'

# each rabbit's node managers in a mount namespace of their own, as a
# rabbit is a host of its own (flux_dws.realstack.nnf): four nodes are
# both rabbits' computes, so the Lustre's servers mount on both, at one
# path; without the namespaces the second mount failed ("file exists")
test_expect_success 'lustre over both rabbits, each its own host' '
	flux run -N4 --setattr=system.dw="#DW jobdw type=lustre capacity=200GiB name=wide" \
		printenv DW_JOB_wide >wide.out &&
	test $(sort -u wide.out | wc -l) = 1 &&
	grep "^/mnt/nnf/" wide.out &&
	workflow_gone $(flux job last)
'

# a rabbit going Offline (its Node not Ready) under a running Lustre job:
# nnf-sos reports it in the rabbit's Storage and acts on nothing else (a
# WLM's to keep new jobs off it), so Fluxion takes the rabbit down, the
# job goes on and tears its file system down on both rabbits
test_expect_success 'a rabbit of a running Lustre job goes Offline: the job ends cleanly' '
	rm -f go-offline &&
	id=$(flux submit -N4 --setattr=system.dw="#DW jobdw type=lustre capacity=200GiB name=wide" \
		sh -c "while ! test -e \"\$0\"; do sleep 0.1; done" "$PWD/go-offline") &&
	test_when_finished "flux cancel $id 2>/dev/null || :" &&
	flux job wait-event -t 60 $id start &&
	node_ready kind-worker3 False &&
	test_when_finished "node_ready kind-worker3 True" &&
	KUBECONFIG="$(pwd)/admin.kubeconfig" kubectl wait storage/kind-worker3 \
		--for=jsonpath="{.status.status}"=Offline --timeout=60s &&
	wait_rabbits ".rabbits[1].fluxion == \"down\"" 60 &&
	touch go-offline &&
	flux job wait-event -t 60 $id clean &&
	flux job eventlog $id >offline.events &&
	grep "epilog-finish description=\"dws-epilog\" status=0" offline.events &&
	test_must_fail grep exception offline.events &&
	workflow_gone $id &&
	node_ready kind-worker3 True &&
	wait_rabbits "[.rabbits[].fluxion] | all(. == \"up\")" 60
'

test_expect_success 'persistent storage: create, use, destroy' '
	persistent_create_use_destroy
'

test_expect_success 'copy_in and copy_out: nnf-dm moves the data through the rabbit' '
	mkdir -p "$LUS/in" &&
	echo payload >"$LUS/in/data" &&
	flux run -N1 --setattr=system.dw="$STAGEIN
#DW copy_out source=\$DW_JOB_scratch/ destination=$LUS/out/" true &&
	id=$(flux job last) &&
	flux job eventlog $id >copy.events &&
	grep "epilog-finish description=\"dws-epilog\" status=0" copy.events &&
	workflow_gone $id &&
	find "$LUS/out" -type f >copied &&
	test $(wc -l <copied) = 1 &&
	test "$(cat $(cat copied))" = payload
'

test_expect_success 'a directive DWS refuses: the job gets the real webhook'"'"'s words' '
	refused_in_dws_words
'

test_expect_success 'a Proposal error worded by nnf-sos' '
	proposal_error_in_nnf_words
'

test_expect_success 'cancel: held after Proposal, in the setup prolog (Setup held), while running' '
	held=$(flux submit -N1 --urgency=hold --setattr=system.dw="$XFS" true) &&
	flux job wait-event -t 30 $held dependency-remove &&
	test "$(kubectl get workflow $(wfname $held) -o jsonpath={.status.state})" = Proposal &&
	flux cancel $held &&
	flux job wait-event -t 60 $held clean &&
	workflow_gone $held &&
	setup=$(after_proposal -N1 --setattr=system.dw="$XFS" true) &&
	test_when_finished "flux cancel $setup 2>/dev/null || :" &&
	nnf_manager pause nnf-sos-storage &&
	test_when_finished "nnf_manager resume nnf-sos-storage" &&
	flux job urgency $setup default &&
	flux job wait-event -t 30 $setup prolog-start &&
	held $setup Setup &&
	cancelled_then_released $setup setup.events nnf-sos-storage &&
	grep "prolog-finish description=\"dws-setup\" status=1" setup.events &&
	cancel_while_running "$XFS"
'

test_expect_success 'cancel in DataIn (nnf-dm held): the prolog fails, teardown, nothing left' '
	managers pause nnf-dm &&
	test_when_finished "managers resume nnf-dm" &&
	id=$(flux submit -N1 --setattr=system.dw="$STAGEIN" true) &&
	test_when_finished "flux cancel $id 2>/dev/null || :" &&
	flux job wait-event -t 30 $id prolog-start &&
	held $id DataIn &&
	cancelled_then_released $id datain.events @nnf-dm &&
	grep "prolog-finish description=\"dws-setup\" status=1" datain.events &&
	test_must_fail grep "^[0-9.]* start" datain.events
'

test_expect_success 'cancel in PostRun (nnf-sos held) and in DataOut (nnf-dm held)' '
	id=$(submit_held postrun -N1 --setattr=system.dw="$XFS") &&
	test_when_finished "flux cancel $id 2>/dev/null || :" &&
	flux job wait-event -t 30 $id start &&
	nnf_manager pause nnf-sos-storage &&
	test_when_finished "nnf_manager resume nnf-sos-storage" &&
	release_job postrun $id &&
	flux job wait-event -t 30 $id epilog-start &&
	held $id PostRun &&
	cancelled_then_released $id postrun.events nnf-sos-storage &&
	id=$(submit_held dataout -N1 --setattr=system.dw="$STAGED") &&
	test_when_finished "flux cancel $id 2>/dev/null || :" &&
	flux job wait-event -t 30 $id start &&
	managers pause nnf-dm &&
	test_when_finished "managers resume nnf-dm" &&
	release_job dataout $id &&
	flux job wait-event -t 30 $id epilog-start &&
	held $id DataOut &&
	cancelled_then_released $id dataout.events @nnf-dm
'

# Teardown held: the rabbits' nnf-sos node controllers stopped once the
# job's data movement is under way (DataOut held by nnf-dm, so every
# rabbit mount is made), then nnf-dm let go: DataOut ends, Teardown waits
# on the rabbits to take their storage down
test_expect_success 'Teardown held (the rabbits'"'"' nnf-sos held): the epilog ends once released' '
	managers pause nnf-dm &&
	test_when_finished "managers resume nnf-dm" &&
	id=$(submit_held td -N1 --setattr=system.dw="$STAGED") &&
	test_when_finished "flux cancel $id 2>/dev/null || :" &&
	flux job wait-event -t 30 $id start &&
	release_job td $id &&
	held $id DataOut &&
	until_true 30 sh -c "kubectl get nnfdatamovements -A -o name --kubeconfig \"$(pwd)/admin.kubeconfig\" | grep -q ." &&
	managers pause nnf-sos-node &&
	test_when_finished "managers resume nnf-sos-node" &&
	managers resume nnf-dm &&
	held $id Teardown &&
	test_must_fail flux job wait-event -t 1 $id epilog-finish &&
	managers resume nnf-sos-node &&
	ends_cleanly $id teardown.events
'

test_expect_success 'a rabbit whose Node is not Ready goes down in Fluxion, and comes back' '
	node_ready kind-worker3 False &&
	KUBECONFIG="$(pwd)/admin.kubeconfig" kubectl wait storage/kind-worker3 \
		--for=jsonpath="{.status.status}"=Offline --timeout=60s &&
	wait_rabbits ".rabbits[1].fluxion == \"down\"" 60 &&
	node_ready kind-worker3 True &&
	wait_rabbits "[.rabbits[].fluxion] | all(. == \"up\")" 60
'

test_expect_success 'a rabbit drained the nnf way goes down in Fluxion, and comes back' '
	KUBECONFIG="$(pwd)/admin.kubeconfig" kubectl patch storage kind-worker3 --type=merge \
		-p "{\"spec\":{\"state\":\"Disabled\"}}" &&
	wait_rabbits ".rabbits[1].fluxion == \"down\"" 60 &&
	KUBECONFIG="$(pwd)/admin.kubeconfig" kubectl patch storage kind-worker3 --type=merge \
		-p "{\"spec\":{\"state\":\"Enabled\"}}" &&
	wait_rabbits "[.rabbits[].fluxion] | all(. == \"up\")" 60
'

test_expect_success 'a late rabbit, the job tolerates its compute: it runs on the others' '
	cp conf/instance.toml instance.toml.good &&
	echo "setup_timeout = 4" >>conf/instance.toml &&
	flux config reload &&
	nnf_manager pause nnf-sos-node-kind-worker3 &&
	test_when_finished "nnf_manager resume nnf-sos-node-kind-worker3" &&
	rm -f go-late &&
	id=$(flux submit -N4 --setattr=system.dw="$XFS" \
		--setattr=system.dw_failure_tolerance=1 \
		sh -c "while ! test -e \"\$0\"; do sleep 0.1; done" "$PWD/go-late") &&
	test_when_finished "flux cancel $id 2>/dev/null || :" &&
	flux job wait-event -t 60 $id start &&
	touch go-late &&
	nnf_manager resume nnf-sos-node-kind-worker3 &&
	flux job wait-event -t 60 $id clean &&
	flux job eventlog $id >late.events &&
	grep "exception type=\"dws-node-failure\" severity=1 note=\"compute-04\"" late.events &&
	test_must_fail grep "severity=0" late.events &&
	grep "epilog-finish description=\"dws-epilog\" status=0" late.events &&
	workflow_gone $id &&
	cp instance.toml.good conf/instance.toml &&
	flux config reload
'

test_expect_success 'every manager restarted mid-job: the new ones tear it down' '
	id=$(flux submit -N1 --setattr=system.dw="$XFS" sleep inf) &&
	test_when_finished "flux cancel $id 2>/dev/null || :" &&
	flux job wait-event -t 30 $id start &&
	for m in dws-controller nnf-sos-storage nnf-sos-node-kind-worker2 \
		nnf-sos-node-kind-worker3 nnf-dm-kind-worker2 nnf-dm-kind-worker3 dws-webhook; do
		nnf_manager restart $m || return 1
	done &&
	flux cancel $id &&
	flux job wait-event -t 60 $id clean &&
	flux job eventlog $id >restart.events &&
	grep "epilog-finish description=\"dws-epilog\" status=0" restart.events &&
	workflow_gone $id
'

test_expect_success 'the dws service reloaded while a job runs: the job ends cleanly' '
	reload_service_mid_job
'

test_expect_success 'early release: DataOut held, the job ends and frees its computes' '
	cp conf/instance.toml instance.toml.good &&
	echo "release_computes = \"after-unmount\"" >>conf/instance.toml &&
	flux config reload &&
	managers pause nnf-dm &&
	test_when_finished "managers resume nnf-dm" &&
	id=$(flux submit -N4 --setattr=system.dw="$STAGED" true) &&
	test_when_finished "flux cancel $id 2>/dev/null || :" &&
	flux job wait-event -t 60 $id clean &&
	flux job eventlog $id >early.events &&
	grep "epilog-finish description=\"dws-epilog\" status=0" early.events &&
	held $id DataOut &&
	wait_phase $id dataout &&
	test "$(down_ssds | wc -l)" -gt 0 &&
	next=$(flux submit -N4 hostname) &&
	flux job wait-event -t 60 $next clean &&
	flux job status $next &&
	phase_is $id dataout &&
	managers resume nnf-dm &&
	workflow_gone $id &&
	wait_down 0 &&
	cp instance.toml.good conf/instance.toml &&
	flux config reload
'

test_expect_success 'pre-staged: Setup and DataIn before the nodes, then it runs' '
	rm -rf "$LUS/out" &&
	id=$(flux submit -N1 --setattr=system.dw="$STAGEIN" --setattr=system.dw_prestage=yes true) &&
	flux job wait-event -t 60 $id clean &&
	flux job eventlog $id >pre.events &&
	awk "/dependency-remove description=\"dws-prestage\"/ {r = NR} / alloc/ {a = NR}
		END {exit !(r && a && r < a)}" pre.events &&
	grep "epilog-finish description=\"dws-epilog\" status=0" pre.events &&
	workflow_gone $id
'

# as t3107: SIGTERM (systemctl stop) cancels the job in its prolog; the
# one in its epilog stays in CLEANUP across the restart
test_expect_success 'a job held in Setup and one in PostRun, the instance stopped and started: both end cleanly' '
	pr=$(submit_held pr) &&
	test_when_finished "flux cancel $pr 2>/dev/null || :" &&
	flux job wait-event -t 30 $pr start &&
	su=$(after_proposal -N1 --setattr=system.dw="$XFS" printenv DW_JOB_scratch) &&
	test_when_finished "flux cancel $su 2>/dev/null || :" &&
	nnf_manager pause nnf-sos-storage &&
	test_when_finished "nnf_manager resume nnf-sos-storage" &&
	release_job pr $pr &&
	flux job wait-event -t 30 $pr epilog-start &&
	held $pr PostRun &&
	flux job urgency $su default &&
	flux job wait-event -t 30 -m description=dws-setup $su prolog-start &&
	held $su Setup &&
	term_rabbit_instance &&
	FLUX_DISABLE_JOB_CLEANUP=1 && export FLUX_DISABLE_JOB_CLEANUP &&
	start_rabbit_instance "$(pwd)" &&
	unset FLUX_DISABLE_JOB_CLEANUP &&
	test $(flux jobs -no {state} $pr) = CLEANUP &&
	nnf_manager resume nnf-sos-storage &&
	flux job wait-event -t 60 $su clean &&
	flux job eventlog $su >su.events &&
	grep "exception type=\"cancel\" severity=0" su.events &&
	grep "epilog-finish description=\"dws-epilog\" status=0" su.events &&
	workflow_gone $su &&
	ends_cleanly $pr pr.events &&
	flux job attach $pr | grep "^DW_JOB_scratch=/mnt/nnf/"
'

test_expect_success 'kube-apiserver restarted, then etcd restarted (data kept), mid-job: it ends cleanly' '
	id=$(submit_held apirestart) &&
	test_when_finished "flux cancel $id 2>/dev/null || :" &&
	flux job wait-event -t 30 $id start &&
	nnf_manager restart kube-apiserver &&
	nnf_manager restart etcd &&
	release_job apirestart $id &&
	ends_cleanly $id apirestart.events
'

test_expect_success 'etcd held while a job ends: its epilog waits, then ends once etcd is back' '
	id=$(submit_held etcdheld) &&
	test_when_finished "flux cancel $id 2>/dev/null || :" &&
	flux job wait-event -t 30 $id start &&
	nnf_manager pause etcd &&
	test_when_finished "nnf_manager resume etcd" &&
	release_job etcdheld $id &&
	flux job wait-event -t 30 $id epilog-start &&
	test_must_fail flux job wait-event -t 2 $id epilog-finish &&
	nnf_manager resume etcd &&
	ends_cleanly $id etcdheld.events
'

# wf_lists: how many times the service's Workflow watch has listed
wf_lists() {
	flux python -m flux_dws status --json |
	jq -e ".service.watches[] | select(.kind == \"Workflow\") | .lists"
}

# listed_since N: the Workflow watch has listed more than N times
listed_since() {
	test "$(wf_lists)" -gt "$1"
}

# a write no watch of the service sees, then etcd compacted past it: the
# watches, reconnected to the restarted API server from their last
# resourceVersion, are answered 410 Gone and list again
test_expect_success 'etcd compacted and kube-apiserver restarted: every watch lists again, no job lost' '
	id=$(submit_held compacted) &&
	test_when_finished "flux cancel $id 2>/dev/null || :" &&
	flux job wait-event -t 30 $id start &&
	lists=$(wf_lists) &&
	KUBECONFIG="$(pwd)/admin.kubeconfig" kubectl create configmap compaction-$(flux job id --to=dec $id) &&
	nnf_manager restart history &&
	nnf_manager restart kube-apiserver &&
	until_true 60 listed_since $lists &&
	release_job compacted $id &&
	ends_cleanly $id compacted.events
'

test_expect_success 'nothing is left on the real API server' '
	test "$(kubectl get workflows -A -o name)" = "" &&
	test "$(kubectl get servers -A -o name)" = "" &&
	KUBECONFIG="$(pwd)/admin.kubeconfig" kubectl get nnfstorages,nnfaccesses,clientmounts,nnfdatamovements -A -o name >left &&
	test_must_be_empty left
'

test_expect_success 'stop the instance, the controllers and the control plane' '
	stop_rabbit_instance &&
	rm -rf "$STATEDIR" "$LUS" &&
	stop_realk8s
'

test_done
