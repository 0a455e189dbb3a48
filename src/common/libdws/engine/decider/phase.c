/* phase.c - the engine job's phase: its names, its transitions as data,
 * and what each phase says of the Workflow (phase.h).
 *
 * Everything that moves a job along its Workflow's life goes through
 * phase_event (): the table below lists, per event, the phases it may
 * come in; any other is refused with the event and the phase named, and
 * the job stays where it was.  Facts that are not phases (an epilog
 * begun, a request in flight, a failure raised) stay flags on the job.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <stdio.h>
#include <string.h>

#include "engine/shapes/act.h"
#include "engine/shapes/wfstate.h"
#include "phase.h"

struct phase_info {
    const char *name;
    enum wf_state desired; /* the desiredState the phase has asked for */
    enum wf_state handled; /* the last state whose completion was acted on */
    bool exists;           /* a Workflow exists */
};

static const struct phase_info info[PHASE_COUNT] = {
#define PHASE_INFO(id, name, desired, handled, exists) [PHASE_##id] = {name, desired, handled, exists},
    JOB_PHASES (PHASE_INFO)
#undef PHASE_INFO
};

static const char *const event_names[] = {
    [PHASE_EV_CREATE] = "create", [PHASE_EV_SEEN] = "seen",     [PHASE_EV_ADOPT] = "adopt",
    [PHASE_EV_ASK] = "ask",       [PHASE_EV_DONE] = "done",     [PHASE_EV_DELETE] = "delete",
    [PHASE_EV_RELEASE] = "release",
    [PHASE_EV_VANISH] = "vanish", [PHASE_EV_WAIT] = "wait",
};

/* The phase that asks for state s, and the one that has acted on its
 * completion.
 */
static const enum job_phase asked[WF_NSTATES] = {
    [WF_PROPOSAL] = PHASE_PROPOSAL, [WF_SETUP] = PHASE_SETUP,     [WF_DATAIN] = PHASE_DATAIN,
    [WF_PRERUN] = PHASE_PRERUN,     [WF_POSTRUN] = PHASE_POSTRUN, [WF_DATAOUT] = PHASE_DATAOUT,
    [WF_TEARDOWN] = PHASE_TEARDOWN,
};
static const enum job_phase done[WF_NSTATES] = {
    [WF_PROPOSAL] = PHASE_PROPOSED,     [WF_SETUP] = PHASE_SETUP_DONE,
    [WF_DATAIN] = PHASE_DATAIN_DONE,    [WF_PRERUN] = PHASE_RUNNING,
    [WF_POSTRUN] = PHASE_POSTRUN_DONE,  [WF_DATAOUT] = PHASE_DATAOUT_DONE,
    [WF_TEARDOWN] = PHASE_TORN_DOWN,
};

/* The transitions: an event (for Workflow state s, or any state with
 * WF_NONE) is expected in the phases of its row.  Where it leads is the
 * event's own: create -> creating, seen -> (creating ->) proposal, adopt
 * and ask -> the phase asking for s, done -> the phase done with s,
 * release -> releasing, delete -> deleting, vanish -> none, wait ->
 * waiting-limit.
 */
#define P(id) (1u << PHASE_##id)
#define WITH_WORKFLOW                                                                         \
    (P (PROPOSAL) | P (PROPOSED) | P (SETUP) | P (SETUP_DONE) | P (DATAIN) | P (DATAIN_DONE) \
     | P (PRERUN) | P (RUNNING) | P (POSTRUN) | P (POSTRUN_DONE) | P (RELEASING) | P (DATAOUT) \
     | P (DATAOUT_DONE))
#define TEARING_DOWN (P (TEARDOWN) | P (TORN_DOWN) | P (DELETING))

