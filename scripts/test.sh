#!/usr/bin/env bash
# Set everything up (scripts/setup.sh), then run every test flux-dws has:
#   lint (ruff, mypy, vermin), C unit tests (meson test), pytest, the C and
#   cffi tests again under ASan+UBSan, a bounded fuzz run, sharness t/t*.t,
#   and the release tarball (meson dist; t34xx from the unpacked tarball).
# Exits non-zero on any failure.  The last line is a total:
#   "total: N passed, M failed"
#
# Environment: FUZZ_SECONDS (default 30, split over the fuzz targets),
#   SKIP_SANITIZERS=1 / SKIP_FUZZ=1 / SKIP_RELEASE=1 to shorten a local run
#   (CI sets none; SKIP_RELEASE=1 runs the t34xx scripts from this tree),
#   FLUX_DWS_REQUIRE_BROKER (default 1 where `flux` is on PATH: a sharness
#   script that needs a broker fails rather than skips; 0 lets it skip),
#   FLUX_DWS_REQUIRE_REALK8S (default 1 where `go` is on PATH: the real
#   control plane is built, t/k8s/build.sh, or reused from its cache, and
#   the real-stack tests, t/python/test_controlplane*.py, fail rather than
#   skip; 0 lets them skip), FLUX_DWS_K8S_CACHE (where it is built);
#   FLUX_DWS_NNF_CACHE: where t/nnf/build.sh builds the real DWS and NNF
#   controllers from ../shared/nnf (NNF_SRC) for t3602, and the May 2026
#   release from its 2026-05/ for t3603.
#   FLUX_DWS_REQUIRE_ACCOUNTING=1 (set by .ci/run, which installs
#   flux-accounting): t3330 fails rather than skips without it.
#   SHARNESS_JOBS: sharness scripts run at once (default 2).
# Each step's time is printed as it ends and, at the end, in a table
# (build/test-results/steps.txt).  Some steps run beside others (marked
# "[beside others]" there): mypy beside the C unit tests and the sanitizer
# build; the sanitizer cffi tests and the fuzz run beside pytest; the real-
# stack pytest and the release tarball beside sharness.  Each writes its
# output into build/test-results/steps/ and test.sh prints it whole when
# the step ends (after the step it runs beside); each is bounded (timeout).
# shellcheck disable=SC2317  # the functions below are run by step and bg_start
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
started=$(date +%s)
# With a Flux on PATH, no script that needs a broker (or Fluxion, or the
# Flux plugins) may skip: it fails instead (t/sharness.d/flux-dws.sh).
# FLUX_DWS_REQUIRE_BROKER=0 lets them skip again.
if command -v flux >/dev/null 2>&1; then
    export FLUX_DWS_REQUIRE_BROKER=${FLUX_DWS_REQUIRE_BROKER:-1}
fi
bash scripts/setup.sh || { echo "setup failed"; exit 1; }
# shellcheck disable=SC1091
. "${FLUX_DWS_VENV:-$top/.venv}/bin/activate"

