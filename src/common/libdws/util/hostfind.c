/* hostfind.c - first-position index over host ranges (see hostfind.h).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hostfind.h"
#include "hostindex.h"

/* Numbers lo..hi of one group, first seen at position pos (for lo). */
struct seg {
    unsigned long long lo, hi;
    size_t pos;
};

/* All numbers printed with d digits after one prefix. */
struct group {
    const char *prefix;
    size_t plen;
    int d;
    uint32_t hash;
    size_t first, count; /* its segments: segs[first .. first+count) */
};

struct dws_hostfind {
    struct hostindex *plain;
    struct group *groups;
    size_t ngroups;
    size_t *slots; /* open addressing: group index + 1, 0 = empty */
    size_t mask;
    struct seg *segs;
    size_t nsegs;
};

/* One piece of a range before flattening. */
struct entry {
    const char *prefix;
    size_t plen;
    int d;
    uint32_t hash;
    unsigned long long lo, hi;
    long long c; /* position of number v is c + v */
};

#define FNV_BASIS 2166136261u
#define FNV_PRIME 16777619u

static uint32_t fnv_step (uint32_t h, char c)
{
    return (h ^ (unsigned char)c) * FNV_PRIME;
}

static uint32_t key_hash (uint32_t prefix_hash, int d)
{
    uint32_t h = prefix_hash ^ ((uint32_t)d * 0x9e3779b1u);
    return h ^ (h >> 15);
}

int dws_digits (unsigned long long v)
{
    int n = 1;
    while (v >= 10) {
        v /= 10;
        n++;
    }
    return n;
}

static unsigned long long pow10u (int d)
{
    unsigned long long p = 1;
    while (d-- > 0)
        p *= 10;
    return p;
}

static int cmp_entry (const void *x, const void *y)
{
    const struct entry *a = x, *b = y;
    if (a->hash != b->hash)
        return a->hash < b->hash ? -1 : 1;
    if (a->plen != b->plen)
        return a->plen < b->plen ? -1 : 1;
    int c = memcmp (a->prefix, b->prefix, a->plen);
    if (c)
        return c;
    if (a->d != b->d)
        return a->d < b->d ? -1 : 1;
    if (a->lo != b->lo)
        return a->lo < b->lo ? -1 : 1;
    return (a->c > b->c) - (a->c < b->c);
}

static bool same_key (const struct entry *a, const struct entry *b)
{
    return a->hash == b->hash && a->plen == b->plen && a->d == b->d
           && !memcmp (a->prefix, b->prefix, a->plen);
}

/* --- min-heap of entry indices by c ------------------------------------- */

struct heap {
    size_t *v;
    size_t n;
    const struct entry *e;
};

static void heap_push (struct heap *h, size_t i)
{
    size_t k = h->n++;
    h->v[k] = i;
    while (k > 0) {
        size_t parent = (k - 1) / 2;
        if (h->e[h->v[parent]].c <= h->e[h->v[k]].c)
            break;
        size_t t = h->v[parent];
        h->v[parent] = h->v[k];
        h->v[k] = t;
        k = parent;
    }
}

static void heap_pop (struct heap *h)
{
    size_t k = 0;
    h->v[0] = h->v[--h->n];
    for (;;) {
        size_t l = 2 * k + 1, r = l + 1, m = k;
        if (l < h->n && h->e[h->v[l]].c < h->e[h->v[m]].c)
            m = l;
        if (r < h->n && h->e[h->v[r]].c < h->e[h->v[m]].c)
            m = r;
        if (m == k)
            break;
        size_t t = h->v[m];
        h->v[m] = h->v[k];
        h->v[k] = t;
        k = m;
    }
}

static void emit (struct dws_hostfind *f,
                  struct group *g,
                  unsigned long long lo,
                  unsigned long long hi,
                  long long c)
{
    size_t pos = (size_t)(c + (long long)lo);
    if (g->count > 0) {
        struct seg *prev = &f->segs[f->nsegs - 1];
        if (prev->hi + 1 == lo && prev->pos + (size_t)(prev->hi - prev->lo) + 1 == pos) {
            prev->hi = hi;
            return;
        }
    }
    f->segs[f->nsegs++] = (struct seg){lo, hi, pos};
    g->count++;
}

/* Flatten e[0..m) (one key, sorted by lo) into disjoint segments where
 * every number keeps its smallest position (min c among covering entries).
 * Each entry yields at most two boundaries, so at most 2m segments.
 */
static void sweep (struct dws_hostfind *f, struct group *g, const struct entry *e, size_t m,
                   size_t *heapbuf)
{
    struct heap h = {heapbuf, 0, e};
    size_t i = 0;
    unsigned long long cur = 0;

    while (i < m || h.n > 0) {
        if (h.n == 0) /* nothing active: jump to the next entry */
            cur = e[i].lo;
        while (i < m && e[i].lo <= cur)
            heap_push (&h, i++);
        while (h.n > 0 && e[h.v[0]].hi < cur)
            heap_pop (&h);
        if (h.n == 0)
            continue;
        const struct entry *top = &e[h.v[0]];
        unsigned long long next = top->hi + 1;
        if (i < m && e[i].lo < next)
            next = e[i].lo;
        emit (f, g, cur, next - 1, top->c);
        cur = next;
    }
}

