/* SPDX-License-Identifier: LGPL-3.0-or-later */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "util/idset.h"

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

static void test_edges (void)
{
    dws_error_t err;
    struct dws_idset *all = dws_idset_decode ("0-4294967294", &err);
    char *s;
    cmp_ok (dws_idset_count (all), ==, 4294967295u, "the largest set counts every id");
    cmp_ok (dws_idset_last (all), ==, 4294967294u, "last");
    cmp_ok (dws_idset_next (all, 4294967293u), ==, 4294967294u, "next to the last id");
    cmp_ok (dws_idset_next (all, 4294967294u), ==, DWS_IDSET_INVALID, "nothing after it");
    ok (dws_idset_encode (all, DWS_IDSET_NORANGE) == NULL, "spelling out 4G ids is refused");
    is ((s = dws_idset_encode (all, DWS_IDSET_BRACKETS)), "[0-4294967294]", "ranges are fine");
    free (s);
    ok (dws_idset_add (all, DWS_IDSET_INVALID) == -1, "DWS_IDSET_INVALID cannot be added");
    ok (dws_idset_remove (all, 0) == 0 && dws_idset_remove (all, 4294967294u) == 0
            && dws_idset_remove (all, 7) == 0,
        "remove at both ends and inside");
    is ((s = dws_idset_encode (all, 0)), "1-6,8-4294967293", "after removals");
    free (s);
    ok (dws_idset_remove (all, 7) == 0, "removing an absent id is fine");
    dws_idset_destroy (all);

    struct dws_idset *e = dws_idset_create ();
    struct dws_idset *one = dws_idset_decode ("5", &err);
    ok (dws_idset_equal (e, e) && !dws_idset_equal (e, one), "equal with the empty set");
    ok (!dws_idset_contains (e, 0), "the empty set contains nothing");
    cmp_ok (dws_idset_last (e), ==, DWS_IDSET_INVALID, "nor has a last id");
    cmp_ok (dws_idset_next (e, 0), ==, DWS_IDSET_INVALID, "nor a next");
    struct dws_idset *r = dws_idset_difference (one, e);
    ok (r && dws_idset_equal (r, one), "x - {} = x");
    dws_idset_destroy (r);
    r = dws_idset_intersect (one, e);
    ok (r && dws_idset_count (r) == 0, "x & {} = {}");
    dws_idset_destroy (r);
    ok (dws_idset_remove (one, 5) == 0 && dws_idset_count (one) == 0, "remove the only id");
    dws_idset_destroy (one);
    dws_idset_destroy (e);
    ok (dws_idset_op ("x", "1", '|', &err) == NULL, "op reports decode errors: %s", err.text);
    ok (dws_idset_normalize ("1-", 0, &err) == NULL, "normalize reports decode errors: %s",
        err.text);
}

/* Set operations against a bitmap, on random sets. */
static unsigned long long rng_state = 42;
static unsigned rnd (unsigned n)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (unsigned)((rng_state >> 33) % n);
}

#define U 300
static struct dws_idset *random_set (bool *bits)
{
    struct dws_idset *ids = dws_idset_create ();
    memset (bits, 0, U);
    for (int k = (int)rnd (12); k > 0; k--) {
        unsigned lo = rnd (U), hi = lo + rnd (40);
        if (hi >= U)
            hi = U - 1;
        if (rnd (3) == 0)
            hi = lo;
        dws_idset_add_range (ids, lo, hi);
        for (unsigned v = lo; v <= hi; v++)
            bits[v] = true;
    }
    for (int k = (int)rnd (6); k > 0; k--) {
        unsigned v = rnd (U);
        dws_idset_remove (ids, v);
        bits[v] = false;
    }
    return ids;
}

