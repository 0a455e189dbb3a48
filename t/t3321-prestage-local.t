#!/bin/sh
test_description='node-local storage set up and filled before the nodes (issue 54)

A 4-broker instance (compute-[01-03] behind kind-worker2, compute-04
behind kind-worker3) with Fluxion.  A pre-staged xfs job
(-S dw_prestage=yes) of n nodes is split evenly over chassis; it waits
in DEPEND on dws-prestage while its Workflow goes through Setup and
DataIn with no node allocated, one ssd vertex per node held down in
Fluxion on the rabbits picked.  When its data is in, a jobspec-update
asks for chassis(c){node(k)} with a hostlist constraint naming those
chassis'"'"' computes: it gets nodes of that chassis alone, waiting for
them while others are free, then mounts and runs.  A DataIn failure, a
cancel or a DataIn that stops moving (rabbit.datain_stall_timeout) ends
it before any node is spent (the same bound ends a job that is not
pre-staged in its prolog); Fluxion, jobtap plugin and instance restarts
keep its hold and its chassis; one whose chassis stay busy past
rabbit.prestage_node_wait is let go of them and staged again with the
nodes it gets; a service reload meanwhile keeps its hold;
a job that cannot be split evenly is refused; nothing stays held.'

. "$(dirname "$0")"/sharness.sh

skip_all_unless_rabbit_jobs

XFS="#DW jobdw type=xfs capacity=10GiB name=loc"
STAGED="$XFS
#DW copy_in source=/lus/global/in destination=\$DW_JOB_loc/"
KW2="compute-[01-03]"


# submit_staged N [ARGS...]: a pre-staged job of N nodes on xfs with a
# copy_in; its task prints the mount point of its storage
submit_staged() {
	n=$1 && shift &&
	flux submit -N$n --setattr=system.dw="$STAGED" --setattr=system.dw_prestage=yes \
		"$@" sh -c "echo \$DW_JOB_loc"
}

# prestaged_then_ran ID: it ended clean, let go (dws-prestage removed)
# and its jobspec updated to chassis before its nodes were allocated
prestaged_then_ran() {
	flux job wait-event -t 60 $1 clean &&
	completed $1 &&
	flux job eventlog $1 >$1.log &&
	awk "/dependency-remove description=\"dws-prestage\"/ {r = NR}
		/jobspec-update/ {u = NR} / alloc/ {a = NR}
		END {exit !(r && u && a && r < a && u < a)}" $1.log
}

# on_kind_worker2 ID: the job's nodes are all behind kind-worker2
# (compute-[01-03]), as many as it asked for
on_kind_worker2() {
	nodes=$(flux jobs -no {nodelist} $1) &&
	echo "job $1 ran on $nodes" &&
	test "$(flux hostlist -c "$nodes")" = "$2" &&
	test -z "$(flux hostlist -m "$nodes" "$KW2")"
}

# chassis_update ID: its last jobspec-update asks for chassis and
# constrains the job to a hostlist of kind-worker2's computes
chassis_update() {
	flux job eventlog -f json $1 |
	jq -s -c '[.[] | select(.name == "jobspec-update")] | last | .context' >$1.update &&
	cat $1.update &&
	jq -e '(.resources[0].type == "chassis") and (.resources[0].count == 1)
		and (.resources[0].with[0].type == "node")
		and (.["attributes.system.constraints"] | tostring
		     | test("hostlist") and test("compute-\\[01-03\\]"))' $1.update
}

# rabbit_key LINE: LINE added to the instance's [rabbit] table (the last
# of conf/instance.toml) and the config reloaded; rabbit_keys_restore puts
# the table back as it was
rabbit_key() {
	cp conf/instance.toml instance.toml.good &&
	printf "%s\n" "$1" >>conf/instance.toml &&
	flux config reload
}
rabbit_keys_restore() {
	cp instance.toml.good conf/instance.toml &&
	flux config reload
}

# never_allocated ID: the job ended and no node was ever allocated to it
never_allocated() {
	flux job wait-event -t 60 $1 clean &&
	flux job eventlog $1 >$1.log &&
	test_must_fail grep " alloc" $1.log
}

# left_depend ID: the job's eventlog has a depend event (it left DEPEND)
left_depend() {
	flux job eventlog -f json $1 | jq -s -e 'map(.name) | index("depend") != null'
}

