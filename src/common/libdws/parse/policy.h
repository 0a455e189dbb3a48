/* policy.h - site limits on #DW requests ([rabbit.policy.maximums]).
 *
 * maximums is {"xfs": GiB, "gfs2": GiB, "raw": GiB, "lustre": GiB}, each an
 * optional per-compute-node limit.  For a job's jobdw and create_persistent
 * directives (the ones DWS breaks down into storage), each directive's
 * per-node figure is rounded up to whole GiB and the figures of one type
 * add up:
 *   xfs, gfs2, raw: the capacity is per compute node;
 *   lustre:         the capacity is the file system total, so the per-node
 *                   figure is capacity / nnodes.
 * The first type over its
 * limit (in directive order) gives the message users see:
 *   "Requested a total of X GiB of T storage per node but max is Y GiB per node"
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_POLICY_H
#define DWS_POLICY_H

#include <jansson.h>

#include "util/error.h"

/* Check the maximums table itself (keys and values). */
int dws_policy_check_table (json_t *maximums, dws_error_t *err);

/* 0 if within limits; -1 with the message above (or a parse error). */
int dws_policy_check_maximums (json_t *directives,
                               int nnodes,
                               json_t *maximums,
                               dws_error_t *err);

int dws_policy_check_maximums_json (const char *directives_json,
                                    int nnodes,
                                    const char *maximums_json,
                                    dws_error_t *err);

#endif /* !DWS_POLICY_H */
