/* hostlist.c - RFC 29 hostlists as runs of numeric ranges (see hostlist.h).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "hostfind.h"
#include "hostindex.h"
#include "hostlist.h"

/* numeric parts longer than this are plain names */
#define MAX_DIGITS DWS_HOSTFIND_MAX_DIGITS

/* Lists with more ranges than this get a lookup index on first find. */
#define FIND_SCAN_MAX 8

struct range {
    char *prefix; /* NUL-terminated; shared with the range before if equal */
    size_t plen;
    bool owner;   /* this range allocated prefix */
    unsigned long long lo, hi; /* inclusive; unused when !numeric */
    int width;                 /* zero-padded width, 0 = natural */
    bool numeric;
    size_t pos; /* position of the range's first host in the list */
};

struct dws_hostlist {
    struct range *r;
    size_t n, cap;
    size_t count; /* hosts */
    size_t suffixed; /* hosts decoded from ranges followed by a suffix */
    /* Built by the first dws_hostlist_find() on a list of many ranges and
     * dropped by any change; published atomically so concurrent finds on
     * an unchanging list are safe.
     */
    _Atomic (struct dws_hostfind *) find;
};

/* A host split into prefix and numeric suffix. */
struct hostname {
    const char *prefix;
    size_t plen;
    unsigned long long num;
    int width;
    bool numeric;
};

struct dws_hostlist *dws_hostlist_create (void)
{
    return calloc (1, sizeof (struct dws_hostlist));
}

void dws_hostlist_destroy (struct dws_hostlist *hl)
{
    if (hl) {
        for (size_t i = 0; i < hl->n; i++)
            if (hl->r[i].owner)
                free (hl->r[i].prefix);
        free (hl->r);
        dws_hostfind_destroy (atomic_load (&hl->find));
        free (hl);
    }
}

static size_t range_count (const struct range *r)
{
    return r->numeric ? (size_t)(r->hi - r->lo) + 1 : 1;
}

static void split_host (const char *host, size_t len, struct hostname *h)
{
    size_t d = 0;
    while (d < len && host[len - 1 - d] >= '0' && host[len - 1 - d] <= '9')
        d++;
    h->prefix = host;
    h->numeric = d > 0 && d <= MAX_DIGITS;
    h->plen = h->numeric ? len - d : len;
    h->num = 0;
    h->width = 0;
    if (h->numeric) {
        const char *p = host + len - d;
        for (size_t i = 0; i < d; i++)
            h->num = h->num * 10 + (unsigned)(p[i] - '0');
        if (p[0] == '0' && d > 1)
            h->width = (int)d;
    }
}

/* Can number `num` of width `width` extend range r (same prefix)? */
static bool width_fits (const struct range *r, unsigned long long num, int width)
{
    if (r->width == width)
        return true;
    if (r->width > 0 && width == 0)
        return dws_digits (num) == r->width;
    if (r->width == 0 && width > 0)
        return dws_digits (r->lo) == width;
    return false;
}

static int reserve (struct dws_hostlist *hl)
{
    if (hl->n < hl->cap)
        return 0;
    size_t cap = hl->cap ? hl->cap * 2 : 4;
    struct range *r = realloc (hl->r, cap * sizeof (*r));
    if (!r)
        return -1;
    hl->r = r;
    hl->cap = cap;
    return 0;
}

static int too_many (struct dws_hostlist *hl, size_t more, dws_error_t *err)
{
    if (hl->count + more > (size_t)DWS_HOSTLIST_MAX)
        return dws_errorf (err,
                           "hostlist too large (more than %ld hosts)",
                           DWS_HOSTLIST_MAX);
    return 0;
}

