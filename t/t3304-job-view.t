#!/bin/sh
test_description='a rabbit job explained to its owner (issue 35)

Under a real 4-broker instance with Fluxion and the dws service against
the emulator: flux dws jobs and flux dws job show a job to its owner
(a copy_in in progress with dcp'"'"'s figures, the timeline, the mounts),
refuse it to another user (FLUX_HANDLE_USERID/ROLEMASK, which flux-core
honours for the instance owner), show an ended job from its KVS record
with no service loaded, and say a failed mount and a failed copy_out in
plain words, DWS'"'"' own text kept in the exception note.'

. "$(dirname "$0")"/sharness.sh

skip_all_unless_rabbit_jobs

XFS="#DW jobdw type=xfs capacity=10GiB name=scratch"
STAGED_IN="$XFS
#DW copy_in source=/lus/global/in destination=\$DW_JOB_scratch/"
STAGED_OUT="$XFS
#DW copy_out source=\$DW_JOB_scratch/ destination=/lus/global/out"
# a user other than the instance owner
OTHER=$(python3 -c 'import os; print(os.getuid() + 4242)')

dws() {
	flux python -m flux_dws "$@"
}
as_other() {
	FLUX_HANDLE_USERID=$OTHER FLUX_HANDLE_ROLEMASK=0x2 "$@"
}
copy_in_moving() {
	dws job --json "$1" >moving.json &&
	jq -e "[.datamovements[] | select(.initiator == \"copy_in\")
		| .commandStatus.progress // 0] | any(. > 0)" moving.json >/dev/null
}
exception_note() {
	flux job eventlog -f json "$1" |
		jq -r 'select(.name == "exception" and .context.severity == 0) | .context.note'
}
# the plain sentence beside a note: the dws-explanation entry that follows
# the exception in the eventlog, for that very note; the job'"'"'s KVS record
# keeps the same (data.dws.explanation)
explanation() {
	flux job eventlog -f json "$1" >expl.eventlog &&
	note=$(jq -r 'select(.name == "exception" and .context.severity == 0) | .context.note' expl.eventlog) &&
	jq -r --arg note "$note" 'select(.name == "dws-explanation" and .context.note == $note)
		| .context.explanation' expl.eventlog >expl.event &&
	jq -s -e 'map(.name) | index("exception") < index("dws-explanation")' expl.eventlog >/dev/null &&
	flux job info "$1" data.dws.explanation | jq -r --arg note "$note" \
		'select(.note == $note) | .explanation' >expl.kvs &&
	test -s expl.event &&
	test_cmp expl.event expl.kvs &&
	cat expl.event
}

test_expect_success 'start the emulator and a rabbit instance' '
	start_emulator --system kind --latency zero &&
	RABBIT_EXTRA_CONF="tc_timeout = 3" &&
	rabbit_instance_config "$(pwd)" &&
	start_rabbit_instance "$(pwd)"
'

test_expect_success 'no rabbit job yet: flux dws jobs prints the header only' '
	dws jobs >none.out &&
	test "$(wc -l <none.out)" -eq 1 &&
	grep "^JOBID *USER *PHASE *STATE *DIRECTIVES *RABBITS *TIME" none.out
'

# The copy_in is held (its two copies, one per node, move, and end only
# when released): the points
# up to the record's are made while it is under way, however long a
# loaded machine (CI's 2 cores) takes over them
test_expect_success 'a copy_in under way: its owner sees it moving' '
	flux-dws fault hold --kind datamovement --index 1 --state DataIn --seconds 10 &&
	id=$(flux submit -N2 --setattr=system.dw="$STAGED_IN" true) &&
	echo $id >datain.id &&
	until_true 60 copy_in_moving $id &&
	jq -e ".phase == \"datain\" and .state == \"DataIn\"" moving.json &&
	jq -e "[.directives[].command] == [\"jobdw\", \"copy_in\"]" moving.json &&
	jq -e ".timeline.DataIn.asked and (.timeline.DataIn.done | not)" moving.json &&
	jq -e ".timeline.Setup.done >= .timeline.Setup.asked" moving.json &&
	dws job $id >moving.out &&
	cat moving.out &&
	grep "phase datain: Workflow DataIn" moving.out &&
	grep "copy_in /lus/global/in -> /mnt/nnf/.*: Running, [0-9]*% after" moving.out &&
	grep "Copied .* GiB" moving.out &&
	grep "^  0  jobdw xfs, capacity 10GiB, name scratch, on kind-worker" moving.out &&
	grep "^  DataIn " moving.out &&
	dws jobs >jobs.out &&
	cat jobs.out &&
	grep "^$id .* datain *DataIn .*xfs 10GiB, copy_in *kind-worker" jobs.out
'

test_expect_success 'job ids as flux-core prints them: the locale and FLUX_F58_FORCE_ASCII' '
	id=$(cat datain.id) &&
	utf8=$(LC_ALL=C.UTF-8 flux job id --to=f58 $id) &&
	plain=$(flux job id --to=f58plain $id) &&
	test "$utf8" != "$plain" &&
	LC_ALL=C.UTF-8 dws jobs >utf8.out &&
	grep "^$utf8 " utf8.out &&
	LC_ALL=C.UTF-8 dws job $id | head -1 | grep "^job $utf8: owner" &&
	test "$(LC_ALL=C flux job id --to=f58 $id)" = "$plain" &&
	LC_ALL=C dws jobs >c.out &&
	grep "^$plain " c.out &&
	LC_ALL=C dws job $id | head -1 | grep "^job $plain: owner" &&
	LC_ALL=C.UTF-8 FLUX_F58_FORCE_ASCII=1 dws jobs >forced.out &&
	grep "^$plain " forced.out &&
	LC_ALL=C.UTF-8 dws status >status.out &&
	grep "^ *$utf8 " status.out &&
	LC_ALL=C.UTF-8 dws jobs --json | jq -e ".jobs[0].f58 == \"$plain\"" &&
	LC_ALL=C.UTF-8 dws job --json $id | jq -e ".f58 == \"$plain\""
'

test_expect_success 'nothing secret in the answer' '
	test_must_fail grep -i "token\|secret" moving.json
'

test_expect_success 'another user: refused the job, shown none of it' '
	id=$(cat datain.id) &&
	test_must_fail as_other flux python -m flux_dws job $id 2>other.err &&
	cat other.err &&
	grep "belongs to another user" other.err &&
	test "$(wc -l <other.err)" -eq 1 &&
	as_other flux python -m flux_dws jobs >other.out &&
	test "$(wc -l <other.out)" -eq 1 &&
	test_must_fail as_other flux python -m flux_dws jobs -A 2>otherA.err &&
	grep "only the instance owner" otherA.err &&
	dws jobs -A >ownerA.out &&
	grep "^$id " ownerA.out
'

# the dws.job answer but what only an answer has (flux_dws.jobrecord.ANSWER_ONLY)
as_recorded() {
	jq -S "del(.success, .phase_seconds, .datamovements, .datamovements_error,
		.source, .f58, .now, .timing, .record_keys, .t_submit, .explanation,
		.dataout, .teardown, .result, .t_inactive)" "$@"
}
# the answer, then the record: the same view (retried: the job may move
# on between the two reads)
record_is_answer() {
	dws job --json $1 >live.json &&
	flux job info $1 data.dws.job >record.json &&
	as_recorded live.json >live.cmp &&
	jq -S "del(.datamovements)" record.json >record.cmp &&
	cmp -s record.cmp live.cmp
}
test_expect_success 'the job'"'"'s KVS record is the view dws.job answers' '
	until_true 30 record_is_answer $(cat datain.id) &&
	jq -e ".directives | length == 2" record.json
