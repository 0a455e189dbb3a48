#!/bin/sh
test_description='Lustre on the rabbits Fluxion chooses for capacity (issue 27)

A 4-broker instance is compute-[01-04] of the lus8 system (8 rabbits of
4 TiB, 2 computes each: the instance sits on rab1 and rab2; rab3..rab8
serve none of its nodes).  With [rabbit.lustre] spread = true a Lustre job
gets its OSTs on the rabbits Fluxion allocated ssd on, equal per rabbit,
with the configured MDT count; the off switch keeps node-local placement.
(The machine shares 2 cores with other work: this small system stands in
for tuolumne/elcap, whose graphs would need as many brokers as computes.)'

. "$(dirname "$0")"/sharness.sh

skip_all_unless_rabbit_jobs

data="$SHARNESS_TEST_SRCDIR/data/lustre"


# lustre_instance_config DIR LUSTRE-TOML: rabbit_instance_config on the
# lus8 graph (dws2jgf --no-validate keeps the rabbits without a compute)
# with LUSTRE-TOML as the [rabbit.lustre] table
lustre_instance_config() {
    RABBIT_MAPPING="$data/lus8.json"
    RABBIT_CLUSTER=lus
    RABBIT_DWS2JGF_OPTS=--no-validate
    RABBIT_EXTRA_CONF="[rabbit.lustre]
$2"
    rabbit_instance_config "$1"
}

test_expect_success 'start the emulator (lus8) and an instance with spread Lustre' '
	start_emulator --system "$data/lus8.yaml" --latency zero &&
	lustre_instance_config "$(pwd)" "spread = true
mdts = 2" &&
	start_rabbit_instance "$(pwd)"
'

# 10 TiB for a 2-node job: its own rabbit (4 TiB) cannot hold it.  The
# job is held running while its Servers are read.
test_expect_success 'a 2-node 10 TiB Lustre job gets OSTs on more rabbits than its computes have' '
	submit_held big -N2 --setattr=system.dw="#DW jobdw type=lustre capacity=10TiB name=big" \
		>big.id &&
	flux job wait-event -t 60 $(cat big.id) start &&
	servers_of $(cat big.id) servers.json &&
	cat servers.json.sets &&
	release_job big $(cat big.id) &&
	jq -e "[.[] | select(.label == \"ost\") | .storage[]] | length >= 3" servers.json.sets &&
	flux job attach $(cat big.id) >big.out &&
	grep "^DW_JOB_big=/mnt/nnf/" big.out &&
	flux job eventlog $(cat big.id) >big.events &&
	grep "jobspec-update resources=.*ssd" big.events &&
	test "$(resources_form $(cat big.id))" = "node:slot ssd" &&
	flux jobs -no "{user.rabbits}" $(cat big.id) >big.rabbits &&
	cat big.rabbits &&
	test $(flux hostlist -c $(cat big.rabbits)) -ge 3 &&
	workflow_gone $(cat big.id)
'

# Fluxion 0.54 packs the ssd request (whole rabbits first): the OSTs are
# equal-size allocations on every rabbit Fluxion reserved on, never more
# than it reserved; equal per rabbit only when the reservation is
# (doc/guide/lustre-placement.rst)
test_expect_success 'equal-size OSTs, within what Fluxion reserved on each rabbit' '
	jq -e "[.[] | select(.label == \"ost\")] | length == 1" servers.json.sets &&
	flux job info $(cat big.id) R >big.R &&
	osts_within_reservation big.R servers.json.sets
'

test_expect_success 'the MDT count is the configured one (mdts = 2)' '
	jq -e "[.[] | select(.label == \"mgtmdt\" or .label == \"mdt\") | .storage[] | .allocationCount] | add == 2" servers.json.sets
'

# 8 rabbits of 4 TiB (4096 GiB each as their Storage says) hold 32 TiB
test_expect_success 'a file system no set of rabbits can hold is refused with a reason' '
	test_must_fail flux run -N1 --setattr=system.dw="#DW jobdw type=lustre capacity=40TiB name=huge" \
		true 2>huge.err &&
	cat huge.err &&
	grep "Lustre needs [0-9]* GiB of rabbit ssd (the file system and its headroom), more than all 8 rabbits hold (32768 GiB)" huge.err
'

# whole rabbits: 36 ssd vertices of 113 GiB = 4068 GiB per lus8 rabbit
test_expect_success 'whole_rabbit_gib: a 6 TiB file system gets two whole rabbits, equal OSTs' '
	cat >>conf/instance.toml <<-EOT &&
	whole_rabbit_gib = 4068
	max_rabbits = 4
	EOT
	flux config reload &&
	flux run -N2 --setattr=system.dw="#DW jobdw type=lustre capacity=6TiB name=whole" \
		printenv DW_JOB_whole >whole.out &&
	id=$(flux job last) &&
	flux job info $id R >whole.R &&
	flux job eventlog $id >whole.events &&
	grep "ssd\",\"count\":8136" whole.events &&
	flux python -c "
import json
from flux_dws.libdws import lustre
got = lustre.reserved_of_R(json.load(open(\"whole.R\")))
print(got)
assert sorted(got.values()) == [4068, 4068], got
" &&
	workflow_gone $id
'

test_expect_success 'more whole rabbits than max_rabbits: refused with the numbers' '
	test_must_fail flux run -N1 --setattr=system.dw="#DW jobdw type=lustre capacity=20TiB name=wide" \
		true 2>wide.err &&
	cat wide.err &&
	grep "Lustre needs .* whole rabbits of 4068 GiB, more than rabbit.lustre.max_rabbits (4)" wide.err
'

test_expect_success 'the off switch (spread = false) keeps Lustre on the job'"'"'s own rabbits' '
	sed -i "s/^spread = true/spread = false/" conf/instance.toml &&
	flux config reload &&
	flux run -N2 --setattr=system.dw="#DW jobdw type=lustre capacity=1TiB name=small" \
		printenv DW_JOB_small >small.out &&
	id=$(flux job last) &&
	resources_form $id >small.form &&
	cat small.form &&
	test "$(cat small.form)" = "slot:node,ssd" &&
	flux jobs -no "{user.rabbits}" $id >small.rabbits &&
	cat small.rabbits &&
	test $(flux hostlist -c $(cat small.rabbits)) -le 2 &&
	grep -E "rab[12]" small.rabbits &&
	workflow_gone $id
'

test_expect_success 'stop the instance and the emulator' '
	stop_rabbit_instance &&
	stop_emulator
'

test_done
