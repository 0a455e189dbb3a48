/* SPDX-License-Identifier: LGPL-3.0-or-later */
#include <stdlib.h>
#include <string.h>

#include "idset.h"
#include "tap.h"

static void roundtrip (const char *in, int flags, const char *out)
{
    dws_error_t err;
    char *s = dws_idset_normalize (in, flags, &err);
    is (s, out, "'%s' (flags %d) encodes as '%s'", in, flags, out);
    if (!s)
        diag ("%s", err.text);
    free (s);
}

static void bad (const char *in, const char *msg)
{
    dws_error_t err;
    struct dws_idset *ids = dws_idset_decode (in, &err);
    ok (ids == NULL, "'%s' is rejected", in);
    is (ids ? "" : err.text, msg, "with: %s", msg);
    dws_idset_destroy (ids);
}

int main (void)
{
    dws_error_t err;

    roundtrip ("", 0, "");
    roundtrip ("0", 0, "0");
    roundtrip ("0-3,7", 0, "0-3,7");
    roundtrip ("[0-3,7]", 0, "0-3,7");
    roundtrip ("5,1,3,2,4", 0, "1-5");
    roundtrip ("1-3,2-6,6", 0, "1-6");
    roundtrip ("1-3,5", DWS_IDSET_BRACKETS, "[1-3,5]");
    roundtrip ("7", DWS_IDSET_BRACKETS, "7");
    roundtrip ("1-3,5", DWS_IDSET_NORANGE, "1,2,3,5");
    roundtrip ("4294967294", 0, "4294967294");

    bad ("3-1", "invalid range '3-1' (end before start)");
    bad ("1-", "invalid range '1-'");
    bad ("x", "invalid id 'x'");
    bad ("1,,2", "invalid idset '1,,2': empty element");
    bad ("1,", "invalid idset '1,': trailing comma");
    bad ("[1", "invalid idset '[1': unbalanced brackets");
    bad ("4294967295", "invalid id '4294967295'");
    bad ("-1", "invalid range '-1'");

    struct dws_idset *a = dws_idset_decode ("0-9,20-29", &err);
    struct dws_idset *b = dws_idset_decode ("5-24", &err);
    struct dws_idset *u = dws_idset_union (a, b);
    struct dws_idset *x = dws_idset_intersect (a, b);
    struct dws_idset *d = dws_idset_difference (a, b);
    char *s;
    is ((s = dws_idset_encode (u, 0)), "0-29", "union");
    free (s);
    is ((s = dws_idset_encode (x, 0)), "5-9,20-24", "intersect");
    free (s);
    is ((s = dws_idset_encode (d, 0)), "0-4,25-29", "difference");
    free (s);
    cmp_ok (dws_idset_count (a), ==, 20, "count");
    ok (dws_idset_contains (a, 25) && !dws_idset_contains (a, 15), "contains");
    cmp_ok (dws_idset_first (a), ==, 0, "first");
    cmp_ok (dws_idset_next (a, 9), ==, 20, "next skips the gap");
    cmp_ok (dws_idset_next (a, 29), ==, DWS_IDSET_INVALID, "next past the end");
    cmp_ok (dws_idset_last (a), ==, 29, "last");
    ok (dws_idset_remove (a, 5) == 0, "remove from the middle of a range");
    is ((s = dws_idset_encode (a, 0)), "0-4,6-9,20-29", "range split");
    free (s);
    ok (dws_idset_add (a, 5) == 0 && dws_idset_add (a, 15) == 0, "add");
    is ((s = dws_idset_encode (a, 0)), "0-9,15,20-29", "ranges merge again");
    free (s);
    ok (dws_idset_add_range (a, 10, 19) == 0, "add a bridging range");
    is ((s = dws_idset_encode (a, 0)), "0-29", "bridged");
    free (s);
    ok (dws_idset_add_range (a, 9, 3) == -1, "a reversed range is refused");
    struct dws_idset *c = dws_idset_copy (u);
    ok (c && dws_idset_equal (c, u) && !dws_idset_equal (c, b), "copy and equal");
    struct dws_idset *e = dws_idset_create ();
    cmp_ok (dws_idset_first (e), ==, DWS_IDSET_INVALID, "empty set has no first");
    cmp_ok (dws_idset_count (e), ==, 0, "empty count");

    size_t n;
    unsigned int *ids = dws_idset_expand ("3,1-2", &n, &err);
    ok (ids && n == 3 && ids[0] == 1 && ids[2] == 3, "expand is ascending");
    free (ids);
    ok (dws_idset_expand ("0-4294967294", &n, &err) == NULL, "expanding huge sets fails: %s",
        err.text);
    unsigned int in[] = {1, 2, 3, 7};
    is ((s = dws_idset_compress (in, 4)), "1-3,7", "compress");
    free (s);
    is ((s = dws_idset_op ("1-5", "4-9", '-', &err)), "1-3", "op difference");
    free (s);
    ok (dws_idset_op ("1", "2", '?', &err) == NULL, "unknown op: %s", err.text);
    for (struct dws_idset **p = (struct dws_idset *[]){a, b, u, x, d, c, e, NULL}; *p; p++)
        dws_idset_destroy (*p);
    return done_testing ();
}
