/* idset.c - RFC 22 idsets as sorted disjoint ranges (see idset.h).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "idset.h"

struct range {
    unsigned int lo, hi; /* inclusive */
};

struct dws_idset {
    struct range *r; /* sorted, disjoint, non-adjacent */
    size_t n;
    size_t cap;
};

struct dws_idset *dws_idset_create (void)
{
    return calloc (1, sizeof (struct dws_idset));
}

void dws_idset_destroy (struct dws_idset *ids)
{
    if (ids) {
        free (ids->r);
        free (ids);
    }
}

static int reserve (struct dws_idset *ids, size_t n)
{
    if (n <= ids->cap)
        return 0;
    size_t cap = ids->cap ? ids->cap * 2 : 4;
    while (cap < n)
        cap *= 2;
    struct range *r = realloc (ids->r, cap * sizeof (*r));
    if (!r)
        return -1;
    ids->r = r;
    ids->cap = cap;
    return 0;
}

struct dws_idset *dws_idset_copy (const struct dws_idset *ids)
{
    struct dws_idset *c = dws_idset_create ();
    if (!c || reserve (c, ids->n) < 0) {
        dws_idset_destroy (c);
        return NULL;
    }
    if (ids->n)
        memcpy (c->r, ids->r, ids->n * sizeof (struct range));
    c->n = ids->n;
    return c;
}

/* Index of the first range with hi >= id (== n if none). */
static size_t lower (const struct dws_idset *ids, unsigned int id)
{
    size_t lo = 0, hi = ids->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ids->r[mid].hi < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int dws_idset_add_range (struct dws_idset *ids, unsigned int lo, unsigned int hi)
{
    if (lo > hi || hi == DWS_IDSET_INVALID) {
        errno = EINVAL;
        return -1;
    }
    /* Fast path: appending in ascending order. */
    if (ids->n == 0 || lo > ids->r[ids->n - 1].hi) {
        if (ids->n && lo == ids->r[ids->n - 1].hi + 1) {
            ids->r[ids->n - 1].hi = hi;
            return 0;
        }
        if (reserve (ids, ids->n + 1) < 0)
            return -1;
        ids->r[ids->n++] = (struct range){lo, hi};
        return 0;
    }
    /* First range touching [lo-1, hi+1] ... last one touching it. */
    size_t i = lower (ids, lo > 0 ? lo - 1 : 0);
    size_t j = i;
    while (j < ids->n && ids->r[j].lo <= (hi == UINT_MAX - 1 ? hi : hi + 1))
        j++;
    if (i == j) { /* no overlap: insert at i */
        if (reserve (ids, ids->n + 1) < 0)
            return -1;
        memmove (&ids->r[i + 1], &ids->r[i], (ids->n - i) * sizeof (struct range));
        ids->r[i] = (struct range){lo, hi};
        ids->n++;
        return 0;
    }
    struct range m = {lo < ids->r[i].lo ? lo : ids->r[i].lo,
                      hi > ids->r[j - 1].hi ? hi : ids->r[j - 1].hi};
    ids->r[i] = m;
    memmove (&ids->r[i + 1], &ids->r[j], (ids->n - j) * sizeof (struct range));
    ids->n -= j - i - 1;
    return 0;
}

int dws_idset_add (struct dws_idset *ids, unsigned int id)
{
    return dws_idset_add_range (ids, id, id);
}

int dws_idset_remove (struct dws_idset *ids, unsigned int id)
{
    size_t i = lower (ids, id);
    if (i == ids->n || ids->r[i].lo > id)
        return 0;
    struct range r = ids->r[i];
    if (r.lo == id && r.hi == id) {
        memmove (&ids->r[i], &ids->r[i + 1], (ids->n - i - 1) * sizeof (r));
        ids->n--;
    }
    else if (r.lo == id)
        ids->r[i].lo++;
    else if (r.hi == id)
        ids->r[i].hi--;
    else {
        if (reserve (ids, ids->n + 1) < 0)
            return -1;
        memmove (&ids->r[i + 2], &ids->r[i + 1], (ids->n - i - 1) * sizeof (r));
        ids->r[i].hi = id - 1;
        ids->r[i + 1] = (struct range){id + 1, r.hi};
        ids->n++;
    }
    return 0;
}

size_t dws_idset_count (const struct dws_idset *ids)
{
    size_t n = 0;
    for (size_t i = 0; i < ids->n; i++)
        n += (size_t)(ids->r[i].hi - ids->r[i].lo) + 1;
    return n;
}

bool dws_idset_contains (const struct dws_idset *ids, unsigned int id)
{
    size_t i = lower (ids, id);
    return i < ids->n && ids->r[i].lo <= id;
}

bool dws_idset_equal (const struct dws_idset *a, const struct dws_idset *b)
{
    return a->n == b->n && (a->n == 0 || !memcmp (a->r, b->r, a->n * sizeof (struct range)));
}

unsigned int dws_idset_first (const struct dws_idset *ids)
{
    return ids->n ? ids->r[0].lo : DWS_IDSET_INVALID;
}

unsigned int dws_idset_last (const struct dws_idset *ids)
{
    return ids->n ? ids->r[ids->n - 1].hi : DWS_IDSET_INVALID;
}

unsigned int dws_idset_next (const struct dws_idset *ids, unsigned int prev)
{
    if (prev >= UINT_MAX - 1)
        return DWS_IDSET_INVALID;
    size_t i = lower (ids, prev + 1);
    if (i == ids->n)
        return DWS_IDSET_INVALID;
    return ids->r[i].lo > prev + 1 ? ids->r[i].lo : prev + 1;
}

/* --- text --------------------------------------------------------------- */

/* Returns 0, -1 (not a number) or -2 (too large). */
static int parse_uint (const char *s, size_t len, unsigned int *out)
{
    unsigned long long v = 0;
    if (len == 0)
        return -1;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        if (v < UINT_MAX)
            v = v * 10 + (unsigned)(s[i] - '0');
    }
    if (v >= UINT_MAX)
        return -2;
    *out = (unsigned int)v;
    return 0;
}

