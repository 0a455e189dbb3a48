#!/bin/sh
test_description='drop-in: the reference'"'"'s observable contract for drain queues and SystemStatus

Under a real broker and Fluxion, against the emulator (issue 22, items 4,
6 and 8):

- drain queues name node properties (issue 33, item 2), as the
  reference'"'"'s --drain-queues: an instance whose nodes carry their queue
  as a property and that has no [queues] table gets its service, and a
  rabbit fault drains only the nodes with one of the drain queues; a
  property no node has stops the service'"'"'s load (module and stand-alone)
  and a config reload, naming it and the properties the nodes have;
- SystemStatus says which computes cannot take part: a compute drained
  after its unmount timed out is Disabled until undrained (Enabled within
  1 s of the undrain); a maintenance drain does not disable it (its mounts
  are still removed normally); an offline broker disables its hostname
  within 2 s, even when another rank shares that hostname;
- after such a drain and its undrain, rabbit jobs with
  dw_failure_tolerance and setup/prerun timeouts run on that compute.'

. "$(dirname "$0")"/sharness.sh

skip_all_unless_rabbit_jobs

DWS_PY="$top_srcdir/src/modules/dws.py"
XFS="#DW jobdw type=xfs capacity=10GiB name=scratch"

# submit_held HOST: a rabbit job on HOST whose task waits until release_job
submit_held() {
	rm -f go && mkfifo go &&
	flux submit -N1 --requires=host:$1 --setattr=system.dw="$XFS" sh -c "read x <go"
}
release_job() {
	timeout 30 sh -c "echo go >go"
}
systemstatus() {
	kubectl get systemstatus default -o json | jq -r ".data.nodes[\"$1\"]"
}

# ss_watch HOST STATE: in the background, poll SystemStatus (every 20 ms,
# for at most 30 s) until HOST is STATE; ss_seen then says how long after
# ss_mark it was seen.  The poller is started (and its imports paid for)
# before the change it times.
cat >ss_watch.py <<'PYEOF'
import sys, time
import kubernetes
host, state, out = sys.argv[1:4]
kubernetes.config.load_kube_config()
api = kubernetes.client.CustomObjectsApi()
def get():
    obj = api.get_namespaced_custom_object("dataworkflowservices.github.io", "v1alpha7",
                                           "default", "systemstatuses", "default")
    return ((obj.get("data") or {}).get("nodes") or {}).get(host)
get()
open(out + ".ready", "w").close()
deadline = time.time() + 30
while time.time() < deadline:
    if get() == state:
        with open(out, "w") as f:
            f.write(f"{time.time():.6f}\n")
        sys.exit(0)
    time.sleep(0.02)
sys.exit(1)
PYEOF
ss_watch() {
	rm -f ss.seen ss.seen.ready ss.mark || return 1
	python3 ss_watch.py "$1" "$2" ss.seen &
	SS_PID=$!
	i=0
	while ! test -e ss.seen.ready; do
		i=$((i + 1))
		test $i -gt 300 && return 1
		kill -0 $SS_PID 2>/dev/null || return 1
		sleep 0.1
	done
}
ss_mark() {
	date +%s.%N >ss.mark
}
# ss_seen LIMIT: the watched state was seen within LIMIT seconds of ss_mark
ss_seen() {
	wait $SS_PID || return 1
	python3 -c "import sys; d = float(open('ss.seen').read()) - float(open('ss.mark').read()); print(f'seen after {d:.3f} s'); sys.exit(0 if d <= $1 else 1)"
}

# the kind computes with their queue as a node property, the reference'"'"'s
# deployment style: pbatch on compute-[01-03], pdebug on compute-04, and
# no [queues] table
cat >resource.toml <<EOF
[resource]
noverify = true

[[resource.config]]
hosts = "compute-[01-04]"
cores = "0-3"

[[resource.config]]
hosts = "compute-[01-03]"
properties = ["pbatch"]

[[resource.config]]
hosts = "compute-04"
properties = ["pdebug"]
EOF

test_expect_success 'start the emulator and a rabbit instance with a postrun timeout' '
	start_emulator --system kind --latency zero &&
	RABBIT_RESOURCE_CONF=$(pwd)/resource.toml \
		rabbit_instance_config "$(pwd)" "epilog-timeout = 600.0" &&
	cat >>conf/instance.toml <<-EOF &&
	postrun_timeout = 3
	setup_timeout = 60
	prerun_timeout = 60
	EOF
	cp conf/instance.toml instance.toml.good &&
	start_rabbit_instance "$(pwd)" &&
	wait_rabbits "[.rabbits[].computes[].systemstatus] | all(. == \"Enabled\")"
'

#
# Item 4 (issue 22), as issue 33 item 2 corrected it: drain queues are node
# properties, checked against the nodes' properties
#

