#!/bin/sh
test_description='[rabbit.limits] by flux-accounting bank, beside mf_priority.so (issue 65)

Under a real 4-broker instance with Fluxion and the dws service against
the emulator, flux-accounting as a site runs it: its database, flux
account-service, banks physics and chemistry under site, the instance
owner and another user in both (the other user: physics by default, with
project quantum), pushed to mf_priority.so by flux account-priority-update.

mf_priority.so gives a job submitted without a bank its user'"'"'s
default bank by a jobspec-update from job.new, before the job enters
DEPEND, whichever plugin is loaded first; the instance owner'"'"'s
default bank is the one named after it that flux
account-priority-update adds.  A job naming its bank keeps it.
dws-jobtap.so sends the bank and the project in dws.create, in both
orders of load.

With [rabbit.limits] max_bank_jobs, max_bank_gib (every bank, or a bank
of its own table) and a bank'"'"'s max_user_gib: a job over a bank
limit waits in DEPEND on dws-limit (flux dws jobs says why), while the
same user'"'"'s job in the other bank goes; it goes once a job of the
bank ends; a job that takes its bank by default counts in it; the waits
survive a dws service reload; a job alone over its bank'"'"'s
max_bank_gib is refused at dws.create; the top-level per-user limits
still count across banks.  All of it with mf_priority.so loaded after
dws-jobtap.so (the limits set by a config reload) and, in a second
instance, before it (the limits in the config from the start).

flux dws usage then adds up what the first instance'"'"'s jobs held:
jobs and GiB-hours by bank, user, project and type, -o and --json.

Rabbit jobs held in PRIORITY across a restart without the dws service
(t3305) stay held when the accounting data is pushed to mf_priority.so
loaded before dws-jobtap.so; loaded after it, its priority replaces the
plugin'"'"'s "unavailable" and they go to SCHED: a known breakage.  Once
the service is loaded they run, their Workflows taken up (not torn down
and made again), each charged to the bank its dws.create carried though
mf_priority.so has set its jobspec to the default bank since.'

. "$(dirname "$0")"/sharness.sh

skip_all_unless_rabbit_jobs
skip_all_unless_accounting

