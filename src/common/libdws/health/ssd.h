/* ssd.h - the flush of the ssd vertices' status to Fluxion.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_HEALTH_SSD_H
#define DWS_HEALTH_SSD_H

#include "state.h"

/* With Fluxion and its graph known: ask Fluxion what it has if that is
 * not known yet, else send set_status for each vertex that differs from
 * what it should be (down when held or its rabbit is down), one batch per
 * rabbit.
 */
void ssd_flush (struct dws_health *h, json_t *actions);

#endif /* !DWS_HEALTH_SSD_H */
