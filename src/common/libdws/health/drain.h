/* drain.h - drains of computes whose rabbit link went down (health.h's
 * rules): edge-triggered, one resource.drain per reason, one undrain.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_HEALTH_DRAIN_H
#define DWS_HEALTH_DRAIN_H

#include "state.h"

/* Once the journal and the Storage list are read: drain the computes
 * whose link went down or fenced since last seen, undrain those whose
 * link came back while our drain is in place.
 */
void drain_flush (struct dws_health *h, json_t *actions);

#endif /* !DWS_HEALTH_DRAIN_H */
