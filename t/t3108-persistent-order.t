#!/bin/sh
test_description='persistent storage never races the job that makes it (issue 33.4)

Under a real 4-broker instance with Fluxion and the dws service against
the emulator: a job whose directives use persistent storage (persistentdw,
destroy_persistent) and that has other dependencies (afterok:) gets its
dws.create only once those are gone, while the dws-create dependency
still holds it until its Proposal is done.  The creator is held in its
prolog (its Setup stalled) while the users wait; the wait survives a
service restart (whose recovery must not create their Workflows either)
and a jobtap plugin reload.'

. "$(dirname "$0")"/sharness.sh

skip_all_unless_rabbit_jobs

XFS="#DW jobdw type=xfs capacity=10GiB name=scratch"

# no_create ID: job ID has no Workflow and the service never heard of it,
# while it holds dws-create
no_create() {
	flux jobs -no "{state}" "$1" | grep DEPEND &&
	flux job eventlog "$1" | grep "dependency-add description=\"dws-create\"" &&
	test_must_fail service_knows "$1" &&
	test_must_fail kubectl get workflow "$(wfname "$1")"
}

# sync_service: a rabbit job submitted now (held by urgency) has its
# Proposal done: the service has taken every dws.create sent before it
sync_service() {
	s=$(flux submit -N1 --urgency=hold --setattr=system.dw="$XFS" true) &&
	flux job wait-event -t 30 --match-context=description=dws-create $s dependency-remove &&
	flux cancel $s &&
	flux job wait-event -t 60 $s clean
}

test_expect_success 'start the emulator and a rabbit instance' '
	start_emulator --system kind --latency zero &&
	rabbit_instance_config "$(pwd)" "epilog-timeout = 600.0" &&
	start_rabbit_instance "$(pwd)"
'

test_expect_success 'the creator is held in its prolog (Setup stalled)' '
	flux-dws fault stall --state Setup &&
	flux submit -N1 --setattr=system.dw="#DW create_persistent type=lustre capacity=100GiB name=keep" \
		true >creator.id &&
	flux job wait-event -t 30 $(cat creator.id) prolog-start &&
	kubectl get persistentstorageinstance keep
'

test_expect_success 'persistentdw and destroy_persistent with afterok: dws-create held, no dws.create' '
	flux submit -N1 --dependency=afterok:$(cat creator.id) \
		--setattr=system.dw="#DW persistentdw name=keep" printenv DW_PERSISTENT_keep >user.id &&
	flux submit -N1 --dependency=afterok:$(cat user.id) \
		--setattr=system.dw="#DW destroy_persistent name=keep" true >destroyer.id &&
	flux job wait-event -t 30 --match-context=description=dws-create $(cat user.id) dependency-add &&
	flux job wait-event -t 30 --match-context=description=dws-create $(cat destroyer.id) dependency-add &&
	sync_service &&
	no_create $(cat user.id) &&
	no_create $(cat destroyer.id) &&
	dmesg_has "job $(flux job id --to=dec $(cat user.id)) uses persistent storage and waits for 1 other dependency"
'

test_expect_success 'a plain rabbit job with afterok still gets its Workflow at once' '
	flux submit -N1 --dependency=afterok:$(cat creator.id) --setattr=system.dw="$XFS" \
		true >plain.id &&
	flux job wait-event -t 30 --match-context=description=dws-create $(cat plain.id) dependency-remove &&
	flux jobs -no "{state}" $(cat plain.id) | grep DEPEND
'

test_expect_success 'a service restart does not create their Workflows from the job list' '
	flux module remove dws &&
	flux module load "$top_srcdir/src/modules/dws.py" &&
	dmesg_has "fluxjob-$(flux job id --to=dec $(cat user.id)): job uses persistent storage and waits for its other dependencies" &&
	dmesg_has "fluxjob-$(flux job id --to=dec $(cat destroyer.id)): job uses persistent storage and waits for its other dependencies" &&
	sync_service &&
	no_create $(cat user.id) &&
	no_create $(cat destroyer.id)
'

test_expect_success 'a jobtap plugin reload keeps them waiting' '
	flux jobtap remove dws-jobtap.so &&
	flux jobtap load "$DWS_JOBTAP" epilog-timeout=600 &&
	sync_service &&
	no_create $(cat user.id) &&
	no_create $(cat destroyer.id)
'

test_expect_success 'the creator ends: the user gets its Workflow, runs with the storage, then the destroyer' '
	flux-dws fault clear &&
	kubectl annotate --overwrite "workflow/$(wfname $(cat creator.id))" flux-dws-test/kick="$(date +%s%N)" &&
	flux job wait-event -t 60 $(cat creator.id) clean &&
	flux job wait-event -t 60 $(cat user.id) clean &&
	flux job eventlog $(cat user.id) >user.events &&
	test_must_fail grep exception user.events &&
	flux job attach $(cat user.id) >user.out &&
	test -s user.out &&
	flux job wait-event -t 60 $(cat destroyer.id) clean &&
	flux job eventlog $(cat destroyer.id) >destroyer.events &&
	test_must_fail grep exception destroyer.events &&
	kubectl wait --for=delete persistentstorageinstance/keep --timeout=60s &&
	flux job wait-event -t 60 $(cat plain.id) clean &&
	workflow_gone $(cat creator.id) &&
	workflow_gone $(cat user.id) &&
	workflow_gone $(cat destroyer.id) &&
	workflow_gone $(cat plain.id)
'

test_expect_success 'stop the instance and the emulator' '
	stop_rabbit_instance &&
	stop_emulator
'

test_done
