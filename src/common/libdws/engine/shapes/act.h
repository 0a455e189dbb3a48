/* act.h - action builders and timer keys
 * (the engine's bottom layer: state.h has the picture).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_ENGINE_ACT_H
#define DWS_ENGINE_ACT_H

#include "engine/state.h"
#include "util/error.h"

/* Append an action to the event's list (e->actions). */
void act (struct dws_engine *e, json_t *action);
void act_respond (struct dws_engine *e, json_t *msgid, json_t *payload);
void act_respond_ok (struct dws_engine *e, json_t *msgid);
void act_respond_fail (struct dws_engine *e, json_t *msgid, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));
/* Answer with an error (errnum, a message): the request itself failed. */
void act_respond_error (struct dws_engine *e, json_t *msgid, int errnum, const char *fmt, ...)
    __attribute__ ((format (printf, 4, 5)));
void act_log (struct dws_engine *e, const char *level, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));
/* An exception on the job, its note exactly as formatted.  When explain.h
 * knows the failure, its plain sentence follows as a post-event action
 * (DWS_EXPLAIN_EVENT) and a KVS put (DWS_EXPLAIN_KVS_KEY).  The verbatim
 * form explains nothing: it is for a note a program reads
 * (dws-node-failure's host list, which rc1 drains).
 */
void act_raise (struct dws_engine *e, struct job *job, const char *type, int severity,
                const char *fmt, ...) __attribute__ ((format (printf, 5, 6)));
void act_raise_verbatim (struct dws_engine *e, struct job *job, const char *type, int severity,
                         const char *note);
void act_k8s (struct dws_engine *e, const char *op, const char *kind, const char *ns,
              const char *name, json_t *body, const char *token);
void act_k8s_list (struct dws_engine *e, const char *kind, const char *selector,
                   const char *token);
void act_rpc (struct dws_engine *e, const char *topic, json_t *payload, const char *token);
/* The job's job-info read (its jobspec, and its R if want_R), on its
 * TOK_JOB_INFO token: what it is for is the caller's job->info_for. */
void act_job_info (struct dws_engine *e, struct job *job, bool want_R);
/* The jobtap plugin's job-manager.dws.* methods (jobsm.h, dataout.h), each
 * sent from here alone.  dependency {id, name, add}: one of the waits the
 * service owns (jobwire.h DWS_JOBWIRE_SERVICE_DEPENDENCIES: dws-limit
 * added or removed, dws-prestage removed).
 */
void act_dependency (struct dws_engine *e, struct job *job, const char *name, bool add,
                     json_t *with);
/* prestage-unpin {id, resources, constraint}: a pre-staged job given up
 * asks for the usual resources again, the pin's constraint out (steals
 * both; its answer comes with the token). */
void act_unpin (struct dws_engine *e, struct job *job, json_t *resources, json_t *constraint,
                const char *token);
/* epilog-remove {id}: the job's dws-epilog may finish. */
void act_epilog_remove (struct dws_engine *e, json_int_t id);
/* dataout-end {id, ok, error?}: a released job's DataOut ended; its
 * dependents held on dws-dataout go on (or fail, afterok, without ok). */
void act_dataout_end (struct dws_engine *e, json_int_t id, bool ok, const char *error);
void act_memo (struct dws_engine *e, struct job *job, json_t *memo);
void act_kvs (struct dws_engine *e, struct job *job, json_t *put, json_t *link);
/* The job's view may have changed (its phase, a note, its end): once the
 * event is handled, engine.c builds its record again and hands it to the
 * service if it differs from the last (dws_engine_take_records).  No
 * action: the record is written beside the actions, before them.
 */
void act_record (struct dws_engine *e, struct job *job);
/* The same for a job known by its id (engine.c: the job an event is about). */
void act_record_id (struct dws_engine *e, json_int_t id);
void act_timer_start (struct dws_engine *e, struct job *job, enum timer_kind kind, double after);
void act_timer_stop (struct dws_engine *e, struct job *job, enum timer_kind kind);
void act_drain (struct dws_engine *e, const char *targets, const char *reason);

#endif /* !DWS_ENGINE_ACT_H */
