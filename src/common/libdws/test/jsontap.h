/* jsontap.h - TAP comparison of JSON results for libdws tests.
 *
 * json_is (got, expect, what): when `expect` parses as JSON, `got` must be
 * equal JSON (key order and spacing do not matter); otherwise the texts must
 * be equal (an error message).  `got` may be NULL.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_JSONTAP_H
#define DWS_JSONTAP_H

#include <jansson.h>

#include "tap.h"

__attribute__ ((unused))
static void json_is (const char *got, const char *expect, const char *what)
{
    json_t *g = got ? json_loads (got, JSON_DECODE_ANY, NULL) : NULL;
    json_t *e = json_loads (expect, JSON_DECODE_ANY, NULL);
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

#endif /* !DWS_JSONTAP_H */
