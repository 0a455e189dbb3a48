#!/bin/sh
test_description='rabbit jobs under a real broker: faults, cancels, restarts and reloads

Every fault path of the dws service as Flux users and administrators see
it (eventlog events, exceptions and their notes), with the emulator
injecting the DWS failures: cancel in each job state, DWS errors, bad
input at submit and to the plugin services, service restarts and jobtap
plugin reloads with jobs in flight.'

. "$(dirname "$0")"/sharness.sh

skip_all_unless_rabbit_jobs

XFS="#DW jobdw type=xfs capacity=10GiB name=scratch"

# a stalled state moves on once its fault is cleared and the Workflow changes
unstall() {
    flux-dws fault clear &&
    kubectl annotate --overwrite "workflow/$(wfname "$1")" flux-dws-test/kick="$(date +%s%N)"
}

test_expect_success 'start the emulator and a rabbit instance' '
	start_emulator --system kind --latency zero &&
	rabbit_instance_config "$(pwd)" "epilog-timeout = 600.0" &&
	start_rabbit_instance "$(pwd)"
'

test_expect_success 'bad dw attributes are refused at submit, with the reason' '
	test_must_fail flux submit -N1 --setattr=system.dw=5 true 2>bad-dw.err &&
	grep "dw must be a string or a list of strings" bad-dw.err &&
	test_must_fail flux submit -N1 --setattr=system.dw="[\"#DW jobdw type=xfs capacity=1GiB name=a\", 3]" true 2>bad-list.err &&
	grep "dw must be a string or a list of strings" bad-list.err
'

test_expect_success 'a bad dw_failure_tolerance is the job'"'"'s dws-create exception (t3104)' '
	id=$(flux submit -N1 --setattr=system.dw="$XFS" \
		--setattr=system.dw_failure_tolerance=-1 true) &&
	flux job wait-event -t 30 $id clean &&
	flux job eventlog $id | grep "exception type=\"dws-create\".*dw_failure_tolerance must be a positive integer"
'

test_expect_success 'DWS refuses a directive: dws-create exception with its words' '
	id=$(flux submit -N1 --setattr=system.dw="#DW jobdw type=xfs capacity=10GiB" true) &&
	flux job wait-event -t 30 $id clean &&
	flux job eventlog $id >refused.events &&
	grep "exception type=\"dws-create\" severity=0 note=\"DWS workflow interactions failed: .*name" refused.events &&
	test_must_fail grep prolog-start refused.events &&
	test_must_fail kubectl get workflow $(wfname $id)
'

test_expect_success 'cancel in DEPEND (Proposal never ends): the Workflow is removed' '
	flux-dws fault stall --state Proposal &&
	id=$(flux submit -N1 --setattr=system.dw="$XFS" true) &&
	flux job wait-event -t 30 $id memo &&
	flux jobs -no "{state}" $id | grep DEPEND &&
	flux cancel $id &&
	flux job wait-event -t 30 $id clean &&
	workflow_gone $id &&
	flux-dws fault clear
'

test_expect_success 'cancel in the prolog (PreRun never ends): prolog fails, teardown, nothing left' '
	flux-dws fault stall --state PreRun &&
	id=$(flux submit -N1 --setattr=system.dw="$XFS" true) &&
	flux job wait-event -t 30 $id prolog-start &&
	test "$(phase_of $id)" = prerun &&
	flux cancel $id &&
	flux job wait-event -t 30 $id clean &&
	flux job eventlog $id >prolog-cancel.events &&
	grep "prolog-finish description=\"dws-setup\" status=1" prolog-cancel.events &&
	test_must_fail grep "^[0-9.]* start" prolog-cancel.events &&
	grep "epilog-finish description=\"dws-epilog\" status=0" prolog-cancel.events &&
	workflow_gone $id &&
	flux-dws fault clear
'

test_expect_success 'cancel while running: the epilog unmounts and tears down' '
	id=$(submit_held f1) &&
	flux job wait-event -t 30 $id start &&
	flux cancel $id &&
	flux job wait-event -t 30 $id clean &&
	flux job eventlog $id >run-cancel.events &&
	grep "epilog-finish description=\"dws-epilog\" status=0" run-cancel.events &&
	workflow_gone $id
'

