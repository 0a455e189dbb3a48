#!/bin/sh
test_description='dws-jobtap.so with a dws service that knows only create, setup and post_run

As flux-coral2'"'"'s own plugin tests run it: sched-simple (no Fluxion), no
flux-dws service, and a stand-in dws service run as a job
(t/scripts/dws_standin.py) that serves dws.create, dws.setup and
dws.post_run and nothing else (dws.ready, dws.teardown and dws.abort get
ENOSYS).  Rabbit jobs go through as they did before the scheduler hold
existed: the hold is for the flux-dws service with Fluxion, and nothing
here is held (flux-jobtap-dws(1), "Jobs queued across a restart").  Each
path of the reference'"'"'s contract: create success and failure, a
resource-update error, setup and post_run failures, exceptions in the
prolog and the epilog, constraints added and combined with
--requires=^property, dw_failure_tolerance as given, the epilog timeout,
a plugin reload mid-job, and epilog-start only after finish.  Beside
them, flux-dws'"'"' own pre-staging sent by the test as a flux-dws service
would: dws-prestage removed through the dependency method, refused when
added through it, and an older flux-dws service'"'"'s prestage-remove.'

. "$(dirname "$0")"/sharness.sh

skip_all_unless_flux
skip_all_unless_plugins

STANDIN=$SHARNESS_TEST_SRCDIR/scripts/dws_standin.py
LOG=$(pwd)/standin.log

# submit_dw WORDS [ARGS...]: a one-node rabbit job whose #DW text holds
# the stand-in'"'"'s WORDS (what it does with the job); ARGS: more submit
# options, then the command (none: true)
submit_dw() {
	words=$1 && shift &&
	if test $# = 0; then set -- true; fi &&
	flux submit -N1 --setattr=system.dw="#DW jobdw standin $words" "$@"
}
# ended_clean ID: the job ended with status 0 and no exception
ended_clean() {
	flux job wait-event -t 30 "$1" clean &&
	flux job eventlog "$1" >"$1.events" &&
	grep "finish status=0" "$1.events" &&
	test_must_fail grep exception "$1.events" || { cat "$1.events"; return 1; }
}
# has_exception ID TYPE NOTE: the job got exception TYPE with NOTE, whole
has_exception() {
	flux job wait-event -t 30 -m "type=$2" "$1" exception &&
	flux job eventlog -f json "$1" |
		jq -e --arg t "$2" --arg n "$3" \
		'select(.name == "exception" and .context.type == $t) | .context.note == $n' |
		grep -q true || { flux job eventlog "$1"; return 1; }
}
# requests TOPIC ID: the payloads of the stand-in'"'"'s TOPIC requests for job ID
requests() {
	grep -v "^registered" "$LOG" |
		jq -c --arg t "$1" --argjson id "$(flux job id --to=dec "$2")" \
		'select(.topic == $t and .payload.jobid == $id) | .payload'
}
# line_of ID EVENT-REGEX: the eventlog line number of the first match
line_of() {
	flux job eventlog "$1" | grep -n "$2" | head -1 | cut -d: -f1
}
# epilog_after_finish ID: finish is posted, and before it no epilog-start
epilog_after_finish() {
	f=$(line_of "$1" "^[0-9.]* finish") &&
	e=$(line_of "$1" "epilog-start description=\"dws-epilog\"") &&
	test -n "$f" && test -n "$e" && test "$f" -lt "$e" ||
		{ flux job eventlog "$1"; return 1; }
}
# prolog_failed ID: the job ended with its dws-setup prolog failed, never
# started, and post_run told the service so
prolog_failed() {
	flux job wait-event -t 30 "$1" clean &&
	flux job eventlog "$1" >"$1.events" &&
	grep "prolog-finish description=\"dws-setup\" status=1" "$1.events" &&
	test_must_fail grep " start" "$1.events" &&
	requests dws.post_run "$1" >post_run.json &&
	jq -e ".run_started == false" post_run.json
}
# reload_plugin [KEY=VALUE...]: dws-jobtap.so removed and loaded again
reload_plugin() {
	flux jobtap remove dws-jobtap.so &&
	flux jobtap load "$DWS_JOBTAP" "$@"
}
# tell TOPIC PAYLOAD: what the stand-in would send the job manager
tell() {
	flux python -c 'import flux, sys; flux.Flux().rpc(sys.argv[1], sys.argv[2]).get()' "$@"
}

test_expect_success 'start a 2-broker instance with sched-simple and the jobtap plugin' '
	mkdir -p conf &&
	cat >conf/instance.toml <<-EOT &&
	[modules]
	alternatives.sched = "sched-simple"
	alternatives.feasibility = "sched-simple"
	[job-manager]
	plugins = [ { load = "$DWS_JOBTAP", conf = {} } ]
	EOT
	RABBIT_SIZE=2 RABBIT_TEST_HOSTS="compute-[01-02]" RABBIT_WAIT=none \
		start_rabbit_instance "$(pwd)" &&
	flux module list >modules &&
	grep "^sched-simple " modules &&
	test_must_fail grep "^sched-fluxion" modules &&
	test_must_fail grep "^dws " modules
