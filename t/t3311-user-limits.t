#!/bin/sh
test_description='[rabbit.limits]: rabbit storage per user across jobs (issue 47)

Under a real 4-broker instance with Fluxion and the dws service against
the emulator, with max_user_jobs = 1 and max_user_gib = 25: a second job
of the user waits in DEPEND on dws-limit with no Workflow, shown by
flux dws jobs and flux dws job; it keeps waiting across a dws service
reload and a jobtap plugin reload; a job cancelled while it waits ends
with no Workflow; a config reload that raises max_user_jobs lets the
waiting job go; so does one raised while the service is away (its
dws-limit removed once its Workflow exists), and one whose Workflow was
made as the service went away, before the create answered; persistent
storage counts
against its owner, across an instance restart, until it is destroyed; a job alone over max_user_gib
is refused at dws.create; bad limits are refused with one line naming
the key.'

. "$(dirname "$0")"/sharness.sh

skip_all_unless_rabbit_jobs

XFS="#DW jobdw type=xfs capacity=10GiB name=scratch"

dws() {
	flux python -m flux_dws "$@"
}
# not_listed ID: flux dws jobs no longer lists the job
not_listed() {
	dws jobs --json >listed.json &&
	test "$(jq --argjson id "$(flux job id --to=dec $1)" "[.jobs[] | select(.id == \$id)] | length" listed.json)" = 0
}
# phase_is ID PHASE: flux dws jobs says the job is in PHASE
phase_is() {
	dws jobs --json >jobs.json &&
	jq -e --argjson id "$(flux job id --to=dec $1)" --arg p "$2" \
		".jobs[] | select(.id == \$id) | .phase == \$p" jobs.json >/dev/null
}

test_expect_success 'start the emulator and an instance with [rabbit.limits]' '
	start_emulator --system kind --latency zero &&
	RABBIT_EXTRA_CONF="[rabbit.limits]
max_user_jobs = 1
max_user_gib = 25" &&
	rabbit_instance_config "$(pwd)" &&
	restartable_instance_opts &&
	start_rabbit_instance "$(pwd)"
'

test_expect_success 'a job alone over max_user_gib is refused at dws.create' '
	id=$(flux submit -N2 --setattr=system.dw="#DW jobdw type=xfs capacity=20GiB name=big" true) &&
	flux job wait-event -t 60 $id clean &&
	flux job eventlog -f json $id | jq -r "select(.name == \"exception\") | .context" >big.exc &&
	jq -e ".type == \"dws-create\"" big.exc &&
	jq -r .note big.exc | grep "Requested a total of 40 GiB of rabbit storage but max_user_gib is 25 GiB (user " &&
	test_must_fail kubectl get workflow $(wfname $id) 2>/dev/null
'

test_expect_success 'a second job of the user waits on dws-limit with no Workflow' '
	first=$(submit_held first) &&
	echo $first >first.id &&
	flux job wait-event -t 60 $first start &&
	second=$(flux submit -N1 --setattr=system.dw="$XFS" true) &&
	echo $second >second.id &&
	until_true 30 waits_on_limit $second &&
	flux jobs -no "{dependencies}" $second | grep dws-limit
'

test_expect_success 'flux dws jobs and flux dws job say why it waits' '
	second=$(cat second.id) &&
	until_true 30 phase_is $second waiting-limit &&
	jq -r --argjson id "$(flux job id --to=dec $second)" \
		".jobs[] | select(.id == \$id) | .waiting" jobs.json >why &&
	grep "^max_user_jobs 1: user .* holds 10 GiB in 1 job$" why &&
	dws jobs >jobs.out &&
	grep "waiting-limit.*max_user_jobs 1: user" jobs.out &&
	dws job $second >job.out &&
	grep "waits for rabbit storage (\[rabbit.limits\]): max_user_jobs 1" job.out
'

test_expect_success 'it keeps waiting across a dws service reload' '
	second=$(cat second.id) &&
	flux module remove dws &&
	flux module load "$top_srcdir/src/modules/dws.py" &&
	until_true 60 phase_is $second waiting-limit &&
	waits_on_limit $second
'

test_expect_success 'and across a jobtap plugin reload' '
	second=$(cat second.id) &&
	flux jobtap remove dws-jobtap.so &&
	flux jobtap load "$DWS_JOBTAP" &&
	until_true 30 phase_is $second waiting-limit &&
	waits_on_limit $second
'

test_expect_success 'a job cancelled while it waits ends with no Workflow' '
	third=$(flux submit -N1 --setattr=system.dw="$XFS" true) &&
	until_true 30 waits_on_limit $third &&
	flux cancel $third &&
	flux job wait-event -t 60 $third clean &&
	flux job eventlog $third >third.events &&
	test_must_fail grep "epilog-finish description=\"dws-epilog\" status=1" third.events &&
	test_must_fail kubectl get workflow $(wfname $third) 2>/dev/null &&
	until_true 30 not_listed $third
'

test_expect_success 'raising max_user_jobs by config reload lets the waiting job go' '
	first=$(cat first.id) &&
	second=$(cat second.id) &&
	sed -i "s/^max_user_jobs = 1$/max_user_jobs = 2/" conf/instance.toml &&
	flux config reload &&
	flux job wait-event -t 60 $second clean &&
	test "$(flux jobs -no "{state}" $first)" = RUN &&
	release_job first $first &&
	flux job wait-event -t 60 $first clean &&
	completed $first &&
	completed $second &&
	grep "dependency-remove description=\"dws-limit\"" $second.events &&
	workflow_gone $second &&
	flux dmesg >limits.dmesg &&
	grep "waits for its user.s rabbit storage: max_user_jobs 1" limits.dmesg &&
	grep "its user.s rabbit storage allows it now" limits.dmesg &&
	test_must_fail grep "job-manager.dws.dependency:" limits.dmesg
