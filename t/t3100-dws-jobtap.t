#!/bin/sh
test_description='rabbit jobs under a real broker: dws-jobtap.so, dws_environment.so, the dws service

A 4-broker instance plays the kind system (compute-[01-04]) against the
emulator, set up as a site would: Fluxion on the flux-dws2jgf graph, the
jobtap plugin from [job-manager] plugins, the shell plugin from the shell
plugin path, the dws service loaded by modprobe because [rabbit] is set.'

. "$(dirname "$0")"/sharness.sh

skip_all_unless_rabbit_jobs


test_expect_success 'start the emulator and a rabbit instance' '
	start_emulator --system kind --latency zero &&
	rabbit_instance_config "$(pwd)" "epilog-timeout = 60.0" &&
	start_rabbit_instance "$(pwd)"
'

test_expect_success 'the service was loaded by modprobe, the plugin from config' '
	flux module list >modules.out &&
	grep -w dws modules.out &&
	flux jobtap list >jobtap.out &&
	grep dws-jobtap.so jobtap.out &&
	flux dmesg | grep "dws: epilog timeout = 60.000s"
'

test_expect_success 'xfs: the job gets its file system; nothing is left' '
	flux run -N2 --setattr=system.dw="#DW jobdw type=xfs capacity=10GiB name=scratch" \
		printenv DW_JOB_scratch >xfs.out &&
	id=$(flux job last) &&
	test $(sort -u xfs.out | wc -l) = 1 &&
	grep "^/mnt/nnf/" xfs.out &&
	flux job eventlog $id >xfs.events &&
	grep "dependency-add description=\"dws-create\"" xfs.events &&
	grep "jobspec-update resources=.*ssd" xfs.events &&
	grep "dependency-remove description=\"dws-create\"" xfs.events &&
	grep "prolog-start description=\"dws-setup\"" xfs.events &&
	grep "dws_environment variables=.*DW_JOB_scratch" xfs.events &&
	grep "prolog-finish description=\"dws-setup\" status=0" xfs.events &&
	grep "epilog-finish description=\"dws-epilog\" status=0" xfs.events &&
	flux job info $id R | grep -q ssd &&
	flux jobs -no "{user.rabbits}" $id >xfs.rabbits &&
	grep kind-worker xfs.rabbits &&
	flux kvs get $(flux job id --to=kvs $id).rabbit_workflow | grep -q "\"Teardown\"" &&
	workflow_gone $id
'

test_expect_success 'gfs2 with data movement, raw, and a preset-free list of directives' '
	flux run -N1 --setattr=system.dw="[\"#DW jobdw type=gfs2 capacity=20GiB name=shared\", \"#DW copy_in source=/lus/global/in destination=\$DW_JOB_shared/\"]" \
		printenv DW_JOB_shared >gfs2.out &&
	grep "^/mnt/nnf/" gfs2.out &&
	workflow_gone $(flux job last) &&
	flux run -N1 --setattr=system.dw="#DW jobdw type=raw capacity=5GiB name=rawdisk" \
		printenv DW_JOB_rawdisk >raw.out &&
	test -s raw.out &&
	workflow_gone $(flux job last)
'

test_expect_success 'lustre: the job runs with DW_JOB_<name> set' '
	flux run -N2 --setattr=system.dw="#DW jobdw type=lustre capacity=100GiB name=lus" \
		printenv DW_JOB_lus >lustre.out &&
	test -s lustre.out &&
	workflow_gone $(flux job last)
'

test_expect_success 'a container job gets its workflow token' '
	flux run -N1 --setattr=system.dw="[\"#DW jobdw type=gfs2 capacity=10GiB name=my-gfs2 requires=user-container-auth\", \"#DW container name=mpic profile=example-mpi DW_JOB_foo_local_storage=my-gfs2\"]" \
		printenv DW_WORKFLOW_TOKEN >token.out &&
	test -s token.out &&
	workflow_gone $(flux job last)
'

test_expect_success 'persistent storage: create, use from another job, destroy' '
	persistent_create_use_destroy
'

test_expect_success 'jobs without dw are none of the plugin'"'"'s business' '
	flux run -N4 true &&
	flux job eventlog $(flux job last) >plain.events &&
	test_must_fail grep dws plain.events
'

test_expect_success 'the service with --namespace: Workflows there, system objects in default' '
	kubectl create namespace flux-jobs &&
	flux module remove dws &&
	flux module load "$top_srcdir/src/modules/dws.py" --namespace flux-jobs &&
	wait_rabbits "[.rabbits[].fluxion] | all(. == \"up\")" &&
	flux run -N2 --setattr=system.dw="#DW jobdw type=xfs capacity=10GiB name=ns" \
		printenv DW_JOB_ns >ns.out &&
	grep "^/mnt/nnf/" ns.out &&
	id=$(flux job last) &&
	flux kvs get $(flux job id --to=kvs $id).rabbit_workflow >ns-wf.json &&
	test "$(jq -r .metadata.namespace ns-wf.json)" = flux-jobs &&
	kubectl wait -n flux-jobs --for=delete "workflow/fluxjob-$(flux job id --to=dec $id)" \
		--timeout=60s &&
	kubectl get systemstatus default -o json | jq -e ".data.nodes[\"compute-01\"]" &&
	flux module remove dws &&
	flux module load "$top_srcdir/src/modules/dws.py"
'

test_expect_success 'stop the instance (rc3 removes the service) and the emulator' '
	stop_rabbit_instance &&
	stop_emulator
'

test_done
