#!/bin/sh
test_description='drop-in for flux-coral2: the jobtap plugin'"'"'s observable contract

Under a real 4-broker instance with Fluxion and the dws service against
the emulator (issue 22):

- a running job'"'"'s dws-epilog (and so dws.post_run and the unmount) starts
  only after its finish event, however it ends: cancel, a raised
  exception, a time limit, a node failure, and a plugin reload in between;
- a bad dw_failure_tolerance is accepted at submission and goes through
  the service in the reference'"'"'s order: the dws-create dependency,
  dws.create, the service'"'"'s refusal as the dws-create exception with the
  reference'"'"'s words, the dws-epilog (dws.post_run, answered), no Workflow;
- the plugin logs "dws: epilog timeout = %.3fs" (the value as configured)
  at every load, and "dws: failed to unpack config" when loaded without
  configuration.

The instance gives job-exec a long kill-timeout, so a task that ignores
SIGTERM outlives its cancel until the test lets it go: the window in which
an early epilog would unmount under running tasks stays open for as long
as the test needs, with no sleeps.'

. "$(dirname "$0")"/sharness.sh

skip_all_unless_rabbit_jobs

XFS="#DW jobdw type=xfs capacity=10GiB name=scratch"

desired_state() {
    kubectl get "workflow/$(wfname "$1")" -o jsonpath="{.spec.desiredState}"
}
# submit_stubborn [ARGS]: a rabbit job whose task ignores SIGTERM (and SIGALRM,
# job-exec's first signal at a time limit) and waits
# until release_job (job-exec's kill-timeout is long: see the config).
# It returns once the task runs with its trap set (it says so on a fifo).
submit_stubborn() {
    rm -f go ready && mkfifo go ready &&
    flux submit -N1 --setattr=system.dw="$XFS" "$@" \
        sh -c "trap \"\" TERM ALRM; echo up >ready; read x <go" &&
    timeout 30 cat ready >/dev/null
}
release_job() {
    timeout 30 sh -c "echo go >go"
}
# line_of ID EVENT-REGEX: the eventlog line number of the first match
line_of() {
    flux job eventlog "$1" | grep -n "$2" | head -1 | cut -d: -f1
}
# finish_before_epilog ID: finish is posted, and before epilog-start dws-epilog
finish_before_epilog() {
    flux job eventlog "$1" >"$1.events" &&
    f=$(line_of "$1" "^[0-9.]* finish") &&
    e=$(line_of "$1" "epilog-start description=\"dws-epilog\"") &&
    test -n "$f" && test -n "$e" &&
    test "$f" -lt "$e" || { cat "$1.events"; return 1; }
}
# snapshot ID: the eventlog and the Workflow's desiredState now (while the
# task still runs), for still_prerun after the task is let go
snapshot() {
    flux job eventlog "$1" >"$1.now" &&
    desired_state "$1" >"$1.state"
}
# while_held STEPS: eval STEPS (what a test does while the stubborn task
# lives), then let the task go whatever they did, so that a failing step
# leaves no task behind; the status is STEPS' (release_job's if it failed)
while_held() {
    eval "$1"
    held_rc=$?
    release_job || return 1
    return $held_rc
}
# still_prerun ID: at the snapshot, no dws.post_run had moved the Workflow
# on and no dws-epilog had started
still_prerun() {
    test "$(cat "$1.state")" = PreRun &&
    test_must_fail grep "epilog-start description=\"dws-epilog\"" "$1.now"
}

test_expect_success 'start the emulator and a rabbit instance (long kill-timeout)' '
	start_emulator --system kind --latency zero &&
	rabbit_instance_config "$(pwd)" "epilog-timeout = 600.0" &&
	cat >conf/exec.toml <<-EOT &&
	[exec]
	kill-timeout = "10m"
	EOT
	start_rabbit_instance "$(pwd)"
'

# --- 1. the epilog waits for finish ---------------------------------------

test_expect_success 'cancel while running: no unmount while the task lives; finish before epilog-start' '
	id=$(submit_stubborn) &&
	while_held "
		flux job wait-event -t 30 $id start &&
		flux cancel $id &&
		flux job wait-event -t 30 -m type=cancel $id exception &&
		snapshot $id
	" &&
	flux job wait-event -t 60 $id clean &&
	still_prerun $id &&
	finish_before_epilog $id &&
	grep "exception type=\"cancel\" severity=0" $id.events &&
	grep "epilog-finish description=\"dws-epilog\" status=0" $id.events &&
	workflow_gone $id
'

test_expect_success 'a raised exception while running: finish before epilog-start' '
	id=$(submit_stubborn) &&
	while_held "
		flux job wait-event -t 30 $id start &&
		flux job raise --type=test-failure $id -- \"something broke\" &&
		flux job wait-event -t 30 -m type=test-failure $id exception &&
		snapshot $id
	" &&
	flux job wait-event -t 60 $id clean &&
	still_prerun $id &&
	finish_before_epilog $id &&
	grep "exception type=\"test-failure\" severity=0" $id.events &&
	grep "epilog-finish description=\"dws-epilog\" status=0" $id.events &&
	workflow_gone $id
'

test_expect_success 'a time limit while running: finish before epilog-start' '
	id=$(submit_stubborn -t 5s) &&
	while_held "
		flux job wait-event -t 30 $id start &&
		flux job wait-event -t 30 -m type=timeout $id exception &&
		snapshot $id
	" &&
	flux job wait-event -t 60 $id clean &&
	grep "exception type=\"timeout\" severity=0" $id.now &&
	still_prerun $id &&
	finish_before_epilog $id &&
	grep "epilog-finish description=\"dws-epilog\" status=0" $id.events &&
	workflow_gone $id
