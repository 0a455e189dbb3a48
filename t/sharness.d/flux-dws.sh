# flux-dws sharness extensions.
#
# Prerequisites:
#   FLUX      flux-core is installed (`flux` on PATH)
#   FLUXION   Fluxion (flux-sched) is installed: its modules load in a test
#             instance (set by skip_all_unless_fluxion, which tries that)
#   KUBECTL   a kubectl client is on PATH
#
# skip_all_unless_flux, skip_all_unless_fluxion, skip_all_unless_plugins:
# end a script that needs a broker (Fluxion, the built Flux plugins) with
# the reason.  With FLUX_DWS_REQUIRE_BROKER=1 (scripts/test.sh sets it
# where `flux` is on PATH) such a script fails instead of skipping: where
# Flux is present, a broker script that does not run is a broken setup,
# not a skip.

top_srcdir=$(cd "$SHARNESS_TEST_SRCDIR/.." && pwd)
export top_srcdir

command -v flux >/dev/null 2>&1 && test_set_prereq FLUX
command -v kubectl >/dev/null 2>&1 && test_set_prereq KUBECTL

# skip_all_because REASON: skip the whole script, or fail it (one failing
# test point that says why) when FLUX_DWS_REQUIRE_BROKER=1.
skip_all_because() {
    if test "${FLUX_DWS_REQUIRE_BROKER:-0}" = 1; then
        test_expect_success "this script needs: $1 (FLUX_DWS_REQUIRE_BROKER=1: no skipping)" '
		false
	'
        test_done
    fi
    skip_all=$1
    test_done
}

skip_all_unless_flux() {
    test_have_prereq FLUX ||
        skip_all_because "flux-core is not installed (no 'flux' on PATH): this script needs a broker"
}

# fluxion_loads: Fluxion's resource and queue manager modules are loaded in
# a one-broker test instance (by its rc1, or by hand in place of
# sched-simple).  Asking the modules, not a Fluxion command, so that a
# command failing for another reason is not taken for a missing Fluxion.
fluxion_loads() {
    flux start -s1 sh -c '
	loaded() { flux module list | grep -q "^$1 "; }
	for m in sched-fluxion-resource sched-fluxion-qmanager; do
		loaded $m && continue
		flux module remove sched-simple 2>/dev/null
		flux module load $m || exit 1
	done
	loaded sched-fluxion-resource && loaded sched-fluxion-qmanager
	' >fluxion-loads.log 2>&1
}

# prereq_fluxion: set FLUXION where Fluxion's modules load, for a script
# whose other tests need no broker; with FLUX_DWS_REQUIRE_BROKER=1 a Flux
# whose Fluxion does not load is a failing test point.
prereq_fluxion() {
    if test_have_prereq FLUX && fluxion_loads; then
        test_set_prereq FLUXION
    elif test "${FLUX_DWS_REQUIRE_BROKER:-0}" = 1; then
        test_expect_success "Fluxion modules load (FLUX_DWS_REQUIRE_BROKER=1: no skipping)" '
		cat fluxion-loads.log; false
	'
    fi
}

# skip_all_unless_fluxion [WHY]: needs FLUX and Fluxion's modules.
skip_all_unless_fluxion() {
    skip_all_unless_flux
    if fluxion_loads; then
        test_set_prereq FLUXION
    else
        skip_all_because "Fluxion (flux-sched) modules do not load in a test instance${1:+: $1} ($(tail -n 3 fluxion-loads.log | tr '\n' ' '))"
    fi
}

# start_emulator [ARGS...]: run `flux-dws emulator` in the background with
# KUBECONFIG=$(pwd)/kubeconfig; it is stopped when the script ends.
start_emulator() {
    rm -f kubeconfig
    flux-dws emulator --kubeconfig "$(pwd)/kubeconfig" "$@" >emulator.log 2>&1 &
    EMULATOR_PID=$!
    export KUBECONFIG="$(pwd)/kubeconfig"
    i=0
    while ! test -s kubeconfig; do
        i=$((i + 1))
        test $i -gt 200 && { cat emulator.log; return 1; }
        kill -0 $EMULATOR_PID 2>/dev/null || { cat emulator.log; return 1; }
        sleep 0.05
    done
}

stop_emulator() {
    test -n "$EMULATOR_PID" && kill $EMULATOR_PID 2>/dev/null && wait $EMULATOR_PID 2>/dev/null
    EMULATOR_PID=
    return 0
}

