#!/bin/sh
test_description='compute nodes back to Flux once their file systems are unmounted (issue 38)

A 4-broker instance (compute-[01-04]; rabbit kind-worker2 serves 01-03,
kind-worker3 serves 04) with Fluxion and release_computes = "after-unmount".
A rabbit job whose DataOut is held by the emulator ends (clean) while its
Workflow is still in DataOut: the next job gets its computes, its ssd
vertices stay down in Fluxion until its Teardown, whatever happens to the
service, Fluxion or its rabbit meanwhile, and flux dws wait says how its
copy_out went.  Computes that cannot unmount are drained one by one.'

. "$(dirname "$0")"/sharness.sh

skip_all_unless_rabbit_jobs

XFS4="#DW jobdw type=xfs capacity=10GiB name=scratch"
# a rabbit job with a copy_out: its DataOut has a data movement to wait for
STAGED="$XFS4
#DW copy_out source=\$DW_JOB_scratch/ destination=/lus/global/out"

# ssds_of ID: the ssd vertex paths in the job's R, one per line, sorted
ssds_of() {
	flux job info "$1" R |
	jq -r ".scheduling.graph.nodes[] | select(.metadata.type == \"ssd\")
		| .metadata.paths.containment" | sort
}


test_expect_success 'start the emulator and an instance releasing computes after unmount' '
	start_emulator --system kind --latency zero &&
	RABBIT_EXTRA_CONF="release_computes = \"after-unmount\"
postrun_timeout = 5" &&
	rabbit_instance_config "$(pwd)" &&
	start_rabbit_instance "$(pwd)" &&
	wait_down 0
'

test_expect_success 'a bad release_computes is refused by config reload, naming the key' '
	cp conf/instance.toml instance.toml.good &&
	sed -i "s/^release_computes = .*/release_computes = \"sometimes\"/" conf/instance.toml &&
	test_must_fail flux config reload 2>reload.err &&
	cat reload.err &&
	grep "release_computes" reload.err &&
	cp instance.toml.good conf/instance.toml &&
	flux config reload
'

test_expect_success 'a bad dw_release_computes is the job'"'"'s dws-create exception' '
	id=$(flux submit -N1 --setattr=system.dw="$XFS4" \
		--setattr=system.dw_release_computes=soon true) &&
	flux job wait-event -t 30 -m type=dws-create $id exception &&
	flux job eventlog $id | grep "dw_release_computes must be" &&
	flux job wait-event -t 30 $id clean
'

test_expect_success 'DataOut held: the job ends and frees its computes, its ssds stay down' '
	flux-dws fault stall --state DataOut &&
	id=$(flux submit -N4 --setattr=system.dw="$STAGED" true) &&
	echo $id >held.id &&
	flux submit --dependency=afterok:$id hostname >early_dep.id &&
	flux job wait-event -t 60 $id clean &&
	flux job eventlog $id >held.events &&
	grep "epilog-finish description=\"dws-epilog\" status=0" held.events &&
	wait_phase $id dataout &&
	ssds_of $id >held.ssds &&
	test -s held.ssds &&
	down_ssds >down.now &&
	test_cmp held.ssds down.now
'

test_expect_success 'the next job runs on the same computes while DataOut goes on' '
	id=$(flux submit -N4 hostname) &&
	flux job wait-event -t 60 $id clean &&
	flux job status $id &&
	test "$(flux jobs -no {nodelist} $id)" = "$(flux jobs -no {nodelist} $(cat held.id))" &&
	test "$(phase_of $(cat held.id))" = dataout
'

test_expect_success 'a rabbit job meanwhile gets none of the held ssd vertices' '
	id=$(flux submit -N4 --setattr=system.dw="$XFS4" true) &&
	flux job wait-event -t 60 $id clean &&
	flux job status $id &&
	ssds_of $id >other.ssds &&
	test -s other.ssds &&
	comm -12 held.ssds other.ssds >shared &&
	test_must_be_empty shared
'

test_expect_success 'flux dws status shows the job released with its held ssds' '
	flux python -m flux_dws status --json >status.json &&
	jq -e --argjson id "$(flux job id --to=dec $(cat held.id))" \
		".jobs[] | select(.id == \$id) | .released and .held_ssds == $(wc -l <held.ssds)" \
		status.json
