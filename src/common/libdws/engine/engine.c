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

#include "config/rabbitconf.h"
#include "engine/shapes/act.h"
#include "engine/shapes/pending.h"
#include "engine/shapes/psi.h"
#include "engine/shapes/token.h"
#include "engine/verbs/admit.h"
#include "engine/verbs/datain.h"
#include "engine/verbs/fault.h"
#include "engine/verbs/prestage.h"
#include "engine/verbs/progress.h"
#include "engine/verbs/release.h"
#include "engine/verbs/workflow.h"
#include "engine/views/jobview.h"
#include "engine/views/persistent.h"
#include "engine/views/rabbitdf.h"
#include "engine/views/rabbitdrain.h"
#include "engine/views/status.h"
#include "job.h"
#include "placement/rabbitmap.h"
#include "rabbits.h"
#include "request.h"
#include "util/jsonio.h"
#include "verbtable.h"
#include "wire/wire.h"

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
        || dws_rabbitconf_seconds (cfg, DWS_RABBIT_DATAIN_STALL_TIMEOUT,
                                   &c->datain_stall_timeout, err) < 0
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
        || dws_rabbitconf_seconds (cfg, DWS_RABBIT_PRESTAGE_NODE_WAIT, &c->prestage_node_wait,
                                   err) < 0
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
    e->map_changed = true; /* map_pass, after the event's input */
}

/* The jobs that reached dws.setup before the map was known may place
 * their storage now: every job is looked at, the decider says which. */
static void map_pass (struct dws_engine *e)
{
    if (!e->map_changed)
        return;
    e->map_changed = false;
    for (size_t b = 0; b < e->nbuckets; b++)
        for (struct job *j = e->table[b]; j; j = j->next)
            advance_mark (e, j, NEWS_LOOK);
}

/* --- create / destroy -------------------------------------------------- */
struct dws_engine *dws_engine_create (json_t *config, dws_error_t *err)
{
    struct dws_engine *e = calloc (1, sizeof (*e));
    if (!e) {
        dws_errorf (err, "out of memory");
        return NULL;
    }
    e->verbs = verbtable_get ();
    e->running = -1;
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
        || !(e->pending = json_object ())) {
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
    json_decref (e->pending);
    json_decref (e->refused);
    json_decref (e->record_due);
    json_decref (e->trace);
    free (e->due);
    json_decref (e->records);
    json_decref (e->psis);
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
    e->limits_changed = true;
    rabbits_configure (e);
    return 0;
}

/* --- dispatch ------------------------------------------------------------ */
/* The requests that waited for a list (the first Workflow list, the
 * PSIs') and have all they need now, in the order they came (their
 * answers go out with the list's actions).
 */
