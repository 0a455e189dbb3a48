/* request.h - the dws.* requests, orphan recovery, job-info answers.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_ENGINE_REQUEST_H
#define DWS_ENGINE_REQUEST_H

#include "state.h"

void request_event (struct dws_engine *e, json_t *event);
/* the active jobs (orphan recovery after the first Workflow list) */
void request_orphans_event (struct dws_engine *e, json_t *jobs, bool complete);
void request_job_info_result (struct dws_engine *e, struct job *job, json_t *event);

#endif /* !DWS_ENGINE_REQUEST_H */
