/* hold.h - jobs holding ssd vertices down in Fluxion (dws_health_hold).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_HEALTH_HOLD_H
#define DWS_HEALTH_HOLD_H

#include "state.h"

/* How many jobs hold each ssd vertex of the graph (after a new graph). */
void hold_count (struct dws_health *h);

/* Every hold waits for Fluxion again: listed by holds_applied when it is
 * applied again, even if no one asked in between.
 */
void hold_unreport_all (struct dws_health *h);

/* Fluxion has said that every vertex of 'hold' (an entry of h->holds) is
 * down (no Fluxion: nothing to wait for).
 */
bool hold_is_applied (struct dws_health *h, json_t *hold);

#endif /* !DWS_HEALTH_HOLD_H */
