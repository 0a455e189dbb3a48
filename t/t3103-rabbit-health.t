#!/bin/sh
test_description='rabbit health under a real broker and Fluxion

The dws service follows the rabbits'"'"' Storage objects in the emulator and
tells Fluxion (ssd vertices up/down, badrabbit), the resource module
(drains of computes whose PCIe link is down) and DWS (SystemStatus).  A
down rabbit'"'"'s storage is not scheduled; it is again once it is back.
A Degraded rabbit that is still usable stays up; one that needs a reboot
after a STONITH event is down; a fenced compute is drained until it is
unfenced (issue 43).'

. "$(dirname "$0")"/sharness.sh

skip_all_unless_flux
skip_all_unless_fluxion "rabbit health is told to Fluxion"
skip_all_unless_plugins
dws_pythonpath

XFS="#DW jobdw type=xfs capacity=10GiB name=scratch"

test_expect_success 'start the emulator and a rabbit instance: the service marks every rabbit up' '
	start_emulator --system kind --latency zero &&
	rabbit_instance_config "$(pwd)" &&
	start_rabbit_instance "$(pwd)" &&
	dws_rabbits >rabbits.out &&
	cat rabbits.out &&
	grep "^mode: fluxion; ready; 2 rabbits (0 down)" rabbits.out
'

test_expect_success 'start-up: one set_status per ssd vertex; SystemStatus follows the brokers coming online (a patch per change, at most one per broker and the first)' '
	dws_rabbits --json >view.json &&
	jq -e ".sent.set_status == 72 and .sent.remove_property == 1" view.json &&
	jq -e ".sent.systemstatus >= 1 and .sent.systemstatus <= 5" view.json &&
	kubectl get systemstatus default -o json | jq -e ".data.nodes[\"compute-04\"] == \"Enabled\""
'

test_expect_success 'a rabbit goes down: its ssd vertices go down in Fluxion' '
	flux-dws fault health kind-worker3 --status Offline &&
	wait_rabbits ".rabbits[1].fluxion == \"down\"" &&
	dws_rabbits -v >down.out &&
	grep "kind-worker3" down.out | grep -i offline
'

test_expect_success 'a rabbit job that needs it is not scheduled while it is down' '
	id=$(flux submit -N1 --requires=host:compute-04 --setattr=system.dw="$XFS" true) &&
	echo $id >blocked.id &&
	flux job wait-event -t 60 $id priority &&
	test_must_fail flux job wait-event -t 3 $id alloc &&
	test "$(flux jobs -no {state} $id)" = SCHED
'

test_expect_success 'the rabbit comes back: the job is scheduled there and completes' '
	flux-dws fault health kind-worker3 --reset &&
	id=$(cat blocked.id) &&
	flux job wait-event -t 60 $id alloc &&
	flux job wait-event -t 60 $id clean &&
	test "$(flux jobs -no {nodelist} $id)" = compute-04 &&
	flux job status $id
'

test_expect_success 'a compute link goes down: the node is drained with the reason' '
	flux-dws fault health kind-worker2 --link compute-02=Offline &&
	flux resource eventlog -t 30 -w drain -i compute-02 &&
	flux resource drain -no "{nodelist} {reason}" >drain.out &&
	grep "compute-02 rabbit kind-worker2 link Offline" drain.out
'

test_expect_success 'the link comes back: the node is undrained' '
	flux-dws fault health kind-worker2 --link compute-02=Ready &&
	flux resource eventlog -t 30 -w undrain -i compute-02 &&
	test -z "$(flux resource drain -no {nodelist})"
'

test_expect_success 'an admin drain is left alone when the link comes back' '
	flux resource drain compute-03 "bad DIMM" &&
	flux-dws fault health kind-worker2 --link compute-03=Offline &&
	wait_rabbits ".rabbits[0].computes[2].link == \"Offline\"" &&
	flux-dws fault health kind-worker2 --link compute-03=Ready &&
	wait_rabbits ".rabbits[0].computes[2].link == \"Ready\"" &&
	flux resource drain -no "{nodelist} {reason}" >admin.out &&
	grep "compute-03 bad DIMM" admin.out &&
	flux resource undrain compute-03
