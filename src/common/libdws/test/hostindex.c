/* SPDX-License-Identifier: LGPL-3.0-or-later */
#include <stdio.h>
#include <stdlib.h>

#include "tap.h"
#include "util/hostindex.h"

int main (void)
{
    enum { N = 20000 };
    static char names[N][16];
    struct hostindex *idx = dws_hostindex_create (4);
    int bad = 0;

    ok (idx != NULL, "create a small table");
    for (int i = 0; i < N; i++) {
        snprintf (names[i], sizeof (names[i]), "elcap%d", 1001 + i);
        if (dws_hostindex_insert (idx, names[i], (size_t)i) != -1)
            bad++;
    }
    ok (bad == 0, "inserted %d names, growing past the initial size", N);
    cmp_ok (dws_hostindex_count (idx), ==, N, "count is %d", N);
    bad = 0;
    for (int i = 0; i < N; i++)
        if (dws_hostindex_find (idx, names[i]) != i)
            bad++;
    ok (bad == 0, "every name maps to its position");
    cmp_ok (dws_hostindex_find (idx, "elcap1"), ==, -1, "an unknown name is -1");
    cmp_ok (dws_hostindex_find (idx, ""), ==, -1, "the empty name is -1");
    cmp_ok (dws_hostindex_insert (idx, "elcap1001", 7), ==, 0,
            "re-inserting returns the existing value");
    cmp_ok (dws_hostindex_find (idx, "elcap1001"), ==, 0, "and leaves it unchanged");
    dws_hostindex_destroy (idx);
    dws_hostindex_destroy (NULL);
    ok (1, "destroy (including NULL) is safe");
    return done_testing ();
}