test_expect_success 'the nodes carry their queue as a property; there is no [queues] table' '
	flux resource list -no "{properties} {nodelist}" >props.out &&
	cat props.out &&
	grep "^pbatch compute-\[01-03\]$" props.out &&
	grep "^pdebug compute-04$" props.out &&
	flux config get | jq -e ".queues == null"
'

test_expect_success '--drain-queues pbatch: the service loads without a [queues] table' '
	flux module remove dws &&
	flux module load "$DWS_PY" --drain-queues pbatch &&
	wait_rabbits "[.rabbits[].fluxion] | all(. == \"up\")"
'

test_expect_success 'a rabbit fault drains only the nodes with a drain queue property' '
	flux-dws fault health kind-worker2 --link compute-03=Offline &&
	flux-dws fault health kind-worker3 --link compute-04=Offline &&
	flux resource eventlog -t 30 -w drain -i compute-03 &&
	wait_rabbits ".rabbits[1].computes[0].link == \"Offline\"" &&
	flux python -m flux_dws sync &&
	flux resource drain -no "{nodelist} {reason}" >dq.out &&
	cat dq.out &&
	test "$(flux resource drain -no {nodelist})" = compute-03 &&
	grep "^compute-03 rabbit kind-worker2 link Offline" dq.out &&
	flux-dws fault health kind-worker2 --reset &&
	flux-dws fault health kind-worker3 --reset &&
	flux resource eventlog -t 30 -w undrain -i compute-03 &&
	wait_rabbits "[.rabbits[].computes[].link] | all(. == \"Ready\")"
'

# flux module load gets only the errno of a failed load (flux-core's module
# loader protocol); the message is in the broker's log and on its stderr
test_expect_success 'module load with --drain-queues naming a property no node has fails, naming it' '
	flux module remove dws &&
	test_must_fail flux module load "$DWS_PY" --drain-queues nosuch 2>load.err &&
	cat load.err &&
	grep "Invalid argument" load.err &&
	flux dmesg | grep "dws: --drain-queues: no node has the property \"nosuch\": drain queues name node properties (the nodes'"'"' properties: pbatch, pdebug)" &&
	grep "no node has the property \"nosuch\"" instance.log &&
	test_must_fail flux module stats dws
'

test_expect_success 'stand-alone with --drain-queues naming properties no node has exits 2, naming them' '
	test_expect_code 2 flux python "$DWS_PY" --drain-queues nosuch pdbug 2>alone.err &&
	cat alone.err &&
	grep "^dws: --drain-queues: no node has any of the properties \"nosuch\", \"pdbug\"" alone.err
'

test_expect_success 'rabbit.drain_queues naming a property no node has: the load fails, naming it' '
	test_when_finished "cp instance.toml.good conf/instance.toml && flux config reload" &&
	echo "drain_queues = [\"batch\"]" >>conf/instance.toml &&
	flux config reload &&
	test_must_fail flux module load "$DWS_PY" 2>key.err &&
	cat key.err &&
	flux dmesg | grep "dws: rabbit.drain_queues: no node has the property \"batch\"" &&
	cp instance.toml.good conf/instance.toml &&
	flux config reload &&
	flux module load "$DWS_PY" &&
	wait_rabbits "[.rabbits[].fluxion] | all(. == \"up\")"
'

test_expect_success 'flux config reload with a drain queue no node has is refused, naming it' '
	test_when_finished "cp instance.toml.good conf/instance.toml && flux config reload" &&
	echo "drain_queues = [\"debug\"]" >>conf/instance.toml &&
	test_must_fail flux config reload 2>reload.err &&
	cat reload.err &&
	grep "rabbit.drain_queues: no node has the property \"debug\"" reload.err &&
	flux dmesg | grep "config reload refused" | grep "debug" &&
	cp instance.toml.good conf/instance.toml &&
	flux config reload &&
	flux python -m flux_dws status >/dev/null
'

test_expect_success 'flux config reload with a property some node has is taken, the others warned of' '
	test_when_finished "cp instance.toml.good conf/instance.toml && flux config reload" &&
	echo "drain_queues = [\"pdebug\", \"debug\"]" >>conf/instance.toml &&
	flux config reload &&
	flux dmesg | grep "rabbit.drain_queues: no node has the property \"debug\"; rabbit faults drain only nodes with pdebug" &&
	flux python -m flux_dws status >/dev/null
'

#
# Item 6: a maintenance drain does not disable a node for DWS
#

test_expect_success 'a maintenance drain under a running rabbit job: Enabled, the job unmounts normally' '
	id=$(submit_held compute-02) &&
	flux job wait-event -t 30 $id start &&
	flux resource drain compute-02 maintenance &&
	wait_rabbits ".rabbits[0].computes[1].drained == \"maintenance\"" &&
	test "$(systemstatus compute-02)" = Enabled &&
	release_job &&
	flux job wait-event -t 60 $id clean &&
	flux job eventlog $id >maint.events &&
	grep "epilog-finish description=\"dws-epilog\" status=0" maint.events &&
	test_must_fail grep exception maint.events &&
	workflow_gone $id &&
	test "$(systemstatus compute-02)" = Enabled &&
	flux resource undrain compute-02