test_expect_success 'start the emulator and an instance' '
	start_emulator --system kind --latency zero &&
	rabbit_instance_config "$(pwd)" &&
	restartable_instance_opts &&
	start_rabbit_instance "$(pwd)" &&
	wait_down 0
'

test_expect_success 'the graph has an ssd vertex for each compute of a rabbit' '
	jq -r ".scheduling.graph.nodes[] | select(.metadata.type == \"ssd\")
		| .metadata.paths.containment" R.json >ssds.all &&
	test $(grep -c "^/kind/chassis0/ssd" ssds.all) -ge 3 &&
	test $(grep -c "^/kind/chassis1/ssd" ssds.all) -ge 1
'

test_expect_success 'a -N2 xfs job with a copy_in waits in DEPEND, one chassis of 2, ssd held' '
	flux-dws fault stall --state DataIn &&
	id=$(submit_staged 2) &&
	echo $id >staged.id &&
	wait_phase $id datain &&
	prestaging $id &&
	until_true 30 test -n "$(held_paths $id)" &&
	held_paths $id >held.ssds &&
	cat held.ssds &&
	test $(wc -l <held.ssds) -eq 2 &&
	down_ssds >down.now &&
	test_cmp held.ssds down.now &&
	kubectl get workflow $(wfname $id) -o json >wf.json &&
	jq -r ".metadata.annotations[\"flux-dws.io/prestage\"]" wf.json >prestage.json &&
	cat prestage.json &&
	jq -e ".split.chassis == 1 and .split.per == 2" prestage.json &&
	jq -e ".counts == {\"kind-worker2\": 2}" prestage.json &&
	jq -e ".held | length == 2" prestage.json &&
	jq -e ".hosts == \"compute-[01-03]\"" prestage.json
'

