/* link.h - a compute's PCIe link to its rabbit, as health reads it.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_HEALTH_LINK_H
#define DWS_HEALTH_LINK_H

#include "state.h"

/* A compute's link as the drains see it (compute.link_seen). */
enum { LINK_UP = 0, LINK_DOWN = 1, LINK_FENCED = 2 };

/* Down: reported and neither Ready nor Degraded (DWS: "ready but
 * operating in a degraded state").
 */
bool link_down (const struct compute *c);

/* nnf-sos fenced the compute (DWS #266): it fails every Workflow using it. */
bool link_fenced (const struct compute *c);

/* LINK_FENCED, LINK_DOWN or LINK_UP. */
int link_state (const struct compute *c);

/* Whether a drain reason is one of ours: "rabbit <name> link <status>",
 * "rabbit <name>" DWS_HEALTH_FENCED_REASON.
 */
bool link_is_drain_reason (const char *reason);

#endif /* !DWS_HEALTH_LINK_H */