'

test_expect_success 'the copy_in ends: the job runs and ends' '
	flux-dws fault clear &&
	flux-dws fault release | jq -e ".released == 2" &&
	flux job wait-event -t 120 $(cat datain.id) clean
'

test_expect_success 'the ended job reads back its last record whole' '
	id=$(cat datain.id) &&
	flux job info $id data.dws.job >last.json &&
	jq -e ".phase == \"deleting\" and .state == \"Teardown\"" last.json &&
	dws job --json $id >ended_view.json &&
	jq -e ".phase == \"inactive\" and .source == \"kvs\"" ended_view.json &&
	jq -S "del(.phase)" last.json >last.cmp &&
	jq -S --slurpfile last last.json "with_entries(select(.key as \$k
		| \$last[0] | has(\$k))) | del(.phase)" ended_view.json >ended_view.cmp &&
	test_cmp last.cmp ended_view.cmp
'

test_expect_success 'flux dws jobs -o on the ended job: fields, presets, --no-header, help' '
	id=$(cat datain.id) &&
	dec=$(flux job id --to=dec $id) &&
	plain=$(flux job id --to=f58plain $id) &&
	LC_ALL=C dws jobs --no-header -o "{id} {id.f58} {userid} {workflow}" $id >fields.out &&
	cat fields.out &&
	test "$(cat fields.out)" = "$dec $plain $(id -u) fluxjob-$dec" &&
	LC_ALL=C dws jobs -o long $id >long.out &&
	cat long.out &&
	grep "^JOBID *USER *PHASE *STATE *DIRECTIVES *RABBITS *WORKFLOW *TIME *ERROR$" long.out &&
	grep "^$plain .* fluxjob-$dec " long.out &&
	dws jobs -o help >help.out &&
	grep "^  id.f58  *JOBID" help.out &&
	test_expect_code 2 dws jobs -o "{jobid}" 2>badfield.err &&
	grep "^flux-dws jobs: error: argument -o/--format: unknown field .jobid." badfield.err