'

test_expect_success 'an admin disables a rabbit through its Storage: down, with the reason' '
	flux-dws fault storage kind-worker2 --state Disabled --reason "drive swap" &&
	wait_rabbits ".rabbits[0].fluxion == \"down\"" &&
	dws_rabbits --json | jq -e ".rabbits[0].why == \"disabled: drive swap\"" &&
	flux-dws fault storage kind-worker2 --state Enabled &&
	wait_rabbits ".rabbits[0].fluxion == \"up\""
'

test_expect_success 'a Degraded rabbit (still usable) keeps its ssds up and a job runs on it' '
	flux-dws fault health kind-worker3 --status Degraded &&
	wait_rabbits ".rabbits[1].storage.status == \"Degraded\"" &&
	dws_rabbits --json | jq -e ".rabbits[1].up and .rabbits[1].fluxion == \"up\"" &&
	dws_rabbits -v >degraded.out &&
	cat degraded.out &&
	grep "^kind-worker3  *Degraded  *Enabled  *up " degraded.out &&
	grep "Storage status Degraded, still usable" degraded.out &&
	id=$(flux submit -N1 --requires=host:compute-04 --setattr=system.dw="$XFS" true) &&
	flux job wait-event -t 60 $id clean &&
	test "$(flux jobs -no {nodelist} $id)" = compute-04 &&
	flux job status $id &&
	dws_rabbits --json | jq -e ".rabbits[1].fluxion == \"up\"" &&
	flux-dws fault health kind-worker3 --reset &&
	wait_rabbits ".rabbits[1].storage.status == \"Ready\""
'

test_expect_success 'a rabbit that needs a reboot after a STONITH event is down' '
	flux-dws fault health kind-worker3 --fenced &&
	wait_rabbits ".rabbits[1].fluxion == \"down\"" &&
	dws_rabbits -v >reboot.out &&
	cat reboot.out &&
	grep "^kind-worker3  *Degraded/reboot  *Enabled  *down " reboot.out &&
	grep "Storage status Degraded, reboot required: Storage node requires reboot" reboot.out &&
	flux-dws fault health kind-worker3 --reset &&
	wait_rabbits ".rabbits[1].fluxion == \"up\""
'

test_expect_success 'a fenced compute is drained, with the reason, before a rabbit job is placed on it' '
	flux-dws fault health kind-worker2 --link compute-02=Fenced &&
	wait_rabbits ".rabbits[0].computes[1].drained == \"rabbit kind-worker2 fenced this node: rabbit jobs fail here until it is unfenced\"" &&
	flux resource drain -no "{nodelist} {reason}" >fenced.out &&
	grep "^compute-02 rabbit kind-worker2 fenced this node: rabbit jobs fail here until it is unfenced$" fenced.out &&
	dws_rabbits -v >fenced-view.out &&
	grep "compute-02  fenced (rabbit jobs fail here); .*drained: rabbit kind-worker2 fenced this node: rabbit jobs fail here until it is unfenced" fenced-view.out &&
	id=$(flux submit -N1 --requires=host:compute-02 --setattr=system.dw="$XFS" true) &&
	echo $id >fenced.id &&
	flux job wait-event -t 60 $id priority &&
	test_must_fail flux job wait-event -t 3 $id alloc
'

test_expect_success 'the compute unfenced: undrained, and the job runs there' '
	flux-dws fault health kind-worker2 --link compute-02=Ready &&
	wait_rabbits ".rabbits[0].computes[1].drained == null" &&
	id=$(cat fenced.id) &&
	flux job wait-event -t 60 $id clean &&
	test "$(flux jobs -no {nodelist} $id)" = compute-02 &&
	flux job status $id
'

