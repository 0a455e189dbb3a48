/* progress.h - a job's Workflow moved on by its watch events.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_ENGINE_PROGRESS_H
#define DWS_ENGINE_PROGRESS_H

#include "state.h"

void progress_event (struct dws_engine *e, const char *type, json_t *wf);
void progress_sync (struct dws_engine *e, json_t *objects);
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

#endif /* !DWS_ENGINE_PROGRESS_H */
