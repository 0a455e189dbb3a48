/* nodelocal.h - node-local storage (xfs, gfs2, raw) placed before the
 * job's nodes (pre-staging; doc/guide/prestage.rst).
 *
 * A compute reaches its node-local file system over PCIe, so the rabbits
 * that hold it fix the chassis its nodes come from and how many per
 * chassis.  Fluxion 0.54 cannot ask for "k nodes of chassis A and m of
 * chassis B", but it can ask for c chassis of k nodes each, and an RFC 31
 * hostlist constraint can name the nodes of the chassis chosen.  So a job
 * of n nodes is split evenly: k, the largest divisor of n that a chassis
 * holds, nodes on each of c = n / k rabbits; its storage is set up there
 * (k allocations each), and when its data is in, its jobspec asks for
 *
 *   chassis(c){node(k){..}}  with  {"hostlist": ["<their computes>"]}
 *
 * which only those chassis, k nodes each, satisfy.  Everything here is
 * pure.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_NODELOCAL_H
#define DWS_NODELOCAL_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "util/error.h"

/* Whether the job's storage is node-local alone and its resources one
 * plain node request (node(n){..}, no ssd): what can be split.  false
 * with the reason otherwise (no storage, Lustre, a mix, another shape).
 */
bool dws_nodelocal_placeable (json_t *resources, json_t *breakdowns, dws_error_t *err);

/* The even split of `nodes` over the instance's chassis, whose computes
 * number sizes[0 .. n): *per, the largest divisor of nodes that at least
 * nodes / *per chassis hold, and *chassis = nodes / *per.  -1 with the
 * reason when there is none (more nodes than chassis can take evenly).
 */
int dws_nodelocal_split (int64_t nodes, const int64_t *sizes, size_t n, int64_t *chassis,
                         int64_t *per, dws_error_t *err);

/* The resources that hold the scheduler to the split: node(n){W} ->
 * chassis(chassis){node(per){W}} (new reference), or NULL with the
 * reason (not a plain node request, or chassis * per != n).
 */
json_t *dws_nodelocal_pin (json_t *resources, int64_t chassis, int64_t per, dws_error_t *err);

/* The RFC 31 constraint naming the chassis' nodes: {"hostlist": [hosts]}. */
json_t *dws_nodelocal_constraint (const char *hosts);

#endif /* !DWS_NODELOCAL_H */