results="$top/build/test-results"
rm -rf "$results"; mkdir -p "$results"
failed_steps=()
step_times=()
step() {  # step NAME CMD...: run a step, remember failures and its time
    local name=$1 t0=$SECONDS took
    shift
    printf '\n===== %s =====\n' "$name"
    if "$@"; then
        took=$(( SECONDS - t0 ))
        printf -- '----- %s: ok (%d s)\n' "$name" "$took"
    else
        took=$(( SECONDS - t0 ))
        printf -- '----- %s: FAILED (%d s)\n' "$name" "$took"
        failed_steps+=("$name")
    fi
    step_times+=("$(printf '%6d s  %s' "$took" "$name")")
}
# bg_start NAME CMD...: a step run in the background, beside the steps that
# follow, its output into build/test-results/steps/NAME.log (CMD bounds
# itself: timeout); bg_wait NAME...: wait for those steps, and as each ends
# print its output whole and its time, and remember it as step does.
# Under load (CI's two cores shared) the steps beside each other also get
# a larger share of the CPU than one at a time.
bgdir="$results/steps"
mkdir -p "$bgdir"
declare -A bg_pids=()
bg_log() { printf '%s/%s.log' "$bgdir" "$(printf '%s' "$1" | tr -c 'A-Za-z0-9.-' '_')"; }
bg_start() {
    local name=$1 log
    shift
    log=$(bg_log "$name")
    printf '\n===== %s: started beside the next steps (%s) =====\n' "$name" "${log#"$top"/}"
    (
        t0=$SECONDS
        "$@" >"$log" 2>&1
        echo "$? $(( SECONDS - t0 ))" >"$log.rc"
    ) </dev/null &
    bg_pids[$!]=$name
}
bg_wait() {
    local name pid ended log rc took
    local -A want=()
    for name in "$@"; do
        for pid in "${!bg_pids[@]}"; do
            [ "${bg_pids[$pid]}" != "$name" ] || want[$pid]=$name
        done
    done
    while [ ${#want[@]} -gt 0 ]; do
        ended=""
        wait -n -p ended "${!want[@]}"
        [ -n "$ended" ] || break  # none left to wait for (cannot happen)
        name=${want[$ended]}
        unset "want[$ended]" "bg_pids[$ended]"
        log=$(bg_log "$name")
        rc=1 took=0
        read -r rc took <"$log.rc" || echo "$name: no exit status (killed?)"
        printf '\n===== %s (ran beside other steps: its output whole) =====\n' "$name"
        cat "$log"
        if [ "$rc" = 0 ]; then
            printf -- '----- %s: ok (%d s, beside other steps)\n' "$name" "$took"
        else
            printf -- '----- %s: FAILED (exit %s, %d s, beside other steps)\n' \
                "$name" "$rc" "$took"
            failed_steps+=("$name")
        fi
        step_times+=("$(printf '%6d s  %s [beside others]' "$took" "$name")")
    done
}

export PYTHONPATH="$top/src/python:$top/build/src/python"
# flux-core's Python bindings, where a Flux is on PATH: the tests that load
# flux-dws' plugins as flux-core does (t/python/plugins) use them
if command -v flux >/dev/null 2>&1 \
        && fluxpy=$(flux python -c 'import flux, os; print(os.path.dirname(os.path.dirname(flux.__file__)))' 2>/dev/null); then
    PYTHONPATH="$PYTHONPATH:$fluxpy"
fi

step "lint: ruff" ruff check src/python t/python t/bench t/fuzz t/scripts t/mutants doc
bg_start "lint: mypy" timeout 1200 mypy src/python/flux_dws
if [ -d src/pbs ] && ls src/pbs/*.PY >/dev/null 2>&1; then
    step "lint: vermin (PBS hook is Python 3.6)" \
        vermin --no-tips --violations --target=3.6- --backport typing src/pbs/*.PY
fi

# every engine of the C tests and pytest appends how often each of the
# decider's rules fired here; "rule coverage" reads them after pytest
export FLUX_DWS_RULE_COUNTS="$results/rule-counts.jsonl"
step "C unit tests" meson test -C build --print-errorlogs

# The real control plane (kube-apiserver and etcd built from Go modules,
# t/k8s/build.sh: about 9 min cold on a quiet machine, a few seconds once
# built; then mpi-operator, t/mpi/build.sh) for the real-stack tests (t/python/test_controlplane*.py, t360x),
# and the real DWS, nnf-sos and nnf-dm managers (t/nnf/build.sh, from
# ../shared/nnf: about 2 min) for t3602 and the referee.  Both are built in
# the background from here, so that the sanitizer build, its tests, the
# fuzz run and the pytest cases that need neither run meanwhile (pytest
# waits on sockets and subprocesses more than it computes); their steps
# below wait for them (each build bounded by timeout).  Without Go
# the real-stack tests skip with the reason; with Go they must run
# (FLUX_DWS_REQUIRE_REALK8S); where the NNF source is absent (exit 77)
# t3602 and the referee skip with the reason.
builds="$results/builds"
if command -v go >/dev/null 2>&1; then
    export FLUX_DWS_REQUIRE_REALK8S=${FLUX_DWS_REQUIRE_REALK8S:-1}
    mkdir -p "$builds"
    # the two builds side by side (Go's build cache is safe to share):
    # one after the other, on a busy machine the real controllers were
    # still being built 15 minutes after pytest
    (
        t0=$SECONDS
        timeout 3600 bash t/k8s/build.sh >"$builds/k8s.out" 2>"$results/k8s-build.log"
        echo "$? $(( SECONDS - t0 ))" >"$builds/k8s.rc"
        # then mpi-operator (t/mpi/build.sh: about 2.5 min cold), for the
        # MPI user containers of the nodes (t3604, test_realnnf_containers)
        t0=$SECONDS
        timeout 3600 bash t/mpi/build.sh >"$builds/mpi.out" 2>"$results/mpi-build.log"
        echo "$? $(( SECONDS - t0 ))" >"$builds/mpi.rc"
    ) &
    (
        t0=$SECONDS
        timeout 3600 bash t/nnf/build.sh >"$builds/nnf.out" 2>"$results/nnf-build.log"
        echo "$? $(( SECONDS - t0 ))" >"$builds/nnf.rc"
        # then the May 2026 release (t3603), where its source is: most of
        # it is in Go's build cache by now
        t0=$SECONDS
        nnf_may=${NNF_SRC:-$(cd .. && pwd)/shared/nnf}/2026-05
        NNF_SRC=$nnf_may timeout 3600 bash t/nnf/build.sh >"$builds/nnf-2026-05.out" \
            2>"$results/nnf-2026-05-build.log"
        echo "$? $(( SECONDS - t0 ))" >"$builds/nnf-2026-05.rc"
    ) &
    # build_wait NAME: the background build's "STATUS SECONDS", once done
    # (bounded: the builds themselves are, by timeout)
    build_wait() {
        local waited=0
        until [ -f "$builds/$1.rc" ]; do
            sleep 1
            waited=$(( waited + 1 ))
            [ "$waited" -lt 5500 ] || { echo "124 $waited"; return; }
        done
        cat "$builds/$1.rc"
    }
    realk8s_build() {
        local rc took
        read -r rc took < <(build_wait k8s)
        [ "$rc" = 0 ] || { tail -40 "$results/k8s-build.log"; return 1; }
        FLUX_DWS_K8S_BIN=$(cat "$builds/k8s.out")
        export FLUX_DWS_K8S_BIN
        echo "real control plane: $FLUX_DWS_K8S_BIN (built in $took s, in the background)"
        read -r rc took < <(build_wait mpi)
        [ "$rc" = 0 ] || { tail -40 "$results/mpi-build.log"; return 1; }
        echo "mpi-operator: $(cat "$builds/mpi.out") (built in $took s, in the background)"
    }
    nnf_build() {
        local rc took
        read -r rc took < <(build_wait nnf)
        if [ "$rc" = 77 ]; then
            echo "real controllers not built: $(tail -1 "$results/nnf-build.log")"
            return 0
        fi
        [ "$rc" = 0 ] || { tail -40 "$results/nnf-build.log"; return 1; }
        FLUX_DWS_NNF_DIR=$(cat "$builds/nnf.out")
        export FLUX_DWS_NNF_DIR
        echo "real controllers: $FLUX_DWS_NNF_DIR (built in $took s, in the background)"
        read -r rc took < <(build_wait nnf-2026-05)
        if [ "$rc" = 77 ]; then
            echo "the May 2026 release not built: $(tail -1 "$results/nnf-2026-05-build.log")"
            return 0
        fi
        [ "$rc" = 0 ] || { tail -40 "$results/nnf-2026-05-build.log"; return 1; }
        FLUX_DWS_NNF_DIR_2026_05=$(cat "$builds/nnf-2026-05.out")
        export FLUX_DWS_NNF_DIR_2026_05
        echo "real controllers, May 2026: $FLUX_DWS_NNF_DIR_2026_05 (built in $took s)"
    }
else
    echo "no go on PATH: the real-stack tests (t/python/test_controlplane*.py) skip"
fi

if [ "${SKIP_SANITIZERS:-0}" != 1 ]; then
    asan_build() {
        if [ ! -f build-asan/build.ninja ]; then
            meson setup build-asan -Dsanitizers=true >/dev/null
        fi
        meson compile -C build-asan >/dev/null
    }
    asan_pytest() {
        timeout 2400 env LD_PRELOAD="$(gcc -print-file-name=libasan.so)" \
            ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 \
            UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
            PYTHONPATH="$top/src/python:$top/build-asan/src/python" \
            python -m pytest -q -p no:cacheprovider -m "not slow" \
            --junitxml="$results/pytest-asan.xml" t/python/libdws t/python/jgf
    }
    step "ASan+UBSan build" asan_build
    step "ASan+UBSan C unit tests" meson test -C build-asan --print-errorlogs
fi
bg_wait "lint: mypy"
if [ "${SKIP_SANITIZERS:-0}" != 1 ]; then
    # beside pytest: they share nothing (build-asan, their own JUnit file)
    bg_start "ASan+UBSan cffi tests" asan_pytest
fi

if [ "${SKIP_FUZZ:-0}" != 1 ] && ls t/fuzz/fuzz_*.py >/dev/null 2>&1; then
    bg_start "fuzz (${FUZZ_SECONDS:-30}s)" timeout 900 \
        python t/fuzz/run.py --seconds "${FUZZ_SECONDS:-30}"
fi

# pytest in two steps: what does not need the real control plane or the
# real controllers runs while they are built; then the real-stack tests
# (every test file that names them, or a helper that starts them:
# test_remote_store.py borrows test_attached's real_control_plane).
# --durations: where pytest's time goes, on every CI page.
# shellcheck disable=SC2046  # the test files' names have no blanks
realstack=$(grep -l -E "realk8s|control_?plane|require_binaries|flux_dws\.realstack" \
    $(find t/python -name 'test_*.py') | sort)
ignore=()
for f in $realstack; do ignore+=("--ignore=$f"); done
step "pytest" python -m pytest -q -p no:cacheprovider --durations=25 \
    --junitxml="$results/pytest.xml" "${ignore[@]}" t/python
# every rule of the engine's decider fired by some test (but those
# t/scripts/rules-unfired.txt lists), and how often each fired
rule_coverage() {
    local allowed
    allowed=$(grep -v '^#' t/scripts/rules-unfired.txt)
    # shellcheck disable=SC2086  # one rule name a line, no blanks
    python t/scripts/rule_coverage.py "$FLUX_DWS_RULE_COUNTS" --allow-unfired $allowed
}
step "rule coverage" rule_coverage
bg_wait "ASan+UBSan cffi tests" "fuzz (${FUZZ_SECONDS:-30}s)"

# Then three steps at once, each printed whole as it ends: the release
# tarball (below; it needs neither Go build, so it starts first), the
# real-stack pytest and sharness.  They share nothing but the real
# controllers' webhook port, which t3602 and the referee take in turn
# (flux_dws.realstack.nnf: a lock).  Sharness is the longest (its scripts,
# two at a time, add up to more than the other two together), so the
# others end beside it rather than after it.

# The t34xx scripts check what is installed and released (meson install
# into flux-core's prefix, the wheel, the RPM); the release step runs them
# from the release tarball, so the sharness step leaves them to it
# (SKIP_RELEASE=1: the sharness step runs them from this tree instead).
if ls t/t[0-9]*.t >/dev/null 2>&1; then
    sharness() {
        local scripts
        # newest first: the long scripts (the real control plane's t36xx,
        # the restart and pre-staging ones) start early, so two at a time
        # end together rather than one long script alone at the end
        scripts=$(cd t && ls -r t[0-9]*.t)
        # but t3603 (t3602's cases on the May 2026 release) last: started
        # first, it ran beside t3602 and the real-stack pytest, three real
        # stacks on two cores, and an API server took over 2 min to answer
        # a DELETE; at the end it has the machine to itself and t3602
        scripts=$(echo "$scripts" | grep -v '^t3603'; echo "$scripts" | grep '^t3603' || :)
        [ "${SKIP_RELEASE:-0}" = 1 ] || scripts=$(echo "$scripts" | grep -v '^t34')
        # -v: every test point in the log, so the summary counts cases;
        # the scripts' --verbose: a failing case shows its commands' output
        # (a wait-event timeout, a diff), not only its text.  -j: scripts
        # wait on brokers and API servers more than they compute, and each
        # has its own instance, emulator or control plane on free ports
        # (t3602's webhook port is taken under a lock), so two at a time
        # halve the step (prove prints each script's output whole as it ends)
        # shellcheck disable=SC2086
        (cd t && timeout -k 60 4800 prove -j"${SHARNESS_JOBS:-2}" -v --timer $scripts \
            :: --verbose) 2>&1 | tee "$results/sharness.log"
        return "${PIPESTATUS[0]}"
    }
fi

# The release tarball (meson dist: the tracked files of HEAD), checked from
# the unpacked tarball, a bounded subset rather than the whole suite again:
# meson dist builds it and runs the C unit tests (meson test) and meson
# install; then, in the unpacked tree, t3400 (meson install into a copy of
# flux-core's prefix and a rabbit job on that install), t3401 (its wheel in
# a fresh venv, the libdws cffi tests against it), t3402 (the RPM from
# the tarball) and t3403 (the README's venv route).  A file the tarball
# lacks fails one of them.
if [ "${SKIP_RELEASE:-0}" != 1 ] && ls t/t34[0-9]*.t >/dev/null 2>&1; then
    release() {
        local t0 tarball src
        t0=$(date +%s)
        git diff --quiet HEAD 2>/dev/null \
            || echo "release: uncommitted changes are not in the tarball (meson dist packs HEAD)"
        rm -rf build/meson-dist build/release
        timeout 1800 meson dist -C build --formats xztar --allow-dirty >"$results/meson-dist.log" 2>&1 \
            || { tail -40 "$results/meson-dist.log"; return 1; }
        tarball=$(ls "$top"/build/meson-dist/flux-dws-*.tar.xz)
        echo "release: $(basename "$tarball"), $(du -k "$tarball" | cut -f1) KB," \
             "$(tar -tJf "$tarball" | grep -vc '/$') files; meson dist" \
             "(build, meson test, install) $(( $(date +%s) - t0 )) s"
        mkdir -p build/release
        tar -C build/release -xJf "$tarball"
        src=$(ls -d "$top"/build/release/flux-dws-*)
        # -j2: the four scripts share nothing (each its own work
        # directory; t3400's copy of flux-core's prefix is in its own
        # mount namespace), and each waits on pip, meson or rpmbuild
        # shellcheck disable=SC2046
        (cd "$src/t" && FLUX_DWS_DIST_TARBALL=$tarball env -u PYTHONPATH \
            timeout -k 60 2400 prove -j2 -v --timer $(cd "$src/t" && ls t34[0-9]*.t) \
            :: --verbose) 2>&1 | tee "$results/sharness-release.log"
        local rc=${PIPESTATUS[0]}
        echo "release: took $(( $(date +%s) - t0 )) s"
        return "$rc"
    }
    bg_start "release tarball" release
fi

if command -v go >/dev/null 2>&1; then
    step "real control plane (t/k8s/build.sh)" realk8s_build
    step "real controllers (t/nnf/build.sh)" nnf_build
fi
# shellcheck disable=SC2086
bg_start "pytest: the real stack" timeout 2700 python -m pytest -q -p no:cacheprovider \
    --durations=10 --junitxml="$results/pytest-realstack.xml" $realstack
if ls t/t[0-9]*.t >/dev/null 2>&1; then
    bg_start "sharness" sharness
fi
bg_wait "release tarball" "pytest: the real stack" "sharness"

echo "test.sh: took $(( $(date +%s) - started )) s; by step:"
printf '%s\n' "${step_times[@]}" | tee "$results/steps.txt"
python t/summarize.py "$results" build/meson-logs/testlog.json \
    build-asan/meson-logs/testlog.json
if [ ${#failed_steps[@]} -gt 0 ]; then
    printf 'FAILED steps: %s\n' "${failed_steps[*]}"
    exit 1
fi
exit 0
