/* engine_phase.c - the engine job's phase (engine/decider/phase.c): a job's whole
 * life through the table, what each phase says of the Workflow, and
 * refused transitions naming their event and phase.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "engine/decider/decide.h"
#include "engine/decider/phase.h"
#include "engine/shapes/wfstate.h"
#include "engine/verbs/release.h"
#include "tap.h"

static struct dws_engine e;
static struct job job;

static void reset (enum job_phase p)
{
    json_decref (e.actions);
    e.actions = json_array ();
    memset (&job, 0, sizeof (job));
    job.id = 1;
    snprintf (job.name, sizeof (job.name), "fluxjob-1");
    job.phase = p;
}

static const char *last_log (void)
{
    json_t *a = json_array_get (e.actions, json_array_size (e.actions) - 1);
    return json_string_value (json_object_get (a, "message"));
}

static void step (enum phase_event ev, enum wf_state s, const char *to, enum wf_state desired,
                  enum wf_state handled, bool exists)
{
    const char *from = phase_name (job.phase);
    int rc = phase_event (&e, &job, ev, s);
    ok (rc == 0 && !strcmp (phase_name (job.phase), to) && phase_desired (&job) == desired
            && phase_handled (&job) == handled && phase_exists (&job) == exists
            && json_array_size (e.actions) == 0,
        "%s %s -> %s (desired %s, handled %s, %s)", from, wfstate_name (s), to,
        wfstate_name (desired), wfstate_name (handled), exists ? "exists" : "no Workflow");
}

static void refused (enum job_phase p, enum phase_event ev, enum wf_state s, const char *text)
{
    reset (p);
    e.now = 50;
    job.state_since = 7;
    int rc = phase_event (&e, &job, ev, s);
    json_t *a = json_array_get (e.actions, 0);
    ok (rc < 0 && job.phase == p && job.state_since == 7 && json_array_size (e.actions) == 1
            && !strcmp (json_string_value (json_object_get (a, "level")), "err"),
        "refused in %s, job unchanged, one err log", phase_name (p));
    is (last_log () ? last_log () : "(none)", text, "the refusal names the event and the phase");
}

static void life (void)
{
    reset (PHASE_NONE);
    e.now = 10;
    step (PHASE_EV_CREATE, WF_NONE, "creating", WF_PROPOSAL, WF_NONE, false);
    ok (job.state_since == 10, "create starts the phase's clock");
    e.now = 20;
    step (PHASE_EV_SEEN, WF_NONE, "proposal", WF_PROPOSAL, WF_NONE, true);
    step (PHASE_EV_SEEN, WF_NONE, "proposal", WF_PROPOSAL, WF_NONE, true);
    step (PHASE_EV_DONE, WF_PROPOSAL, "proposed", WF_PROPOSAL, WF_PROPOSAL, true);
    ok (job.state_since == 10, "a state's completion does not restart the clock");
    step (PHASE_EV_ASK, WF_SETUP, "setup", WF_SETUP, WF_PROPOSAL, true);
    ok (job.state_since == 20, "asking for a state does");
    step (PHASE_EV_DONE, WF_SETUP, "setup-done", WF_SETUP, WF_SETUP, true);
    step (PHASE_EV_ASK, WF_DATAIN, "datain", WF_DATAIN, WF_SETUP, true);
    step (PHASE_EV_DONE, WF_DATAIN, "datain-done", WF_DATAIN, WF_DATAIN, true);
    step (PHASE_EV_ASK, WF_PRERUN, "prerun", WF_PRERUN, WF_DATAIN, true);
    step (PHASE_EV_DONE, WF_PRERUN, "running", WF_PRERUN, WF_PRERUN, true);
    step (PHASE_EV_ASK, WF_POSTRUN, "postrun", WF_POSTRUN, WF_PRERUN, true);
    step (PHASE_EV_DONE, WF_POSTRUN, "postrun-done", WF_POSTRUN, WF_POSTRUN, true);
    step (PHASE_EV_ASK, WF_DATAOUT, "dataout", WF_DATAOUT, WF_POSTRUN, true);
    step (PHASE_EV_DONE, WF_DATAOUT, "dataout-done", WF_DATAOUT, WF_DATAOUT, true);
    step (PHASE_EV_ASK, WF_TEARDOWN, "teardown", WF_TEARDOWN, WF_DATAOUT, true);
    step (PHASE_EV_ASK, WF_TEARDOWN, "teardown", WF_TEARDOWN, WF_DATAOUT, true);
    step (PHASE_EV_DONE, WF_TEARDOWN, "torn-down", WF_TEARDOWN, WF_TEARDOWN, true);
    step (PHASE_EV_DELETE, WF_NONE, "deleting", WF_TEARDOWN, WF_TEARDOWN, true);
    step (PHASE_EV_VANISH, WF_NONE, "none", WF_NONE, WF_NONE, false);
}

static void shortcuts (void)
{
    /* a post_run while PreRun is still under way, a failure at Proposal,
     * a Workflow found after a restart, one deleted outside Flux */
    reset (PHASE_PRERUN);
    step (PHASE_EV_ASK, WF_POSTRUN, "postrun", WF_POSTRUN, WF_PRERUN, true);
    reset (PHASE_PROPOSAL);
    step (PHASE_EV_ASK, WF_TEARDOWN, "teardown", WF_TEARDOWN, WF_DATAOUT, true);
    reset (PHASE_NONE);
    step (PHASE_EV_ADOPT, WF_DATAOUT, "dataout", WF_DATAOUT, WF_POSTRUN, true);
    reset (PHASE_NONE);
    step (PHASE_EV_ADOPT, WF_TEARDOWN, "teardown", WF_TEARDOWN, WF_DATAOUT, true);
    reset (PHASE_SETUP_DONE);
    step (PHASE_EV_VANISH, WF_NONE, "none", WF_NONE, WF_NONE, false);
    step (PHASE_EV_CREATE, WF_NONE, "creating", WF_PROPOSAL, WF_NONE, false);
}

