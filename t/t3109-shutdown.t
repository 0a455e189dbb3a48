#!/bin/sh
test_description='an instance with the dws service loaded shuts down cleanly (issue 33.5)

As a new user tries it: flux start with a [rabbit] configuration (the
kind system: Fluxion on the flux-dws2jgf graph, the jobtap plugin), the
dws service loaded by hand with flux module load and never removed, a
dws.status, then the initial program exits.  The broker unloads the
module at its shutdown (flux-core 0.88: rexec sends the loader SIGTERM and
gives it 5 s); flux start must exit 0 with no crit or err line, the end of
the resource journal at shutdown being no error.  The same with the
service loaded and removed by flux-modprobe (rc1/rc3).'

. "$(dirname "$0")"/sharness.sh

skip_all_unless_flux
skip_all_unless_fluxion "the kind system's graph needs Fluxion"
skip_all_unless_plugins
dws_pythonpath

DWS_PY="$top_srcdir/src/modules/dws.py"

# no_bad_lines FILE: no broker log line at crit, err, alert or emerg
no_bad_lines() {
	if grep -E "\.(emerg|alert|crit|err)\[[0-9]+\]" "$1"; then
		return 1
	fi
	return 0
}

test_expect_success 'start the emulator; a [rabbit] configuration' '
	start_emulator --system kind --latency zero &&
	rabbit_instance_config "$(pwd)"
'

cat >by-hand.sh <<'EOF'
set -e
flux module load "$DWS_PY"
flux python -c "import flux; assert flux.Flux().rpc(\"dws.status\").get()[\"success\"]"
# rabbit health follows the resource journal and Fluxion: every thread is
# up once the rabbits are marked up (30 s at most)
i=0
until flux python -m flux_dws rabbits --json 2>/dev/null |
	jq -e ".ready and ([.rabbits[].fluxion] | all(. == \"up\"))" >/dev/null; do
	i=$((i + 1))
	test $i -le 300 || exit 1
	sleep 0.1
done
flux module list | grep -w dws
EOF

test_expect_success 'loaded by hand, not removed: flux start exits 0, no crit or err line' '
	DWS_PY="$DWS_PY" flux start -s4 --test-hosts="compute-[01-04]" \
		-Sconf.shell_pluginpath="$DWS_SHELL_PLUGINS" \
		--config-path="$(pwd)/conf" sh -x by-hand.sh >by-hand.out 2>by-hand.err &&
	grep -w dws by-hand.out &&
	no_bad_lines by-hand.err
'

test_expect_success 'loaded by hand: the module reported its unload, no loader killed' '
	test_must_fail grep "killed by" by-hand.err &&
	test_must_fail grep "runtime failure" by-hand.err &&
	test_must_fail grep "resource.journal ended" by-hand.err
'

cat >modprobe.sh <<'EOF'
set -e
flux module list | grep -w dws
flux python -c "import flux; assert flux.Flux().rpc(\"dws.status\").get()[\"success\"]"
EOF

test_expect_success 'loaded by rc1 (modprobe), removed by rc3: exits 0, no crit or err line' '
	FLUX_MODPROBE_PATH_APPEND="$(pwd)/modprobe" \
	flux start -s4 --test-hosts="compute-[01-04]" \
		-Sconf.shell_pluginpath="$DWS_SHELL_PLUGINS" \
		--config-path="$(pwd)/conf" sh -x modprobe.sh >modprobe.out 2>modprobe.err &&
	grep -w dws modprobe.out &&
	no_bad_lines modprobe.err
'

test_expect_success 'stop the emulator' '
	stop_emulator
'

test_done
