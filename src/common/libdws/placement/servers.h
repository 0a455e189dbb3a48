/* servers.h - the allocations a WLM writes into a DWS Servers object.
 *
 * At Setup the WLM turns each DirectiveBreakdown's status.storage
 * allocation sets into the Servers object's spec.allocationSets: which
 * rabbits (Storage names) hold how many allocations of what size.  Rabbits
 * are chosen by locality: those serving the job's compute nodes, weighted
 * by how many of the job's nodes each serves (`rabbit_counts`, an object
 * {rabbit: nodes}, see rabbitmap.h).  Let T be the job's nodes (the sum of
 * the counts) and cap a set's minimumCapacity (bytes):
 *
 *   AllocatePerCompute     one allocation per compute node: every rabbit
 *                          gets allocationCount = its node count; size cap.
 *   AllocateSingleServer   one allocation of cap on the rabbit with the most
 *                          job nodes (constraints.count is ignored).
 *   AllocateAcrossServers  with constraints.count = K: K allocations of
 *                          ceil(cap / K) on the K rabbits with the most job
 *                          nodes, one each; when K exceeds the rabbits, every
 *                          rabbit gets floor(K / R) and the busiest K mod R
 *                          one more (round-robin).
 *                          Without a count: every rabbit, weighted by its
 *                          node count: with g = gcd of the counts, rabbit r
 *                          gets nodes_r / g allocations of
 *                          ceil(cap / (T / g))  (= ceil(g * cap / T)).
 * Every allocationSize is then raised to `min_bytes` (the minimum
 * allocation size, 4 GiB by default).  So AcrossServers allocations add up
 * to at least cap and the others are at least cap: the result always passes
 * nnf-sos' Servers checks (one spec set per breakdown set, same labels,
 * SingleServer is one storage with allocationCount 1, capacity sums).
 *
 * Order: allocation sets in breakdown order; storage entries by rabbit name
 * in natural order (digit runs compare as numbers: r9 < r10).  "Most job
 * nodes" ties are broken by that same name order.  Labels are copied as
 * they are (DWS calls them opaque); constraints.labels, scale and
 * colocation are not interpreted (as in the incumbent; nnf-sos checks none
 * of them).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_SERVERS_H
#define DWS_SERVERS_H

#include <stdint.h>

#include <jansson.h>

#include "util/error.h"

#define DWS_MIN_ALLOCATION_BYTES (4LL * 1024 * 1024 * 1024)

/* spec.allocationSets (new reference) for one breakdown's status.storage
 * (or the whole breakdown object, or its status), or NULL with a message
 * naming the offending set, rabbit or field.  min_bytes must be >= 0.
 */
json_t *dws_servers_allocation_sets (json_t *storage,
                                     json_t *rabbit_counts,
                                     int64_t min_bytes,
                                     dws_error_t *err);

/* The same as JSON text for the hosts of an RFC 29 hostlist, counted by a
 * prepared rabbit map (rabbitmap.h) without building the counts object:
 * what dws.setup needs per breakdown.
 */
struct dws_rabbitmap;
char *dws_servers_allocation_sets_hosts_json (struct dws_rabbitmap *map,
                                              const char *hosts,
                                              const char *storage_json,
                                              int64_t min_bytes,
                                              dws_error_t *err);

/* Natural order of two host names (digit runs compare as numbers). */
int dws_hostname_cmp (const char *a, const char *b);

/* cffi entry point (JSON text in and out; free the result with dws_free). */
char *dws_servers_allocation_sets_json (const char *storage_json,
                                        const char *rabbit_counts_json,
                                        int64_t min_bytes,
                                        dws_error_t *err);

#endif /* !DWS_SERVERS_H */
