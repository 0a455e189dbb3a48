/* SPDX-License-Identifier: LGPL-3.0-or-later */
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "util/hostfind.h"

#define NUM(p, lo, hi, w, pos) {p, sizeof (p) - 1, true, lo, hi, w, pos}
#define NAME(p, pos) {p, sizeof (p) - 1, false, 0, 0, 0, pos}

int main (void)
{
    struct dws_hostfind *f = dws_hostfind_create (NULL, 0);
    ok (f != NULL, "an empty index");
    cmp_ok (dws_hostfind_lookup (f, "n1"), ==, -1, "finds nothing");
    cmp_ok (dws_hostfind_lookup (f, ""), ==, -1, "not even ''");
    dws_hostfind_destroy (f);

    cmp_ok (dws_digits (0), ==, 1, "0 has one digit");
    cmp_ok (dws_digits (9), ==, 1, "9 has one digit");
    cmp_ok (dws_digits (10), ==, 2, "10 has two");
    cmp_ok (dws_digits (999999999999999999ULL), ==, 18, "10^18 - 1 has 18");
    cmp_ok (dws_digits (18446744073709551615ULL), ==, 20, "the largest has 20");

    /* overlapping ranges: earlier positions win, whatever the order */
    struct dws_hostfind_range ov[] = {
        NUM ("n", 10, 20, 0, 0),  /* positions 0..10 */
        NUM ("n", 5, 15, 0, 11),  /* 11..21 */
        NUM ("n", 12, 30, 0, 22), /* 22..40 */
        NUM ("n", 3, 3, 0, 41),
        NUM ("n", 3, 3, 0, 42),
        NAME ("login", 43),
        NAME ("login", 44),
    };
    f = dws_hostfind_create (ov, sizeof (ov) / sizeof (ov[0]));
    cmp_ok (dws_hostfind_lookup (f, "n5"), ==, 11, "n5 only in the second range");
    cmp_ok (dws_hostfind_lookup (f, "n12"), ==, 2, "n12 first in the first range");
    cmp_ok (dws_hostfind_lookup (f, "n20"), ==, 10, "n20 last of the first range");
    cmp_ok (dws_hostfind_lookup (f, "n21"), ==, 31, "n21 only in the third");
    cmp_ok (dws_hostfind_lookup (f, "n30"), ==, 40, "n30");
    cmp_ok (dws_hostfind_lookup (f, "n3"), ==, 41, "repeated single: first");
    cmp_ok (dws_hostfind_lookup (f, "n4"), ==, -1, "gap");
    cmp_ok (dws_hostfind_lookup (f, "n31"), ==, -1, "past the end");
    cmp_ok (dws_hostfind_lookup (f, "n05"), ==, -1, "padding must match");
    cmp_ok (dws_hostfind_lookup (f, "login"), ==, 43, "plain name: first");
    cmp_ok (dws_hostfind_lookup (f, "n"), ==, -1, "bare prefix");
    dws_hostfind_destroy (f);

    /* a later range that starts earlier and covers everything */
    struct dws_hostfind_range late[] = {
        NUM ("x", 50, 60, 0, 0),
        NUM ("x", 1, 100, 0, 11),
    };
    f = dws_hostfind_create (late, 2);
    cmp_ok (dws_hostfind_lookup (f, "x49"), ==, 11 + 48, "x49 from the second range");
    cmp_ok (dws_hostfind_lookup (f, "x55"), ==, 5, "x55 from the first");
    cmp_ok (dws_hostfind_lookup (f, "x61"), ==, 11 + 60, "x61 from the second");
    dws_hostfind_destroy (f);

    /* printed widths: a padded range changes width where numbers outgrow it */
    struct dws_hostfind_range w[] = {
        NUM ("p", 8, 1200, 3, 0), /* p008 .. p999, p1000 .. p1200 */
        NUM ("q", 8, 12, 0, 1193),
        NUM ("r1", 2, 3, 0, 1198), /* r12, r13 */
        NUM ("", 0, 5, 0, 1200),
        NUM ("big", 999999999999999990ULL, 999999999999999999ULL, 0, 1206),
    };
    f = dws_hostfind_create (w, sizeof (w) / sizeof (w[0]));
    cmp_ok (dws_hostfind_lookup (f, "p008"), ==, 0, "p008");
    cmp_ok (dws_hostfind_lookup (f, "p8"), ==, -1, "p8 is not p008");
    cmp_ok (dws_hostfind_lookup (f, "p999"), ==, 991, "p999");
    cmp_ok (dws_hostfind_lookup (f, "p1000"), ==, 992, "p1000 outgrows the padding");
    cmp_ok (dws_hostfind_lookup (f, "p01000"), ==, -1, "p01000 is not there");
    cmp_ok (dws_hostfind_lookup (f, "q9"), ==, 1194, "q9");
    cmp_ok (dws_hostfind_lookup (f, "q10"), ==, 1195, "q10");
    cmp_ok (dws_hostfind_lookup (f, "q09"), ==, -1, "q09 is not q9");
    cmp_ok (dws_hostfind_lookup (f, "r13"), ==, 1199, "a prefix ending in digits");
    cmp_ok (dws_hostfind_lookup (f, "5"), ==, 1205, "an empty prefix");
    cmp_ok (dws_hostfind_lookup (f, "big999999999999999999"), ==, 1215, "18 digits");
    cmp_ok (dws_hostfind_lookup (f, "big1999999999999999999"), ==, -1, "19 digits");
    dws_hostfind_destroy (f);
    dws_hostfind_destroy (NULL);
    return done_testing ();
}
