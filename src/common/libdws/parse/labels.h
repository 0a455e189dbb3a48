/* labels.h - DirectiveBreakdown allocation-set labels and strategies.
 *
 * nnf-sos labels each allocation set with the file system part it holds
 * and gives it an allocation strategy.  A WLM that turns sets into
 * jobspec rabbit storage relies on this pairing, so it is checked:
 *
 *   label                 strategy                per-node share
 *   xfs, gfs2, raw        AllocatePerCompute      minimumCapacity
 *   ost, mdt, mgtmdt      AllocateAcrossServers   minimumCapacity / nodes
 *   mgt                   AllocateSingleServer    minimumCapacity / nodes
 *
 * "lustre" labels (the last two rows) describe a whole file system whose
 * capacity is shared by the job's nodes; the first row is per node.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_LABELS_H
#define DWS_LABELS_H

#include <stdbool.h>

#include "util/error.h"

enum dws_strategy {
    DWS_ALLOCATE_PER_COMPUTE = 0,
    DWS_ALLOCATE_ACROSS_SERVERS,
    DWS_ALLOCATE_SINGLE_SERVER,
};

/* The strategy named `name`, or -1 with "unknown allocationStrategy
 * '<name>'" (AllocatePerServer, in the CRD but never produced by nnf-sos,
 * gets a message of its own).
 */
int dws_strategy_parse (const char *name, enum dws_strategy *strategy, dws_error_t *err);

/* The name of a strategy ("AllocatePerCompute", ...). */
const char *dws_strategy_name (enum dws_strategy strategy);

/* Check that `label` is known and comes with `strategy`.  Sets *lustre
 * (may be NULL) when the label's capacity is for the whole file system.
 * Returns 0, or -1 with "unknown label '<label>'" or "label '<label>' has
 * strategy <S>, expected <T>".
 */
int dws_label_check (const char *label,
                     const char *strategy,
                     bool *lustre,
                     dws_error_t *err);

/* Whether `label` holds part of a Lustre file system (ost, mdt, mgtmdt,
 * mgt): its capacity is for the whole file system.  false for any other.
 */
bool dws_label_is_lustre (const char *label);

#endif /* !DWS_LABELS_H */
