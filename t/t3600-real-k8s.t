#!/bin/sh
test_description='rabbit jobs on a real kube-apiserver, the dws service as user flux

A real control plane (kube-apiserver and etcd built from Go modules by
t/k8s/build.sh, RBAC on), the emulator'"'"'s DWS/nnf-sos controllers attached
to it as API clients (flux-dws emulator --api-server, an admin), and a
4-broker instance whose dws service connects as user flux with only the
workload manager roles.  The two talk only through the real API server.
Skipped with the reason when the control plane is not built; a failure
under FLUX_DWS_REQUIRE_REALK8S=1.'

# the build cache, named before sharness moves HOME into the trash directory
: "${FLUX_DWS_K8S_CACHE:=$HOME/.cache/flux-dws/k8s}"
export FLUX_DWS_K8S_CACHE

. "$(dirname "$0")"/sharness.sh

skip_all_unless_rabbit_jobs

realk8s_or_skip

test_expect_success 'the controllers attach to the real API server as admin' '
	attach_controllers attached.log &&
	grep "webhooks on https://127.0.0.1:" attached.log &&
	KUBECONFIG=$(pwd)/admin.kubeconfig kubectl get validatingwebhookconfigurations \
		flux-dws-emulator-validating -o name
'

test_expect_success 'the WLM identity has only the WLM roles' '
	export KUBECONFIG="$(pwd)/flux.kubeconfig" &&
	kubectl auth can-i create workflows.dataworkflowservices.github.io &&
	test_must_fail kubectl auth can-i create nnfstorages.nnf.cray.hpe.com &&
	test_must_fail kubectl auth can-i patch nodes
'

test_expect_success 'a rabbit instance whose dws service connects as flux' '
	export KUBECONFIG="$(pwd)/flux.kubeconfig" &&
	rabbit_instance_config "$(pwd)" &&
	start_rabbit_instance "$(pwd)"
'

test_expect_success 'xfs: Proposal to Teardown on the real API server' '
	xfs_through_every_state
'

test_expect_success 'gfs2, raw and lustre' '
	gfs2_raw_and_lustre
'

test_expect_success 'persistent storage: create, use, destroy' '
	persistent_create_use_destroy
'

test_expect_success 'a directive DWS refuses: the job gets its words' '
	refused_in_dws_words
'

test_expect_success 'a Proposal error worded by nnf-sos' '
	proposal_error_in_nnf_words
'

test_expect_success 'cancel: held after Proposal, in the setup prolog, while running' '
	dw="#DW jobdw type=xfs capacity=1GiB name=aa" &&
	held=$(flux submit -N1 --urgency=hold --setattr=system.dw="$dw" true) &&
	flux job wait-event -t 30 $held dependency-remove &&
	kubectl get workflow $(wfname $held) -o jsonpath="{.status.state}" >held.state &&
	grep -x Proposal held.state &&
	flux cancel $held &&
	flux job wait-event -t 60 $held clean &&
	workflow_gone $held &&
	setup=$(flux submit -N1 --setattr=system.dw="$dw" sleep inf) &&
	test_when_finished "flux cancel $setup 2>/dev/null || :" &&
	flux job wait-event -t 30 $setup prolog-start &&
	flux cancel $setup &&
	flux job wait-event -t 60 $setup clean &&
	workflow_gone $setup &&
	cancel_while_running "$dw"
'

test_expect_success 'a rabbit drained the nnf way goes down in Fluxion, and comes back' '
	KUBECONFIG="$(pwd)/admin.kubeconfig" kubectl patch storage kind-worker3 --type=merge \
		-p "{\"spec\":{\"state\":\"Disabled\"}}" &&
	wait_rabbits ".rabbits[1].fluxion == \"down\"" &&
	KUBECONFIG="$(pwd)/admin.kubeconfig" kubectl patch storage kind-worker3 --type=merge \
		-p "{\"spec\":{\"state\":\"Enabled\"}}" &&
	wait_rabbits "[.rabbits[].fluxion] | all(. == \"up\")"
'

test_expect_success 'the controllers restart mid-job: the new ones tear it down' '
	id=$(flux submit -N1 --setattr=system.dw="#DW jobdw type=xfs capacity=1GiB name=aa" sleep inf) &&
	test_when_finished "flux cancel $id 2>/dev/null || :" &&
	flux job wait-event -t 30 $id start &&
	detach_controllers &&
	attach_controllers attached2.log &&
	flux cancel $id &&
	flux job wait-event -t 60 $id clean &&
	flux job eventlog $id >restart.events &&
	grep "epilog-finish description=\"dws-epilog\" status=0" restart.events &&
	workflow_gone $id
'

test_expect_success 'nothing is left on the real API server' '
	test "$(kubectl get workflows -A -o name)" = "" &&
	test "$(kubectl get servers -A -o name)" = ""
'

test_expect_success 'stop the instance, the controllers and the control plane' '
	stop_rabbit_instance &&
	detach_controllers &&
	stop_realk8s
'

test_done
