/* rssd.h - the rabbit ssd vertices of a JGF graph, and of a job's R.
 *
 * Fluxion, with match-format = "rv1", writes a job's R with a
 * "scheduling" key holding the JGF of what it allocated: a vertex per
 * resource ({"id", "metadata": {"type", "paths": {"containment"}, ...}})
 * and the containment edges.  A rabbit job's ssd vertices are those of
 * type "ssd" (under their rabbit's chassis); their containment paths are
 * what sched-fluxion-resource.set_status takes.  Fluxion's find (format
 * jgf) answers with the same vertex shape.
 *
 * The job manager's own copy of R has its scheduling key removed; the one
 * in the job's KVS directory (flux job info JOBID R) keeps it.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_RSSD_H
#define DWS_RSSD_H

#include <jansson.h>

#include "util/error.h"

/* The containment paths of the ssd vertices of a JGF graph
 * ({"nodes": [vertex...], ...}), in the graph's order: a new array of
 * strings (empty when it has none), or NULL with a message that names the
 * graph by 'where' ("R scheduling.graph") when the graph has no nodes
 * list, a vertex has no metadata with a type, or an ssd vertex has no
 * containment path (a string beginning with '/').
 */
json_t *dws_rssd_graph_paths (json_t *graph, const char *where, dws_error_t *err);

/* The ssd vertex paths of a job's R (new array; empty for a job without
 * rabbit storage), or NULL with a message: "R must be an object", "R has
 * no scheduling graph: is Fluxion's match-format rv1?", or one of
 * dws_rssd_graph_paths' about "R scheduling.graph".
 */
json_t *dws_rssd_paths (json_t *R, dws_error_t *err);

/* cffi entry point: R as JSON text, the array as JSON text. */
char *dws_rssd_paths_json (const char *R_json, dws_error_t *err);

#endif /* !DWS_RSSD_H */