'
test_expect_success 'run the stand-in dws service as a job' '
	STANDIN_JOB=$(flux submit -n1 flux python "$STANDIN" "$LOG") &&
	until_true 30 grep -q "^registered" "$LOG"
'
test_expect_success 'the stand-in has no dws.ready: the service'"'"'s own ENOSYS' '
	test_must_fail dws_rpc dws.ready "{}" >ready.out &&
	grep "^error 38: " ready.out &&
	test_must_fail grep "No service matching" ready.out
'
test_expect_success 'a rabbit job goes through: create, setup, post_run, no hold' '
	id=$(submit_dw "" sh -c "printenv DW_JOB_standin") &&
	ended_clean $id &&
	flux job attach $id >out &&
	test "$(cat out)" = /mnt/standin &&
	flux job eventlog $id | cut -d" " -f2- >names &&
	grep "^dependency-add description=\"dws-create\"" names &&
	grep "^dependency-remove description=\"dws-create\"" names &&
	grep "^prolog-finish description=\"dws-setup\" status=0" names &&
	grep "^epilog-finish description=\"dws-epilog\" status=0" names &&
	requests dws.create $id >create.json &&
	jq -e ".failure_tolerance == 0 and .userid == $(id -u)" create.json &&
	requests dws.post_run $id >post_run.json &&
	jq -e ".run_started == true" post_run.json &&
	epilog_after_finish $id
'
test_expect_success 'create failure: the dws-create exception with the service'"'"'s words' '
	id=$(submit_dw create-fail) &&
	has_exception $id dws-create \
		"DWS workflow interactions failed: stand-in: create refused" &&
	flux job wait-event -t 30 $id clean &&
	test_must_fail flux job wait-event -t 0.1 $id alloc
'
test_expect_success 'a resource-update error: the dws exception' '
	id=$(submit_dw update-error) &&
	has_exception $id dws "DWS workflow interactions failed: stand-in: the workflow failed" &&
	flux job wait-event -t 30 $id clean
'
test_expect_success 'setup failure: the dws-setup exception, the prolog fails, no start' '
	id=$(submit_dw setup-fail) &&
	has_exception $id dws-setup "DWS workflow interactions failed: stand-in: setup refused" &&
	prolog_failed $id
'
test_expect_success 'post_run failure: the dws-epilog exception after the run, epilog status 1' '
	id=$(submit_dw postrun-fail) &&
	has_exception $id dws-epilog \
		"DWS workflow interactions failed: stand-in: post_run refused" &&
	flux job wait-event -t 30 $id clean &&
	flux job eventlog $id >postrun-fail.events &&
	grep "finish status=0" postrun-fail.events &&
	grep "epilog-finish description=\"dws-epilog\" status=1" postrun-fail.events
'
test_expect_success 'an exception in the prolog finishes it failed; post_run says not started' '
	id=$(submit_dw setup-hold) &&
	flux job wait-event -t 30 $id prolog-start &&
	until_true 30 test -n "$(requests dws.setup $id)" &&
	flux job raise --type=test $id "raised in the prolog" &&
	prolog_failed $id
'
test_expect_success 'an exception in the epilog leaves it to the service (dws.teardown)' '
	id=$(submit_dw epilog-hold) &&
	flux job wait-event -t 30 $id epilog-start &&
	until_true 30 test -n "$(requests dws.post_run $id)" &&
	flux job raise --type=test $id "raised in the epilog" &&
	flux job wait-event -t 30 $id exception &&
	test "$(flux jobs -no {state} $id)" = CLEANUP &&
	tell job-manager.dws.epilog-remove "{\"id\": $(flux job id --to=dec $id)}" &&
	flux job wait-event -t 30 $id clean &&
	flux job eventlog $id >epilog-exc.events &&
	grep "epilog-finish description=\"dws-epilog\" status=0" epilog-exc.events &&
	epilog_after_finish $id
