/* phase.h - where an engine job is in its Workflow's life: the one named
 * phase of each job, and every change of it (phase.c has the table).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_ENGINE_PHASE_H
#define DWS_ENGINE_PHASE_H

#include <stdbool.h>

#include "engine/state.h"

/* What moves a job from phase to phase.  Those with a Workflow state
 * (ask, done, adopt) take it as their argument.
 */
enum phase_event {
    PHASE_EV_CREATE, /* the Workflow's create is sent */
    PHASE_EV_SEEN,   /* the Workflow exists (its create answered, or a watch event) */
    PHASE_EV_ADOPT,  /* a Workflow of ours found in state s (a restart) */
    PHASE_EV_ASK,    /* desiredState s is asked for */
    PHASE_EV_DONE,   /* state s is complete and the engine acts on it */
    PHASE_EV_RELEASE, /* PostRun done: the job's ssds are to be held, its computes released */
    PHASE_EV_DELETE, /* the engine deletes the Workflow */
    PHASE_EV_VANISH, /* the Workflow is gone and we did not delete it */
    PHASE_EV_WAIT,   /* held by its user's limits before its create (admit.c) */
};

const char *phase_name (enum job_phase p);
/* The phase a name names, or -1. */
int phase_parse (const char *name);

/* Apply event ev (with Workflow state s where it takes one) to the job.
 * A transition the table lacks leaves the job as it was, logs
 * "fluxjob-N: event 'E' not expected in phase 'P'" at err and returns -1:
 * the caller then does nothing of what the transition was for.
 */
int phase_event (struct dws_engine *e, struct job *job, enum phase_event ev, enum wf_state s);

/* What the phase says of the Workflow: the desiredState last asked for
 * (or seen), the last state whose completion the engine acted on, and
 * whether it exists as far as the engine knows.
 */
enum wf_state phase_desired (const struct job *job);
enum wf_state phase_handled (const struct job *job);
bool phase_exists (const struct job *job);
/* The state whose completion the job's phase is (proposed, setup-done,
 * ..., torn-down: what follows it is still to come), or WF_NONE. */
enum wf_state phase_completed (const struct job *job);

#endif /* !DWS_ENGINE_PHASE_H */