# skip_all_unless_plugins: end a script that needs dws-jobtap.so and
# dws_environment.so when the build has none (meson found no flux-core).
skip_all_unless_plugins() {
    DWS_BUILDDIR=${DWS_BUILDDIR:-$top_srcdir/build}
    DWS_JOBTAP=$DWS_BUILDDIR/src/job-manager/plugins/dws-jobtap.so
    DWS_SHELL_PLUGINS=$DWS_BUILDDIR/src/shell/plugins
    if ! test -f "$DWS_JOBTAP" || ! test -f "$DWS_SHELL_PLUGINS/dws_environment.so"; then
        skip_all_because "the Flux plugins are not built in $DWS_BUILDDIR (meson found no flux-core: give it -Dpkg_config_path=<flux prefix>/lib/pkgconfig)"
    fi
    export DWS_JOBTAP DWS_SHELL_PLUGINS
}

# The broker's Python (module and job shell tools) finds flux_dws in the
# source tree and the rest in this Python's site-packages.
dws_pythonpath() {
    PYTHONPATH="$top_srcdir/src/python:${DWS_BUILDDIR:-$top_srcdir/build}/src/python:$(python3 -c 'import site; print(site.getsitepackages()[0])')"
    export PYTHONPATH
}

# skip_all_unless_rabbit_jobs: what every script that runs rabbit jobs
# under a real broker needs (flux-core, Fluxion for the ssd scheduling, the
# built plugins), then the broker's PYTHONPATH (dws_pythonpath).
skip_all_unless_rabbit_jobs() {
    skip_all_unless_flux
    skip_all_unless_fluxion "rabbit jobs need its ssd scheduling"
    skip_all_unless_plugins
    dws_pythonpath
}

# rabbit_instance_config DIR [JOBTAP-CONF]: broker config of a test
# instance that is the kind system's four computes, as a site sets one up:
# Fluxion on the flux-dws2jgf graph, dws-jobtap.so from [job-manager]
# plugins (JOBTAP-CONF: its conf table, TOML inline), the [rabbit] table
# (so modprobe loads the dws service; see modprobe/dws.toml), and a
# modprobe.d entry that names the source tree's dws.py.  Needs KUBECONFIG.
# Another system: RABBIT_MAPPING (its rabbitmapping), RABBIT_CLUSTER (the
# graph's cluster name), RABBIT_DWS2JGF_OPTS, RABBIT_RESOURCE_CONF (the
# [resource] TOML dws2jgf reads the compute nodes from); RABBIT_EXTRA_CONF
# is TOML appended after the [rabbit] table; RABBIT_PLUGINS_BEFORE and
# RABBIT_PLUGINS_AFTER are [job-manager] plugins entries (TOML inline
# tables, comma-separated) loaded before and after dws-jobtap.so.
rabbit_instance_config() {
    dir=$1
    mapping=${RABBIT_MAPPING:-$top_srcdir/t/data/rabbitmapping/kind.json}
    mkdir -p "$dir/conf" "$dir/modprobe/modprobe.d" "$dir/modprobe/rc1.d" &&
    cp "$top_srcdir/etc/modprobe/rc1.d/dws.py" "$dir/modprobe/rc1.d/" &&
    flux-dws2jgf ${RABBIT_DWS2JGF_OPTS:-} --cluster-name "${RABBIT_CLUSTER:-kind}" \
        --from-config "${RABBIT_RESOURCE_CONF:-$top_srcdir/t/data/rabbitmapping/kind-resource.toml}" \
        "$mapping" >"$dir/R.json" &&
    cat >"$dir/conf/instance.toml" <<-EOT &&
	[resource]
	noverify = true
	path = "$dir/R.json"
	[sched-fluxion-resource]
	match-format = "rv1"
	[job-manager]
	plugins = [ ${RABBIT_PLUGINS_BEFORE:+$RABBIT_PLUGINS_BEFORE, }{ load = "$DWS_JOBTAP", conf = { ${2:-} } }${RABBIT_PLUGINS_AFTER:+, $RABBIT_PLUGINS_AFTER} ]
	[rabbit]
	kubeconfig = "$KUBECONFIG"
	mapping = "$mapping"
	${RABBIT_EXTRA_CONF:-}
	EOT
    sed "s|@DWS_MODULE@|$top_srcdir/src/modules/dws.py|" \
        "$top_srcdir/etc/modprobe/dws.toml.in" >"$dir/modprobe/modprobe.d/dws.toml"
}