'
test_expect_success 'constraints: the exclude added to a job without any' '
	id=$(submit_dw exclude) &&
	ended_clean $id &&
	flux job eventlog -f json $id |
		jq -c "select(.name == \"jobspec-update\")
		       | .context[\"attributes.system.constraints\"]" >cons.json &&
	jq -e ". == {\"not\": [{\"properties\": [\"badrabbit\"]}]}" cons.json
'
test_expect_success 'constraints: --requires=^property and the exclude, both kept' '
	id=$(submit_dw exclude --requires=^login true) &&
	ended_clean $id &&
	flux job eventlog -f json $id |
		jq -c "select(.name == \"jobspec-update\")
		       | .context[\"attributes.system.constraints\"]" >cons.json &&
	jq -e ".and | length == 2" cons.json &&
	jq -e ".and[0] == {\"properties\": [\"^login\"]}" cons.json &&
	jq -e ".and[1] == {\"not\": [{\"properties\": [\"badrabbit\"]}]}" cons.json
'
test_expect_success 'dw_failure_tolerance: sent as given, a bad one too (the service judges)' '
	id=$(submit_dw "" --setattr=system.dw_failure_tolerance=2 true) &&
	ended_clean $id &&
	requests dws.create $id >create.json &&
	jq -e ".failure_tolerance == 2" create.json &&
	id=$(submit_dw "" --setattr=system.dw_failure_tolerance=-1 true) &&
	ended_clean $id &&
	requests dws.create $id >create.json &&
	jq -e ".failure_tolerance == -1" create.json
'
test_expect_success 'the epilog timeout: dws-epilog-timeout, the epilog ends failed' '
	reload_plugin epilog-timeout=0.5 &&
	id=$(submit_dw epilog-hold) &&
	has_exception $id dws-epilog-timeout "DWS epilog timed out" &&
	flux job wait-event -t 30 $id clean &&
	flux job eventlog $id >epilog-timeout.events &&
	grep "epilog-finish description=\"dws-epilog\" status=1" epilog-timeout.events &&
	reload_plugin
'
test_expect_success 'a plugin reload while the prolog waits: the job goes on and runs' '
	id=$(submit_dw setup-hold) &&
	flux job wait-event -t 30 $id prolog-start &&
	until_true 30 test -n "$(requests dws.setup $id)" &&
	reload_plugin &&
	tell job-manager.dws.prolog-remove \
		"{\"id\": $(flux job id --to=dec $id), \"variables\": {\"DW_JOB_x\": \"/x\"}}" &&
	ended_clean $id &&
	epilog_after_finish $id
'
# prestaged WORDS: a job held by dws-prestage, as a flux-dws service
# pre-stages one: its resource-update (sent here) carries "prestage": true
prestaged() {
	pid=$(submit_dw "update-hold $1") &&
	until_true 30 test -n "$(requests dws.create $pid)" &&
	tell job-manager.dws.resource-update "$(requests dws.create $pid |
		jq -c "{id: .jobid, resources: .resources, exclude: null, prestage: true}")" &&
	flux job wait-event -t 30 $pid dependency-remove >/dev/null &&
	test "$(flux jobs -no {state} $pid)" = DEPEND &&
	flux job eventlog $pid >$pid.deps &&
	grep -q "dependency-add description=\"dws-prestage\"" $pid.deps &&
	echo $pid
}
test_expect_success 'pre-staged: the dependency method removes dws-prestage' '
	id=$(prestaged "") &&
	dec=$(flux job id --to=dec $id) &&
	tell job-manager.dws.dependency \
		"{\"id\": $dec, \"name\": \"dws-prestage\", \"add\": false}" &&
	ended_clean $id &&
	flux job eventlog $id | grep "dependency-remove description=\"dws-prestage\""
'
test_expect_success 'pre-staged: dws-prestage added through the method is refused' '
	id=$(prestaged "") &&
	dec=$(flux job id --to=dec $id) &&
	test_must_fail tell job-manager.dws.dependency \
		"{\"id\": $dec, \"name\": \"dws-prestage\", \"add\": true}" 2>add.err &&
	grep "dws-prestage is added by the plugin with the resource-update" add.err &&
	test "$(flux jobs -no {state} $id)" = DEPEND &&
	flux cancel $id &&
	flux job wait-event -t 30 $id clean
'
test_expect_success 'pre-staged: an older flux-dws service'"'"'s prestage-remove still works' '
	id=$(prestaged "") &&
	tell job-manager.dws.prestage-remove "{\"id\": $(flux job id --to=dec $id)}" &&
	ended_clean $id &&
	flux job eventlog $id | grep "dependency-remove description=\"dws-prestage\""
'
test_expect_success 'cancel while running: epilog-start after finish' '
	id=$(submit_dw "" sleep inf) &&
	flux job wait-event -t 30 $id start &&
	flux cancel $id &&
	flux job wait-event -t 30 $id clean &&
	epilog_after_finish $id
'
test_expect_success 'no rabbit job was held for the scheduler' '
	flux dmesg >dmesg.out &&
	test_must_fail grep "holding rabbit jobs in PRIORITY" dmesg.out &&
	test_must_fail grep "given to the scheduler" dmesg.out
'
test_expect_success 'stop the stand-in and the instance' '
	flux cancel $STANDIN_JOB &&
	flux job wait-event -t 30 $STANDIN_JOB clean &&
	stop_rabbit_instance
'
test_done