static bool matches (const struct dws_idset *ids, const bool *bits)
{
    size_t n = 0;
    unsigned prev = DWS_IDSET_INVALID;
    for (unsigned v = 0; v < U; v++) {
        if (dws_idset_contains (ids, v) != bits[v])
            return false;
        n += bits[v];
    }
    /* iteration visits exactly the members, ascending */
    for (unsigned v = dws_idset_first (ids); v != DWS_IDSET_INVALID; v = dws_idset_next (ids, v)) {
        if (v >= U || !bits[v] || (prev != DWS_IDSET_INVALID && v <= prev))
            return false;
        prev = v;
    }
    return dws_idset_count (ids) == n;
}

static void test_random (void)
{
    int bad = 0;
    for (int round = 0; round < 300; round++) {
        bool a[U], b[U], want[U];
        struct dws_idset *x = random_set (a), *y = random_set (b);
        struct dws_idset *u = dws_idset_union (x, y), *i = dws_idset_intersect (x, y);
        struct dws_idset *d = dws_idset_difference (x, y);
        char *s = dws_idset_encode (x, DWS_IDSET_BRACKETS);
        struct dws_idset *back = s ? dws_idset_decode (s, NULL) : NULL;
        if (!matches (x, a) || !back || !dws_idset_equal (back, x))
            bad++;
        for (int v = 0; v < U; v++)
            want[v] = a[v] || b[v];
        bad += !matches (u, want);
        for (int v = 0; v < U; v++)
            want[v] = a[v] && b[v];
        bad += !matches (i, want);
        for (int v = 0; v < U; v++)
            want[v] = a[v] && !b[v];
        bad += !matches (d, want);
        free (s);
        for (struct dws_idset **p = (struct dws_idset *[]){x, y, u, i, d, back, NULL}; *p; p++)
            dws_idset_destroy (*p);
    }
    ok (bad == 0, "union, intersection, difference, iteration and round trips of 300 random pairs");
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
    roundtrip ("4294967293-4294967294", 0, "4294967293-4294967294");
    roundtrip ("[]", 0, "");
    roundtrip ("[]", DWS_IDSET_BRACKETS, "");
    roundtrip ("007,08", 0, "7-8");
    roundtrip ("3,3,3", 0, "3");
    roundtrip ("10-20,1-30", 0, "1-30");
    roundtrip ("1,3,5,2,4", DWS_IDSET_BRACKETS | DWS_IDSET_NORANGE, "[1,2,3,4,5]");
    roundtrip ("0-11135", DWS_IDSET_BRACKETS, "[0-11135]");

    bad ("3-1", "invalid range '3-1' (end before start)");
    bad ("1-", "invalid range '1-'");
    bad ("x", "invalid id 'x'");
    bad ("1,,2", "invalid idset '1,,2': empty element");
    bad ("1,", "invalid idset '1,': trailing comma");
    bad ("[1", "invalid idset '[1': unbalanced brackets");
    bad ("4294967295", "invalid id '4294967295' (ids are at most 4294967294)");
    bad ("99999999999999999999999", "invalid id '99999999999999999999999' (ids are at most 4294967294)");
    bad ("1-4294967295", "invalid range '1-4294967295' (ids are at most 4294967294)");
    bad ("-1", "invalid range '-1'");
    bad ("1-2-3", "invalid range '1-2-3'");
    bad ("1-x", "invalid range '1-x'");
    bad (" 1", "invalid id ' 1'");
    bad ("1 ", "invalid id '1 '");
    bad ("0x10", "invalid id '0x10'");
    bad ("+1", "invalid id '+1'");
    bad (",", "invalid idset ',': empty element");
    bad (",1", "invalid idset ',1': empty element");
    bad ("[1,]", "invalid idset '[1,]': trailing comma");
    bad ("1]", "invalid idset '1]': unbalanced brackets");
    bad ("[[1]]", "invalid idset '[[1]]': unbalanced brackets");
    bad ("[", "invalid idset '[': unbalanced brackets");
    ok (dws_idset_decode (NULL, &err) == NULL, "NULL is rejected: %s", err.text);
    ok (dws_idset_decode ("x", NULL) == NULL, "errors without an error buffer");

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
    test_edges ();
    test_random ();
    return done_testing ();
}
