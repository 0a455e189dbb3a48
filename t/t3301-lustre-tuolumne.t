#!/bin/sh
test_description='Lustre placement on the tuolumne system (issue 27)

The instance is four brokers named tuolumne[1001-1004] (all four are
computes of one rabbit, tuolumne201) on a graph with every one of
tuolumne'"'"'s 72 rabbits (dws2jgf --no-validate keeps the rabbits without a
compute in the instance), against the emulator'"'"'s tuolumne system: rabbits
of 15.9 TiB, tuolumne272 of 3.2 TiB.  With [rabbit.lustre] spread = true a
small-node, big-capacity Lustre job gets its OSTs on as many of those
rabbits as it needs, equal-size, with the configured MDT count; the off
switch keeps it on tuolumne201.'

. "$(dirname "$0")"/sharness.sh

skip_all_unless_rabbit_jobs


test_expect_success 'start the emulator (tuolumne) and an instance with spread Lustre' '
	start_emulator --system tuolumne --latency zero &&
	flux-dws rabbitmapping >tuolumne.json &&
	jq -e ".rabbits | length == 72" tuolumne.json &&
	cat >resource.toml <<-EOT &&
	[resource]
	noverify = true
	[[resource.config]]
	hosts = "tuolumne[1001-1004]"
	cores = "0-1"
	EOT
	RABBIT_MAPPING="$(pwd)/tuolumne.json" &&
	RABBIT_RESOURCE_CONF="$(pwd)/resource.toml" &&
	RABBIT_CLUSTER=tuolumne &&
	RABBIT_DWS2JGF_OPTS=--no-validate &&
	RABBIT_EXTRA_CONF="[rabbit.lustre]
spread = true
mdts = 3" &&
	rabbit_instance_config "$(pwd)" &&
	RABBIT_TEST_HOSTS="tuolumne[1001-1004]" start_rabbit_instance "$(pwd)" &&
	test "$(flux-dws getrabbit --mapping tuolumne.json -c tuolumne[1001-1004])" = tuolumne201
'

# 100 TiB on 2 nodes: their one rabbit holds 15.9 TiB, so at least 7.  The
# job is held running while its Servers are read.
test_expect_success 'a 2-node 100 TiB Lustre job gets OSTs on at least 7 rabbits' '
	submit_held big -N2 --setattr=system.dw="#DW jobdw type=lustre capacity=100TiB name=big" \
		>big.id &&
	flux job wait-event -t 120 $(cat big.id) start &&
	servers_of $(cat big.id) servers.json &&
	flux jobs -no "{user.rabbits}" $(cat big.id) >big.rabbits &&
	release_job big $(cat big.id) &&
	jq -e "[.[] | select(.label == \"ost\") | .storage[]] | length >= 7" servers.json.sets &&
	cat big.rabbits &&
	test $(flux hostlist -c $(cat big.rabbits)) -ge 7 &&
	test "$(resources_form $(cat big.id))" = "node:slot ssd" &&
	flux job attach $(cat big.id) >big.out &&
	grep "^DW_JOB_big=/mnt/nnf/" big.out &&
	workflow_gone $(cat big.id)
'

test_expect_success 'equal-size OSTs, at least the capacity asked, within Fluxion'"'"'s reservation' '
	jq -e "[.[] | select(.label == \"ost\")] | length == 1" servers.json.sets &&
	flux job info $(cat big.id) R >big.R &&
	osts_within_reservation big.R servers.json.sets &&
	jq -e "[.[] | select(.label == \"ost\") | .allocationSize * ([.storage[].allocationCount] | add)]
	       | .[0] >= 100 * 1099511627776" servers.json.sets
'

test_expect_success 'the MDT count is the configured one (mdts = 3)' '
	jq -e "[.[] | select(.label == \"mgtmdt\" or .label == \"mdt\") | .storage[] | .allocationCount] | add == 3" servers.json.sets
'

# 72 rabbits hold 1,118 TiB
test_expect_success 'a file system no set of rabbits can hold is refused with a reason' '
	test_must_fail flux run -N1 --setattr=system.dw="#DW jobdw type=lustre capacity=1200TiB name=huge" \
		true 2>huge.err &&
	cat huge.err &&
	grep "Lustre needs [0-9]* GiB of rabbit ssd (the file system and its headroom), more than all 72 rabbits hold" huge.err
'

test_expect_success 'the off switch (spread = false) keeps Lustre on tuolumne201' '
	sed -i "s/^spread = true/spread = false/" conf/instance.toml &&
	flux config reload &&
	flux run -N2 --setattr=system.dw="#DW jobdw type=lustre capacity=10TiB name=small" \
		printenv DW_JOB_small >small.out &&
	id=$(flux job last) &&
	test "$(resources_form $id)" = "slot:node,ssd" &&
	test "$(flux jobs -no "{user.rabbits}" $id)" = tuolumne201 &&
	workflow_gone $id &&
	test_must_fail flux run -N2 --setattr=system.dw="#DW jobdw type=lustre capacity=100TiB name=big" \
		true 2>off.err &&
	cat off.err &&
	grep "job.exception [^ ]* type=alloc severity=0 alloc denied due to type=\"unsatisfiable\"" off.err
'

test_expect_success 'stop the instance and the emulator' '
	stop_rabbit_instance &&
	stop_emulator
'

test_done