test_expect_success 'cancel in the epilog (PostRun held): Teardown still ends it' '
	flux-dws fault stall --state PostRun &&
	id=$(submit_held f2) &&
	flux job wait-event -t 30 $id start &&
	release_job f2 $id &&
	flux job wait-event -t 30 $id epilog-start &&
	test "$(phase_of $id)" = postrun &&
	flux cancel $id &&
	flux job wait-event -t 60 $id clean &&
	flux job eventlog $id >epilog-cancel.events &&
	grep "epilog-finish description=\"dws-epilog\" status=0" epilog-cancel.events &&
	workflow_gone $id &&
	flux-dws fault clear
'

test_expect_success 'a fatal DWS error in Setup: the job fails with DWS'"'"' message' '
	flux-dws fault add --state Setup --severity Fatal --message "out of space" &&
	id=$(flux submit -N1 --setattr=system.dw="$XFS" true) &&
	flux job wait-event -t 30 $id clean &&
	flux job eventlog $id >setup-error.events &&
	grep "exception type=\"exception\" severity=0 note=\".*out of space" setup-error.events &&
	test_must_fail grep "^[0-9.]* start" setup-error.events &&
	workflow_gone $id &&
	flux-dws fault clear
'

test_expect_success 'the service restarted while a job runs: the job ends cleanly' '
	id=$(submit_held f3) &&
	flux job wait-event -t 30 $id start &&
	flux module remove dws &&
	flux module load "$top_srcdir/src/modules/dws.py" &&
	release_job f3 $id &&
	ends_cleanly $id svc-restart.events
'

test_expect_success 'the service away when a job finishes: its epilog waits for the service' '
	id=$(submit_held f6) &&
	flux job wait-event -t 30 $id start &&
	flux module remove dws &&
	release_job f6 $id &&
	flux job wait-event -t 30 $id epilog-start &&
	dmesg_has "job $(flux job id --to=dec $id): no dws service was loaded to take its dws.post_run" &&
	flux module load "$top_srcdir/src/modules/dws.py" &&
	ends_cleanly $id nosvc-epilog.events
'

test_expect_success 'the service away when a job reaches its prolog: the prolog waits for it' '
	id=$(flux submit -N1 --urgency=0 --setattr=system.dw="$XFS" printenv DW_JOB_scratch) &&
	flux job wait-event -t 30 $id depend &&
	flux job wait-event -t 30 $id priority &&
	flux module remove dws &&
	flux job urgency $id 16 &&
	flux job wait-event -t 30 $id prolog-start &&
	dmesg_has "job $(flux job id --to=dec $id): no dws service was loaded to take its dws.setup" &&
	flux module load "$top_srcdir/src/modules/dws.py" &&
	flux job wait-event -t 60 $id clean &&
	flux job eventlog $id >nosvc-prolog.events &&
	grep "prolog-finish description=\"dws-setup\" status=0" nosvc-prolog.events &&
	test_must_fail grep exception nosvc-prolog.events &&
	flux job attach $id | grep /mnt/nnf &&
	workflow_gone $id
'

test_expect_success 'the service down when a job is submitted: dws-create says so' '
	flux module remove dws &&
	id=$(flux submit -N1 --setattr=system.dw="$XFS" true) &&
	flux job wait-event -t 30 $id clean &&
	flux job eventlog $id >nosvc.events &&
	grep "dws.create RPC could not be sent" nosvc.events &&
	flux module load "$top_srcdir/src/modules/dws.py"
'

test_expect_success 'the jobtap plugin reloaded while a job runs: the job ends cleanly' '
	id=$(submit_held f4) &&
	flux job wait-event -t 30 $id start &&
	flux jobtap remove dws-jobtap.so &&
	flux jobtap load "$DWS_JOBTAP" epilog-timeout=600 &&
	release_job f4 $id &&
	ends_cleanly $id reload-run.events
'

test_expect_success 'the jobtap plugin reloaded in the prolog: the prolog still ends' '
	flux-dws fault stall --state PreRun &&
	id=$(flux submit -N1 --setattr=system.dw="$XFS" printenv DW_JOB_scratch) &&
	flux job wait-event -t 30 $id prolog-start &&
	flux jobtap remove dws-jobtap.so &&
	flux jobtap load "$DWS_JOBTAP" epilog-timeout=600 &&
	unstall $id &&
	flux job wait-event -t 60 $id clean &&
	flux job eventlog $id >reload-prolog.events &&
	grep "prolog-finish description=\"dws-setup\" status=0" reload-prolog.events &&
	flux job attach $id | grep /mnt/nnf &&
	workflow_gone $id