# restartable_instance_opts: an instance that keeps its jobs across a
# restart: its state in STATEDIR (a new temporary directory; remove it at
# the end), and a broker.cleanup-timeout as a bound on a stop that waits
# for held epilogs (term_rabbit_instance cuts it on a condition).  Exports RABBIT_BROKER_OPTS for start_rabbit_instance.
restartable_instance_opts() {
    STATEDIR=$(mktemp -d "${TMPDIR:-/tmp}/flux-dws-state.XXXXXX") &&
    RABBIT_BROKER_OPTS="-Sstatedir=$STATEDIR -Sbroker.cleanup-timeout=300" &&
    export RABBIT_BROKER_OPTS
}

# guest_jobs_config DIR: after rabbit_instance_config DIR, let the instance
# run other users' jobs: a stand-in IMP (DIR/imp.sh: the job shell run as
# the job's owner, as flux-core's `imp exec SHELL JOBID` does), guests
# allowed, and the brokers' sockets in RUNDIR (mode 755: flux start makes
# its test rundir 0700, out of the other user's reach).  Exports
# RABBIT_BROKER_OPTS for start_rabbit_instance; remove RUNDIR at the end.
guest_jobs_config() {
    dir=$1
    cat >"$dir/imp.sh" <<-"EOF" &&
	#!/bin/sh
	case $1 in
	exec)
	    shift
	    uid=$(flux job info "$2" eventlog | head -1 | jq -e .context.userid) || exit 1
	    gid=$(id -g "$uid" 2>/dev/null || echo "$uid")
	    exec setpriv --reuid="$uid" --regid="$gid" --clear-groups "$@" ;;
	kill) kill -"$2" -"$3" 2>/dev/null || kill -"$2" "$3" ;;
	*) echo "test-imp: unknown command $1" >&2; exit 1 ;;
	esac
	EOF
    chmod +x "$dir/imp.sh" &&
    cat >"$dir/conf/exec.toml" <<-EOT &&
	[exec]
	imp = "$dir/imp.sh"
	[access]
	allow-guest-user = true
	allow-root-owner = true
	EOT
    RUNDIR=$(mktemp -d "${TMPDIR:-/tmp}/flux-dws-run.XXXXXX") &&
    chmod 755 "$RUNDIR" &&
    RABBIT_BROKER_OPTS="--test-rundir=$RUNDIR" &&
    export RABBIT_BROKER_OPTS
}

# submit_as UID ARGS...: flux submit ARGS as user UID; prints the job id.
# A J signed by UID with mechanism none (flux-core's sign_none.c format),
# as flux-core's own multi-user tests submit: the owner may send as
# another user (FLUX_HANDLE_USERID), and job-ingest takes mechanism none
# from the owner's role only, so the rolemask stays.  The job runs as UID
# under guest_jobs_config's stand-in IMP.
submit_as() {
    uid=$1 && shift &&
    flux run --dry-run "$@" | flux python -c '
import base64, sys
header = f"version\0i1\0userid\0i{int(sys.argv[1])}\0mechanism\0snone\0".encode()
print(f"{base64.b64encode(header).decode()}."
      f"{base64.b64encode(sys.stdin.buffer.read()).decode()}.none")' "$uid" >"J.$uid" &&
    FLUX_HANDLE_USERID=$uid flux job submit --flags=signed "J.$uid"
}