'

test_expect_success 'the dws service reloaded during DataOut: the hold stays' '
	flux module remove dws &&
	flux module load "$top_srcdir/src/modules/dws.py" &&
	wait_phase $(cat held.id) dataout &&
	id=$(flux job id --to=dec $(cat held.id)) &&
	wait_rabbits "[.holds[] | select(.job == $id and .applied)] | length == 1" &&
	down_ssds >down.now &&
	test_cmp held.ssds down.now
'

test_expect_success 'Fluxion reloaded during DataOut: the hold is applied again' '
	reload_fluxion &&
	wait_down $(wc -l <held.ssds) 90 &&
	down_ssds >down.now &&
	test_cmp held.ssds down.now
'

test_expect_success 'its rabbit down and up during DataOut: the hold stays' '
	flux-dws fault health kind-worker2 --status Offline &&
	wait_rabbits "[.rabbits[] | select(.name == \"kind-worker2\") | .fluxion] | all(. == \"down\")" &&
	flux-dws fault health kind-worker2 --status Ready &&
	wait_rabbits "[.rabbits[] | select(.name == \"kind-worker2\") | .fluxion] | all(. == \"up\")" &&
	wait_down $(wc -l <held.ssds) &&
	down_ssds >down.now &&
	test_cmp held.ssds down.now
'

test_expect_success 'its afterok dependents wait for its DataOut, submitted before or during it' '
	flux submit --dependency=afterany:$(cat held.id) hostname >late_dep.id &&
	for dep in $(cat early_dep.id late_dep.id); do
		flux job wait-event -t 30 $dep dependency-add &&
		flux job eventlog $dep >dep.events &&
		grep "dependency-add description=\"dws-dataout:$(flux job id --to=f58plain $(cat held.id))\"" \
			dep.events &&
		test "$(flux jobs -no {state} $dep)" = DEPEND || return 1
	done
'

test_expect_success 'at the end of its DataOut the held ssds are down still, and held' '
	test "$(phase_of $(cat held.id))" = dataout &&
	id=$(flux job id --to=dec $(cat held.id)) &&
	wait_rabbits "[.holds[] | select(.job == $id and .applied)] | length == 1" &&
	down_ssds >down.end &&
	test_cmp held.ssds down.end
'

test_expect_success 'flux dws wait waits for DataOut and Teardown, then says so' '
	flux python -m flux_dws wait -t 60 $(cat held.id) >wait.out 2>&1 &
	waiter=$! &&
	flux-dws fault clear &&
	kubectl annotate --overwrite "workflow/$(wfname $(cat held.id))" \
		flux-dws-test/kick="$(date +%s%N)" &&
	wait $waiter &&
	cat wait.out &&
	grep "data out complete; storage torn down" wait.out &&
	workflow_gone $(cat held.id) &&
	wait_down 0 &&
	flux job info $(cat held.id) data.dws.dataout | jq -e ".state == \"complete\""
'

test_expect_success 'DataOut done: its dependents run' '
	for dep in $(cat early_dep.id late_dep.id); do
		flux job wait-event -t 60 $dep clean &&
		flux job status $dep || return 1
	done
'

test_expect_success 'a failed copy_out: flux dws wait fails with the error, the log names the owner' '
	flux-dws fault add --kind datamovement --state DataOut &&
	id=$(flux submit -N1 --setattr=system.dw="$STAGED" true) &&
	dep=$(flux submit --dependency=afterok:$id hostname) &&
	flux job wait-event -t 60 $id clean &&
	flux job status $id &&
	test_must_fail flux python -m flux_dws wait -t 60 $id 2>failed.err &&
	cat failed.err &&
	grep "copy_out failed" failed.err &&
	flux dmesg | grep "fluxjob-$(flux job id --to=dec $id) (owner uid" &&
	flux job wait-event -t 60 -m type=dependency $dep exception &&
	flux job eventlog $dep | grep "copy_out (DWS DataOut) failed" &&
	flux-dws fault clear &&
	workflow_gone $id
'

