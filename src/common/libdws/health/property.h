/* property.h - the badrabbit and alloc_rabbit node properties in Fluxion.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_HEALTH_PROPERTY_H
#define DWS_HEALTH_PROPERTY_H

#include "state.h"

/* One set_property and one remove_property for node property 'prop'
 * (SSD_PROPERTY: alloc false; ALLOC_PROPERTY: alloc true), for the
 * computes whose value differs from what Fluxion was last given.
 */
void property_flush (struct dws_health *h, const char *prop, bool alloc, json_t *actions);

/* Every compute's properties unknown to Fluxion: sent again at the next
 * flush (a new graph, a Fluxion restart, a configuration they depend on).
 */
void property_forget (struct dws_health *h);

#endif /* !DWS_HEALTH_PROPERTY_H */
