/* SPDX-License-Identifier: LGPL-3.0-or-later */
#include <stdio.h>
#include <string.h>

#include "jobtap/jobsm_phase.h"
#include "tap.h"

static enum jobsm_phase step (enum jobsm_phase from, enum jobsm_phase_event ev,
                              enum jobsm_phase want, const char *what)
{
    enum jobsm_phase to = JOBSM_PHASE_COUNT;
    dws_error_t err = {{0}};
    int rc = jobsm_phase_next (from, ev, &to, &err);
    if (!ok (rc == 0 && to == want, "%s: %s -> %s", what, jobsm_phase_name (from),
             jobsm_phase_name (want)))
        diag ("rc %d, to %s, %s", rc, jobsm_phase_name (to), err.text);
    return to;
}

static void refused (enum jobsm_phase from, enum jobsm_phase_event ev, const char *expect)
{
    enum jobsm_phase to = JOBSM_PHASE_COUNT;
    dws_error_t err = {{0}};
    ok (jobsm_phase_next (from, ev, &to, &err) < 0 && to == JOBSM_PHASE_COUNT,
        "refused: %s", expect);
    is (err.text, expect, "the refusal names the event and the phase");
}

static void test_a_rabbit_jobs_life (void)
{
    enum jobsm_phase p = JOBSM_PHASE_UNKNOWN;
    p = step (p, JOBSM_EV_HOLD, JOBSM_PHASE_DEPEND, "depend holds dws-create");
    p = step (p, JOBSM_EV_RESOURCES, JOBSM_PHASE_SCHED, "resource-update");
    p = step (p, JOBSM_EV_PROLOG, JOBSM_PHASE_PROLOG, "run");
    p = step (p, JOBSM_EV_PROLOG_END, JOBSM_PHASE_RUN, "prolog-remove");
    p = step (p, JOBSM_EV_EPILOG, JOBSM_PHASE_EPILOG, "finish");
    step (p, JOBSM_EV_EPILOG_END, JOBSM_PHASE_DONE, "epilog-remove");
}

static void test_short_cuts (void)
{
    step (JOBSM_PHASE_UNKNOWN, JOBSM_EV_NO_DW, JOBSM_PHASE_INERT, "a job without dw");
    step (JOBSM_PHASE_UNKNOWN, JOBSM_EV_RELOADED_NEW, JOBSM_PHASE_AWAIT_DEPEND,
          "reloaded in NEW");
    step (JOBSM_PHASE_AWAIT_DEPEND, JOBSM_EV_HOLD, JOBSM_PHASE_DEPEND, "then its depend");
    step (JOBSM_PHASE_DEPEND, JOBSM_EV_HOLD, JOBSM_PHASE_DEPEND,
          "a depend after a reload in DEPEND holds again");
    step (JOBSM_PHASE_DEPEND, JOBSM_EV_EPILOG, JOBSM_PHASE_EPILOG, "cancelled in DEPEND");
    step (JOBSM_PHASE_SCHED, JOBSM_EV_EPILOG, JOBSM_PHASE_EPILOG, "cancelled in SCHED");
    step (JOBSM_PHASE_PROLOG, JOBSM_EV_EPILOG, JOBSM_PHASE_EPILOG,
          "freed with the prolog held");
}

static void test_refusals (void)
{
    refused (JOBSM_PHASE_SCHED, JOBSM_EV_RESOURCES,
             "event 'resources' not expected in phase 'sched'");
    refused (JOBSM_PHASE_RUN, JOBSM_EV_PROLOG, "event 'prolog-start' not expected in phase 'run'");
    refused (JOBSM_PHASE_DONE, JOBSM_EV_EPILOG,
             "event 'epilog-start' not expected in phase 'done'");
    refused (JOBSM_PHASE_RUN, JOBSM_EV_EPILOG_END,
             "event 'epilog-finish' not expected in phase 'run'");
    refused (JOBSM_PHASE_INERT, JOBSM_EV_HOLD,
             "event 'hold dws-create' not expected in phase 'inert'");
    refused (JOBSM_PHASE_SCHED, JOBSM_EV_RELOADED_NEW,
             "event 'reloaded in NEW' not expected in phase 'sched'");
}

static void test_reload (void)
{
    ok (jobsm_phase_of_reload ("DEPEND", false, false, false, false) == JOBSM_PHASE_INERT,
        "reload: no valid dw is inert");
    ok (jobsm_phase_of_reload ("DEPEND", true, false, false, false) == JOBSM_PHASE_DEPEND,
        "reload in DEPEND");
    ok (jobsm_phase_of_reload ("SCHED", true, false, false, false) == JOBSM_PHASE_SCHED,
        "reload in SCHED");
    ok (jobsm_phase_of_reload ("PRIORITY", true, false, false, false) == JOBSM_PHASE_SCHED,
        "reload in PRIORITY");
    ok (jobsm_phase_of_reload ("RUN", true, true, false, false) == JOBSM_PHASE_PROLOG,
        "reload in RUN with dws-setup held");
    ok (jobsm_phase_of_reload ("RUN", true, false, false, false) == JOBSM_PHASE_RUN,
        "reload in RUN after the prolog");
    ok (jobsm_phase_of_reload ("CLEANUP", true, false, true, false) == JOBSM_PHASE_EPILOG,
        "reload in CLEANUP with dws-epilog held");
    ok (jobsm_phase_of_reload ("CLEANUP", true, false, false, true) == JOBSM_PHASE_RUN,
        "reload in CLEANUP of a job yet to finish: its epilog is to start");
    ok (jobsm_phase_of_reload ("CLEANUP", true, false, false, false) == JOBSM_PHASE_DONE,
        "reload in CLEANUP otherwise: the epilog is done");
}

static void test_names (void)
{
    is (jobsm_phase_name (JOBSM_PHASE_AWAIT_DEPEND), "await-depend", "a phase's name");
    is (jobsm_phase_name (JOBSM_PHASE_COUNT), "?", "no such phase");
    is (jobsm_phase_event_name (JOBSM_EV_COUNT), "?", "no such event");
    for (int p = 0; p < JOBSM_PHASE_COUNT; p++)
        if (!strcmp (jobsm_phase_name ((enum jobsm_phase)p), "?"))
            ok (0, "phase %d has a name", p);
}

int main (void)
{
    test_a_rabbit_jobs_life ();
    test_short_cuts ();
    test_refusals ();
    test_reload ();
    test_names ();
    return done_testing ();
}