/* Early release (release.c): postrun-done --release--> releasing, which
 * asks for DataOut once the ssds are held, or for Teardown on a failure.
 */
static void releasing (void)
{
    reset (PHASE_POSTRUN_DONE);
    step (PHASE_EV_RELEASE, WF_NONE, "releasing", WF_POSTRUN, WF_POSTRUN, true);
    step (PHASE_EV_ASK, WF_DATAOUT, "dataout", WF_DATAOUT, WF_POSTRUN, true);
    step (PHASE_EV_DONE, WF_DATAOUT, "dataout-done", WF_DATAOUT, WF_DATAOUT, true);
    reset (PHASE_RELEASING);
    step (PHASE_EV_ASK, WF_TEARDOWN, "teardown", WF_TEARDOWN, WF_DATAOUT, true);
    reset (PHASE_RELEASING);
    step (PHASE_EV_VANISH, WF_NONE, "none", WF_NONE, WF_NONE, false);

    refused (PHASE_RUNNING, PHASE_EV_RELEASE, WF_NONE,
             "fluxjob-1: event 'release' not expected in phase 'running'");
    refused (PHASE_POSTRUN, PHASE_EV_RELEASE, WF_NONE,
             "fluxjob-1: event 'release' not expected in phase 'postrun'");
    refused (PHASE_RELEASING, PHASE_EV_RELEASE, WF_NONE,
             "fluxjob-1: event 'release' not expected in phase 'releasing'");
    refused (PHASE_DATAOUT, PHASE_EV_RELEASE, WF_NONE,
             "fluxjob-1: event 'release' not expected in phase 'dataout'");
    refused (PHASE_TEARDOWN, PHASE_EV_RELEASE, WF_NONE,
             "fluxjob-1: event 'release' not expected in phase 'teardown'");
    refused (PHASE_RELEASING, PHASE_EV_DONE, WF_POSTRUN,
             "fluxjob-1: event 'done PostRun' not expected in phase 'releasing'");
    refused (PHASE_RELEASING, PHASE_EV_ASK, WF_POSTRUN,
             "fluxjob-1: event 'ask PostRun' not expected in phase 'releasing'");
    refused (PHASE_RELEASING, PHASE_EV_DELETE, WF_NONE,
             "fluxjob-1: event 'delete' not expected in phase 'releasing'");
}

