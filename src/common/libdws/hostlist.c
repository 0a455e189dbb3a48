/* hostlist.c - RFC 29 hostlists as runs of numeric ranges (see hostlist.h).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "hostindex.h"
#include "hostlist.h"

#define MAX_DIGITS 18 /* numeric parts longer than this are plain names */

struct range {
    char *prefix;
    size_t plen;
    unsigned long long lo, hi; /* inclusive; unused when !numeric */
    int width;                 /* zero-padded width, 0 = natural */
    bool numeric;
};

struct dws_hostlist {
    struct range *r;
    size_t n, cap;
    size_t count; /* hosts */
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
            free (hl->r[i].prefix);
        free (hl->r);
        free (hl);
    }
}

static int digits (unsigned long long v)
{
    int n = 1;
    while (v >= 10) {
        v /= 10;
        n++;
    }
    return n;
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
        return digits (num) == r->width;
    if (r->width == 0 && width > 0)
        return digits (r->lo) == width;
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
    if (reserve (hl) < 0 || !(hl->r[hl->n].prefix = strndup (prefix, plen)))
        return dws_errorf (err, "out of memory");
    hl->r[hl->n].plen = plen;
    hl->r[hl->n].numeric = numeric;
    hl->r[hl->n].lo = lo;
    hl->r[hl->n].hi = hi;
    hl->r[hl->n].width = width;
    hl->n++;
    hl->count += n;
    return 0;
}

static bool valid_name_char (char c)
{
    return c > ' ' && c != ',' && c != '[' && c != ']' && c != 0x7f;
}

