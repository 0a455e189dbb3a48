# flux-accounting as a site runs it, beside flux-dws, under a test
# instance: its database, the `flux account-service` that serves the
# `flux account` commands on it, and the mf_priority.so jobtap plugin
# that `flux account-priority-update` feeds.  flux-accounting is not part
# of flux-core: .ci/run installs it from ../shared/flux/ after Flux.
#
#   skip_all_unless_accounting   end the script (or fail it, with
#                                FLUX_DWS_REQUIRE_BROKER=1) where it is not
#                                installed beside the flux on PATH
#   MF_PRIORITY_CONF             mf_priority.so's [job-manager] plugins
#                                entry, as a site writes it (loaded from
#                                flux-core's jobtap plugin path)
#   start_accounting DB          create DB (if need be), run the service on
#                                it in the background until stop_accounting
#   push_accounting DB           send DB's banks and users to mf_priority
#   stop_accounting              SIGTERM, as systemd stops it; waits for it
#
# mf_priority.so sets a job submitted without a bank to its user's default
# bank (attributes.system.bank, a jobspec-update from job.new) once it
# has the user's data; the instance owner's default bank is a bank named
# after the owner that `flux account-priority-update` adds for it.

MF_PRIORITY_CONF='{ load = "mf_priority.so" }'

# skip_all_unless_accounting: flux-accounting's commands run and its
# mf_priority.so is in the job manager's plugin path (after
# skip_all_unless_flux).  Without it the script skips with the reason, even
# where Flux is required (flux-accounting is an extra a site may not run);
# CI installs it and sets FLUX_DWS_REQUIRE_ACCOUNTING=1 (.ci/run): then a
# skip fails
accounting_missing() {
    if test "${FLUX_DWS_REQUIRE_ACCOUNTING:-0}" = 1; then
        test_expect_success "this script needs: $1 (FLUX_DWS_REQUIRE_ACCOUNTING=1: no skipping)" '
		false
	'
        test_done
    fi
    skip_all=$1
    test_done
}
skip_all_unless_accounting() {
    plugindir=$(flux config builtin jobtap_pluginpath 2>/dev/null)
    if ! test -f "$plugindir/mf_priority.so"; then
        accounting_missing "flux-accounting is not installed: no mf_priority.so in '$plugindir' (bash ../shared/flux/install-accounting.sh)"
    fi
    for cmd in account account-service account-priority-update; do
        flux $cmd --help >accounting-help.out 2>&1 ||
            accounting_missing "flux-accounting is not installed: 'flux $cmd --help' fails ($(tail -n 1 accounting-help.out))"
    done
}

# start_accounting DB: the flux-accounting database DB (made if missing)
# served by `flux account-service` in the background (ACCOUNTING_PID, its
# log accounting.log) on the instance of FLUX_URI; returns once it has
# registered its service (60 s at most: the bound of a loaded machine)
start_accounting() {
    if ! test -f "$1"; then
        flux account -p "$1" create-db >accounting-create.log 2>&1 ||
            { cat accounting-create.log; return 1; }
    fi
    flux account-service -p "$1" >accounting.log 2>&1 &
    ACCOUNTING_PID=$!
    # a bound against a hang: a loaded CI machine (image imports of the
    # real-stack tests beside) has taken flux account-service over 60 s
    until_true 180 accounting_up ||
        { echo "flux account-service did not register in 180 s:"; cat accounting.log; return 1; }
}

# accounting_up: the service has registered, or has died (then false for
# good: the caller's bound ends the wait)
accounting_up() {
    kill -0 $ACCOUNTING_PID 2>/dev/null &&
    grep -q "registered accounting service" accounting.log
}

# push_accounting DB: DB's associations, queues, projects and banks sent
# to mf_priority.so, as the rc1 script and sites' cron jobs do
push_accounting() {
    flux account-priority-update -p "$1"
}

stop_accounting() {
    test -n "$ACCOUNTING_PID" || return 0
    kill -TERM $ACCOUNTING_PID 2>/dev/null
    wait $ACCOUNTING_PID
    ACCOUNTING_PID=
    return 0
}
