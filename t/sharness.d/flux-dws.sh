# flux-dws sharness extensions.
#
# Prerequisites:
#   FLUX      flux-core is installed (`flux` on PATH)
#   FLUXION   Fluxion (flux-sched) is installed as well
#   KUBECTL   a kubectl client is on PATH
#
# skip_all_unless_flux: end a script that needs a broker, with the reason.

top_srcdir=$(cd "$SHARNESS_TEST_SRCDIR/.." && pwd)
export top_srcdir

if command -v flux >/dev/null 2>&1; then
    test_set_prereq FLUX
    # flux-sched installs the `flux ion-resource` command.
    flux ion-resource --help >/dev/null 2>&1 && test_set_prereq FLUXION
fi
command -v kubectl >/dev/null 2>&1 && test_set_prereq KUBECTL

skip_all_unless_flux() {
    if ! test_have_prereq FLUX; then
        skip_all="flux-core is not installed (no 'flux' on PATH): this script needs a broker"
        test_done
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
