/* rabbits.c - the engine's side of rabbit health (health.h).
 *
 * The engine owns the health module and routes to it: Storage objects,
 * the Flux resource journal, Flux's resource configuration, the Fluxion
 * graph's paths, Fluxion restarts, the flush timer, the answers to its
 * updates, and the dws.rabbits request.  It tells it which rabbits each
 * job's Workflow uses, and which computes failed to mount.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */

#include "engine/shapes/act.h"
#include "health/health.h"
#include "placement/rabbitmap.h"
#include "rabbits.h"

static struct dws_health_config health_config (struct dws_engine *e)
{
    struct dws_health_config c = {
        .fluxion = e->cfg.fluxion,
        .drain_compute_nodes = e->cfg.drain_compute_nodes,
        .soft_drain = e->cfg.soft_drain,
        .drain_queues = e->cfg.drain_queues,
        .namespace = DWS_SYSTEM_NAMESPACE, /* not the Workflows' namespace */
    };
    return c;
}

void rabbits_configure (struct dws_engine *e)
{
    struct dws_health_config c = health_config (e);
    dws_health_configure (e->health, &c);
}

json_t *rabbits_job_constraint (struct dws_engine *e)
{
    struct dws_health_config c = health_config (e);
    return dws_health_job_constraint (&c);
}

void rabbits_topology (struct dws_engine *e)
{
    dws_error_t err;
    if (dws_health_topology (e->health, e->compute2rabbit, e->actions, &err) < 0)
        act_log (e, "err", "rabbit health: %s", err.text);
    /* jobs whose hosts were known before the map */
    for (size_t b = 0; b < e->nbuckets; b++)
        for (struct job *j = e->table[b]; j; j = j->next)
            rabbits_job (e, j);
}

void rabbits_job (struct dws_engine *e, struct job *job)
{
    if (job->epilog == EPILOG_REMOVED) {
        rabbits_job_done (e, job); /* its rabbits were given back with its computes */
        return;
    }
    json_t *rabbits = json_array ();
    json_t *counts = job->hosts && e->map ? dws_rabbitmap_counts (e->map, job->hosts, NULL)
                                          : NULL;
    const char *r;
    json_t *v;
    json_object_foreach (counts, r, v)
        json_array_append_new (rabbits, json_string (r));
    /* and the rabbits its spread Lustre is on (not its computes') */
    json_object_foreach (job->reserved, r, v) {
        if (!json_object_get (counts, r))
            json_array_append_new (rabbits, json_string (r));
    }
    dws_health_allocation (e->health, job->id, rabbits, e->actions);
    json_decref (counts);
    json_decref (rabbits);
}

void rabbits_job_done (struct dws_engine *e, struct job *job)
{
    dws_health_allocation (e->health, job->id, NULL, e->actions);
    /* without Fluxion alloc_rabbit goes now, not at the next flush: the
     * remove_property then reaches Fluxion before anything the end of the
     * job's epilog sets off, so the scheduling pass at its free sees the
     * rabbit free (Fluxion does not look again when a property goes) */
    if (!e->cfg.fluxion)
        dws_health_flush (e->health, e->now, e->actions);
}

void rabbits_job_gone (struct dws_engine *e, struct job *job)
{
    dws_health_allocation (e->health, job->id, NULL, e->actions);
    rabbits_unhold (e, job);
}

void rabbits_hold (struct dws_engine *e, struct job *job)
{
    dws_error_t err;
    if (!job->held)
        return;
    if (dws_health_hold (e->health, job->id, job->held, 0, e->now, e->actions, &err) < 0)
        act_log (e, "err", "%s: cannot hold its ssds: %s", job->name, err.text);
}

bool rabbits_hold_applied (struct dws_engine *e, struct job *job)
{
    return dws_health_hold_applied (e->health, job->id);
}

json_t *rabbits_holds_applied (struct dws_engine *e)
{
    return dws_health_holds_applied (e->health);
}

void rabbits_unhold (struct dws_engine *e, struct job *job)
{
    if (!job->held)
        return;
    dws_health_unhold (e->health, job->id, e->now, e->actions);
    json_decref (job->held);
    job->held = NULL;
}

void rabbits_mount_failed (struct dws_engine *e, json_t *hosts)
{
    dws_health_mount_failed (e->health, hosts, e->actions);
}

/* lustre_gib on each rabbit of the view: the ssd Fluxion reserved there
 * for the spread Lustre of the jobs the engine tracks.
 */
static void lustre_use (struct dws_engine *e, json_t *view)
{
    json_t *gib = json_object ();
    const char *r;
    json_t *v;
    for (size_t b = 0; b < e->nbuckets; b++)
        for (struct job *j = e->table[b]; j; j = j->next)
            json_object_foreach (j->reserved, r, v) {
                json_int_t was = json_integer_value (json_object_get (gib, r));
                json_object_set_new (gib, r, json_integer (was + json_integer_value (v)));
            }
    size_t i;
    json_t *rabbit;
    json_array_foreach (json_object_get (view, "rabbits"), i, rabbit) {
        json_t *use = json_object_get (gib, json_string_value (json_object_get (rabbit, "name")));
        json_object_set_new (rabbit, "lustre_gib",
                             json_integer (use ? json_integer_value (use) : 0));
    }
    json_decref (gib);
}

