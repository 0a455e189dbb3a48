/* SPDX-License-Identifier: LGPL-3.0-or-later */
#include "parse/capacity.h"
#include "tap.h"

static void good (const char *s, long long expect)
{
    int64_t v = -1;
    dws_error_t err;
    int rc = dws_capacity_parse (s, &v, &err);
    ok (rc == 0 && v == expect, "'%s' is %lld bytes (got %lld)", s, expect, (long long)v);
}

static void bad (const char *s)
{
    int64_t v;
    dws_error_t err;
    ok (dws_capacity_parse (s, &v, &err) < 0, "'%s' is rejected: %s", s, err.text);
}

int main (void)
{
    good ("10GiB", 10737418240LL);
    good ("1TB", 1000000000000LL);
    good ("1TiB", 1099511627776LL);
    good ("512MiB", 536870912LL);
    good ("100KB", 100000LL);
    good ("4096", 4096LL);
    good ("1.5GiB", 1610612736LL);
    good (".5KiB", 512LL);
    good ("3PiB", 3377699720527872LL);
    good ("1k", 0);    /* nnf-sos quirk: lowercase k has no multiplier */
    good ("1kiB", 0);
    good ("x10GiB", 10737418240LL); /* nnf matches the end of the string */
    bad ("");
    bad ("GiB");
    bad ("10XB");
    bad ("10 GiB ");
    bad ("99999999999PiB");
    bad (NULL);
    cmp_ok (dws_gib_ceil (1), ==, 1, "1 byte needs 1 GiB");
    cmp_ok (dws_gib_ceil (DWS_GIB), ==, 1, "1 GiB is 1 GiB");
    cmp_ok (dws_gib_ceil (DWS_GIB + 1), ==, 2, "rounded up");
    cmp_ok (dws_gib_ceil (0), ==, 0, "0 is 0");
    return done_testing ();
}
