#!/bin/sh
test_description='the README'"'"'s venv route: pip install into a venv, FLUX_EXEC_PATH_PREPEND

flux-dws is pip installed into a fresh venv (its wheel, as pip install .
builds it, with its dependencies); with FLUX_EXEC_PATH_PREPEND naming the
venv'"'"'s bin and nothing else (no PYTHONPATH, no source tree), flux dws
job, jobs and wait work inside a flux start instance: the venv'"'"'s
flux-dws finds flux-core'"'"'s Python bindings through flux, and its install
brought what they import.  Without ply the commands name it.'

. "$(dirname "$0")"/sharness.sh

skip_all_unless_flux
python3 -c "import mesonpy" 2>/dev/null ||
	skip_all_because "meson-python in this Python (scripts/setup.sh installs it into .venv)"

# everything in a directory without blanks (the trash directory has one)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/flux-dws-t3403.XXXXXX")
VENV=$WORK/venv
FLUXBIN=$(dirname "$(command -v flux)")
echo "# work directory: $WORK"

# route CMD...: CMD as the README's user runs it: flux and the system on
# PATH, the venv on flux's command search path, no Python path
route() {
	env -i HOME="$HOME" LANG=C.UTF-8 PATH="$FLUXBIN:/usr/bin:/bin" \
		FLUX_EXEC_PATH_PREPEND="$VENV/bin" "$@"
}

test_expect_success 'pip install flux-dws into a fresh venv' '
	{ (cd "$top_srcdir" &&
	   env -u PYTHONPATH python3 -m pip wheel -q --no-deps --no-build-isolation \
		-w "$WORK/dist" .) >wheel.log 2>&1 || { cat wheel.log; false; }; } &&
	python3 -m venv "$VENV" &&
	(cd "$top_srcdir" &&
	 env -u PYTHONPATH "$VENV/bin/python" -m pip install -q -c requirements-dev.txt \
		"$WORK"/dist/flux_dws-*.whl) >install.log 2>&1 || { cat install.log; false; }
'

test_expect_success 'the venv has no flux bindings of its own, but ply' '
	test_must_fail env -u PYTHONPATH "$VENV/bin/python" -c "import flux" &&
	env -u PYTHONPATH "$VENV/bin/python" -c "import ply, yaml, cffi"
'

cat >session.sh <<'EOF'
#!/bin/sh
set -x
flux dws version >version.out || exit 1
flux dws version --module-path | grep "^$VENV/" || exit 1
id=$(flux submit -N1 \
	--setattr=system.dw="#DW jobdw type=xfs capacity=1GiB name=scratch" true) &&
flux job wait-event -t 60 $id clean || exit 1
plain=$(flux submit -N1 true) && flux job wait-event -t 60 $plain clean || exit 1
echo $id >rabbit.id
flux job id --to=f58 $id >rabbit.f58
flux dws job $id >job.out 2>job.err; echo $? >job.rc
flux dws job $plain >plain.out 2>plain.err; echo $? >plain.rc
flux dws jobs -a >jobs.out 2>jobs.err; echo $? >jobs.rc
flux dws wait $plain >wait.out 2>wait.err; echo $? >wait.rc
flux dws wait -t 1 $id >waitr.out 2>waitr.err; echo $? >waitr.rc
"$VENV/bin/python" -m pip uninstall -q -y ply >uninstall.log 2>&1 || exit 1
flux dws job $id >noply.out 2>noply.err; echo $? >noply.rc
exit 0
EOF
chmod +x session.sh

test_expect_success 'flux start with the venv on FLUX_EXEC_PATH_PREPEND runs the commands' '
	route VENV="$VENV" flux start -s1 ./session.sh >session.log 2>&1 ||
		{ cat session.log; false; }
'

test_expect_success 'flux dws job shows the rabbit job from its KVS record' '
	cat job.out job.err &&
	test "$(cat job.rc)" = 0 &&
	head -1 job.out | grep "^job $(cat rabbit.f58): owner" &&
	grep "inactive (COMPLETED)" job.out &&
	grep "^  0  jobdw xfs, capacity 1GiB, name scratch" job.out
'

test_expect_success 'flux dws job and wait on a job without rabbits: one line, exit 1' '
	test "$(cat plain.rc)" = 1 &&
	grep "not a rabbit job (no #DW directives)$" plain.err &&
	test "$(cat wait.rc)" = 1 &&
	grep "has no rabbit storage (no #DW directives)$" wait.err
'

test_expect_success 'flux dws jobs and wait reach the broker (no dws service loaded)' '
	test "$(cat jobs.rc)" = 0 &&
	grep "^JOBID *USER *PHASE" jobs.out &&
	grep "the dws service is not loaded" jobs.err &&
	test "$(cat waitr.rc)" = 2 &&
	grep "the dws service is not loaded; waiting for it" waitr.err &&
	grep "still not torn down after 1 s" waitr.err
'

test_expect_success 'without ply in the venv, the error names it' '
	cat noply.err &&
	test "$(cat noply.rc)" = 1 &&
	test "$(wc -l <noply.err)" = 1 &&
	grep "^flux-dws job: the flux Python bindings in .* cannot be imported: no module named .ply." \
		noply.err
'

test_expect_success 'clean up' '
	rm -rf "$WORK"
'

test_done
