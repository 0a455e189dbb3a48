/* act.c - action builders.
 *
 * The bottom layer of the engine (state.h has the picture): every
 * action the engine returns is built here (its tokens and timer keys by
 * token.c).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "act.h"
#include "psi.h"
#include "token.h"
#include "wire/action.h"
#include "wire/explain.h"
#include "wire/jobwire.h"
#include "wire/wire.h"

/* --- actions --------------------------------------------------------- */
void act (struct dws_engine *e, json_t *action)
{
    if (action)
        json_array_append_new (e->actions, action);
}

void act_respond (struct dws_engine *e, json_t *msgid, json_t *payload)
{
    act (e, json_pack ("{s:s s:O s:o}", "action", DWS_WIRE_ACTION (RESPOND), "msgid", msgid, "payload",
                       payload ? payload : json_object ()));
}

void act_respond_ok (struct dws_engine *e, json_t *msgid)
{
    act_respond (e, msgid, json_pack ("{s:b}", "success", 1));
}

void act_respond_fail (struct dws_engine *e, json_t *msgid, const char *fmt, ...)
{
    char buf[DWS_ERROR_TEXT_MAX];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (buf, sizeof (buf), fmt, ap);
    va_end (ap);
    act_respond (e, msgid, json_pack ("{s:b s:s}", "success", 0, "errstr", buf));
}

void act_respond_error (struct dws_engine *e, json_t *msgid, int errnum, const char *fmt, ...)
{
    char buf[DWS_ERROR_TEXT_MAX];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (buf, sizeof (buf), fmt, ap);
    va_end (ap);
    act (e, json_pack ("{s:s s:O s:i s:s}", "action", DWS_WIRE_ACTION (RESPOND_ERROR), "msgid",
                       msgid, "errnum", errnum, "errstr", buf));
}

void act_log (struct dws_engine *e, const char *level, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    dws_act_vlog (e->actions, level, fmt, ap);
    va_end (ap);
}

void act_raise_verbatim (struct dws_engine *e, struct job *job, const char *type, int severity,
                         const char *note)
{
    act (e, json_pack ("{s:s s:I s:s s:i s:s}", "action", DWS_WIRE_ACTION (RAISE), "id", job->id, "type", type,
                       "severity", severity, "note", note));
}

/* The sentence for an exception's note goes beside it, never into it (the
 * note is the reference's, byte for byte; scripts match it whole): an
 * eventlog entry of its own right after the exception, and the job's KVS
 * record for when the job is gone (explain.h).
 */
static void act_explain (struct dws_engine *e, struct job *job, const char *type,
                         const char *note)
{
    char sentence[DWS_EXPLAIN_MAX];
    char owner[DWS_EXPLAIN_MAX];
    if (!dws_explain (note, sentence, sizeof (sentence)))
        return;
    /* a persistentdw refused for another user's storage: who owns it, as
     * a line of its own under the row's sentence (which stays whole) */
    if (psi_owner_line (e, job->directives, note, owner, sizeof (owner))) {
        size_t n = strlen (sentence), m = strlen (owner);
        if (n + 1 + m < sizeof (sentence)) { /* whole, or not at all */
            sentence[n] = '\n';
            memcpy (sentence + n + 1, owner, m + 1);
        }
    }
    act (e, json_pack ("{s:s s:I s:s s:{s:s s:s s:s}}", "action", DWS_WIRE_ACTION (POST_EVENT), "id",
                       job->id, "name", DWS_EXPLAIN_EVENT, "context", "type", type, "note", note,
                       "explanation", sentence));
    act_kvs (e, job,
             json_pack ("{s:{s:s s:s s:s s:f}}", DWS_EXPLAIN_KVS_KEY, "type", type, "note", note,
                        "explanation", sentence, "time", e->now),
             NULL);
}

void act_raise (struct dws_engine *e, struct job *job, const char *type, int severity,
                const char *fmt, ...)
{
    char buf[DWS_ERROR_TEXT_MAX];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (buf, sizeof (buf), fmt, ap);
    va_end (ap);
    if (severity == 0) { /* `flux dws job` shows it, and explains it there */
        free (job->note);
        job->note = strdup (buf);
    }
    act_raise_verbatim (e, job, type, severity, buf);
    act_explain (e, job, type, buf);
    act_record (e, job);
}

void act_k8s (struct dws_engine *e, const char *op, const char *kind, const char *ns,
              const char *name, json_t *body, const char *token)
{
    json_t *a = json_pack ("{s:s s:s s:s}", "action", DWS_WIRE_ACTION (K8S), "op", op, "kind", kind);
    if (!a) {
        json_decref (body);
        return;
    }
    if (ns)
        json_object_set_new (a, "namespace", json_string (ns));
    if (name)
        json_object_set_new (a, "name", json_string (name));
    if (body)
        json_object_set_new (a, "body", body);
    if (token)
        json_object_set_new (a, "token", json_string (token));
    act (e, a);
}

