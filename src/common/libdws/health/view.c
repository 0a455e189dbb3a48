/* view.c - what rabbit health shows: the dws.rabbits view
 * (dws_health_view) and the rabbits' capacity (dws_health_capacity).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <stdlib.h>

#include "hold.h"
#include "link.h"
#include "systemstatus.h"
#include "table.h"

static json_t *compute_view (struct dws_health *h, const struct compute *c)
{
    struct rank *rk = table_rank (h, c);
    struct host_state st = systemstatus_host (h, c);
    return json_pack ("{s:s s:s? s:b s:o s:b s:s? s:b s:b s:b s:s?}", "name", c->name, "link",
                      c->link[0] ? c->link : NULL, "fenced", link_fenced (c), "online",
                      rk ? json_boolean (st.ours ? !st.offline : rk->online) : json_null (),
                      "excluded", rk ? rk->excluded : false, "drained",
                      rk ? rk->drained : NULL, "unmount_drained", st.unmount,
                      "badrabbit", c->bad_applied == 1, "alloc_rabbit", c->alloc_applied == 1,
                      "systemstatus",
                      c->ss_applied < 0 ? NULL : c->ss_applied ? "Disabled" : "Enabled");
}

void dws_health_capacity (struct dws_health *h, int64_t *total, int64_t *largest,
                          int64_t *count)
{
    *total = *largest = *count = 0;
    if (!h || !h->storage_synced)
        return; /* part of the Storage list: the total would be short */
    for (size_t i = 0; i < h->nrabbits; i++) {
        int64_t c = h->rabbits[i].sv.total;
        if (c <= 0)
            continue;
        (*count)++;
        *total = c > INT64_MAX - *total ? INT64_MAX : *total + c;
        if (c > *largest)
            *largest = c;
    }
}

/* What Fluxion has for a rabbit's ssd vertices that no job holds (all of
 * them when every one is held): "pending" while one is unknown, "up",
 * "down", or "mixed".
 */
static json_t *group_state (struct dws_health *h, const struct ssd_group *g)
{
    bool any_free = false;
    size_t up = 0, down = 0, unknown = 0;
    for (size_t i = g->first; i < g->first + g->n; i++)
        any_free |= h->ssdv[i].holds == 0;
    for (size_t i = g->first; i < g->first + g->n; i++) {
        const struct ssd *s = &h->ssdv[i];
        if (any_free && s->holds > 0)
            continue;
        if (s->applied < 0)
            unknown++;
        else if (s->applied)
            up++;
        else
            down++;
    }
    return json_string (unknown ? "pending" : !down ? "up" : !up ? "down" : "mixed");
}

/* Every hold ([{"job", "since", "paths", "applied"}]), and in 'per' each
 * rabbit's share under "held" ({job: {"job", "since", "ssds", "down"}}:
 * "down" once Fluxion has them all down).
 */
static json_t *holds_view (struct dws_health *h, json_t *per)
{
    json_t *out = json_array ();
    const char *key;
    json_t *hold;
    json_object_foreach (h->holds, key, hold) {
        json_int_t id = strtoll (key, NULL, 10);
        json_t *since = json_object_get (hold, "since");
        json_t *paths = json_object_get (hold, "paths");
        json_array_append_new (out, json_pack ("{s:I s:O s:O s:b}", "job", id, "since", since,
                                               "paths", paths, "applied",
                                               hold_is_applied (h, hold)));
        size_t k;
        json_t *p;
        json_array_foreach (paths, k, p) {
            long i = table_index (h->ssd_index, json_string_value (p));
            json_t *rv = i < 0 ? NULL
                               : json_object_get (per, h->groups[h->ssdv[i].group].rabbit);
            if (!rv)
                continue; /* not in the graph, or its rabbit not in the topology */
            json_t *held = json_object_get (rv, "held");
            if (!held)
                json_object_set_new (rv, "held", (held = json_object ()));
            json_t *e = json_object_get (held, key);
            if (!e) {
                e = json_pack ("{s:I s:O s:[] s:b}", "job", id, "since", since, "ssds", "down",
                               1);
                json_object_set_new (held, key, e);
            }
            json_array_append (json_object_get (e, "ssds"), p);
            if (h->cfg.fluxion && (h->ssdv[i].applied != 0 || h->ssdv[i].batch != 0))
                json_object_set_new (e, "down", json_false ());
        }
    }
    return out;
}

