/* rabbitmap.h - which rabbit serves each compute node, prepared once.
 *
 * Built from a rabbitmapping document (or its "computes" object) and kept
 * by a long-running service; per job it answers "how many of this job's
 * nodes does each rabbit serve" from the job's hostlist in O(hosts).
 * Hosts that are rabbits themselves (rabbits used as compute nodes) are
 * skipped; a host no rabbit serves is an error naming it.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_RABBITMAP_H
#define DWS_RABBITMAP_H

#include <jansson.h>

#include "error.h"

struct dws_rabbitmap;

struct dws_rabbitmap *dws_rabbitmap_create (json_t *mapping, dws_error_t *err);
void dws_rabbitmap_destroy (struct dws_rabbitmap *map);

/* {rabbit: count} for the hosts of an RFC 29 hostlist, rabbits in order
 * of first use.
 */
json_t *dws_rabbitmap_counts (struct dws_rabbitmap *map, const char *hosts, dws_error_t *err);

/* cffi entry points. */
struct dws_rabbitmap *dws_rabbitmap_create_json (const char *mapping_json, dws_error_t *err);
char *dws_rabbitmap_counts_json (struct dws_rabbitmap *map,
                                 const char *hosts,
                                 dws_error_t *err);

#endif /* !DWS_RABBITMAP_H */
