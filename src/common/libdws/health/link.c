/* link.c - a compute's PCIe link to its rabbit (link.h).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <string.h>

#include "link.h"

bool link_down (const struct compute *c)
{
    return c->link[0] && strcmp (c->link, "Ready") != 0 && strcmp (c->link, "Degraded") != 0;
}

bool link_fenced (const struct compute *c)
{
    return !strcmp (c->link, "Fenced");
}

int link_state (const struct compute *c)
{
    return link_fenced (c) ? LINK_FENCED : link_down (c) ? LINK_DOWN : LINK_UP;
}

bool link_is_drain_reason (const char *reason)
{
    return reason && !strncmp (reason, "rabbit ", 7)
           && (strstr (reason, " link ") != NULL
               || strstr (reason, DWS_HEALTH_FENCED_REASON) != NULL);
}