void act_k8s_list (struct dws_engine *e, const char *kind, const char *selector,
                   const char *token)
{
    json_t *a = json_pack ("{s:s s:s s:s s:s s:s}", "action", DWS_WIRE_ACTION (K8S), "op", "list", "kind", kind,
                           "label_selector", selector, "token", token);
    act (e, a);
}

void act_job_info (struct dws_engine *e, struct job *job, bool want_R)
{
    char token[TOKEN_SIZE];
    act (e, json_pack ("{s:s s:I s:s s:b}", "action", DWS_WIRE_ACTION (JOB_INFO), "id", job->id,
                       "token", token_for (token, sizeof (token), TOK_JOB_INFO, job), "R", want_R));
}

void act_rpc (struct dws_engine *e, const char *topic, json_t *payload, const char *token)
{
    json_t *a = json_pack ("{s:s s:s s:o s:i}", "action", DWS_WIRE_ACTION (RPC), "topic", topic, "payload",
                           payload ? payload : json_object (), "nodeid", 0);
    if (a && token)
        json_object_set_new (a, "token", json_string (token));
    act (e, a);
}

/* --- the jobtap plugin's job-manager.dws.* methods the service sends --- */
void act_dependency (struct dws_engine *e, struct job *job, const char *name, bool add,
                     json_t *with)
{
    json_t *payload = json_pack ("{s:I s:s s:b}", "id", job->id, "name", name, "add", add);
    if (payload && with)
        json_object_update (payload, with);
    json_decref (with);
    act_rpc (e, DWS_JOBWIRE_TOPIC (DWS_JOBWIRE_DEPENDENCY_METHOD), payload, NULL);
}

void act_unpin (struct dws_engine *e, struct job *job, json_t *resources, json_t *constraint,
                const char *token)
{
    act_rpc (e, DWS_JOBWIRE_TOPIC (DWS_JOBWIRE_PRESTAGE_UNPIN_METHOD),
             json_pack ("{s:I s:o s:o}", "id", job->id, "resources", resources, "constraint",
                        constraint),
             token);
}

void act_epilog_remove (struct dws_engine *e, json_int_t id)
{
    act_rpc (e, DWS_JOBWIRE_TOPIC (DWS_JOBWIRE_EPILOG_REMOVE_METHOD),
             json_pack ("{s:I}", "id", id), NULL);
}

void act_dataout_end (struct dws_engine *e, json_int_t id, bool ok, const char *error)
{
    json_t *p = json_pack ("{s:I s:b}", "id", id, "ok", ok);
    if (p && error)
        json_object_set_new (p, "error", json_string (error));
    act_rpc (e, DWS_JOBWIRE_TOPIC (DWS_JOBWIRE_DATAOUT_END_METHOD), p, NULL);
}

void act_memo (struct dws_engine *e, struct job *job, json_t *memo)
{
    act (e, json_pack ("{s:s s:I s:o}", "action", DWS_WIRE_ACTION (MEMO), "id", job->id, "memo", memo));
}

void act_kvs (struct dws_engine *e, struct job *job, json_t *put, json_t *link)
{
    act (e, json_pack ("{s:s s:I s:o s:o}", "action", DWS_WIRE_ACTION (KVS), "id", job->id, "put",
                       put ? put : json_object (), "link", link ? link : json_object ()));
}

void act_record_id (struct dws_engine *e, json_int_t id)
{
    char key[32];
    if (!e->record_due)
        return;
    snprintf (key, sizeof (key), "%" JSON_INTEGER_FORMAT, id);
    json_object_set_new (e->record_due, key, json_true ());
}

void act_record (struct dws_engine *e, struct job *job)
{
    act_record_id (e, job->id);
}

void act_timer_start (struct dws_engine *e, struct job *job, enum timer_kind kind, double after)
{
    char key[TOKEN_SIZE];
    if (after <= 0)
        return;
    token_for_timer (key, sizeof (key), kind, job->id);
    job->timers |= 1u << kind;
    act (e, json_pack ("{s:s s:s s:f}", "action", DWS_WIRE_ACTION (TIMER_START), "key", key, "after", after));
}

void act_timer_stop (struct dws_engine *e, struct job *job, enum timer_kind kind)
{
    char key[TOKEN_SIZE];
    if (!(job->timers & (1u << kind)))
        return;
    token_for_timer (key, sizeof (key), kind, job->id);
    job->timers &= ~(1u << kind);
    act (e, json_pack ("{s:s s:s}", "action", DWS_WIRE_ACTION (TIMER_STOP), "key", key));
}

void act_drain (struct dws_engine *e, const char *targets, const char *reason)
{
    act (e, json_pack ("{s:s s:s s:s}", "action", DWS_WIRE_ACTION (DRAIN), "targets", targets, "reason",
                       reason));
}
