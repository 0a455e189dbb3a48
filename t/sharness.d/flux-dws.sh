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