/* Append prefix + [lo-hi] (or the plain name prefix if !numeric). */
static int push_range (struct dws_hostlist *hl,
                       const char *prefix,
                       size_t plen,
                       bool numeric,
                       unsigned long long lo,
                       unsigned long long hi,
                       int width,
                       dws_error_t *err)
{
    size_t n = numeric ? (size_t)(hi - lo) + 1 : 1;
    if (too_many (hl, n, err) < 0)
        return -1;
    dws_hostfind_destroy (atomic_exchange (&hl->find, NULL));
    if (numeric && hl->n > 0) {
        struct range *last = &hl->r[hl->n - 1];
        if (last->numeric && last->plen == plen && !memcmp (last->prefix, prefix, plen)
            && lo == last->hi + 1 && width_fits (last, lo, width)) {
            if (last->width == 0 && width > 0)
                last->width = width;
            last->hi = hi;
            hl->count += n;
            return 0;
        }
    }
    if (reserve (hl) < 0)
        return dws_errorf (err, "out of memory");
    /* ranges are only ever appended, so a range may borrow the prefix
     * string of the one before it (the common "n[1,3,5,...]" case)
     */
    struct range *prev = hl->n > 0 ? &hl->r[hl->n - 1] : NULL;
    if (prev && prev->plen == plen && !memcmp (prev->prefix, prefix, plen)) {
        hl->r[hl->n].prefix = prev->prefix;
        hl->r[hl->n].owner = false;
    }
    else {
        if (!(hl->r[hl->n].prefix = strndup (prefix, plen)))
            return dws_errorf (err, "out of memory");
        hl->r[hl->n].owner = true;
    }
    hl->r[hl->n].plen = plen;
    hl->r[hl->n].numeric = numeric;
    hl->r[hl->n].lo = lo;
    hl->r[hl->n].hi = hi;
    hl->r[hl->n].width = width;
    hl->r[hl->n].pos = hl->count;
    hl->n++;
    hl->count += n;
    return 0;
}

/* RFC 29: printable, non-white-space ASCII other than "[", "]" and ",". */
static bool valid_name_char (char c)
{
    unsigned char u = (unsigned char)c;
    return u > ' ' && u < 0x7f && c != ',' && c != '[' && c != ']';
}

static bool name_ok (const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (!valid_name_char (s[i]))
            return false;
    return true;
}

static int check_name (const char *s, size_t len, const char *item, dws_error_t *err)
{
    if (!name_ok (s, len))
        return dws_errorf (err, "invalid character in host name '%s'", item);
    return 0;
}

int dws_hostlist_append_host (struct dws_hostlist *hl, const char *host, dws_error_t *err)
{
    size_t len = strlen (host);
    struct hostname h;

    if (len == 0)
        return dws_errorf (err, "empty host name");
    if (check_name (host, len, host, err) < 0)
        return -1;
    split_host (host, len, &h);
    return push_range (hl, h.prefix, h.plen, h.numeric, h.num, h.num, h.width, err);
}

static int parse_num (const char *s, size_t len, unsigned long long *v)
{
    if (len == 0 || len > MAX_DIGITS)
        return -1;
    *v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        *v = *v * 10 + (unsigned)(s[i] - '0');
    }
    return 0;
}

static bool all_digits (const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    return true;
}

static size_t put_num (char *p, unsigned long long v, int width)
{
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n < width)
        tmp[n++] = '0';
    for (int i = 0; i < n; i++)
        p[i] = tmp[n - 1 - i];
    return (size_t)n;
}

/* One bracket element "lo" or "lo-hi" (len bytes at p) of item. */
static int parse_element (const char *p,
                          size_t len,
                          const char *item,
                          unsigned long long *lo,
                          unsigned long long *hi,
                          int *width,
                          dws_error_t *err)
{
    const char *dash = memchr (p, '-', len);
    size_t lolen = dash ? (size_t)(dash - p) : len;
    size_t hilen = dash ? len - lolen - 1 : 0;
    const char *hs = dash ? dash + 1 : NULL;

    if (len == 0)
        return dws_errorf (err, "empty range in brackets of '%s'", item);
    if (lolen == 0 || (dash && hilen == 0))
        return dws_errorf (err, "invalid range '%.*s' in '%s' (missing number)", (int)len, p, item);
    if (!all_digits (p, lolen) || (dash && !all_digits (hs, hilen)))
        return dws_errorf (err, "invalid range '%.*s' in '%s' (not a number)", (int)len, p, item);
    if (lolen > MAX_DIGITS || hilen > MAX_DIGITS)
        return dws_errorf (err,
                           "invalid range '%.*s' in '%s' (more than %d digits)",
                           (int)len,
                           p,
                           item,
                           MAX_DIGITS);
    parse_num (p, lolen, lo);
    *hi = *lo;
    if (dash)
        parse_num (hs, hilen, hi);
    *width = (p[0] == '0' && lolen > 1) ? (int)lolen : 0;
    if (dash && hs[0] == '0' && hilen > 1 && hilen != lolen)
        return dws_errorf (err,
                           "invalid range '%.*s' in '%s' (zero padding of '%.*s' and '%.*s' differs)",
                           (int)len,
                           p,
                           item,
                           (int)lolen,
                           p,
                           (int)hilen,
                           hs);
    if (*hi < *lo)
        return dws_errorf (err,
                           "invalid range '%.*s' in '%s' (end before start)",
                           (int)len,
                           p,
                           item);
    return 0;
}

