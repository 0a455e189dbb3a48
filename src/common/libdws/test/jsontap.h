/* jsontap.h - TAP comparison of JSON results for libdws tests.
 *
 * json_is (got, expect, what): when `expect` parses as JSON, `got` must be
 * equal JSON (key order and spacing do not matter); otherwise the texts must
 * be equal (an error message).  `got` may be NULL.  The note of a "raise"
 * action in `expect` is written as the code words it: what it must equal
 * is that text exactly, followed by the plain sentence explain.h appends
 * (when a row knows it).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_JSONTAP_H
#define DWS_JSONTAP_H

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "error.h"
#include "explain.h"
#include "tap.h"

/* Each raise action's note in v (an action or a list of them), explained
 * as the engine and the jobtap machine explain the notes they raise.
 */
static void jsontap_explain_notes (json_t *v)
{
    size_t i;
    json_t *a;
    const char *action, *note;
    if (json_is_array (v)) {
        json_array_foreach (v, i, a)
            jsontap_explain_notes (a);
        return;
    }
    action = json_string_value (json_object_get (v, "action"));
    note = json_string_value (json_object_get (v, "note"));
    if (action && note && !strcmp (action, "raise")) {
        char buf[DWS_ERROR_TEXT_MAX + DWS_EXPLAIN_MAX + 8];
        dws_explain_note (note, buf, sizeof (buf));
        json_object_set_new (v, "note", json_string (buf));
    }
}

__attribute__ ((unused))
static void json_is (const char *got, const char *expect, const char *what)
{
    json_t *g = got ? json_loads (got, JSON_DECODE_ANY, NULL) : NULL;
    json_t *e = json_loads (expect, JSON_DECODE_ANY, NULL);
    jsontap_explain_notes (e);
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