'

test_expect_success 'persistent storage counts against its owner' '
	psi=$(flux submit -N1 --setattr=system.dw="#DW create_persistent type=xfs capacity=20GiB name=proj" true) &&
	flux job wait-event -t 60 $psi clean &&
	completed $psi &&
	workflow_gone $psi &&
	kubectl get persistentstorageinstance proj &&
	held=$(flux submit -N1 --setattr=system.dw="$XFS" true) &&
	echo $held >held.id &&
	until_true 30 waits_on_limit $held &&
	until_true 30 waits_for $held "^max_user_gib 25: user .* holds 20 GiB in 0 jobs$"
'

test_expect_success 'an instance restart keeps the job waiting on dws-limit' '
	held=$(cat held.id) &&
	term_rabbit_instance &&
	start_rabbit_instance "$(pwd)" &&
	until_true 60 phase_is $held waiting-limit &&
	waits_on_limit $held
'

test_expect_success 'destroying the persistent storage lets it go' '
	held=$(cat held.id) &&
	destroy=$(flux submit -N1 --setattr=system.dw="#DW destroy_persistent name=proj" true) &&
	flux job wait-event -t 60 $destroy clean &&
	completed $destroy &&
	flux job wait-event -t 60 $held clean &&
	completed $held &&
	workflow_gone $held &&
	flux dmesg >restart.dmesg &&
	test_must_fail grep "job-manager.dws.dependency:" restart.dmesg
'

test_expect_success 'a waiting job goes when its limit is raised while the service is away' '
	sed -i "s/^max_user_jobs = 2$/max_user_jobs = 1/" conf/instance.toml &&
	flux config reload &&
	blocker=$(submit_held blocker) &&
	flux job wait-event -t 60 $blocker start &&
	away=$(flux submit -N1 --setattr=system.dw="$XFS" true) &&
	until_true 30 waits_on_limit $away &&
	flux module remove dws &&
	sed -i "s/^max_user_jobs = 1$/max_user_jobs = 2/" conf/instance.toml &&
	flux config reload &&
	flux module load "$top_srcdir/src/modules/dws.py" &&
	flux job wait-event -t 60 $away clean &&
	completed $away &&
	grep "dependency-remove description=\"dws-limit\"" $away.events &&
	workflow_gone $away &&
	release_job blocker $blocker &&
	flux job wait-event -t 60 $blocker clean &&
	completed $blocker
'

test_expect_success 'a restart between its Workflow create and the answer: one Workflow, it runs' '
	sed -i "s/^max_user_jobs = 2$/max_user_jobs = 1/" conf/instance.toml &&
	flux config reload &&
	blocker=$(submit_held blocker3) &&
	flux job wait-event -t 60 $blocker start &&
	made=$(flux submit -N1 --setattr=system.dw="$XFS" true) &&
	until_true 30 waits_on_limit $made &&
	flux-dws fault api --method POST --path "/workflows(\\?|$)" --hold 20 >/dev/null &&
	release_job blocker3 $blocker &&
	until_true 30 kubectl get workflow $(wfname $made) &&
	flux module remove dws &&
	flux-dws fault api-clear >/dev/null &&
	flux module load "$top_srcdir/src/modules/dws.py" &&
	flux job wait-event -t 60 $made clean &&
	completed $made &&
	grep "dependency-remove description=\"dws-limit\"" $made.events &&
	grep "memo rabbit_workflow=\"$(wfname $made)\"" $made.events &&
	flux dmesg | grep "$(wfname $made): its Workflow exists; removing dws-limit" &&
	workflow_gone $made &&
	flux job wait-event -t 60 $blocker clean &&
	completed $blocker &&
	sed -i "s/^max_user_jobs = 1$/max_user_jobs = 2/" conf/instance.toml &&
	flux config reload
'

test_expect_success 'a config reload with a bad limit is refused naming the key' '
	cp conf/instance.toml good.toml &&
	sed -i "s/^max_user_gib = 25$/max_user_gib = \"lots\"/" conf/instance.toml &&
	test_must_fail flux config reload 2>reload-bad.err &&
	grep "rabbit.limits.max_user_gib: must be an integer >= 1, got \"lots\"" reload-bad.err &&
	cp good.toml conf/instance.toml &&
	flux config reload
'

test_expect_success 'a bad limit is refused by config-check with one line naming the key' '
	printf "[rabbit.limits]\nmax_user_gib = -1\n" >neg.toml &&
	test_expect_code 1 flux-dws config-check neg.toml >neg.out 2>&1 &&
	test $(wc -l <neg.out) = 1 &&
	grep "^neg.toml: rabbit.limits.max_user_gib: must be an integer >= 1, got -1" neg.out &&
	printf "[rabbit.limits.users.alice]\nmax_user_jobs = \"lots\"\n" >lots.toml &&
	test_expect_code 1 flux-dws config-check lots.toml >lots.out 2>&1 &&
	test $(wc -l <lots.out) = 1 &&
	grep "^lots.toml: rabbit.limits.users.alice.max_user_jobs: must be an integer >= 1, got \"lots\"" lots.out &&
	! grep Traceback neg.out lots.out
'

test_expect_success 'stop the instance and the emulator' '
	stop_rabbit_instance &&
	stop_emulator &&
	rm -rf "$STATEDIR"
'

test_done
