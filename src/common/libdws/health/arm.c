/* arm.c - arming rabbit health's flush timer (arm.h).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include "arm.h"
#include "wire/wire.h"

void arm_flush (struct dws_health *h, double after, json_t *actions)
{
    double due = h->now + after;
    if (h->timer_due > 0 && h->timer_due <= due)
        return;
    h->timer_due = due;
    json_array_append_new (actions,
                           json_pack ("{s:s s:s s:f}", "action", DWS_WIRE_ACTION (TIMER_START), "key",
                                      DWS_HEALTH_FLUSH_TIMER, "after", after));
}

void arm_soon (struct dws_health *h, json_t *actions)
{
    if (h->storage_synced || h->journal_synced || json_object_size (h->holds) > 0)
        arm_flush (h, DWS_HEALTH_FLUSH_DELAY, actions);
}
