/* fluxion.h - what Fluxion has of the ssd vertices: its restarts, its
 * answer to find status=down, and the find that asks.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_HEALTH_FLUXION_H
#define DWS_HEALTH_FLUXION_H

#include "state.h"

/* Ask Fluxion which vertices it has down, on the handle the set_status go
 * out on: its answer then reflects every one sent before, and none is
 * sent until it comes (ssd_flush).  Nothing if a find is in flight.
 */
void fluxion_ask (struct dws_health *h, json_t *actions);

/* Start each ssd vertex from what Fluxion said it has, so only those that
 * differ from what they should be are sent.  Done at the first ssd flush
 * after the answer, when the graph is whatever it turned out to be, so
 * their arriving in either order loses nothing.
 */
void fluxion_seed (struct dws_health *h, json_t *actions);

#endif /* !DWS_HEALTH_FLUXION_H */