/* Split range r by printed digit count into entries (at most 19). */
static size_t split_range (const struct dws_hostfind_range *r, uint32_t ph, struct entry *out)
{
    int dlo = dws_digits (r->lo) > r->width ? dws_digits (r->lo) : r->width;
    int dhi = dws_digits (r->hi) > r->width ? dws_digits (r->hi) : r->width;
    size_t n = 0;
    for (int d = dlo; d <= dhi; d++) {
        unsigned long long lo = d == dlo ? r->lo : pow10u (d - 1);
        unsigned long long hi = d == dhi ? r->hi : pow10u (d) - 1;
        out[n++] = (struct entry){
            .prefix = r->prefix,
            .plen = r->plen,
            .d = d,
            .hash = key_hash (ph, d),
            .lo = lo,
            .hi = hi,
            .c = (long long)r->pos - (long long)r->lo,
        };
    }
    return n;
}

static int build_groups (struct dws_hostfind *f, struct entry *e, size_t m)
{
    size_t *heapbuf = malloc ((m + 1) * sizeof (size_t));
    size_t cap = 16;

    if (!heapbuf || !(f->segs = malloc ((2 * m + 1) * sizeof (struct seg)))
        || !(f->groups = malloc ((m + 1) * sizeof (struct group)))) {
        free (heapbuf);
        return -1;
    }
    qsort (e, m, sizeof (*e), cmp_entry);
    for (size_t i = 0; i < m;) {
        size_t j = i + 1;
        while (j < m && same_key (&e[i], &e[j]))
            j++;
        struct group *g = &f->groups[f->ngroups++];
        *g = (struct group){e[i].prefix, e[i].plen, e[i].d, e[i].hash, f->nsegs, 0};
        sweep (f, g, &e[i], j - i, heapbuf);
        i = j;
    }
    free (heapbuf);
    while (cap < f->ngroups * 2)
        cap <<= 1;
    if (!(f->slots = calloc (cap, sizeof (size_t))))
        return -1;
    f->mask = cap - 1;
    for (size_t k = 0; k < f->ngroups; k++) {
        size_t s = f->groups[k].hash & f->mask;
        while (f->slots[s])
            s = (s + 1) & f->mask;
        f->slots[s] = k + 1;
    }
    return 0;
}

struct dws_hostfind *dws_hostfind_create (const struct dws_hostfind_range *r, size_t n)
{
    struct dws_hostfind *f = calloc (1, sizeof (*f));
    struct entry *e = NULL;
    size_t m = 0, nplain = 0;

    if (!f)
        return NULL;
    for (size_t i = 0; i < n; i++)
        nplain += r[i].numeric ? 0 : 1;
    if (!(f->plain = dws_hostindex_create (nplain))
        || !(e = malloc ((n * (DWS_HOSTFIND_MAX_DIGITS + 1) + 1) * sizeof (*e))))
        goto nomem;
    for (size_t i = 0; i < n; i++) {
        if (!r[i].numeric) {
            if (dws_hostindex_insert (f->plain, r[i].prefix, r[i].pos) == -2)
                goto nomem;
            continue;
        }
        uint32_t ph = FNV_BASIS;
        for (size_t k = 0; k < r[i].plen; k++)
            ph = fnv_step (ph, r[i].prefix[k]);
        m += split_range (&r[i], ph, e + m);
    }
    if (build_groups (f, e, m) < 0)
        goto nomem;
    free (e);
    return f;
nomem:
    free (e);
    dws_hostfind_destroy (f);
    return NULL;
}

void dws_hostfind_destroy (struct dws_hostfind *f)
{
    if (f) {
        dws_hostindex_destroy (f->plain);
        free (f->groups);
        free (f->slots);
        free (f->segs);
        free (f);
    }
}

static const struct group *find_group (const struct dws_hostfind *f,
                                       const char *prefix,
                                       size_t plen,
                                       int d,
                                       uint32_t hash)
{
    if (!f->slots)
        return NULL;
    for (size_t s = hash & f->mask; f->slots[s]; s = (s + 1) & f->mask) {
        const struct group *g = &f->groups[f->slots[s] - 1];
        if (g->hash == hash && g->plen == plen && g->d == d && !memcmp (g->prefix, prefix, plen))
            return g;
    }
    return NULL;
}

static long group_lookup (const struct dws_hostfind *f,
                          const struct group *g,
                          unsigned long long num)
{
    const struct seg *s = f->segs + g->first;
    size_t lo = 0, hi = g->count; /* first segment with lo > num */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s[mid].lo <= num)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0 || s[lo - 1].hi < num)
        return -1;
    return (long)(s[lo - 1].pos + (size_t)(num - s[lo - 1].lo));
}

long dws_hostfind_lookup (const struct dws_hostfind *f, const char *host)
{
    size_t len = strlen (host);
    size_t ndig = 0;
    long best = dws_hostindex_find (f->plain, host);
    uint32_t ph = FNV_BASIS;

    while (ndig < len && ndig < DWS_HOSTFIND_MAX_DIGITS && host[len - 1 - ndig] >= '0'
           && host[len - 1 - ndig] <= '9')
        ndig++;
    for (size_t k = 0; k < len - ndig; k++)
        ph = fnv_step (ph, host[k]);
    /* prefix host[0..i), number host[i..len) */
    for (size_t i = len - ndig; i < len; i++) {
        int d = (int)(len - i);
        const struct group *g = find_group (f, host, i, d, key_hash (ph, d));
        if (g) {
            unsigned long long num = 0;
            for (size_t k = i; k < len; k++)
                num = num * 10 + (unsigned)(host[k] - '0');
            long pos = group_lookup (f, g, num);
            if (pos >= 0 && (best < 0 || pos < best))
                best = pos;
        }
        ph = fnv_step (ph, host[i]);
    }
    return best;
}