# start_rabbit_instance DIR: run a 4-broker instance (RABBIT_SIZE brokers;
# hosts compute-[01-04], or RABBIT_TEST_HOSTS: a test may give several ranks
# one hostname)
# with the config of rabbit_instance_config DIR in the background until
# stop_rabbit_instance; exports FLUX_URI.  Returns once the dws service
# has marked every rabbit's ssd vertices up in Fluxion.  RABBIT_BROKER_OPTS
# (split on blanks: no paths with spaces) adds flux start options, e.g.
# -Sstatedir=DIR for an instance that is restarted with its jobs.
start_rabbit_instance() {
    dir=$1
    rm -f "$dir/uri" "$dir/hold"
    mkfifo "$dir/hold" || return 1
    FLUX_MODPROBE_PATH_APPEND="$dir/modprobe" \
    flux start -s${RABBIT_SIZE:-4} --test-hosts="${RABBIT_TEST_HOSTS:-compute-[01-04]}" ${RABBIT_BROKER_OPTS:-} \
        -Sconf.shell_pluginpath="$DWS_SHELL_PLUGINS" \
        --config-path="$dir/conf" \
        sh -c 'echo "$FLUX_URI" >"$1/uri.new" && mv "$1/uri.new" "$1/uri" && read x <"$1/hold"' \
        sh "$dir" >"$dir/instance.log" 2>&1 &
    RABBIT_INSTANCE_PID=$!
    RABBIT_INSTANCE_DIR=$dir
    i=0
    while ! test -s "$dir/uri"; do
        i=$((i + 1))
        test $i -gt 600 && { cat "$dir/instance.log"; return 1; }
        kill -0 $RABBIT_INSTANCE_PID 2>/dev/null || { cat "$dir/instance.log"; return 1; }
        sleep 0.05
    done
    FLUX_URI=$(cat "$dir/uri")
    export FLUX_URI
    # the dws service's rabbit health marks the rabbits' ssd vertices up
    # (RABBIT_WAIT: another condition, or "none" for an instance whose
    # service is not loaded)
    test "${RABBIT_WAIT:-}" = none ||
    wait_rabbits "${RABBIT_WAIT:-[.rabbits[].fluxion] | all(. == \"up\")}"
}

# term_rabbit_instance: stop the instance as systemd does (SIGTERM to the
# rank 0 broker): the cleanup then cancels running jobs, and then waits for
# the queue to go idle, i.e. for every epilog (flux-core's rc1), which a
# test holding an epilog must cut short.  flux-core cuts it after
# broker.cleanup-timeout (on a terminating signal only), but a timeout
# short enough not to slow the tests can end the cleanup before its
# `flux cancel` ran on a loaded machine.  So the cut is a condition: once
# no running job lacks an exception (the cancel went through; bounded at
# 120 s), a second SIGTERM aborts the rest of the cleanup.  Its exit
# status is not looked at.
term_rabbit_instance() {
    term_pid=$(flux getattr broker.pid) &&
    kill -TERM $term_pid || return 1
    term_ticks=0 # of 0.2 s
    while test $term_ticks -lt 600 &&
        flux jobs -n -f run -o "{id} {exception.type}" 2>/dev/null |
            awk "NF < 2 {found = 1} END {exit !found}"; do
        sleep 0.2
        term_ticks=$((term_ticks + 1))
    done
    kill -TERM $term_pid 2>/dev/null
    wait $RABBIT_INSTANCE_PID
    RABBIT_INSTANCE_PID=
    unset FLUX_URI
}

# dws_rabbits [ARGS]: flux-dws rabbits with the broker's Python (which has
# the flux bindings; the venv's flux-dws may not).
dws_rabbits() {
    flux python -m flux_dws rabbits "$@"
}

# dws_rpc TOPIC PAYLOAD: send one RPC on the instance (PAYLOAD as JSON
# text); print its answer as JSON, or "error ERRNO: TEXT" and fail
dws_rpc() {
    flux python -c '
import json, sys
import flux
try:
    print(json.dumps(flux.Flux().rpc(sys.argv[1], sys.argv[2]).get()))
except OSError as exc:
    print(f"error {exc.errno}: {exc.strerror}")
    sys.exit(1)
' "$@"
}

# reload_fluxion: Fluxion's modules reloaded in place (its graph loaded
# anew: every ssd vertex down, as in the JGF, until the dws service sees
# the reload and tells it again)
reload_fluxion() {
    flux module remove sched-fluxion-qmanager &&
    flux module remove sched-fluxion-feasibility &&
    flux module reload sched-fluxion-resource &&
    flux module load sched-fluxion-feasibility &&
    flux module load sched-fluxion-qmanager
}

# wait_rabbits JQ-FILTER [SECONDS]: until the dws service's dws.rabbits
# view (flux-dws rabbits --json) satisfies JQ-FILTER (default 30 s).  The
# service gives no event for "applied", so this asks it again every 0.1 s.
wait_rabbits() {
    i=0
    limit=$(( ${2:-30} * 10 ))
    while ! dws_rabbits --json 2>/dev/null | jq -e ".ready and ($1)" >/dev/null; do
        i=$((i + 1))
        if test $i -gt $limit; then
            dws_rabbits --json >&2
            return 1
        fi
        sleep 0.1
    done
}

