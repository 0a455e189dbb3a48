#!/bin/sh
test_description='the emulator serves the DWS/NNF API to kubectl'

. "$(dirname "$0")"/sharness.sh

if ! test_have_prereq KUBECTL; then
	skip_all="kubectl is not installed"
	test_done
fi

test_expect_success 'the emulator starts and writes a kubeconfig' '
	start_emulator &&
	grep "server: https://127.0.0.1:" kubeconfig
'

test_expect_success 'kubectl lists the DWS CRDs and resources' '
	kubectl get crd >crds &&
	grep "^workflows.dataworkflowservices.github.io" crds &&
	kubectl api-resources --api-group=nnf.cray.hpe.com >res &&
	grep nnfstorageprofiles res
'

test_expect_success 'write a Workflow manifest' '
	cat >wf.yaml <<-EOF
	apiVersion: dataworkflowservices.github.io/v1alpha7
	kind: Workflow
	metadata:
	  name: wf1
	spec:
	  desiredState: Proposal
	  dwDirectives: []
	  wlmID: flux
	  jobID: f1
	  userID: 1000
	  groupID: 1000
	EOF
'

test_expect_success 'kubectl create, get and apply' '
	kubectl create -f wf.yaml &&
	kubectl get workflow wf1 -o jsonpath="{.spec.forceReady}" >out &&
	test "$(cat out)" = false &&
	kubectl apply -f wf.yaml
'

test_expect_success 'kubectl patch, merge and JSON' '
	kubectl patch workflow wf1 --type merge -p "{\"spec\":{\"forceReady\":true}}" &&
	kubectl patch workflow wf1 --type json \
		-p "[{\"op\":\"add\",\"path\":\"/metadata/labels\",\"value\":{\"a\":\"b\"}}]" &&
	kubectl get workflows -l a=b -o name >out &&
	test "$(cat out)" = "workflow.dataworkflowservices.github.io/wf1"
'

test_expect_success 'kubectl rejects a bad object with the server message' '
	sed "s/Proposal/Bogus/; s/wf1/wf2/" wf.yaml >bad.yaml &&
	test_must_fail kubectl create -f bad.yaml 2>err &&
	grep "Unsupported value" err
'

test_expect_success 'a finalizer holds deletion until removed' '
	kubectl patch workflow wf1 --type merge -p "{\"metadata\":{\"finalizers\":[\"x/y\"]}}" &&
	kubectl delete workflow wf1 --wait=false &&
	kubectl get workflow wf1 -o jsonpath="{.metadata.deletionTimestamp}" >ts &&
	test -s ts &&
	kubectl patch workflow wf1 --type merge -p "{\"metadata\":{\"finalizers\":null}}" &&
	test_must_fail kubectl get workflow wf1
'

test_expect_success 'state survives an emulator restart' '
	stop_emulator &&
	start_emulator --state state.db &&
	kubectl create -f wf.yaml &&
	stop_emulator &&
	start_emulator --state state.db &&
	kubectl get workflow wf1
'

test_expect_success 'stop the emulator' '
	stop_emulator
'

test_done
