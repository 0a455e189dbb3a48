/* flush.h - when rabbit health flushes: the flush timer, and the flush
 * that sends each side what differs (dws_health_flush).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_HEALTH_FLUSH_H
#define DWS_HEALTH_FLUSH_H

#include "state.h"

/* Arm the flush timer to fire 'after' seconds from h->now, unless it
 * fires sooner already.
 */
void flush_arm (struct dws_health *h, double after, json_t *actions);

/* Something changed: flush soon (DWS_HEALTH_FLUSH_DELAY), if a flush could
 * do anything yet (a hold needs no Storage or journal to go out).
 */
void flush_soon (struct dws_health *h, json_t *actions);

#endif /* !DWS_HEALTH_FLUSH_H */