/* Who is released: by the job's own choice, else by the configuration;
 * never a job that failed or is being torn down.
 */
static void wanted (void)
{
    reset (PHASE_POSTRUN_DONE);
    e.cfg.release_early = true;
    e.cfg.fluxion = false;
    ok (!decide_release_early (&e, &job), "without Fluxion (alloc_rabbit until Teardown): kept");
    e.cfg.fluxion = true;
    ok (decide_release_early (&e, &job), "release_computes after-unmount: released");
    job.release = RELEASE_LATE;
    ok (!decide_release_early (&e, &job), "... not a job that asked for after-teardown");
    e.cfg.release_early = false;
    job.release = RELEASE_EARLY;
    ok (decide_release_early (&e, &job), "after-teardown configured: a job that asked is released");
    job.excepted = true;
    ok (!decide_release_early (&e, &job), "... but not once it has failed (an exception raised)");
    job.excepted = false;
    job.toredown = true;
    ok (!decide_release_early (&e, &job), "... nor while it is being torn down");
    e.cfg.release_early = true;
    job.release = RELEASE_DEFAULT;
    job.toredown = false;
    job.excepted = true;
    ok (!decide_release_early (&e, &job), "after-unmount configured: an excepted job is not released");
    e.cfg.release_early = false;
}

static void refusals (void)
{
    refused (PHASE_SETUP, PHASE_EV_ASK, WF_DATAOUT,
             "fluxjob-1: event 'ask DataOut' not expected in phase 'setup'");
    refused (PHASE_DATAIN, PHASE_EV_DONE, WF_PRERUN,
             "fluxjob-1: event 'done PreRun' not expected in phase 'datain'");
    refused (PHASE_RUNNING, PHASE_EV_DELETE, WF_NONE,
             "fluxjob-1: event 'delete' not expected in phase 'running'");
    refused (PHASE_PROPOSAL, PHASE_EV_CREATE, WF_NONE,
             "fluxjob-1: event 'create' not expected in phase 'proposal'");
    refused (PHASE_RUNNING, PHASE_EV_ADOPT, WF_PRERUN,
             "fluxjob-1: event 'adopt PreRun' not expected in phase 'running'");
    refused (PHASE_TEARDOWN, PHASE_EV_ASK, WF_DATAOUT,
             "fluxjob-1: event 'ask DataOut' not expected in phase 'teardown'");
    refused (PHASE_CREATING, PHASE_EV_ASK, WF_TEARDOWN,
             "fluxjob-1: event 'ask Teardown' not expected in phase 'creating'");
    refused (PHASE_DELETING, PHASE_EV_DONE, WF_TEARDOWN,
             "fluxjob-1: event 'done Teardown' not expected in phase 'deleting'");
}

/* [rabbit.limits] (admit.c): a job held before its create, then created */
static void waiting (void)
{
    reset (PHASE_NONE);
    e.now = 30;
    step (PHASE_EV_WAIT, WF_NONE, "waiting-limit", WF_NONE, WF_NONE, false);
    ok (job.state_since == 30, "waiting starts the phase's clock");
    e.now = 40;
    step (PHASE_EV_CREATE, WF_NONE, "creating", WF_PROPOSAL, WF_NONE, false);
    ok (job.state_since == 40, "its create restarts it");
    refused (PHASE_CREATING, PHASE_EV_WAIT, WF_NONE,
             "fluxjob-1: event 'wait' not expected in phase 'creating'");
    refused (PHASE_LIMITED, PHASE_EV_WAIT, WF_NONE,
             "fluxjob-1: event 'wait' not expected in phase 'waiting-limit'");
}

static void names (void)
{
    int bad = 0;
    for (int p = 0; p < PHASE_COUNT; p++)
        if (phase_parse (phase_name ((enum job_phase)p)) != p)
            bad++;
    ok (bad == 0 && phase_parse ("no-such-phase") == -1 && phase_parse (NULL) == -1,
        "every phase's name parses back to it; others do not");
    is (phase_name (PHASE_COUNT), "?", "a phase out of range has no name");
}

int main (void)
{
    life ();
    shortcuts ();
    refusals ();
    releasing ();
    wanted ();
    waiting ();
    names ();
    json_decref (e.actions);
    return done_testing ();
}
