/* rabbitmap.h - which rabbit serves each compute node, prepared once.
 *
 * Built from a rabbitmapping document ({"computes": {compute: rabbit},
 * "rabbits": {rabbit: {...}}}) or from a bare {compute: rabbit} object, and
 * kept by a long-running service; per job it answers "how many of this
 * job's nodes does each rabbit serve" (the `rabbit_counts` servers.h takes)
 * in O(hosts).  Rules:
 *   - a host that is itself a rabbit (a value of `computes` or a key of
 *     `rabbits`: rabbits used as compute nodes) is skipped;
 *   - a host no rabbit serves is an error naming it;
 *   - a host listed twice counts once (R's nodelist never repeats one);
 *   - the result lists rabbits in order of first use among the hosts.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_RABBITMAP_H
#define DWS_RABBITMAP_H

#include <stdbool.h>

#include <jansson.h>

#include "util/error.h"

#include <stddef.h>
#include <stdint.h>

struct dws_rabbitmap;

/* One rabbit's share of a job: `name` is owned by the map. */
struct dws_rabbit_count {
    const char *name;
    int64_t nodes;
};

/* Returns NULL with a message naming the bad entry. */
struct dws_rabbitmap *dws_rabbitmap_create (json_t *mapping, dws_error_t *err);
void dws_rabbitmap_destroy (struct dws_rabbitmap *map);

/* {rabbit: count} for the hosts of an RFC 29 hostlist. */
json_t *dws_rabbitmap_counts (struct dws_rabbitmap *map, const char *hosts, dws_error_t *err);

/* Do the hosts of an RFC 29 hostlist count, per rabbit, as `want`
 * ({rabbit: count}) does?  False when they cannot be counted. */
bool dws_rabbitmap_counts_equal (struct dws_rabbitmap *map, const char *hosts, json_t *want);

/* The same counts as a malloc'd array (*n entries, first-use order) for
 * the hosts of an RFC 29 hostlist; free() it.  Returns 0, or -1 with a
 * message.
 */
int dws_rabbitmap_tally (struct dws_rabbitmap *map,
                         const char *hosts,
                         struct dws_rabbit_count **counts,
                         size_t *n,
                         dws_error_t *err);

/* {rabbit: count} for a JSON array of host names. */
json_t *dws_rabbitmap_counts_list (struct dws_rabbitmap *map, json_t *hosts, dws_error_t *err);

/* cffi entry points (results are JSON text, free with dws_free). */
struct dws_rabbitmap *dws_rabbitmap_create_json (const char *mapping_json, dws_error_t *err);
char *dws_rabbitmap_counts_json (struct dws_rabbitmap *map,
                                 const char *hosts,
                                 dws_error_t *err);
char *dws_rabbitmap_counts_list_json (struct dws_rabbitmap *map,
                                      const char *hosts_json,
                                      dws_error_t *err);

/* One-off: counts for a JSON array of hosts and a mapping (as above). */
char *dws_rabbit_counts_json (const char *hosts_json,
                              const char *mapping_json,
                              dws_error_t *err);

#endif /* !DWS_RABBITMAP_H */
