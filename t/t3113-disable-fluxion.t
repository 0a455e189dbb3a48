#!/bin/sh
test_description='the dws service with --disable-fluxion, as flux-coral2 v0.36.0

Fluxion schedules on R without the flux-dws2jgf graph (no ssd vertices).
The service is loaded with --disable-fluxion from the [modules] table, as a
site would: a rabbit job keeps the resources it was submitted with and only
gains the constraint "not badrabbit and not alloc_rabbit"; the computes of
the rabbits a job uses have the Fluxion property alloc_rabbit while the job
holds them, and a down rabbit'"'"'s computes have badrabbit.'

. "$(dirname "$0")"/sharness.sh

skip_all_unless_flux
skip_all_unless_fluxion "the properties are Fluxion's"
skip_all_unless_plugins
dws_pythonpath

XFS="#DW jobdw type=xfs capacity=10GiB name=scratch"
CONSTRAINT='{"and":[{"not":[{"properties":["badrabbit"]}]},{"not":[{"properties":["alloc_rabbit"]}]}]}'

# has_property HOST KEY: Fluxion gives node HOST the property KEY;
# lacks_property HOST KEY: Fluxion says HOST has no KEY (any other error,
# e.g. no such vertex, fails both)
has_property() {
	flux ion-resource get-property "/cluster0/$1" "$2" >/dev/null
}
lacks_property() {
	! flux ion-resource get-property "/cluster0/$1" "$2" >prop.out 2>&1 &&
	grep -q "Property '$2' was not found for resource /cluster0/$1" prop.out
}

# wait_property HOST KEY yes|no: until Fluxion says so (30 s at most)
wait_property() {
	i=0
	while :; do
		if test "$3" = yes; then
			has_property "$1" "$2" 2>/dev/null && return 0
		else
			lacks_property "$1" "$2" && return 0
		fi
		i=$((i + 1))
		test $i -gt 300 && { echo "$1: $2 is not $3" >&2; return 1; }
		sleep 0.1
	done
}

# jobspec_update ID: the context of the job's jobspec-update event
jobspec_update() {
	flux job eventlog -f json "$1" | jq -c 'select(.name == "jobspec-update") | .context'
}

test_expect_success 'start the emulator and an instance whose Fluxion has no rabbit graph' '
	start_emulator --system kind --latency fast &&
	RABBIT_EXTRA_CONF="release_computes = \"after-unmount\"
[modules]
dws.args = [\"--disable-fluxion\"]" \
	rabbit_instance_config "$(pwd)" &&
	flux R encode --hosts="compute-[01-04]" --cores=0-3 >R.json &&
	RABBIT_WAIT=".fluxion == false" start_rabbit_instance "$(pwd)" &&
	dws_rabbits >rabbits.out &&
	cat rabbits.out &&
	test "$(flux module list | grep -c sched-fluxion-resource)" = 1
'

test_expect_success 'the service set no ssd status and cleared alloc_rabbit at start' '
	dws_rabbits --json >view.json &&
	jq -e ".fluxion == false and .sent.set_status == 0" view.json &&
	for h in compute-01 compute-02 compute-03 compute-04; do
		lacks_property $h alloc_rabbit || return 1
	done
'

test_expect_success 'a rabbit goes down: its computes get badrabbit' '
	flux-dws fault health kind-worker3 --status Offline &&
	wait_property compute-04 badrabbit yes &&
	lacks_property compute-01 badrabbit
'

test_expect_success 'a rabbit job only the bad rabbit'"'"'s node could run is not given it' '
	id=$(flux submit -N1 --requires=host:compute-04 --setattr=system.dw="$XFS" true) &&
	flux job wait-event -t 60 $id jobspec-update &&
	jobspec_update $id >bad.update &&
	jq -e ".[\"attributes.system.constraints\"] == {\"and\": [{\"hostlist\": [\"compute-04\"]}, $CONSTRAINT]}" bad.update &&
	flux job wait-event -t 60 -m type=alloc $id exception &&
	flux job wait-event -t 60 $id clean &&
	! flux job eventlog $id | grep "^[0-9.]* alloc"
'

test_expect_success 'the rabbit comes back: badrabbit is taken away' '
	flux-dws fault health kind-worker3 --reset &&
	wait_property compute-04 badrabbit no
'

test_expect_success 'a rabbit job: jobspec-update has the submitted resources and the constraint' '
	rm -f goA &&
	id=$(flux submit -N2 --requires=host:compute-[01-02] --setattr=system.dw="$XFS" \
		timeout 120 sh -c "while ! test -f goA; do sleep 0.1; done") &&
	echo $id >A.id &&
	flux job wait-event -t 60 $id start &&
	jobspec_update $id >update.json &&
	cat update.json &&
	flux job info --original $id jobspec >submitted.json &&
	jq -S -c --argjson c "{\"and\": [{\"hostlist\": [\"compute-[01-02]\"]}, $CONSTRAINT]}" \
		"{resources: .resources, \"attributes.system.constraints\": \$c}" \
		submitted.json >expected.json &&
	jq -S -c . update.json >got.json &&
	test_cmp expected.json got.json &&
	! grep -q ssd got.json
'

test_expect_success 'while it runs, its rabbit'"'"'s computes have alloc_rabbit' '
	for h in compute-01 compute-02 compute-03; do
		wait_property $h alloc_rabbit yes || return 1
	done &&
	lacks_property compute-04 alloc_rabbit &&
	flux ion-resource get-property /cluster0/compute-03 alloc_rabbit
'

test_expect_success 'another rabbit job gets the other rabbit'"'"'s node, not the free compute-03' '
	id=$(flux submit -N1 --setattr=system.dw="$XFS" true) &&
	flux job wait-event -t 60 -m status=0 $id finish &&
	flux job wait-event -t 120 $id clean &&
	test "$(flux jobs -no {nodelist} $id)" = compute-04 &&
	wait_property compute-04 alloc_rabbit no &&
	has_property compute-03 alloc_rabbit
'

test_expect_success 'the job finishes with status 0: alloc_rabbit is gone when its nodes are freed (kept until Teardown despite release_computes)' '
	id=$(cat A.id) &&
	touch goA &&
	flux job wait-event -t 60 -m status=0 $id finish &&
	flux job wait-event -t 120 $id free &&
	for h in compute-01 compute-02 compute-03 compute-04; do
		lacks_property $h alloc_rabbit || return 1
	done &&
	flux job wait-event -t 60 $id clean
'

test_expect_success 'a rabbit job after it gets the same rabbit and completes' '
	id=$(flux submit -N1 --requires=host:compute-03 --setattr=system.dw="$XFS" true) &&
	flux job wait-event -t 60 -m status=0 $id finish &&
	flux job wait-event -t 120 $id clean &&
	for h in compute-01 compute-02 compute-03 compute-04; do
		wait_property $h alloc_rabbit no || return 1
	done
'

test_expect_success 'stop the instance and the emulator' '
	stop_rabbit_instance &&
	stop_emulator
'

test_done
