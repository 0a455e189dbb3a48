#!/bin/sh
test_description='setup_timeout and prerun_timeout with dw_failure_tolerance never strand a job in its prolog

Under a real broker and Fluxion, against the emulator (issue 33, item 3):

- a Setup that does not finish in setup_timeout, on a job that tolerates
  the loss of the computes behind the late rabbits: those computes are
  given up (dws-node-failure, severity 1), DWS is told to go on without
  them (forceReady) and does, and the job runs and ends cleanly;
- one late rabbit: only its computes are given up, the others mount the
  file system;
- the forceReady patch refused: the job gets a fatal dws-timeout
  exception at once, its prolog fails and its Workflow is torn down;
- the reference test of flux-coral2 (issue 43): setup_timeout = 0.0001, a 1-node
  flux batch tolerating one lost node: the timer fires once, mid-Setup,
  the node is given up and the batch job runs and ends with status 0, no
  dws-timeout;
- forceReady patched by hand mid-Setup (no timeout set): DWS finishes
  Setup ("Forced Ready") and the job runs.'

. "$(dirname "$0")"/sharness.sh

skip_all_unless_rabbit_jobs

XFS="#DW jobdw type=xfs capacity=10GiB name=scratch"

# the job ends with its epilog done, one severity-1 dws-node-failure
# exception naming $2, no fatal one, and its Workflow gone
ends_with_node_failure() {
	flux job wait-event -t 60 $1 clean &&
	flux job eventlog $1 >$1.events &&
	grep "exception type=\"dws-node-failure\" severity=1 note=\"$2\"" $1.events &&
	test_must_fail grep "severity=0" $1.events &&
	grep "^[0-9.]* start" $1.events &&
	grep "epilog-finish description=\"dws-epilog\" status=0" $1.events &&
	workflow_gone $1
}

# refuse_force_ready_after N: of the next job's Workflow PATCHes, the
# N first pass (each state asked after Proposal, the hosts riding on
# Setup's) and the next, the forceReady the service sends when the
# state's timer fires, is refused with 422.  Set before the job is
# submitted: a refusal set once the Workflow is seen in the state raced
# the state's timer, and a loaded machine lost the race (issue 62).
refuse_force_ready_after() {
	flux-dws fault api --status 422 --method PATCH --count 1 --skip $1 \
		--path "/workflows/fluxjob-[0-9]+(\\?|\$)" \
		--message "forceReady refused" >/dev/null
}

# fails_after_node_failure ID HOST NOTE: the job got dws-node-failure HOST,
# then the fatal dws-timeout NOTE exactly (the plain sentence of libdws'
# explain table in a dws-explanation event beside it); it never started,
# its epilog ran and its Workflow is gone; the refusal was used
fails_after_node_failure() {
	flux job wait-event -t 60 $1 clean &&
	flux job eventlog $1 >$1.events &&
	grep "exception type=\"dws-node-failure\" severity=1 note=\"$2\"" $1.events &&
	grep "exception type=\"dws-timeout\" severity=0 note=\"$3\" " $1.events &&
	grep "dws-explanation type=\"dws-timeout\" note=\"$3\" explanation=\"Nodes were left out" \
		$1.events &&
	grep "prolog-finish description=\"dws-setup\" status=1" $1.events &&
	test_must_fail grep "^[0-9.]* start" $1.events &&
	grep "epilog-finish description=\"dws-epilog\" status=0" $1.events &&
	workflow_gone $1 &&
	flux-dws fault api-list | jq -e ".faults == []"
}

test_expect_success 'start the emulator and a rabbit instance with a 4-s setup_timeout' '
	start_emulator --system kind --latency zero &&
	rabbit_instance_config "$(pwd)" &&
	echo "setup_timeout = 4" >>conf/instance.toml &&
	start_rabbit_instance "$(pwd)"
'

test_expect_success 'Setup never finishes, the job tolerates its one compute: it runs and ends cleanly' '
	flux-dws fault stall --state Setup &&
	id=$(flux submit -N1 --setattr=system.dw="$XFS" \
		--setattr=system.dw_failure_tolerance=1 hostname) &&
	ends_with_node_failure $id "compute-0[1-4]" &&
	flux job status $id &&
	flux-dws fault clear
'

test_expect_success 'a late rabbit: only its compute is given up, the others mount' '
	flux-dws fault stall --kind allocation --rabbit kind-worker3 &&
	rm -f go-late &&
	id=$(flux submit -N4 --setattr=system.dw="$XFS" \
		--setattr=system.dw_failure_tolerance=1 \
		sh -c "while ! test -e \"\$0\"; do sleep 0.1; done" "$PWD/go-late") &&
	flux job wait-event -t 60 $id start &&
	kubectl get clientmounts -A -o json |
		jq -r ".items[] | \"\(.metadata.namespace) \(.spec.mounts | length)\"" |
		sort >late.mounts &&
	cat late.mounts &&
	test "$(cat late.mounts)" = "$(printf "compute-01 1\ncompute-02 1\ncompute-03 1\n")" &&
	touch go-late &&
	ends_with_node_failure $id compute-04 &&
	flux job status $id &&
	flux-dws fault clear
