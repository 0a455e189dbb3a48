#!/bin/sh
test_description='the dws service under a real broker (needs flux-core >= 0.84)

The service runs as a broker module (flux module load dws.py) and
stand-alone (flux python dws.py), against the emulator; requests are sent
as the jobtap plugin sends them.'

. "$(dirname "$0")"/sharness.sh

skip_all_unless_flux

DWS_PY="$top_srcdir/src/modules/dws.py"
# the broker's Python finds flux_dws in the source tree and the venv's packages
PYTHONPATH="$top_srcdir/src/python:$top_srcdir/build/src/python:$(python3 -c 'import site; print(site.getsitepackages()[0])')"
export PYTHONPATH

test_expect_success 'start the emulator (kind system)' '
	start_emulator --system kind --latency zero &&
	mkdir -p conf &&
	printf "[rabbit]\nkubeconfig = \"%s\"\n" "$KUBECONFIG" >conf/rabbit.toml
'

cat >rpc.py <<'PYEOF'
import json, sys
import flux
topic = sys.argv[1]
payload = json.loads(sys.argv[2]) if len(sys.argv) > 2 else None
try:
    print(json.dumps(flux.Flux().rpc(topic, payload).get()))
except OSError as exc:
    print(f"error: {exc.strerror}")
    sys.exit(1)
PYEOF

cat >module.sh <<'EOF2'
set -e
flux module load "$DWS_PY"
flux module list | grep -w dws
flux python rpc.py dws.status >status.json
flux python rpc.py dws.create "{\"jobid\": 77, \"userid\": 0, \"resources\": [{\"type\": \"node\", \"count\": 1}], \"failure_tolerance\": 0, \"dw_directives\": \"#DW jobdw type=xfs capacity=10GiB name=scratch\"}" >create.json
kubectl get workflow fluxjob-77 -o jsonpath="{.spec.jobID}" >jobid.out
flux python rpc.py dws.create "{\"jobid\": \"x\"}" >bad.json
flux python rpc.py dws.create "{\"jobid\": 78, \"userid\": 0, \"resources\": [], \"failure_tolerance\": 0, \"dw_directives\": \"#DW jobdw type=xfs capacity=10GiB\"}" >denied.json
flux python rpc.py dws.teardown "{\"jobid\": 77}" >teardown.json
kubectl wait --for=delete workflow/fluxjob-77 --timeout=60s
flux python rpc.py dws.status >status2.json
flux module remove dws
EOF2

test_expect_success 'broker module: load, serve, create and tear down a Workflow' '
	DWS_PY="$DWS_PY" flux start --config-path="$(pwd)/conf" sh -x module.sh &&
	grep "\"synced\": true" status.json &&
	grep "\"computes\": 4" status.json &&
	grep "\"success\": true" create.json &&
	test "$(cat jobid.out)" = "f2L" &&
	grep "jobid must be a non-negative integer" bad.json &&
	grep "vworkflow.kb.io" denied.json &&
	grep "\"success\": true" teardown.json &&
	grep "\"jobs\": \[\]" status2.json
'

test_expect_success 'broker module: a bad [rabbit] table refuses to load, naming the key' '
	mkdir -p badconf &&
	printf "[rabbit]\nsetup_timeout = \"soon\"\n" >badconf/rabbit.toml &&
	test_must_fail flux start --config-path="$(pwd)/badconf" \
		flux module load "$DWS_PY" 2>badconf.err &&
	grep "rabbit.setup_timeout" badconf.err
'

test_expect_success 'broker module: a bad release_computes refuses to load, naming the key and its values' '
	mkdir -p badrelease &&
	printf "[rabbit]\nrelease_computes = \"early\"\n" >badrelease/rabbit.toml &&
	test_must_fail flux start --config-path="$(pwd)/badrelease" \
		flux module load "$DWS_PY" 2>badrelease.err &&
	grep "rabbit.release_computes: must be \"after-unmount\" or \"after-teardown\", got \"early\"" \
		badrelease.err
'