/* prefix[lo-hi]suffix: a non-empty suffix makes every host a name of its
 * own, split at its trailing digits like any single host (as flux-core
 * does), so "foo[1-2]-eth0" holds foo1-eth0 and foo2-eth0.
 */
static int push_suffixed (struct dws_hostlist *hl,
                          const char *prefix,
                          size_t plen,
                          unsigned long long lo,
                          unsigned long long hi,
                          int width,
                          const char *suffix,
                          size_t slen,
                          const char *item,
                          dws_error_t *err)
{
    size_t n = (size_t)(hi - lo) + 1;
    char *buf;

    if (too_many (hl, n, err) < 0)
        return -1;
    if (hl->suffixed + n > (size_t)DWS_HOSTLIST_SUFFIXED_MAX)
        return dws_errorf (err,
                           "hostlist too large: '%s' has a range followed by a suffix, which"
                           " names each host in full: %zu such hosts (at most %ld)",
                           item,
                           hl->suffixed + n,
                           DWS_HOSTLIST_SUFFIXED_MAX);
    hl->suffixed += n;
    if (!(buf = malloc (plen + slen + MAX_DIGITS + 2)))
        return dws_errorf (err, "out of memory");
    for (unsigned long long v = lo;; v++) {
        struct hostname h;
        size_t n = plen;
        memcpy (buf, prefix, plen);
        n += put_num (buf + n, v, width);
        memcpy (buf + n, suffix, slen);
        n += slen;
        split_host (buf, n, &h);
        if (push_range (hl, h.prefix, h.plen, h.numeric, h.num, h.num, h.width, err) < 0) {
            free (buf);
            return -1;
        }
        if (v == hi)
            break;
    }
    free (buf);
    return 0;
}

/* item = prefix "[" elements "]" [suffix], len bytes; open is its '['. */
static int append_bracketed (struct dws_hostlist *hl,
                             const char *item,
                             size_t len,
                             const char *open,
                             dws_error_t *err)
{
    const char *end = item + len;
    const char *close = memchr (open, ']', (size_t)(end - open));
    const char *suffix = close ? close + 1 : end;
    size_t slen = (size_t)(end - suffix);
    size_t plen = (size_t)(open - item);
    char *copy = strndup (item, len);
    int rc = -1;

    if (!copy)
        return dws_errorf (err, "out of memory");
    if (close && !memchr (open + 1, '[', (size_t)(close - open - 1))
        && memchr (suffix, '[', slen))
        dws_errorf (err, "more than one bracketed range in '%s'", copy);
    else if (!close || memchr (open + 1, '[', (size_t)(close - open - 1))
             || memchr (suffix, ']', slen))
        dws_errorf (err, "unbalanced brackets in '%s'", copy);
    else if (check_name (item, plen, copy, err) < 0 || check_name (suffix, slen, copy, err) < 0)
        ;
    else if (close == open + 1)
        dws_errorf (err, "empty brackets in '%s'", copy);
    else {
        const char *p = open + 1;
        rc = 0;
        while (rc == 0 && p <= close) {
            const char *comma = memchr (p, ',', (size_t)(close - p));
            const char *stop = comma ? comma : close;
            unsigned long long lo = 0, hi = 0;
            int width = 0;

            if (comma && comma + 1 == close)
                rc = dws_errorf (err, "trailing comma in brackets of '%s'", copy);
            else if (parse_element (p, (size_t)(stop - p), copy, &lo, &hi, &width, err) < 0)
                rc = -1;
            else if (slen == 0)
                rc = push_range (hl, item, plen, true, lo, hi, width, err);
            else
                rc = push_suffixed (hl, item, plen, lo, hi, width, suffix, slen, copy, err);
            p = stop + 1;
        }
    }
    free (copy);
    return rc;
}

