/* breakdown.h - rewrite a jobspec's resources for its DirectiveBreakdowns.
 *
 * After Proposal, DWS describes each jobdw/create_persistent directive's
 * storage in a DirectiveBreakdown (status.storage.allocationSets).  Fluxion
 * must then allocate rabbit storage with the compute nodes, so the jobspec
 * `resources` are rewritten to ask for it:
 *
 *   node(N){...}             ->  slot(N, label=rabbit){node(1){...},
 *                                                   ssd(G, exclusive)}
 *   chassis(C){node(M){...}} ->  chassis(C){node(M){...}, ssd(G*M, exclusive)}
 *
 * G, the GiB of rabbit storage per compute node, adds up over every
 * allocation set of every breakdown:
 *   - AllocatePerCompute sets (xfs, gfs2, raw): minimumCapacity is per node;
 *   - Lustre sets (ost, mdt, mgtmdt, mgt): minimumCapacity is for the whole
 *     file system and is divided by the job's node count;
 * each set's per-node figure is rounded up to whole GiB and raised to the
 * minimum allocation size (`min_gib`, 4 by default, as DWS needs).
 * A label must come with its strategy (xfs/gfs2/raw: AllocatePerCompute;
 * ost/mdt/mgtmdt: AllocateAcrossServers; mgt: AllocateSingleServer).
 * `storage_node` entries (rabbits used as compute) may sit beside the node
 * under slot or chassis; only `node` counts as compute.  Resources that
 * already hold an `ssd` are left alone; so are resources when no breakdown
 * holds storage (persistentdw only).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_BREAKDOWN_H
#define DWS_BREAKDOWN_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "error.h"

#define DWS_MIN_ALLOCATION_GIB 4

/* Per-node GiB of rabbit storage the breakdowns need for `nnodes` nodes.
 * `breakdowns` is an array of DirectiveBreakdown objects or of their
 * `status` objects.  Returns -1 with a message on bad input.
 */
int64_t dws_breakdown_gib_per_node (json_t *breakdowns,
                                    int64_t nnodes,
                                    int64_t min_gib,
                                    dws_error_t *err);

/* Compute nodes a jobspec `resources` array asks for (node or chassis
 * form), or -1 with a message naming the unsupported shape.
 */
int64_t dws_jobspec_node_count (json_t *resources, dws_error_t *err);

/* The rewritten resources (new reference), or NULL with a message.
 * *unchanged is set true (and a reference to `resources` returned) when
 * the resources already hold ssd or no breakdown needs storage.
 */
json_t *dws_breakdown_rewrite (json_t *resources,
                               json_t *breakdowns,
                               int64_t min_gib,
                               bool *unchanged,
                               dws_error_t *err);

/* cffi entry point: JSON texts in; the rewritten resources as JSON text,
 * or the text "null" when they are left unchanged.
 */
char *dws_breakdown_rewrite_json (const char *resources_json,
                                  const char *breakdowns_json,
                                  int64_t min_gib,
                                  dws_error_t *err);

#endif /* !DWS_BREAKDOWN_H */