'

test_expect_success 'not a rabbit job, malformed and unknown ids: one line, exit 1' '
	plain=$(flux submit -N1 true) &&
	flux job wait-event -t 30 $plain clean &&
	test_must_fail dws job $plain 2>plain.err &&
	grep "not a rabbit job" plain.err &&
	test_must_fail dws job not-a-job 2>bad.err &&
	grep "malformed job id" bad.err &&
	test_must_fail dws job 123456789 2>unknown.err &&
	grep "no such job" unknown.err &&
	test "$(wc -l <unknown.err)" -eq 1 &&
	test_must_fail dws jobs $plain >plain_line.out 2>plain_line.err &&
	grep "job $plain: not a rabbit job of yours" plain_line.err &&
	test "$(wc -l <plain_line.out)" -eq 1 &&
	test_must_fail dws jobs not-a-job 2>bad_line.err &&
	grep "malformed job id .not-a-job." bad_line.err &&
	test_must_fail dws job 18446744073709551616 2>big.err &&
	grep "malformed job id .18446744073709551616.$" big.err
'

test_expect_success 'bad counts, timeouts and options: one line, exit 2, with the service' '
	test_expect_code 2 dws jobs -a -n -5 2>n.err &&
	grep "^flux-dws jobs: error: argument -n/--count: must be at least 1 (got -5)$" n.err &&
	test_expect_code 2 dws jobs -a -n 0 2>n0.err &&
	grep "must be at least 1 (got 0)" n0.err &&
	test_expect_code 2 dws wait -t -1 $(cat datain.id) 2>t.err &&
	grep "^flux-dws wait: error: argument -t/--timeout: must be more than 0 (got -1)$" t.err &&
	test_expect_code 2 dws wait -t nan $(cat datain.id) 2>tnan.err &&
	grep "is not a finite number" tnan.err &&
	for c in "job 1" jobs "wait 1" rabbits status sync; do
		test_expect_code 2 dws $c --bogus 2>opt.err &&
		grep "^flux-dws ${c%% *}: error: unrecognized arguments: --bogus$" opt.err ||
		return 1
	done
'

in_datain() {
	dws jobs --json "$1" | jq -e ".jobs[0].phase == \"datain\"" >/dev/null
}

test_expect_success 'an active job with no service loaded: its KVS record, exit 1' '
	flux-dws fault hold --kind datamovement --index 1 --state DataIn &&
	active=$(flux submit -N1 --setattr=system.dw="$STAGED_IN" true) &&
	echo $active >active.id &&
	until_true 60 in_datain $active &&
	flux module remove dws &&
	test_must_fail dws job $active >active.out 2>active.err &&
	cat active.out active.err &&
	grep "active, unknown; read from the job'"'"'s KVS record" active.out &&
	grep "^  Setup " active.out &&
	grep "no dws service is loaded" active.err
'