static int check_name (const char *s, size_t len, const char *item, dws_error_t *err)
{
    for (size_t i = 0; i < len; i++)
        if (!valid_name_char (s[i]))
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

/* item = prefix "[" ranges "]" */
static int append_bracketed (struct dws_hostlist *hl,
                             const char *item,
                             size_t len,
                             const char *open,
                             dws_error_t *err)
{
    const char *close = memchr (open, ']', (size_t)(item + len - open));
    size_t plen = (size_t)(open - item);
    char *copy = strndup (item, len);
    int rc = -1;

    if (!copy)
        return dws_errorf (err, "out of memory");
    if (!close || memchr (open + 1, '[', (size_t)(close - open - 1)))
        dws_errorf (err, "unbalanced brackets in '%s'", copy);
    else if (close != item + len - 1)
        dws_errorf (err, "unexpected text after ']' in '%s'", copy);
    else if (check_name (item, plen, copy, err) < 0)
        ;
    else if (close == open + 1)
        dws_errorf (err, "empty brackets in '%s'", copy);
    else {
        const char *p = open + 1;
        rc = 0;
        while (rc == 0 && p < close) {
            const char *comma = memchr (p, ',', (size_t)(close - p));
            const char *end = comma ? comma : close;
            const char *dash = memchr (p, '-', (size_t)(end - p));
            unsigned long long lo, hi;
            size_t lolen = dash ? (size_t)(dash - p) : (size_t)(end - p);
            int width;

            if (parse_num (p, lolen, &lo) < 0
                || (dash && parse_num (dash + 1, (size_t)(end - dash - 1), &hi) < 0)) {
                rc = dws_errorf (err, "invalid range '%.*s' in '%s'", (int)(end - p), p, copy);
                break;
            }
            if (!dash)
                hi = lo;
            if (hi < lo) {
                rc = dws_errorf (err,
                                 "invalid range '%.*s' in '%s' (end before start)",
                                 (int)(end - p),
                                 p,
                                 copy);
                break;
            }
            width = (p[0] == '0' && lolen > 1) ? (int)lolen : 0;
            rc = push_range (hl, item, plen, true, lo, hi, width, err);
            if (comma && comma + 1 == close)
                rc = dws_errorf (err, "trailing comma in brackets of '%s'", copy);
            p = end + 1;
        }
    }
    free (copy);
    return rc;
}

int dws_hostlist_append (struct dws_hostlist *hl, const char *s, dws_error_t *err)
{
    const char *p = s;

    if (!s)
        return dws_errorf (err, "no hostlist given");
    if (!*s)
        return 0;
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
            char *host = strndup (p, len);
            int rc;
            if (!host)
                return dws_errorf (err, "out of memory");
            rc = dws_hostlist_append_host (hl, host, err);
            free (host);
            if (rc < 0)
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
    struct dws_hostlist *hl = dws_hostlist_create ();
    if (!hl) {
        dws_errorf (err, "out of memory");
        return NULL;
    }
    if (dws_hostlist_append (hl, s, err) < 0) {
        dws_hostlist_destroy (hl);
        return NULL;
    }
    return hl;
}

int dws_hostlist_append_list (struct dws_hostlist *hl,
                              const struct dws_hostlist *other,
                              dws_error_t *err)
{
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
    char tmp[32];
    int n = snprintf (tmp, sizeof (tmp), "%0*llu", width, v);
    sb_put (sb, tmp, (size_t)n);
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

static int format_host (const struct range *r,
                        unsigned long long num,
                        char *buf,
                        size_t len)
{
    int n;
    if (r->numeric)
        n = snprintf (buf, len, "%.*s%0*llu", (int)r->plen, r->prefix, r->width, num);
    else
        n = snprintf (buf, len, "%.*s", (int)r->plen, r->prefix);
    return (n < 0 || (size_t)n >= len) ? -1 : n;
}

int dws_hostlist_nth (const struct dws_hostlist *hl, size_t n, char *buf, size_t len)
{
    for (size_t i = 0; i < hl->n; i++) {
        size_t c = range_count (&hl->r[i]);
        if (n < c)
            return format_host (&hl->r[i], hl->r[i].lo + n, buf, len);
        n -= c;
    }
    return -1;
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
    int want = digits (num);
    if (r->width > want)
        want = r->width;
    if ((size_t)want != d)
        return false;
    *offset = (size_t)(num - r->lo);
    return true;
}

long dws_hostlist_find (const struct dws_hostlist *hl, const char *host)
{
    size_t pos = 0;
    size_t len = strlen (host);

    for (size_t i = 0; i < hl->n; i++) {
        const struct range *r = &hl->r[i];
        size_t offset;
        if (!r->numeric) {
            if (r->plen == len && !memcmp (r->prefix, host, len))
                return (long)pos;
        }
        else if (range_has (r, host, len, &offset))
            return (long)(pos + offset);
        pos += range_count (r);
    }
    return -1;
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

static int flatten (const struct dws_hostlist *hl, struct flat *f)
{
    size_t bytes = 0, k = 0;
    char *p;

    memset (f, 0, sizeof (*f));
    for (size_t i = 0; i < hl->n; i++) {
        const struct range *r = &hl->r[i];
        int w = digits (r->hi) > r->width ? digits (r->hi) : r->width;
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
    char buf[1024];

    if (!names)
        goto nomem;
    for (size_t i = 0; i < hl->n; i++) {
        const struct range *r = &hl->r[i];
        for (unsigned long long v = r->lo;; v++) {
            int n = format_host (r, v, buf, sizeof (buf));
            if (n < 0) {
                dws_errorf (err, "host name too long: '%.*s...'", 64, r->prefix);
                dws_hostlist_free_names (names);
                return NULL;
            }
            if (!(names[k++] = strdup (buf)))
                goto nomem;
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

/* Sort key of one host: prefix, then numeric before plain, then number,
 * then width (so "n01" and "n1" order consistently).
 */
struct sortkey {
    const struct range *r;
    unsigned long long num;
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
        return a->r->numeric ? -1 : 1;
    if (a->num != b->num)
        return a->num < b->num ? -1 : 1;
    return (a->r->width > b->r->width) - (a->r->width < b->r->width);
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
