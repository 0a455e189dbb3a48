/* workflow.h - the verbs on a job's Workflow, and the answers to them.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_ENGINE_WORKFLOW_H
#define DWS_ENGINE_WORKFLOW_H

#include "decide.h"
#include "state.h"
#include "wire/jobkvs.h"


/* Raise the job's exception (once) and take its Workflow to Teardown. */
void workflow_fail_job (struct dws_engine *e, struct job *job, const char *type, const char *fmt, ...)
    __attribute__ ((format (printf, 4, 5)));
/* DWS_JOBKVS_TIMING <state> (and DWS_JOBKVS_WORKFLOW with with_wf) */
void workflow_kvs_timing (struct dws_engine *e, struct job *job, enum wf_state s, bool with_wf);
void workflow_state_timers (struct dws_engine *e, struct job *job, enum wf_state s,
                            bool picked_up);
void workflow_create (struct dws_engine *e, struct job *job);
/* Carry out the decider's step where it is one of the Workflow's verbs
 * (ask for a state, with `annotations`; Teardown and its reads; mark the
 * epilog; delete); any other step is its caller's.  Takes `annotations`.
 */
void workflow_step (struct dws_engine *e, struct job *job, struct step st,
                    json_t *annotations);
/* Teardown is wanted: whatever the decider makes of it (decide.h). */
void workflow_teardown (struct dws_engine *e, struct job *job);
void workflow_remove_finalizer (struct dws_engine *e, struct job *job);
void workflow_epilog_remove (struct dws_engine *e, struct job *job);

/* Answers: delete, finalizer and annotate (logged unless harmless), the
 * state patch, and the reads before Teardown (dm, pods, podlog).
 */
void workflow_on_write (struct dws_engine *e, enum token_kind kind, struct job *job,
                        json_t *event);
void workflow_on_state (struct dws_engine *e, enum token_kind kind, struct job *job,
                        json_t *event);
void workflow_on_datamovements (struct dws_engine *e, enum token_kind kind, struct job *job,
                                json_t *event);
void workflow_on_pods (struct dws_engine *e, enum token_kind kind, struct job *job,
                       json_t *event);
void workflow_on_podlog (struct dws_engine *e, enum token_kind kind, struct job *job,
                         json_t *event);

/* The job's record under key (wire/jobkvs.h: DWS_JOBKVS_DATAOUT or
 * DWS_JOBKVS_TEARDOWN): {"state", "time", "error"?}. */
void workflow_kvs_outcome (struct dws_engine *e, struct job *job, const char *key,
                           const char *state, const char *error);

#endif /* !DWS_ENGINE_WORKFLOW_H */
