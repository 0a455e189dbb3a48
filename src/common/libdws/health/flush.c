/* flush.c - the flush timer fired (dws_health_flush): each side in turn
 * gets what differs from what it was last given.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include "drain.h"
#include "property.h"
#include "ssd.h"
#include "systemstatus.h"

void dws_health_flush (struct dws_health *h, double now, json_t *actions)
{
    h->now = now;
    h->timer_due = 0;
    ssd_flush (h, actions);
    property_flush (h, SSD_PROPERTY, false, actions);
    property_flush (h, ALLOC_PROPERTY, true, actions);
    drain_flush (h, actions);
    systemstatus_flush (h, actions);
}