void rabbits_request (struct dws_engine *e, json_t *msgid)
{
    json_t *view = dws_health_view (e->health);
    lustre_use (e, view);
    json_object_set_new (view, "success", json_true ());
    act_respond (e, msgid, view);
}

int rabbits_event (struct dws_engine *e, enum health_input in, json_t *event, dws_error_t *err)
{
    /* a rabbit's room or health may have changed: who waits for room
     * looks again (engine.c, prestage_room).  Any input may: a Storage
     * object or the graph, but also Fluxion's answer that an ssd is up
     * again (HEALTH_RESULT), the journal, a Fluxion restart or a config.
     */
    e->room_changed = true;
    switch (in) {
    case HEALTH_STORAGE_SYNC:
        return dws_health_storage_sync (e->health, json_object_get (event, "objects"),
                                        e->actions, err);
    case HEALTH_STORAGE_WATCH: {
        json_t *obj = json_object_get (event, "object");
        if (!json_is_object (obj))
            return dws_errorf (err, "watch event needs event and object");
        return dws_health_storage (e->health,
                                   json_string_value (json_object_get (event, "event")), obj,
                                   e->actions, err);
    }
    case HEALTH_JOURNAL: {
        json_t *synced = json_object_get (event, "synced");
        if (synced && !json_is_boolean (synced))
            return dws_errorf (err, "journal 'synced' must be a boolean");
        return dws_health_journal (e->health, json_object_get (event, "events"),
                                   json_is_true (synced), e->actions, err);
    }
    case HEALTH_FLUX_CONFIG: {
        json_t *ex = json_object_get (event, "exclude");
        json_t *dr = json_object_get (event, "drainable");
        if ((ex && !json_is_null (ex) && !json_is_string (ex))
            || (dr && !json_is_null (dr) && !json_is_string (dr)))
            return dws_errorf (err, "flux-config exclude and drainable must be strings or null");
        return dws_health_flux_config (e->health, json_string_value (ex),
                                       json_string_value (dr), e->actions, err);
    }
    case HEALTH_GRAPH:
        return dws_health_graph (e->health, json_object_get (event, "graph"), e->actions, err);
    case HEALTH_FLUXION_RESTART:
        act_log (e, "info", "Fluxion restarted: giving it every rabbit's state again");
        dws_health_fluxion_restart (e->health, e->actions);
        return 0;
    case HEALTH_FLUSH:
        dws_health_flush (e->health, e->now, e->actions);
        return 0;
    case HEALTH_RESULT:
        return dws_health_result (e->health, event, e->now, e->actions, err);
    }
    return dws_errorf (err, "unknown health input %d", (int)in);
}

int rabbits_lustre_fits (struct dws_engine *e, int64_t gib, dws_error_t *err)
{
    int64_t total, largest, count;
    int64_t most = e->cfg.lustre.max_rabbits;
    dws_health_capacity (e->health, &total, &largest, &count);
    total >>= 30;
    largest >>= 30;
    if (count == 0)
        return 0; /* no Storage capacity known yet: Fluxion decides */
    if (gib > total)
        return dws_errorf (err,
                           "Lustre needs %lld GiB of rabbit ssd (the file system and its"
                           " headroom), more than all %lld rabbits hold (%lld GiB)",
                           (long long)gib, (long long)count, (long long)total);
    if (most > 0 && most < count && gib > most * largest)
        return dws_errorf (err,
                           "Lustre needs %lld GiB of rabbit ssd (the file system and its"
                           " headroom), more than rabbit.lustre.max_rabbits (%lld) rabbits"
                           " of at most %lld GiB hold",
                           (long long)gib, (long long)most, (long long)largest);
    return 0;
}

json_t *rabbits_pick (struct dws_engine *e, int64_t gib, json_t *avoid, json_t *leave,
                      json_t **reserved, dws_error_t *err)
{
    return dws_health_pick (e->health, gib, avoid, leave, reserved, err);
}

json_t *rabbits_pick_chassis (struct dws_engine *e, const struct prestage_split *split,
                              json_t *avoid, json_t *leave, json_t **reserved, json_t **hosts,
                              dws_error_t *err)
{
    return dws_health_pick_chassis (e->health, split->chassis, split->per, split->node_gib,
                                    avoid, leave, reserved, hosts, err);
}

bool rabbits_known (struct dws_engine *e)
{
    return dws_health_known (e->health);
}

unsigned long rabbits_updown_gen (struct dws_engine *e)
{
    return dws_health_updown_gen (e->health);
}

const char *rabbits_first_down (struct dws_engine *e, json_t *rabbits)
{
    return dws_health_first_down (e->health, rabbits);
}

int64_t rabbits_chassis_fit (struct dws_engine *e, const struct prestage_split *split)
{
    return dws_health_chassis_fit (e->health, split->per, split->node_gib);
}

int64_t *rabbits_chassis_sizes (struct dws_engine *e, size_t *n)
{
    return dws_health_chassis_sizes (e->health, n);
}

int64_t rabbits_graph_gib (struct dws_engine *e)
{
    return dws_health_graph_gib (e->health);
}

size_t rabbits_instance_nodes (struct dws_engine *e)
{
    return dws_health_nodes (e->health);
}