static void answer_deferred (struct dws_engine *e)
{
    json_t *ready = pending_ready (e);
    size_t i;
    json_t *ev;
    json_array_foreach (ready, i, ev) {
        request_event (e, ev);
        advance_due (e, ADVANCE_AS_MARKED); /* each request an input of its own */
    }
    json_decref (ready);
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
            /* the listed Workflows' jobs first, then those the list
             * lacks, then the requests that waited for it */
            progress_sync (e, objects);
            advance_due (e, ADVANCE_AS_MARKED);
            progress_sync_missing (e, objects);
            advance_due (e, ADVANCE_AS_MARKED);
            answer_deferred (e);
        }
        else if (!strcmp (kind, "Storage"))
            return rabbits_event (e, HEALTH_STORAGE_SYNC, event, err);
        else if (!strcmp (kind, "PersistentStorageInstance")) {
            psi_sync (e, objects, json_object_get (event, "owners"));
            advance_due (e, ADVANCE_AS_MARKED);
            answer_deferred (e);
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

/* --- answers: one token namespace, one table of handlers --------------- */
/* A job's answer (TOKEN_JOB): its job found in the job table. */
typedef void (*job_answer_f) (struct dws_engine *e, enum token_kind kind, struct job *job,
                              json_t *event);
/* A request's answer (TOKEN_REQUEST, TOKEN_STEP): its entry found in the
 * pending table; true when the request is answered (it leaves the table). */
typedef bool (*request_answer_f) (struct dws_engine *e, json_t *req, const struct token *t,
                                  json_t *event);

static void on_job_info (struct dws_engine *e, enum token_kind kind, struct job *job,
                         json_t *event)
{
    (void)kind;
    request_job_info_result (e, job, event);
}

static void on_prestage_find (struct dws_engine *e, enum token_kind kind, struct job *job,
                              json_t *event)
{
    (void)kind;
    progress_on_prestage_find (e, job, event);
}

#define K8S (1u << DWS_WIRE_EV_K8S_RESULT)
#define RPC (1u << DWS_WIRE_EV_RPC_RESULT)
#define INFO (1u << DWS_WIRE_EV_JOB_INFO)

/* Each token kind's answer: the result events it comes as, and its one
 * handler (of the kind's shape; TOKEN_HEALTH's is rabbit health's,
 * rabbits_event).
 */
static const struct {
    unsigned comes_as;
    job_answer_f job;
    request_answer_f request;
} answers[TOK_COUNT] = {
    [TOK_CREATE] = {K8S, progress_on_create, NULL},
    [TOK_STATE] = {K8S, workflow_on_state, NULL},
    [TOK_DATAOUT_HELD] = {K8S, release_on_held_written, NULL},
    [TOK_ANNOTATE] = {K8S, workflow_on_write, NULL},
    [TOK_FINALIZER] = {K8S, workflow_on_write, NULL},
    [TOK_DELETE] = {K8S, workflow_on_write, NULL},
    [TOK_BREAKDOWN] = {K8S, progress_on_breakdown, NULL},
    [TOK_HOSTS] = {K8S, progress_on_hosts, NULL},
    [TOK_SERVERS] = {K8S, progress_on_servers, NULL},
    [TOK_COMPUTES] = {K8S, progress_on_computes, NULL},
    [TOK_COMPUTES_DROP] = {K8S, workflow_on_write, NULL},
    [TOK_SECRET] = {K8S, progress_on_secret, NULL},
    [TOK_DM] = {K8S, workflow_on_datamovements, NULL},
    [TOK_PODS] = {K8S, workflow_on_pods, NULL},
    [TOK_PODLOG] = {K8S, workflow_on_podlog, NULL},
    [TOK_JOB_INFO] = {INFO, on_job_info, NULL},
    [TOK_SETUP_TIMEOUT] = {K8S, fault_on_setup_reads, NULL},
    [TOK_PRERUN_TIMEOUT] = {K8S, fault_on_prerun_reads, NULL},
    [TOK_TC_PRERUN] = {K8S, fault_on_prerun_reads, NULL},
    [TOK_POSTRUN_TIMEOUT] = {K8S, fault_on_postrun_reads, NULL},
    [TOK_POSTRUN_FAILED] = {K8S, fault_on_postrun_failed_reads, NULL},
    [TOK_ABORT_MOUNTS] = {K8S, fault_on_abort_mounts, NULL},
    [TOK_ABORT_SERVERS] = {K8S, fault_on_abort_servers, NULL},
    [TOK_FORCE_READY] = {K8S, fault_on_force_ready, NULL},
    [TOK_JOBVIEW] = {K8S, jobview_on_datamovements, NULL},
    [TOK_PRESTAGE] = {K8S, progress_on_prestage, NULL},
    [TOK_PRESTAGE_FIND] = {RPC, on_prestage_find, NULL},
    [TOK_DATAIN] = {K8S, datain_on_list, NULL},
    [TOK_GIVE_UP] = {K8S, prestage_on_given_up, NULL},
    [TOK_UNPIN] = {RPC, prestage_on_unpin, NULL},
    [TOK_PERSISTENT] = {K8S, NULL, persistent_result},
    [TOK_DF] = {K8S, NULL, rabbitdf_result},
    [TOK_DRAIN] = {K8S, NULL, rabbitdrain_result},
    [TOK_HEALTH] = {K8S | RPC, NULL, NULL},
};

/* A job's answer its kind's table row does not take (a word no kind has,
 * or another event than its answer comes as): a failed RPC and any other
 * Kubernetes or job-info answer are logged. */
static void job_unexpected (struct dws_engine *e, enum dws_wire_event type, const struct token *t,
                            struct job *job, json_t *event)
{
    if (type != DWS_WIRE_EV_RPC_RESULT)
        act_log (e, "err", "%s: unexpected answer '%s'", job->name, t->word);
    else if (!json_is_true (json_object_get (event, "ok")))
        act_log (e, "err", "%s: %s RPC failed: %s", job->name, t->word,
                 dws_json_str_or (json_object_get (event, "errstr"), "unknown"));
}

/* The answer to a k8s, rpc or job-info action, by its token: parsed
 * once, then its kind's one handler.  An answer whose job or request is
 * gone (a late one) is dropped.
 */
static int result_event (struct dws_engine *e, enum dws_wire_event type, json_t *event,
                         dws_error_t *err)
{
    const char *text = json_string_value (json_object_get (event, "token"));
    struct token t;
    if (!text)
        return dws_errorf (err, "event has no token");
    if (token_parse (text, &t, err) < 0)
        return -1;
    bool expected = t.kind >= 0 && (answers[t.kind].comes_as & (1u << type));
    switch (t.kind >= 0 ? token_kind_shape ((enum token_kind)t.kind) : TOKEN_JOB) {
    case TOKEN_JOB: {
        act_record_id (e, t.n); /* its view may have changed */
        struct job *job = job_lookup (e, t.n);
        if (!job)
            return 0;
        if (expected)
            answers[t.kind].job (e, (enum token_kind)t.kind, job, event);
        else
            job_unexpected (e, type, &t, job, event);
        return 0;
    }
    case TOKEN_REQUEST:
    case TOKEN_STEP: {
        json_t *req = pending_get (e, &t);
        if (!req)
            return 0;
        if (!expected)
            break;
        if (answers[t.kind].request (e, req, &t, event))
            pending_remove (e, &t);
        return 0;
    }
    case TOKEN_HEALTH:
        if (!expected)
            break;
        return rabbits_event (e, HEALTH_RESULT, event, err);
    }
    act_log (e, "err", "unexpected %s for token '%s'", dws_wire_event_name (type), text);
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

/* The job whose Workflow is obj, or of a timer key "<kind>:<id>", is due
 * for its record (act_record): its view may have changed.
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
    enum timer_kind kind;
    json_int_t id;
    if (token_timer_parse (json_string_value (key), &kind, &id) == 0)
        act_record_id (e, id);
}

/* Every job the event is about is due for its record: the Workflows of a
 * watch or sync event, a request's jobid, the job of a timer (and of an
 * answer's token: result_event marks it).  (Phase changes, notes and the job's end mark theirs where
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
    /* the jobs the event's input marked, in the order it came to them */
    advance_due (e, ADVANCE_AS_MARKED);
    /* rabbit health may have confirmed the ssd holds of a job whose
     * computes are to be released (release.c), or made room for the
     * pre-staged jobs that wait, and the map may have come: they are
     * marked, then run, oldest first */
    release_check (e);
    map_pass (e);
    if (e->room_changed) {
        e->room_changed = false;
        prestage_room (e);
        prestage_rabbits (e);
    }
    advance_due (e, ADVANCE_OLDEST_FIRST);
    /* a job of a user whose use fell (or whose limits rose) may go: the
     * use is counted once the event's jobs have moved */
    admit_pass (e);
    advance_due (e, ADVANCE_OLDEST_FIRST);
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
