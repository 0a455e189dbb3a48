/* arm.h - arming rabbit health's flush timer (DWS_HEALTH_FLUSH_TIMER):
 * inputs change state and arm it; the flush (flush.c) sends what differs.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_HEALTH_ARM_H
#define DWS_HEALTH_ARM_H

#include "state.h"

/* Arm the flush timer to fire 'after' seconds from h->now, unless it
 * fires sooner already.
 */
void arm_flush (struct dws_health *h, double after, json_t *actions);

/* Something changed: flush soon (DWS_HEALTH_FLUSH_DELAY), if a flush could
 * do anything yet (a hold needs no Storage or journal to go out).
 */
void arm_soon (struct dws_health *h, json_t *actions);

#endif /* !DWS_HEALTH_ARM_H */
