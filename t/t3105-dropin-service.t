#!/bin/sh
test_description='drop-in: what the reference'"'"'s dws service offers, under a real broker

dws.watch_test (flux dws sync): a barrier that answers once the service has
caught up with Kubernetes and carried out what that caused.  Job data the
reference keeps in the KVS: rabbit_datamovements (save_datamovements) and
rabbit_container_log (a #DW container job'"'"'s launcher log).'

. "$(dirname "$0")"/sharness.sh

skip_all_unless_rabbit_jobs

# watch_test [ENV...]: the dws.watch_test answer, as JSON
watch_test() {
	env "$@" flux python -c "import flux, json; print(json.dumps(flux.Flux().rpc(\"dws.watch_test\").get()))"
}

# fluxion_down_ssds: how many ssd vertices Fluxion has down (its own find)
fluxion_down_ssds() {
	flux python -c "import flux, json; print(json.dumps(flux.Flux().rpc(
		\"sched-fluxion-resource.find\",
		{\"criteria\": \"status=down\", \"format\": \"jgf\"}).get()))" |
	jq "[(.R // {graph: {nodes: []}}).graph.nodes[] | select(.metadata.type == \"ssd\")] | length"
}


test_expect_success 'start the emulator and a rabbit instance with save_datamovements = 2' '
	start_emulator --system kind --latency zero &&
	rabbit_instance_config "$(pwd)" &&
	echo "save_datamovements = 2" >>conf/instance.toml &&
	start_rabbit_instance "$(pwd)"
'

test_expect_success 'dws.watch_test answers the instance owner an empty object' '
	watch_test >wt.out &&
	test "$(cat wt.out)" = "{}" &&
	flux python -m flux_dws sync
'

test_expect_success 'dws.watch_test is the owner'"'"'s: another user gets EPERM' '
	test_must_fail watch_test FLUX_HANDLE_ROLEMASK=0x2 FLUX_HANDLE_USERID=$(($(id -u) + 1)) \
		2>guest.err &&
	grep -i "owner\|permission\|EPERM" guest.err
'

test_expect_success 'a barrier: a rabbit that went down in Kubernetes is down in Fluxion once it answers' '
	test "$(fluxion_down_ssds)" = 0 &&
	flux-dws fault health kind-worker3 --status Offline &&
	flux python -m flux_dws sync &&
	test "$(fluxion_down_ssds)" = 36 &&
	dws_rabbits --json | jq -e ".rabbits[1].fluxion == \"down\"" &&
	flux-dws fault health kind-worker3 --reset &&
	flux python -m flux_dws sync &&
	test "$(fluxion_down_ssds)" = 0
'

test_expect_success 'a barrier: a compute link that went down is drained once it answers' '
	flux-dws fault health kind-worker2 --link compute-02=Offline &&
	flux python -m flux_dws sync &&
	flux resource drain -no "{nodelist} {reason}" >drained.out &&
	grep "compute-02 rabbit kind-worker2 link Offline" drained.out &&
	flux-dws fault health kind-worker2 --link compute-02=Ready &&
	flux python -m flux_dws sync &&
	flux resource drain -no "{nodelist}" >drained2.out &&
	test_must_fail grep compute-02 drained2.out
'

test_expect_success 'copy_in/copy_out with save_datamovements = 2: rabbit_datamovements in the KVS' '
	flux run -N2 --setattr=system.dw="[\"#DW jobdw type=gfs2 capacity=10GiB name=shared\", \"#DW copy_in source=/lus/global/in destination=\$DW_JOB_shared/\", \"#DW copy_out source=\$DW_JOB_shared/out destination=/lus/global/out\"]" \
		true &&
	id=$(flux job last) &&
	workflow_gone $id &&
	flux job info $id rabbit_datamovements >dms.json &&
	jq -e "length == 2" dms.json &&
	jq -e "all(.[]; .kind == \"NnfDataMovement\" and .status.status == \"Success\")" dms.json &&
	jq -e "all(.[]; .spec.destination.path | startswith(\"/lus/global/out\"))" dms.json &&
	flux kvs readlink $(flux job id --to=kvs $id).rabbit_datamovements >dms.link &&
	grep "data.dws.datamovements" dms.link
'

test_expect_success 'a #DW container job: rabbit_container_log holds the launcher'"'"'s log' '
	flux run -N1 --setattr=system.dw="[\"#DW jobdw type=gfs2 capacity=10GiB name=my-gfs2 requires=user-container-auth\", \"#DW container name=mpic profile=example-mpi DW_JOB_foo_local_storage=my-gfs2\"]" \
		true &&
	id=$(flux job last) &&
	workflow_gone $id &&
	flux job info $id rabbit_container_log | jq -r . >log.out &&
	cat log.out &&
	head -1 log.out | grep "^flux-dws emulator: container example-mpi (ghcr.io/nearnodeflash/nnf-mfu:latest) started in pod fluxjob-[0-9]*-launcher-" &&
	grep "^+ mpirun dcmp" log.out &&
	sed "/^\$/d" log.out | tail -1 | grep "^flux-dws emulator: container example-mpi exited with status 0\$"
'

test_expect_success 'stop the instance and the emulator' '
	stop_rabbit_instance &&
	stop_emulator
'

test_done
