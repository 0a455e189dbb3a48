/* wfview.h - a Workflow read once, where it enters the engine.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_ENGINE_WFVIEW_H
#define DWS_ENGINE_WFVIEW_H

#include "engine/state.h"

/* Fill v from the Workflow object wf (NULL: an empty view).  Strings and
 * JSON values are borrowed from wf: the view lives as long as wf does.
 * Nothing fails: a field that is missing or of the wrong type reads as
 * NULL, false, 0 or WF_NONE.
 */
void wfview_parse (json_t *wf, struct wfview *v);

/* What DWS says of the current state's trouble, for a note: its message
 * as it is; where its user text is empty ("DW Directive 0: Internal
 * error: ", nnf-sos' words for a failed mount or copy), the failing
 * driver's error after it in parentheses.  In buf, or NULL when DWS says
 * nothing.
 */
const char *wfview_dws_text (const struct wfview *v, char *buf, size_t size);

/* The value of annotation key (one of the ANN_* of state.h), or NULL. */
const char *wfview_annotation (const struct wfview *v, const char *key);

/* Is wf (an answer's object) the Workflow v was read from: its name and
 * uid (an object without one matches one without), not one of the same
 * name deleted or created since? */
bool wfview_same (const struct wfview *v, json_t *wf);

#endif /* !DWS_ENGINE_WFVIEW_H */
