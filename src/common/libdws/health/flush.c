/* flush.c - when rabbit health flushes (flush.h), and the flush: each
 * side in turn gets what differs from what it was last given.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include "drain.h"
#include "flush.h"
#include "property.h"
#include "ssd.h"
#include "systemstatus.h"
#include "wire.h"

void flush_arm (struct dws_health *h, double after, json_t *actions)
{
    double due = h->now + after;
    if (h->timer_due > 0 && h->timer_due <= due)
        return;
    h->timer_due = due;
    json_array_append_new (actions,
                           json_pack ("{s:s s:s s:f}", "action", DWS_WIRE_ACTION (TIMER_START), "key",
                                      DWS_HEALTH_FLUSH_TIMER, "after", after));
}

void flush_soon (struct dws_health *h, json_t *actions)
{
    if (h->storage_synced || h->journal_synced || json_object_size (h->holds) > 0)
        flush_arm (h, DWS_HEALTH_FLUSH_DELAY, actions);
}

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
