#!/bin/sh
test_description='rabbit jobs across instance restarts, the plugin'"'"'s epilog timeout, and dws.abort

Under a real 4-broker instance with Fluxion, against the emulator:

 - the instance (job manager, dws service, jobtap plugin) restarted with
   persistent state (flux start -Sstatedir) while rabbit jobs are in
   DEPEND, RUN and CLEANUP, and a persistentdw job waits for another
   dependency (its dws.create kept back, issue 33.4): first as a site stops it (the instance cleanup
   cancels running jobs and waits broker.cleanup-timeout for the queue to
   go idle), then without job cleanup: a job held in its dws-setup
   prolog (Setup stalled) and one held in PostRun each end cleanly after
   the restart with their storage, and a running job ends (at the stop
   or with an exec exception after the restart: flux-core does not
   reattach); nothing is lost and no Workflow is left;
 - dws-jobtap.so'"'"'s own epilog-timeout timer: the dws-epilog-timeout
   exception, epilog-finish status 1, dws.abort; and the timer armed again
   by a plugin reload while the epilog is held;
 - dws.abort, whose Teardown follows at once: the rabbit'"'"'s Storage is
   disabled with disable_reason/disable_date and the compute that did not
   unmount is drained, run several times.'

. "$(dirname "$0")"/sharness.sh

skip_all_unless_rabbit_jobs

XFS="#DW jobdw type=xfs capacity=10GiB name=scratch"

job_state() {
    flux jobs -no "{state}" "$1"
}
# drained_with NODE REASON: NODE is drained with REASON; the dws service
# drains through an RPC that has no event of its own, so ask again (at
# most 30 s)
is_drained() {
    flux resource drain -no "{nodelist}|{reason}" | while IFS="|" read -r nl reason; do
        test -n "$(flux hostlist -i "$nl" "$1")" && echo "$reason"
    done | grep -q "$2"
}
drained_with() {
    i=0
    while ! is_drained "$1" "$2"; do
        i=$((i + 1))
        test $i -gt 300 && { flux resource drain; return 1; }
        sleep 0.1
    done
}
# restore RABBIT NODE: undo what dws.abort did (Storage enabled, node
# undrained), and wait until the service has the rabbit up in Fluxion again
restore() {
    flux-dws fault storage "$1" --state Enabled >/dev/null &&
    { test -z "$2" || ! is_drained "$2" "" || flux resource undrain "$2"; } &&
    wait_rabbits '[.rabbits[].fluxion] | all(. == "up")'
}
# held_in_postrun NAME: a rabbit job (submit_held NAME) whose task has
# ended and whose epilog waits, its Workflow's PostRun stalled; prints
# the job's id
held_in_postrun() {
    held_id=$(submit_held $1) &&
    flux job wait-event -t 30 $held_id start >/dev/null &&
    flux-dws fault stall --state PostRun --workflow $(wfname $held_id) >/dev/null &&
    release_job $1 $held_id &&
    flux job wait-event -t 30 $held_id epilog-start >/dev/null &&
    echo $held_id
}
no_workflows() {
    kubectl get workflows -o name >workflows.left &&
    test_must_be_empty workflows.left
}

test_expect_success 'start the emulator and an instance with persistent state' '
	start_emulator --system kind --latency zero &&
	rabbit_instance_config "$(pwd)" "epilog-timeout = 600.0" &&
	restartable_instance_opts &&
	start_rabbit_instance "$(pwd)"
'

test_expect_success 'a persistentdw job waits for another dependency (afterok on a held job)' '
	creator=$(flux submit -N1 \
		--setattr=system.dw="#DW create_persistent type=lustre capacity=100GiB name=keep" true) &&
	flux job wait-event -t 60 $creator clean &&
	kubectl get persistentstorageinstance keep &&
	hold=$(flux submit -N1 --urgency=hold true) &&
	pers=$(flux submit -N1 --dependency=afterok:$hold \
		--setattr=system.dw="#DW persistentdw name=keep" printenv DW_PERSISTENT_keep) &&
	flux job wait-event -t 30 --match-context=description=dws-create $pers dependency-add &&
	test $(job_state $pers) = DEPEND
'

test_expect_success 'rabbit jobs in flight: RUN, CLEANUP (PostRun held), DEPEND (Proposal held)' '
	run=$(flux submit -N1 --setattr=system.dw="$XFS" sleep inf) &&
	flux job wait-event -t 30 $run start &&
	cl=$(submit_held cl) &&
	flux job wait-event -t 30 $cl start &&
	flux-dws fault stall --state PostRun --workflow $(wfname $cl) &&
	release_job cl $cl &&
	flux job wait-event -t 30 $cl epilog-start &&
	flux-dws fault stall --state Proposal &&
	dep=$(flux submit -N1 --setattr=system.dw="$XFS" true) &&
	flux job wait-event -t 30 $dep memo &&
	kubectl get workflow $(wfname $dep) &&
	test $(job_state $run) = RUN &&
	test $(job_state $cl) = CLEANUP &&
	test $(job_state $dep) = DEPEND