static int parse_into (struct dws_hostlist *hl, const char *s, dws_error_t *err)
{
    const char *p = s;

    while (*p) {
        /* find the end of this item: a comma outside brackets */
        const char *q = p;
        const char *open = NULL;
        int depth = 0;
        while (*q && (depth > 0 || *q != ',')) {
            if (*q == '[') {
                if (!open)
                    open = q;
                depth++;
            }
            else if (*q == ']')
                depth--;
            q++;
        }
        size_t len = (size_t)(q - p);
        if (len == 0)
            return dws_errorf (err, "empty host name in '%s'", s);
        if (depth != 0 || (!open && memchr (p, ']', len)))
            return dws_errorf (err, "unbalanced brackets in '%.*s'", (int)len, p);
        if (open) {
            if (append_bracketed (hl, p, len, open, err) < 0)
                return -1;
        }
        else {
            struct hostname h;
            if (!name_ok (p, len))
                return dws_errorf (err, "invalid character in host name '%.*s'", (int)len, p);
            split_host (p, len, &h);
            if (push_range (hl, h.prefix, h.plen, h.numeric, h.num, h.num, h.width, err) < 0)
                return -1;
        }
        if (*q == ',' && q[1] == '\0')
            return dws_errorf (err, "trailing comma in '%s'", s);
        p = *q ? q + 1 : q;
    }
    return 0;
}

struct dws_hostlist *dws_hostlist_decode (const char *s, dws_error_t *err)
{
    struct dws_hostlist *hl;

    if (!s) {
        dws_errorf (err, "no hostlist given");
        return NULL;
    }
    if (!(hl = dws_hostlist_create ())) {
        dws_errorf (err, "out of memory");
        return NULL;
    }
    if (parse_into (hl, s, err) < 0) {
        dws_hostlist_destroy (hl);
        return NULL;
    }
    return hl;
}

int dws_hostlist_append (struct dws_hostlist *hl, const char *s, dws_error_t *err)
{
    struct dws_hostlist *tmp = dws_hostlist_decode (s, err);
    int rc;

    if (!tmp)
        return -1;
    rc = dws_hostlist_append_list (hl, tmp, err);
    dws_hostlist_destroy (tmp);
    return rc;
}

int dws_hostlist_append_list (struct dws_hostlist *hl,
                              const struct dws_hostlist *other,
                              dws_error_t *err)
{
    if (too_many (hl, other->count, err) < 0)
        return -1;
    for (size_t i = 0; i < other->n; i++) {
        const struct range *r = &other->r[i];
        if (push_range (hl, r->prefix, r->plen, r->numeric, r->lo, r->hi, r->width, err) < 0)
            return -1;
    }
    return 0;
}

struct dws_hostlist *dws_hostlist_copy (const struct dws_hostlist *hl)
{
    struct dws_hostlist *c = dws_hostlist_create ();
    if (!c || dws_hostlist_append_list (c, hl, NULL) < 0) {
        dws_hostlist_destroy (c);
        return NULL;
    }
    return c;
}

size_t dws_hostlist_count (const struct dws_hostlist *hl)
{
    return hl->count;
}

/* --- encode ------------------------------------------------------------- */

struct strbuf {
    char *s;
    size_t len, cap;
    bool failed;
};

