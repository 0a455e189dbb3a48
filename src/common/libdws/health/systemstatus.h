/* systemstatus.h - DWS' SystemStatus: the computes DWS must leave out.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_HEALTH_SYSTEMSTATUS_H
#define DWS_HEALTH_SYSTEMSTATUS_H

#include "state.h"

/* A compute's host as SystemStatus sees it, over every rank of that host
 * that is not excluded: a test instance (flux start --test-hosts) may give
 * several ranks one hostname, and DWS knows only hostnames.
 */
struct host_state {
    bool ours;    /* a rank of this instance, not excluded, has this host */
    bool offline; /* one of them is offline */
    bool unmount; /* one of them is drained for a failed unmount */
};

struct host_state systemstatus_host (struct dws_health *h, const struct compute *c);

/* Once the journal is read: one SystemStatus patch for the computes whose
 * value (Disabled: offline, or drained after a failed unmount; else
 * Enabled) differs from what DWS was last given.
 */
void systemstatus_flush (struct dws_health *h, json_t *actions);

#endif /* !DWS_HEALTH_SYSTEMSTATUS_H */
