/* action.c - actions shared by the decision modules (action.h).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "action.h"
#include "util/error.h"
#include "wire.h"

void dws_act_vlog (json_t *actions, const char *level, const char *fmt, va_list ap)
{
    char msg[DWS_ERROR_TEXT_MAX];
    vsnprintf (msg, sizeof (msg), fmt, ap);
    json_array_append_new (actions, json_pack ("{s:s s:s s:s}", "action", DWS_WIRE_ACTION (LOG), "level",
                                               level, "message", msg));
}

void dws_act_log (json_t *actions, const char *level, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    dws_act_vlog (actions, level, fmt, ap);
    va_end (ap);
}

char *dws_strdup_null (const char *s)
{
    return s ? strdup (s) : NULL;
}
