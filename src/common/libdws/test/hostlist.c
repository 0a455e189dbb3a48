/* SPDX-License-Identifier: LGPL-3.0-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "util/hostlist.h"

/* decode then encode */
static void roundtrip (const char *in, const char *out)
{
    dws_error_t err;
    struct dws_hostlist *hl = dws_hostlist_decode (in, &err);
    char *s = hl ? dws_hostlist_encode (hl) : NULL;
    is (s, out, "'%s' encodes as '%s'", in, out);
    if (!hl)
        diag ("decode error: %s", err.text);
    free (s);
    dws_hostlist_destroy (hl);
}

/* decode, then the names joined by commas */
static void expands (const char *in, const char *names)
{
    dws_error_t err;
    struct dws_hostlist *hl = dws_hostlist_decode (in, &err);
    char *s = hl ? dws_hostlist_names_text (hl, &err) : NULL;
    for (char *p = s; p && *p; p++)
        if (*p == '\n')
            *p = ',';
    is (s, names, "'%s' holds %s", in, names);
    if (!s)
        diag ("error: %s", err.text);
    free (s);
    dws_hostlist_destroy (hl);
}

static void bad (const char *in, const char *msg)
{
    dws_error_t err;
    struct dws_hostlist *hl = dws_hostlist_decode (in, &err);
    ok (hl == NULL, "'%s' is rejected", in);
    is (hl ? "" : err.text, msg, "with: %s", msg);
    dws_hostlist_destroy (hl);
}

static void test_codec (void)
{
    roundtrip ("", "");
    roundtrip ("foo", "foo");
    roundtrip ("foo1", "foo1");
    roundtrip ("foo1,foo2,foo3", "foo[1-3]");
    roundtrip ("foo[1-3,5]", "foo[1-3,5]");
    roundtrip ("foo[1-3],foo[4-6]", "foo[1-6]");
    roundtrip ("foo[01-10]", "foo[01-10]");
    roundtrip ("foo09,foo10", "foo[09-10]");
    roundtrip ("foo9,foo10", "foo[9-10]");
    roundtrip ("foo[008-010]", "foo[008-010]");
    roundtrip ("foo[98-100]", "foo[98-100]");
    roundtrip ("foo[098-100]", "foo[098-100]");
    roundtrip ("foo1,bar1,foo2", "foo1,bar1,foo2");
    roundtrip ("foo[3,1-2]", "foo[3,1-2]");
    roundtrip ("compute-01,compute-02,compute-03", "compute-[01-03]");
    roundtrip ("login,foo[1-2],login", "login,foo[1-2],login");
    roundtrip ("123,124", "[123-124]");
    roundtrip ("[1-3]", "[1-3]");
    roundtrip ("elcap[201-896,1001-12136]", "elcap[201-896,1001-12136]");
    roundtrip ("n1a,n1b", "n1a,n1b");
    roundtrip ("rack1-node[1-2]", "rack1-node[1-2]");
    /* flux-core's test vectors */
    roundtrip ("foo-1a-2,foo-1a-3", "foo-1a-[2-3]");
    roundtrip ("foo1,foo2,foo3,fooi", "foo[1-3],fooi");
    roundtrip ("foo1,fooi,foo2,foo3", "foo1,fooi,foo[2-3]");
    roundtrip ("fooi,foo1,foo2,foo3,foo5,foo7,foo8", "fooi,foo[1-3,5,7-8]");
    roundtrip ("1,2,3,4,5,9", "[1-5,9]");
    roundtrip ("foo[1,3]-bar", "foo1-bar,foo3-bar");
    roundtrip ("[00-03]p", "00p,01p,02p,03p");
    roundtrip ("p[00-3]p", "p00p,p01p,p02p,p03p");
    roundtrip ("14636", "14636");
    /* a name whose digits do not fit 18 is a plain name */
    roundtrip ("x1234567890123456789,x1234567890123456790",
               "x1234567890123456789,x1234567890123456790");
    roundtrip ("n[999999999999999998-999999999999999999]",
               "n[999999999999999998-999999999999999999]");
}

