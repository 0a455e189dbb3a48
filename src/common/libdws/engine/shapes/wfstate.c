/* wfstate.c - the names of a Workflow's states (DWS' spellings), the one
 * list of them: Python reads it through dws_wfstate_name (engine.h).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <string.h>

#include "engine/engine.h"
#include "wfstate.h"

static const char *state_names[WF_NSTATES] = {
    "Proposal", "Setup", "DataIn", "PreRun", "PostRun", "DataOut", "Teardown",
};

const char *wfstate_name (enum wf_state s)
{
    return s >= 0 && s < WF_NSTATES ? state_names[s] : "";
}

enum wf_state wfstate_parse (const char *s)
{
    for (int i = 0; s && i < WF_NSTATES; i++)
        if (!strcmp (s, state_names[i]))
            return (enum wf_state)i;
    return WF_NONE;
}

int dws_wfstate_count (void)
{
    return WF_NSTATES;
}

const char *dws_wfstate_name (int i)
{
    return i >= 0 && i < WF_NSTATES ? state_names[i] : NULL;
}
