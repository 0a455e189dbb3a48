#!/bin/sh
test_description='storage set up and filled before the nodes (issue 46)

A 4-broker instance (compute-[01-04] on kind-worker2 and kind-worker3)
with Fluxion and a statedir.  A pre-staged rabbit job (-S dw_prestage=yes)
waits in DEPEND on dws-prestage while its Workflow goes through Setup and
DataIn with no node allocated, its Lustre held down in Fluxion; only then
is it scheduled, mounts and runs.  A DataIn failure or a cancel ends it
before any node is spent; a service, jobtap, Fluxion or instance restart
meanwhile changes nothing, nor does a service reload between the
Workflow'"'"'s create and its answer; nothing stays held.'

. "$(dirname "$0")"/sharness.sh

skip_all_unless_rabbit_jobs

LUSTRE="#DW jobdw type=lustre capacity=10GiB name=lus"
STAGED="$LUSTRE
#DW copy_in source=/lus/global/in destination=\$DW_JOB_lus/"


# prestaged_then_ran ID: it ended clean, let go (dws-prestage removed)
# before its nodes were allocated
prestaged_then_ran() {
	flux job wait-event -t 60 $1 clean &&
	completed $1 &&
	flux job eventlog $1 >$1.log &&
	awk "/dependency-remove description=\"dws-prestage\"/ {r = NR} / alloc/ {a = NR}
		END {exit !(r && a && r < a)}" $1.log
}

test_expect_success 'start the emulator and an instance with persistent state' '
	start_emulator --system kind --latency zero &&
	rabbit_instance_config "$(pwd)" &&
	restartable_instance_opts &&
	start_rabbit_instance "$(pwd)" &&
	wait_down 0
'

test_expect_success 'a pre-staged job waits in DEPEND through Setup and DataIn, no node held' '
	flux-dws fault stall --state DataIn &&
	id=$(flux submit -N2 --setattr=system.dw="$STAGED" --setattr=system.dw_prestage=yes \
		sh -c "echo \$DW_JOB_lus") &&
	echo $id >staged.id &&
	wait_phase $id datain &&
	prestaging $id &&
	flux job eventlog $id | grep "jobspec-update" >update.log &&
	test_must_fail grep ssd update.log &&
	until_true 30 test -n "$(held_paths $id)" &&
	held_paths $id >held.ssds &&
	down_ssds >down.now &&
	test_cmp held.ssds down.now
'

test_expect_success 'flux dws job shows the job pre-staging and for how long' '
	flux python -m flux_dws job $(cat staged.id) >job.out &&
	cat job.out &&
	grep -i "pre-stag" job.out &&
	flux python -m flux_dws job --json $(cat staged.id) >job.json &&
	jq -e ".prestage.gib > 0 and (.prestage.nodes | not)" job.json
'

test_expect_success 'its Workflow carries the choice and the ssd held' '
	kubectl get workflow $(wfname $(cat staged.id)) -o json >wf.json &&
	jq -e ".metadata.annotations[\"flux-dws.io/prestage\"] | fromjson | .held | length > 0" wf.json
'

test_expect_success 'a jobtap plugin reload while it waits: it still waits' '
	flux jobtap remove dws-jobtap.so &&
	flux jobtap load "$DWS_JOBTAP" &&
	prestaging $(cat staged.id)
'

test_expect_success 'a dws service reload while it waits: the same hold' '
	flux module remove dws &&
	flux module load "$top_srcdir/src/modules/dws.py" &&
	wait_phase $(cat staged.id) datain &&
	until_true 30 test -n "$(held_paths $(cat staged.id))" &&
	held_paths $(cat staged.id) >held.now &&
	test_cmp held.ssds held.now &&
	prestaging $(cat staged.id)
'

test_expect_success 'a Fluxion reload while it waits: the hold is applied again' '
	reload_fluxion &&
	wait_down $(wc -l <held.ssds) 90 &&
	down_ssds >down.now &&
	test_cmp held.ssds down.now &&
	prestaging $(cat staged.id)
'

test_expect_success 'DataIn done: it is let go, gets its nodes, mounts and runs' '
	id=$(cat staged.id) &&
	clear_and_end $id &&
	prestaged_then_ran $id &&
	flux job attach $id >staged.out &&
	grep "^/mnt/nnf/" staged.out &&
	workflow_gone $id &&
	wait_down 0
'

test_expect_success 'a DataIn failure ends the job in DEPEND, no node spent, nothing held' '
	flux-dws fault add --kind datamovement --state DataIn --message "copy_in failed here" &&
	id=$(flux submit -N1 --setattr=system.dw="$STAGED" --setattr=system.dw_prestage=yes true) &&
	flux job wait-event -t 60 $id clean &&
	flux job eventlog $id >failed.log &&
	grep "exception.*DWS/Rabbit interactions failed: workflow hit an error: .*copy_in failed here" \
		failed.log &&
	test_must_fail grep " alloc" failed.log &&
	flux-dws fault clear &&
	workflow_gone $id &&
	wait_down 0
'

test_expect_success 'a cancel while it pre-stages: Teardown, no node spent, nothing held' '
	flux-dws fault stall --state DataIn &&
	id=$(flux submit -N1 --setattr=system.dw="$STAGED" --setattr=system.dw_prestage=yes true) &&
	wait_phase $id datain &&
	flux cancel $id &&
	flux job wait-event -t 60 $id clean &&
	! flux job eventlog $id | grep -q " alloc" &&
	flux-dws fault clear &&
	kick $(wfname $id) &&
	workflow_gone $id &&
	wait_down 0