cat >reload.sh <<'EOF4'
set -e
conf=$1
flux module load "$DWS_PY"
printf "[rabbit]\nkubeconfig = \"%s\"\nsetup_timeout = \"soon\"\n" "$KUBECONFIG" >"$conf/rabbit.toml"
! flux config reload 2>reload-bad.err
flux python rpc.py dws.status >reload-status.json
printf "[rabbit]\nkubeconfig = \"%s\"\nsetup_timeout = 30\n" "$KUBECONFIG" >"$conf/rabbit.toml"
flux config reload
flux dmesg | grep "dws" >reload-dmesg.out
flux module remove dws
EOF4

test_expect_success 'broker module: a bad config reload is refused naming the key, the old one kept' '
	mkdir -p reloadconf &&
	cp conf/rabbit.toml reloadconf/ &&
	DWS_PY="$DWS_PY" flux start --config-path="$(pwd)/reloadconf" \
		sh -x reload.sh "$(pwd)/reloadconf" &&
	grep "rabbit.setup_timeout: must be a number of seconds" reload-bad.err &&
	grep "\"synced\": true" reload-status.json &&
	grep "config reload refused, keeping the old one" reload-dmesg.out &&
	grep "configuration reloaded" reload-dmesg.out
'

# one_line_error FILE WORDS: the stderr of a failed module load (FILE)
# has the module's message once on its own stderr ("dws.py: ...") and
# once in the broker's log ("dws.err[0]: dws: ..."), each one line naming
# WORDS; the rest is flux-module's and the broker's own one-line reports
# (a message of more lines, a traceback, would leave lines of no such form)
one_line_error() {
    # the module's line and the broker's log lines share stderr: a log line
    # written between the module's text and its newline is put back on a
    # line of its own first (it starts with its timestamp); the broker
    # writes a log line's timestamp and its text apart, so the module's
    # newline may fall between them: a timestamp alone joins the next line
    sed -E "s/(.)([A-Z][a-z]{2} [ 0-9]{2} [0-9:.]+ [A-Z]+ [0-9]{4} )/\1\n\2/g" "$1" |
        sed -E -e "/^[A-Z][a-z]{2} [ 0-9]{2} [0-9:.]+ [A-Z]+ [0-9]{4} \$/{N;s/\n//;}" \
            -e "/^\$/d" >"$1.lines" &&
    # the message twice: the module's own line and its log line; other
    # broker log lines (a slow start's) may come and go, and are allowed
    { test "$(grep -c "^dws.py: .*$2" "$1.lines")" = 1 &&
      test "$(grep -c " dws\.err\[0\]: dws: .*$2" "$1.lines")" = 1 &&
      test "$(grep -c "$2" "$1.lines")" = 2 &&
      { grep -v "^dws.py: \|^flux-module: load \|^[A-Z][a-z][a-z] [ 0-9]* [0-9:.]* [A-Z]* [0-9]* [a-z0-9-]*\.[a-z]*\[[0-9]*\]: " \
          "$1.lines" >"$1.other"; test $? -le 1; } &&
      test_must_be_empty "$1.other"; } ||
    { echo "one_line_error: $1 as lines:"; cat "$1.lines"; false; }
}

test_expect_success 'broker module: no Kubernetes or a bad option fails the load, one line, no traceback' '
	test_must_fail flux start --config-path="$(pwd)/conf" \
		flux module load "$DWS_PY" --kubeconfig /nonexistent/kubeconfig 2>nokube.err &&
	cat nokube.err &&
	one_line_error nokube.err "cannot reach Kubernetes: invalid kubeconfig /nonexistent/kubeconfig: " &&
	test_must_fail grep Traceback nokube.err &&
	test_must_fail flux start --config-path="$(pwd)/conf" \
		flux module load "$DWS_PY" --no-such-option 2>badopt.err &&
	cat badopt.err &&
	one_line_error badopt.err "unrecognized arguments: --no-such-option$" &&
	test_must_fail grep Traceback badopt.err
'

