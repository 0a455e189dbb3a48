/* servers.h - the allocations a WLM writes into a DWS Servers object.
 *
 * At Setup the WLM turns each DirectiveBreakdown's allocation sets into
 * Servers spec.allocationSets: which rabbits (Storage names) hold how many
 * allocations of what size.  Rabbits are chosen by locality: those serving
 * the job's compute nodes, weighted by how many of the job's nodes each
 * serves (`rabbit_counts`, from dws_rabbitmap_counts()).
 *
 *   AllocatePerCompute      one allocation per compute node: each rabbit
 *                           gets allocationCount = its node count, size =
 *                           minimumCapacity;
 *   AllocateSingleServer    count = 1 (below);
 *   AllocateAcrossServers   with constraints.count = K: K allocations of
 *                           ceil(minimumCapacity / K), on the rabbits with
 *                           the most job nodes (ties by name), round-robin
 *                           when K exceeds the rabbits;
 *                           without a count: every rabbit, weighted by its
 *                           node count: with g = gcd of the counts, rabbit r
 *                           gets nodes_r / g allocations of
 *                           ceil(g * minimumCapacity / total_nodes).
 * Every size is raised to the minimum allocation size (min_bytes, 4 GiB by
 * default).  The result always passes nnf-sos' checks of the Servers
 * (set count and labels, single-server shape, capacity sums).  Storage
 * entries are listed by rabbit name.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_SERVERS_H
#define DWS_SERVERS_H

#include <stdint.h>

#include <jansson.h>

#include "error.h"

/* spec.allocationSets for one breakdown's status.storage. */
json_t *dws_servers_allocation_sets (json_t *storage,
                                     json_t *rabbit_counts,
                                     int64_t min_bytes,
                                     dws_error_t *err);

/* cffi entry points (JSON text in and out). */
char *dws_servers_allocation_sets_json (const char *storage_json,
                                        const char *rabbit_counts_json,
                                        int64_t min_bytes,
                                        dws_error_t *err);

#endif /* !DWS_SERVERS_H */
