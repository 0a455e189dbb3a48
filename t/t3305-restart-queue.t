#!/bin/sh
test_description='rabbit jobs waiting for resources across restarts

Under a real 4-broker instance with Fluxion (queue-policy fcfs, the
default), against the emulator.  Rabbit jobs wait in SCHED behind a job
that holds every compute node, then:

 - the instance is stopped as a site stops it and started again on its
   statedir: flux-core puts them back in PRIORITY and the scheduler is
   there before the brokers have joined and before the dws service has
   set the rabbits up in Fluxion, which would answer them "unsatisfiable";
   dws-jobtap.so keeps them in PRIORITY until the service says its rabbit
   health is applied and Fluxion has their nodes up, then they run; a
   rabbit that is down across the restart gets none of them;
 - Fluxion is reloaded (every ssd vertex down, as in its JGF, until the
   service sees the reload), the compute nodes are freed at once: they run;
 - the dws service is reloaded, or the jobtap plugin: they run;
 - the instance comes back without the dws service: they stay in
   PRIORITY, a jobtap plugin reload takes them over, and they run once the
   service is loaded.
Each job ends with status 0, no exception, its Workflow gone.'

. "$(dirname "$0")"/sharness.sh

skip_all_unless_rabbit_jobs

XFS="#DW jobdw type=xfs capacity=10GiB name=scratch"

# queue N: a job holding all four computes (BIG), then N one-node rabbit
# jobs behind it, each waiting in SCHED (QUEUED: their ids)
queue() {
	BIG=$(flux submit -N4 sleep inf) &&
	flux job wait-event -t 30 $BIG start &&
	QUEUED= &&
	for i in $(seq $1); do
		id=$(flux submit -N1 --setattr=system.dw="$XFS" true) &&
		QUEUED="$QUEUED $id" || return 1
	done &&
	for id in $QUEUED; do
		flux job wait-event -t 30 $id priority || return 1
	done &&
	for id in $QUEUED; do
		test "$(flux jobs -no {state} $id)" = SCHED || return 1
	done
}
# ran_clean ID...: each job ended with status 0, no exception, and its
# Workflow is gone
ran_clean() {
	for id; do
		flux job wait-event -t 60 $id clean &&
		flux job eventlog $id >$id.events &&
		grep "finish status=0" $id.events &&
		test_must_fail grep exception $id.events &&
		workflow_gone $id || { cat $id.events; return 1; }
	done
}
no_workflows() {
	kubectl get workflows -o name >workflows.left &&
	test_must_be_empty workflows.left
}

test_expect_success 'start the emulator and an instance with persistent state' '
	start_emulator --system kind --latency zero &&
	rabbit_instance_config "$(pwd)" &&
	restartable_instance_opts &&
	start_rabbit_instance "$(pwd)"
'

test_expect_success 'a rabbit is down; four rabbit jobs wait in SCHED' '
	flux-dws fault storage kind-worker3 --state Disabled &&
	wait_rabbits "[.rabbits[] | select(.name == \"kind-worker3\") | .fluxion] == [\"down\"]" &&
	queue 4
'

test_expect_success 'instance restart: the queued rabbit jobs run, none on the down rabbit' '
	term_rabbit_instance &&
	RABBIT_WAIT="[.rabbits[] | select(.name == \"kind-worker2\") | .fluxion] == [\"up\"]" &&
	export RABBIT_WAIT &&
	start_rabbit_instance "$(pwd)" &&
	unset RABBIT_WAIT &&
	ran_clean $QUEUED &&
	for id in $QUEUED; do
		test "$(flux jobs -no {nodelist} $id)" != compute-04 || return 1
	done &&
	flux dmesg | grep "dws: holding rabbit jobs in PRIORITY" &&
	flux dmesg | grep "dws: rabbit jobs held in PRIORITY: all 4 given to the scheduler" &&
	flux job wait-event -t 30 $BIG clean &&
	no_workflows
'

test_expect_success 'the rabbit back up' '
	flux-dws fault storage kind-worker3 --state Enabled &&
	wait_rabbits "[.rabbits[].fluxion] | all(. == \"up\")"
'

test_expect_success 'Fluxion reload with rabbit jobs in SCHED, computes freed at once: they run' '
	queue 3 &&
	reload_fluxion &&
	flux cancel $BIG &&
	ran_clean $QUEUED &&
	no_workflows
'

test_expect_success 'dws service reload with rabbit jobs in SCHED: they run' '
	queue 3 &&
	flux module remove dws &&
	flux module load "$top_srcdir/src/modules/dws.py" &&
	flux cancel $BIG &&
	ran_clean $QUEUED &&
	no_workflows
'

test_expect_success 'jobtap plugin reload with rabbit jobs in SCHED: they run' '
	queue 3 &&
	flux jobtap remove dws-jobtap.so &&
	flux jobtap load "$DWS_JOBTAP" &&
	flux cancel $BIG &&
	ran_clean $QUEUED &&
	no_workflows
'

test_expect_success 'the instance back without the dws service: the jobs stay in PRIORITY' '
	queue 2 &&
	term_rabbit_instance &&
	printf "[modules]\ndws.disabled = true\n" >conf/nodws.toml &&
	RABBIT_WAIT=none start_rabbit_instance "$(pwd)" &&
	rm conf/nodws.toml &&
	for id in $QUEUED; do
		flux job wait-event -t 30 $id flux-restart || return 1
	done &&
	dmesg_has "dws: holding rabbit jobs in PRIORITY: waiting for the dws service" &&
	for id in $QUEUED; do
		test "$(flux jobs -no {state} $id)" = PRIORITY || return 1
	done
'

test_expect_success 'a jobtap plugin reload keeps them held; the service loaded, they run' '
	flux jobtap remove dws-jobtap.so &&
	flux jobtap load "$DWS_JOBTAP" &&
	for id in $QUEUED; do
		test "$(flux jobs -no {state} $id)" = PRIORITY || return 1
	done &&
	flux module load "$top_srcdir/src/modules/dws.py" &&
	ran_clean $QUEUED &&
	no_workflows
'

test_expect_success 'a plugin with a bad sched-hold-timeout does not load' '
	test_must_fail flux jobtap load "$DWS_JOBTAP" sched-hold-timeout=0 &&
	flux dmesg | grep "sched-hold-timeout must be a number of seconds > 0"
'

test_expect_success 'stop the instance and the emulator' '
	stop_rabbit_instance &&
	stop_emulator &&
	rm -rf "$STATEDIR"
'

test_done
