#!/bin/sh
test_description='flux-dws as a wheel: pip install into a fresh venv, without flux-core

The wheel built from this tree (meson-python, -Dflux=disabled) is installed
into a new venv; with only that venv on PATH (no flux, no PYTHONPATH, no
source tree) the console commands and the emulator work, the libdws cffi
tests pass against the installed extension, and the commands that need
flux-core say so.'

. "$(dirname "$0")"/sharness.sh

command -v kubectl >/dev/null 2>&1 ||
	skip_all_because "kubectl (scripts/setup.sh installs Debian's kubernetes-client)"
python3 -c "import mesonpy" 2>/dev/null ||
	skip_all_because "meson-python in this Python (scripts/setup.sh installs it into .venv)"

# everything in a directory without blanks (the trash directory has one)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/flux-dws-t3401.XXXXXX")
VENV=$WORK/venv
echo "# work directory: $WORK"

# wheel CMD...: CMD with the fresh venv's bin and the system's only
wheel() {
	${WHEEL_EXEC:+exec} env -i HOME="$HOME" LANG=C.UTF-8 PATH="$VENV/bin:/usr/bin:/bin" \
		${WHEEL_ENV:-} "$@"
}

test_expect_success 'pip wheel builds the wheel' '
	{ (cd "$top_srcdir" &&
	   env -u PYTHONPATH python3 -m pip wheel -q --no-deps --no-build-isolation \
		-w "$WORK/dist" .) >wheel.log 2>&1 || { cat wheel.log; false; }; } &&
	ls "$WORK"/dist/flux_dws-*.whl >wheel.name &&
	test $(wc -l <wheel.name) = 1 &&
	ls -l $(cat wheel.name)
'

test_expect_success 'the wheel: the package, its extension and data, no Flux parts' '
	python3 -m zipfile -l $(cat wheel.name) | awk "{print \$1}" >wheel.files &&
	grep "^flux_dws/_libdws\.cpython-.*\.so\$" wheel.files &&
	grep "^flux_dws/modules/dws.py\$" wheel.files &&
	grep "^flux_dws/data/nnf-ruleset.json\$" wheel.files &&
	grep "^flux_dws/data/systems/kind.yaml\$" wheel.files &&
	grep "^flux_dws/pbs/hook/PBS_cray_atom.PY\$" wheel.files &&
	grep "^flux_dws/flux_plugins/cli/chassis.py\$" wheel.files &&
	grep "entry_points.txt\$" wheel.files &&
	test_must_fail grep -e "dws-jobtap" -e "dws_environment" -e "/man[0-9]/" -e "\.data/" wheel.files
'

test_expect_success 'pip install into a fresh venv' '
	python3 -m venv "$VENV" &&
	(cd "$top_srcdir" &&
	 wheel python -m pip install -q -c requirements-dev.txt "$(cat "$OLDPWD/wheel.name")") \
		>install.log 2>&1 || { cat install.log; false; }
'

test_expect_success 'the commands are the venv ones, flux_dws is the installed one' '
	for cmd in flux-dws flux-dws2jgf flux-rabbitmapping flux-getrabbit; do
		test "$(wheel sh -c "command -v $cmd")" = "$VENV/bin/$cmd" || return 1
	done &&
	wheel python -c "import flux_dws, os; print(os.path.realpath(flux_dws.__file__))" >where &&
	grep "^$VENV/lib/python3[.0-9]*/site-packages/flux_dws/__init__.py\$" where &&
	wheel flux-dws version &&
	test -f "$(wheel flux-dws version --module-path)" &&
	! wheel sh -c "command -v flux"
'

test_expect_success 'off-line commands: check, config-check' '
	wheel flux-dws check "#DW jobdw type=xfs capacity=10GiB name=scratch" &&
	test_must_fail wheel flux-dws check "#DW jobdw type=zfs capacity=10GiB name=s" \
		>check.out 2>&1 &&
	grep "invalid string .zfs." check.out &&
	mkdir conf &&
	printf "[rabbit]\nsetup_timeout = 600\n" >conf/rabbit.toml &&
	wheel flux-dws config-check conf &&
	printf "[rabbit]\nsetup_timout = 600\n" >conf/rabbit.toml &&
	test_must_fail wheel flux-dws config-check conf >config.out 2>&1 &&
	grep "rabbit.setup_timout: unknown key" config.out
'

test_expect_success 'the emulator, and rabbitmapping, dws2jgf, getrabbit, fault against it' '
	WHEEL_EXEC=1 wheel flux-dws emulator --kubeconfig "$WORK/kubeconfig" --system kind \
		--latency zero >emulator.log 2>&1 </dev/null 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&- &
	EMULATOR_PID=$! &&
	wait_for_file "$WORK/kubeconfig" $EMULATOR_PID emulator.log &&
	kubectl --kubeconfig "$WORK/kubeconfig" get storages -o name >storages &&
	grep "^storage.*/kind-worker2\$" storages &&
	wheel flux-rabbitmapping -k "$WORK/kubeconfig" >mapping.json &&
	test "$(wheel flux-getrabbit -m mapping.json kind-worker3)" = compute-04 &&
	printf "[[resource.config]]\nhosts = \"compute-[01-04]\"\ncores = \"0-3\"\n" >res.toml &&
	wheel flux-dws2jgf --from-config res.toml mapping.json >R.json &&
	jq -e ".scheduling.graph.nodes | map(.metadata.type) | index(\"ssd\")" R.json &&
	WHEEL_ENV="KUBECONFIG=$WORK/kubeconfig" wheel flux-dws fault stall --state PreRun &&
	WHEEL_ENV="KUBECONFIG=$WORK/kubeconfig" wheel flux-dws fault list >faults.json &&
	grep PreRun faults.json &&
	kill $EMULATOR_PID && { wait $EMULATOR_PID; true; }
'

test_expect_success 'what needs flux-core says so' '
	for cmd in "flux-dws status" "flux-dws rabbits" "flux-dws sync" "flux-getrabbit -j 1"; do
		test_must_fail wheel $cmd 2>needs.err &&
		grep "not running inside a Flux instance" needs.err &&
		WHEEL_ENV=FLUX_URI=local:///nonexistent test_must_fail wheel $cmd 2>needs.err &&
		grep "the flux Python bindings are not installed" needs.err || return 1
	done
'

test_expect_success 'the libdws cffi tests pass against the installed extension' '
	{ (cd "$top_srcdir" &&
	   wheel python -m pip install -q -c requirements-dev.txt pytest pytest-timeout hypothesis &&
	   wheel python -m pytest -q -p no:cacheprovider -m "not slow" t/python/libdws) \
		>pytest.log 2>&1 || { tail -40 pytest.log; false; }; } &&
	tail -1 pytest.log
'

test_expect_success 'clean up' '
	rm -rf "$WORK"
'

test_done
