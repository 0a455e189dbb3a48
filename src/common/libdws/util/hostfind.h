/* hostfind.h - host name -> first position, over a list of host ranges.
 *
 * A hostlist (hostlist.h) is a sequence of ranges "prefix + numbers lo..hi
 * printed with zero padding to `width`" and plain names.  A hostfind index
 * answers "where does this host first occur?" in O(log n) of the number of
 * ranges, whatever their order, overlaps or repeats: plain names go into a
 * hash table; numeric ranges are grouped by (prefix, printed digit count)
 * and each group is flattened into sorted, disjoint segments that remember
 * the first position of every number (earlier ranges win where ranges
 * overlap).  A lookup tries each split of the host's trailing digits (at
 * most 18), so "n1[2-3]" (prefix "n1") finds "n12" as well as "n[12-13]".
 *
 * The index borrows the prefix strings of the ranges it was built from:
 * they must outlive it.  It is immutable once built, so any number of
 * threads may look up concurrently.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_HOSTFIND_H
#define DWS_HOSTFIND_H

#include <stdbool.h>
#include <stddef.h>

/* Numbers have at most this many digits (so they fit an unsigned long long
 * with room for hi + 1).
 */
#define DWS_HOSTFIND_MAX_DIGITS 18

/* Number of decimal digits of v (1 for 0); hostlist.c uses it too. */
int dws_digits (unsigned long long v);

struct dws_hostfind_range {
    const char *prefix; /* borrowed, NUL-terminated, plen bytes */
    size_t plen;
    bool numeric;               /* false: a plain name (prefix is the name) */
    unsigned long long lo, hi;  /* inclusive, hi < 10^18; numeric only */
    int width;                  /* zero-padded width, 0 = natural */
    size_t pos;                 /* position of the range's first host */
};

struct dws_hostfind;

/* Index n ranges (in list order).  Returns NULL on ENOMEM. */
struct dws_hostfind *dws_hostfind_create (const struct dws_hostfind_range *r, size_t n);
void dws_hostfind_destroy (struct dws_hostfind *f);

/* Position of the first occurrence of host (NUL-terminated), or -1. */
long dws_hostfind_lookup (const struct dws_hostfind *f, const char *host);

#endif /* !DWS_HOSTFIND_H */
