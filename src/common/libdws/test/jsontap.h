/* jsontap.h - TAP comparison of JSON results for libdws tests.
 *
 * json_is (got, expect, what): when `expect` parses as JSON, `got` must be
 * equal JSON (key order and spacing do not matter); otherwise the texts must
 * be equal (an error message).  `got` may be NULL.  A "raise" action's
 * note in `expect` must be equal exactly; when explain.h knows it, the
 * post-event action carrying its plain sentence (DWS_EXPLAIN_EVENT) must
 * follow it, and `expect` need not spell that out.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_JSONTAP_H
#define DWS_JSONTAP_H

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "util/error.h"
#include "wire/explain.h"
#include "tap.h"

/* After each raise action in v (an action or a list of them) whose note
 * explain.h knows, the post-event action that carries its sentence, as
 * the jobtap machine and the dataout machine return it: the note itself
 * stays exactly as written.  Returns v, or a new list when v was a lone
 * raise that gained one.
 */
static json_t *jsontap_explain_notes (json_t *v)
{
    const char *action = json_string_value (json_object_get (v, "action"));
    const char *note = json_string_value (json_object_get (v, "note"));
    if (json_is_array (v)) {
        for (size_t i = 0; i < json_array_size (v); i++) {
            json_t *a = json_array_get (v, i);
            json_t *pair = jsontap_explain_notes (json_incref (a));
            if (pair != a) { /* a raise and its post-event */
                json_array_insert (v, i + 1, json_array_get (pair, 1));
                i++;
            }
            json_decref (pair);
        }
        return v;
    }
    if (action && note && !strcmp (action, "raise")) {
        char sentence[DWS_EXPLAIN_MAX];
        json_t *post, *pair;
        if (!dws_explain (note, sentence, sizeof (sentence)))
            return v;
        post = json_pack ("{s:s s:s s:{s:O s:s s:s}}", "action", "post-event", "name",
                          DWS_EXPLAIN_EVENT, "context", "type", json_object_get (v, "type"),
                          "note", note, "explanation", sentence);
        if (post && json_object_get (v, "id"))
            json_object_set (post, "id", json_object_get (v, "id"));
        pair = json_pack ("[O o]", v, post);
        json_decref (v);
        return pair;
    }
    return v;
}

__attribute__ ((unused))
static void json_is (const char *got, const char *expect, const char *what)
{
    json_t *g = got ? json_loads (got, JSON_DECODE_ANY, NULL) : NULL;
    json_t *e = json_loads (expect, JSON_DECODE_ANY, NULL);
    e = e ? jsontap_explain_notes (e) : NULL;
    if (g && e) {
        if (!ok (json_equal (g, e), "%s", what)) {
            diag ("     got: %s", got);
            diag ("expected: %s", expect);
        }
    }
    else
        is (got, expect, "%s", what);
    json_decref (g);
    json_decref (e);
}

/* json_dump_is (got, expect, errtext, flags, what): got (malloc'd, freed
 * here; NULL means the call failed with errtext) and expect, both dumped
 * compactly with jansson `flags` (JSON_SORT_KEYS, or JSON_PRESERVE_ORDER
 * where key order is part of the result), must be the same text.
 */
__attribute__ ((unused))
static void json_dump_is (char *got, const char *expect, const char *errtext, size_t flags,
                          const char *what)
{
    json_t *g = got ? json_loads (got, 0, NULL) : NULL;
    json_t *e = json_loads (expect, 0, NULL);
    if (g && e) {
        char *gs = json_dumps (g, JSON_COMPACT | flags);
        char *es = json_dumps (e, JSON_COMPACT | flags);
        is (gs, es, "%s", what);
        free (gs);
        free (es);
    }
    else
        is (got ? got : errtext, expect, "%s", what);
    json_decref (g);
    json_decref (e);
    free (got);
}

#endif /* !DWS_JSONTAP_H */
