#!/bin/sh
test_description='rabbit health faults driven from the shell: flux-dws fault health, storage, storm'

. "$(dirname "$0")"/sharness.sh

if ! test_have_prereq KUBECTL; then
	skip_all="kubectl is not installed"
	test_done
fi

# storage_field RABBIT JSONPATH: a field of the Storage, read back
storage_field() {
	kubectl get storage "$1" -o jsonpath="$2"
}

test_expect_success 'the emulator starts with the kind system' '
	start_emulator --system kind --latency zero
'

test_expect_success 'fault health: each call sets what it names, the rest stays' '
	flux-dws fault health kind-worker2 --link compute-01=Offline >out &&
	flux-dws fault health kind-worker2 --k8s-not-ready &&
	test "$(storage_field kind-worker2 "{.status.status}")" = Offline &&
	test "$(storage_field kind-worker2 \
		"{.status.access.computes[?(@.name==\"compute-01\")].status}")" = Offline &&
	flux-dws fault health kind-worker2 --k8s-ready &&
	test "$(storage_field kind-worker2 "{.status.status}")" = Ready &&
	test "$(storage_field kind-worker2 \
		"{.status.access.computes[?(@.name==\"compute-01\")].status}")" = Offline
'

test_expect_success 'fault health --reset: the rabbit fully healthy again' '
	flux-dws fault health kind-worker2 --status Failed --drain-taint cray.nnf.node.drain &&
	test "$(storage_field kind-worker2 "{.status.status}")" = Drained &&
	flux-dws fault health kind-worker2 --reset &&
	test "$(storage_field kind-worker2 "{.status.status}")" = Ready &&
	test "$(storage_field kind-worker2 "{.status.access.computes[*].status}")" = \
		"Ready Ready Ready"
'

test_expect_success 'fault health refuses an unknown rabbit (1) and a bad status (2)' '
	test_expect_code 1 flux-dws fault health nope --status Offline 2>err &&
	grep "no rabbit .nope." err &&
	test_expect_code 2 flux-dws fault health kind-worker2 --link compute-01=down 2>err &&
	grep "is not a status" err
'

test_expect_success 'fault storage --state Disabled --reason: what dws.abort writes' '
	flux-dws fault storage kind-worker3 --state Disabled --reason "epilog timed out" &&
	test "$(storage_field kind-worker3 "{.status.status}")" = Disabled &&
	test "$(storage_field kind-worker3 "{.metadata.annotations.disable_reason}")" = \
		"epilog timed out" &&
	storage_field kind-worker3 "{.metadata.annotations.disable_date}" >date &&
	grep -E "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$" date &&
	flux-dws fault storage kind-worker3 --state Enabled &&
	test "$(storage_field kind-worker3 "{.metadata.annotations}")" = "" &&
	test "$(storage_field kind-worker3 "{.status.status}")" = Ready
'

test_expect_success 'fault storage --status needs mode Testing' '
	test_expect_code 1 flux-dws fault storage kind-worker3 --status Failed 2>err &&
	grep "needs mode Testing" err &&
	flux-dws fault storage kind-worker3 --mode Testing --status Failed \
		--link compute-04=Offline &&
	test "$(storage_field kind-worker3 "{.status.status}")" = Failed &&
	flux-dws fault storage kind-worker3 --mode Live &&
	test "$(storage_field kind-worker3 "{.status.status}")" = Ready
'

test_expect_success 'fault storm: N updates, then everything as before' '
	kubectl get storages -o jsonpath="{.items[*].status}" >before &&
	flux-dws fault storm --events 500 --seed 1 >storm.json &&
	jq -e ".updates == 500 and .seconds > 0" storm.json &&
	kubectl get storages -o jsonpath="{.items[*].status}" >after &&
	test_cmp before after
'

test_expect_success 'stop the emulator' '
	stop_emulator
'

test_done