'

test_expect_success 'the jobtap plugin reloaded in the epilog: the epilog still ends' '
	flux-dws fault stall --state PostRun &&
	id=$(submit_held f5) &&
	flux job wait-event -t 30 $id start &&
	release_job f5 $id &&
	flux job wait-event -t 30 $id epilog-start &&
	flux jobtap remove dws-jobtap.so &&
	flux jobtap load "$DWS_JOBTAP" epilog-timeout=600 &&
	unstall $id &&
	flux job wait-event -t 60 $id clean &&
	flux job eventlog $id >reload-epilog.events &&
	grep "epilog-finish description=\"dws-epilog\" status=0" reload-epilog.events &&
	workflow_gone $id
'

test_expect_success 'the jobtap plugin reloaded in DEPEND: the job still gets its resources' '
	flux-dws fault stall --state Proposal &&
	id=$(flux submit -N1 --setattr=system.dw="$XFS" true) &&
	flux job wait-event -t 30 $id memo &&
	flux jobtap remove dws-jobtap.so &&
	flux jobtap load "$DWS_JOBTAP" epilog-timeout=600 &&
	unstall $id &&
	flux job wait-event -t 60 $id clean &&
	flux job eventlog $id >reload-depend.events &&
	grep "jobspec-update" reload-depend.events &&
	grep "epilog-finish description=\"dws-epilog\" status=0" reload-depend.events &&
	workflow_gone $id
'

test_expect_success 'plugin services: malformed requests get an error naming the problem' '
	test_must_fail dws_rpc job-manager.dws.prolog-remove "[]" >m1.out &&
	grep "received malformed dws.prolog-remove RPC: the payload is not an object" m1.out &&
	test_must_fail dws_rpc job-manager.dws.epilog-remove "{\"id\": \"x\"}" >m2.out &&
	grep "received malformed dws.epilog-remove RPC: .id. must be a job id" m2.out &&
	test_must_fail dws_rpc job-manager.dws.epilog-remove "{\"id\": 12345}" >m3.out &&
	grep "dws.epilog-remove: job 12345 is not active" m3.out &&
	id=$(flux submit -N1 sleep inf) &&
	flux job wait-event -t 30 $id start &&
	test_must_fail dws_rpc job-manager.dws.epilog-remove \
		"{\"id\": $(flux job id --to=dec $id)}" >m5.out &&
	flux cancel $id &&
	grep "dws.epilog-remove: job $(flux job id --to=dec $id) has no #DW directives" m5.out &&
	flux dmesg | grep "received malformed dws.prolog-remove RPC (the payload is not an object)"
'

test_expect_success 'plugin services: a malformed request for a live job fails the job, naming it' '
	flux-dws fault stall --state PreRun &&
	id=$(flux submit -N1 --setattr=system.dw="$XFS" true) &&
	flux job wait-event -t 30 $id prolog-start &&
	test_must_fail dws_rpc job-manager.dws.prolog-remove \
		"{\"id\": $(flux job id --to=dec $id), \"variables\": 7}" >m4.out &&
	grep "received malformed dws.prolog-remove RPC" m4.out &&
	flux job wait-event -t 30 $id clean &&
	flux job eventlog $id | grep "exception type=\"dws\" severity=0" &&
	workflow_gone $id &&
	flux-dws fault clear
'

test_expect_success 'plugin services: a guest is refused' '
	FLUX_HANDLE_ROLEMASK=0x2 FLUX_HANDLE_USERID=9999 \
		test_must_fail dws_rpc job-manager.dws.epilog-remove "{\"id\": 1}" >guest.out &&
	grep "error 1:" guest.out
'

test_expect_success 'an administrator ends a stuck epilog: dws-epilog-timeout aborts the workflow' '
	flux-dws fault stall --state PostRun &&
	id=$(submit_held f6) &&
	flux job wait-event -t 30 $id start &&
	release_job f6 $id &&
	flux job wait-event -t 30 $id epilog-start &&
	flux job raise --type=dws-epilog-timeout $id -- "stuck unmount" &&
	flux job wait-event -t 60 $id clean &&
	flux job eventlog $id >abort.events &&
	grep "epilog-finish description=\"dws-epilog\" status=1" abort.events &&
	workflow_gone $id &&
	flux-dws fault clear
'

test_expect_success 'stop the instance and the emulator' '
	stop_rabbit_instance &&
	stop_emulator
'

test_done
