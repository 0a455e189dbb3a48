#!/bin/sh
test_description='other users: who may drive the dws service, and jobs that are not the owner'"'"'s

Under a real 4-broker instance with Fluxion and the dws service against
the emulator (issue 37, items 1 and 2):

- a guest (FLUX_HANDLE_USERID/FLUX_HANDLE_ROLEMASK, which flux-core
  honours for the instance owner) is refused EPERM every dws.* method the
  service exports but dws.rabbits, dws.jobs and dws.job (which answer a
  guest about its own jobs only) and dws.persistent-* (which decide who
  may share which storage), and every job-manager.dws.* service the
  jobtap plugin registers: the lists are read from the service and from
  libdws, so a method added there is tested here without a word written;
- a job submitted as another user (a J signed with mechanism none for
  that user, as flux-core'"'"'s own multi-user tests submit) runs as that
  user (a stand-in IMP drops to its uid; the instance runs as root) and
  reaches DWS as its real owner: the Workflow'"'"'s spec.userID and
  spec.groupID (from passwd), create_persistent refused to it while
  rabbit.restrict_persistent_creation is true and allowed once false, and
  persistentdw of the owner'"'"'s storage refused with DWS'"'"' words,
  then accepted once it carries the ignore-uid annotation (nnf-sos #616).'

. "$(dirname "$0")"/sharness.sh

skip_all_unless_rabbit_jobs
# a job of another user runs under a stand-in IMP that drops to its uid
test "$(id -u)" = 0 && test_set_prereq ROOT

OWNER=$(id -u)
# the other user: one with a passwd entry whose group differs from its
# uid (so groupID is seen to come from passwd), else nobody
OTHER=$(python3 -c '
import pwd
users = [p for p in pwd.getpwall() if p.pw_uid not in (0, 65534) and p.pw_uid != p.pw_gid]
print(users[0].pw_uid if users else 65534)')
OTHER_GID=$(python3 -c "import pwd; print(pwd.getpwuid($OTHER).pw_gid)")
XFS="#DW jobdw type=xfs capacity=10GiB name=scratch"

# workflow_spec ID: the job's Workflow as the service recorded it in the
# job's KVS directory (rabbit_workflow)
workflow_spec() {
    flux kvs get "$(flux job id --to=kvs "$1").rabbit_workflow" | jq -c .spec
}
exception_note() {
    flux job eventlog -f json "$1" |
        jq -r 'select(.name == "exception") | .context.type + ": " + .context.note'
}

test_expect_success 'start the emulator and a rabbit instance that runs other users'"'"' jobs' '
	echo "other user: $OTHER (group $OTHER_GID)" &&
	test "$OTHER" != "$OWNER" &&
	start_emulator --system kind --latency zero &&
	rabbit_instance_config "$(pwd)" "epilog-timeout = 60.0" &&
	guest_jobs_config "$(pwd)" &&
	start_rabbit_instance "$(pwd)"
'

#
# 1. who may drive the service: every method on the exported lists
#

# who.py MODE PAYLOAD: send PAYLOAD to every dws.<method> of the service's
# METHODS and every job-manager.dws.<service> of libdws' jobsm SERVICES
# and dataout SERVICES (the early-release hold of dependents),
# one line each: "TOPIC ANSWER" (ok or the errno's name).  MODE guest:
# each must be EPERM but dws.<GUEST_METHODS>, which must not be; MODE
# owner: none may be EPERM or ENOSYS (each is served).  Exit 1 otherwise.
# dws.config-reload is sent the instance's own config (a reload that
# changes nothing).
cat >who.py <<'PYEOF'
import errno, json, sys
import flux
from flux_dws.libdws.dataout import SERVICES as DATAOUT_SERVICES
from flux_dws.libdws.jobsm import SERVICES
from flux_dws.service.core import GUEST_METHODS, METHODS

mode, payload = sys.argv[1], json.loads(sys.argv[2])
h = flux.Flux()
topics = [f"dws.{m}" for m in METHODS] + [f"job-manager.dws.{s}" for s in SERVICES] \
    + [f"job-manager.dws.{s}" for s in DATAOUT_SERVICES]
guest = {f"dws.{m}" for m in GUEST_METHODS}
wrong = []
for topic in topics:
    body = payload
    if mode == "owner" and topic == "dws.config-reload":
        body = h.rpc("config.get").get()
    try:
        h.rpc(topic, body).get()
        answer = "ok"
    except OSError as exc:
        answer = errno.errorcode.get(exc.errno, str(exc.errno))
    print(topic, answer)
    if mode == "guest":
        # a guest method answers (maybe with an error of its own: dws.job of
        # a job with no Workflow is ENOENT); every other one is EPERM
        if (answer == "EPERM") == (topic in guest):
            wrong.append(topic)
    elif answer in ("EPERM", "ENOSYS"):
        wrong.append(topic)
print(f"{len(topics)} topics, wrong: {wrong}")
sys.exit(1 if wrong or len(topics) < 10 else 0)
PYEOF

# what each method would act on if it let a guest through: a Workflow for
# job 37037 created as the owner's (dws.create), its teardown and abort
GUEST_PAYLOAD="{\"jobid\": 37037, \"id\": 37037, \"userid\": $OWNER, \"failure_tolerance\": 0,
  \"resources\": [{\"type\": \"node\", \"count\": 1}], \"dw_directives\": \"$XFS\"}"

test_expect_success 'a guest is refused every dws.* method but the guest ones (rabbits, jobs, job, persistent-*), and the plugin services' '
	{ FLUX_HANDLE_ROLEMASK=0x2 FLUX_HANDLE_USERID=$OTHER \
		flux python who.py guest "$GUEST_PAYLOAD" >guest.out; rc=$?; } ;
	cat guest.out &&
	test $rc = 0 &&
	grep "^dws.create EPERM$" guest.out &&
	grep "^dws.rabbits ok$" guest.out &&
	grep "^dws.jobs ok$" guest.out &&
	grep "^dws.job ENOENT$" guest.out &&
	grep "^dws.persistent-list ok$" guest.out &&
	grep "^dws.persistent-share ok$" guest.out &&
	grep "^dws.persistent-unshare ok$" guest.out &&
	test "$(grep -c " ok$" guest.out)" = 5 &&
	grep "^job-manager.dws.epilog-remove EPERM$" guest.out &&
	grep "^job-manager.dws.dataout-begin EPERM$" guest.out &&
	grep "^job-manager.dws.dataout-end EPERM$" guest.out &&
	test_must_fail kubectl get workflow fluxjob-37037
'

test_expect_success 'the owner reaches every method on the lists (each is served)' '
	{ flux python who.py owner "{\"jobid\": \"x\", \"id\": \"x\"}" >owner.out; rc=$?; } ;
	cat owner.out &&
	test $rc = 0 &&
	flux python -m flux_dws status >/dev/null
'

#
# 2. a job of another user reaches DWS as its real owner
#

test_expect_success ROOT 'a job of another user runs as that user, its Workflow the user'"'"'s (userID, groupID)' '
	id=$(submit_as $OTHER -N1 --setattr=system.dw="$XFS" \
		sh -c "id -u; printenv DW_JOB_scratch") &&
	echo $id >other.id &&
	flux job wait-event -t 60 $id clean &&
	flux job eventlog $id >other.events &&
	grep "^[0-9.]* submit userid=$OTHER " other.events &&
	grep "epilog-finish description=\"dws-epilog\" status=0" other.events &&
	test_must_fail grep exception other.events &&
	flux job attach $id >other.out &&
	test "$(head -1 other.out)" = "$OTHER" &&
	grep "^/mnt/nnf/" other.out &&
	workflow_spec $id >other.spec &&
	cat other.spec &&
	jq -e ".userID == $OTHER and .groupID == $OTHER_GID" other.spec &&
	workflow_gone $id
'

test_expect_success ROOT 'create_persistent by another user is refused (restrict_persistent_creation)' '
	id=$(submit_as $OTHER -N1 \
		--setattr=system.dw="#DW create_persistent type=xfs capacity=10GiB name=u37" true) &&
	flux job wait-event -t 60 $id clean &&
	exception_note $id >refused.note &&
	cat refused.note &&
	grep "^dws-create: .*only the instance owner may create persistent storage (#DW create_persistent)" refused.note &&
	test_must_fail kubectl get persistentstorageinstance u37
'

test_expect_success ROOT '... allowed once rabbit.restrict_persistent_creation = false, and its own to destroy' '
	test_when_finished "cp instance.toml.keep conf/instance.toml && flux config reload" &&
	cp conf/instance.toml instance.toml.keep &&
	sed -i "s/^\[rabbit\]$/[rabbit]\nrestrict_persistent_creation = false/" conf/instance.toml &&
	grep -A1 "^\[rabbit\]" conf/instance.toml &&
	flux config reload &&
	id=$(submit_as $OTHER -N1 \
		--setattr=system.dw="#DW create_persistent type=xfs capacity=10GiB name=u37" true) &&
	flux job wait-event -t 60 $id clean &&
	flux job eventlog $id >u37.events &&
	test_must_fail grep exception u37.events &&
	kubectl get persistentstorageinstance u37 -o json | jq -e ".spec.userID == $OTHER" &&
	id=$(submit_as $OTHER -N1 --setattr=system.dw="#DW destroy_persistent name=u37" true) &&
	flux job wait-event -t 60 $id clean &&
	kubectl wait --for=delete persistentstorageinstance/u37 --timeout=60s
'

test_expect_success ROOT 'persistentdw of the owner'"'"'s storage by another user fails with DWS'"'"' words' '
	flux run -N1 --setattr=system.dw="#DW create_persistent type=xfs capacity=10GiB name=keep37" true &&
	kubectl get persistentstorageinstance keep37 -o json | jq -e ".spec.userID == $OWNER" &&
	id=$(submit_as $OTHER -N1 --setattr=system.dw="#DW persistentdw name=keep37" true) &&
	flux job wait-event -t 60 $id clean &&
	exception_note $id >pdw.note &&
	cat pdw.note &&
	grep "^exception: DWS/Rabbit interactions failed: workflow hit an error: DW Directive 0: User error: User ID does not match existing persistent storage$" pdw.note &&
	flux job eventlog -f json $id |
		jq -r "select(.name == \"dws-explanation\") | .context.explanation" >pdw.expl &&
	cat pdw.expl &&
	grep "^That persistent storage belongs to another user, who created it. Its owner or an admin can share it: kubectl annotate persistentstorageinstance NAME dataworkflowservices.github.io/ignore-uid=true.$" pdw.expl &&
	flux run -N1 --setattr=system.dw="#DW persistentdw name=keep37" printenv DW_PERSISTENT_keep37 >keep.out &&
	grep "^/mnt/nnf/" keep.out
'

test_expect_success ROOT 'once annotated ignore-uid, the other user'"'"'s persistentdw is accepted' '
	kubectl annotate persistentstorageinstance keep37 \
		dataworkflowservices.github.io/ignore-uid=true &&
	id=$(submit_as $OTHER -N1 --setattr=system.dw="#DW persistentdw name=keep37" true) &&
	flux job wait-event -t 60 $id clean &&
	flux job eventlog $id >shared.events &&
	test_must_fail grep exception shared.events &&
	workflow_spec $id | jq -e ".userID == $OTHER"
'

test_expect_success ROOT 'the owner destroys it' '
	flux run -N1 --setattr=system.dw="#DW destroy_persistent name=keep37" true &&
	kubectl wait --for=delete persistentstorageinstance/keep37 --timeout=60s
'

test_expect_success 'no Workflow is left' '
	kubectl get workflows -o name >workflows.left &&
	test_must_be_empty workflows.left
'

test_expect_success 'stop the instance and the emulator' '
	stop_rabbit_instance &&
	stop_emulator &&
	rm -rf "$RUNDIR"
'

test_done