/* RFC 29's test vectors, and more expansions */
static void test_expand (void)
{
    expands ("", "");
    expands ("foox,fooy,fooz", "foox,fooy,fooz");
    expands ("[1-3,5-6]", "1,2,3,5,6");
    expands ("foo[1-5]", "foo1,foo2,foo3,foo4,foo5");
    expands ("foo[0-4]-eth2", "foo0-eth2,foo1-eth2,foo2-eth2,foo3-eth2,foo4-eth2");
    expands ("foo1,foo1,foo1", "foo1,foo1,foo1");
    expands ("[00-02]", "00,01,02");
    expands ("[00-2]", "00,01,02");
    expands ("foo[1,1,2,1]", "foo1,foo1,foo2,foo1");
    /* padding is per element, as in flux-core */
    expands ("n[005,4,11-12]", "n005,n4,n11,n12");
    expands ("n[08-10]", "n08,n09,n10");
    expands ("n[9-10]", "n9,n10");
    expands ("n[0]", "n0");
}

static void test_errors (void)
{
    bad ("foo[1-3", "unbalanced brackets in 'foo[1-3'");
    bad ("foo1-3]", "unbalanced brackets in 'foo1-3]'");
    bad ("]foo[", "unbalanced brackets in ']foo['");
    bad ("foo[1]]", "unbalanced brackets in 'foo[1]]'");
    bad ("foo[[1]]", "unbalanced brackets in 'foo[[1]]'");
    bad ("foo[1,2,bar", "unbalanced brackets in 'foo[1,2,bar'");
    bad ("a[1]-[2]", "more than one bracketed range in 'a[1]-[2]'");
    bad ("foo[3-1]", "invalid range '3-1' in 'foo[3-1]' (end before start)");
    bad ("foo[10-09]", "invalid range '10-09' in 'foo[10-09]' (end before start)");
    bad ("foo[a-b]", "invalid range 'a-b' in 'foo[a-b]' (not a number)");
    bad ("foo[1-2-3]", "invalid range '1-2-3' in 'foo[1-2-3]' (not a number)");
    bad ("foo[-1]", "invalid range '-1' in 'foo[-1]' (missing number)");
    bad ("foo[1-]", "invalid range '1-' in 'foo[1-]' (missing number)");
    bad ("foo[ 1]", "invalid range ' 1' in 'foo[ 1]' (not a number)");
    bad ("foo[1-05]", "invalid range '1-05' in 'foo[1-05]' (zero padding of '1' and '05' differs)");
    bad ("foo[01-005]",
         "invalid range '01-005' in 'foo[01-005]' (zero padding of '01' and '005' differs)");
    bad ("foo[]", "empty brackets in 'foo[]'");
    bad ("[]", "empty brackets in '[]'");
    bad ("foo[1,]", "trailing comma in brackets of 'foo[1,]'");
    bad ("foo[,1]", "empty range in brackets of 'foo[,1]'");
    bad ("foo[1,,2]", "empty range in brackets of 'foo[1,,2]'");
    bad ("foo[1]x[", "unbalanced brackets in 'foo[1]x['");
    bad ("foo,,bar", "empty host name in 'foo,,bar'");
    bad (",foo", "empty host name in ',foo'");
    bad (",", "empty host name in ','");
    bad ("foo,", "trailing comma in 'foo,'");
    bad ("foo bar", "invalid character in host name 'foo bar'");
    bad ("a,foo\tbar,b", "invalid character in host name 'foo\tbar'");
    bad ("fo o[1]", "invalid character in host name 'fo o[1]'");
    bad ("n\xc5\x93ud1", "invalid character in host name 'n\xc5\x93ud1'");
    bad ("a\x7f", "invalid character in host name 'a\x7f'");
    bad ("n[1]\x01", "invalid character in host name 'n[1]\x01'");
    bad ("foo[1] x", "invalid character in host name 'foo[1] x'");
    bad ("foo[1-99999999999999999999]",
         "invalid range '1-99999999999999999999' in 'foo[1-99999999999999999999]' (more than 18 "
         "digits)");
    bad ("foo[0000000000000000001]",
         "invalid range '0000000000000000001' in 'foo[0000000000000000001]' (more than 18 "
         "digits)");
    bad ("foo[0-100000000]", "hostlist too large (more than 16777216 hosts)");
    bad ("foo[0-999999999999999999]", "hostlist too large (more than 16777216 hosts)");
    bad ("foo[0-99999999]x", "hostlist too large (more than 16777216 hosts)");
    bad ("a[0-9999999],b[0-9999999]", "hostlist too large (more than 16777216 hosts)");
    dws_error_t err;
    ok (dws_hostlist_decode (NULL, &err) == NULL, "NULL is rejected");
    is (err.text, "no hostlist given", "with a message");
    ok (dws_hostlist_decode ("foo[", NULL) == NULL, "errors without an error buffer");
}