# stop_rabbit_instance: let the instance's initial program end (rc3 then
# removes the dws service); its exit status is ours.
stop_rabbit_instance() {
    test -n "$RABBIT_INSTANCE_PID" || return 0
    # the initial program reads the fifo; if the instance died there is
    # no reader, and an unguarded write would block forever
    kill -0 $RABBIT_INSTANCE_PID 2>/dev/null &&
        timeout 30 sh -c 'echo done >"$1"' sh "$RABBIT_INSTANCE_DIR/hold"
    # it ends once its queue is idle: a job a failed case left behind (its
    # epilog held by a stalled service) must not hold the script for good.
    # Bounded (RABBIT_STOP_BOUND seconds), then SIGTERM (the broker's
    # cleanup cancels what runs), then SIGKILL
    stop_ticks=0 # of 0.2 s
    stop_bound=$(( ${RABBIT_STOP_BOUND:-600} * 5 ))
    while kill -0 $RABBIT_INSTANCE_PID 2>/dev/null; do
        case $stop_ticks in
        "$stop_bound")
            echo "stop_rabbit_instance: still running after ${RABBIT_STOP_BOUND:-600} s: SIGTERM" >&2
            kill -TERM $RABBIT_INSTANCE_PID 2>/dev/null ;;
        $(( stop_bound + 300 )))
            echo "stop_rabbit_instance: still running 60 s after SIGTERM: SIGKILL" >&2
            kill -KILL $RABBIT_INSTANCE_PID 2>/dev/null ;;
        esac
        sleep 0.2
        stop_ticks=$((stop_ticks + 1))
    done
    wait $RABBIT_INSTANCE_PID
    rc=$?
    RABBIT_INSTANCE_PID=
    unset FLUX_URI
    test $rc = 0 || cat "$RABBIT_INSTANCE_DIR/instance.log"
    return $rc
}

# dmesg_has PATTERN: the broker's log gets a line matching PATTERN (a log
# line has no event to wait on; DMESG_WAIT seconds at most, 60 by default:
# a bound for a loaded machine, where a poll behind the line may take 10 s)
dmesg_has() {
    dmesg_deadline=$(($(date +%s) + ${DMESG_WAIT:-60}))
    until flux dmesg | grep "$1"; do
        test "$(date +%s)" -lt $dmesg_deadline || return 1
        sleep 0.1
    done
}

# service_knows JOBID: the dws service has had a dws.create for the job
# (dws.status lists every job it holds, from the request on)
service_knows() {
    flux python -c "import flux, json; print(json.dumps(flux.Flux().rpc('dws.status').get()))" \
        >status.json &&
    jq -e --argjson id "$(flux job id --to=dec "$1")" '.workflows | index($id) != null' status.json
}

# stop_lost_instance RANK: stop_rabbit_instance for an instance whose
# broker RANK was disconnected (flux overlay disconnect): flux start then
# exits 1, having reported that broker's exit status 1 and no other
# broker's ("flux-start: RANK (pid N) exited with rc=1").  Any other
# ending (another status, another broker, an instance that does not stop)
# fails, with the instance's log.
stop_lost_instance() {
    lost_dir=$RABBIT_INSTANCE_DIR
    stop_rabbit_instance >"$lost_dir/stop.out" 2>&1
    lost_rc=$?
    grep "^flux-start: .* exited with rc=" "$lost_dir/instance.log" >"$lost_dir/exits"
    test $lost_rc = 1 &&
    grep -q "^flux-start: $1 (pid [0-9]*) exited with rc=1$" "$lost_dir/exits" &&
    test "$(wc -l <"$lost_dir/exits")" = 1 || {
        echo "stop_lost_instance $1: flux start exited $lost_rc; its brokers:" >&2
        cat "$lost_dir/exits" "$lost_dir/instance.log" >&2
        return 1
    }
}

# wfname JOBID: the name of a job's Workflow (fluxjob-<decimal id>)
wfname() {
    echo "fluxjob-$(flux job id --to=dec "$1")"
}

# workflow_gone JOBID: until the job's Workflow is deleted (60 s at most)
workflow_gone() {
    kubectl wait --for=delete "workflow/$(wfname "$1")" --timeout=60s
}

# servers_of ID FILE: the job's Servers (FILE) and their allocationSets
# (FILE.sets), kept until the Workflow goes
servers_of() {
    kubectl get servers -o json >"$2" &&
    jq -e --arg wf "fluxjob-$(flux job id --to=dec "$1")" \
        '[.items[] | select(.metadata.name | startswith($wf))] | .[0].spec.allocationSets' \
        "$2" >"$2.sets"
}

