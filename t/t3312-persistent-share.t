#!/bin/sh
test_description='persistent storage a project shares (issue 47 item 3)

Under a real 4-broker instance with Fluxion and the dws service against
the emulator: flux dws persistent list shows every PSI (type, capacity,
owner by name, state, shared or not, the jobs using it now) to every
user and no Secret; a persistentdw of the owner'"'"'s storage by another
user is refused with DWS'"'"' note byte for byte and, beside it, who owns
the storage and the command that shares it; flux dws persistent share
and unshare set and remove the ignore-uid annotation as the nnf CLI
does, for the PSI'"'"'s owner and the instance owner only; another
user'"'"'s destroy_persistent is refused at dws.create naming the owner; an unknown
name, a malformed one, a PSI being deleted and an API server that
refuses the patch each give one line and change nothing.'

. "$(dirname "$0")"/sharness.sh

skip_all_unless_rabbit_jobs
# a job of another user runs under a stand-in IMP that drops to its uid
test "$(id -u)" = 0 && test_set_prereq ROOT

OWNER=$(id -u)
OWNER_NAME=$(id -un)
# another user (a passwd entry if there is one, for the stand-in IMP)
OTHER=$(python3 -c '
import pwd
users = [p for p in pwd.getpwall() if p.pw_uid not in (0, 65534)]
print(users[0].pw_uid if users else 65534)')
IGNORE_UID=dataworkflowservices.github.io/ignore-uid

dws() {
	flux python -m flux_dws "$@"
}
as_other() {
	FLUX_HANDLE_USERID=$OTHER FLUX_HANDLE_ROLEMASK=0x2 "$@"
}
annotation() {
	kubectl get persistentstorageinstance "$1" -o json |
		jq -r --arg k $IGNORE_UID '.metadata.annotations[$k] // "none"'
}
# one_line FILE: a single line of error and no traceback
one_line() {
	cat "$1" &&
	test "$(wc -l <"$1")" = 1 &&
	test_must_fail grep Traceback "$1"
}

test_expect_success 'start the emulator and a rabbit instance that runs other users'"'"' jobs' '
	test "$OTHER" != "$OWNER" &&
	start_emulator --system kind --latency zero &&
	rabbit_instance_config "$(pwd)" &&
	guest_jobs_config "$(pwd)" &&
	start_rabbit_instance "$(pwd)"
'

test_expect_success 'no persistent storage yet: the header alone' '
	dws persistent list >none.out &&
	cat none.out &&
	test "$(wc -l <none.out)" = 1 &&
	grep "^NAME *TYPE *CAPACITY *OWNER *STATE *SHARED *JOBS$" none.out
'

test_expect_success 'the owner'"'"'s file system is listed to every user, never a Secret' '
	flux run -N1 --setattr=system.dw="#DW create_persistent type=xfs capacity=10GiB name=proj" true &&
	dws persistent list >list.out &&
	cat list.out &&
	grep "^proj *xfs *10GiB *$OWNER_NAME *Active *no *-$" list.out &&
	as_other flux python -m flux_dws persistent list --json >guest.json &&
	jq -e ".persistent | length == 1" guest.json &&
	jq -e ".persistent[0] | .name == \"proj\" and .userid == $OWNER and .shared == false
		and .type == \"xfs\" and .capacity == \"10GiB\" and .state == \"Active\"
		and .owner == \"$OWNER_NAME\"
		and .jobs == []" guest.json &&
	test_must_fail grep -i -e token -e secret guest.json
'

test_expect_success 'another user'"'"'s persistentdw: DWS'"'"' note whole, and who owns it beside it' '
	id=$(submit_as $OTHER -N1 --setattr=system.dw="#DW persistentdw name=proj" true) &&
	flux job wait-event -t 60 $id clean &&
	flux job eventlog -f json $id >refused.eventlog &&
	jq -r "select(.name == \"exception\" and .context.severity == 0) | .context.note" \
		refused.eventlog >refused.note &&
	cat refused.note &&
	test "$(cat refused.note)" = "DWS/Rabbit interactions failed: workflow hit an error: DW Directive 0: User error: User ID does not match existing persistent storage" &&
	explained $id "$(cat refused.note)" &&
	jq -r "select(.name == \"dws-explanation\") | .context.explanation" refused.eventlog >refused.expl &&
	cat refused.expl &&
	grep "^That persistent storage belongs to another user, who created it." refused.expl &&
	grep "^.proj. belongs to $OWNER_NAME (uid $OWNER). That user (or the instance owner) can share it with: flux dws persistent share proj$" refused.expl
'

test_expect_success 'a guest may not share the owner'"'"'s storage (one line, nothing written)' '
	test_must_fail as_other flux python -m flux_dws persistent share proj >g.out 2>g.err &&
	one_line g.err &&
	grep "belongs to another user; only its owner or the instance owner may share it" g.err &&
	test "$(annotation proj)" = none &&
	test_must_fail as_other flux python -m flux_dws persistent unshare proj 2>g2.err &&
	one_line g2.err
'

test_expect_success 'bad names: an unknown one (exit 1), a malformed one (exit 2), one line each' '
	test_expect_code 1 dws persistent share nosuch 2>unknown.err &&
	one_line unknown.err &&
	grep "no persistent storage named .nosuch." unknown.err &&
	test_expect_code 2 dws persistent share Not_A_Name 2>bad.err &&
	grep -v "^usage:" bad.err >bad.msg &&
	one_line bad.msg &&
	grep "is not a persistent storage name" bad.msg &&
	test_expect_code 2 dws persistent 2>noverb.err &&
	grep "a VERB is required" noverb.err
'

test_expect_success 'the owner shares it: the annotation the nnf CLI sets, and the list says so' '
	dws persistent share proj >share.out &&
	cat share.out &&
	grep "^proj is now shared" share.out &&
	test "$(annotation proj)" = true &&
	dws persistent list >shared.out &&
	grep "^proj *xfs *10GiB *$OWNER_NAME *Active *yes *-$" shared.out &&
	dws persistent share proj >again.out &&
	grep "^proj was already shared$" again.out
'

test_expect_success 'flux dws persistent list -o: fields, presets, --no-header, help' '
	dws persistent list -n -o "{name}:{owner}:{userid}:{shared}" >fields.out &&
	test "$(cat fields.out)" = "proj:$OWNER_NAME:$OWNER:yes" &&
	dws persistent list -o long >long.out &&
	grep "^NAME *TYPE *CAPACITY *OWNER *USERID *STATE *SHARED *JOBS$" long.out &&
	grep "^proj *xfs *10GiB *$OWNER_NAME *$OWNER *Active *yes *-$" long.out &&
	dws persistent list -o help | grep "^  userid  *USERID" &&
	test_expect_code 2 dws persistent list -o "{name} {size}" 2>badfield.err &&
	grep "error: argument -o/--format: unknown field .size." badfield.err
'

test_expect_success ROOT 'shared, the other user'"'"'s job uses it, and the list shows the job' '
	id=$(submit_as $OTHER -N1 --setattr=system.dw="#DW persistentdw name=proj" \
		sh -c "printenv DW_PERSISTENT_proj; sleep inf") &&
	echo $id >user.id &&
	flux job wait-event -t 60 $id start &&
	dws persistent list --json >using.json &&
	jq -e --argjson id "$(flux job id --to=dec $id)" ".persistent[0].jobs == [\$id]" using.json &&
	dws persistent list >using.out &&
	cat using.out &&
	grep "^proj .* yes *$id$" using.out &&
	flux cancel $id &&
	flux job wait-event -t 60 $id clean &&
	workflow_gone $id &&
	flux python -c "import flux; flux.Flux().rpc(\"dws.watch_test\").get()" &&
	dws persistent list --json | jq -e ".persistent[0].jobs == []"
'

test_expect_success 'the API server refuses the patch: its words, one line, nothing changed' '
	flux-dws fault api --status 403 --method PATCH --count 1 \
		--path "persistentstorageinstances/proj" \
		--message "persistentstorageinstances.dataworkflowservices.github.io \"proj\" is forbidden" &&
	test_expect_code 1 dws persistent unshare proj 2>api.err &&
	one_line api.err &&
	grep "cannot annotate .proj.: .* is forbidden" api.err &&
	test "$(annotation proj)" = true
'

test_expect_success 'the owner unshares it: the annotation is gone' '
	dws persistent unshare proj >unshare.out &&
	grep "^proj is now not shared" unshare.out &&
	test "$(annotation proj)" = none &&
	dws persistent list >unshared.out &&
	grep "^proj .* Active *no *-$" unshared.out
'

test_expect_success 'a PSI being deleted is not shared (one line)' '
	cat >going.json <<-EOF &&
	{"apiVersion": "dataworkflowservices.github.io/v1alpha7",
	 "kind": "PersistentStorageInstance",
	 "metadata": {"name": "going", "finalizers": ["test.flux-dws.io/hold"]},
	 "spec": {"name": "going", "fsType": "xfs", "userID": $OWNER, "state": "Active",
	          "dwDirective": "#DW create_persistent type=xfs capacity=1GiB name=going",
	          "consumerReferences": []}}
	EOF
	kubectl create -f going.json &&
	kubectl delete persistentstorageinstance going --wait=false &&
	flux python -c "import flux; flux.Flux().rpc(\"dws.watch_test\").get()" &&
	dws persistent list >going.out &&
	grep "^going *xfs *1GiB *$OWNER_NAME *Destroying *no *-$" going.out &&
	test_expect_code 1 dws persistent share going 2>going.err &&
	one_line going.err &&
	grep "is being deleted" going.err &&
	test "$(annotation going)" = none &&
	kubectl patch persistentstorageinstance going --type=merge \
		-p "{\"metadata\": {\"finalizers\": null}}" &&
	kubectl wait --for=delete persistentstorageinstance/going --timeout=60s
'

test_expect_success 'another user'"'"'s destroy_persistent: refused at dws.create, the owner named' '
	id=$(submit_as $OTHER -N1 --setattr=system.dw="#DW destroy_persistent name=proj" true) &&
	flux job wait-event -t 60 $id clean &&
	flux job eventlog $id >destroy.events &&
	cat destroy.events &&
	note="DWS workflow interactions failed: only its owner may destroy persistent storage (#DW destroy_persistent): '"'"'proj'"'"' belongs to $OWNER_NAME (uid $OWNER)" &&
	grep "exception type=\"dws-create\" severity=0 note=\"$note\"" destroy.events &&
	explained $id "$note" &&
	test_must_fail grep "^[0-9.]* alloc" destroy.events &&
	test_must_fail kubectl get workflow $(wfname $id) &&
	kubectl get persistentstorageinstance proj
'

test_expect_success 'the owner destroys it; the list is empty again' '
	flux run -N1 --setattr=system.dw="#DW destroy_persistent name=proj" true &&
	kubectl wait --for=delete persistentstorageinstance/proj --timeout=60s &&
	flux python -c "import flux; flux.Flux().rpc(\"dws.watch_test\").get()" &&
	dws persistent list >empty.out &&
	test "$(wc -l <empty.out)" = 1
'

test_expect_success 'stop the instance and the emulator' '
	stop_rabbit_instance &&
	stop_emulator &&
	rm -rf "$RUNDIR"
'

test_done