static void sb_put (struct strbuf *sb, const char *txt, size_t n)
{
    if (sb->failed)
        return;
    if (sb->len + n + 1 > sb->cap) {
        size_t cap = sb->cap ? sb->cap : 64;
        while (sb->len + n + 1 > cap)
            cap *= 2;
        char *t = realloc (sb->s, cap);
        if (!t) {
            sb->failed = true;
            return;
        }
        sb->s = t;
        sb->cap = cap;
    }
    memcpy (sb->s + sb->len, txt, n);
    sb->len += n;
    sb->s[sb->len] = '\0';
}

static void sb_num (struct strbuf *sb, unsigned long long v, int width)
{
    char tmp[MAX_DIGITS + 4];
    sb_put (sb, tmp, put_num (tmp, v, width));
}

static void sb_range (struct strbuf *sb, const struct range *r)
{
    sb_num (sb, r->lo, r->width);
    if (r->hi > r->lo) {
        sb_put (sb, "-", 1);
        sb_num (sb, r->hi, r->width);
    }
}

static bool same_prefix (const struct range *a, const struct range *b)
{
    return a->numeric && b->numeric && a->plen == b->plen
           && !memcmp (a->prefix, b->prefix, a->plen);
}

char *dws_hostlist_encode (const struct dws_hostlist *hl)
{
    struct strbuf sb = {0};

    sb_put (&sb, "", 0);
    for (size_t i = 0; i < hl->n;) {
        const struct range *r = &hl->r[i];
        size_t j = i + 1;
        if (i > 0)
            sb_put (&sb, ",", 1);
        sb_put (&sb, r->prefix, r->plen);
        if (!r->numeric) {
            i++;
            continue;
        }
        while (j < hl->n && same_prefix (r, &hl->r[j]))
            j++;
        if (j == i + 1 && r->lo == r->hi)
            sb_num (&sb, r->lo, r->width);
        else {
            sb_put (&sb, "[", 1);
            for (size_t k = i; k < j; k++) {
                if (k > i)
                    sb_put (&sb, ",", 1);
                sb_range (&sb, &hl->r[k]);
            }
            sb_put (&sb, "]", 1);
        }
        i = j;
    }
    if (sb.failed) {
        free (sb.s);
        return NULL;
    }
    return sb.s;
}

/* --- access ------------------------------------------------------------- */

/* Length of host `num` of numeric range r (without the NUL). */
static size_t host_len (const struct range *r, unsigned long long num)
{
    int d = dws_digits (num);
    return r->plen + (r->numeric ? (size_t)(d > r->width ? d : r->width) : 0);
}

/* Write host num of r (host_len + 1 bytes) into p. */
static void write_host (const struct range *r, unsigned long long num, char *p)
{
    memcpy (p, r->prefix, r->plen);
    p += r->plen;
    if (r->numeric)
        p += put_num (p, num, r->width);
    *p = '\0';
}

/* Index of the range holding host n (n < count). */
static size_t range_of (const struct dws_hostlist *hl, size_t n)
{
    size_t lo = 0, hi = hl->n; /* first range with pos > n */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (hl->r[mid].pos <= n)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo - 1;
}

int dws_hostlist_nth (const struct dws_hostlist *hl, size_t n, char *buf, size_t len)
{
    if (n >= hl->count)
        return -1;
    const struct range *r = &hl->r[range_of (hl, n)];
    unsigned long long num = r->lo + (n - r->pos);
    size_t need = host_len (r, num);
    if (need > INT_MAX)
        return -1;
    if (need < len)
        write_host (r, num, buf);
    else if (len > 0) {
        char *tmp = malloc (need + 1);
        if (!tmp)
            return -1;
        write_host (r, num, tmp);
        memcpy (buf, tmp, len - 1);
        buf[len - 1] = '\0';
        free (tmp);
    }
    return (int)need;
}

/* Does host name a member of numeric range r?  The host is split at r's
 * own prefix (a range may use any split: "n1[2-3]" holds n12 and n13).
 */
static bool range_has (const struct range *r, const char *host, size_t len, size_t *offset)
{
    unsigned long long num;
    size_t d = len - r->plen;

    if (len <= r->plen || memcmp (host, r->prefix, r->plen) != 0
        || parse_num (host + r->plen, d, &num) < 0 || num < r->lo || num > r->hi)
        return false;
    int want = dws_digits (num);
    if (r->width > want)
        want = r->width;
    if ((size_t)want != d)
        return false;
    *offset = (size_t)(num - r->lo);
    return true;
}