'

# A site stops the instance with systemctl stop (SIGTERM): the cleanup
# cancels running jobs and waits for the queue to go idle, at most
# broker.cleanup-timeout (flux.service sets 45 s).
test_expect_success 'stop the instance as a site does: the held jobs and their Workflows stay' '
	term_rabbit_instance &&
	grep "flux-cancel: Canceled 1 job" instance.log &&
	kubectl get workflow $(wfname $cl) &&
	kubectl get workflow $(wfname $dep)
'

test_expect_success 'start it again on the same statedir: no job lost' '
	FLUX_DISABLE_JOB_CLEANUP=1 && export FLUX_DISABLE_JOB_CLEANUP &&
	start_rabbit_instance "$(pwd)" &&
	unset FLUX_DISABLE_JOB_CLEANUP &&
	test $(job_state $dep) = DEPEND &&
	test $(job_state $cl) = CLEANUP
'

test_expect_success 'the job running at shutdown was cancelled and its Workflow torn down' '
	flux job wait-event -t 60 $run clean &&
	flux job eventlog $run >run.events &&
	grep "exception type=\"cancel\" severity=0" run.events &&
	grep "epilog-finish description=\"dws-epilog\" status=0" run.events &&
	workflow_gone $run
'

test_expect_success 'faults cleared: the DEPEND job gets its resources and runs, the CLEANUP job ends its epilog' '
	clear_and_end $dep $cl &&
	completed $dep &&
	grep "jobspec-update resources=.*ssd" $dep.events &&
	grep "dependency-remove description=\"dws-create\"" $dep.events &&
	grep "prolog-finish description=\"dws-setup\" status=0" $dep.events &&
	completed $cl &&
	workflow_gone $dep &&
	workflow_gone $cl &&
	no_workflows
'

# After the restart only the job manager'"'"'s replay knows the job (no
# job.state.depend): the plugin reads the dependencies it holds from its
# eventlog and keeps its dws.create back; the restarted service does not
# make its Workflow from the job list either.
test_expect_success 'the persistentdw job kept waiting across the restart; its dependency gone, it runs' '
	test $(job_state $pers) = DEPEND &&
	test_must_fail service_knows $pers &&
	flux job urgency $hold default &&
	flux job wait-event -t 60 $hold clean &&
	flux job wait-event -t 60 $pers clean &&
	flux job eventlog $pers >pers.events &&
	grep "dependency-remove description=\"dws-create\"" pers.events &&
	test_must_fail grep exception pers.events &&
	flux job attach $pers >pers.out &&
	test -s pers.out &&
	workflow_gone $pers &&
	destroyer=$(flux submit -N1 --setattr=system.dw="#DW destroy_persistent name=keep" true) &&
	flux job wait-event -t 60 $destroyer clean &&
	kubectl wait --for=delete persistentstorageinstance/keep --timeout=60s &&
	no_workflows
'

# A job held in its dws-setup prolog (RUN, not started: its Workflow stalls
# in Setup) and one held in its dws-epilog (CLEANUP: PostRun stalls) when
# the instance stops without job cleanup.  The job manager replays both
# from the KVS, and the plugin, told no event was posted, reads each one's
# eventlog (dws-jobtap.c replayed_flags): the prolog still active, the
# epilog still active.  Once DWS moves on, the first gets its file system
# and runs, the second ends its epilog; both give their storage back.

# storage_of ID FILE: what DWS made for the job's Workflow (Servers,
# Computes, NnfStorages, ClientMounts), by its label
storage_of() {
    kubectl get nnfstorages,clientmounts,servers,computes -A -o name \
        -l "dataworkflowservices.github.io/workflow.name=$(wfname "$1")" >"$2"
}
# storage_gone ID: the job's Workflow and all of that are deleted
storage_gone() {
    workflow_gone "$1" &&
    storage_of "$1" "$1.left" &&
    test_must_be_empty "$1.left"
}
# until_desired ID STATE: until the job's Workflow is asked for STATE (a
# watch, 30 s at most)
until_desired() {
    kubectl wait --for=jsonpath="{.spec.desiredState}=$2" "workflow/$(wfname "$1")" \
        --timeout=30s
}

