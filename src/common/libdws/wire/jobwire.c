/* jobwire.c - the jobtap plugin's action names of jobwire.h, by number and
 * by name.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <string.h>

#include "jobwire.h"

static const char *const action_names[DWS_JOBWIRE_ACT_COUNT] = {
#define ACTION_NAME(id, name) [DWS_JOBWIRE_ACT_##id] = name,
    DWS_JOBWIRE_ACTIONS (ACTION_NAME)
#undef ACTION_NAME
};

const char *dws_jobwire_action_name (int action)
{
    return action >= 0 && action < DWS_JOBWIRE_ACT_COUNT ? action_names[action] : NULL;
}

int dws_jobwire_action_parse (const char *name)
{
    for (int i = 0; name && i < DWS_JOBWIRE_ACT_COUNT; i++)
        if (!strcmp (name, action_names[i]))
            return i;
    return -1;
}

int dws_jobwire_action_count (void)
{
    return DWS_JOBWIRE_ACT_COUNT;
}

int dws_jobwire_service_dependency (const char *name)
{
#define DWS_JOBWIRE_DEP_MATCH(id, n)                                                           \
    if (name && !strcmp (name, n))                                                             \
        return 1;
    DWS_JOBWIRE_SERVICE_DEPENDENCIES (DWS_JOBWIRE_DEP_MATCH)
#undef DWS_JOBWIRE_DEP_MATCH
    return 0;
}

bool dws_jobwire_own_dependency (const char *name)
{
    return name
           && (!strcmp (name, DWS_JOBWIRE_DEPENDENCY) || dws_jobwire_service_dependency (name));
}