test_expect_success 'dw_release_computes=after-teardown keeps one job'"'"'s computes' '
	flux-dws fault delay --state DataOut --seconds 2 &&
	id=$(flux submit -N1 --setattr=system.dw="$STAGED" \
		--setattr=system.dw_release_computes=after-teardown true) &&
	flux job wait-event -t 60 $id clean &&
	flux job info $id data.dws.teardown | jq -e ".state == \"complete\"" &&
	flux python -m flux_dws wait -t 30 $id &&
	flux-dws fault clear
'

test_expect_success 'a compute that cannot unmount is drained alone, naming its rabbit and the job' '
	id=$(submit_held stuck -N4 --setattr=system.dw="$XFS4") &&
	flux job wait-event -t 60 $id start &&
	flux-dws fault stall --kind clientmount --compute compute-02 &&
	release_job stuck &&
	flux job wait-event -t 60 -m type=rabbit-timeout $id exception &&
	flux job wait-event -t 60 $id clean &&
	flux resource drain -no "{nodelist} {reason}" >drain.out &&
	cat drain.out &&
	test $(wc -l <drain.out) -eq 1 &&
	grep "^compute-02 failed to unmount rabbit kind-worker2 (job $(flux job id --to=f58plain $id))$" drain.out &&
	flux-dws fault clear &&
	workflow_gone $id &&
	flux resource undrain compute-02
'

test_expect_success 'flux dws wait: a bad job id, no such job, a job without rabbits: one line, exit 1' '
	test_expect_code 1 flux python -m flux_dws wait not-a-job 2>w1.err &&
	grep "^flux-dws wait: malformed job id .not-a-job.$" w1.err &&
	test_expect_code 1 flux python -m flux_dws wait 12345 2>w2.err &&
	grep "^flux-dws wait: job $(flux job id --to=f58 12345): no such job$" w2.err &&
	plain=$(flux submit -N1 true) &&
	flux job wait-event -t 30 $plain clean &&
	test_expect_code 1 flux python -m flux_dws wait $plain 2>w3.err &&
	grep "has no rabbit storage (no #DW directives)$" w3.err
'

test_expect_success 'flux dws wait without a service says so and waits, bounded by -t' '
	flux module remove dws &&
	id=$(flux submit -N1 --setattr=system.dw="$XFS4" true) &&
	flux job wait-event -t 30 $id clean &&
	test_expect_code 2 flux python -m flux_dws wait -t 3 $id 2>w4.err &&
	cat w4.err &&
	test "$(grep -c "the dws service is not loaded; waiting for it" w4.err)" = 1 &&
	grep "still not torn down after 3 s" w4.err &&
	flux module load "$top_srcdir/src/modules/dws.py" &&
	test_expect_code 1 flux python -m flux_dws wait -t 30 $id 2>w5.err &&
	grep "no Teardown record: the service never finished this job" w5.err
'

test_expect_success 'dataout requests: a malformed one is refused naming the problem, a guest is refused' '
	test_must_fail dws_rpc job-manager.dws.dataout-begin "[]" >d1.out &&
	grep "^error 71: dws: a dataout request is a JSON object$" d1.out &&
	test_must_fail dws_rpc job-manager.dws.dataout-begin "{\"id\": \"x\"}" >d2.out &&
	grep "^error 71: id must be a job id (an integer >= 0)$" d2.out &&
	test_must_fail dws_rpc job-manager.dws.dataout-end "{\"id\": 5}" >d3.out &&
	grep "^error 71: ok must be true or false$" d3.out &&
	dws_rpc job-manager.dws.dataout-end "{\"id\": 5, \"ok\": true}" >d4.out &&
	test "$(cat d4.out)" = "{}" &&
	FLUX_HANDLE_ROLEMASK=0x2 FLUX_HANDLE_USERID=$(($(id -u) + 1)) \
		test_must_fail dws_rpc job-manager.dws.dataout-end "{\"id\": 5, \"ok\": true}" >d5.out &&
	cat d5.out &&
	grep "^error 1: " d5.out
'

test_expect_success 'nothing left behind' '
	wait_down 0 &&
	test "$(kubectl get workflows -o name | wc -l)" -eq 0
'

test_expect_success 'stop the instance and the emulator' '
	stop_rabbit_instance &&
	stop_emulator
'

test_done
