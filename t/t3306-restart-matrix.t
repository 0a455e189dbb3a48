#!/bin/sh
test_description='every state a rabbit job can be in, across every reload a site does

Under a real 4-broker instance with Fluxion, against the emulator (plain
HTTP on a fixed port, its objects in SQLite, so that it can be restarted
as a Kubernetes API server is). For each restart -- the dws service
reloaded, Fluxion reloaded, the jobtap plugin reloaded, the API server
restarted -- rabbit jobs are held, each by a stalled Workflow state, in:
DEPEND (Proposal), the dws-setup prolog in Setup, the prolog in DataIn,
RUN (the task running), the dws-epilog in PostRun, in DataOut, in
Teardown, and released early (release_computes = after-unmount: the job
inactive, its computes back) in DataOut; and the instance restarted on
its statedir as a site does it (the jobs holding nodes are cancelled by
its cleanup, as flux-core does, and torn down). (The emulator keeps its
faults in memory: an API server restart lifts the stalls itself, and the
jobs go on while the service reconnects.) After the restart the stalls
are lifted: every job ends COMPLETED with its epilog status 0 and no
exception, its Workflow is deleted, and every ssd vertex is up again.
Jobs waiting in SCHED are t3305, and here across an API server restart;
instance restarts without the cleanup (a crash) are t3107; t3303 has
more of released jobs.'

. "$(dirname "$0")"/sharness.sh

skip_all_unless_rabbit_jobs

XFS="#DW jobdw type=xfs capacity=10GiB name=scratch"
COPY_IN="$XFS
#DW copy_in source=/lus/global/in destination=\$DW_JOB_scratch/"
COPY_OUT="$XFS
#DW copy_out source=\$DW_JOB_scratch/ destination=/lus/global/out"

# stalled_at ID STATE: the job's Workflow waits in STATE (desired, not done)
stalled_at() {
	until_true 30 sh -c 'kubectl get workflow "$1" -o json |
		jq -e --arg s "$2" ".spec.desiredState == \$s and .status.state == \$s
			and (.status.ready | not)" >/dev/null' sh "$(wfname $1)" "$2"
}
# stall ID STATE: stall the job's Workflow at STATE (before it gets there)
stall() {
	flux-dws fault stall --state "$2" --workflow "$(wfname $1)" >/dev/null
}

# front_jobs: rabbit jobs in DEPEND (Proposal), the prolog (Setup, DataIn)
# and RUN; sets P S D R
front_jobs() {
	S=$(flux submit -N1 --urgency=hold --setattr=system.dw="$XFS" true) &&
	D=$(flux submit -N1 --urgency=hold --setattr=system.dw="$COPY_IN" true) &&
	flux job wait-event -t 30 $S priority && flux job wait-event -t 30 $D priority &&
	stall $S Setup && stall $D DataIn &&
	flux job urgency $S default && flux job urgency $D default &&
	R=$(submit_held run) &&
	flux job wait-event -t 30 $R start &&
	stalled_at $S Setup && stalled_at $D DataIn &&
	flux-dws fault stall --state Proposal >/dev/null &&
	P=$(flux submit -N1 --setattr=system.dw="$XFS" true) &&
	stalled_at $P Proposal &&
	test "$(flux jobs -no {state} $P)" = DEPEND &&
	test "$(flux jobs -no {state} $S)" = RUN &&
	test "$(flux jobs -no {state} $D)" = RUN &&
	test "$(flux jobs -no {state} $R)" = RUN
}
# back_jobs: rabbit jobs whose epilog waits in PostRun, DataOut, Teardown,
# and one whose computes went back after PostRun (release_computes =
# after-unmount), inactive while its DataOut waits; sets PO DO TD RE
back_jobs() {
	PO=$(submit_held po) && DO=$(submit_held do -N1 --setattr=system.dw="$COPY_OUT") &&
	TD=$(submit_held td) &&
	RE=$(submit_held re -N1 --setattr=system.dw="$COPY_OUT" \
		--setattr=system.dw_release_computes=after-unmount) &&
	for id in $PO $DO $TD $RE; do
		flux job wait-event -t 30 $id start || return 1
	done &&
	stall $PO PostRun && stall $DO DataOut && stall $TD Teardown && stall $RE DataOut &&
	release_job po $PO && release_job do $DO && release_job td $TD && release_job re $RE &&
	stalled_at $PO PostRun && stalled_at $DO DataOut && stalled_at $TD Teardown &&
	stalled_at $RE DataOut &&
	flux job wait-event -t 30 $RE clean &&
	for id in $PO $DO $TD; do
		test "$(flux jobs -no {state} $id)" = CLEANUP || return 1
	done
}
# all_end ID...: faults cleared, each job ends COMPLETED, its Workflow
# deleted, every ssd up again
all_end() {
	release_job run &&
	clear_and_end "$@" &&
	for id; do
		completed $id && workflow_gone $id || { cat $id.events; return 1; }
	done &&
	wait_rabbits "[.rabbits[].fluxion] | all(. == \"up\")"
}

