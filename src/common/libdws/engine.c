/* engine.c - the dws service engine: config, job table, dispatch, actions.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_int.h"
#include "hostlist.h"
#include "jsonio.h"
#include "rabbitmap.h"

static const char *str_or (json_t *v, const char *def)
{
    return json_is_string (v) ? json_string_value (v) : def;
}

/* --- configuration ---------------------------------------------------- */

static int get_seconds (json_t *cfg, const char *key, double def, double *out, dws_error_t *err)
{
    json_t *v = json_object_get (cfg, key);
    if (!v || json_is_null (v)) {
        *out = def;
        return 0;
    }
    if (!json_is_number (v) || !isfinite (json_number_value (v)) || json_number_value (v) < 0)
        return dws_errorf (err, "rabbit.%s: must be a number of seconds >= 0", key);
    *out = json_number_value (v);
    return 0;
}

static int get_bool (json_t *cfg, const char *key, bool def, bool *out, dws_error_t *err)
{
    json_t *v = json_object_get (cfg, key);
    if (!v || json_is_null (v)) {
        *out = def;
        return 0;
    }
    if (!json_is_boolean (v))
        return dws_errorf (err, "rabbit.%s: must be true or false", key);
    *out = json_is_true (v);
    return 0;
}

static int get_int (json_t *cfg, const char *key, int64_t def, int64_t min, int64_t *out,
                    dws_error_t *err)
{
    json_t *v = json_object_get (cfg, key);
    if (!v || json_is_null (v)) {
        *out = def;
        return 0;
    }
    if (!json_is_integer (v) || json_integer_value (v) < min)
        return dws_errorf (err, "rabbit.%s: must be an integer >= %" PRId64, key, min);
    *out = json_integer_value (v);
    return 0;
}

static void config_clear (struct config *c)
{
    json_decref (c->presets);
    json_decref (c->maximums);
    c->presets = c->maximums = NULL;
}

static int config_parse (json_t *cfg, struct config *c, dws_error_t *err)
{
    memset (c, 0, sizeof (*c));
    if (cfg && !json_is_object (cfg))
        return dws_errorf (err, "engine config must be an object");
    if (get_seconds (cfg, "tc_timeout", 10., &c->tc_timeout, err) < 0
        || get_seconds (cfg, "setup_timeout", 0., &c->setup_timeout, err) < 0
        || get_seconds (cfg, "prerun_timeout", 0., &c->prerun_timeout, err) < 0
        || get_seconds (cfg, "postrun_timeout", 0., &c->postrun_timeout, err) < 0
        || get_seconds (cfg, "teardown_after", 0., &c->teardown_after, err) < 0
        || get_bool (cfg, "drain_compute_nodes", true, &c->drain_compute_nodes, err) < 0
        || get_bool (cfg, "soft_drain", true, &c->soft_drain, err) < 0
        || get_bool (cfg, "fluxion", true, &c->fluxion, err) < 0
        || get_bool (cfg, "restrict_persistent_creation", true, &c->restrict_persistent, err) < 0
        || get_int (cfg, "save_datamovements", 0, 0, &c->save_datamovements, err) < 0
        || get_int (cfg, "min_allocation_size", 4, 1, &c->min_allocation_gib, err) < 0
        || get_int (cfg, "owner", 0, 0, &c->owner, err) < 0)
        return -1;
    json_t *queues = json_object_get (cfg, "drain_queues");
    if (queues && !json_is_null (queues) && !json_is_array (queues))
        return dws_errorf (err, "rabbit.drain_queues: must be a list of queue names");
    c->drain_queues = json_array_size (queues) > 0;
    json_t *presets = json_object_get (cfg, "presets");
    if (presets && !json_is_null (presets)) {
        if (!json_is_object (presets))
            return dws_errorf (err, "rabbit.presets: must be a table");
        c->presets = json_incref (presets);
    }
    if (dws_lustre_conf_parse (json_object_get (cfg, "lustre"), &c->lustre, err) < 0) {
        config_clear (c);
        return -1;
    }
    if (!c->fluxion)
        c->lustre.spread = false; /* only Fluxion's ssd vertices say where Lustre went */
    json_t *max = json_object_get (json_object_get (cfg, "policy"), "maximums");
    if (max && !json_is_null (max)) {
        if (!json_is_object (max)) {
            config_clear (c);
            return dws_errorf (err, "rabbit.policy.maximums: must be a table");
        }
        c->maximums = json_incref (max);
    }
    const char *ns = json_string_value (json_object_get (cfg, "namespace"));
    if (!ns)
        ns = "default";
    if (strlen (ns) == 0 || strlen (ns) >= sizeof (c->namespace)) {
        config_clear (c);
        return dws_errorf (err, "namespace: must be 1 to %zu characters",
                           sizeof (c->namespace) - 1);
    }
    strcpy (c->namespace, ns);
    return 0;
}

