#!/bin/sh
test_description='flux dws df under a real broker and Fluxion

Each rabbit'"'"'s size, what Flux jobs and persistent storage hold, the
rest, what is free and its ssd vertices in Fluxion; the figures agree with
the Storage objects and flux rabbitmapping (capacity: free space).  Any
user may ask; bad arguments get one line and no traceback (issue 47).'

. "$(dirname "$0")"/sharness.sh

skip_all_unless_flux
skip_all_unless_fluxion "df shows what the service gave Fluxion"
skip_all_unless_plugins
dws_pythonpath

XFS="#DW jobdw type=xfs capacity=10GiB name=scratch"
GiB=1073741824

dws() {
	flux python -m flux_dws "$@"
}

# busy: kind-worker3 shows the job'"'"'s and the persistent storage
busy() {
	dws df --json kind-worker3 |
		jq -e ".rabbits[0] | .jobs >= 10 * $GiB and .persistent >= 20 * $GiB" >/dev/null
}

test_expect_success 'start the emulator and a rabbit instance' '
	start_emulator --system kind --latency zero &&
	rabbit_instance_config "$(pwd)" &&
	start_rabbit_instance "$(pwd)" &&
	wait_rabbits ".rabbits[0].fluxion == \"up\" and .rabbits[1].fluxion == \"up\""
'

test_expect_success 'idle: every byte free, as the Storage objects and rabbitmapping say' '
	dws df >idle.out &&
	cat idle.out &&
	head -1 idle.out | grep "^RABBIT *SIZE *JOBS *PERSISTENT *OTHER *FREE *USE% *SSDS *DOWN *HELD *STATE$" &&
	grep "^kind-worker2 .* 0% *36/36 *0 *0 *up$" idle.out &&
	grep "^total " idle.out &&
	dws df --json >idle.json &&
	flux-dws rabbitmapping >mapping.json &&
	for r in kind-worker2 kind-worker3; do
		free=$(kubectl get storage $r -o json | jq .status.capacity) &&
		jq -e ".rabbits[] | select(.name == \"$r\") | .free == $free and .size == $free
			and .used == 0" idle.json &&
		jq -e ".rabbits[\"$r\"].capacity == $free" mapping.json || return 1
	done &&
	jq -e ".total.ssds == {\"total\": 72, \"up\": 72, \"down\": 0, \"held\": 0}" idle.json
'

test_expect_success 'a running job and persistent storage: JOBS and PERSISTENT' '
	id=$(flux submit -N1 --requires=host:compute-04 \
		--setattr=system.dw="#DW create_persistent type=xfs capacity=20GiB name=p1" true) &&
	flux job wait-event -t 60 $id clean &&
	flux job status $id &&
	id=$(flux submit -N1 --requires=host:compute-04 --setattr=system.dw="$XFS" sleep inf) &&
	echo $id >running.id &&
	flux job wait-event -t 60 $id start &&
	until_true 30 busy &&
	dws df --json kind-worker3 >busy.json &&
	free=$(kubectl get storage kind-worker3 -o json | jq .status.capacity) &&
	jq -e ".rabbits[0] | .free == $free and .used == .jobs + .persistent + .other" busy.json &&
	dws df kind-worker3 >busy.out &&
	cat busy.out &&
	grep "^kind-worker3 .* up$" busy.out
'

test_expect_success 'flux dws df -o: fields and presets agree with --json' '
	dws df -n -b -o "{name} {jobs} {persistent} {free} {ssds_up}/{ssds_total}" kind-worker3 \
		>fields.out &&
	cat fields.out &&
	jq -r ".rabbits[0] | \"\(.name) \(.jobs) \(.persistent) \(.free) \(.ssds.up)/\(.ssds.total)\"" \
		busy.json >fields.expected &&
	jq -r ".total | \"total \(.jobs) \(.persistent) \(.free) \(.ssds.up)/\(.ssds.total)\"" \
		busy.json >>fields.expected &&
	test_cmp fields.expected fields.out &&
	dws df -o long >long.out &&
	head -1 long.out | grep "^RABBIT *SIZE *USED *JOBS *PERSISTENT" &&
	dws df -o help | grep "^  use_percent  *USE%" &&
	test_expect_code 2 dws df -o "{name} {bogus}" 2>badfield.err &&
	grep "flux-dws df: error: argument -o/--format: unknown field .bogus." badfield.err
'

test_expect_success 'a guest may ask' '
	FLUX_HANDLE_ROLEMASK=0x2 FLUX_HANDLE_USERID=$(($(id -u) + 1)) \
		flux python -m flux_dws df >guest.out &&
	grep "^kind-worker3 " guest.out
'

test_expect_success 'bad arguments: one line each, no traceback' '
	test_must_fail dws df nosuch 2>unknown.err &&
	cat unknown.err &&
	test "$(cat unknown.err)" = "flux-dws df: unknown rabbit: nosuch" &&
	test_expect_code 2 dws df "kind-worker[2-" 2>malformed.err &&
	grep "flux-dws df: error: argument RABBIT:" malformed.err &&
	! grep Traceback malformed.err
'

test_expect_success 'clean up' '
	flux cancel $(cat running.id) &&
	flux job wait-event -t 60 $(cat running.id) clean &&
	id=$(flux submit -N1 --setattr=system.dw="#DW destroy_persistent name=p1" true) &&
	flux job wait-event -t 60 $id clean &&
	stop_rabbit_instance &&
	stop_emulator
'
test_done
