/* health.c - rabbit health's life: create, configure, destroy, and
 * whether Flux has been told all it needs (health.h).
 *
 * The rest of health/, one concern per file, in one-way layers (each
 * includes only the headers of those below it; doc/guide/rabbit-health.rst
 * draws them): storageview.c reads a Storage object once and storage.c
 * decides from it whether its rabbit is up and what its computes' links
 * are; topology.c the computes each rabbit serves; resource.c the Flux
 * resource journal and configuration; graph.c the Fluxion graph's ssd
 * vertices, fluxion.c what Fluxion has of them; hold.c the jobs' holds on
 * them, alloc.c the rabbits jobs use and pick.c free vertices for the
 * service's own holds (pre-staging).  Inputs arm the flush timer
 * (arm.c); the flush (flush.c) sends what differs: ssd.c the vertices'
 * status, property.c the node properties, drain.c the drains (link.c
 * reads a compute's link), systemstatus.c DWS' SystemStatus, all through
 * batch.c; result.c reads their answers; view.c builds dws.rabbits' view.
 * state.h has the types, table.c the lookups.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "health.h"
#include "hold.h"
#include "property.h"
#include "state.h"
#include "table.h"

struct dws_health *dws_health_create (void)
{
    struct dws_health *h = calloc (1, sizeof (*h));
    if (!h)
        return NULL;
    h->cfg.fluxion = true;
    h->cfg.drain_compute_nodes = true;
    h->cfg.soft_drain = true;
    snprintf (h->namespace, sizeof (h->namespace), "default");
    h->rabbit_index = json_object ();
    h->compute_index = json_object ();
    h->rank_index = json_object ();
    h->host_ranks = json_object ();
    h->jobs = json_object ();
    h->batches = json_object ();
    h->storages = json_object ();
    h->ssd_index = json_object ();
    h->group_index = json_object ();
    h->holds = json_object ();
    h->sent = json_pack ("{s:i s:i s:i s:i s:i s:i}", "set_status", 0, "set_property", 0,
                         "remove_property", 0, "drain", 0, "undrain", 0, "systemstatus", 0);
    if (!h->rabbit_index || !h->compute_index || !h->rank_index || !h->host_ranks || !h->jobs || !h->batches
        || !h->storages || !h->ssd_index || !h->group_index || !h->holds || !h->sent) {
        dws_health_destroy (h);
        return NULL;
    }
    return h;
}

void dws_health_destroy (struct dws_health *h)
{
    if (!h)
        return;
    table_free (h->rabbits, h->nrabbits, h->computes, h->ncomputes);
    table_free_ranks (h);
    free (h->exclude);
    json_decref (h->rabbit_index);
    json_decref (h->compute_index);
    json_decref (h->rank_index);
    json_decref (h->host_ranks);
    json_decref (h->drainable);
    json_decref (h->storages);
    table_free_ssds (h);
    json_decref (h->ssd_index);
    json_decref (h->group_index);
    json_decref (h->holds);
    json_decref (h->node_paths);
    json_decref (h->fluxion_down);
    json_decref (h->jobs);
    json_decref (h->batches);
    json_decref (h->sent);
    free (h);
}

void dws_health_configure (struct dws_health *h, const struct dws_health_config *cfg)
{
    bool props = h->cfg.fluxion != cfg->fluxion || h->cfg.soft_drain != cfg->soft_drain;
    bool drains = !h->cfg.drain_compute_nodes && cfg->drain_compute_nodes;
    if (h->cfg.fluxion != cfg->fluxion)
        hold_unreport_all (h); /* without Fluxion a hold has nothing to wait for */
    h->cfg = *cfg;
    snprintf (h->namespace, sizeof (h->namespace), "%s",
              cfg->namespace ? cfg->namespace : "default");
    h->cfg.namespace = h->namespace;
    if (props)
        property_forget (h);
    if (drains) /* drains turned on: act on links that are down now */
        for (size_t i = 0; i < h->ncomputes; i++)
            h->computes[i].link_seen = -1;
}

bool dws_health_ready (const struct dws_health *h)
{
    if (!h || !h->topology_known || !h->storage_synced || !h->journal_synced)
        return false; /* before the map, no ssd state can have been applied */
    const char *tok;
    json_t *b;
    json_object_foreach (h->batches, tok, b) {
        const char *kind = json_string_value (json_object_get (b, "kind"));
        if (kind && !strcmp (kind, "drain"))
            return false; /* e.g. a fenced compute: drained before rabbit jobs go */
    }
    if (!h->cfg.fluxion)
        return true;
    if (!h->graph_known || !h->fluxion_known || h->timer_due > 0 || h->find_token[0])
        return false;
    json_object_foreach (h->batches, tok, b) {
        const char *kind = json_string_value (json_object_get (b, "kind"));
        if (kind && !strcmp (kind, "ssd"))
            return false;
    }
    return true;
}

json_t *dws_health_job_constraint (const struct dws_health_config *cfg)
{
    if (!cfg->fluxion)
        return json_pack ("{s:[{s:[{s:[s]}]} {s:[{s:[s]}]}]}", "and", "not", "properties",
                          SSD_PROPERTY, "not", "properties", ALLOC_PROPERTY);
    if (!cfg->drain_compute_nodes || (cfg->drain_queues && cfg->soft_drain))
        return json_pack ("{s:[{s:[s]}]}", "not", "properties", SSD_PROPERTY);
    return json_null ();
}