/* A range followed by a suffix names each host in full (about 80 bytes a
 * host): one line, before any is made, past DWS_HOSTLIST_SUFFIXED_MAX. */
static void test_suffixed_max (void)
{
    struct dws_hostlist *hl;
    dws_error_t err;

    bad ("el[1-12132137]x",
         "hostlist too large: 'el[1-12132137]x' has a range followed by a suffix, which names"
         " each host in full: 12132137 such hosts (at most 1048576)");
    bad ("foo[0-9999999]x,foo[0-9999999]x",
         "hostlist too large: 'foo[0-9999999]x' has a range followed by a suffix, which names"
         " each host in full: 10000000 such hosts (at most 1048576)");
    /* counted over the whole list: its items and bracket elements */
    bad ("a[1-600000]x,b[1-600000]x",
         "hostlist too large: 'b[1-600000]x' has a range followed by a suffix, which names"
         " each host in full: 1200000 such hosts (at most 1048576)");
    bad ("a[1-600000,1-600000]-eth0",
         "hostlist too large: 'a[1-600000,1-600000]-eth0' has a range followed by a suffix,"
         " which names each host in full: 1200000 such hosts (at most 1048576)");
    /* the bound itself is taken; plain ranges and names are not counted */
    hl = dws_hostlist_decode ("n[1-1048576]x", &err);
    ok (hl && dws_hostlist_count (hl) == 1048576, "1048576 suffixed hosts decode");
    dws_hostlist_destroy (hl);
    hl = dws_hostlist_decode ("el[1-12132137],n[1-1048576]x,login1", &err);
    ok (hl && dws_hostlist_count (hl) == 12132137 + 1048576 + 1,
        "a plain range of 12132137 hosts and names beside them do not count");
    dws_hostlist_destroy (hl);
    /* appended lists were each bounded when decoded */
    hl = dws_hostlist_decode ("a[1-600000]x", &err);
    ok (hl && dws_hostlist_append (hl, "b[1-600000]x", &err) == 0,
        "each decode is bounded on its own: appending a second list is not refused");
    dws_hostlist_destroy (hl);
}

