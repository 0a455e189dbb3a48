/* rssd.c - the rabbit ssd vertices of a JGF graph and of a job's R
 * (see rssd.h).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <string.h>

#include "rssd.h"
#include "util/jsonio.h"

json_t *dws_rssd_graph_paths (json_t *graph, const char *where, dws_error_t *err)
{
    json_t *nodes = json_object_get (graph, "nodes");
    json_t *out;
    size_t i;
    json_t *v;

    if (!json_is_object (graph) || !json_is_array (nodes)) {
        dws_errorf (err, "%s is not a JGF graph (no nodes list)", where);
        return NULL;
    }
    if (!(out = json_array ())) {
        dws_errorf (err, "out of memory");
        return NULL;
    }
    json_array_foreach (nodes, i, v) {
        json_t *md = json_object_get (v, "metadata");
        const char *type = json_string_value (json_object_get (md, "type"));
        json_t *path = json_object_get (json_object_get (md, "paths"), "containment");
        if (!type) {
            dws_errorf (err, "%s.nodes[%zu]: a vertex needs metadata with a type", where, i);
            goto fail;
        }
        if (strcmp (type, "ssd") != 0)
            continue;
        if (!json_is_string (path) || json_string_value (path)[0] != '/') {
            dws_errorf (err, "%s.nodes[%zu]: ssd vertex without a containment path", where, i);
            goto fail;
        }
        if (json_array_append (out, path) < 0) {
            dws_errorf (err, "out of memory");
            goto fail;
        }
    }
    return out;
fail:
    json_decref (out);
    return NULL;
}

json_t *dws_rssd_paths (json_t *R, dws_error_t *err)
{
    json_t *sched = json_object_get (R, "scheduling");

    if (!json_is_object (R)) {
        dws_errorf (err, "R must be an object");
        return NULL;
    }
    if (!sched || json_is_null (sched)) {
        dws_errorf (err, "R has no scheduling graph: is Fluxion's match-format rv1?");
        return NULL;
    }
    return dws_rssd_graph_paths (json_object_get (sched, "graph"), "R scheduling.graph", err);
}

char *dws_rssd_paths_json (const char *R_json, dws_error_t *err)
{
    json_t *R = dws_json_load ("R", R_json, 0, err);
    char *out;

    if (!R)
        return NULL;
    out = dws_json_dump_take (dws_rssd_paths (R, err), err);
    json_decref (R);
    return out;
}