test_expect_success 'a job held in Setup and one in PostRun, the instance restarted: both end cleanly' '
	pr=$(held_in_postrun pr) &&
	until_desired $pr PostRun &&
	flux-dws fault stall --state Setup &&
	su=$(flux submit -N1 --setattr=system.dw="$XFS" printenv DW_JOB_scratch) &&
	flux job wait-event -t 30 -m description=dws-setup $su prolog-start &&
	until_desired $su Setup &&
	test $(job_state $su) = RUN &&
	test $(job_state $pr) = CLEANUP &&
	storage_of $su su.storage && cat su.storage && grep "^servers" su.storage &&
	storage_of $pr pr.storage && cat pr.storage && grep "^nnfstorage" pr.storage &&
	grep "^clientmount" pr.storage &&
	stop_rabbit_instance &&
	FLUX_DISABLE_JOB_CLEANUP=1 && export FLUX_DISABLE_JOB_CLEANUP &&
	start_rabbit_instance "$(pwd)" &&
	unset FLUX_DISABLE_JOB_CLEANUP &&
	flux job eventlog $su >su.before &&
	test_must_fail grep "^[0-9.]* start" su.before &&
	test $(job_state $su) = RUN &&
	test $(job_state $pr) = CLEANUP &&
	clear_and_end $su $pr &&
	completed $su &&
	grep "dws_environment variables=.*DW_JOB_scratch" $su.events &&
	grep "prolog-finish description=\"dws-setup\" status=0" $su.events &&
	grep "^[0-9.]* start" $su.events &&
	flux job attach $su >su.out &&
	grep "^/mnt/nnf/" su.out &&
	completed $pr &&
	flux job attach $pr >pr.out &&
	grep "^DW_JOB_scratch=/mnt/nnf/" pr.out &&
	storage_gone $su &&
	storage_gone $pr &&
	no_workflows
'

# Without the job cleanup (FLUX_DISABLE_JOB_CLEANUP, as after a crash) a
# job is still running when the brokers stop.  What ends it depends on a
# race in flux-core 0.88 (all brokers of a test instance on one host):
# either its shell dies while job-exec is still loaded (finish, then the
# epilog, before the dws service is removed), or the job is still in RUN
# when the instance comes back, and flux-core does not reattach to its
# gone shell: an exec exception.  Either way it ends and its epilog tears
# its Workflow down.
test_expect_success 'a job running when the instance stops without job cleanup ends; Workflow torn down' '
	run2=$(flux submit -N1 --setattr=system.dw="$XFS" sleep inf) &&
	flux job wait-event -t 30 $run2 start &&
	stop_rabbit_instance &&
	start_rabbit_instance "$(pwd)" &&
	flux job wait-event -t 60 $run2 clean &&
	flux job eventlog $run2 >run2.events &&
	{ grep "exception type=\"exec\" severity=0" run2.events ||
	  grep "finish status=[1-9]" run2.events; } &&
	grep "epilog-finish description=\"dws-epilog\" status=0" run2.events &&
	workflow_gone $run2 &&
	no_workflows
'

test_expect_success 'the plugin'"'"'s epilog timeout fires: dws-epilog-timeout, status 1, dws.abort' '
	flux jobtap remove dws-jobtap.so &&
	flux jobtap load "$DWS_JOBTAP" epilog-timeout=2 &&
	id=$(held_in_postrun t1) &&
	node=$(flux jobs -no "{nodelist}" $id) &&
	rabbit=$(flux jobs -no "{user.rabbits}" $id) &&
	flux job wait-event -t 30 $id clean &&
	flux job eventlog $id >timeout.events &&
	grep "exception type=\"dws-epilog-timeout\" severity=0 note=\"DWS epilog timed out\"" timeout.events &&
	explained $id "DWS epilog timed out" &&
	grep "epilog-finish description=\"dws-epilog\" status=1" timeout.events &&
	flux dmesg | grep "$(wfname $id): rabbit $rabbit disabled: flux job $(wfname $id) epilog timed out (dws.abort)" &&
	workflow_gone $id &&
	flux-dws fault clear &&
	restore $rabbit $node &&
	flux resource drain -no "{nodelist}" >drained-t1.left &&
	test_must_be_empty drained-t1.left
'

# rearmed_once N: a job held in PostRun under a plugin with a long epilog
# timeout; the plugin reloaded with a 2 s one arms it again and it fires
rearmed_once() {
	flux jobtap remove dws-jobtap.so &&
	flux jobtap load "$DWS_JOBTAP" epilog-timeout=600 &&
	id=$(held_in_postrun t2-$1) &&
	node=$(flux jobs -no "{nodelist}" $id) &&
	rabbit=$(flux jobs -no "{user.rabbits}" $id) &&
	flux jobtap remove dws-jobtap.so &&
	flux jobtap load "$DWS_JOBTAP" epilog-timeout=2 &&
	flux job wait-event -t 30 $id clean &&
	flux job eventlog $id >timeout-reload.events &&
	grep "exception type=\"dws-epilog-timeout\" severity=0 note=\"DWS epilog timed out\"" timeout-reload.events &&
	explained $id "DWS epilog timed out" &&
	grep "epilog-finish description=\"dws-epilog\" status=1" timeout-reload.events &&
	flux dmesg | grep "$(wfname $id): rabbit $rabbit disabled" &&
	workflow_gone $id &&
	flux-dws fault clear &&
	restore $rabbit $node &&
	flux jobtap remove dws-jobtap.so &&
	flux jobtap load "$DWS_JOBTAP" epilog-timeout=600
}

