/* SPDX-License-Identifier: LGPL-3.0-or-later
 *
 * Kubernetes' times as unix time (util/timestamp.h).
 */
#include <string.h>

#include "tap.h"
#include "util/timestamp.h"

static void parses (const char *s, double expect)
{
    double t = -1;
    ok (dws_timestamp_parse (s, &t) == 0 && t > expect - 1e-6 && t < expect + 1e-6,
        "%s is %.6f (got %.6f)", s, expect, t);
}

static void refused (const char *s)
{
    double t = 0;
    ok (dws_timestamp_parse (s, &t) < 0, "%s is refused", s ? s : "NULL");
}

int main (void)
{
    parses ("1970-01-01T00:00:00Z", 0);
    parses ("2026-11-27T23:10:00Z", 1795821000);
    parses ("2026-11-27T23:10:00.123456Z", 1795821000.123456);
    parses ("2026-11-27T23:10:00.5+01:00", 1795817400.5);
    parses ("2026-11-27T23:10:00-00:30", 1795822800);
    parses ("2024-02-29t12:00:00z", 1709208000);
    refused (NULL);
    refused ("");
    refused ("2026-11-27");
    refused ("2026-11-27 23:10:00Z");
    refused ("2026-13-27T23:10:00Z");
    refused ("2026-11-27T23:10:00");
    refused ("2026-11-27T23:10:00.Z");
    refused ("2026-11-27T23:10:00Zjunk");
    refused ("2026-11-27T23:10:00+0100");
    refused ("x026-11-27T23:10:00Z");
    return done_testing ();
}
