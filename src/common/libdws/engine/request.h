/* request.h - the dws.* requests, orphan recovery, job-info answers.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_ENGINE_REQUEST_H
#define DWS_ENGINE_REQUEST_H

#include "advance.h"
#include "state.h"

void request_event (struct dws_engine *e, json_t *event);
/* the active jobs (orphan recovery after the first Workflow list) */
void request_orphans_event (struct dws_engine *e, json_t *jobs, bool complete);
void request_job_info_result (struct dws_engine *e, struct job *job, json_t *event);

/* The verbs of the requests' steps (verbtable.c's table). */
void request_join_create (struct dws_engine *e, struct job *job, const struct step *st);
void request_create_answer (struct dws_engine *e, struct job *job, const struct step *st);
void request_limit_remove (struct dws_engine *e, struct job *job, const struct step *st);
void request_setup_answer (struct dws_engine *e, struct job *job, const struct step *st);
void request_record_hosts (struct dws_engine *e, struct job *job, const struct step *st);
void request_begin_epilog (struct dws_engine *e, struct job *job, const struct step *st);
void request_epilog_again (struct dws_engine *e, struct job *job, const struct step *st);
void request_end_away (struct dws_engine *e, struct job *job, const struct step *st);
void request_read_R (struct dws_engine *e, struct job *job, const struct step *st);
void request_place_lustre (struct dws_engine *e, struct job *job, const struct step *st);
void request_setup_from_R (struct dws_engine *e, struct job *job, const struct step *st);
void request_from_jobspec (struct dws_engine *e, struct job *job, const struct step *st);
void request_create_later (struct dws_engine *e, struct job *job, const struct step *st);
void request_create_from_jobspec (struct dws_engine *e, struct job *job, const struct step *st);
void request_end_waiting (struct dws_engine *e, struct job *job, const struct step *st);

#endif /* !DWS_ENGINE_REQUEST_H */