# T3107_REARM_RUNS=N runs it N times in a row (issue 62 ran it 200
# times under two busy cores: doc/guide/development.rst, "Flakes")
test_expect_success 'the epilog timer is armed again by a plugin reload while the epilog is held' '
	for i in $(seq ${T3107_REARM_RUNS:-1}); do
		rearmed_once $i || { echo "failed in run $i of ${T3107_REARM_RUNS:-1}" >&2; return 1; }
	done
'

# abort_once N: a job whose compute never unmounts (ClientMount stall) in
# its epilog, timed out (dws.abort).  abort reads the ClientMounts and the
# Servers and tears the Workflow down; with Teardown sent in the same
# batch as the reads, a fast Teardown emptied them (no drain, no Storage
# disabled: 1 run in 18) -- the reads now come first.
abort_once() {
    id=$(submit_held a$1) &&
    flux job wait-event -t 30 $id start &&
    node=$(flux jobs -no "{nodelist}" $id) &&
    rabbit=$(flux jobs -no "{user.rabbits}" $id) &&
    wf=$(wfname $id) &&
    flux-dws fault stall --kind clientmount --compute $node --workflow $wf >/dev/null &&
    release_job a$1 $id &&
    flux job wait-event -t 30 $id epilog-start &&
    flux job raise --type=dws-epilog-timeout $id -- "stuck unmount" &&
    flux job wait-event -t 30 $id clean &&
    flux job eventlog $id >abort-$1.events &&
    grep "epilog-finish description=\"dws-epilog\" status=1" abort-$1.events &&
    kubectl get storage $rabbit -o json >storage-$1.json &&
    jq -e ".spec.state == \"Disabled\"
           and (.metadata.annotations.disable_reason == \"flux job $wf epilog timed out (dws.abort)\")
           and (.metadata.annotations.disable_date | test(\"^[0-9-]+T[0-9:]+Z$\"))" storage-$1.json &&
    drained_with $node "failed to unmount rabbit" &&
    flux-dws fault clear >/dev/null &&
    { ! kubectl get workflow $wf >/dev/null 2>&1 || kick $wf; } &&
    workflow_gone $id &&
    restore $rabbit $node
}

test_expect_success 'dws.abort and its Teardown: Storage disabled, compute drained (x3)' '
	abort_once 1 &&
	abort_once 2 &&
	abort_once 3 &&
	no_workflows &&
	flux resource drain -no "{nodelist}" >drained.left &&
	test_must_be_empty drained.left
'

# found by bench_scale --chaos: Workflows of jobs that ended while the
# service was away were left for good, and so were jobs whose epilog
# release came while the jobtap plugin was away
# (its epilog waits for the service: a job ends without one when an
# administrator gives its epilog up)
test_expect_success 'a job that ends while the service is unloaded: its Workflow goes when it is back' '
	id=$(submit_held u1) &&
	flux job wait-event -t 30 $id start &&
	flux module remove dws &&
	flux cancel $id &&
	flux job wait-event -t 30 $id epilog-start &&
	flux job raise --type=dws-epilog-timeout $id "the dws service is away" &&
	flux job wait-event -t 30 $id clean &&
	flux job eventlog $id | grep "epilog-finish description=\"dws-epilog\" status=1" &&
	kubectl get workflow $(wfname $id) &&
	flux module load "$top_srcdir/src/modules/dws.py" &&
	workflow_gone $id &&
	flux dmesg | grep "$(wfname $id): job is no longer active; tearing its Workflow down"
'

test_expect_success 'an epilog release sent while the plugin is unloaded is sent again at its load' '
	id=$(held_in_postrun u2) &&
	flux jobtap remove dws-jobtap.so &&
	flux-dws fault clear &&
	kick $(wfname $id) &&
	workflow_gone $id &&
	test "$(job_state $id)" = CLEANUP &&
	flux jobtap load "$DWS_JOBTAP" epilog-timeout=600 &&
	flux job wait-event -t 30 $id clean &&
	flux job eventlog $id >u2.events &&
	grep "epilog-finish description=\"dws-epilog\" status=0" u2.events &&
	test_must_fail grep exception u2.events
'

test_expect_success 'stop the instance and the emulator' '
	stop_rabbit_instance &&
	stop_emulator &&
	rm -rf "$STATEDIR"
'

test_done
