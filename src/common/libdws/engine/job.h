/* job.h - the job table.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_ENGINE_JOB_H
#define DWS_ENGINE_JOB_H

#include "engine/decider/decide.h"
#include "state.h"
#include "util/error.h"

/* What an input told beside its news that the verb of the step answering
 * it needs: an answer's text, what a read found.  An input gives it to
 * advance_tell (), which keeps a copy on the job (job_tell: job->told)
 * until the step that answers its news is carried out: it travels in that
 * step (struct step's `said`, decide.h), and a verb that takes an owned
 * field sets it to NULL.
 */
struct told {
    struct told *next;       /* the job's next, in the order told */
    enum news news;          /* the news it goes with */
    const char *type;        /* a failure's exception type ("exception" if NULL) */
    const char *why;         /* a failure's note, or a log line of the step */
    json_t *event;           /* the answer itself (job-info: the R) */
    json_t *items;           /* what a read listed (ClientMounts) */
    json_t *nodes;           /* the culprits a timeout's read found */
    char *failed;            /* every host given up, with them */
    json_t *msgid;           /* the request the step answers */
    char *hosts;             /* the job's hosts (RFC 29), from R */
    bool run_started;        /* STEP_BEGIN_EPILOG: the job ran */
    const char *log;         /* a line the step logs first (its verb's level) */
};

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

/* Keep a copy of `what` at the end of what the job was told (its strings
 * and JSON copied; `failed`, `hosts` and `annotations` taken, set to NULL
 * in `what`, and freed on failure): -1 when out of memory. */
int job_tell (struct job *job, enum news news, struct told *what);
/* The first thing the job was told for `news`, taken off it, or NULL. */
struct told *job_told_take (struct job *job, enum news news);
void job_told_free (struct told *t);

/* The job id of a Workflow name "fluxjob-<id>". */
bool job_id_from_name (const char *name, json_int_t *id);

#endif /* !DWS_ENGINE_JOB_H */