'

test_expect_success 'forceReady refused in Setup: fatal dws-timeout at once' '
	flux-dws fault stall --state Setup &&
	refuse_force_ready_after 1 &&
	id=$(flux submit -N1 --setattr=system.dw="$XFS" \
		--setattr=system.dw_failure_tolerance=1 hostname) &&
	host=$(flux jobs -no {nodelist} $id) &&
	fails_after_node_failure $id $host \
		"File system creation took too long: DWS refused forceReady after giving up $host: forceReady refused" &&
	flux-dws fault clear
'

# In PreRun the compute given up is also dropped from the Computes, and
# nnf-sos stops waiting for a compute no longer in it: were that patch
# to land before the forceReady, PreRun would complete without it and
# the refusal would come too late to matter.  It is refused too (422,
# which the service lets pass), so only forceReady could finish PreRun:
# the second Computes PATCH (the first fills them after Setup), set
# before the job is submitted, as the forceReady's refusal is.
test_expect_success 'forceReady refused in PreRun: fatal dws-timeout at once' '
	echo "prerun_timeout = 4" >>conf/instance.toml &&
	flux config reload &&
	flux-dws fault stall --kind clientmount --compute compute-02 &&
	flux-dws fault api --status 422 --method PATCH --count 1 --skip 1 \
		--path "/computes/fluxjob-[0-9]+(\\?|\$)" --message "Computes refused" >/dev/null &&
	refuse_force_ready_after 3 &&
	id=$(flux submit -N2 --requires=host:compute-[01-02] --setattr=system.dw="$XFS" \
		--setattr=system.dw_failure_tolerance=1 hostname) &&
	fails_after_node_failure $id compute-02 \
		"timed out waiting for mounts: DWS refused forceReady after giving up compute-02: forceReady refused" &&
	flux-dws fault clear
'

# setup_timeout = 0.0001 fires while Setup is still in progress: a
# stall holds nnf-sos' Setup until the service forces it ready (in
# flux-coral2's test a real Setup takes 3 s; a delay of that length was
# a window a loaded machine could miss); the NnfStorage is made at
# Setup's start
test_expect_success 'setup_timeout = 0.0001, 1-node batch tolerating 1: it runs, status 0' '
	sed -i "s/^setup_timeout = .*/setup_timeout = 0.0001/" conf/instance.toml &&
	flux config reload &&
	flux config get rabbit.setup_timeout | grep "^0.0001\$" &&
	flux-dws fault stall --state Setup &&
	id=$(flux batch -N1 --setattr=system.dw="$XFS" \
		--setattr=system.dw_failure_tolerance=1 --output=tiny.out --wrap hostname) &&
	flux job wait-event -t 60 $id clean &&
	flux job eventlog $id >tiny.events &&
	host=$(flux jobs -no {nodelist} $id) &&
	grep "exception type=\"dws-node-failure\" severity=1 note=\"$host\"" tiny.events &&
	test_must_fail grep "dws-timeout" tiny.events &&
	test_must_fail grep "severity=0" tiny.events &&
	grep "^[0-9.]* finish status=0" tiny.events &&
	grep "epilog-finish description=\"dws-epilog\" status=0" tiny.events &&
	workflow_gone $id &&
	flux-dws fault clear
'

test_expect_success 'forceReady patched by hand mid-Setup: Setup completes, the job runs' '
	sed -i "/^setup_timeout = /d; /^prerun_timeout = /d" conf/instance.toml &&
	flux config reload &&
	flux-dws fault stall --state Setup &&
	id=$(flux submit -N1 --setattr=system.dw="$XFS" hostname) &&
	kubectl wait --for=jsonpath="{.status.state}"=Setup \
		"workflow/$(wfname $id)" --timeout=30s &&
	kubectl patch workflow $(wfname $id) --type=merge -p "{\"spec\":{\"forceReady\":true}}" &&
	flux job wait-event -t 30 $id start &&
	flux job wait-event -t 60 $id clean &&
	flux job eventlog $id >hand.events &&
	grep "^[0-9.]* finish status=0" hand.events &&
	test_must_fail grep "exception" hand.events &&
	workflow_gone $id &&
	flux-dws fault clear
'

test_expect_success 'stop the instance and the emulator' '
	stop_rabbit_instance &&
	stop_emulator
'

test_done