# resources_form ID: the shape of the resources the dws service gave the
# job (its jobspec-update): the types of the top-level entries, each with
# its children's: "node:slot ssd" (Lustre spread: ssd beside the nodes)
# or "slot:node,ssd" (node-local: each node slot with its own ssd)
resources_form() {
    flux job eventlog -f json "$1" |
        jq -r 'select(.name == "jobspec-update") | .context.resources
               | map(.type + (if .with then ":" + ([.with[].type] | join(",")) else "" end))
               | join(" ")'
}

# osts_within_reservation R-FILE SETS-FILE: every rabbit the Servers use is
# one Fluxion reserved ssd on in the job's R, never for more than it
# reserved there; prints the reservation and the OST GiB per rabbit
osts_within_reservation() {
    flux python - "$1" "$2" <<-'EOF'
	import json, sys
	from flux_dws.libdws import lustre
	got = lustre.reserved_of_R(json.load(open(sys.argv[1])))
	sets = json.load(open(sys.argv[2]))
	use = {}
	for s in sets:
	    for e in s["storage"]:
	        use[e["name"]] = use.get(e["name"], 0) + s["allocationSize"] * e["allocationCount"]
	assert set(use) <= set(got), (use, got)
	assert all(use[r] <= got[r] << 30 for r in use), (use, got)
	ost = {e["name"]: e["allocationCount"] * s["allocationSize"] >> 30
	       for s in sets if s["label"] == "ost" for e in s["storage"]}
	print("reserved GiB", sorted(got.items()), "OST GiB", sorted(ost.items()))
	EOF
}

# submit_held NAME [SUBMIT-ARGS...]: a rabbit job whose task prints its
# DW_* variables (its storage: flux job attach shows them) and waits until
# release_job NAME.  SUBMIT-ARGS: flux submit options in place of -N1 and
# an xfs file system of 10 GiB.  The task polls for a file named by
# absolute path (a fifo's writer blocks for good when the task died
# first, and says nothing).
submit_held() {
    held_name=$1 && shift &&
    if test $# = 0; then
        set -- -N1 --setattr=system.dw="#DW jobdw type=xfs capacity=10GiB name=scratch"
    fi &&
    rm -f "go-$held_name" &&
    flux submit "$@" \
        sh -c 'env | grep "^DW_" | sort; while ! test -e "$0"; do sleep 0.1; done' \
        "$PWD/go-$held_name"
}
# release_job NAME [ID]: let NAME's task end; with ID, wait for the job's
# finish and, if it does not come, show its eventlog and output
release_job() {
    touch "go-$1" || return 1
    test -z "$2" && return 0
    flux job wait-event -t 30 "$2" finish >/dev/null || {
        echo "job $2 ($1) did not finish after its release:" >&2
        flux job eventlog "$2" >&2
        flux job eventlog -p guest.output "$2" >&2
        return 1
    }
}

# wait_for_file FILE PID LOG [SECONDS]: until FILE is not empty (the
# readiness a background process PID writes: a kubeconfig, a URI), at most
# SECONDS (default 10) and only while PID lives; else show LOG and fail
wait_for_file() {
    i=0
    while ! test -s "$1"; do
        i=$((i + 1))
        if test $i -gt $(( ${4:-10} * 20 )) || ! kill -0 "$2" 2>/dev/null; then
            cat "$3"
            return 1
        fi
        sleep 0.05
    done
}

# until_true SECONDS CMD...: run CMD every 0.2 s until it succeeds; fail
# after SECONDS (for what no event announces, such as a data movement's
# progress or a phase in the service's view)
until_true() {
    deadline=$(($(date +%s) + $1))
    shift
    until "$@"; do
        test "$(date +%s)" -lt $deadline || return 1
        sleep 0.2
    done
}

# kick WORKFLOW...: a stalled state moves on once its fault is cleared and
# the Workflow changes (one already deleted -- its job went on by itself,
# e.g. after an API server restart lost the faults -- needs no kick)
kick() {
    for w in "$@"; do
        kubectl annotate --overwrite "workflow/$w" flux-dws-test/kick="$(date +%s%N)" \
            2>kick.err || grep -q NotFound kick.err || { cat kick.err; return 1; }
    done
}

