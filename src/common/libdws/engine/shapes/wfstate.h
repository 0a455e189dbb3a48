/* wfstate.h - the names of a Workflow's states (enum wf_state, state.h).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_ENGINE_WFSTATE_H
#define DWS_ENGINE_WFSTATE_H

#include "engine/state.h"

/* "Proposal" ... "Teardown"; "" for none. */
const char *wfstate_name (enum wf_state s);
/* The state DWS spells s, or WF_NONE. */
enum wf_state wfstate_parse (const char *s);

#endif /* !DWS_ENGINE_WFSTATE_H */
