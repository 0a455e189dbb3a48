/* engine_act.h - action builders, tokens, timer keys, host and id helpers
 * (the engine's bottom layer: engine_state.h has the picture).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_ENGINE_ACT_H
#define DWS_ENGINE_ACT_H

#include "engine_state.h"
#include "error.h"

/* Append an action to the event's list (e->actions). */
void act (struct dws_engine *e, json_t *action);
void act_respond (struct dws_engine *e, json_t *msgid, json_t *payload);
void act_respond_ok (struct dws_engine *e, json_t *msgid);
void act_respond_fail (struct dws_engine *e, json_t *msgid, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));
void act_log (struct dws_engine *e, const char *level, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));
void act_raise (struct dws_engine *e, struct job *job, const char *type, int severity,
                const char *fmt, ...) __attribute__ ((format (printf, 5, 6)));
void act_k8s (struct dws_engine *e, const char *op, const char *kind, const char *ns,
              const char *name, json_t *body, const char *token);
void act_k8s_list (struct dws_engine *e, const char *kind, const char *selector,
                   const char *token);
void act_rpc (struct dws_engine *e, const char *topic, json_t *payload, const char *token);
void act_memo (struct dws_engine *e, struct job *job, json_t *memo);
void act_kvs (struct dws_engine *e, struct job *job, json_t *put, json_t *link);
void act_timer_start (struct dws_engine *e, struct job *job, enum timer_kind kind, double after);
void act_timer_stop (struct dws_engine *e, struct job *job, enum timer_kind kind);
void act_drain (struct dws_engine *e, const char *targets, const char *reason);

const char *timer_kind_name (enum timer_kind kind);

const char *token_kind_name (enum token_kind kind);
/* The kind of the first len bytes of s, or -1 for none. */
int token_kind_parse (const char *s, size_t len);
/* "<kind>:<jobid>" */
const char *token_for (char *buf, size_t len, enum token_kind kind, struct job *job);

/* A Kubernetes answer (a k8s-result event): did it succeed, its HTTP
 * code, the object it carries (or NULL); gone = 404.
 */
struct k8s_answer {
    bool ok;
    int code;
    json_t *obj;
    bool gone;
};
struct k8s_answer k8s_answer_of (json_t *event);
/* A Kubernetes answer's message, or "no answer from Kubernetes". */
const char *result_message (json_t *event);
/* v's text, or def when v is not a string. */
const char *str_or (json_t *v, const char *def);

/* The hosts of R's execution.nodelist as one RFC 29 host list. */
char *hostlist_of_R (json_t *R, dws_error_t *err);
/* The names of hosts minus those of minus (NULL = none), as an array. */
json_t *hosts_minus (const char *hosts, const char *minus, dws_error_t *err);
/* The job id of a Workflow name "fluxjob-<id>". */
bool job_id_from_name (const char *name, json_int_t *id);

#endif /* !DWS_ENGINE_ACT_H */