static void test_access (void)
{
    dws_error_t err;
    struct dws_hostlist *hl = dws_hostlist_decode ("login,elcap[1001-12136],r[01-02]", &err);
    char buf[64];

    cmp_ok (dws_hostlist_count (hl), ==, 11139, "count");
    ok (dws_hostlist_nth (hl, 0, buf, sizeof (buf)) == 5 && !strcmp (buf, "login"), "nth 0");
    ok (dws_hostlist_nth (hl, 11136, buf, sizeof (buf)) == 10 && !strcmp (buf, "elcap12136"),
        "nth 11136 is %s", buf);
    ok (dws_hostlist_nth (hl, 11138, buf, sizeof (buf)) == 3 && !strcmp (buf, "r02"),
        "nth 11138 keeps padding: %s", buf);
    cmp_ok (dws_hostlist_nth (hl, 11139, buf, sizeof (buf)), ==, -1, "nth past the end");
    cmp_ok (dws_hostlist_nth (hl, (size_t)-1, buf, sizeof (buf)), ==, -1, "nth far past the end");
    cmp_ok (dws_hostlist_nth (hl, 1, buf, 3), ==, 9, "nth into a short buffer gives the length");
    is (buf, "el", "and a truncated name");
    cmp_ok (dws_hostlist_nth (hl, 1, NULL, 0), ==, 9, "nth with no buffer gives the length");
    cmp_ok (dws_hostlist_find (hl, "elcap1001"), ==, 1, "find first of range");
    cmp_ok (dws_hostlist_find (hl, "elcap12136"), ==, 11136, "find last of range");
    cmp_ok (dws_hostlist_find (hl, "login"), ==, 0, "find plain name");
    cmp_ok (dws_hostlist_find (hl, "r2"), ==, -1, "r2 is not r02");
    cmp_ok (dws_hostlist_find (hl, "r02"), ==, 11138, "r02 found");
    cmp_ok (dws_hostlist_find (hl, "elcap01001"), ==, -1, "padding must match");
    cmp_ok (dws_hostlist_find (hl, "elcap999"), ==, -1, "number out of range");
    cmp_ok (dws_hostlist_find (hl, "nosuch"), ==, -1, "unknown name");
    cmp_ok (dws_hostlist_find (hl, ""), ==, -1, "empty name");
    struct dws_hostlist *odd = dws_hostlist_decode ("elca-121p38[6],n1[2-3]", &err);
    cmp_ok (dws_hostlist_find (odd, "elca-121p386"), ==, 0,
            "find works whatever split the range uses (fuzz regression)");
    cmp_ok (dws_hostlist_find (odd, "n13"), ==, 2, "n1[2-3] holds n13");
    dws_hostlist_destroy (odd);

    size_t n;
    char **names = dws_hostlist_expand ("a[1-3],b", &n, &err);
    ok (names && n == 4 && !strcmp (names[2], "a3") && !strcmp (names[3], "b")
            && names[4] == NULL,
        "expand gives a NULL-terminated array");
    dws_hostlist_free_names (names);
    ok (dws_hostlist_expand ("a[", &n, &err) == NULL, "expand reports decode errors: %s",
        err.text);
    const char *in[] = {"x2", "x1", "x3", "x4"};
    char *s = dws_hostlist_compress (in, 4, &err);
    is (s, "x[2,1,3-4]", "compress keeps order");
    free (s);
    const char *badnames[] = {"x1", "a b"};
    ok (dws_hostlist_compress (badnames, 2, &err) == NULL, "compress rejects bad names: %s",
        err.text);
    s = dws_hostlist_names_json (hl, &err);
    ok (s && !strncmp (s, "[\"login\",\"elcap1001\",", 21) && strstr (s, "\"r02\"]"),
        "names_json");
    free (s);
    dws_hostlist_destroy (hl);

    /* a name longer than any fixed buffer */
    char long_name[3000];
    memset (long_name, 'h', sizeof (long_name) - 5);
    strcpy (long_name + sizeof (long_name) - 5, "[7]");
    hl = dws_hostlist_decode (long_name, &err);
    ok (hl && dws_hostlist_nth (hl, 0, buf, sizeof (buf)) == 2996, "nth of a 2996-byte name");
    names = hl ? dws_hostlist_names (hl, &err) : NULL;
    ok (names && strlen (names[0]) == 2996 && names[0][2995] == '7', "names of a long name");
    dws_hostlist_free_names (names);
    dws_hostlist_destroy (hl);
}

/* flux-core's hostlist_find vectors (scan and index must agree) */
static void test_find_vectors (void)
{
    struct {
        const char *list, *host;
        long pos;
    } t[] = {
        {"tst0", "tst", -1},
        {"tst0,tst", "tst", 1},
        {"tst,tst0", "tst", 0},
        {"tst", "tst0", -1},
        {"foo[1-5]-eth0", "foo3-eth0", 2},
        {"foo[1-5]", "foo3-eth0", -1},
        {"[0-5]", "3", 3},
        {"[0-5]i", "0", -1},
        {"i[0-5]", "i00", -1},
        {"i[00-05]", "i00", 0},
        {"i[00-05]", "i04", 4},
        {"f00[7-8]", "f007", 0},
        {"f00[7-8,10]", "f0010", 2},
        {"f0010001[07-08]", "f001000108", 1},
        {"cornp2", "corn", -1},
        {"cornp2", "corn2", -1},
        {"corn-p2", "corn2", -1},
        {"corn1-p2", "corn2", -1},
    };
    /* nine extra ranges in front push the list past the scan limit */
    const char *pad = "q1,z2,q3,z4,q5,z6,q7,z8,q9";
    for (size_t i = 0; i < sizeof (t) / sizeof (t[0]); i++) {
        dws_error_t err;
        char buf[128];
        struct dws_hostlist *a = dws_hostlist_decode (t[i].list, &err);
        snprintf (buf, sizeof (buf), "%s,%s", pad, t[i].list);
        struct dws_hostlist *b = dws_hostlist_decode (buf, &err);
        long want_b = t[i].pos < 0 ? -1 : t[i].pos + 9;
        ok (a && dws_hostlist_find (a, t[i].host) == t[i].pos,
            "find ('%s', '%s') == %ld", t[i].list, t[i].host, t[i].pos);
        ok (b && dws_hostlist_find (b, t[i].host) == want_b,
            "indexed find ('%s', '%s') == %ld", buf, t[i].host, want_b);
        dws_hostlist_destroy (a);
        dws_hostlist_destroy (b);
    }
}

