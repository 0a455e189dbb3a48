/* storage.h - a rabbit's health from its Storage object (storageview.h).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_HEALTH_STORAGE_H
#define DWS_HEALTH_STORAGE_H

#include "state.h"

/* Decide from r->sv whether rabbit r is up (why not, or why it is up
 * though not Ready), log a change once the Storage list has come, and set
 * its computes' links (clearing their failed mounts).  Arms the flush.
 */
void storage_decide (struct dws_health *h, struct rabbit *r, json_t *actions);

#endif /* !DWS_HEALTH_STORAGE_H */