/* --- job table --------------------------------------------------------- */

static size_t bucket (struct dws_engine *e, json_int_t id)
{
    uint64_t h = (uint64_t)id * 0x9E3779B97F4A7C15ULL;
    return (size_t)(h >> 20) & (e->nbuckets - 1);
}

struct job *job_lookup (struct dws_engine *e, json_int_t id)
{
    for (struct job *j = e->table[bucket (e, id)]; j; j = j->next)
        if (j->id == id)
            return j;
    return NULL;
}

static void grow (struct dws_engine *e)
{
    size_t old = e->nbuckets;
    struct job **ot = e->table;
    struct job **nt = calloc (old * 2, sizeof (*nt));
    if (!nt)
        return; /* keep the longer chains */
    e->table = nt;
    e->nbuckets = old * 2;
    for (size_t i = 0; i < old; i++) {
        struct job *j = ot[i];
        while (j) {
            struct job *next = j->next;
            size_t b = bucket (e, j->id);
            j->next = nt[b];
            nt[b] = j;
            j = next;
        }
    }
    free (ot);
}

struct job *job_create (struct dws_engine *e, json_int_t id)
{
    struct job *j = calloc (1, sizeof (*j));
    if (!j)
        return NULL;
    j->id = id;
    snprintf (j->name, sizeof (j->name), "fluxjob-%" JSON_INTEGER_FORMAT, id);
    j->desired = WF_NONE;
    j->handled = WF_NONE;
    j->breakdowns = json_object ();
    j->create_msgids = json_array ();
    if (!j->breakdowns || !j->create_msgids) {
        json_decref (j->breakdowns);
        json_decref (j->create_msgids);
        free (j);
        return NULL;
    }
    if (e->njobs + 1 > e->nbuckets)
        grow (e);
    size_t b = bucket (e, id);
    j->next = e->table[b];
    e->table[b] = j;
    e->njobs++;
    return j;
}

static void job_free (struct job *j)
{
    json_decref (j->directives);
    json_decref (j->resources);
    json_decref (j->wf);
    json_decref (j->create_msgids);
    json_decref (j->breakdowns);
    free (j->hosts);
    json_decref (j->reserved);
    free (j->failed);
    free (j);
}

