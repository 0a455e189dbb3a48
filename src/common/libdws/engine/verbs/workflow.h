/* workflow.h - the verbs on a job's Workflow, and the answers to them.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_ENGINE_WORKFLOW_H
#define DWS_ENGINE_WORKFLOW_H

#include "engine/advance.h"
#include "engine/state.h"
#include "wire/jobkvs.h"


/* The job failed (type: its exception's, why: the formatted note): the
 * decider says how its owner learns it (STEP_FAIL_*), then Teardown. */
void workflow_fail_job (struct dws_engine *e, struct job *job, const char *type, const char *fmt, ...)
    __attribute__ ((format (printf, 4, 5)));
/* A job made for a request lost in a restart cannot have its Workflow
 * again: its exception (type, the note), then it is forgotten
 * (NEWS_UNMADE: STEP_FAIL_FORGET). */
void workflow_unmade (struct dws_engine *e, struct job *job, const char *type, const char *fmt, ...)
    __attribute__ ((format (printf, 4, 5)));
/* DWS_JOBKVS_TIMING <state> (and DWS_JOBKVS_WORKFLOW with with_wf) */
void workflow_kvs_timing (struct dws_engine *e, struct job *job, enum wf_state s, bool with_wf);
/* Start the timers in `timers` (a bit per kind, as the decider chose). */
void workflow_start_timers (struct dws_engine *e, struct job *job, unsigned timers);
void workflow_create (struct dws_engine *e, struct job *job);
/* The verbs of the Workflow's steps (verbtable.c's table). */
void workflow_send_create (struct dws_engine *e, struct job *job, const struct step *st);
/* The annotations that record the job's hosts (and the ssd reserved for
 * it, a Lustre's) on its Workflow: a new object. */
json_t *workflow_hosts_annotations (const struct job *job);
void workflow_ask (struct dws_engine *e, struct job *job, const struct step *st);
/* desiredState st->state with the held ssds' annotation (stolen), for
 * release.c: on a token of its own (TOK_DATAOUT_HELD), whose answer ends
 * a released job's epilog. */
void workflow_ask_held (struct dws_engine *e, struct job *job, const struct step *st,
                        json_t *annotations);
void workflow_teardown_begin (struct dws_engine *e, struct job *job, const struct step *st);
void workflow_teardown_patch (struct dws_engine *e, struct job *job, const struct step *st);
void workflow_mark_epilog (struct dws_engine *e, struct job *job, const struct step *st);
void workflow_delete (struct dws_engine *e, struct job *job, const struct step *st);
void workflow_delete_given_up (struct dws_engine *e, struct job *job, const struct step *st);
void workflow_finalizer (struct dws_engine *e, struct job *job, const struct step *st);
/* STEP_FAIL: fail the job with st->said->type (default "exception": a timeout's
 * input says "dws-timeout") and st->said->why. */
void workflow_fail (struct dws_engine *e, struct job *job, const struct step *st);
/* STEP_FAIL_RECORD (its computes released: the KVS record says it),
 * STEP_FAIL_RAISE (its exception), STEP_FAIL_AGAIN (excepted already:
 * logged); each then Teardown. */
void workflow_fail_record (struct dws_engine *e, struct job *job, const struct step *st);
void workflow_fail_raise (struct dws_engine *e, struct job *job, const struct step *st);
void workflow_fail_again (struct dws_engine *e, struct job *job, const struct step *st);
void workflow_fail_forget (struct dws_engine *e, struct job *job, const struct step *st);
/* Teardown is wanted without DataOut (teardown_after expired): the job
 * is toredown, and the decider looks (decide.c's settle). */
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
