/* engine_act.c - action builders, tokens, timer keys, host and id helpers.
 *
 * The bottom layer of the engine (engine_state.h has the picture): every
 * action the engine returns is built here, as are the tokens that route
 * Kubernetes answers back and the keys of the timers.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "action.h"
#include "engine_act.h"
#include "hostlist.h"
#include "wire.h"

const char *str_or (json_t *v, const char *def)
{
    return json_is_string (v) ? json_string_value (v) : def;
}

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

void act_log (struct dws_engine *e, const char *level, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    dws_act_vlog (e->actions, level, fmt, ap);
    va_end (ap);
}

void act_raise (struct dws_engine *e, struct job *job, const char *type, int severity,
                const char *fmt, ...)
{
    char buf[DWS_ERROR_TEXT_MAX];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (buf, sizeof (buf), fmt, ap);
    va_end (ap);
    act (e, json_pack ("{s:s s:I s:s s:i s:s}", "action", DWS_WIRE_ACTION (RAISE), "id", job->id, "type", type,
                       "severity", severity, "note", buf));
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

void act_rpc (struct dws_engine *e, const char *topic, json_t *payload, const char *token)
{
    json_t *a = json_pack ("{s:s s:s s:o s:i}", "action", DWS_WIRE_ACTION (RPC), "topic", topic, "payload",
                           payload ? payload : json_object (), "nodeid", 0);
    if (a && token)
        json_object_set_new (a, "token", json_string (token));
    act (e, a);
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

static const char *timer_names[T_NKINDS] = {
    "setup", "prerun", "postrun", "teardown_after", "tc",
};

const char *timer_kind_name (enum timer_kind kind)
{
    return timer_names[kind];
}

static void timer_key (char *buf, size_t len, enum timer_kind kind, struct job *job)
{
    snprintf (buf, len, "%s:%" JSON_INTEGER_FORMAT, timer_names[kind], job->id);
}

void act_timer_start (struct dws_engine *e, struct job *job, enum timer_kind kind, double after)
{
    char key[96];
    if (after <= 0)
        return;
    timer_key (key, sizeof (key), kind, job);
    job->timers |= 1u << kind;
    act (e, json_pack ("{s:s s:s s:f}", "action", DWS_WIRE_ACTION (TIMER_START), "key", key, "after", after));
}

void act_timer_stop (struct dws_engine *e, struct job *job, enum timer_kind kind)
{
    char key[96];
    if (!(job->timers & (1u << kind)))
        return;
    timer_key (key, sizeof (key), kind, job);
    job->timers &= ~(1u << kind);
    act (e, json_pack ("{s:s s:s}", "action", DWS_WIRE_ACTION (TIMER_STOP), "key", key));
}

void act_drain (struct dws_engine *e, const char *targets, const char *reason)
{
    act (e, json_pack ("{s:s s:s s:s}", "action", DWS_WIRE_ACTION (DRAIN), "targets", targets, "reason",
                       reason));
}

static const char *const token_kind_names[TOK_COUNT] = {
#define TOKEN_KIND_NAME(id, name) [TOK_##id] = name,
    TOKEN_KINDS (TOKEN_KIND_NAME)
#undef TOKEN_KIND_NAME
};

const char *token_kind_name (enum token_kind kind)
{
    return kind < TOK_COUNT ? token_kind_names[kind] : "?";
}

int token_kind_parse (const char *s, size_t len)
{
    for (int k = 0; k < TOK_COUNT; k++)
        if (strlen (token_kind_names[k]) == len && !strncmp (s, token_kind_names[k], len))
            return k;
    return -1;
}

const char *token_for (char *buf, size_t len, enum token_kind kind, struct job *job)
{
    snprintf (buf, len, "%s:%" JSON_INTEGER_FORMAT, token_kind_name (kind), job->id);
    return buf;
}

/* --- Kubernetes call results ------------------------------------------------ */
struct k8s_answer k8s_answer_of (json_t *event)
{
    struct k8s_answer a = {
        .ok = json_is_true (json_object_get (event, "ok")),
        .code = (int)json_integer_value (json_object_get (event, "code")),
        .obj = json_object_get (event, "object"),
    };
    a.gone = !a.ok && a.code == 404;
    return a;
}

const char *result_message (json_t *event)
{
    const char *m = json_string_value (json_object_get (event, "message"));
    return m && *m ? m : "no answer from Kubernetes";
}

/* --- hosts ----------------------------------------------------------- */
char *hostlist_of_R (json_t *R, dws_error_t *err)
{
    json_t *nodelist = json_object_get (json_object_get (R, "execution"), "nodelist");
    if (!json_is_array (nodelist) || json_array_size (nodelist) == 0) {
        dws_errorf (err, "R has no execution.nodelist");
        return NULL;
    }
    struct dws_hostlist *hl = dws_hostlist_create ();
    if (!hl) {
        dws_errorf (err, "out of memory");
        return NULL;
    }
    size_t i;
    json_t *v;
    json_array_foreach (nodelist, i, v) {
        if (!json_is_string (v)) {
            dws_errorf (err, "R execution.nodelist[%zu] is not a string", i);
            goto fail;
        }
        if (dws_hostlist_append (hl, json_string_value (v), err) < 0) {
            dws_error_prefix (err, "R execution.nodelist[%zu]: ", i);
            goto fail;
        }
    }
    struct dws_hostlist *u = dws_hostlist_uniq (hl, err);
    if (!u)
        goto fail;
    dws_hostlist_destroy (hl);
    char *s = dws_hostlist_encode (u);
    dws_hostlist_destroy (u);
    if (!s)
        dws_errorf (err, "out of memory");
    return s;
fail:
    dws_hostlist_destroy (hl);
    return NULL;
}

/* The names of `hosts` minus those of `minus` (NULL = none) as an array. */
json_t *hosts_minus (const char *hosts, const char *minus, dws_error_t *err)
{
    struct dws_hostlist *a = dws_hostlist_decode (hosts ? hosts : "", err);
    struct dws_hostlist *b = dws_hostlist_decode (minus ? minus : "", err);
    struct dws_hostlist *d = NULL;
    json_t *out = NULL;
    if (a && b && (d = dws_hostlist_difference (a, b, err))) {
        char *names = dws_hostlist_names_json (d, err);
        if (names) {
            out = json_loads (names, 0, NULL);
            free (names);
        }
    }
    dws_hostlist_destroy (a);
    dws_hostlist_destroy (b);
    dws_hostlist_destroy (d);
    return out;
}

bool job_id_from_name (const char *name, json_int_t *id)
{
    if (!name || strncmp (name, "fluxjob-", 8) != 0)
        return false;
    const char *p = name + 8;
    if (*p < '0' || *p > '9')
        return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull (p, &end, 10);
    if (errno || *end || v > (unsigned long long)INT64_MAX)
        return false;
    *id = (json_int_t)v;
    return true;
}

/* --- f58 ----------------------------------------------------------------- */
char *dws_f58_plain (unsigned long long id)
{
    static const char alphabet[] = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
    char tmp[32];
    int n = 0;
    do {
        tmp[n++] = alphabet[id % 58];
        id /= 58;
    } while (id > 0);
    char *out = malloc ((size_t)n + 2);
    if (!out)
        return NULL;
    out[0] = 'f';
    for (int i = 0; i < n; i++)
        out[i + 1] = tmp[n - 1 - i];
    out[n + 1] = '\0';
    return out;
}
