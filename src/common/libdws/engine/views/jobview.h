/* jobview.h - a rabbit job as its owner sees it (dws.jobs, dws.job).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_ENGINE_JOBVIEW_H
#define DWS_ENGINE_JOBVIEW_H

#include "engine/state.h"

/* dws.jobs {"all_users"?: bool, "ids"?: [jobid]}: the requester's jobs
 * (all users' for the instance owner with all_users), a line's worth each.
 */
void jobview_jobs_request (struct dws_engine *e, json_t *msgid, json_t *p, json_int_t uid);
/* dws.job {"jobid"}: one job in full.  Its NnfDataMovements are listed
 * first (requests for the same job share one list); ENOENT: no Workflow
 * here, EPERM: another user's job.
 */
void jobview_job_request (struct dws_engine *e, json_t *msgid, json_t *p, json_int_t uid);
/* The NnfDataMovement list asked for by dws.job: answer every request
 * waiting for it.
 */
void jobview_on_datamovements (struct dws_engine *e, enum token_kind kind, struct job *job,
                               json_t *event);
/* Build the record of each job act_record marked in this event; those
 * that differ from the job's last go to e->records for the service
 * (dws_engine_take_records).  Called by engine.c once the event is
 * handled.
 */
void jobview_records (struct dws_engine *e);

#endif /* !DWS_ENGINE_JOBVIEW_H */