/* One rabbit of the view; 'p' its computes, jobs and holds. */
static json_t *rabbit_view (struct dws_health *h, const struct rabbit *r, json_t *p)
{
    long gi = table_index (h->group_index, r->name);
    const struct ssd_group *g = gi >= 0 ? &h->groups[gi] : NULL;
    json_t *fl = h->cfg.fluxion && g && g->n > 0 ? group_state (h, g) : json_null ();
    json_t *held = json_array ();
    const char *key;
    json_t *entry;
    json_object_foreach (json_object_get (p, "held"), key, entry)
        json_array_append (held, entry);
    /* free and used: null until the Storage reports them */
    int64_t capacity = r->sv.total, free_bytes = r->sv.free_bytes;
    json_t *free_j = free_bytes < 0 ? json_null () : json_integer (free_bytes);
    json_t *used_j = free_bytes < 0 || capacity == 0
                         ? json_null ()
                         : json_integer (free_bytes >= capacity ? 0 : capacity - free_bytes);
    /* what Fluxion was last given for its ssd vertices, counted */
    int up = 0, down = 0;
    for (size_t i = g ? g->first : 0; g && i < g->first + g->n; i++) {
        up += h->ssdv[i].applied == 1;
        down += h->ssdv[i].applied == 0;
    }
    return json_pack ("{s:s s:o s:b s:s s:s s:o s:i s:i s:i s:O s:O s:I s:o s:o s:o}",
                      "name", r->name,
                      "storage", storageview_summary (&r->sv), "up", r->up, "why", r->why,
                      "note", r->note, "fluxion", fl, "ssds", g ? (int)g->n : 0, "ssds_up", up,
                      "ssds_down", down, "jobs",
                      json_object_get (p, "jobs"), "computes", json_object_get (p, "computes"),
                      "capacity", (json_int_t)capacity, "free", free_j, "used", used_j, "held",
                      held);
}

json_t *dws_health_view (struct dws_health *h)
{
    json_t *rabbits = json_array ();
    json_t *per = json_object (); /* rabbit -> {computes, jobs} */
    for (size_t i = 0; i < h->nrabbits; i++)
        json_object_set_new (per, h->rabbits[i].name,
                             json_pack ("{s:[] s:[]}", "computes", "jobs"));
    for (size_t i = 0; i < h->ncomputes; i++) {
        json_t *p = json_object_get (per, h->rabbits[h->computes[i].rabbit].name);
        json_array_append_new (json_object_get (p, "computes"),
                               compute_view (h, &h->computes[i]));
    }
    const char *key;
    json_t *list;
    json_object_foreach (h->jobs, key, list) {
        size_t i;
        json_t *v;
        json_array_foreach (list, i, v)
            json_array_append_new (json_object_get (json_object_get (per,
                                                                     json_string_value (v)),
                                                    "jobs"),
                                   json_integer (strtoll (key, NULL, 10)));
    }
    json_t *holds = holds_view (h, per);
    for (size_t i = 0; i < h->nrabbits; i++) {
        struct rabbit *r = &h->rabbits[i];
        json_array_append_new (rabbits, rabbit_view (h, r, json_object_get (per, r->name)));
    }
    json_decref (per);
    bool ready = h->topology_known && h->storage_synced && h->journal_synced
                 && (!h->cfg.fluxion || (h->graph_known && h->fluxion_known));
    return json_pack ("{s:b s:b s:b s:b s:O s:o s:o}", "fluxion", h->cfg.fluxion,
                      "drain_compute_nodes", h->cfg.drain_compute_nodes, "soft_drain",
                      h->cfg.soft_drain, "ready", ready, "sent", h->sent, "rabbits", rabbits,
                      "holds", holds);
}
