/* wire.c - the engine <-> shell names of wire.h, by number and by name.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <string.h>

#include "wire.h"

static const char *const event_names[DWS_WIRE_EV_COUNT] = {
#define EVENT_NAME(id, name) [DWS_WIRE_EV_##id] = name,
    DWS_WIRE_EVENTS (EVENT_NAME)
#undef EVENT_NAME
};

static const char *const action_names[DWS_WIRE_ACT_COUNT] = {
#define ACTION_NAME(id, name) [DWS_WIRE_ACT_##id] = name,
    DWS_WIRE_ACTIONS (ACTION_NAME)
#undef ACTION_NAME
};

static int parse (const char *const *names, int count, const char *name)
{
    for (int i = 0; name && i < count; i++)
        if (!strcmp (name, names[i]))
            return i;
    return -1;
}

const char *dws_wire_event_name (int event)
{
    return event >= 0 && event < DWS_WIRE_EV_COUNT ? event_names[event] : NULL;
}

const char *dws_wire_action_name (int action)
{
    return action >= 0 && action < DWS_WIRE_ACT_COUNT ? action_names[action] : NULL;
}

int dws_wire_event_parse (const char *name)
{
    return parse (event_names, DWS_WIRE_EV_COUNT, name);
}

int dws_wire_action_parse (const char *name)
{
    return parse (action_names, DWS_WIRE_ACT_COUNT, name);
}

int dws_wire_event_count (void)
{
    return DWS_WIRE_EV_COUNT;
}

int dws_wire_action_count (void)
{
    return DWS_WIRE_ACT_COUNT;
}

const char *dws_wire_health_flush_timer (void)
{
    return DWS_WIRE_HEALTH_FLUSH_TIMER;
}