static const char *why (int rc)
{
    return rc == -2 ? " (ids are at most 4294967294)" : "";
}

struct dws_idset *dws_idset_decode (const char *s, dws_error_t *err)
{
    struct dws_idset *ids;
    const char *orig = s;
    size_t len;

    if (!s) {
        dws_errorf (err, "no idset given");
        return NULL;
    }
    len = strlen (s);
    if (len >= 2 && s[0] == '[' && s[len - 1] == ']') {
        s++;
        len -= 2;
    }
    if (memchr (s, '[', len) || memchr (s, ']', len)) {
        dws_errorf (err, "invalid idset '%s': unbalanced brackets", orig);
        return NULL;
    }
    if (!(ids = dws_idset_create ())) {
        dws_errorf (err, "out of memory");
        return NULL;
    }
    const char *p = s, *end = s + len;
    while (p < end) {
        const char *comma = memchr (p, ',', (size_t)(end - p));
        const char *tok_end = comma ? comma : end;
        size_t toklen = (size_t)(tok_end - p);
        const char *dash = memchr (p, '-', toklen);
        unsigned int lo, hi;
        int rc;

        if (toklen == 0) {
            dws_errorf (err, "invalid idset '%s': empty element", orig);
            goto error;
        }
        if (dash) {
            int rc = parse_uint (p, (size_t)(dash - p), &lo);
            if (rc == 0)
                rc = parse_uint (dash + 1, (size_t)(tok_end - dash - 1), &hi);
            if (rc < 0) {
                dws_errorf (err, "invalid range '%.*s'%s", (int)toklen, p, why (rc));
                goto error;
            }
            if (hi < lo) {
                dws_errorf (err, "invalid range '%.*s' (end before start)", (int)toklen, p);
                goto error;
            }
        }
        else if ((rc = parse_uint (p, toklen, &lo)) < 0) {
            dws_errorf (err, "invalid id '%.*s'%s", (int)toklen, p, why (rc));
            goto error;
        }
        else
            hi = lo;
        if (dws_idset_add_range (ids, lo, hi) < 0) {
            dws_errorf (err, "out of memory");
            goto error;
        }
        if (!comma)
            break;
        p = comma + 1;
        if (p == end) {
            dws_errorf (err, "invalid idset '%s': trailing comma", orig);
            goto error;
        }
    }
    return ids;
error:
    dws_idset_destroy (ids);
    return NULL;
}

struct strbuf {
    char *s;
    size_t len, cap;
};

static int sb_put (struct strbuf *sb, const char *txt, size_t n)
{
    if (sb->len + n + 1 > sb->cap) {
        size_t cap = sb->cap ? sb->cap : 64;
        while (sb->len + n + 1 > cap)
            cap *= 2;
        char *t = realloc (sb->s, cap);
        if (!t)
            return -1;
        sb->s = t;
        sb->cap = cap;
    }
    memcpy (sb->s + sb->len, txt, n);
    sb->len += n;
    sb->s[sb->len] = '\0';
    return 0;
}