static long find_scan (const struct dws_hostlist *hl, const char *host)
{
    size_t len = strlen (host);

    for (size_t i = 0; i < hl->n; i++) {
        const struct range *r = &hl->r[i];
        size_t offset;
        if (!r->numeric) {
            if (r->plen == len && !memcmp (r->prefix, host, len))
                return (long)r->pos;
        }
        else if (range_has (r, host, len, &offset))
            return (long)(r->pos + offset);
    }
    return -1;
}

static struct dws_hostfind *build_find (const struct dws_hostlist *hl)
{
    struct dws_hostfind_range *fr = malloc (hl->n * sizeof (*fr));
    struct dws_hostfind *f = NULL;

    if (fr) {
        for (size_t i = 0; i < hl->n; i++) {
            const struct range *r = &hl->r[i];
            fr[i] = (struct dws_hostfind_range){
                r->prefix, r->plen, r->numeric, r->lo, r->hi, r->width, r->pos,
            };
        }
        f = dws_hostfind_create (fr, hl->n);
        free (fr);
    }
    return f;
}

long dws_hostlist_find (const struct dws_hostlist *hl, const char *host)
{
    struct dws_hostlist *mut = (struct dws_hostlist *)hl; /* the cache only */
    struct dws_hostfind *f;

    if (hl->n <= FIND_SCAN_MAX)
        return find_scan (hl, host);
    if (!(f = atomic_load (&mut->find))) {
        struct dws_hostfind *expected = NULL;
        if (!(f = build_find (hl)))
            return find_scan (hl, host); /* ENOMEM: still answer */
        if (!atomic_compare_exchange_strong (&mut->find, &expected, f)) {
            dws_hostfind_destroy (f); /* another thread won */
            f = expected;
        }
    }
    return dws_hostfind_lookup (f, host);
}

/* Every host of hl formatted once into one arena: names[i] points into it,
 * and (rng[i], num[i]) say where host i came from.
 */
struct flat {
    char *arena;
    const char **names;
    const struct range **rng;
    unsigned long long *num;
    size_t n;
};

static void flat_free (struct flat *f)
{
    free (f->arena);
    free (f->names);
    free (f->rng);
    free (f->num);
}

static int flatten (const struct dws_hostlist *hl, struct flat *f)
{
    size_t bytes = 0, k = 0;
    char *p;

    memset (f, 0, sizeof (*f));
    for (size_t i = 0; i < hl->n; i++) {
        const struct range *r = &hl->r[i];
        int w = dws_digits (r->hi) > r->width ? dws_digits (r->hi) : r->width;
        bytes += range_count (r) * (r->plen + (r->numeric ? (size_t)w : 0) + 1);
    }
    f->n = hl->count;
    if (!(f->arena = malloc (bytes + 1)) || !(f->names = malloc ((f->n + 1) * sizeof (char *)))
        || !(f->rng = malloc ((f->n + 1) * sizeof (*f->rng)))
        || !(f->num = malloc ((f->n + 1) * sizeof (*f->num)))) {
        flat_free (f);
        return -1;
    }
    p = f->arena;
    for (size_t i = 0; i < hl->n; i++) {
        const struct range *r = &hl->r[i];
        for (unsigned long long v = r->lo;; v++) {
            f->names[k] = p;
            f->rng[k] = r;
            f->num[k++] = v;
            memcpy (p, r->prefix, r->plen);
            p += r->plen;
            if (r->numeric)
                p += put_num (p, v, r->width);
            *p++ = '\0';
            if (!r->numeric || v == r->hi)
                break;
        }
    }
    return 0;
}