test_expect_success 'flux dws job shows it pre-staging' '
	flux python -m flux_dws job --json $(cat staged.id) >job.json &&
	jq -e ".prestage.gib == 20 and (.prestage.nodes | not)
		and (.prestage.datain | type == \"object\")" job.json
'

test_expect_success 'DataIn done: it gets nodes of that chassis alone, mounts and runs' '
	id=$(cat staged.id) &&
	clear_and_end $id &&
	prestaged_then_ran $id &&
	chassis_update $id &&
	on_kind_worker2 $id 2 &&
	flux job attach $id >staged.out &&
	cat staged.out &&
	grep "^/mnt/nnf/" staged.out &&
	workflow_gone $id &&
	wait_down 0
'

test_expect_success 'it waits for its own chassis while compute-04 is free' '
	blocker=$(flux submit -N2 -t 1h --requires=host:compute-[01-02] \
		sleep inf) &&
	echo $blocker >blocker.id &&
	flux job wait-event -t 30 $blocker start &&
	flux-dws fault stall --state DataIn &&
	id=$(submit_staged 2) &&
	echo $id >waiting.id &&
	wait_phase $id datain &&
	prestaging $id &&
	kubectl get workflow $(wfname $id) -o json |
		jq -r ".metadata.annotations[\"flux-dws.io/prestage\"]" >waiting.json &&
	jq -e ".counts == {\"kind-worker2\": 2}" waiting.json &&
	flux-dws fault clear &&
	kick $(wfname $id) &&
	flux job wait-event -t 60 -m description=dws-prestage $id dependency-remove &&
	until_true 30 test "$(flux jobs -no {state} $id)" = SCHED &&
	chassis_update $id &&
	test_must_fail flux job wait-event -t 5 $id alloc &&
	test "$(flux jobs -no {state} $id)" = SCHED &&
	flux resource list -s free -no {nodelist} >free.now &&
	cat free.now &&
	flux hostlist -q -i "$(cat free.now)" compute-04 &&
	flux cancel $blocker &&
	prestaged_then_ran $id &&
	on_kind_worker2 $id 2 &&
	workflow_gone $id &&
	wait_down 0
'

test_expect_success 'a Fluxion and a jobtap plugin reload while it waits: it runs on its chassis' '
	blocker=$(flux submit -N2 -t 1h --requires=host:compute-[01-02] sleep inf) &&
	flux job wait-event -t 30 $blocker start &&
	flux-dws fault stall --state DataIn &&
	id=$(submit_staged 2) &&
	wait_phase $id datain &&
	until_true 30 test -n "$(held_paths $id)" &&
	held_paths $id >held.reload &&
	reload_fluxion &&
	wait_down $(wc -l <held.reload) 90 &&
	down_ssds >down.now &&
	test_cmp held.reload down.now &&
	prestaging $id &&
	flux-dws fault clear &&
	kick $(wfname $id) &&
	flux job wait-event -t 60 -m description=dws-prestage $id dependency-remove &&
	until_true 30 test "$(flux jobs -no {state} $id)" = SCHED &&
	flux jobtap remove dws-jobtap.so &&
	flux jobtap load "$DWS_JOBTAP" &&
	chassis_update $id &&
	test_must_fail flux job wait-event -t 3 $id alloc &&
	flux cancel $blocker &&
	prestaged_then_ran $id &&
	on_kind_worker2 $id 2 &&
	workflow_gone $id &&
	wait_down 0
'

test_expect_success 'an instance restart while it waits in DataIn: it goes on, runs on its chassis' '
	flux-dws fault stall --state DataIn &&
	id=$(submit_staged 2) &&
	wait_phase $id datain &&
	until_true 30 test -n "$(held_paths $id)" &&
	held_paths $id >held.ssds &&
	term_rabbit_instance &&
	RABBIT_WAIT="[.holds[] | select(.applied)] | length == 1" &&
	export RABBIT_WAIT &&
	start_rabbit_instance "$(pwd)" &&
	unset RABBIT_WAIT &&
	prestaging $id &&
	held_paths $id >held.now &&
	test_cmp held.ssds held.now &&
	clear_and_end $id &&
	prestaged_then_ran $id &&
	on_kind_worker2 $id 2 &&
	workflow_gone $id &&
	wait_down 0
'

test_expect_success 'rabbit.prestage_node_wait: let go of its chassis, staged again with its nodes' '
	rabbit_key "prestage_node_wait = 2" &&
	blocker=$(flux submit -N2 -t 1h --requires=host:compute-[01-02] sleep inf) &&
	flux job wait-event -t 30 $blocker start &&
	flux-dws fault stall --state DataIn &&
	id=$(submit_staged 2) &&
	wait_phase $id datain &&
	prestaging $id &&
	flux-dws fault clear &&
	kick $(wfname $id) &&
	flux job wait-event -t 60 -m description=dws-prestage $id dependency-remove &&
	flux job wait-event -t 60 $id clean &&
	completed $id &&
	flux job eventlog -f json $id |
		jq -s -c "[.[] | select(.name == \"jobspec-update\")] | last | .context" >$id.unpin &&
	cat $id.unpin &&
	jq -e "(.resources[0].type != \"chassis\")
		and (.resources | tostring | test(\"ssd\"))
		and (.[\"attributes.system.constraints\"] | tostring | test(\"hostlist\") | not)" \
		$id.unpin &&
	flux job eventlog $id >$id.log &&
	awk "/jobspec-update/ {u = NR} / alloc/ {a = NR} END {exit !(u && a && u < a)}" $id.log &&
	nodes=$(flux jobs -no {nodelist} $id) &&
	echo "job $id ran on $nodes" &&
	test "$(flux hostlist -c "$nodes")" = 2 &&
	flux hostlist -q -i "$nodes" compute-04 &&
	flux job attach $id >$id.out &&
	grep "^/mnt/nnf/" $id.out &&
	flux dmesg | grep "$(wfname $id): its nodes did not come within 2 s" &&
	flux cancel $blocker &&
	workflow_gone $id &&
	wait_down 0 &&
	rabbit_keys_restore
'

test_expect_success 'a DataIn failure ends it in DEPEND, no node spent, nothing held' '
	flux-dws fault add --kind datamovement --state DataIn --message "copy_in died here" &&
	id=$(submit_staged 2) &&
	never_allocated $id &&
	grep "exception.*copy_in died here" $id.log &&
	test_must_fail left_depend $id &&
	flux-dws fault clear &&
	workflow_gone $id &&
	wait_down 0
'

test_expect_success 'a cancel while it pre-stages: Teardown, no node spent, nothing held' '
	flux-dws fault stall --state DataIn &&
	id=$(submit_staged 2) &&
	wait_phase $id datain &&
	until_true 30 test -n "$(held_paths $id)" &&
	prestaging $id &&
	flux cancel $id &&
	never_allocated $id &&
	grep "exception type=\"cancel\"" $id.log &&
	flux-dws fault clear &&
	kick $(wfname $id) &&
	workflow_gone $id &&
	wait_down 0
'

test_expect_success 'a dws service reload while it waits: the same ssd held, it runs on its chassis' '
	flux-dws fault stall --state DataIn &&
	id=$(submit_staged 2) &&
	wait_phase $id datain &&
	until_true 30 test -n "$(held_paths $id)" &&
	held_paths $id >held.before &&
	flux module remove dws &&
	flux module load "$top_srcdir/src/modules/dws.py" &&
	wait_phase $id datain &&
	until_true 30 test -n "$(held_paths $id)" &&
	held_paths $id >held.after &&
	test_cmp held.before held.after &&
	down_ssds >down.now &&
	test_cmp held.before down.now &&
	prestaging $id &&
	clear_and_end $id &&
	prestaged_then_ran $id &&
	on_kind_worker2 $id 2 &&
	workflow_gone $id &&
	wait_down 0
'

test_expect_success 'rabbit.datain_stall_timeout: a DataIn that does not move fails the job, no node' '
	rabbit_key "datain_stall_timeout = 2" &&
	flux-dws fault stall --kind datamovement --state DataIn &&
	id=$(submit_staged 2) &&
	flux job wait-event -t 60 -m type=dws-timeout $id exception &&
	never_allocated $id &&
	grep "exception.*type=\"dws-timeout\".*DataIn made no progress for" $id.log &&
	test_must_fail left_depend $id &&
	flux-dws fault clear &&
	workflow_gone $id &&
	wait_down 0 &&
	rabbit_keys_restore
'

test_expect_success 'rabbit.datain_stall_timeout bounds a DataIn in the prolog too' '
	rabbit_key "datain_stall_timeout = 2" &&
	flux-dws fault stall --kind datamovement --state DataIn &&
	id=$(flux submit -N1 -t 5m --setattr=system.dw="$STAGED" sh -c "echo \$DW_JOB_loc") &&
	flux job wait-event -t 60 -m type=dws-timeout $id exception &&
	flux job wait-event -t 60 $id clean &&
	flux job eventlog $id >$id.log &&
	grep " alloc" $id.log &&
	grep "exception.*type=\"dws-timeout\".*DataIn made no progress for" $id.log &&
	test_must_fail grep " start" $id.log &&
	flux-dws fault clear &&
	workflow_gone $id &&
	wait_down 0 &&
	rabbit_keys_restore
'

test_expect_success 'its rabbit going down before its nodes fails it, no node spent, nothing held' '
	flux-dws fault stall --state DataIn &&
	id=$(submit_staged 2) &&
	wait_phase $id datain &&
	until_true 30 test -n "$(held_paths $id)" &&
	prestaging $id &&
	flux-dws fault health kind-worker2 --status Offline &&
	never_allocated $id &&
	grep "rabbit kind-worker2 went down while the job.s node-local storage" $id.log &&
	flux-dws fault health kind-worker2 --reset &&
	flux-dws fault clear &&
	kick $(wfname $id) &&
	workflow_gone $id &&
	wait_down 0
'

test_expect_success 'under rabbit.prestage = "always" flux dws job says why -N4 was not pre-staged' '
	rabbit_key "prestage = \"always\"" &&
	id=$(flux submit -N4 -t 5m --setattr=system.dw="$STAGED" sh -c "echo \$DW_JOB_loc") &&
	flux job wait-event -t 60 $id start &&
	flux python -m flux_dws job $id >$id.view &&
	grep "not pre-staged: its 4 nodes cannot be split evenly" $id.view &&
	flux job wait-event -t 60 $id clean &&
	completed $id &&
	rabbit_keys_restore
'

test_expect_success '-N4 with dw_prestage=yes is refused: it cannot be split evenly' '
	id=$(submit_staged 4) &&
	never_allocated $id &&
	grep "cannot be split evenly" $id.log &&
	wait_down 0
'

test_expect_success 'nothing left behind' '
	wait_down 0 &&
	kubectl get workflows -o name >workflows.left &&
	test_must_be_empty workflows.left
'

test_expect_success 'stop the instance and the emulator' '
	stop_rabbit_instance &&
	rm -rf "$STATEDIR" &&
	stop_emulator
'

test_done