test_expect_success 'stand-alone: bad options exit 2, no Kubernetes exits 3' '
	test_expect_code 2 flux start --config-path="$(pwd)/conf" \
		flux python "$DWS_PY" --no-such-option &&
	test_expect_code 3 flux start --config-path="$(pwd)/conf" \
		flux python "$DWS_PY" --kubeconfig /nonexistent/kubeconfig
'

test_expect_success 'stand-alone as a Flux job: ready signal, then serves' '
	cat >standalone.sh <<-EOF3 &&
	set -e
	id=\$(flux submit flux python "$DWS_PY")
	flux job wait-event -t 60 -m note="dws watchers setup" \$id exception
	flux python rpc.py dws.status >standalone.json
	flux cancel \$id
	EOF3
	flux start --config-path="$(pwd)/conf" sh -x standalone.sh &&
	grep "\"synced\": true" standalone.json
'

# flux-coral2 #466: a backlog of watch events must not hold up requests.
# The service's link runs posted events a slice at a time; between slices
# the broker dispatches the requests that came.  2,000 posted events of
# 1 ms each, then a request: it is answered while most of them still wait
# (before, it waited for all 2,000).
cat >backlog.py <<'PYEOF'
import json, threading, time
import flux
from flux_dws.service.fluxlink import FluxLink

h = flux.Flux()
link = FluxLink(h)
N = 2000
ran = []
seen = {}

def handler(req):
    seen["ran"] = len(ran)
    link.respond(req.msg, {"ran": len(ran)})

link.serve("backlog", handler)

def one():
    time.sleep(0.001)  # an engine step
    ran.append(1)
    if len(ran) == N:
        h.reactor_stop()

for _ in range(N):
    link.post(one)

def ask():
    seen["answer"] = flux.Flux().rpc("backlog.ping", {}).wait_for(60).get()

t = threading.Thread(target=ask)
t.start()
timeout = h.timer_watcher_create(120, lambda *a: h.reactor_stop())
timeout.start()
h.reactor_run()
t.join(60)
print(json.dumps({"posted": N, "ran": len(ran), "answered_after": seen.get("ran")}))
PYEOF

test_expect_success 'the link answers a request between slices of a backlog of posted events' '
	flux start flux python backlog.py >backlog.json &&
	cat backlog.json &&
	jq -e ".ran == 2000 and .answered_after != null and .answered_after < 1000" backlog.json
'

# Garbage (flux futures among it) is collected on the reactor thread,
# never in the thread whose allocations cross Python's threshold: a flux
# future freed in a watch thread gave its matchtag back to the handle's
# pool while the reactor took one ("File exists" at El Capitan scale).
# A thread makes 500 cycles with finalizers and allocates well past the
# threshold: none is collected there, all on the reactor.
cat >gcthread.py <<'PYEOF'
import gc, json, threading
import flux
from flux_dws.service.fluxlink import FluxLink

h = flux.Flux()
link = FluxLink(h)
where = []

class Cycle:
    def __init__(self):
        self.me = self
    def __del__(self):
        where.append(threading.current_thread().name)

keep = []
def churn():
    for _ in range(500):
        Cycle()
    keep.extend([] for _ in range(gc.get_threshold()[0] * 20))

t = threading.Thread(target=churn, name="watcher")
t.start()
t.join()
in_thread = where.count("watcher")
link.post(lambda: h.reactor_stop())
h.timer_watcher_create(60, lambda *a: h.reactor_stop()).start()
h.reactor_run()
link.close()
print(json.dumps({"in_thread": in_thread, "on_reactor": where.count("MainThread"),
                  "enabled_after_close": gc.isenabled()}))
PYEOF

test_expect_success 'garbage is collected on the reactor thread, not in the thread that made it' '
	flux start flux python gcthread.py >gcthread.json &&
	cat gcthread.json &&
	jq -e ".in_thread == 0 and .on_reactor == 500 and .enabled_after_close" gcthread.json
'

test_expect_success 'stop the emulator' '
	stop_emulator
'

test_done