/* Random lists: find() (indexed) must give the first occurrence, as a
 * brute-force scan of the names does.
 */
static unsigned long long rng_state = 12345;
static unsigned rnd (unsigned n)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (unsigned)((rng_state >> 33) % n);
}

static void test_find_random (void)
{
    const char *prefixes[] = {"n", "n1", "x", "", "rz-0"};
    int bad = 0, lists = 0;

    for (int round = 0; round < 200; round++) {
        struct dws_hostlist *hl = dws_hostlist_create ();
        dws_error_t err;
        int items = 1 + (int)rnd (30);
        for (int i = 0; i < items; i++) {
            char item[64];
            const char *p = prefixes[rnd (5)];
            unsigned lo = rnd (120), hi = lo + rnd (15);
            switch (rnd (4)) {
                case 0: snprintf (item, sizeof (item), "%s[%u-%u]", p, lo, hi); break;
                case 1: snprintf (item, sizeof (item), "%s[%03u-%03u]", p, lo, hi); break;
                case 2: snprintf (item, sizeof (item), "%s%u", p, lo); break;
                default: snprintf (item, sizeof (item), "%sq", p); break;
            }
            if (dws_hostlist_append (hl, item, &err) < 0)
                diag ("append %s: %s", item, err.text);
        }
        char **names = dws_hostlist_names (hl, &err);
        size_t n = dws_hostlist_count (hl);
        for (size_t i = 0; names && i < n; i++) {
            long first = -1;
            for (size_t j = 0; j <= i; j++)
                if (!strcmp (names[j], names[i])) {
                    first = (long)j;
                    break;
                }
            if (dws_hostlist_find (hl, names[i]) != first) {
                if (bad++ < 5)
                    diag ("find %s gave %ld, want %ld", names[i],
                          dws_hostlist_find (hl, names[i]), first);
            }
        }
        /* names that are not there */
        for (int k = 0; k < 20; k++) {
            char probe[32];
            long want = -1;
            snprintf (probe, sizeof (probe), "%s%u", prefixes[rnd (5)], rnd (2000));
            for (size_t j = 0; names && j < n && want < 0; j++)
                if (!strcmp (names[j], probe))
                    want = (long)j;
            if (dws_hostlist_find (hl, probe) != want && bad++ < 5)
                diag ("find %s gave %ld, want %ld", probe, dws_hostlist_find (hl, probe), want);
        }
        dws_hostlist_free_names (names);
        dws_hostlist_destroy (hl);
        lists++;
    }
    ok (bad == 0, "find gives the first occurrence in %d random lists", lists);
}

static void check_op (struct dws_hostlist *r, const char *expect, const char *what)
{
    char *s = r ? dws_hostlist_encode (r) : NULL;
    is (s, expect, "%s", what);
    free (s);
    dws_hostlist_destroy (r);
}

static void sorts (const char *in, const char *out)
{
    dws_error_t err;
    struct dws_hostlist *hl = dws_hostlist_decode (in, &err);
    check_op (hl ? dws_hostlist_sort (hl, &err) : NULL, out, in);
    dws_hostlist_destroy (hl);
}