# clear_and_end ID...: clear the emulator's faults, kick the jobs'
# Workflows, and wait for each job to end
clear_and_end() {
    flux-dws fault clear &&
    kick $(for id; do wfname $id; done) &&
    for id; do
        flux job wait-event -t 60 $id clean || return 1
    done
}
# completed ID: the job ended COMPLETED, its dws-epilog with status 0, no
# exception (its eventlog is left in ID.events)
completed() {
    flux job eventlog $1 >$1.events &&
    grep "epilog-finish description=\"dws-epilog\" status=0" $1.events &&
    test_must_fail grep exception $1.events &&
    test $(flux jobs -no "{result}" $1) = COMPLETED
}

# explained ID NOTE: the job's eventlog has a dws-explanation entry, after
# its exception, for exactly NOTE (the exception's note, left as the
# reference writes it) with a plain sentence; if not, the eventlog and the
# plugin's log lines about the job go to stderr (a flake shows its cause)
explained() {
    flux job eventlog -f json "$1" >"explained.$1.json" &&
    jq -s -e --arg note "$2" '
        (map(.name) | index("exception")) as $exc
        | (map(.name == "dws-explanation" and .context.note == $note) | index(true)) as $at
        | $at != null and $exc != null and $exc < $at
          and (.[$at].context.explanation | length > 0)' "explained.$1.json" >/dev/null || {
        # what there was instead, and the plugin's words about the job
        echo "job $1: no dws-explanation for '$2' after its exception:" >&2
        flux job eventlog "$1" >&2
        flux dmesg | grep "dws: job $1" >&2
        return 1
    }
}

# waits_on_limit ID: the job is in DEPEND holding dws-limit
# ([rabbit.limits]), with no Workflow
waits_on_limit() {
    test "$(flux jobs -no "{state}" $1)" = DEPEND &&
    flux job eventlog $1 >$1.deps &&
    grep "dependency-add description=\"dws-limit\"" $1.deps &&
    test_must_fail grep "dependency-remove description=\"dws-limit\"" $1.deps &&
    test_must_fail kubectl get workflow $(wfname $1) 2>/dev/null
}

# waits_for ID REGEX: flux dws jobs -A says the job waits on a limit, for a
# reason that matches REGEX (the reason follows what is held)
waits_for() {
    flux python -m flux_dws jobs -A --json >why.json &&
    jq -r --argjson id "$(flux job id --to=dec $1)" \
        ".jobs[] | select(.id == \$id and .phase == \"waiting-limit\") | .waiting" \
        why.json | grep "$2"
}