static const struct transition {
    enum phase_event ev;
    enum wf_state s;
    unsigned from; /* bit per phase */
} table[] = {
    {PHASE_EV_CREATE, WF_NONE, P (NONE) | P (LIMITED)},
    {PHASE_EV_WAIT, WF_NONE, P (NONE)},
    {PHASE_EV_SEEN, WF_NONE, ~0u},
    {PHASE_EV_ADOPT, WF_NONE, P (NONE)},
    {PHASE_EV_ASK, WF_SETUP, P (PROPOSED)},
    {PHASE_EV_ASK, WF_DATAIN, P (SETUP_DONE)},
    {PHASE_EV_ASK, WF_PRERUN, P (DATAIN_DONE)},
    {PHASE_EV_ASK, WF_POSTRUN, P (PRERUN) | P (RUNNING)},
    {PHASE_EV_ASK, WF_DATAOUT, P (POSTRUN_DONE) | P (RELEASING)},
    {PHASE_EV_ASK, WF_TEARDOWN, WITH_WORKFLOW | P (TEARDOWN)},
    {PHASE_EV_DONE, WF_PROPOSAL, P (PROPOSAL)},
    {PHASE_EV_DONE, WF_SETUP, P (SETUP)},
    {PHASE_EV_DONE, WF_DATAIN, P (DATAIN)},
    {PHASE_EV_DONE, WF_PRERUN, P (PRERUN)},
    {PHASE_EV_DONE, WF_POSTRUN, P (POSTRUN)},
    {PHASE_EV_DONE, WF_DATAOUT, P (DATAOUT)},
    {PHASE_EV_DONE, WF_TEARDOWN, P (TEARDOWN)},
    {PHASE_EV_RELEASE, WF_NONE, P (POSTRUN_DONE)},
    {PHASE_EV_DELETE, WF_NONE, P (TORN_DOWN)},
    {PHASE_EV_VANISH, WF_NONE, ~0u},
};
#undef P

const char *phase_name (enum job_phase p)
{
    return p >= 0 && p < PHASE_COUNT ? info[p].name : "?";
}

int phase_parse (const char *name)
{
    for (int p = 0; name && p < PHASE_COUNT; p++)
        if (!strcmp (name, info[p].name))
            return p;
    return -1;
}

static bool expected (enum phase_event ev, enum wf_state s, enum job_phase p)
{
    for (size_t i = 0; i < sizeof (table) / sizeof (table[0]); i++)
        if (table[i].ev == ev && (table[i].s == WF_NONE || table[i].s == s))
            return (table[i].from & (1u << p)) != 0;
    return false;
}

static enum job_phase target (enum phase_event ev, enum wf_state s, enum job_phase p)
{
    switch (ev) {
        case PHASE_EV_CREATE:
            return PHASE_CREATING;
        case PHASE_EV_SEEN:
            return p == PHASE_CREATING || p == PHASE_NONE ? PHASE_PROPOSAL : p;
        case PHASE_EV_ADOPT:
            return s > WF_NONE && s < WF_NSTATES ? asked[s] : PHASE_PROPOSAL;
        case PHASE_EV_ASK:
            return asked[s];
        case PHASE_EV_DONE:
            return done[s];
        case PHASE_EV_RELEASE:
            return PHASE_RELEASING;
        case PHASE_EV_DELETE:
            return PHASE_DELETING;
        case PHASE_EV_VANISH:
            return PHASE_NONE;
        case PHASE_EV_WAIT:
            return PHASE_LIMITED;
    }
    return p;
}

int phase_event (struct dws_engine *e, struct job *job, enum phase_event ev, enum wf_state s)
{
    bool stated = ev == PHASE_EV_ASK || ev == PHASE_EV_DONE || ev == PHASE_EV_ADOPT;
    if ((stated && (s < WF_PROPOSAL || s >= WF_NSTATES) && ev != PHASE_EV_ADOPT)
        || !expected (ev, s, job->phase)) {
        act_log (e, "err", "%s: event '%s%s%s' not expected in phase '%s'", job->name,
                    event_names[ev], stated ? " " : "", stated ? wfstate_name (s) : "",
                    phase_name (job->phase));
        return -1;
    }
    if (ev == PHASE_EV_CREATE || ev == PHASE_EV_ASK || ev == PHASE_EV_ADOPT || ev == PHASE_EV_WAIT)
        job->state_since = e->now;
    if (ev == PHASE_EV_CREATE)
        job->asked_at[WF_PROPOSAL] = e->now;
    else if (ev == PHASE_EV_ASK)
        job->asked_at[s] = e->now;
    else if (ev == PHASE_EV_DONE)
        job->done_at[s] = e->now;
    enum job_phase to = target (ev, s, job->phase);
    e->phase_jobs[job->phase]--;
    e->phase_jobs[to]++;
    job->phase = to;
    act_record (e, job); /* the job's KVS record follows its phase */
    return 0;
}

enum wf_state phase_desired (const struct job *job)
{
    return info[job->phase].desired;
}

enum wf_state phase_handled (const struct job *job)
{
    return info[job->phase].handled;
}

bool phase_exists (const struct job *job)
{
    return info[job->phase].exists;
}

enum wf_state phase_completed (const struct job *job)
{
    enum wf_state s = info[job->phase].handled;
    return s > WF_NONE && s < WF_NSTATES && done[s] == job->phase ? s : WF_NONE;
}
