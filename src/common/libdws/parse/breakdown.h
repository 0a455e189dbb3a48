/* breakdown.h - rewrite a jobspec's resources for its DirectiveBreakdowns.
 *
 * After Proposal, nnf-sos describes the storage of each jobdw and
 * create_persistent directive in a DirectiveBreakdown
 * (status.storage.allocationSets).  Fluxion must then allocate rabbit
 * storage together with the compute nodes, so the jobspec `resources` are
 * rewritten to ask for `ssd` (unit GiB) beside the nodes:
 *
 *   node(N){..}                  -> slot(N, label=rabbit){node(1){..},
 *                                                        ssd(G, exclusive)}
 *   chassis(C){node(M){..}, sn}  -> chassis(C){node(M){..}, sn,
 *                                              ssd(G*M, exclusive)}
 *   slot(S){node(M){..}, sn}     -> slot(S){node(M){..}, sn,
 *                                           ssd(G*M, exclusive)}
 *
 * where `sn` are optional `storage_node` entries (rabbits used as compute
 * nodes, --coral2-rabbit-cores); they are kept and are not counted as
 * compute nodes.  `storage_node` entries beside the top-level entry are
 * kept as they are.  The job's node count is N, C*M or S*M.
 *
 * G, the GiB of rabbit storage per compute node, is a sum with one term per
 * allocation set of every breakdown (so several directives add up):
 *   - per-compute labels (xfs, gfs2, raw): ceil(minimumCapacity / GiB);
 *   - lustre labels (ost, mdt, mgtmdt, mgt): the capacity is for the whole
 *     file system: ceil(minimumCapacity / (nodes * GiB));
 *   - each term is then raised to the minimum allocation size `min_gib`
 *     (DWS_MIN_ALLOCATION_GIB by default).
 * Labels must come with their strategy (labels.h).
 *
 * Left alone (reported as unchanged): resources that already hold an `ssd`
 * anywhere, and any resources when no breakdown holds status.storage
 * (persistentdw only).  Errors name the breakdown (metadata.name when
 * given, else its index), the allocation set, or the jobspec element.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_BREAKDOWN_H
#define DWS_BREAKDOWN_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "util/error.h"

#define DWS_MIN_ALLOCATION_GIB 4

/* Largest node count (and any jobspec count) the rewrite accepts. */
#define DWS_BREAKDOWN_MAX_COUNT (1LL << 24)

/* Each element of `breakdowns` may be a whole DirectiveBreakdown object
 * (it has `status`, or `metadata`/`spec`/`kind` and then must have a
 * `status`) or just its `status` object.  A status whose `ready` is false
 * is an error; a status with no (or null) `storage` needs no storage.
 */

/* 1 if some breakdown holds storage, 0 if none does, -1 with a message
 * when a breakdown or one of its allocation sets is malformed.
 */
int dws_breakdown_has_storage (json_t *breakdowns, dws_error_t *err);

/* Per-node GiB of rabbit storage the breakdowns need for a job of
 * `nnodes` compute nodes (rules above), 0 when none holds storage, or -1
 * with a message.  min_gib must be >= 0.
 */
int64_t dws_breakdown_gib_per_node (json_t *breakdowns,
                                    int64_t nnodes,
                                    int64_t min_gib,
                                    dws_error_t *err);

/* Compute nodes a jobspec `resources` array asks for (node, slot or
 * chassis form above), or -1 with a message naming the unsupported shape:
 * no node, a count range, several top-level entries, other children.
 */
int64_t dws_jobspec_node_count (json_t *resources, dws_error_t *err);

/* cffi entry point of dws_jobspec_node_count (JSON text in). */
int64_t dws_jobspec_node_count_json (const char *resources_json, dws_error_t *err);

/* The ssd a jobspec `resources` array asks for, as a new array of
 * [slots, gib] pairs: `slots` ssd requests of `gib` each (the product of
 * the counts above each ssd entry), one pair per ssd entry; an empty array
 * when it asks for none (or is not an array).  Counts that are not plain
 * integers count as 1.  NULL only on ENOMEM.
 */
json_t *dws_jobspec_ssd_asks (json_t *resources);

/* The rewritten resources (new reference), or NULL with a message.
 * *unchanged is set true, and a new reference to `resources` returned,
 * when they are left alone.
 */
json_t *dws_breakdown_rewrite (json_t *resources,
                               json_t *breakdowns,
                               int64_t min_gib,
                               bool *unchanged,
                               dws_error_t *err);

/* cffi entry point: JSON texts in; the rewritten resources as JSON text
 * (free with dws_free), or the text "null" when they are left alone.
 */
char *dws_breakdown_rewrite_json (const char *resources_json,
                                  const char *breakdowns_json,
                                  int64_t min_gib,
                                  dws_error_t *err);

#endif /* !DWS_BREAKDOWN_H */
