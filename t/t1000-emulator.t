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

test_expect_success 'kubectl replace: current resourceVersion works, a stale one conflicts' '
	kubectl create -f wf.yaml &&
	kubectl get workflow wf1 -o yaml >cur.yaml &&
	sed "s/forceReady: false/forceReady: true/" cur.yaml >new.yaml &&
	kubectl replace -f new.yaml &&
	kubectl get workflow wf1 -o jsonpath="{.spec.forceReady}" >out &&
	test "$(cat out)" = true &&
	test_must_fail kubectl replace -f cur.yaml 2>err &&
	grep "the object has been modified" err
'

test_expect_success 'kubectl refuses unknown fields (fieldValidation=Strict)' '
	sed "s/wlmID: flux/wlmID: flux\n  colour: blue/; s/wf1/wf3/" wf.yaml >unknown.yaml &&
	grep colour unknown.yaml &&
	test_must_fail kubectl create -f unknown.yaml 2>err &&
	grep "strict decoding error: unknown field \"spec.colour\"" err &&
	kubectl create --validate=false -f unknown.yaml &&
	kubectl get workflow wf3 -o json >wf3.json &&
	! grep colour wf3.json
'

test_expect_success 'kubectl get across namespaces, by field, in chunks' '
	kubectl create namespace other &&
	sed "s/wf1/wf4/" wf.yaml | kubectl create -n other -f - &&
	kubectl get workflows -A -o name >all &&
	test "$(wc -l <all)" -eq 3 &&
	kubectl get workflows --field-selector metadata.name=wf3 -o name >one &&
	test "$(cat one)" = "workflow.dataworkflowservices.github.io/wf3" &&
	kubectl get workflows -A --chunk-size=1 -o name >chunked &&
	test_cmp all chunked
'

test_expect_success 'kubectl get shows the Workflow printer columns' '
	kubectl get workflows >table &&
	head -1 table | grep "^NAME *STATE *READY *STATUS *JOBID *AGE$" &&
	grep "^wf1 .*f1 *[0-9]*s$" table &&
	kubectl get workflows -o wide >wide &&
	head -1 wide | grep "DESIREDSTATE.*UID *GID$" &&
	kubectl get namespaces >ns &&
	head -1 ns | grep "^NAME *STATUS *AGE$" &&
	grep "^default *Active " ns
'

test_expect_success 'kubectl patch --subresource=status (Storage has one, Workflow none)' '
	cat >st.yaml <<-EOF &&
	apiVersion: dataworkflowservices.github.io/v1alpha7
	kind: Storage
	metadata:
	  name: rabbit-1
	EOF
	kubectl create -f st.yaml &&
	kubectl patch storage rabbit-1 --subresource=status --type merge \
		-p "{\"status\":{\"status\":\"Ready\",\"capacity\":42}}" &&
	kubectl get storage rabbit-1 -o jsonpath="{.status.status}/{.spec.state}" >out &&
	test "$(cat out)" = Ready/Enabled &&
	kubectl get storages >plain &&
	head -1 plain | grep "^NAME *AGE$" &&
	test_must_fail kubectl patch workflow wf1 --subresource=status --type merge \
		-p "{\"status\":{\"ready\":true}}" 2>err &&
	grep "workflows.dataworkflowservices.github.io \"wf1\" not found" err
'

# Wait (up to 10 s) until FILE has the line TEXT.
wait_for_line() {
	i=0
	while ! grep -qx "$2" "$1" 2>/dev/null; do
		i=$((i + 1))
		test $i -le 100 || return 1
		sleep 0.1
	done
}

test_expect_success 'kubectl get -w streams changes: the object, then each change' '
	kubectl get workflow wf1 -w -o jsonpath="{.spec.desiredState}{\"\\n\"}" \
		--request-timeout=5s >watch.out 2>&1 &
	watcher=$! &&
	wait_for_line watch.out Proposal &&
	kubectl patch workflow wf1 --type merge -p "{\"spec\":{\"desiredState\":\"Setup\"}}" &&
	wait_for_line watch.out Setup &&
	kill $watcher;
	wait $watcher;
	printf "Proposal\nSetup\n" >expected &&
	head -n 2 watch.out >got &&
	test_cmp expected got
'

test_expect_success 'kubectl wait for CRDs to be established and for a deletion' '
	kubectl wait --for condition=established --timeout=5s \
		crd/workflows.dataworkflowservices.github.io &&
	kubectl delete workflow wf3 --wait=false &&
	kubectl wait --for=delete --timeout=5s workflow/wf3
'

test_expect_success 'kubectl delete by label and --all (deletecollection)' '
	kubectl label workflow wf1 doomed=yes &&
	kubectl delete workflows -l doomed=yes &&
	test_must_fail kubectl get workflow wf1 &&
	kubectl delete workflows --all -n other &&
	kubectl get workflows -A -o name >left &&
	test "$(wc -l <left)" -eq 0
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