'

test_expect_success 'the plugin reloaded between the cancel and finish: still after finish' '
	id=$(submit_stubborn) &&
	while_held "
		flux job wait-event -t 30 $id start &&
		flux cancel $id &&
		flux job wait-event -t 30 -m type=cancel $id exception &&
		flux jobtap remove dws-jobtap.so &&
		flux jobtap load \"$DWS_JOBTAP\" epilog-timeout=600.0 &&
		flux jobtap list | grep dws-jobtap.so &&
		snapshot $id
	" &&
	flux job wait-event -t 60 $id clean &&
	still_prerun $id &&
	finish_before_epilog $id &&
	grep "exception type=\"cancel\" severity=0" $id.events &&
	grep "epilog-finish description=\"dws-epilog\" status=0" $id.events &&
	workflow_gone $id
'

# --- 2. dw_failure_tolerance is the job's exception ------------------------

# in_order FILE PATTERN...: each PATTERN matches a line of FILE, each after
# the line the one before it matched
in_order() {
    file=$1
    shift
    last=0
    for pat in "$@"; do
        n=$(grep -n "$pat" "$file" | head -1 | cut -d: -f1)
        test -n "$n" && test "$n" -gt "$last" || {
            echo "not after line $last: $pat" >&2
            cat "$file" >&2
            return 1
        }
        last=$n
    done
}
# bad_tolerance_path ID FILE: the reference's order for a dw_failure_tolerance
# the service refuses: dws-create held, the service's refusal as the job's
# dws-create exception, the epilog (dws.post_run, answered: status 0), no
# Workflow, no allocation
bad_tolerance_path() {
    flux job wait-event -t 30 --match-context=description=dws-create $1 dependency-add &&
    flux job wait-event -t 30 $1 clean &&
    flux job eventlog $1 >$2 &&
    in_order $2 "dependency-add description=\"dws-create\"" \
        "exception type=\"dws-create\" severity=0 note=\"DWS workflow interactions failed: dw_failure_tolerance must be a positive integer\"" \
        "epilog-start description=\"dws-epilog\"" \
        "epilog-finish description=\"dws-epilog\" status=0" &&
    explained $1 "DWS workflow interactions failed: dw_failure_tolerance must be a positive integer" &&
    test_must_fail grep "^[0-9.]* alloc" $2 &&
    test_must_fail kubectl get workflow $(wfname $1) &&
    cat $2
}

test_expect_success 'a negative dw_failure_tolerance goes through the service, in the reference'"'"'s order' '
	id=$(flux submit -N1 --setattr=system.dw="$XFS" \
		--setattr=system.dw_failure_tolerance=-1 true) &&
	bad_tolerance_path $id tol-neg.events
'

test_expect_success 'a non-integer dw_failure_tolerance: the same path' '
	id=$(flux submit -N1 --setattr=system.dw="$XFS" \
		--setattr=system.dw_failure_tolerance=two true) &&
	bad_tolerance_path $id tol-str.events
'

test_expect_success 'a dw that is not a string or a list of strings is still refused at submit' '
	test_must_fail flux submit -N1 --setattr=system.dw=5 true 2>bad-dw.err &&
	grep "dw must be a string or a list of strings" bad-dw.err
'

# --- 3. what the plugin logs at load ----------------------------------------

test_expect_success 'load without configuration: both lines, 0.000s' '
	flux jobtap remove dws-jobtap.so &&
	flux dmesg -C &&
	flux jobtap load "$DWS_JOBTAP" &&
	flux dmesg >load-noconf.log &&
	grep "dws: failed to unpack config: " load-noconf.log &&
	grep "dws: epilog timeout = 0.000s" load-noconf.log
'

test_expect_success 'load with epilog-timeout=-1.0: logged as given (none)' '
	flux jobtap remove dws-jobtap.so &&
	flux dmesg -C &&
	flux jobtap load "$DWS_JOBTAP" epilog-timeout=-1.0 &&
	flux dmesg >load-neg.log &&
	grep "dws: epilog timeout = -1.000s" load-neg.log &&
	test_must_fail grep "failed to unpack config" load-neg.log
'

test_expect_success 'load with a positive epilog-timeout' '
	flux jobtap remove dws-jobtap.so &&
	flux dmesg -C &&
	flux jobtap load "$DWS_JOBTAP" epilog-timeout=600.0 &&
	flux dmesg >load-pos.log &&
	grep "dws: epilog timeout = 600.000s" load-pos.log &&
	test_must_fail grep "failed to unpack config" load-pos.log
'

# --- 1 again: a lost node (last: the instance loses a broker) -----------------

test_expect_success 'a node failure while running: finish before epilog-start' '
	rm -f ready && mkfifo ready &&
	id=$(flux submit -N1 --requires=host:compute-04 --setattr=system.dw="$XFS" \
		sh -c "echo up >ready; exec sleep 120") &&
	timeout 30 cat ready >/dev/null &&
	flux overlay disconnect compute-04 &&
	flux job wait-event -t 60 $id clean &&
	finish_before_epilog $id &&
	grep "exception type=\"exec\" severity=0 .*node failure on compute-04" $id.events &&
	grep "epilog-finish description=\"dws-epilog\" status=0" $id.events &&
	workflow_gone $id
'

# rank 3 left with exit status 1 when it was disconnected: flux start
# reports it
test_expect_success 'stop the instance (exit status 1: the lost broker) and the emulator' '
	{ stop_rabbit_instance; rc=$?; } &&
	stop_emulator &&
	test $rc = 1 || test $rc = 0
'

test_done