test_expect_success 'after a storm of Storage events, one real change costs its 36 ssds' '
	flux-dws fault storm --events 2000 --seed 7 &&
	wait_rabbits "[.rabbits[].up] | all" &&
	wait_rabbits "[.rabbits[].fluxion] | all(. == \"up\")" &&
	dws_rabbits --json | jq ".sent.set_status" >before &&
	flux-dws fault health kind-worker3 --status Offline &&
	wait_rabbits ".rabbits[1].fluxion == \"down\"" &&
	dws_rabbits --json | jq ".sent.set_status" >after &&
	test $(( $(cat after) - $(cat before) )) = 36 &&
	flux-dws fault health kind-worker3 --reset &&
	wait_rabbits ".rabbits[1].fluxion == \"up\""
'

# fluxion_down_ssds: how many ssd vertices Fluxion has down (its own find)
fluxion_down_ssds() {
	flux python -c "import flux, json; print(json.dumps(flux.Flux().rpc(
		\"sched-fluxion-resource.find\",
		{\"criteria\": \"status=down\", \"format\": \"jgf\"}).get()))" |
	jq "[(.R // {graph: {nodes: []}}).graph.nodes[] | select(.metadata.type == \"ssd\")] | length"
}

# wait_fluxion_down N: until Fluxion has N ssd vertices down.  The view says
# what the service sent; this asks Fluxion on another handle, which may be
# answered before the service's last set_status lands.
wait_fluxion_down() {
	i=0
	while test "$(fluxion_down_ssds)" != "$1"; do
		i=$((i + 1))
		test $i -gt 300 && { echo "Fluxion has $(fluxion_down_ssds) down, not $1" >&2; return 1; }
		sleep 0.1
	done
}

test_expect_success 'the service reloaded: it asks Fluxion, which has every ssd as Storage says, so none is sent again' '
	flux module remove dws &&
	flux module load "$top_srcdir/src/modules/dws.py" &&
	wait_rabbits "[.rabbits[].fluxion] | all(. == \"up\")" &&
	dws_rabbits --json | jq -e ".sent.set_status == 0" &&
	wait_fluxion_down 0
'

test_expect_success 'a rabbit goes down while the service is away: after the reload only its 36 ssds are sent' '
	flux module remove dws &&
	flux-dws fault health kind-worker3 --status Offline &&
	flux module load "$top_srcdir/src/modules/dws.py" &&
	wait_rabbits ".rabbits[1].fluxion == \"down\"" &&
	dws_rabbits --json | jq -e ".sent.set_status == 36" &&
	wait_fluxion_down 36
'

test_expect_success 'Fluxion reloaded (every ssd down in its new graph): only the up rabbit is sent' '
	reload_fluxion &&
	wait_rabbits ".sent.set_status == 72 and .rabbits[0].fluxion == \"up\"" 60 &&
	wait_fluxion_down 36 &&
	flux-dws fault health kind-worker3 --reset &&
	wait_rabbits ".rabbits[1].fluxion == \"up\"" &&
	wait_fluxion_down 0
'

test_expect_success 'any user may see rabbit health; the service'"'"'s other requests stay the owner'"'"'s' '
	FLUX_HANDLE_ROLEMASK=0x2 FLUX_HANDLE_USERID=$(($(id -u) + 1)) \
		dws_rabbits --json >guest.json &&
	jq -e ".ready and (.rabbits | length) == 2" guest.json &&
	test_must_fail env FLUX_HANDLE_ROLEMASK=0x2 FLUX_HANDLE_USERID=$(($(id -u) + 1)) \
		flux python -m flux_dws status 2>guest.err &&
	cat guest.err &&
	grep "did not answer dws.status: Request requires owner credentials$" guest.err
'

test_expect_success 'a broker lost: SystemStatus says Disabled' '
	flux overlay disconnect 3 &&
	flux resource eventlog -t 30 -w offline &&
	wait_rabbits ".rabbits[1].computes[0].online == false" &&
	wait_rabbits ".rabbits[1].computes[0].systemstatus == \"Disabled\"" &&
	kubectl get systemstatus default -o json |
		jq -e ".data.nodes[\"compute-04\"] == \"Disabled\""
'

test_expect_success 'stop the instance (a broker was lost: its exit status may say so)' '
	test_might_fail stop_rabbit_instance &&
	stop_emulator
'
test_done