XFS="#DW jobdw type=xfs capacity=10GiB name=scratch"
OWNER=$(id -u)
OWNER_NAME=$(id -un)
# another user with a passwd entry (its jobs run as it under the stand-in
# IMP), else nobody
OTHER=$(python3 -c '
import pwd
users = [p for p in pwd.getpwall() if p.pw_uid not in (0, 65534)]
print(users[0].pw_uid if users else 65534)')
OTHER_NAME=$(python3 -c "import pwd; print(pwd.getpwuid($OTHER).pw_name)")
DB=$(pwd)/FluxAccounting.db
# every bank 3 jobs at once (the owner's own bank has no table), physics
# 2 jobs and 30 GiB, chemistry 25 GiB for each user
BANK_LIMITS="[rabbit.limits]
max_bank_jobs = 3
max_bank_gib = 1000
[rabbit.limits.banks.physics]
max_bank_jobs = 2
max_bank_gib = 30
[rabbit.limits.banks.chemistry]
max_bank_jobs = 4
max_bank_gib = 1000
max_user_gib = 25"

dws() {
	flux python -m flux_dws "$@"
}
# held_as UID NAME ARGS...: a job of user UID (ARGS: flux submit options)
# whose task waits until release_job NAME
held_as() {
	uid=$1 && name=$2 && shift 2 &&
	rm -f "go-$name" &&
	submit_as "$uid" "$@" sh -c 'while ! test -e "$0"; do sleep 0.1; done' "$PWD/go-$name"
}
# held ID BANK UID GIB: the job held GIB of rabbit storage, charged to
# BANK, for flux dws usage to add up (HELD_LIST: the first instance's
# held.list)
HELD_LIST=held.list
held() {
	echo "$(flux job id --to=dec $1) $2 $3 $4" >>$HELD_LIST
}
line_of() {
	flux job eventlog "$1" | grep -n "$2" | head -1 | cut -d: -f1
}
# bank_before_depend ID BANK: the job got BANK by a jobspec-update, and
# before it entered DEPEND
bank_before_depend() {
	u=$(line_of $1 "jobspec-update .*attributes.system.bank=\"$2\"") &&
	d=$(line_of $1 "^[0-9.]* depend") &&
	test -n "$u" && test -n "$d" && test "$u" -lt "$d" ||
		{ flux job eventlog $1; return 1; }
}
# jobspec_attr ID KEY [--base]: attributes.system.KEY of the job's
# jobspec, with its updates (--base: as submitted)
jobspec_attr() {
	flux job info $3 $1 jobspec | jq -r ".attributes.system.$2 // \"none\""
}
# went ID: the job is past dws-limit (its dependency removed)
went() {
	flux job eventlog $1 | grep -q "dependency-remove description=\"dws-limit\""
}
one_went() {
	went $1 || went $2
}

# trace_creates: the dws.create requests the job manager sends (what
# dws-jobtap.so sends) traced into creates.trace, in the background until
# stop_trace, from when the trace is seen to be attached: it shows a
# probe request sent to the job manager
trace_creates() {
	rm -f creates.trace &&
	flux module trace -f -t request -T "*dws.create*" job-manager >creates.trace 2>&1 &
	TRACE_PID=$! &&
	until_true 30 trace_attached
}
trace_attached() {
	kill -0 $TRACE_PID &&
	{ dws_rpc job-manager.dws.create-trace-probe "{}" >/dev/null 2>&1; :; } &&
	grep -q "job-manager.dws.create-trace-probe" creates.trace
}
stop_trace() {
	kill $TRACE_PID && wait $TRACE_PID
	return 0
}
# create_payload ID: the payload of the job's dws.create, as traced
create_payload() {
	flux python -c '
import json, re, sys
parts = re.split(r"^\S+ job-manager [rt]x [<>] (\S+) \[\d+\]\n", open("creates.trace").read(),
                 flags=re.M)
for topic, body in zip(parts[1::2], parts[2::2]):
    if topic == "dws.create" and body.strip():
        payload = json.loads(body)
        if payload.get("jobid") == int(sys.argv[1]):
            print(json.dumps(payload))
            sys.exit(0)
sys.exit(1)' "$(flux job id --to=dec $1)"
}

# start_bank_instance: the instance of rabbit_instance_config with
# RABBIT_EXTRA_CONF, RABBIT_PLUGINS_BEFORE/AFTER, that runs other users'
# jobs and keeps its jobs across a restart (STATEDIR)
start_bank_instance() {
	rabbit_instance_config "$(pwd)" &&
	guest_jobs_config "$(pwd)" &&
	guest_opts=$RABBIT_BROKER_OPTS &&
	restartable_instance_opts &&
	RABBIT_BROKER_OPTS="$RABBIT_BROKER_OPTS $guest_opts" &&
	start_rabbit_instance "$(pwd)"
}
# plugin_order: the jobtap plugins dws-jobtap.so and mf_priority.so, in
# the order they were loaded
plugin_order() {
	flux jobtap list | grep -E "^(dws-jobtap|mf_priority)\.so$" | tr "\n" " "
}
# pushed: DB's data sent to mf_priority.so, which has the other user in
# both banks
pushed() {
	push_accounting "$DB" &&
	flux jobtap query mf_priority.so >mf.json &&
	jq -e --argjson u $OTHER \
		"[.mf_priority_map[] | select(.userid == \$u) | .banks[].bank_name] | sort
		 == [\"chemistry\", \"physics\"]" mf.json
}

# default_bank_in_order: a rabbit job of the other user without a bank
# gets physics and quantum before DEPEND, one of the owner gets the
# owner's bank, one naming chemistry keeps it; each ends cleanly
default_bank_in_order() {
	g=$(submit_as $OTHER -N1 --setattr=system.dw="$XFS" true) &&
	o=$(flux submit -N1 --setattr=system.dw="$XFS" true) &&
	c=$(flux submit -N1 --setattr=system.dw="$XFS" --setattr=system.bank=chemistry true) &&
	echo "$g $o $c" >default.ids &&
	for id in $g $o $c; do
		flux job wait-event -t 60 $id clean && completed $id || return 1
	done &&
	held $g physics $OTHER 10 &&
	held $o $OWNER_NAME $OWNER 10 &&
	held $c chemistry $OWNER 10 &&
	bank_before_depend $g physics &&
	test "$(jobspec_attr $g bank)" = physics &&
	test "$(jobspec_attr $g project)" = quantum &&
	test "$(jobspec_attr $g bank --base)" = none &&
	bank_before_depend $o $OWNER_NAME &&
	test "$(jobspec_attr $o bank)" = $OWNER_NAME &&
	test "$(jobspec_attr $c bank)" = chemistry &&
	test "$(jobspec_attr $c bank --base)" = chemistry &&
	test_must_fail grep "jobspec-update .*attributes.system.bank=" $c.events
}
# creates_carry_banks: dws.create of default_bank_in_order's jobs
# carried their banks, and the other user's its project
creates_carry_banks() {
	read g o c <default.ids &&
	until_true 10 create_payload $g >g.create &&
	until_true 10 create_payload $o >o.create &&
	until_true 10 create_payload $c >c.create &&
	jq -e ".bank == \"physics\" and .project == \"quantum\"" g.create &&
	jq -e --arg b $OWNER_NAME ".bank == \$b" o.create &&
	jq -e ".bank == \"chemistry\"" c.create
}

# queue_behind_big: a rabbit job of the other user naming chemistry
# (physics is its default) and one of the owner naming physics (Q1, Q2)
# queued behind a job that holds every compute; then the instance
# restarted without the dws service (as t3305 does): dws-jobtap.so holds
# them in PRIORITY, and mf_priority.so has no data until it is pushed
# again (when it sets Q1's jobspec to its user's default bank)
queue_behind_big() {
	big=$(flux submit -N4 sleep inf) &&
	flux job wait-event -t 60 $big start &&
	Q1=$(submit_as $OTHER -N1 --setattr=system.bank=chemistry --setattr=system.dw="$XFS" true) &&
	Q2=$(flux submit -N1 --setattr=system.bank=physics --setattr=system.dw="$XFS" true) &&
	flux job wait-event -t 60 $Q1 priority &&
	flux job wait-event -t 60 $Q2 priority
}
# said STEP: a step of a long case has passed (the log shows where one
# that failed stopped)
said() {
	echo "-- $*"
}
restart_without_service() {
	stop_accounting &&
	term_rabbit_instance && said "the instance stopped" &&
	printf "[modules]\ndws.disabled = true\n" >conf/nodws.toml &&
	RABBIT_WAIT=none start_rabbit_instance "$(pwd)" && said "started without the service" &&
	rm conf/nodws.toml &&
	flux job wait-event -t 60 $Q1 flux-restart &&
	flux job wait-event -t 60 $Q2 flux-restart && said "both queued jobs restarted" &&
	{ dmesg_has "dws: holding rabbit jobs in PRIORITY: waiting for the dws service" ||
		{ echo "no hold said; the log:"; flux dmesg | grep -E "dws|sched" | tail -30;
		  false; }; } &&
	start_accounting "$DB" && said "flux-accounting started"
}
# reprioritized ID: mf_priority.so has judged the job again since the
# restart (its bank, posted anew after flux-restart)
reprioritized() {
	flux job eventlog $1 | sed -n "/ flux-restart/,\$p" | grep -q "jobspec-update .*attributes.system.bank="
}
# held_after_push: the accounting data pushed, mf_priority.so judges Q1
# and Q2 again, and they stay in PRIORITY (no priority event since the
# restart) while the dws service is away
held_after_push() {
	push_accounting "$DB" &&
	until_true 30 reprioritized $Q1 &&
	until_true 30 reprioritized $Q2 &&
	for id in $Q1 $Q2; do
		flux job eventlog $id | sed -n "/ flux-restart/,\$p" >$id.restarted &&
		test_must_fail grep -E " (priority|alloc) " $id.restarted || return 1
	done
}
# run_when_service_loads: the service loaded, Q1 and Q2 run and end; the
# service took their Workflows up (a job in PRIORITY is active: its
# Workflow is not torn down and made again), and each is charged to the
# bank its dws.create carried (its record says so), whatever its jobspec
# says since
run_when_service_loads() {
	flux module load "$top_srcdir/src/modules/dws.py" &&
	for id in $Q1 $Q2; do
		flux job wait-event -t 60 $id clean && completed $id || return 1
	done &&
	flux dmesg >loaded.dmesg &&
	for id in $Q1 $Q2; do
		grep "$(wfname $id): picked up in Proposal" loaded.dmesg &&
		test_must_fail grep "$(wfname $id): job is no longer active" loaded.dmesg &&
		test_must_fail grep "$(wfname $id): no Workflow for job" loaded.dmesg || return 1
	done &&
	echo "Q1: jobspec bank $(jobspec_attr $Q1 bank), record bank $(record_bank $Q1);" \
		"Q2: record bank $(record_bank $Q2)" &&
	test "$(record_bank $Q1)" = chemistry &&
	test "$(record_bank $Q2)" = physics
}
# record_bank ID: the bank in the job's record (data.dws.job)
record_bank() {
	flux kvs get "$(flux job id --to=kvs $1).data.dws.job" | jq -r ".bank // \"none\""
}

test_expect_success 'start the emulator and an instance: mf_priority.so after dws-jobtap.so' '
	start_emulator --system kind --latency zero &&
	RABBIT_PLUGINS_AFTER=$MF_PRIORITY_CONF &&
	start_bank_instance &&
	test "$(plugin_order)" = "dws-jobtap.so mf_priority.so " &&
	dmesg_has "dws: mf_priority.so is loaded after dws-jobtap.so: its priority overrides the hold"
'

test_expect_success 'flux-accounting: banks, users and a project sent to mf_priority.so' '
	start_accounting "$DB" &&
	flux account add-bank site 1 &&
	flux account add-bank --parent-bank=site physics 1 &&
	flux account add-bank --parent-bank=site chemistry 1 &&
	flux account add-project quantum &&
	for bank in physics chemistry; do
		flux account add-user --username=$OWNER_NAME --userid=$OWNER --bank=$bank \
			--max-running-jobs=100 --max-active-jobs=100 || return 1
	done &&
	flux account add-user --username=$OTHER_NAME --userid=$OTHER --bank=physics \
		--max-running-jobs=100 --max-active-jobs=100 -P quantum --default-project=quantum &&
	flux account add-user --username=$OTHER_NAME --userid=$OTHER --bank=chemistry \
		--max-running-jobs=100 --max-active-jobs=100 &&
	flux account view-user $OTHER_NAME >other.user &&
	jq -e "map(.default_bank) | unique == [\"physics\"]" other.user &&
	pushed &&
	trace_creates
'

test_expect_success 'a job without a bank gets its default bank before DEPEND (mf_priority last)' '
	default_bank_in_order
'

test_expect_success 'dws.create carries the bank and the project (mf_priority last)' '
	test_when_finished stop_trace &&
	creates_carry_banks
'

test_expect_success 'the bank limits are set by a config reload' '
	echo "$BANK_LIMITS" >>conf/instance.toml &&
	flux config reload &&
	flux config get rabbit.limits.banks.physics | jq -e ".max_bank_jobs == 2"
'

test_expect_success 'a job alone over its bank max_bank_gib is refused at dws.create' '
	big=$(flux submit -N2 --setattr=system.bank=physics \
		--setattr=system.dw="#DW jobdw type=xfs capacity=20GiB name=big" true) &&
	flux job wait-event -t 60 $big clean &&
	flux job eventlog -f json $big | jq -r "select(.name == \"exception\") | .context" >big.exc &&
	jq -e ".type == \"dws-create\"" big.exc &&
	jq -r .note big.exc >big.note &&
	grep "Requested a total of 40 GiB of rabbit storage but max_bank_gib is 30 GiB (bank physics)" big.note &&
	test_must_fail kubectl get workflow $(wfname $big) 2>/dev/null
'

test_expect_success 'the same job in a bank that allows it runs' '
	ok=$(flux submit -N2 --setattr=system.dw="#DW jobdw type=xfs capacity=20GiB name=big" true) &&
	flux job wait-event -t 60 $ok clean &&
	completed $ok &&
	held $ok $OWNER_NAME $OWNER 40
'

test_expect_success 'a job in a full bank waits while the user goes on in the other bank' '
	p1=$(submit_held p1 -N1 --setattr=system.bank=physics --setattr=system.dw="$XFS") &&
	p2=$(submit_held p2 -N1 --setattr=system.bank=physics --setattr=system.dw="$XFS") &&
	flux job wait-event -t 60 $p1 start &&
	flux job wait-event -t 60 $p2 start &&
	p3=$(submit_held p3 -N1 --setattr=system.bank=physics --setattr=system.dw="$XFS") &&
	echo "$p1 $p2 $p3" >physics.ids &&
	until_true 30 waits_on_limit $p3 &&
	until_true 30 waits_for $p3 "^max_bank_jobs 2: bank physics holds 20 GiB in 2 jobs$" &&
	c1=$(flux submit -N1 --setattr=system.bank=chemistry --setattr=system.dw="$XFS" true) &&
	flux job wait-event -t 60 $c1 clean &&
	completed $c1 &&
	held $c1 chemistry $OWNER 10 &&
	waits_on_limit $p3
'

test_expect_success 'a job that takes physics by default waits on it too' '
	g1=$(held_as $OTHER g1 -N1 --setattr=system.dw="$XFS") &&
	echo $g1 >g1.id &&
	until_true 30 waits_on_limit $g1 &&
	until_true 30 waits_for $g1 "^max_bank_jobs 2: bank physics holds 20 GiB in 2 jobs$" &&
	bank_before_depend $g1 physics &&
	dws jobs -A >jobs.out &&
	grep "waiting-limit.*max_bank_jobs 2: bank physics" jobs.out &&
	dws job $g1 >g1.job &&
	grep "^  bank physics, project quantum$" g1.job &&
	grep "waits for rabbit storage (\[rabbit.limits\]): max_bank_jobs 2: bank physics holds 20 GiB in 2 jobs$" g1.job
'

test_expect_success 'the waits survive a dws service reload' '
	read p1 p2 p3 <physics.ids &&
	g1=$(cat g1.id) &&
	flux module remove dws &&
	flux module load "$top_srcdir/src/modules/dws.py" &&
	until_true 60 waits_for $p3 "^max_bank_jobs 2: bank physics holds 20 GiB in 2 jobs$" &&
	until_true 60 waits_for $g1 "^max_bank_jobs 2: bank physics holds 20 GiB in 2 jobs$" &&
	waits_on_limit $p3 &&
	waits_on_limit $g1
'

test_expect_success 'a physics job ends: one waiting job goes, the other waits for the next' '
	read p1 p2 p3 <physics.ids &&
	g1=$(cat g1.id) &&
	release_job p1 $p1 &&
	flux job wait-event -t 60 $p1 clean &&
	completed $p1 &&
	until_true 60 one_went $p3 $g1 &&
	if went $p3; then first=$p3 next=$g1; else first=$g1 next=$p3; fi &&
	flux job wait-event -t 60 $first start &&
	waits_on_limit $next &&
	until_true 30 waits_for $next "^max_bank_jobs 2: bank physics holds 20 GiB in 2 jobs$" &&
	release_job p2 $p2 &&
	flux job wait-event -t 60 $next start &&
	release_job p3 $p3 &&
	release_job g1 $g1 &&
	for id in $p2 $p3 $g1; do
		flux job wait-event -t 60 $id clean && completed $id || return 1
	done &&
	held $p1 physics $OWNER 10 &&
	held $p2 physics $OWNER 10 &&
	held $p3 physics $OWNER 10 &&
	held $g1 physics $OTHER 10
'

test_expect_success 'max_bank_gib: a physics job waits while the bank holds 30 GiB' '
	sed -i "s/^max_bank_jobs = 2$/max_bank_jobs = 5/" conf/instance.toml &&
	flux config reload &&
	h1=$(submit_held h1 -N2 --setattr=system.bank=physics --setattr=system.dw="$XFS") &&
	h2=$(submit_held h2 -N1 --setattr=system.bank=physics --setattr=system.dw="$XFS") &&
	flux job wait-event -t 60 $h1 start &&
	flux job wait-event -t 60 $h2 start &&
	h3=$(flux submit -N1 --setattr=system.bank=physics --setattr=system.dw="$XFS" true) &&
	until_true 30 waits_on_limit $h3 &&
	until_true 30 waits_for $h3 "^max_bank_gib 30: bank physics holds 30 GiB in 2 jobs$" &&
	release_job h1 $h1 &&
	flux job wait-event -t 60 $h3 clean &&
	completed $h3 &&
	release_job h2 $h2 &&
	flux job wait-event -t 60 $h2 clean &&
	completed $h1 && completed $h2 &&
	held $h1 physics $OWNER 20 &&
	held $h2 physics $OWNER 10 &&
	held $h3 physics $OWNER 10
'

test_expect_success 'a bank max_user_gib holds its user there, not another user nor another bank' '
	c2=$(submit_held c2 -N2 --setattr=system.bank=chemistry --setattr=system.dw="$XFS") &&
	flux job wait-event -t 60 $c2 start &&
	c3=$(flux submit -N1 --setattr=system.bank=chemistry --setattr=system.dw="$XFS" true) &&
	until_true 30 waits_on_limit $c3 &&
	until_true 30 waits_for $c3 "^max_user_gib 25: user $OWNER_NAME holds 20 GiB in 1 job in bank chemistry$" &&
	g2=$(submit_as $OTHER -N1 --setattr=system.bank=chemistry --setattr=system.dw="$XFS" true) &&
	flux job wait-event -t 60 $g2 clean &&
	completed $g2 &&
	p5=$(flux submit -N1 --setattr=system.bank=physics --setattr=system.dw="$XFS" true) &&
	flux job wait-event -t 60 $p5 clean &&
	completed $p5 &&
	waits_on_limit $c3 &&
	release_job c2 $c2 &&
	flux job wait-event -t 60 $c3 clean &&
	completed $c2 && completed $c3 &&
	held $c2 chemistry $OWNER 20 &&
	held $c3 chemistry $OWNER 10 &&
	held $g2 chemistry $OTHER 10 &&
	held $p5 physics $OWNER 10
'

test_expect_success 'the top-level max_user_jobs counts the user across banks' '
	sed -i "/^\[rabbit.limits\]$/a max_user_jobs = 1" conf/instance.toml &&
	flux config reload &&
	x1=$(submit_held x1 -N1 --setattr=system.bank=physics --setattr=system.dw="$XFS") &&
	flux job wait-event -t 60 $x1 start &&
	x2=$(flux submit -N1 --setattr=system.bank=chemistry --setattr=system.dw="$XFS" true) &&
	until_true 30 waits_on_limit $x2 &&
	until_true 30 waits_for $x2 "^max_user_jobs 1: user $OWNER_NAME holds 10 GiB in 1 job$" &&
	sed -i "/^max_user_jobs = 1$/d" conf/instance.toml &&
	flux config reload &&
	flux job wait-event -t 60 $x2 clean &&
	completed $x2 &&
	release_job x1 $x1 &&
	flux job wait-event -t 60 $x1 clean &&
	completed $x1 &&
	held $x1 physics $OWNER 10 &&
	held $x2 chemistry $OWNER 10
'

test_expect_success 'a bank without a table of its own has the top-level max_bank_jobs' '
	d1=$(submit_held d1 -N1 --setattr=system.dw="$XFS") &&
	d2=$(submit_held d2 -N1 --setattr=system.dw="$XFS") &&
	d3=$(submit_held d3 -N1 --setattr=system.dw="$XFS") &&
	for id in $d1 $d2 $d3; do
		flux job wait-event -t 60 $id start || return 1
	done &&
	d4=$(flux submit -N1 --setattr=system.dw="$XFS" true) &&
	until_true 30 waits_on_limit $d4 &&
	until_true 30 waits_for $d4 "^max_bank_jobs 3: bank $OWNER_NAME holds 30 GiB in 3 jobs$" &&
	release_job d1 $d1 &&
	flux job wait-event -t 60 $d4 clean &&
	release_job d2 $d2 &&
	release_job d3 $d3 &&
	for id in $d1 $d2 $d3 $d4; do
		flux job wait-event -t 60 $id clean && completed $id &&
		held $id $OWNER_NAME $OWNER 10 || return 1
	done
'

#
# flux dws usage: what the jobs above held
#

# usage_rows KEY: flux dws usage -A --by=KEY --json (usage.KEY.json)
usage_rows() {
	dws usage -A --by=$1 --json >usage.$1.json
}
# usage_of KEY FIELD VALUE WHAT: WHAT (jobs, gib_hours) of the rows of
# usage.KEY.json whose FIELD is VALUE, added up
usage_of() {
	jq --arg f $2 --arg v "$3" \
		"[.groups[] | select((.[\$f] | tostring) == \$v) | .$4] | add // 0" usage.$1.json
}
# held_count COLUMN VALUE: the jobs of held.list whose COLUMN (2: bank,
# 3: userid) is VALUE
held_count() {
	awk -v c=$1 -v v="$2" "\$c == v" held.list | wc -l
}
# held_bound COLUMN VALUE: the most GiB-hours those jobs can have held:
# their GiB over their whole life, from submit (to the second before: a
# Workflow's creationTimestamp, where usage starts, is in whole seconds)
# to inactive
held_bound() {
	awk -v c=$1 -v v="$2" "\$c == v { print \$1, \$4 }" held.list |
	while read id gib; do
		echo "$gib $(flux jobs -no "{t_submit} {t_inactive}" $id)"
	done | awk "{ s += \$1 * (\$3 - int(\$2)) / 3600 } END { print s + 0 }"
}
# usage_matches COLUMN KEY FIELD VALUE: flux dws usage --by=KEY counts the
# jobs of held.list whose COLUMN is VALUE (its rows' FIELD), and GiB-hours
# above 0 within their bound
usage_matches() {
	jobs=$(usage_of $2 $3 "$4" jobs) &&
	gh=$(usage_of $2 $3 "$4" gib_hours) &&
	bound=$(held_bound $1 "$4") &&
	echo "$2 $4: $jobs jobs (held $(held_count $1 "$4")), $gh GiB-hours (at most $bound)" &&
	test "$jobs" = "$(held_count $1 "$4")" &&
	awk -v g="$gh" -v b="$bound" "BEGIN { exit !(g > 0 && g <= b) }"
}

test_expect_success 'flux dws usage --by=bank: each bank'"'"'s jobs and GiB-hours' '
	usage_rows bank &&
	usage_matches 2 bank bank physics &&
	usage_matches 2 bank bank chemistry &&
	usage_matches 2 bank bank $OWNER_NAME
'

test_expect_success 'flux dws usage --by=user and --by=project' '
	usage_rows user &&
	usage_matches 3 user userid $OWNER &&
	usage_matches 3 user userid $OTHER &&
	test "$(usage_of user userid $OTHER user)" = "\"$OTHER_NAME\"" &&
	usage_rows project &&
	test "$(usage_of project project quantum jobs)" = \
		"$(awk -v u=$OTHER "\$2 == \"physics\" && \$3 == u" held.list | wc -l)"
'

test_expect_success 'flux dws usage --by=type: every job is xfs, the total the banks'"'"' sum' '
	usage_rows type &&
	test "$(usage_of type type xfs jobs)" = "$(wc -l <held.list)" &&
	jq -e ".total.jobs == $(wc -l <held.list)" usage.type.json &&
	jq -s -e "(.[0].total.gib_hours - ([.[1].groups[].gib_hours] | add))
		| (if . < 0 then -. else . end) < 0.001" usage.type.json usage.bank.json
'

test_expect_success 'flux dws usage -o prints the fields asked for' '
	dws usage -A --by=bank -o "{bank} {jobs}" >usage.o &&
	grep "^physics *$(held_count 2 physics)$" usage.o &&
	grep "^chemistry *$(held_count 2 chemistry)$" usage.o
'

#
# the hold of rabbit jobs in PRIORITY across a restart (t3305) and
# mf_priority.so: its priority comes after dws-jobtap.so's "unavailable"
# when it is loaded after it, and the job manager takes the last
# plugin's answer.  A limit of that order, not of the bank limits: the
# plugin says so in the log at load (case 1) and flux-jobtap-dws(1) asks
# for dws-jobtap.so after mf_priority.so; the known breakage below is it
#
test_expect_success 'rabbit jobs queued, the instance restarted without the dws service' '
	queue_behind_big &&
	restart_without_service
'

test_expect_failure 'mf_priority last: the accounting push leaves them held in PRIORITY' '
	held_after_push
'

test_expect_success 'mf_priority last: the service loaded, they run; Workflows and banks kept' '
	run_when_service_loads
'

#
# the second instance: mf_priority.so loaded before dws-jobtap.so, the
# bank limits in its config from the start
#
test_expect_success 'a second instance: mf_priority.so before dws-jobtap.so, the limits in its config' '
	stop_accounting &&
	stop_rabbit_instance &&
	rm -rf "$RUNDIR" "$STATEDIR" &&
	RABBIT_PLUGINS_BEFORE=$MF_PRIORITY_CONF &&
	RABBIT_PLUGINS_AFTER= &&
	RABBIT_EXTRA_CONF=$BANK_LIMITS &&
	start_bank_instance &&
	test "$(plugin_order)" = "mf_priority.so dws-jobtap.so " &&
	flux dmesg >order.dmesg &&
	test_must_fail grep "is loaded after dws-jobtap.so" order.dmesg &&
	HELD_LIST=held-second.list &&
	start_accounting "$DB" &&
	pushed &&
	trace_creates
'

test_expect_success 'a job without a bank gets its default bank before DEPEND (mf_priority first)' '
	default_bank_in_order
'

test_expect_success 'dws.create carries the bank and the project (mf_priority first)' '
	test_when_finished stop_trace &&
	creates_carry_banks
'

test_expect_success 'mf_priority first: a job of the full bank waits, the other bank goes' '
	p1=$(submit_held q1 -N1 --setattr=system.bank=physics --setattr=system.dw="$XFS") &&
	p2=$(submit_held q2 -N1 --setattr=system.bank=physics --setattr=system.dw="$XFS") &&
	flux job wait-event -t 60 $p1 start &&
	flux job wait-event -t 60 $p2 start &&
	g=$(submit_as $OTHER -N1 --setattr=system.dw="$XFS" true) &&
	until_true 30 waits_on_limit $g &&
	until_true 30 waits_for $g "^max_bank_jobs 2: bank physics holds 20 GiB in 2 jobs$" &&
	c=$(flux submit -N1 --setattr=system.bank=chemistry --setattr=system.dw="$XFS" true) &&
	flux job wait-event -t 60 $c clean &&
	completed $c &&
	release_job q1 $p1 &&
	flux job wait-event -t 60 $g clean &&
	completed $g &&
	release_job q2 $p2 &&
	flux job wait-event -t 60 $p2 clean &&
	completed $p1 && completed $p2
'

test_expect_success 'mf_priority first: a job alone over max_bank_gib is refused' '
	big=$(submit_as $OTHER -N2 --setattr=system.dw="#DW jobdw type=xfs capacity=20GiB name=big" true) &&
	flux job wait-event -t 60 $big clean &&
	flux job eventlog -f json $big | jq -r "select(.name == \"exception\") | .context" >big2.exc &&
	jq -e ".type == \"dws-create\"" big2.exc &&
	jq -r .note big2.exc | grep "Requested a total of 40 GiB of rabbit storage but max_bank_gib is 30 GiB (bank physics)" &&
	test_must_fail kubectl get workflow $(wfname $big) 2>/dev/null
'

test_expect_success 'mf_priority first: rabbit jobs queued, the instance restarted without the service' '
	queue_behind_big &&
	restart_without_service
'

test_expect_success 'mf_priority first: the accounting push leaves them held in PRIORITY' '
	held_after_push
'

test_expect_success 'mf_priority first: the service loaded, they run; Workflows and banks kept' '
	run_when_service_loads
'

test_expect_success 'stop the instance, flux-accounting and the emulator' '
	stop_accounting &&
	stop_rabbit_instance &&
	stop_emulator &&
	rm -rf "$RUNDIR" "$STATEDIR"
'

test_done
