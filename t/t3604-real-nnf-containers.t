#!/bin/sh
test_description='user containers on the real nnf-sos and real kubelets

The real control plane and the real DWS, nnf-sos and nnf-dm managers of
t3602 (March release set), the rabbits Nodes that run Pods (realk8s.py
--nodes: a kubelet and containerd per rabbit, in the rabbit'"'"'s mount
namespace; flux_dws.realstack.nodes), the container profiles of
flux_dws.realstack.containers (busybox, non-MPI: a Kubernetes Job per
rabbit; and an MPI one: an MPIJob through mpi-operator, realk8s.py --mpi,
whose launcher ssh'"'"'s to a worker on each rabbit over the nodes'"'"' pod
network), and a 4-broker instance that runs other users'"'"' jobs: a
container runs as the job'"'"'s user, never root.  A job with a container
directive gets its port in NNF_CONTAINER_PORTS, its containers write to
its gfs2 storage as its user, PostRun waits for them, a failing container
fails the job in nnf-sos'"'"' words, a cancel or a dws service reload while
they run ends the job cleanly with nothing left; with
requires=user-container-auth the job has DW_WORKFLOW_TOKEN and the
containers the certificate and key files nnf-sos mounts.  Skipped with the reason
when the stack or the nodes cannot run here (root, t/k8s/build.sh,
scripts/setup.sh'"'"'s packages); a failure under FLUX_DWS_REQUIRE_REALK8S=1.'

: "${FLUX_DWS_K8S_CACHE:=$HOME/.cache/flux-dws/k8s}"
: "${FLUX_DWS_NNF_CACHE:=$HOME/.cache/flux-dws/nnf}"
export FLUX_DWS_K8S_CACHE FLUX_DWS_NNF_CACHE

. "$(dirname "$0")"/sharness.sh

skip_all_unless_rabbit_jobs

nnf_src=${FLUX_DWS_NNF_SRC:-$(cd "$top_srcdir/.." && pwd)/shared/nnf}
if ! test -f "$nnf_src/SHA256SUMS"; then
	skip_all="no NNF source to build the real controllers from ($nnf_src; FLUX_DWS_NNF_SRC)"
	test_done
fi

# the job's user: one with a passwd entry (any but root and nobody), one
# with a login shell first, else nobody.  An MPI container'"'"'s launcher ssh'"'"'s
# to its workers as the job'"'"'s user, with the shell the host gives it
# (nnf-sos copies the host'"'"'s passwd entry): a site'"'"'s users log in, daemon
# ("This account is currently not available") does not
OTHER=$(python3 -c '
import pwd
shells = {s.strip() for s in open("/etc/shells") if s.startswith("/")}
users = sorted((p for p in pwd.getpwall() if p.pw_uid not in (0, 65534)),
               key=lambda p: p.pw_shell not in shells)
print(users[0].pw_uid if users else 65534)')
OTHER_GID=$(python3 -c "import pwd; print(pwd.getpwuid($OTHER).pw_gid)")
python3 -c "import pwd, sys; sys.exit(pwd.getpwuid($OTHER).pw_shell not in
	{s.strip() for s in open(\"/etc/shells\") if s.startswith(\"/\")})" &&
	test_set_prereq LOGIN_USER
# what the job's tasks (as OTHER) wait on: out of the trash directory,
# whose parents OTHER may not search
HOLD=$(mktemp -d "${TMPDIR:-/tmp}/flux-dws-hold.XXXXXX") && chmod 755 "$HOLD"
GFS2="#DW jobdw type=gfs2 capacity=10GiB name=scratch"

# container PROFILE [JOBDW-ARGS]: the directives of a job whose container
# runs PROFILE, JOBDW-ARGS added to its jobdw
container() {
	printf "%s%s\n#DW container name=app profile=%s DW_JOB_scratch=scratch" \
		"$GFS2" "${2:+ $2}" "$1"
}

# held_job NAME NODES PROFILE [JOBDW-ARGS]: a job of OTHER on NODES nodes
# with a container of PROFILE, its tasks printing NNF_CONTAINER_PORTS, then
# waiting for $HOLD/NAME (release_held NAME)
held_job() {
	submit_as $OTHER -N$2 --setattr=system.dw="$(container $3 "$4")" \
		sh -c 'printenv NNF_CONTAINER_PORTS; while ! test -e "$0"; do sleep 0.1; done' \
		"$HOLD/$1"
}
# started_job NAME NODES PROFILE [JOBDW-ARGS]: held_job's id once the job
# started (120 s).  nnf-sos (v0.1.32) makes a job's pinned container
# profile, and a reconcile that follows before its cache has it makes it
# again: AlreadyExists, which it reports as the Workflow's Error, so the
# job fails at Proposal, as it would on a site.  That race is not this
# script's subject: such a job is submitted again, once, saying so
started_job() {
	for try in 1 2; do
		sj_id=$(held_job "$@") || return 1
		if flux job wait-event -t 120 $sj_id start >/dev/null 2>&1; then
			echo $sj_id
			return 0
		fi
		flux job eventlog $sj_id |
			grep -q "nnfcontainerprofiles.nnf.cray.hpe.com .* already exists" || break
		echo "started_job: $sj_id met nnf-sos' pinned profile race; again" >&2
	done
	flux cancel $sj_id 2>/dev/null
	flux job eventlog $sj_id >&2
	return 1
}
release_held() {
	touch "$HOLD/$1"
}

# admin ARGS...: kubectl as the cluster's admin (the WLM may not read Pods)
admin() {
	KUBECONFIG="$(pwd)/admin.kubeconfig" kubectl "$@"
}

# running ID: until every user container of the job runs: one per rabbit
# of its computes (a Kubernetes Job each), none ended (120 s)
running() {
	i=0
	while :; do
		jobs=$(admin get jobs -l nnf.cray.hpe.com/container=$(wfname $1) -o name | wc -l)
		up=$(admin get pods -l nnf.cray.hpe.com/container=$(wfname $1) \
			-o jsonpath='{range .items[*]}{.status.containerStatuses[?(@.name=="app")].state.running.startedAt}{"\n"}{end}' |
			grep -c .)
		test $jobs -gt 0 && test $up = $jobs && return 0
		i=$((i + 1))
		test $i -le 600 || { admin get pods -o wide >&2; return 1; }
		sleep 0.2
	done
}

# no_containers ID: the job's Kubernetes Jobs and their Pods are gone (60 s)
no_containers() {
	admin wait --for=delete jobs -l nnf.cray.hpe.com/container=$(wfname $1) --timeout=60s &&
	admin wait --for=delete pods -l nnf.cray.hpe.com/container=$(wfname $1) --timeout=60s
}

# until_found PATTERN COUNT: until COUNT files named PATTERN are in the
# rabbits' file systems (120 s)
until_found() {
	i=0
	while test $(find "$KIND_FS" -name "$1" | wc -l) -lt $2; do
		i=$((i + 1))
		test $i -le 600 || { admin get pods -o wide >&2; return 1; }
		sleep 0.2
	done
}

# until_written PATTERN EXPECTED: until the lines of the files named
# PATTERN in the rabbits'"'"' file systems are EXPECTED'"'"'s, once each (120 s)
until_written() {
	i=0
	while ! find "$KIND_FS" -name "$1" -exec cat {} + | sort -u | cmp -s "$2" -; do
		i=$((i + 1))
		test $i -le 600 || {
			find "$KIND_FS" -name "$1" -exec cat {} + | sort -u | diff -u "$2" - >&2
			admin get pods -o wide >&2
			return 1
		}
		sleep 0.2
	done
}

# release_all: every hold container and MPI rank may end
release_all() {
	for d in $(allocations); do touch $d/release; done
}

# allocations: the file systems of the jobs running now (kind mode: a
# directory each in the /mnt/nnf the rabbits share)
allocations() {
	find "$KIND_FS" -mindepth 1 -maxdepth 1 -type d
}

REALK8S_ARGS="--controllers nnf --nodes --mpi"
realk8s_or_skip

test_expect_success 'the rabbits are Nodes that run Pods; the container profiles' '
	KIND_FS=$(cat kind-file-systems) &&
	test -d "$KIND_FS" &&
	admin get nodes -o name >node-names &&
	printf "node/kind-worker2\nnode/kind-worker3\n" >node-names.expected &&
	test_cmp node-names.expected node-names &&
	python3 -m flux_dws.realstack.containers $OTHER $OTHER_GID >profiles.json &&
	admin apply -f profiles.json &&
	admin get nnfcontainerprofiles -n nnf-system flux-dws-write flux-dws-hold flux-dws-fail \
		flux-dws-mpi
'
KIND_FS=$(cat kind-file-systems 2>/dev/null)

test_expect_success 'a rabbit instance that runs other users'"'"' jobs' '
	export KUBECONFIG="$(pwd)/flux.kubeconfig" &&
	rabbit_instance_config "$(pwd)" &&
	guest_jobs_config "$(pwd)" &&
	start_rabbit_instance "$(pwd)"
'

# job_env ID VAR: VAR of the job's dws_environment event
job_env() {
	flux job eventlog -f json $1 |
		jq -r "select(.name == \"dws_environment\") | .context.variables.$2 // empty"
}

# exception_note ID: the job's exceptions, "TYPE: NOTE" each
exception_note() {
	flux job eventlog -f json "$1" |
		jq -r 'select(.name == "exception") | .context.type + ": " + .context.note'
}

test_expect_success 'the containers write to the job storage as its user, with its port' '
	id=$(started_job write 4 flux-dws-write) &&
	test_when_finished "flux cancel $id 2>/dev/null || :" &&
	ports=$(job_env $id NNF_CONTAINER_PORTS) &&
	test -n "$ports" &&
	until_found "from-*" 4 &&
	find "$KIND_FS" -name "from-*" -exec cat {} + | sort >written &&
	sed "s/^kind-worker[23] $OTHER ports=$ports\$/ok/" written | sort -u >written.ok &&
	echo ok >ok.expected &&
	test_cmp ok.expected written.ok &&
	test $(cut -d" " -f1 written | sort -u | wc -l) = 2 &&
	release_held write &&
	ends_cleanly $id write.events &&
	flux job attach $id >write.out &&
	test $(cat write.out | sort -u) = "$ports" &&
	no_containers $id &&
	test $(allocations | wc -l) = 0
'

# an MPI profile: nnf-sos makes an MPIJob, mpi-operator a launcher on the
# first rabbit and a worker on each; the launcher'"'"'s mpirun (as the job'"'"'s
# user) reaches the workers by name over ssh, and each rank writes who it
# is into each allocation its worker'"'"'s Pod has (the path is the
# launcher'"'"'s, the same on every rabbit in kind mode, where each Pod has
# one rabbit'"'"'s count of the allocations: the doc'"'"'s guide)
test_expect_success LOGIN_USER 'an MPI container: a rank on each rabbit'"'"'s worker, as the job'"'"'s user' '
	id=$(started_job mpi 4 flux-dws-mpi) &&
	test_when_finished "release_all; flux cancel $id 2>/dev/null || :" &&
	wf=$(wfname $id) &&
	printf "%s\n" "$wf-worker-0 $OTHER rank=0/2" "$wf-worker-1 $OTHER rank=1/2" \
		>mpi.expected &&
	until_written "mpi-*" mpi.expected &&
	admin get pods -l training.kubeflow.org/job-name=$wf -o json |
		jq -r ".items[] | .metadata.labels[\"training.kubeflow.org/job-role\"] + \" \" +
			.spec.nodeName" | sort >mpi.pods &&
	printf "%s\n" "worker kind-worker2" "worker kind-worker3" >mpi.workers.expected &&
	grep "^worker " mpi.pods >mpi.workers &&
	test_cmp mpi.workers.expected mpi.workers &&
	grep -E "^launcher kind-worker[23]$" mpi.pods &&
	release_all &&
	release_held mpi &&
	ends_cleanly $id mpi.events &&
	admin wait --for=delete mpijobs -l nnf.cray.hpe.com/container=$wf --timeout=60s &&
	admin wait --for=delete pods -l training.kubeflow.org/job-name=$wf --timeout=60s
'

test_expect_success 'PostRun waits for the containers' '
	id=$(started_job postrun 2 flux-dws-hold) &&
	test_when_finished "flux cancel $id 2>/dev/null || :" &&
	running $id &&
	release_held postrun &&
	kubectl wait --for=jsonpath="{.spec.desiredState}"=PostRun "workflow/$(wfname $id)" \
		--timeout=60s &&
	test "$(kubectl get workflow $(wfname $id) -o jsonpath={.status.ready})" != true &&
	running $id &&
	for d in $(allocations); do touch $d/release; done &&
	ends_cleanly $id postrun.events &&
	no_containers $id
'

test_expect_success 'a failing container fails the job in nnf-sos'"'"' words' '
	id=$(submit_as $OTHER -N2 --setattr=system.dw="$(container flux-dws-fail)" true) &&
	flux job wait-event -t 120 $id clean &&
	exception_note $id >fail.notes &&
	cat fail.notes &&
	grep "DW Directive 1: .*container job" fail.notes &&
	workflow_gone $id &&
	no_containers $id
'

# a cancel while the job runs ends its tasks and runs its epilog: PostRun,
# which nnf-sos holds until the containers end (postRunTimeoutSeconds at
# most), as the reference does; a cancel during the epilog jumps to
# Teardown, where nnf-sos deletes the containers'"'"' Jobs under them
test_expect_success 'a cancel while the containers run, a second in PostRun: nothing left' '
	id=$(started_job cancel 2 flux-dws-hold) &&
	running $id &&
	flux cancel $id &&
	kubectl wait --for=jsonpath="{.spec.desiredState}"=PostRun "workflow/$(wfname $id)" \
		--timeout=60s &&
	running $id &&
	flux cancel $id &&
	kubectl wait --for=jsonpath="{.spec.desiredState}"=Teardown "workflow/$(wfname $id)" \
		--timeout=60s &&
	flux job wait-event -t 120 $id clean &&
	flux job eventlog $id >cancel.events &&
	grep "epilog-finish description=\"dws-epilog\" status=0" cancel.events &&
	workflow_gone $id &&
	no_containers $id &&
	test $(allocations | wc -l) = 0
'

# mpi_running ID: the job's MPI launcher runs its mpirun (120 s)
mpi_running() {
	i=0
	until admin get pods -o json \
		-l training.kubeflow.org/job-name=$(wfname $1),training.kubeflow.org/job-role=launcher |
		jq -e '[.items[].status.containerStatuses[]? | select(.name == "mpi") |
			.state.running] | any' >/dev/null; do
		i=$((i + 1))
		test $i -le 600 || { admin get pods -o wide >&2; return 1; }
		sleep 0.2
	done
}

# the same two cancels with an MPI container: PostRun holds while its
# ranks run; Teardown deletes the MPIJob, and with it its Pods
test_expect_success LOGIN_USER 'MPI: a cancel while the ranks run, a second in PostRun' '
	id=$(started_job mpicancel 2 flux-dws-mpi) &&
	test_when_finished "release_all; flux cancel $id 2>/dev/null || :" &&
	wf=$(wfname $id) &&
	mpi_running $id &&
	flux cancel $id &&
	kubectl wait --for=jsonpath="{.spec.desiredState}"=PostRun "workflow/$wf" --timeout=60s &&
	mpi_running $id &&
	flux cancel $id &&
	kubectl wait --for=jsonpath="{.spec.desiredState}"=Teardown "workflow/$wf" --timeout=60s &&
	flux job wait-event -t 120 $id clean &&
	flux job eventlog $id >mpicancel.events &&
	grep "epilog-finish description=\"dws-epilog\" status=0" mpicancel.events &&
	workflow_gone $id &&
	admin wait --for=delete mpijobs -l nnf.cray.hpe.com/container=$wf --timeout=60s &&
	admin wait --for=delete pods -l training.kubeflow.org/job-name=$wf --timeout=60s &&
	test $(allocations | wc -l) = 0
'

test_expect_success 'the dws service reloaded while the containers run: the job ends cleanly' '
	id=$(started_job reload 2 flux-dws-hold) &&
	test_when_finished "flux cancel $id 2>/dev/null || :" &&
	running $id &&
	flux module remove dws &&
	flux module load "$top_srcdir/src/modules/dws.py" &&
	release_held reload &&
	kubectl wait --for=jsonpath="{.spec.desiredState}"=PostRun "workflow/$(wfname $id)" \
		--timeout=60s &&
	for d in $(allocations); do touch $d/release; done &&
	ends_cleanly $id reload.events &&
	no_containers $id
'

# requires=user-container-auth: nnf-sos makes the workflow's token, which
# the job gets as DW_WORKFLOW_TOKEN, and mounts the site's certificate
# (realstack: nnf-dm-usercontainer-server-tls) and the token's key into
# the containers, which say so in each allocation
test_expect_success 'user-container-auth: the job has DW_WORKFLOW_TOKEN, the containers its files' '
	id=$(started_job auth 4 flux-dws-auth requires=user-container-auth) &&
	test_when_finished "flux cancel $id 2>/dev/null || :" &&
	job_env $id DW_WORKFLOW_TOKEN >token &&
	test $(tr -cd . <token | wc -c) = 2 &&
	until_found "auth-*" 4 &&
	find "$KIND_FS" -name "auth-*" -exec cat {} + | sort | uniq -c >auth.out &&
	printf "%7d %s\n" 4 /etc/usercontainer-tls/tls.crt:1 4 /etc/usercontainer-token/token.key:1 \
		>auth.expected &&
	test_cmp auth.expected auth.out &&
	release_held auth &&
	ends_cleanly $id auth.events &&
	no_containers $id
'

# realk8s.py exits non-zero when the nodes left the host changed
# (flux_dws.realstack.hostguard): stop_realk8s returns its status
test_expect_success 'stop the instance, the nodes, the controllers; the host as found' '
	stop_rabbit_instance &&
	stop_realk8s &&
	rm -rf "$HOLD" "$RUNDIR"
'

test_done
