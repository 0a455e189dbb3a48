/* SPDX-License-Identifier: LGPL-3.0-or-later */
#include <stdlib.h>
#include <string.h>

#include "hostlist.h"
#include "tap.h"

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
    roundtrip ("foo1,bar1,foo2", "foo1,bar1,foo2");
    roundtrip ("foo[3,1-2]", "foo[3,1-2]");
    roundtrip ("compute-01,compute-02,compute-03", "compute-[01-03]");
    roundtrip ("login,foo[1-2],login", "login,foo[1-2],login");
    roundtrip ("123,124", "[123-124]");
    roundtrip ("[1-3]", "[1-3]");
    roundtrip ("elcap[201-896,1001-12136]", "elcap[201-896,1001-12136]");
    roundtrip ("n1a,n1b", "n1a,n1b");
}

static void test_errors (void)
{
    bad ("foo[1-3", "unbalanced brackets in 'foo[1-3'");
    bad ("foo1-3]", "unbalanced brackets in 'foo1-3]'");
    bad ("foo[3-1]", "invalid range '3-1' in 'foo[3-1]' (end before start)");
    bad ("foo[a-b]", "invalid range 'a-b' in 'foo[a-b]'");
    bad ("foo[1-]", "invalid range '1-' in 'foo[1-]'");
    bad ("foo[]", "empty brackets in 'foo[]'");
    bad ("foo[1,]", "trailing comma in brackets of 'foo[1,]'");
    bad ("foo[1]x", "unexpected text after ']' in 'foo[1]x'");
    bad ("foo[[1]]", "unbalanced brackets in 'foo[[1]]'");
    bad ("foo,,bar", "empty host name in 'foo,,bar'");
    bad (",foo", "empty host name in ',foo'");
    bad ("foo,", "trailing comma in 'foo,'");
    bad ("foo bar", "invalid character in host name 'foo bar'");
    bad ("foo[1-99999999999999999999]",
         "invalid range '1-99999999999999999999' in 'foo[1-99999999999999999999]'");
    bad ("foo[0-100000000]", "hostlist too large (more than 16777216 hosts)");
    dws_error_t err;
    ok (dws_hostlist_decode (NULL, &err) == NULL, "NULL is rejected");
}

static void test_access (void)
{
    dws_error_t err;
    struct dws_hostlist *hl = dws_hostlist_decode ("login,elcap[1001-12136],r[01-02]", &err);
    char buf[64];

    cmp_ok (dws_hostlist_count (hl), ==, 11139, "count");
    ok (dws_hostlist_nth (hl, 0, buf, sizeof (buf)) > 0 && !strcmp (buf, "login"), "nth 0");
    ok (dws_hostlist_nth (hl, 11136, buf, sizeof (buf)) > 0 && !strcmp (buf, "elcap12136"),
        "nth 11136 is %s", buf);
    ok (dws_hostlist_nth (hl, 11138, buf, sizeof (buf)) > 0 && !strcmp (buf, "r02"),
        "nth 11138 keeps padding: %s", buf);
    cmp_ok (dws_hostlist_nth (hl, 11139, buf, sizeof (buf)), ==, -1, "nth past the end");
    cmp_ok (dws_hostlist_nth (hl, 1, buf, 3), ==, -1, "nth into a short buffer fails");
    cmp_ok (dws_hostlist_find (hl, "elcap1001"), ==, 1, "find first of range");
    cmp_ok (dws_hostlist_find (hl, "elcap12136"), ==, 11136, "find last of range");
    cmp_ok (dws_hostlist_find (hl, "login"), ==, 0, "find plain name");
    cmp_ok (dws_hostlist_find (hl, "r2"), ==, -1, "r2 is not r02");
    cmp_ok (dws_hostlist_find (hl, "r02"), ==, 11138, "r02 found");
    cmp_ok (dws_hostlist_find (hl, "elcap01001"), ==, -1, "padding must match");
    cmp_ok (dws_hostlist_find (hl, "elcap999"), ==, -1, "number out of range");
    cmp_ok (dws_hostlist_find (hl, "nosuch"), ==, -1, "unknown name");
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
    const char *in[] = {"x2", "x1", "x3", "x4"};
    char *s = dws_hostlist_compress (in, 4, &err);
    is (s, "x[2,1,3-4]", "compress keeps order");
    free (s);
    dws_hostlist_destroy (hl);
}

static void check_op (struct dws_hostlist *r, const char *expect, const char *what)
{
    char *s = r ? dws_hostlist_encode (r) : NULL;
    is (s, expect, "%s", what);
    free (s);
    dws_hostlist_destroy (r);
}

static void test_setops (void)
{
    dws_error_t err;
    struct dws_hostlist *a = dws_hostlist_decode ("n[1-5],x,n1", &err);
    struct dws_hostlist *b = dws_hostlist_decode ("n[4-8],y", &err);
    check_op (dws_hostlist_union (a, b, &err), "n[1-5],x,n[6-8],y", "union");
    check_op (dws_hostlist_intersect (a, b, &err), "n[4-5]", "intersect");
    check_op (dws_hostlist_difference (a, b, &err), "n[1-3],x", "difference");
    check_op (dws_hostlist_uniq (a, &err), "n[1-5],x", "uniq");
    struct dws_hostlist *c = dws_hostlist_decode ("b2,a10,a9,b1,a09,z", &err);
    check_op (dws_hostlist_sort (c, &err), "a[9,09-10],b[1-2],z", "sort");
    dws_hostlist_destroy (a);
    dws_hostlist_destroy (b);
    dws_hostlist_destroy (c);
}

static void test_append (void)
{
    dws_error_t err;
    struct dws_hostlist *hl = dws_hostlist_create ();
    ok (dws_hostlist_append_host (hl, "", &err) == -1, "empty host rejected");
    ok (dws_hostlist_append_host (hl, "a,b", &err) == -1, "host with comma rejected: %s",
        err.text);
    ok (dws_hostlist_append (hl, "n[1-2]", &err) == 0 && dws_hostlist_append_host (hl, "n3", &err) == 0,
        "append");
    struct dws_hostlist *c = dws_hostlist_copy (hl);
    ok (dws_hostlist_append_list (hl, c, &err) == 0, "append_list");
    check_op (hl, "n[1-3,1-3]", "appended lists keep repeats");
    dws_hostlist_destroy (c);
    dws_hostlist_destroy (NULL);
}

int main (void)
{
    test_codec ();
    test_errors ();
    test_access ();
    test_setops ();
    test_append ();
    return done_testing ();
}