test_expect_success 'an ended job with no service loaded: from its KVS record' '
	id=$(cat datain.id) &&
	dws job $id >ended.out &&
	cat ended.out &&
	grep "inactive (COMPLETED)" ended.out &&
	grep "^  DataIn  *+" ended.out &&
	grep "^  Teardown " ended.out &&
	grep "data.dws.workflow" ended.out &&
	grep "data.dws.timeline.<state>: .*datain" ended.out &&
	grep "DW_JOB_scratch=" ended.out &&
	dws job --json $id >ended.json &&
	jq -e ".source == \"kvs\" and .timeline.DataIn.done > .timeline.DataIn.asked" ended.json &&
	test_must_fail grep -i "token\|secret" ended.json &&
	dws jobs -a >ended_list.out 2>ended_list.err &&
	grep "not loaded" ended_list.err &&
	grep "^$id .* inactive *COMPLETED" ended_list.out &&
	test_must_fail as_other flux python -m flux_dws job $id 2>ended_other.err &&
	grep "belongs to another user" ended_other.err
'

test_expect_success 'load the service again: the active job goes on' '
	flux module load "$top_srcdir/src/modules/dws.py" &&
	flux python -m flux_dws sync &&
	flux-dws fault clear &&
	flux-dws fault release | jq -e ".released == 1" &&
	flux job wait-event -t 90 $(cat active.id) clean &&
	flux job status $(cat active.id)
'

test_expect_success 'a failed mount: the note is DWS'"'"' text, the plain words beside it' '
	for c in compute-01 compute-02 compute-03 compute-04; do
		flux-dws fault add --kind clientmount --compute $c --state PreRun \
			--severity Major --message "mount.xfs: wrong fs type" >/dev/null || return 1
	done &&
	id=$(flux submit -N1 --setattr=system.dw="$XFS" true) &&
	flux job wait-event -t 60 $id clean &&
	flux-dws fault clear &&
	exception_note $id >mount.note &&
	cat mount.note &&
	grep "^DWS/Rabbit interactions failed: workflow in TransientCondition too long in PreRun" mount.note &&
	grep "Node: compute-0[1-4]: mount/unmount failed: unable to mount file system: mount.xfs: wrong fs type" mount.note &&
	test_must_fail grep " -- " mount.note &&
	explanation $id >mount.why &&
	grep "mount" mount.why &&
	dws job $id >mount.out &&
	cat mount.out &&
	sed -n "/^error:/,\$p" mount.out >mount.err &&
	grep "^  DWS said: DWS/Rabbit interactions failed" mount.err &&
	test "$(sed -n 2p mount.err)" = "  $(cat mount.why)"
'

test_expect_success 'a failed copy_out: the note says so plainly, with DWS'"'"' message' '
	flux-dws fault add --kind datamovement --index 1 --state DataOut \
		--message "dcp: cannot open /lus/global/out: Permission denied" &&
	id=$(flux submit -N1 --setattr=system.dw="$STAGED_OUT" true) &&
	flux job wait-event -t 60 $id clean &&
	flux-dws fault clear &&
	exception_note $id >copy.note &&
	cat copy.note &&
	grep "data movement operation failed during .DataOut." copy.note &&
	grep "Permission denied" copy.note &&
	test_must_fail grep " -- " copy.note &&
	explanation $id >copy.why &&
	grep "copy_out" copy.why &&
	dws job $id >copy.out &&
	cat copy.out &&
	grep "^  DWS said: .*Permission denied" copy.out &&
	dws jobs -a $id >copy_line.out &&
	grep "^$id .*inactive" copy_line.out
'

test_expect_success 'a guest'"'"'s dws jobs -a: the owner'"'"'s inactive jobs are not shown' '
	dws jobs -a >owner_all.out &&
	test "$(grep -c " inactive " owner_all.out)" -ge 3 &&
	as_other flux python -m flux_dws jobs -a >guest_all.out 2>guest_all.err &&
	cat guest_all.out guest_all.err &&
	test "$(wc -l <guest_all.out)" -eq 1 &&
	grep "^JOBID *USER *PHASE" guest_all.out &&
	test_must_be_empty guest_all.err &&
	as_other flux python -m flux_dws jobs -a --json >guest_all.json &&
	jq -e ".jobs | length == 0" guest_all.json &&
	test_must_fail as_other flux python -m flux_dws jobs -a -A >guest_A.out 2>guest_A.err &&
	cat guest_A.err &&
	grep -i "instance owner\|not permitted\|EPERM" guest_A.err
'

test_expect_success 'stop the instance and the emulator' '
	stop_rabbit_instance &&
	stop_emulator
'

test_done