'

#
# Items 6 and 8: a PostRun timeout drains a compute: Disabled until undrained
#

test_expect_success 'an unmount that never ends: postrun_timeout drains the compute' '
	id=$(submit_held compute-01) &&
	echo $id >stuck.id &&
	flux job wait-event -t 30 $id start &&
	flux-dws fault stall --kind clientmount --compute compute-01 &&
	release_job &&
	flux job wait-event -t 60 -m type=rabbit-timeout $id exception &&
	flux resource eventlog -t 30 -w drain -i compute-01 &&
	flux resource drain -no "{nodelist} {reason}" >drain.out &&
	cat drain.out &&
	grep "^compute-01 failed to unmount rabbit kind-worker2 (job $(flux job id --to=f58plain $id))$" drain.out &&
	flux job eventlog $id | grep "unmounts timed out, skipping data movement"
'

test_expect_success 'the drained compute is Disabled in SystemStatus' '
	wait_rabbits ".rabbits[0].computes[0].systemstatus == \"Disabled\"" &&
	test "$(systemstatus compute-01)" = Disabled &&
	test "$(systemstatus compute-02)" = Enabled
'

test_expect_success 'the stuck job ends once the mount is released' '
	flux-dws fault clear &&
	id=$(cat stuck.id) &&
	flux job wait-event -t 60 $id clean &&
	workflow_gone $id &&
	test "$(systemstatus compute-01)" = Disabled
'

test_expect_success 'an admin undrains it: Enabled within 1 s' '
	ss_watch compute-01 Enabled &&
	ss_mark &&
	flux resource undrain compute-01 &&
	ss_seen 1.0
'

test_expect_success 'rabbit jobs with dw_failure_tolerance and setup/prerun timeouts run on it' '
	flux run -N1 --requires=host:compute-01 --setattr=system.dw="$XFS" \
		--setattr=system.dw_failure_tolerance=1 printenv DW_JOB_scratch >one.out &&
	grep /mnt/nnf one.out &&
	id=$(flux submit -N4 --setattr=system.dw="$XFS" \
		--setattr=system.dw_failure_tolerance=2 hostname) &&
	flux job wait-event -t 120 $id clean &&
	flux job eventlog $id >four.events &&
	flux resource drain -no "{nodelist} {reason}" >four.drain &&
	flux job status $id &&
	test_must_fail grep exception four.events &&
	test "$(flux jobs -no {nodelist} $id)" = "compute-[01-04]" &&
	test -z "$(flux resource drain -no {nodelist})"
'

test_expect_success 'an admin drain over an unmount drain keeps the node Disabled until undrained' '
	id=$(submit_held compute-03) &&
	flux job wait-event -t 30 $id start &&
	flux resource drain compute-03 "bad DIMM" &&
	flux-dws fault stall --kind clientmount --compute compute-03 &&
	release_job &&
	flux job wait-event -t 60 -m type=rabbit-timeout $id exception &&
	wait_rabbits ".rabbits[0].computes[2].systemstatus == \"Disabled\"" &&
	flux resource drain -no "{nodelist} {reason}" >admin.out &&
	grep "^compute-03 bad DIMM$" admin.out &&
	flux-dws fault clear &&
	flux job wait-event -t 60 $id clean &&
	ss_watch compute-03 Enabled &&
	ss_mark &&
	flux resource undrain compute-03 &&
	ss_seen 1.0
'

test_expect_success 'a broker goes offline: its hostname is Disabled within 2 s' '
	ss_watch compute-04 Disabled &&
	ss_mark &&
	flux overlay disconnect 3 &&
	ss_seen 2.0
'

test_expect_success 'stop the instance: exit status 1, for the lost broker (rank 3) alone' '
	stop_lost_instance 3
'

test_expect_success 'two ranks share a hostname: the first one offline disables it within 2 s' '
	mkdir shared &&
	rabbit_instance_config "$(pwd)/shared" &&
	RABBIT_TEST_HOSTS="compute-[01-03,03]" start_rabbit_instance "$(pwd)/shared" &&
	wait_rabbits ".rabbits[0].computes[2].systemstatus == \"Enabled\"" &&
	ss_watch compute-03 Disabled &&
	ss_mark &&
	flux overlay disconnect 2 &&
	ss_seen 2.0 &&
	wait_rabbits ".rabbits[0].computes[2].online == false"
'

test_expect_success 'stop the instance (rank 2 was lost: exit status 1) and the emulator' '
	stop_lost_instance 2 &&
	stop_emulator
'

test_done