'

test_expect_success 'an instance restart while it waits: it goes on and runs' '
	flux-dws fault stall --state DataIn &&
	id=$(flux submit -N1 --setattr=system.dw="$STAGED" --setattr=system.dw_prestage=yes true) &&
	echo $id >restart.id &&
	wait_phase $id datain &&
	until_true 30 test -n "$(held_paths $id)" &&
	held_paths $id >held.ssds &&
	term_rabbit_instance &&
	RABBIT_WAIT="[.holds[] | select(.applied)] | length == 1" &&
	export RABBIT_WAIT &&
	start_rabbit_instance "$(pwd)" &&
	unset RABBIT_WAIT &&
	prestaging $id &&
	held_paths $id >held.now &&
	test_cmp held.ssds held.now &&
	clear_and_end $id &&
	prestaged_then_ran $id &&
	workflow_gone $id &&
	wait_down 0
'

test_expect_success 'a copy_in into persistent storage is pre-staged, nothing held in Fluxion' '
	flux run -N1 --setattr=system.dw="#DW create_persistent type=lustre capacity=10GiB name=proj" \
		true &&
	flux-dws fault stall --state DataIn &&
	id=$(flux submit -N1 --setattr=system.dw="#DW persistentdw name=proj
#DW copy_in source=/lus/global/in destination=\$DW_PERSISTENT_proj/" \
		--setattr=system.dw_prestage=yes true) &&
	wait_phase $id datain &&
	prestaging $id &&
	wait_down 0 &&
	clear_and_end $id &&
	prestaged_then_ran $id &&
	flux run -N1 --setattr=system.dw="#DW destroy_persistent name=proj" true
'

test_expect_success 'dw_prestage=yes on node-local storage with Lustre is refused with the reason' '
	id=$(flux submit -N1 --setattr=system.dw="#DW jobdw type=xfs capacity=10GiB name=x1
$LUSTRE" --setattr=system.dw_prestage=yes true) &&
	flux job wait-event -t 30 $id clean &&
	flux job eventlog $id >xfs.log &&
	grep "dw_prestage=yes: its node-local storage and its Lustre" xfs.log &&
	test_must_fail grep " alloc" xfs.log
'

test_expect_success 'a bad dw_prestage is the job'"'"'s dws-create exception' '
	id=$(flux submit -N1 --setattr=system.dw="$STAGED" --setattr=system.dw_prestage=maybe true) &&
	flux job wait-event -t 30 -m type=dws-create $id exception &&
	flux job eventlog $id | grep "dw_prestage must be" &&
	flux job wait-event -t 30 $id clean
'

test_expect_success 'without dw_prestage (rabbit.prestage = "never") a job goes the usual way' '
	id=$(flux submit -N1 --setattr=system.dw="$STAGED" true) &&
	flux job wait-event -t 60 $id clean &&
	completed $id &&
	test_must_fail grep dws-prestage $id.events
'

test_expect_success 'rabbit.prestage = "copy-in" pre-stages the jobs with a copy_in' '
	cp conf/instance.toml instance.toml.good &&
	printf "prestage = \"copy-in\"\n" >>conf/instance.toml &&
	flux config reload &&
	id=$(flux submit -N1 --setattr=system.dw="$STAGED" true) &&
	prestaged_then_ran $id &&
	id=$(flux submit -N1 --setattr=system.dw="$LUSTRE" true) &&
	flux job wait-event -t 60 $id clean &&
	completed $id &&
	test_must_fail grep dws-prestage $id.events &&
	cp instance.toml.good conf/instance.toml &&
	flux config reload
'

test_expect_success 'a bad rabbit.prestage is refused by config reload, naming the key' '
	printf "prestage = \"sometimes\"\n" >>conf/instance.toml &&
	test_must_fail flux config reload 2>reload.err &&
	cat reload.err &&
	grep "rabbit.prestage" reload.err &&
	cp instance.toml.good conf/instance.toml &&
	flux config reload
'

test_expect_success 'a service reload between its Workflow create and the answer: one Workflow, it runs' '
	flux-dws fault api --method POST --path "/workflows(\\?|$)" --hold 20 >/dev/null &&
	id=$(flux submit -N1 --setattr=system.dw="$STAGED" --setattr=system.dw_prestage=yes true) &&
	until_true 30 kubectl get workflow $(wfname $id) &&
	flux module remove dws &&
	flux-dws fault api-clear >/dev/null &&
	flux module load "$top_srcdir/src/modules/dws.py" &&
	prestaged_then_ran $id &&
	grep "memo rabbit_workflow=\"$(wfname $id)\"" $id.log &&
	flux dmesg | grep "$(wfname $id): picked up in Proposal" &&
	workflow_gone $id
'

test_expect_success 'nothing left behind' '
	wait_down 0 &&
	kubectl get workflows -o name >workflows.left &&
	test_must_be_empty workflows.left
'

test_expect_success 'stop the instance and the emulator' '
	stop_rabbit_instance &&
	rm -rf "$STATEDIR" &&
	stop_emulator
'

test_done