void job_forget (struct dws_engine *e, struct job *job)
{
    for (int k = 0; k < T_NKINDS; k++)
        act_timer_stop (e, job, (enum timer_kind)k);
    if (e->actions)
        health_job_gone (e, job);
    struct job **pp = &e->table[bucket (e, job->id)];
    while (*pp && *pp != job)
        pp = &(*pp)->next;
    if (*pp) {
        *pp = job->next;
        e->njobs--;
    }
    job_free (job);
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

/* --- actions --------------------------------------------------------- */

void act (struct dws_engine *e, json_t *action)
{
    if (action)
        json_array_append_new (e->actions, action);
}

void act_respond (struct dws_engine *e, json_t *msgid, json_t *payload)
{
    act (e, json_pack ("{s:s s:O s:o}", "action", "respond", "msgid", msgid, "payload",
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
    act (e, json_pack ("{s:s s:I s:s s:i s:s}", "action", "raise", "id", job->id, "type", type,
                       "severity", severity, "note", buf));
}

void act_k8s (struct dws_engine *e, const char *op, const char *kind, const char *ns,
              const char *name, json_t *body, const char *token)
{
    json_t *a = json_pack ("{s:s s:s s:s}", "action", "k8s", "op", op, "kind", kind);
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
    json_t *a = json_pack ("{s:s s:s s:s s:s s:s}", "action", "k8s", "op", "list", "kind", kind,
                           "label_selector", selector, "token", token);
    act (e, a);
}

void act_rpc (struct dws_engine *e, const char *topic, json_t *payload, const char *token)
{
    json_t *a = json_pack ("{s:s s:s s:o s:i}", "action", "rpc", "topic", topic, "payload",
                           payload ? payload : json_object (), "nodeid", 0);
    if (a && token)
        json_object_set_new (a, "token", json_string (token));
    act (e, a);
}

void act_memo (struct dws_engine *e, struct job *job, json_t *memo)
{
    act (e, json_pack ("{s:s s:I s:o}", "action", "memo", "id", job->id, "memo", memo));
}

void act_kvs (struct dws_engine *e, struct job *job, json_t *put, json_t *link)
{
    act (e, json_pack ("{s:s s:I s:o s:o}", "action", "kvs", "id", job->id, "put",
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
    act (e, json_pack ("{s:s s:s s:f}", "action", "timer-start", "key", key, "after", after));
}

void act_timer_stop (struct dws_engine *e, struct job *job, enum timer_kind kind)
{
    char key[96];
    if (!(job->timers & (1u << kind)))
        return;
    timer_key (key, sizeof (key), kind, job);
    job->timers &= ~(1u << kind);
    act (e, json_pack ("{s:s s:s}", "action", "timer-stop", "key", key));
}

void act_drain (struct dws_engine *e, const char *targets, const char *reason)
{
    act (e, json_pack ("{s:s s:s s:s}", "action", "drain", "targets", targets, "reason",
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

void job_set_reserved (struct job *job, json_t *R)
{
    json_t *r = dws_lustre_reserved_of_R (R, NULL);
    json_decref (job->reserved);
    job->reserved = r && json_object_size (r) ? r : NULL;
    if (!job->reserved)
        json_decref (r);
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

/* --- SystemConfiguration: which rabbit serves each compute ------------ */

static int sysconfig (struct dws_engine *e, json_t *obj, dws_error_t *err)
{
    json_t *nodes = json_object_get (json_object_get (obj, "spec"), "storageNodes");
    json_t *c2r = json_object ();
    json_t *rabbits = json_object ();
    size_t i, k;
    json_t *node, *c;
    if (!c2r || !rabbits)
        goto nomem;
    json_array_foreach (nodes, i, node) {
        const char *rabbit = json_string_value (json_object_get (node, "name"));
        if (!rabbit) {
            dws_errorf (err, "SystemConfiguration spec.storageNodes[%zu] has no name", i);
            goto fail;
        }
        json_object_set_new (rabbits, rabbit, json_true ());
        json_array_foreach (json_object_get (node, "computesAccess"), k, c) {
            const char *compute = json_string_value (json_object_get (c, "name"));
            if (!compute)
                continue;
            if (json_object_get (c2r, compute)) {
                dws_errorf (err, "SystemConfiguration: compute %s is listed under two rabbits",
                            compute);
                goto fail;
            }
            json_object_set_new (c2r, compute, json_string (rabbit));
        }
    }
    struct dws_rabbitmap *map = dws_rabbitmap_create (c2r, err);
    if (!map)
        goto fail;
    dws_rabbitmap_destroy (e->map);
    json_decref (e->compute2rabbit);
    json_decref (e->rabbits);
    e->map = map;
    e->compute2rabbit = c2r;
    e->rabbits = rabbits;
    return 0;
nomem:
    dws_errorf (err, "out of memory");
fail:
    json_decref (c2r);
    json_decref (rabbits);
    return -1;
}

static void sysconfig_event (struct dws_engine *e, json_t *obj)
{
    dws_error_t err;
    const char *name = json_string_value (json_object_get (json_object_get (obj, "metadata"),
                                                           "name"));
    if (!name || strcmp (name, "default") != 0)
        return;
    if (sysconfig (e, obj, &err) < 0) {
        act_log (e, "err", "%s", err.text);
        return;
    }
    health_topology (e);
    /* jobs that reached dws.setup before the map was known */
    for (size_t b = 0; b < e->nbuckets; b++)
        for (struct job *j = e->table[b]; j; j = j->next)
            if (j->setup_pending && j->servers_pending == 0)
                setup_start (e, j);
}

/* --- create / destroy -------------------------------------------------- */

struct dws_engine *dws_engine_create (json_t *config, dws_error_t *err)
{
    struct dws_engine *e = calloc (1, sizeof (*e));
    if (!e) {
        dws_errorf (err, "out of memory");
        return NULL;
    }
    e->nbuckets = 64;
    e->table = calloc (e->nbuckets, sizeof (*e->table));
    if (!e->table) {
        free (e);
        dws_errorf (err, "out of memory");
        return NULL;
    }
    if (config_parse (config, &e->cfg, err) < 0) {
        dws_engine_destroy (e);
        return NULL;
    }
    if (!(e->deferred = json_array ())) {
        dws_errorf (err, "out of memory");
        dws_engine_destroy (e);
        return NULL;
    }
    if (!(e->health = dws_health_create ())) {
        dws_errorf (err, "out of memory");
        dws_engine_destroy (e);
        return NULL;
    }
    health_configure (e);
    return e;
}

void dws_engine_destroy (struct dws_engine *e)
{
    if (!e)
        return;
    for (size_t i = 0; i < e->nbuckets; i++) {
        struct job *j = e->table[i];
        while (j) {
            struct job *next = j->next;
            job_free (j);
            j = next;
        }
    }
    free (e->table);
    config_clear (&e->cfg);
    json_decref (e->compute2rabbit);
    json_decref (e->rabbits);
    dws_rabbitmap_destroy (e->map);
    dws_health_destroy (e->health);
    json_decref (e->deferred);
    json_decref (e->actions);
    free (e);
}

int dws_engine_reconfig (struct dws_engine *e, json_t *config, dws_error_t *err)
{
    struct config c;
    if (config_parse (config, &c, err) < 0)
        return -1;
    config_clear (&e->cfg);
    e->cfg = c;
    health_configure (e);
    return 0;
}

/* --- dispatch ------------------------------------------------------------ */

static int result_job (struct dws_engine *e, json_t *event, char *what, size_t len,
                       struct job **jobp, dws_error_t *err)
{
    const char *token = json_string_value (json_object_get (event, "token"));
    if (!token)
        return dws_errorf (err, "event has no token");
    const char *colon = strrchr (token, ':');
    json_int_t id;
    char name[64];
    if (!colon || (size_t)(colon - token) >= len)
        return dws_errorf (err, "unknown token '%s'", token);
    memcpy (what, token, (size_t)(colon - token));
    what[colon - token] = '\0';
    /* a longer id would be cut to a different (valid) one */
    if (snprintf (name, sizeof (name), "fluxjob-%s", colon + 1) >= (int)sizeof (name)
        || !job_id_from_name (name, &id))
        return dws_errorf (err, "unknown token '%s'", token);
    *jobp = job_lookup (e, id);
    return 0;
}

/* A Kubernetes answer to the one handler of its token's kind. */
static void k8s_result (struct dws_engine *e, const char *what, struct job *job, json_t *event)
{
    int kind = token_kind_parse (what, strlen (what));
    switch (kind) {
        case TOK_SETUP_TIMEOUT:
        case TOK_PRERUN_TIMEOUT:
        case TOK_TC_PRERUN:
        case TOK_POSTRUN_TIMEOUT:
        case TOK_ABORT_MOUNTS:
        case TOK_ABORT_SERVERS:
            fault_k8s_result (e, (enum token_kind)kind, job, event);
            return;
        case -1:
        case TOK_JOB_INFO: /* a job-info event's, never a k8s-result's */
            act_log (e, "err", "%s: unexpected answer '%s'", job->name, what);
            return;
        default:
            workflow_k8s_result (e, (enum token_kind)kind, job, event);
            return;
    }
}

/* The requests that waited for the first Workflow list, in the order
 * they came (their answers go out with the list's actions).
 */
static void answer_deferred (struct dws_engine *e)
{
    json_t *deferred = e->deferred;
    size_t i;
    json_t *ev;
    if (!e->synced || json_array_size (deferred) == 0)
        return;
    if (!(e->deferred = json_array ())) {
        e->deferred = deferred;
        return;
    }
    json_array_foreach (deferred, i, ev)
        request_event (e, ev);
    json_decref (deferred);
}

static int dispatch (struct dws_engine *e, json_t *event, dws_error_t *err)
{
    const char *type = json_string_value (json_object_get (event, "type"));
    json_t *now = json_object_get (event, "now");
    if (!type)
        return dws_errorf (err, "event has no type");
    if (now) {
        if (!json_is_number (now))
            return dws_errorf (err, "event 'now' must be a number");
        e->now = json_number_value (now);
    }
    if (!strcmp (type, "request")) {
        if (!json_is_string (json_object_get (event, "topic")) || !json_object_get (event, "msgid"))
            return dws_errorf (err, "request event needs topic and msgid");
        request_event (e, event);
        return 0;
    }
    if (!strcmp (type, "sync") || !strcmp (type, "watch")) {
        const char *kind = json_string_value (json_object_get (event, "kind"));
        if (!kind)
            return dws_errorf (err, "%s event has no kind", type);
        if (!strcmp (type, "sync")) {
            json_t *objects = json_object_get (event, "objects");
            if (!json_is_array (objects))
                return dws_errorf (err, "sync event needs an objects array");
            if (!strcmp (kind, "Workflow")) {
                workflow_sync (e, objects);
                answer_deferred (e);
            }
            else if (!strcmp (kind, "Storage"))
                return health_event (e, type, event, err);
            else if (!strcmp (kind, "SystemConfiguration")) {
                size_t i;
                json_t *o;
                json_array_foreach (objects, i, o)
                    sysconfig_event (e, o);
            }
            return 0;
        }
        const char *what = json_string_value (json_object_get (event, "event"));
        json_t *obj = json_object_get (event, "object");
        if (!what || !json_is_object (obj))
            return dws_errorf (err, "watch event needs event and object");
        if (!strcmp (kind, "Workflow"))
            workflow_event (e, what, obj);
        else if (!strcmp (kind, "Storage"))
            return health_event (e, type, event, err);
        else if (!strcmp (kind, "SystemConfiguration") && strcmp (what, "DELETED") != 0)
            sysconfig_event (e, obj);
        return 0;
    }
    if (!strcmp (type, "k8s-result") || !strcmp (type, "rpc-result")
        || !strcmp (type, "job-info")) {
        char what[64];
        struct job *job = NULL;
        if (strcmp (type, "job-info") != 0 && health_token (event))
            return health_event (e, "result", event, err);
        if (result_job (e, event, what, sizeof (what), &job, err) < 0)
            return -1;
        if (!job)
            return 0; /* the job is gone: a late answer */
        if (!strcmp (type, "job-info"))
            job_info_result (e, job, event);
        else if (!strcmp (type, "rpc-result")) {
            if (!json_is_true (json_object_get (event, "ok")))
                act_log (e, "err", "%s: %s RPC failed: %s", job->name, what,
                         str_or (json_object_get (event, "errstr"), "unknown"));
        }
        else
            k8s_result (e, what, job, event);
        return 0;
    }
    if (!strcmp (type, "orphans")) {
        json_t *jobs = json_object_get (event, "jobs");
        if (!json_is_array (jobs))
            return dws_errorf (err, "orphans event needs a jobs array");
        orphans_event (e, jobs, json_is_true (json_object_get (event, "complete")));
        return 0;
    }
    if (!strcmp (type, "journal") || !strcmp (type, "flux-config") || !strcmp (type, "graph")
        || !strcmp (type, "fluxion-restart"))
        return health_event (e, type, event, err);
    if (!strcmp (type, "timer")) {
        const char *key = json_string_value (json_object_get (event, "key"));
        if (!key)
            return dws_errorf (err, "timer event has no key");
        if (!strcmp (key, DWS_HEALTH_FLUSH_TIMER))
            return health_event (e, "health-flush", event, err);
        timer_event (e, key);
        return 0;
    }
    return dws_errorf (err, "unknown event type '%s'", type);
}

json_t *dws_engine_event (struct dws_engine *e, json_t *event, dws_error_t *err)
{
    if (!json_is_object (event)) {
        dws_errorf (err, "event must be a JSON object");
        return NULL;
    }
    e->actions = json_array ();
    if (!e->actions) {
        dws_errorf (err, "out of memory");
        return NULL;
    }
    /* a bad event changes nothing: dispatch() takes 'now' before it has
     * checked the rest of the event, so put the clock back on refusal
     */
    double now = e->now;
    if (dispatch (e, event, err) < 0) {
        e->now = now;
        json_decref (e->actions);
        e->actions = NULL;
        return NULL;
    }
    e->events++;
    json_t *out = e->actions;
    e->actions = NULL;
    return out;
}

/* --- status ---------------------------------------------------------------- */

json_t *dws_engine_status (struct dws_engine *e)
{
    json_t *jobs = json_array ();
    for (size_t i = 0; i < e->nbuckets; i++) {
        for (struct job *j = e->table[i]; j; j = j->next) {
            json_t *st = json_object_get (j->wf, "status");
            json_t *o = json_pack ("{s:I s:s s:s s:s s:b s:s s:s s:b s:b}",
                                   "id", j->id, "workflow", j->name,
                                   "desired", wf_state_name (j->desired),
                                   "state", str_or (json_object_get (st, "state"), ""),
                                   "ready", json_is_true (json_object_get (st, "ready")),
                                   "status", str_or (json_object_get (st, "status"), ""),
                                   "message", str_or (json_object_get (st, "message"), ""),
                                   "epilog", j->epilog, "failed_job", j->excepted);
            if (o && j->hosts)
                json_object_set_new (o, "hosts", json_string (j->hosts));
            if (o && j->failed)
                json_object_set_new (o, "failed", json_string (j->failed));
            if (o) {
                json_t *timers = json_array ();
                for (int k = 0; k < T_NKINDS; k++)
                    if (j->timers & (1u << k))
                        json_array_append_new (timers, json_string (timer_names[k]));
                json_object_set_new (o, "timers", timers);
            }
            json_array_append_new (jobs, o);
        }
    }
    return json_pack ("{s:b s:o s:I s:I s:I}", "synced", e->synced, "jobs", jobs, "rabbits",
                      (json_int_t)json_object_size (e->rabbits), "computes",
                      (json_int_t)json_object_size (e->compute2rabbit), "events",
                      (json_int_t)e->events);
}

/* --- cffi entry points ------------------------------------------------- */

struct dws_engine *dws_engine_create_json (const char *config_json, dws_error_t *err)
{
    json_t *cfg = NULL;
    if (config_json && !(cfg = dws_json_load ("engine config", config_json, 0, err)))
        return NULL;
    struct dws_engine *e = dws_engine_create (cfg, err);
    json_decref (cfg);
    return e;
}

int dws_engine_reconfig_json (struct dws_engine *e, const char *config_json, dws_error_t *err)
{
    json_t *cfg = dws_json_load ("engine config", config_json, 0, err);
    if (!cfg)
        return -1;
    int rc = dws_engine_reconfig (e, cfg, err);
    json_decref (cfg);
    return rc;
}

char *dws_engine_event_json (struct dws_engine *e, const char *event_json, dws_error_t *err)
{
    json_t *ev = dws_json_load ("event", event_json, 0, err);
    if (!ev)
        return NULL;
    json_t *out = dws_engine_event (e, ev, err);
    json_decref (ev);
    return out ? dws_json_dump_take (out, err) : NULL;
}

char *dws_engine_status_json (struct dws_engine *e, dws_error_t *err)
{
    return dws_json_dump_take (dws_engine_status (e), err);
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