reload_service() {
	flux module remove dws &&
	flux module load "$top_srcdir/src/modules/dws.py"
}
reload_jobtap() {
	flux jobtap remove dws-jobtap.so &&
	flux jobtap load "$DWS_JOBTAP"
}
restart_api_server() {
	stop_emulator &&
	start_emulator $EMULATOR_ARGS
}

test_expect_success 'start the emulator (state in SQLite, fixed port) and an instance' '
	port=$(python3 -c "import socket; s = socket.socket(); s.bind((\"127.0.0.1\", 0)); print(s.getsockname()[1])") &&
	EMULATOR_ARGS="--system kind --latency zero --plain-http --no-auth --listen 127.0.0.1:$port --state k8s.db" &&
	start_emulator $EMULATOR_ARGS &&
	rabbit_instance_config "$(pwd)" &&
	restartable_instance_opts &&
	start_rabbit_instance "$(pwd)"
'

for restart in reload_service reload_fluxion reload_jobtap restart_api_server; do
	test_expect_success "$restart: jobs in DEPEND, Setup, DataIn, RUN end cleanly" '
		front_jobs &&
		$restart &&
		all_end $P $S $D $R
	'
	test_expect_success "$restart: jobs in PostRun, DataOut, Teardown, released in DataOut end cleanly" '
		back_jobs &&
		$restart &&
		all_end $PO $DO $TD $RE
	'
done

test_expect_success 'restart_api_server with a rabbit job waiting in SCHED: it runs' '
	big=$(flux submit -N4 sleep inf) &&
	flux job wait-event -t 30 $big start &&
	Q=$(flux submit -N1 --setattr=system.dw="$XFS" true) &&
	flux job wait-event -t 30 $Q priority &&
	test "$(flux jobs -no {state} $Q)" = SCHED &&
	restart_api_server &&
	flux cancel $big &&
	flux job wait-event -t 60 $Q clean &&
	completed $Q && workflow_gone $Q &&
	flux job wait-event -t 60 $big clean
'

# cancelled_clean ID...: the job was cancelled (the instance'"'"'s cleanup),
# its epilog ended with status 0 and its Workflow is deleted
cancelled_clean() {
	for id; do
		flux job wait-event -t 60 $id clean &&
		flux job eventlog $id >$id.events &&
		grep "exception type=\"cancel\"" $id.events &&
		grep "epilog-finish description=\"dws-epilog\" status=0" $id.events &&
		workflow_gone $id || { cat $id.events; return 1; }
	done
}

# A site stops the instance (SIGTERM: its cleanup cancels the jobs that
# hold nodes and waits broker.cleanup-timeout) and starts it again on its
# statedir.
test_expect_success 'instance restart: DEPEND resumes; prolog and RUN jobs are cancelled and torn down' '
	front_jobs &&
	term_rabbit_instance &&
	start_rabbit_instance "$(pwd)" &&
	flux-dws fault clear && kick $(wfname $P) &&
	flux job wait-event -t 60 $P clean &&
	completed $P && workflow_gone $P &&
	cancelled_clean $S $D $R &&
	wait_rabbits "[.rabbits[].fluxion] | all(. == \"up\")"
'

test_expect_success 'instance restart: jobs in PostRun, DataOut, Teardown, released in DataOut end cleanly' '
	back_jobs &&
	term_rabbit_instance &&
	start_rabbit_instance "$(pwd)" &&
	all_end $PO $DO $TD $RE
'

test_expect_success 'no Workflow, ClientMount or NnfStorage is left' '
	for kind in workflows clientmounts nnfstorages; do
		kubectl get $kind -A -o name >left.$kind &&
		test_must_be_empty left.$kind || return 1
	done
'

test_expect_success 'stop the instance and the emulator' '
	stop_rabbit_instance &&
	stop_emulator &&
	rm -rf "$STATEDIR"
'

test_done
