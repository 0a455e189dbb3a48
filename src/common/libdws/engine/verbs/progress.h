/* progress.h - a job's Workflow moved on by its watch events.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_ENGINE_PROGRESS_H
#define DWS_ENGINE_PROGRESS_H

#include "engine/advance.h"
#include "engine/state.h"

void progress_event (struct dws_engine *e, const char *type, json_t *wf);
/* A Workflow list: each listed Workflow's job marked (progress_event) ... */
void progress_sync (struct dws_engine *e, json_t *objects);
/* ... then, once they have moved, the jobs whose Workflow it lacks (gone
 * while no one watched), and after the first list, the active-jobs read. */
void progress_sync_missing (struct dws_engine *e, json_t *objects);
void progress_workflow (struct dws_engine *e, struct job *job);
/* dws.setup arrived: record the hosts, fill the Servers, ask for Setup */
void progress_setup_start (struct dws_engine *e, struct job *job);
/* A repeated dws.setup after PreRun: send the prolog-remove again. */
void progress_prolog_remove_again (struct dws_engine *e, struct job *job);
/* A repeated dws.create while the job waits for its resources: the
 * jobtap plugin was reloaded and may have missed the resource-update
 * (sent while no plugin was loaded), so send it again.  Nothing when
 * Proposal is not complete yet (it is sent then) or the job moved on.
 */
void progress_resources_resend (struct dws_engine *e, struct job *job);

/* Answers: the create, the DirectiveBreakdown reads, the hosts
 * annotation, the Servers and Computes patches, the token Secret.
 */
void progress_on_create (struct dws_engine *e, enum token_kind kind, struct job *job,
                         json_t *event);
void progress_on_breakdown (struct dws_engine *e, enum token_kind kind, struct job *job,
                            json_t *event);
void progress_on_hosts (struct dws_engine *e, enum token_kind kind, struct job *job,
                        json_t *event);
void progress_on_servers (struct dws_engine *e, enum token_kind kind, struct job *job,
                          json_t *event);
void progress_on_computes (struct dws_engine *e, enum token_kind kind, struct job *job,
                           json_t *event);
void progress_on_secret (struct dws_engine *e, enum token_kind kind, struct job *job,
                         json_t *event);

/* ANN_PRESTAGE was written (or not: the Workflow's answer). */
void progress_on_prestage (struct dws_engine *e, enum token_kind kind, struct job *job,
                           json_t *event);
/* Fluxion's answer to the find of a pre-staged job's hold (prestage.c). */
void progress_on_prestage_find (struct dws_engine *e, struct job *job, json_t *event);

/* The verbs of the steps of a Workflow's progress (verbtable.c's table). */
void progress_workflow_seen (struct dws_engine *e, struct job *job, const struct step *st);
void progress_breakdowns (struct dws_engine *e, struct job *job, const struct step *st);
void progress_prestage_unpin (struct dws_engine *e, struct job *job, const struct step *st);
void progress_send_resources (struct dws_engine *e, struct job *job, const struct step *st);
void progress_send_refusal (struct dws_engine *e, struct job *job, const struct step *st);
/* STEP_ADOPT: a Workflow of ours taken up after a restart. */
void progress_adopt (struct dws_engine *e, struct job *job, const struct step *st);
/* STEP_PRESTAGE_WEIGH: what decides pre-staging, read (prestage_weigh). */
void progress_prestage_weigh (struct dws_engine *e, struct job *job, const struct step *st);
void progress_resources_again (struct dws_engine *e, struct job *job, const struct step *st);
void progress_wait_map (struct dws_engine *e, struct job *job, const struct step *st);
void progress_read_sched_R (struct dws_engine *e, struct job *job, const struct step *st);
void progress_hosts_patch (struct dws_engine *e, struct job *job, const struct step *st);
void progress_read_token (struct dws_engine *e, struct job *job, const struct step *st);
void progress_servers (struct dws_engine *e, struct job *job, const struct step *st);
void progress_computes (struct dws_engine *e, struct job *job, const struct step *st);
void progress_prolog (struct dws_engine *e, struct job *job, const struct step *st);
void progress_prolog_remove (struct dws_engine *e, struct job *job, const struct step *st);
void progress_recreate (struct dws_engine *e, struct job *job, const struct step *st);
void progress_end_epilog (struct dws_engine *e, struct job *job, const struct step *st);
void progress_raise (struct dws_engine *e, struct job *job, const struct step *st);
void progress_raise_gone (struct dws_engine *e, struct job *job, const struct step *st);
void progress_forget (struct dws_engine *e, struct job *job, const struct step *st);
void progress_fail_outside (struct dws_engine *e, struct job *job, const struct step *st);
/* What a state's completion records, before the step that follows it. */
void progress_completed (struct dws_engine *e, struct job *job, enum wf_state s);

#endif /* !DWS_ENGINE_PROGRESS_H */
