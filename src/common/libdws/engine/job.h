/* job.h - the job table.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_ENGINE_JOB_H
#define DWS_ENGINE_JOB_H

#include "state.h"

/* The table (64 buckets, doubled as it fills): -1 when out of memory. */
int job_table_init (struct dws_engine *e);
/* Free every job and the table (no actions: the engine is going). */
void job_table_destroy (struct dws_engine *e);
struct job *job_lookup (struct dws_engine *e, json_int_t id);
struct job *job_create (struct dws_engine *e, json_int_t id);
/* Stop the job's timers, tell rabbit health, free it. */
void job_forget (struct dws_engine *e, struct job *job);
/* The job's latest Workflow object (a new reference; NULL: none), read
 * into job->view.
 */
void job_set_wf (struct job *job, json_t *wf);
/* Record the job's flux-accounting bank and project (strings, or NULL or
 * another type: none). */
void job_set_account (struct job *job, json_t *bank, json_t *project);
/* Record the ssd Fluxion gave the job, per rabbit, from its R (none: NULL). */
void job_set_reserved (struct job *job, json_t *R);

/* The job id of a Workflow name "fluxjob-<id>". */
bool job_id_from_name (const char *name, json_int_t *id);

#endif /* !DWS_ENGINE_JOB_H */
