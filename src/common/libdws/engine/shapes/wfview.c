/* wfview.c - a Workflow read once, where it enters the engine (a watch
 * event, the answer to its create or to a patch): the fields the engine
 * decides on, in a struct (state.h, struct wfview), so the rest of the
 * engine never walks the object itself, as health/storageview.c reads a
 * Storage.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <stdio.h>
#include <string.h>

#include "util/timestamp.h"
#include "wfstate.h"
#include "wfview.h"

static json_t *at (json_t *o, const char *a, const char *b)
{
    return json_object_get (json_object_get (o, a), b);
}

static const char *str (json_t *v)
{
    return json_string_value (v);
}

static void finalizer (json_t *meta, struct wfview *v)
{
    json_t *fins = json_object_get (meta, "finalizers");
    size_t i;
    json_t *f;
    v->finalizer_index = -1;
    json_array_foreach (fins, i, f) {
        if (json_is_string (f) && !strcmp (json_string_value (f), WORKFLOW_FINALIZER)) {
            v->finalizer_index = (int)i;
            return;
        }
    }
}

static void driver_error (json_t *st, struct wfview *v)
{
    const char *state = str (json_object_get (st, "state"));
    size_t i;
    json_t *d;
    json_array_foreach (json_object_get (st, "drivers"), i, d) {
        const char *err = str (json_object_get (d, "error"));
        const char *ws = str (json_object_get (d, "watchState"));
        if (err && err[0] && ws && state && !strcmp (ws, state)) {
            v->driver_error = err;
            return;
        }
    }
}

void wfview_parse (json_t *wf, struct wfview *v)
{
    memset (v, 0, sizeof (*v));
    v->finalizer_index = -1;
    v->desired = v->state = v->force_ready_state = WF_NONE;
    if (!json_is_object (wf))
        return;
    json_t *meta = json_object_get (wf, "metadata");
    json_t *spec = json_object_get (wf, "spec");
    json_t *st = json_object_get (wf, "status");
    v->name = str (json_object_get (meta, "name"));
    v->uid = str (json_object_get (meta, "uid"));
    v->deleting = json_object_get (meta, "deletionTimestamp") != NULL;
    v->annotations = json_object_get (meta, "annotations");
    finalizer (meta, v);
    v->wlm_id = str (json_object_get (spec, "wlmID"));
    v->desired = wfstate_parse (str (json_object_get (spec, "desiredState")));
    if (json_is_true (json_object_get (spec, "forceReady")))
        v->force_ready_state = v->desired;
    v->user_id = json_integer_value (json_object_get (spec, "userID"));
    v->group_id = json_integer_value (json_object_get (spec, "groupID"));
    v->directives = json_object_get (spec, "dwDirectives");
    if (!json_is_array (v->directives))
        v->directives = NULL;
    v->state = wfstate_parse (str (json_object_get (st, "state")));
    v->ready = json_is_true (json_object_get (st, "ready"));
    v->status = str (json_object_get (st, "status"));
    v->message = str (json_object_get (st, "message"));
    v->elapsed = str (json_object_get (st, "elapsedTimeLastState"));
    if (dws_timestamp_parse (str (json_object_get (meta, "creationTimestamp")), &v->created) < 0)
        v->created = 0;
    if (dws_timestamp_parse (str (json_object_get (st, "readyChange")), &v->ready_change) < 0)
        v->ready_change = 0;
    v->breakdowns = json_object_get (st, "directiveBreakdowns");
    driver_error (st, v);
    v->computes_name = str (at (st, "computes", "name"));
    v->computes_ns = str (at (st, "computes", "namespace"));
    v->env = json_object_get (st, "env");
    if (!json_is_object (v->env))
        v->env = NULL;
    v->token_secret = str (at (st, "workflowToken", "secretName"));
    v->token_ns = str (at (st, "workflowToken", "secretNamespace"));
}

const char *wfview_dws_text (const struct wfview *v, char *buf, size_t size)
{
    const char *m = v->message && v->message[0] ? v->message : NULL;
    const char *d = v->driver_error;
    size_t n = m ? strlen (m) : 0;
    while (n > 0 && m[n - 1] == ' ')
        n--;
    if (m && !(n >= 6 && !strncmp (m + n - 6, "error:", 6)))
        d = NULL; /* the message has DWS' user text: it is what users read */
    if (m && d)
        snprintf (buf, size, "%s (%s)", m, d);
    else if (m || d)
        snprintf (buf, size, "%s", m ? m : d);
    else
        return NULL;
    return buf;
}

const char *wfview_annotation (const struct wfview *v, const char *key)
{
    return json_string_value (json_object_get (v->annotations, key));
}

static bool same_str (const char *a, const char *b)
{
    return a == b || (a && b && !strcmp (a, b));
}

bool wfview_same (const struct wfview *v, json_t *wf)
{
    json_t *meta = json_object_get (wf, "metadata");
    return json_is_object (wf) && v->name
           && same_str (v->name, str (json_object_get (meta, "name")))
           && same_str (v->uid, str (json_object_get (meta, "uid")));
}