static int sb_id (struct strbuf *sb, const char *sep, unsigned int v)
{
    char tmp[16];
    size_t n = strlen (sep), k = 0;
    char digit[12];
    memcpy (tmp, sep, n);
    do {
        digit[k++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (k > 0)
        tmp[n++] = digit[--k];
    return sb_put (sb, tmp, n);
}

char *dws_idset_encode (const struct dws_idset *ids, int flags)
{
    struct strbuf sb = {0};
    bool brackets = (flags & DWS_IDSET_BRACKETS) && dws_idset_count (ids) > 1;
    const char *sep = "";

    if ((flags & DWS_IDSET_NORANGE) && dws_idset_count (ids) > DWS_IDSET_EXPAND_MAX) {
        errno = E2BIG;
        return NULL;
    }

    if (sb_put (&sb, brackets ? "[" : "", brackets ? 1 : 0) < 0)
        goto nomem;
    for (size_t i = 0; i < ids->n; i++) {
        unsigned int lo = ids->r[i].lo, hi = ids->r[i].hi;
        if (flags & DWS_IDSET_NORANGE) {
            for (unsigned int v = lo;; v++) {
                if (sb_id (&sb, sep, v) < 0)
                    goto nomem;
                sep = ",";
                if (v == hi)
                    break;
            }
            continue;
        }
        if (sb_id (&sb, sep, lo) < 0 || (hi > lo && sb_id (&sb, "-", hi) < 0))
            goto nomem;
        sep = ",";
    }
    if (brackets && sb_put (&sb, "]", 1) < 0)
        goto nomem;
    return sb.s;
nomem:
    free (sb.s);
    return NULL;
}

/* --- set operations ----------------------------------------------------- */

struct dws_idset *dws_idset_union (const struct dws_idset *a, const struct dws_idset *b)
{
    struct dws_idset *u = dws_idset_copy (a);
    for (size_t i = 0; u && i < b->n; i++) {
        if (dws_idset_add_range (u, b->r[i].lo, b->r[i].hi) < 0) {
            dws_idset_destroy (u);
            return NULL;
        }
    }
    return u;
}

struct dws_idset *dws_idset_intersect (const struct dws_idset *a, const struct dws_idset *b)
{
    struct dws_idset *x = dws_idset_create ();
    size_t i = 0, j = 0;
    while (x && i < a->n && j < b->n) {
        unsigned int lo = a->r[i].lo > b->r[j].lo ? a->r[i].lo : b->r[j].lo;
        unsigned int hi = a->r[i].hi < b->r[j].hi ? a->r[i].hi : b->r[j].hi;
        if (lo <= hi && dws_idset_add_range (x, lo, hi) < 0) {
            dws_idset_destroy (x);
            return NULL;
        }
        if (a->r[i].hi < b->r[j].hi)
            i++;
        else
            j++;
    }
    return x;
}

struct dws_idset *dws_idset_difference (const struct dws_idset *a, const struct dws_idset *b)
{
    struct dws_idset *d = dws_idset_create ();
    size_t j = 0;
    for (size_t i = 0; d && i < a->n; i++) {
        unsigned int lo = a->r[i].lo, hi = a->r[i].hi;
        bool done = false;
        while (j < b->n && b->r[j].hi < lo)
            j++;
        for (size_t k = j; k < b->n && b->r[k].lo <= hi && !done; k++) {
            if (b->r[k].lo > lo && dws_idset_add_range (d, lo, b->r[k].lo - 1) < 0)
                goto nomem;
            if (b->r[k].hi >= hi)
                done = true;
            else
                lo = b->r[k].hi + 1;
        }
        if (!done && dws_idset_add_range (d, lo, hi) < 0)
            goto nomem;
    }
    return d;
nomem:
    dws_idset_destroy (d);
    return NULL;
}

/* --- conveniences ------------------------------------------------------- */

unsigned int *dws_idset_expand (const char *s, size_t *count, dws_error_t *err)
{
    struct dws_idset *ids = dws_idset_decode (s, err);
    unsigned int *out = NULL;
    size_t n, k = 0;

    if (!ids)
        return NULL;
    n = dws_idset_count (ids);
    if (n > DWS_IDSET_EXPAND_MAX) {
        dws_errorf (err, "idset '%s' is too large (%zu ids)", s, n);
        goto done;
    }
    if (!(out = malloc ((n + 1) * sizeof (*out)))) {
        dws_errorf (err, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < ids->n; i++)
        for (unsigned int v = ids->r[i].lo;; v++) {
            out[k++] = v;
            if (v == ids->r[i].hi)
                break;
        }
    *count = n;
done:
    dws_idset_destroy (ids);
    return out;
}

char *dws_idset_compress (const unsigned int *ids, size_t n)
{
    struct dws_idset *set = dws_idset_create ();
    char *s = NULL;
    for (size_t i = 0; set && i < n; i++)
        if (dws_idset_add (set, ids[i]) < 0)
            goto done;
    if (set)
        s = dws_idset_encode (set, 0);
done:
    dws_idset_destroy (set);
    return s;
}

char *dws_idset_normalize (const char *s, int flags, dws_error_t *err)
{
    struct dws_idset *ids = dws_idset_decode (s, err);
    char *out;
    if (!ids)
        return NULL;
    if (!(out = dws_idset_encode (ids, flags)))
        dws_errorf (err, "out of memory");
    dws_idset_destroy (ids);
    return out;
}

char *dws_idset_op (const char *a, const char *b, char op, dws_error_t *err)
{
    struct dws_idset *x = NULL, *y = NULL, *r = NULL;
    char *out = NULL;

    if (!(x = dws_idset_decode (a, err)) || !(y = dws_idset_decode (b, err)))
        goto done;
    switch (op) {
        case '|': r = dws_idset_union (x, y); break;
        case '&': r = dws_idset_intersect (x, y); break;
        case '-': r = dws_idset_difference (x, y); break;
        default:
            dws_errorf (err, "unknown idset operation '%c'", op);
            goto done;
    }
    if (!r || !(out = dws_idset_encode (r, 0)))
        dws_errorf (err, "out of memory");
done:
    dws_idset_destroy (x);
    dws_idset_destroy (y);
    dws_idset_destroy (r);
    return out;
}