# down_ssds: the ssd vertex paths Fluxion has down, one per line, sorted
down_ssds() {
    flux python -c "import flux, json; print(json.dumps(flux.Flux().rpc(
        \"sched-fluxion-resource.find\",
        {\"criteria\": \"status=down\", \"format\": \"jgf\"}).get()))" |
    jq -r "(.R // {graph: {nodes: []}}).graph.nodes[] | select(.metadata.type == \"ssd\")
        | .metadata.paths.containment" | sort
}

# held_paths ID: the ssd vertices the service holds for the job, applied
held_paths() {
    dws_rabbits --json |
    jq -r --argjson id "$(flux job id --to=dec "$1")" \
        '.holds[] | select(.job == $id and .applied) | .paths[]' | sort
}

# prestaging ID: a pre-staged job waits in DEPEND on dws-prestage alone,
# no node allocated
prestaging() {
    test "$(flux jobs -no {state} $1)" = DEPEND &&
    test "$(flux jobs -no {dependencies} $1)" = dws-prestage &&
    ! flux job eventlog $1 | grep -q " alloc"
}

# phase_of ID: the phase the dws service has the job in
phase_of() {
    flux python -m flux_dws status --json |
    jq -r --argjson id "$(flux job id --to=dec "$1")" '.jobs[] | select(.id == $id) | .phase'
}

phase_is() {
    test "$(phase_of "$1")" = "$2"
}

# wait_phase ID PHASE [SECONDS]: until the service has the job in PHASE (30 s)
wait_phase() {
    until_true ${3:-30} phase_is "$1" "$2" ||
    { echo "job $1 is in phase '$(phase_of "$1")', not '$2'" >&2; return 1; }
}

down_count_is() {
    test "$(down_ssds | wc -l)" -eq "$1"
}

# wait_down N [SECONDS]: until Fluxion has exactly N ssd vertices down
# (30 s; the service looks for a Fluxion restart every 10 s)
wait_down() {
    until_true ${2:-30} down_count_is "$1" || { down_ssds >&2; return 1; }
}

# start_realk8s: a real control plane (t/scripts/realk8s.py) for this
# directory: admin.kubeconfig, flux.kubeconfig, then ready (120 s at most);
# exit status 77 with realk8s.log saying why when it is not built.
# REALK8S_ARGS: realk8s.py's options (e.g. --controllers nnf: the real
# DWS and NNF controllers run with it)
start_realk8s() {
    # shellcheck disable=SC2086
    python3 "$top_srcdir/t/scripts/realk8s.py" "$(pwd)" ${REALK8S_ARGS:-} >realk8s.log 2>&1 &
    REALK8S_PID=$!
    # stopped when the script exits, whatever failed before its own stop
    # (left running, it holds prove's output and the nodes' lock); then
    # sharness' own EXIT trap, with the script's exit status
    trap 'realk8s_status=$?; stop_realk8s; (exit $realk8s_status); die' EXIT
    # bounded by realk8s.py's own waits (the real controllers' webhook
    # port, which another script or the referee may hold: at most 30 min,
    # flux_dws.realstack.nnf.LOCK_TIMEOUT), then by REALK8S_WAIT seconds;
    # given up, the half-started stack is stopped: left running, it would
    # hold the test's output open (prove waits for it) for ever
    realk8s_deadline=$(($(date +%s) + ${REALK8S_WAIT:-2100}))
    while ! test -s ready; do
        if ! kill -0 $REALK8S_PID 2>/dev/null; then
            wait $REALK8S_PID
            return $?
        fi
        if test "$(date +%s)" -ge $realk8s_deadline; then
            cat realk8s.log
            stop_realk8s
            return 1
        fi
        sleep 0.05
    done
}

stop_realk8s() {
    test -n "$REALK8S_PID" && kill $REALK8S_PID 2>/dev/null && wait $REALK8S_PID
    REALK8S_PID=
    return 0
}

# realk8s_or_skip: start_realk8s, or skip the script with the reason it is
# not built (a failure under FLUX_DWS_REQUIRE_REALK8S=1), or fail it
realk8s_or_skip() {
    start_realk8s
    rc=$?
    if test $rc = 77; then
        reason=$(sed -n 's/^realk8s: //p' realk8s.log)
        if test "${FLUX_DWS_REQUIRE_REALK8S:-0}" = 1; then
            test_expect_success "the real control plane: $reason (FLUX_DWS_REQUIRE_REALK8S=1)" '
		false
	'
            test_done
        fi
        skip_all="the real control plane is not built: $reason"
        test_done
    elif test $rc != 0; then
        cat realk8s.log
        test_expect_success 'the real control plane starts' 'false'
        test_done
    fi
}

# nnf_manager VERB NAME: pause, resume or restart one of the real managers
# of start_realk8s --controllers nnf (dws-controller, nnf-sos-storage,
# nnf-sos-node-RABBIT, nnf-dm-RABBIT, dws-webhook) or of its control
# plane's servers (etcd, kube-apiserver; "restart history" compacts
# etcd); returns once done
nnf_manager() {
    rm -f signal.done &&
    echo "$2" >signal &&
    case $1 in
    pause) kill -USR1 $REALK8S_PID ;;
    resume) kill -USR2 $REALK8S_PID ;;
    restart) kill -HUP $REALK8S_PID ;;
    *) echo "nnf_manager: no verb $1" >&2; return 1 ;;
    esac &&
    until_true 60 test -s signal.done &&
    { grep -qx "$1 $2" signal.done || { cat signal.done >&2; return 1; }; }
}

# attach_controllers LOG: the emulator's controllers of kind attached to
# the real API server as its admin (flux-dws emulator --api-server, in the
# background, pid in attached.pid), until they say so (60 s); flux-dws
# fault reaches them through faults.kubeconfig (realk8s_fault)
attach_controllers() {
    flux-dws emulator --api-server "$(pwd)/admin.kubeconfig" --system kind \
        --latency zero --kubeconfig "$(pwd)/faults.kubeconfig" >"$1" 2>&1 &
    echo $! >attached.pid &&
    until_true 60 grep -q "controllers of kind attached to" "$1"
}

detach_controllers() {
    kill $(cat attached.pid) && wait $(cat attached.pid)
    return 0
}

# realk8s_fault ARGS: flux-dws fault ARGS against the attached controllers
realk8s_fault() {
    flux-dws fault --kubeconfig "$(pwd)/faults.kubeconfig" "$@"
}