char *dws_hostlist_names_text (const struct dws_hostlist *hl, dws_error_t *err)
{
    struct flat f;
    char *s;
    size_t len = 0;

    if (flatten (hl, &f) < 0) {
        dws_errorf (err, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < f.n; i++)
        len += strlen (f.names[i]) + 1;
    if ((s = malloc (len + 1))) {
        char *p = s;
        for (size_t i = 0; i < f.n; i++) {
            size_t l = strlen (f.names[i]);
            memcpy (p, f.names[i], l);
            p += l;
            *p++ = '\n';
        }
        *(len ? p - 1 : p) = '\0';
    }
    else
        dws_errorf (err, "out of memory");
    flat_free (&f);
    return s;
}

char **dws_hostlist_names (const struct dws_hostlist *hl, dws_error_t *err)
{
    char **names = calloc (hl->count + 1, sizeof (char *));
    size_t k = 0;

    if (!names)
        goto nomem;
    for (size_t i = 0; i < hl->n; i++) {
        const struct range *r = &hl->r[i];
        for (unsigned long long v = r->lo;; v++) {
            if (!(names[k] = malloc (host_len (r, v) + 1)))
                goto nomem;
            write_host (r, v, names[k++]);
            if (!r->numeric || v == r->hi)
                break;
        }
    }
    return names;
nomem:
    dws_hostlist_free_names (names);
    dws_errorf (err, "out of memory");
    return NULL;
}

void dws_hostlist_free_names (char **names)
{
    if (names) {
        for (size_t i = 0; names[i]; i++)
            free (names[i]);
        free (names);
    }
}

char **dws_hostlist_expand (const char *s, size_t *count, dws_error_t *err)
{
    struct dws_hostlist *hl = dws_hostlist_decode (s, err);
    char **names;
    if (!hl)
        return NULL;
    if ((names = dws_hostlist_names (hl, err)))
        *count = hl->count;
    dws_hostlist_destroy (hl);
    return names;
}

char *dws_hostlist_compress (const char **names, size_t n, dws_error_t *err)
{
    struct dws_hostlist *hl = dws_hostlist_create ();
    char *s = NULL;

    if (!hl) {
        dws_errorf (err, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        if (dws_hostlist_append_host (hl, names[i], err) < 0)
            goto done;
    if (!(s = dws_hostlist_encode (hl)))
        dws_errorf (err, "out of memory");
done:
    dws_hostlist_destroy (hl);
    return s;
}

char *dws_hostlist_names_json (const struct dws_hostlist *hl, dws_error_t *err)
{
    char **names = dws_hostlist_names (hl, err);
    json_t *a = json_array ();
    char *s = NULL;

    if (!names || !a)
        goto done;
    for (size_t i = 0; names[i]; i++)
        if (json_array_append_new (a, json_string (names[i])) < 0)
            goto done;
    s = json_dumps (a, JSON_COMPACT);
done:
    if (!s && names)
        dws_errorf (err, "out of memory");
    json_decref (a);
    dws_hostlist_free_names (names);
    return s;
}

/* --- set operations ----------------------------------------------------- */

enum setop { OP_UNION, OP_INTERSECT, OP_DIFFERENCE, OP_UNIQ };

/* Append host i of f to out unless `seen` already has it. */
static int keep_host (struct dws_hostlist *out,
                      struct hostindex *seen,
                      const struct flat *f,
                      size_t i,
                      dws_error_t *err)
{
    long prev = dws_hostindex_insert (seen, f->names[i], i);
    const struct range *r = f->rng[i];
    if (prev == -2)
        return dws_errorf (err, "out of memory");
    if (prev != -1)
        return 0;
    return push_range (out, r->prefix, r->plen, r->numeric, f->num[i], f->num[i], r->width, err);
}

static struct dws_hostlist *setop (const struct dws_hostlist *a,
                                   const struct dws_hostlist *b,
                                   enum setop op,
                                   dws_error_t *err)
{
    struct flat fa = {0}, fb = {0};
    struct hostindex *inb = NULL, *seen = NULL;
    struct dws_hostlist *out = NULL;

    if (flatten (a, &fa) < 0 || (b && flatten (b, &fb) < 0)
        || !(seen = dws_hostindex_create (fa.n + fb.n))
        || (b && !(inb = dws_hostindex_create (fb.n)))
        || !(out = dws_hostlist_create ()))
        goto nomem;
    for (size_t i = 0; i < fb.n; i++)
        if (dws_hostindex_insert (inb, fb.names[i], i) == -2)
            goto nomem;
    for (size_t i = 0; i < fa.n; i++) {
        bool in_b = inb && dws_hostindex_find (inb, fa.names[i]) >= 0;
        bool keep = op == OP_UNION || op == OP_UNIQ || (op == OP_INTERSECT ? in_b : !in_b);
        if (keep && keep_host (out, seen, &fa, i, err) < 0)
            goto fail;
    }
    if (op == OP_UNION) {
        for (size_t i = 0; i < fb.n; i++)
            if (keep_host (out, seen, &fb, i, err) < 0)
                goto fail;
    }
    goto done;
nomem:
    dws_errorf (err, "out of memory");
fail:
    dws_hostlist_destroy (out);
    out = NULL;
done:
    dws_hostindex_destroy (inb);
    dws_hostindex_destroy (seen);
    flat_free (&fa);
    flat_free (&fb);
    return out;
}

struct dws_hostlist *dws_hostlist_union (const struct dws_hostlist *a,
                                         const struct dws_hostlist *b,
                                         dws_error_t *err)
{
    return setop (a, b, OP_UNION, err);
}

struct dws_hostlist *dws_hostlist_intersect (const struct dws_hostlist *a,
                                             const struct dws_hostlist *b,
                                             dws_error_t *err)
{
    return setop (a, b, OP_INTERSECT, err);
}

struct dws_hostlist *dws_hostlist_difference (const struct dws_hostlist *a,
                                              const struct dws_hostlist *b,
                                              dws_error_t *err)
{
    return setop (a, b, OP_DIFFERENCE, err);
}

struct dws_hostlist *dws_hostlist_uniq (const struct dws_hostlist *hl, dws_error_t *err)
{
    return setop (hl, NULL, OP_UNIQ, err);
}

/* Sort key of one host, as flux-core's hostlist_sort() orders them:
 * prefix, then plain names before numbered ones, then printed width, then
 * number ("n9,n10,n09" sorts as n9,n09,n10; "x45,x015" as x45,x015).
 * Equal keys are equal names, so sorting puts repeats side by side.
 */
struct sortkey {
    const struct range *r;
    unsigned long long num;
    int width; /* printed digits */
};

static int cmp_sortkey (const void *x, const void *y)
{
    const struct sortkey *a = x, *b = y;
    size_t plen = a->r->plen < b->r->plen ? a->r->plen : b->r->plen;
    int c = memcmp (a->r->prefix, b->r->prefix, plen);
    if (c)
        return c;
    if (a->r->plen != b->r->plen)
        return a->r->plen < b->r->plen ? -1 : 1;
    if (a->r->numeric != b->r->numeric)
        return a->r->numeric ? 1 : -1;
    if (a->width != b->width)
        return a->width < b->width ? -1 : 1;
    return (a->num > b->num) - (a->num < b->num);
}

struct dws_hostlist *dws_hostlist_sort (const struct dws_hostlist *hl, dws_error_t *err)
{
    struct sortkey *keys = malloc ((hl->count + 1) * sizeof (*keys));
    struct dws_hostlist *out = dws_hostlist_create ();
    size_t k = 0;

    if (!keys || !out)
        goto nomem;
    for (size_t i = 0; i < hl->n; i++)
        for (unsigned long long v = hl->r[i].lo;; v++) {
            keys[k].r = &hl->r[i];
            keys[k].width = (int)(host_len (&hl->r[i], v) - hl->r[i].plen);
            keys[k++].num = v;
            if (!hl->r[i].numeric || v == hl->r[i].hi)
                break;
        }
    qsort (keys, k, sizeof (*keys), cmp_sortkey);
    for (size_t i = 0; i < k; i++) {
        const struct range *r = keys[i].r;
        if (push_range (out, r->prefix, r->plen, r->numeric, keys[i].num, keys[i].num,
                        r->width, err) < 0)
            goto fail;
    }
    free (keys);
    return out;
nomem:
    dws_errorf (err, "out of memory");
fail:
    free (keys);
    dws_hostlist_destroy (out);
    return NULL;
}

