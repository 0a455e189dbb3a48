/* engine.c - the dws service engine: configuration, create/destroy, and
 * the dispatch of each event to the layer that handles it (the top layer:
 * state.h has the picture).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "act.h"
#include "admit.h"
#include "config/rabbitconf.h"
#include "decide.h"
#include "fault.h"
#include "job.h"
#include "jobview.h"
#include "persistent.h"
#include "util/jsonio.h"
#include "prestage.h"
#include "progress.h"
#include "psi.h"
#include "placement/rabbitmap.h"
#include "rabbitdf.h"
#include "rabbitdrain.h"
#include "rabbits.h"
#include "release.h"
#include "request.h"
#include "status.h"
#include "token.h"
#include "wire/wire.h"
#include "workflow.h"

/* --- configuration: each key read through rabbitconf.h's table ------- */
#define KEY(id) dws_rabbitconf_key (DWS_RABBIT_##id)

static int get_release (json_t *cfg, bool *early, dws_error_t *err)
{
    enum release_mode mode;
    json_t *v = dws_rabbitconf_value (cfg, DWS_RABBIT_RELEASE_COMPUTES);
    int rc = release_mode_parse (v, &mode, err);
    json_decref (v);
    if (rc < 0)
        return dws_error_prefix (err, "rabbit.%s: ", KEY (RELEASE_COMPUTES));
    *early = mode == RELEASE_EARLY;
    return 0;
}

static int get_prestage (json_t *cfg, int *mode, dws_error_t *err)
{
    json_t *v = dws_rabbitconf_value (cfg, DWS_RABBIT_PRESTAGE);
    *mode = dws_rabbitconf_prestage_mode (v);
    json_decref (v);
    if (*mode < 0)
        return dws_errorf (err, "rabbit.%s: must be " DWS_PRESTAGE_VALUES, KEY (PRESTAGE));
    return 0;
}

static void config_clear (struct config *c)
{
    json_decref (c->presets);
    json_decref (c->maximums);
    json_decref (c->limits);
    c->presets = c->maximums = c->limits = NULL;
}

