/* graph.c - the Fluxion graph (dws_health_graph): its ssd vertices,
 * grouped by rabbit, and the containment path of each compute.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <stdlib.h>
#include <string.h>

#include "arm.h"
#include "hold.h"
#include "property.h"
#include "table.h"

/* The graph's ssd vertices, grouped by rabbit, each unknown to Fluxion. */
static int build_ssds (struct dws_health *h, json_t *ssds, json_t *gib, dws_error_t *err)
{
    const char *rabbit;
    json_t *paths;
    size_t n = 0, k;
    json_t *p;
    json_object_foreach (ssds, rabbit, paths) {
        if (!json_is_array (paths))
            return dws_errorf (err, "graph: ssds.%s must be an array of paths", rabbit);
        json_array_foreach (paths, k, p) {
            if (!json_is_string (p))
                return dws_errorf (err, "graph: ssds.%s[%zu] is not a path string", rabbit, k);
        }
        n += json_array_size (paths);
    }
    table_free_ssds (h);
    h->ssdv = calloc (n ? n : 1, sizeof (*h->ssdv));
    h->groups = calloc (json_object_size (ssds) ? json_object_size (ssds) : 1,
                        sizeof (*h->groups));
    if (!h->ssdv || !h->groups) {
        table_free_ssds (h);
        return dws_errorf (err, "out of memory");
    }
    json_object_foreach (ssds, rabbit, paths) {
        struct ssd_group *g = &h->groups[h->ngroups];
        g->rabbit = strdup (rabbit);
        g->first = h->nssd;
        g->n = json_array_size (paths);
        g->gib = json_integer_value (json_object_get (gib, rabbit));
        json_object_set_new (h->group_index, rabbit, json_integer ((json_int_t)h->ngroups));
        json_array_foreach (paths, k, p) {
            struct ssd *s = &h->ssdv[h->nssd];
            s->path = strdup (json_string_value (p));
            s->group = h->ngroups;
            s->applied = -1;
            json_object_set_new (h->ssd_index, s->path, json_integer ((json_int_t)h->nssd));
            h->nssd++;
        }
        h->ngroups++;
    }
    h->graph_gen++;
    table_resolve_groups (h);
    hold_count (h);
    hold_unreport_all (h);
    return 0;
}

int dws_health_graph (struct dws_health *h, json_t *graph, json_t *actions, dws_error_t *err)
{
    json_t *ssds = json_object_get (graph, "ssds");
    json_t *nodes = json_object_get (graph, "nodes");
    json_t *gib = json_object_get (graph, "ssd_gib");
    if (!json_is_object (graph) || (ssds && !json_is_object (ssds))
        || (nodes && !json_is_object (nodes)) || (gib && !json_is_object (gib)))
        return dws_errorf (err, "graph must be {\"ssds\": {rabbit: [path]}, \"nodes\": "
                                "{host: path}, \"ssd_gib\"?: {rabbit: GiB}}");
    /* a new graph knows nothing we set; what Fluxion says it has (now or
     * when it answers) still seeds the ssds at the next flush */
    if (build_ssds (h, ssds, gib, err) < 0)
        return -1;
    json_decref (h->node_paths);
    h->node_paths = json_object_size (nodes) ? json_incref (nodes) : NULL;
    h->graph_known = true;
    h->holds_dirty = true;
    property_forget (h);
    arm_soon (h, actions);
    return 0;
}