static void test_setops (void)
{
    dws_error_t err;
    struct dws_hostlist *a = dws_hostlist_decode ("n[1-5],x,n1", &err);
    struct dws_hostlist *b = dws_hostlist_decode ("n[4-8],y", &err);
    struct dws_hostlist *e = dws_hostlist_create ();
    check_op (dws_hostlist_union (a, b, &err), "n[1-5],x,n[6-8],y", "union");
    check_op (dws_hostlist_intersect (a, b, &err), "n[4-5]", "intersect");
    check_op (dws_hostlist_difference (a, b, &err), "n[1-3],x", "difference");
    check_op (dws_hostlist_uniq (a, &err), "n[1-5],x", "uniq");
    check_op (dws_hostlist_union (e, e, &err), "", "union of empty lists");
    check_op (dws_hostlist_intersect (a, e, &err), "", "intersect with empty");
    check_op (dws_hostlist_difference (a, e, &err), "n[1-5],x", "difference with empty");
    check_op (dws_hostlist_uniq (e, &err), "", "uniq of empty");
    check_op (dws_hostlist_sort (e, &err), "", "sort of empty");
    /* flux-core's sort vectors */
    sorts ("b2,a10,a9,b1,a09,z", "a[9,09-10],b[1-2],z");
    sorts ("foo,f,bar,baz", "bar,baz,f,foo");
    sorts ("[5-6],[3-4],[1-2,0]", "[0-6]");
    sorts ("[0-20],12,15", "[0-12,12-15,15-20]");
    sorts ("[0-20],45,12,015", "[0-12,12-20,45,015]");
    sorts ("bar1,bar2,foo1,foo,foo", "bar[1-2],foo,foo,foo1");
    sorts ("foo[5-6],foo[4-7]", "foo[4-5,5-6,6-7]");
    sorts ("foo[0-3],foo[0-3]", "foo[0,0-1,1-2,2-3,3]");
    dws_hostlist_destroy (a);
    dws_hostlist_destroy (b);
    dws_hostlist_destroy (e);
}

static void test_append (void)
{
    dws_error_t err;
    struct dws_hostlist *hl = dws_hostlist_create ();
    char *s;
    ok (dws_hostlist_append_host (hl, "", &err) == -1, "empty host rejected: %s", err.text);
    ok (dws_hostlist_append_host (hl, "a,b", &err) == -1, "host with comma rejected: %s",
        err.text);
    ok (dws_hostlist_append_host (hl, "a[1]", &err) == -1, "host with bracket rejected: %s",
        err.text);
    ok (dws_hostlist_append (hl, "n[1-2]", &err) == 0 && dws_hostlist_append_host (hl, "n3", &err) == 0,
        "append");
    ok (dws_hostlist_append (hl, "", &err) == 0, "appending '' is a no-op");
    ok (dws_hostlist_append (hl, NULL, &err) == -1, "appending NULL fails: %s", err.text);
    ok (dws_hostlist_append (hl, "m1,m[2-", &err) == -1, "a bad append fails: %s", err.text);
    is ((s = dws_hostlist_encode (hl)), "n[1-3]", "and leaves the list as it was");
    free (s);
    struct dws_hostlist *big = dws_hostlist_decode ("b[1-16777000]", &err);
    struct dws_hostlist *more = dws_hostlist_decode ("c[1-1000]", &err);
    ok (big && dws_hostlist_append_list (big, more, &err) == -1, "append_list past the limit: %s",
        err.text);
    cmp_ok (big ? dws_hostlist_count (big) : 0, ==, 16777000, "leaves the list as it was");
    dws_hostlist_destroy (big);
    dws_hostlist_destroy (more);

    struct dws_hostlist *c = dws_hostlist_copy (hl);
    ok (dws_hostlist_append_list (hl, c, &err) == 0, "append_list");
    check_op (hl, "n[1-3,1-3]", "appended lists keep repeats");
    dws_hostlist_destroy (c);
    dws_hostlist_destroy (NULL);
}

/* Appending after a find must drop the lookup index. */
static void test_find_after_change (void)
{
    dws_error_t err;
    struct dws_hostlist *hl = dws_hostlist_decode ("a1,b1,a3,b3,a5,b5,a7,b7,a9,b9", &err);
    cmp_ok (dws_hostlist_find (hl, "a9"), ==, 8, "indexed find");
    cmp_ok (dws_hostlist_find (hl, "c1"), ==, -1, "c1 absent");
    ok (dws_hostlist_append (hl, "c1,a9", &err) == 0, "append");
    cmp_ok (dws_hostlist_find (hl, "c1"), ==, 10, "c1 found after append");
    cmp_ok (dws_hostlist_find (hl, "a9"), ==, 8, "a9 still first at 8");
    struct dws_hostlist *copy = dws_hostlist_copy (hl);
    cmp_ok (dws_hostlist_find (copy, "c1"), ==, 10, "copy finds too");
    dws_hostlist_destroy (copy);
    dws_hostlist_destroy (hl);
}

int main (void)
{
    test_codec ();
    test_expand ();
    test_errors ();
    test_suffixed_max ();
    test_access ();
    test_find_vectors ();
    test_find_random ();
    test_setops ();
    test_append ();
    test_find_after_change ();
    return done_testing ();
}