static int config_parse (json_t *cfg, struct config *c, dws_error_t *err)
{
    memset (c, 0, sizeof (*c));
    if (cfg && !json_is_object (cfg))
        return dws_errorf (err, "engine config must be an object");
    if (dws_rabbitconf_seconds (cfg, DWS_RABBIT_TC_TIMEOUT, &c->tc_timeout, err) < 0
        || dws_rabbitconf_seconds (cfg, DWS_RABBIT_SETUP_TIMEOUT, &c->setup_timeout, err) < 0
        || dws_rabbitconf_seconds (cfg, DWS_RABBIT_PRERUN_TIMEOUT, &c->prerun_timeout, err) < 0
        || dws_rabbitconf_seconds (cfg, DWS_RABBIT_POSTRUN_TIMEOUT, &c->postrun_timeout, err) < 0
        || dws_rabbitconf_seconds (cfg, DWS_RABBIT_TEARDOWN_AFTER, &c->teardown_after, err) < 0
        || dws_rabbitconf_bool (cfg, DWS_RABBIT_DRAIN_COMPUTE_NODES, &c->drain_compute_nodes,
                                err) < 0
        || dws_rabbitconf_bool (cfg, DWS_RABBIT_SOFT_DRAIN, &c->soft_drain, err) < 0
        || dws_rabbitconf_bool (cfg, DWS_RABBIT_FLUXION, &c->fluxion, err) < 0
        || dws_rabbitconf_bool (cfg, DWS_RABBIT_RESTRICT_PERSISTENT_CREATION,
                                &c->restrict_persistent_creation, err) < 0
        || get_release (cfg, &c->release_early, err) < 0
        || dws_rabbitconf_int (cfg, DWS_RABBIT_SAVE_DATAMOVEMENTS, &c->save_datamovements, err) < 0
        || dws_rabbitconf_int (cfg, DWS_RABBIT_MIN_ALLOCATION_SIZE, &c->min_allocation_size,
                               err) < 0
        || get_prestage (cfg, &c->prestage, err) < 0
        || dws_rabbitconf_int (cfg, DWS_RABBIT_PRESTAGE_MAX_JOBS, &c->prestage_max_jobs, err) < 0
        || dws_rabbitconf_int (cfg, DWS_RABBIT_PRESTAGE_MAX_GIB, &c->prestage_max_gib, err) < 0
        || dws_rabbitconf_int (cfg, DWS_RABBIT_OWNER, &c->owner, err) < 0)
        return -1;
    json_t *queues = json_object_get (cfg, KEY (DRAIN_QUEUES));
    if (queues && !json_is_null (queues) && !json_is_array (queues))
        return dws_errorf (err, "rabbit.%s: must be a list of queue names", KEY (DRAIN_QUEUES));
    c->drain_queues = json_array_size (queues) > 0;
    json_t *presets = json_object_get (cfg, KEY (PRESETS));
    if (presets && !json_is_null (presets)) {
        if (!json_is_object (presets))
            return dws_errorf (err, "rabbit.%s: must be a table", KEY (PRESETS));
        c->presets = json_incref (presets);
    }
    if (dws_lustre_conf_parse (json_object_get (cfg, KEY (LUSTRE)), &c->lustre, err) < 0) {
        config_clear (c);
        return -1;
    }
    if (!c->fluxion)
        c->lustre.spread = false; /* only Fluxion's ssd vertices say where Lustre went */
    json_t *max = json_object_get (json_object_get (cfg, KEY (POLICY)), "maximums");
    if (max && !json_is_null (max)) {
        if (!json_is_object (max)) {
            config_clear (c);
            return dws_errorf (err, "rabbit.%s.maximums: must be a table", KEY (POLICY));
        }
        c->maximums = json_incref (max);
    }
    json_t *limits = json_object_get (cfg, DWS_RABBITCONF_LIMITS);
    if (limits && !json_is_null (limits)) {
        if (!json_is_object (limits)) {
            config_clear (c);
            return dws_errorf (err, "rabbit." DWS_RABBITCONF_LIMITS ": must be a table");
        }
        c->limits = json_incref (limits);
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
    rabbits_topology (e);
    /* jobs that reached dws.setup before the map was known */
    for (size_t b = 0; b < e->nbuckets; b++)
        for (struct job *j = e->table[b]; j; j = j->next)
            if (decide_next (e, j, DECIDE_ON_MAP, 0).kind == STEP_SETUP_START)
                progress_setup_start (e, j);
}

/* --- create / destroy -------------------------------------------------- */
struct dws_engine *dws_engine_create (json_t *config, dws_error_t *err)
{
    struct dws_engine *e = calloc (1, sizeof (*e));
    if (!e) {
        dws_errorf (err, "out of memory");
        return NULL;
    }
    if (job_table_init (e) < 0) {
        free (e);
        dws_errorf (err, "out of memory");
        return NULL;
    }
    if (config_parse (config, &e->cfg, err) < 0) {
        dws_engine_destroy (e);
        return NULL;
    }
    if (!(e->deferred = json_array ()) || !(e->refused = json_object ())
        || !(e->record_due = json_object ()) || !(e->records = json_object ())
        || !(e->psi_pending = json_object ()) || !(e->psi_deferred = json_array ())
        || !(e->drains = json_object ()) || !(e->dfs = json_object ())) {
        dws_errorf (err, "out of memory");
        dws_engine_destroy (e);
        return NULL;
    }
    if (!(e->health = dws_health_create ())) {
        dws_errorf (err, "out of memory");
        dws_engine_destroy (e);
        return NULL;
    }
    rabbits_configure (e);
    return e;
}

void dws_engine_destroy (struct dws_engine *e)
{
    if (!e)
        return;
    job_table_destroy (e);
    config_clear (&e->cfg);
    json_decref (e->compute2rabbit);
    json_decref (e->rabbits);
    dws_rabbitmap_destroy (e->map);
    dws_health_destroy (e->health);
    json_decref (e->deferred);
    json_decref (e->drains);
    json_decref (e->dfs);
    json_decref (e->refused);
    json_decref (e->record_due);
    json_decref (e->records);
    json_decref (e->psis);
    json_decref (e->psi_pending);
    json_decref (e->psi_deferred);
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
    rabbits_configure (e);
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

/* The one handler of each token kind's Kubernetes answer (job-info is the
 * token of a job-info event, never of a Kubernetes answer).
 */
typedef void (*result_handler_f) (struct dws_engine *e, enum token_kind kind, struct job *job,
                                  json_t *event);
static const result_handler_f result_handlers[TOK_COUNT] = {
    [TOK_CREATE] = progress_on_create,
    [TOK_STATE] = workflow_on_state,
    [TOK_ANNOTATE] = workflow_on_write,
    [TOK_FINALIZER] = workflow_on_write,
    [TOK_DELETE] = workflow_on_write,
    [TOK_BREAKDOWN] = progress_on_breakdown,
    [TOK_HOSTS] = progress_on_hosts,
    [TOK_SERVERS] = progress_on_servers,
    [TOK_COMPUTES] = progress_on_computes,
    [TOK_SECRET] = progress_on_secret,
    [TOK_DM] = workflow_on_datamovements,
    [TOK_PODS] = workflow_on_pods,
    [TOK_PODLOG] = workflow_on_podlog,
    [TOK_JOB_INFO] = NULL,
    [TOK_SETUP_TIMEOUT] = fault_on_setup_reads,
    [TOK_PRERUN_TIMEOUT] = fault_on_prerun_reads,
    [TOK_TC_PRERUN] = fault_on_prerun_reads,
    [TOK_POSTRUN_TIMEOUT] = fault_on_postrun_reads,
    [TOK_POSTRUN_FAILED] = fault_on_postrun_failed_reads,
    [TOK_ABORT_MOUNTS] = fault_on_abort_mounts,
    [TOK_ABORT_SERVERS] = fault_on_abort_servers,
    [TOK_FORCE_READY] = fault_on_force_ready,
    [TOK_JOBVIEW] = jobview_on_datamovements,
    [TOK_PRESTAGE] = progress_on_prestage,
};

static void k8s_result (struct dws_engine *e, const char *what, struct job *job, json_t *event)
{
    int kind = token_kind_parse (what, strlen (what));
    if (kind < 0 || !result_handlers[kind]) {
        act_log (e, "err", "%s: unexpected answer '%s'", job->name, what);
        return;
    }
    result_handlers[kind](e, (enum token_kind)kind, job, event);
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

/* The dws.persistent-* requests that waited for the PSIs' first list. */
static void answer_psi_deferred (struct dws_engine *e)
{
    json_t *deferred = e->psi_deferred;
    size_t i;
    json_t *ev;
    if (json_array_size (deferred) == 0 || !(e->psi_deferred = json_array ())) {
        if (!e->psi_deferred)
            e->psi_deferred = deferred;
        return;
    }
    json_array_foreach (deferred, i, ev)
        request_event (e, ev);
    json_decref (deferred);
}

/* A sync or watch event: the Workflow list and watch drive the jobs,
 * Storage goes to rabbit health, SystemConfiguration gives the rabbits,
 * PersistentStorageInstances are kept for dws.persistent-* (psi.c). */
static int kind_event (struct dws_engine *e, enum dws_wire_event type, json_t *event,
                       dws_error_t *err)
{
    const char *kind = json_string_value (json_object_get (event, "kind"));
    if (!kind)
        return dws_errorf (err, "%s event has no kind", dws_wire_event_name (type));
    if (type == DWS_WIRE_EV_SYNC) {
        json_t *objects = json_object_get (event, "objects");
        if (!json_is_array (objects))
            return dws_errorf (err, "sync event needs an objects array");
        if (!strcmp (kind, "Workflow")) {
            progress_sync (e, objects);
            answer_deferred (e);
        }
        else if (!strcmp (kind, "Storage"))
            return rabbits_event (e, HEALTH_STORAGE_SYNC, event, err);
        else if (!strcmp (kind, "PersistentStorageInstance")) {
            psi_sync (e, objects, json_object_get (event, "owners"));
            answer_deferred (e); /* the creates that waited for it */
            answer_psi_deferred (e);
        }
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
        progress_event (e, what, obj);
    else if (!strcmp (kind, "Storage"))
        return rabbits_event (e, HEALTH_STORAGE_WATCH, event, err);
    else if (!strcmp (kind, "PersistentStorageInstance"))
        psi_watch (e, what, obj, json_object_get (event, "owners"));
    else if (!strcmp (kind, "SystemConfiguration") && strcmp (what, "DELETED") != 0)
        sysconfig_event (e, obj);
    return 0;
}

/* The answer to a k8s, rpc or job-info action, by its token. */
static int result_event (struct dws_engine *e, enum dws_wire_event type, json_t *event,
                         dws_error_t *err)
{
    char what[64];
    struct job *job = NULL;
    if (type != DWS_WIRE_EV_JOB_INFO && rabbits_token (event))
        return rabbits_event (e, HEALTH_RESULT, event, err);
    if (type == DWS_WIRE_EV_K8S_RESULT && persistent_token (event)) {
        persistent_result (e, event);
        return 0;
    }
    if (type == DWS_WIRE_EV_K8S_RESULT && rabbitdrain_token (event)) {
        rabbitdrain_result (e, event);
        return 0;
    }
    if (type == DWS_WIRE_EV_K8S_RESULT && rabbitdf_token (event)) {
        rabbitdf_result (e, event);
        return 0;
    }
    if (result_job (e, event, what, sizeof (what), &job, err) < 0)
        return -1;
    if (!job)
        return 0; /* the job is gone: a late answer */
    if (type == DWS_WIRE_EV_JOB_INFO)
        request_job_info_result (e, job, event);
    else if (type == DWS_WIRE_EV_RPC_RESULT
             && token_kind_parse (what, strlen (what)) == TOK_PRESTAGE_FIND)
        progress_on_prestage_find (e, job, event);
    else if (type == DWS_WIRE_EV_RPC_RESULT) {
        if (!json_is_true (json_object_get (event, "ok")))
            act_log (e, "err", "%s: %s RPC failed: %s", job->name, what,
                     dws_json_str_or (json_object_get (event, "errstr"), "unknown"));
    }
    else
        k8s_result (e, what, job, event);
    return 0;
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
    enum dws_wire_event ev = dws_wire_event_parse (type);
    switch (ev) {
    case DWS_WIRE_EV_REQUEST:
        if (!json_is_string (json_object_get (event, "topic")) || !json_object_get (event, "msgid")
            || !json_is_integer (json_object_get (event, "userid")))
            return dws_errorf (err, "request event needs topic, msgid and userid (the sender's)");
        request_event (e, event);
        return 0;
    case DWS_WIRE_EV_SYNC:
    case DWS_WIRE_EV_WATCH:
        return kind_event (e, ev, event, err);
    case DWS_WIRE_EV_K8S_RESULT:
    case DWS_WIRE_EV_RPC_RESULT:
    case DWS_WIRE_EV_JOB_INFO:
        return result_event (e, ev, event, err);
    case DWS_WIRE_EV_ORPHANS: {
        json_t *jobs = json_object_get (event, "jobs");
        if (!json_is_array (jobs))
            return dws_errorf (err, "orphans event needs a jobs array");
        request_orphans_event (e, jobs, json_is_true (json_object_get (event, "complete")));
        return 0;
    }
    case DWS_WIRE_EV_JOURNAL:
        return rabbits_event (e, HEALTH_JOURNAL, event, err);
    case DWS_WIRE_EV_FLUX_CONFIG:
        return rabbits_event (e, HEALTH_FLUX_CONFIG, event, err);
    case DWS_WIRE_EV_GRAPH:
        return rabbits_event (e, HEALTH_GRAPH, event, err);
    case DWS_WIRE_EV_FLUXION_RESTART:
        return rabbits_event (e, HEALTH_FLUXION_RESTART, event, err);
    case DWS_WIRE_EV_TIMER: {
        const char *key = json_string_value (json_object_get (event, "key"));
        if (!key)
            return dws_errorf (err, "timer event has no key");
        if (!strcmp (key, DWS_WIRE_HEALTH_FLUSH_TIMER))
            return rabbits_event (e, HEALTH_FLUSH, event, err);
        fault_timer_event (e, key);
        return 0;
    }
    case DWS_WIRE_EV_COUNT:
        break;
    }
    return dws_errorf (err, "unknown event type '%s'", type);
}

/* The job whose Workflow is obj, or of a token or timer key "<kind>:<id>",
 * is due for its record (act_record): its view may have changed.
 */
static void record_due_workflow (struct dws_engine *e, json_t *obj)
{
    json_int_t id;
    const char *name = json_string_value (json_object_get (json_object_get (obj, "metadata"),
                                                           "name"));
    if (name && job_id_from_name (name, &id))
        act_record_id (e, id);
}

static void record_due_key (struct dws_engine *e, json_t *key)
{
    char name[64];
    json_int_t id;
    const char *s = json_string_value (key);
    const char *colon = s ? strrchr (s, ':') : NULL;
    if (colon && snprintf (name, sizeof (name), "fluxjob-%s", colon + 1) < (int)sizeof (name)
        && job_id_from_name (name, &id))
        act_record_id (e, id);
}

/* Every job the event is about is due for its record: the Workflows of a
 * watch or sync event, a request's jobid, the job of an answer's token or
 * of a timer.  (Phase changes, notes and the job's end mark theirs where
 * they happen.)
 */
static void record_due_event (struct dws_engine *e, json_t *event)
{
    const char *type = json_string_value (json_object_get (event, "type"));
    json_t *v = json_object_get (json_object_get (event, "payload"), "jobid");
    size_t i;
    json_t *o;
    switch (dws_wire_event_parse (type ? type : "")) {
    case DWS_WIRE_EV_REQUEST:
        if (json_is_integer (v))
            act_record_id (e, json_integer_value (v));
        break;
    case DWS_WIRE_EV_WATCH:
        if (json_is_string (json_object_get (event, "kind"))
            && !strcmp (json_string_value (json_object_get (event, "kind")), "Workflow"))
            record_due_workflow (e, json_object_get (event, "object"));
        break;
    case DWS_WIRE_EV_SYNC:
        if (json_is_string (json_object_get (event, "kind"))
            && !strcmp (json_string_value (json_object_get (event, "kind")), "Workflow"))
            json_array_foreach (json_object_get (event, "objects"), i, o)
                record_due_workflow (e, o);
        break;
    case DWS_WIRE_EV_K8S_RESULT:
    case DWS_WIRE_EV_RPC_RESULT:
    case DWS_WIRE_EV_JOB_INFO:
        record_due_key (e, json_object_get (event, "token"));
        break;
    case DWS_WIRE_EV_TIMER:
        record_due_key (e, json_object_get (event, "key"));
        break;
    default:
        break;
    }
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
        json_object_clear (e->record_due);
        return NULL;
    }
    /* rabbit health may have confirmed the ssd holds of a job whose
     * computes are to be released (release.c) */
    release_check (e);
    if (e->room_changed) {
        e->room_changed = false;
        prestage_room (e);
    }
    /* a job of a user whose use fell (or whose limits rose) may go */
    admit_pass (e);
    /* the records of the jobs whose view may have changed (act_record) */
    record_due_event (e, event);
    jobview_records (e);
    e->events++;
    json_t *out = e->actions;
    e->actions = NULL;
    return out;
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

json_t *dws_engine_take_records (struct dws_engine *e)
{
    json_t *out = e->records;
    if (!(e->records = json_object ())) {
        e->records = out;
        return json_object ();
    }
    return out;
}

char *dws_engine_take_records_json (struct dws_engine *e, dws_error_t *err)
{
    return dws_json_dump_take (dws_engine_take_records (e), err);
}

char *dws_engine_status_json (struct dws_engine *e, dws_error_t *err)
{
    return dws_json_dump_take (dws_engine_status (e), err);
}
