/* lustre.c - Lustre on the rabbits Fluxion chooses (see lustre.h).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse/breakdown.h"
#include "parse/capacity.h"
#include "util/jsonio.h"
#include "parse/labels.h"
#include "lustre.h"
#include "servers.h"

#define GIB (1024LL * 1024 * 1024)
#define MAX_RABBIT_GIB (INT64_MAX / GIB)

static int64_t ceil_div (int64_t a, int64_t b)
{
    return a / b + (a % b ? 1 : 0);
}

/* --- configuration ------------------------------------------------------ */

static const struct {
    const char *name;
    bool boolean;
    int64_t min;
    const char *dflt;
} lkeys[] = {
    /* alphabetical: the order of the output and of messages */
    {"max_rabbits", false, 0, "0"},
    {"mdts", false, 1, "1"},
    {"min_rabbits", false, 1, "1"},
    {"osts_per_mdt", false, 0, "0"},
    {"spread", true, 0, "false"},
    {"whole_rabbit_gib", false, 0, "0"},
};
#define NLKEYS (sizeof (lkeys) / sizeof (lkeys[0]))

json_t *dws_lustre_check_table (const char *path, json_t *val, dws_error_t *err)
{
    json_t *out;
    const char *key;
    json_t *v;

    if (val && !json_is_null (val) && !json_is_object (val)) {
        dws_errorf (err, "%s: must be a table", path);
        return NULL;
    }
    json_object_foreach (val, key, v) {
        size_t i;
        for (i = 0; i < NLKEYS; i++)
            if (!strcmp (key, lkeys[i].name))
                break;
        if (i == NLKEYS) {
            dws_errorf (err,
                        "%s.%.64s: unknown key (valid keys: max_rabbits, mdts, min_rabbits,"
                        " osts_per_mdt, spread, whole_rabbit_gib)",
                        path, key);
            return NULL;
        }
    }
    if (!(out = json_object ())) {
        dws_errorf (err, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < NLKEYS; i++) {
        json_t *x = json_object_get (val, lkeys[i].name);
        json_t *n;
        if (!x || json_is_null (x))
            n = json_loads (lkeys[i].dflt, JSON_DECODE_ANY, NULL);
        else if (lkeys[i].boolean) {
            if (!json_is_boolean (x)) {
                dws_errorf (err, "%s.%s: must be true or false", path, lkeys[i].name);
                goto fail;
            }
            n = json_incref (x);
        }
        else {
            int64_t max = !strcmp (lkeys[i].name, "whole_rabbit_gib") ? MAX_RABBIT_GIB
                                                                      : DWS_BREAKDOWN_MAX_COUNT;
            if (!json_is_integer (x) || json_integer_value (x) < lkeys[i].min
                || json_integer_value (x) > max) {
                dws_errorf (err, "%s.%s: must be an integer from %lld to %lld", path,
                            lkeys[i].name, (long long)lkeys[i].min, (long long)max);
                goto fail;
            }
            n = json_integer (json_integer_value (x));
        }
        if (!n || json_object_set_new (out, lkeys[i].name, n) < 0) {
            dws_errorf (err, "out of memory");
            goto fail;
        }
    }
    {
        json_int_t lo = json_integer_value (json_object_get (out, "min_rabbits"));
        json_int_t hi = json_integer_value (json_object_get (out, "max_rabbits"));
        if (hi && hi < lo) {
            dws_errorf (err, "%s: max_rabbits (%lld) is below min_rabbits (%lld)", path,
                        (long long)hi, (long long)lo);
            goto fail;
        }
    }
    return out;
fail:
    json_decref (out);
    return NULL;
}

/* c from a checked table (NULL: out of memory, all zero). */
static void conf_from (json_t *t, struct dws_lustre_conf *c)
{
    c->spread = json_is_true (json_object_get (t, "spread"));
    c->min_rabbits = json_integer_value (json_object_get (t, "min_rabbits"));
    c->max_rabbits = json_integer_value (json_object_get (t, "max_rabbits"));
    c->mdts = json_integer_value (json_object_get (t, "mdts"));
    c->osts_per_mdt = json_integer_value (json_object_get (t, "osts_per_mdt"));
    c->whole_rabbit_gib = json_integer_value (json_object_get (t, "whole_rabbit_gib"));
}

/* The defaults are lkeys' (what the check makes of an empty table). */
void dws_lustre_conf_default (struct dws_lustre_conf *c)
{
    json_t *t = dws_lustre_check_table ("rabbit.lustre", NULL, NULL);
    conf_from (t, c);
    json_decref (t);
}

int dws_lustre_conf_parse (json_t *table, struct dws_lustre_conf *c, dws_error_t *err)
{
    json_t *t;
    if (!table || json_is_null (table)) {
        dws_lustre_conf_default (c);
        return 0;
    }
    if (!(t = dws_lustre_check_table ("rabbit.lustre", table, err)))
        return -1;
    conf_from (t, c);
    json_decref (t);
    return 0;
}

/* --- the jobspec rewrite -------------------------------------------------- */

/* status.storage.allocationSets of a breakdown (whole object or status),
 * or NULL.
 */
static json_t *sets_of (json_t *bd)
{
    json_t *status = json_object_get (bd, "status");
    if (!json_is_object (status))
        status = bd;
    return json_object_get (json_object_get (status, "storage"), "allocationSets");
}

static bool is_lustre_label (const char *l)
{
    return l && (!strcmp (l, "ost") || !strcmp (l, "mdt") || !strcmp (l, "mgt")
                 || !strcmp (l, "mgtmdt"));
}

static bool has_ssd (json_t *list, int depth)
{
    size_t i;
    json_t *r;
    if (depth > 2048)
        return true;
    json_array_foreach (list, i, r) {
        const char *t = json_string_value (json_object_get (r, "type"));
        if ((t && !strcmp (t, "ssd")) || has_ssd (json_object_get (r, "with"), depth + 1))
            return true;
    }
    return false;
}

bool dws_lustre_spreads (json_t *resources, json_t *breakdowns, const struct dws_lustre_conf *c)
{
    size_t b, s;
    json_t *bd, *set;
    bool any = false;

    if (!c || !c->spread || !json_is_array (resources) || json_array_size (resources) != 1)
        return false;
    json_t *top = json_array_get (resources, 0);
    const char *t = json_string_value (json_object_get (top, "type"));
    if (!t || strcmp (t, "node") || !json_is_integer (json_object_get (top, "count"))
        || has_ssd (resources, 0))
        return false;
    json_array_foreach (breakdowns, b, bd) {
        json_array_foreach (sets_of (bd), s, set) {
            if (!is_lustre_label (json_string_value (json_object_get (set, "label"))))
                return false;
            any = true;
        }
    }
    return any;
}

json_t *dws_lustre_rewrite (json_t *resources,
                            json_t *breakdowns,
                            const struct dws_lustre_conf *c,
                            int64_t min_gib,
                            bool *unchanged,
                            bool *spread,
                            dws_error_t *err)
{
    int64_t nnodes, gib;
    json_t *out;

    *spread = false;
    if (!dws_lustre_spreads (resources, breakdowns, c))
        return dws_breakdown_rewrite (resources, breakdowns, min_gib, unchanged, err);
    *unchanged = false;
    if (min_gib < 0) {
        dws_errorf (err, "the minimum allocation size must be >= 0 GiB");
        return NULL;
    }
    /* the same checks as the node-local rewrite (labels, strategies,
     * readiness); with nnodes = 1 the per-node GiB is the whole file system
     */
    if ((nnodes = dws_jobspec_node_count (resources, err)) < 0
        || (gib = dws_breakdown_gib_per_node (breakdowns, 1, min_gib, err)) < 0)
        return NULL;
    /* headroom: Fluxion packs the ssd (whole rabbits first) and its
     * reservation is what the OSTs may use; 1/32 more lets equal-size
     * OSTs of at most 64 per rabbit fit any packing (lustre.h) */
    if (gib > INT64_MAX / 2) {
        dws_errorf (err, "the Lustre capacity is too large");
        return NULL;
    }
    gib += ceil_div (gib, DWS_LUSTRE_HEADROOM);
    if (c->whole_rabbit_gib > 0) {
        int64_t j = ceil_div (gib, c->whole_rabbit_gib);
        if (j < c->min_rabbits)
            j = c->min_rabbits;
        if (c->max_rabbits > 0 && j > c->max_rabbits) {
            dws_errorf (err,
                        "Lustre needs %lld GiB: %lld whole rabbits of %lld GiB, more than"
                        " rabbit.lustre.max_rabbits (%lld)",
                        (long long)gib, (long long)j, (long long)c->whole_rabbit_gib,
                        (long long)c->max_rabbits);
            return NULL;
        }
        if (j > INT64_MAX / c->whole_rabbit_gib) {
            dws_errorf (err, "the Lustre capacity is too large");
            return NULL;
        }
        gib = j * c->whole_rabbit_gib;
    }
    out = json_pack ("[O {s:s s:I s:b}]", json_array_get (resources, 0), "type", "ssd", "count",
                     (json_int_t)gib, "exclusive", 1);
    if (!out)
        dws_errorf (err, "out of memory");
    *spread = true;
    return out;
}

/* --- R -------------------------------------------------------------------- */

json_t *dws_lustre_reserved_of_R (json_t *R, dws_error_t *err)
{
    json_t *nodes = json_object_get (
        json_object_get (json_object_get (R, "scheduling"), "graph"), "nodes");
    json_t *chassis = json_object (); /* containment path -> rabbit */
    json_t *out = json_object ();
    size_t i;
    json_t *v;

    if (!json_is_object (R)) {
        dws_errorf (err, "R must be an object");
        goto fail;
    }
    if (!chassis || !out) {
        dws_errorf (err, "out of memory");
        goto fail;
    }
    if (nodes && !json_is_array (nodes)) {
        dws_errorf (err, "R scheduling.graph.nodes is not a list");
        goto fail;
    }
    json_array_foreach (nodes, i, v) {
        json_t *md = json_object_get (v, "metadata");
        const char *t = json_string_value (json_object_get (md, "type"));
        const char *path = json_string_value (
            json_object_get (json_object_get (md, "paths"), "containment"));
        const char *rabbit = json_string_value (
            json_object_get (json_object_get (md, "properties"), "rabbit"));
        if (t && path && rabbit && !strcmp (t, "chassis"))
            json_object_set_new (chassis, path, json_string (rabbit));
    }
    json_array_foreach (nodes, i, v) {
        json_t *md = json_object_get (v, "metadata");
        const char *t = json_string_value (json_object_get (md, "type"));
        const char *path = json_string_value (
            json_object_get (json_object_get (md, "paths"), "containment"));
        json_t *size = json_object_get (md, "size");
        char parent[512];
        const char *slash;
        if (!t || strcmp (t, "ssd"))
            continue;
        if (!path || !(slash = strrchr (path, '/')) || (size_t)(slash - path) >= sizeof (parent)) {
            dws_errorf (err, "R scheduling.graph.nodes[%zu]: ssd vertex without a containment"
                        " path", i);
            goto fail;
        }
        memcpy (parent, path, (size_t)(slash - path));
        parent[slash - path] = '\0';
        const char *rabbit = json_string_value (json_object_get (chassis, parent));
        if (!rabbit) {
            dws_errorf (err, "R: ssd vertex '%.200s' is not under a chassis with a rabbit"
                        " property", path);
            goto fail;
        }
        json_int_t gib = size ? json_integer_value (size) : 1;
        if ((size && !json_is_integer (size)) || gib < 1 || gib > MAX_RABBIT_GIB) {
            dws_errorf (err, "R: ssd vertex '%.200s' has a bad size", path);
            goto fail;
        }
        json_int_t have = json_integer_value (json_object_get (out, rabbit));
        if (have > MAX_RABBIT_GIB - gib) {
            dws_errorf (err, "R: too much ssd on rabbit '%.200s'", rabbit);
            goto fail;
        }
        if (json_object_set_new (out, rabbit, json_integer (have + gib)) < 0) {
            dws_errorf (err, "out of memory");
            goto fail;
        }
    }
    json_decref (chassis);
    return out;
fail:
    json_decref (chassis);
    json_decref (out);
    return NULL;
}

/* --- placement ------------------------------------------------------------ */

struct rab {
    const char *name;
    int64_t reserved; /* bytes */
    int64_t md;       /* bytes of MDT/MGT placed on it */
    int64_t ost;      /* OST allocations on it */
};

static int by_reserved (const void *a, const void *b)
{
    const struct rab *x = a, *y = b;
    if (x->reserved != y->reserved)
        return x->reserved > y->reserved ? -1 : 1;
    return dws_hostname_cmp (x->name, y->name);
}


struct lset {
    const char *label;
    enum dws_strategy strategy;
    int64_t cap;
    int64_t count; /* constraints.count, 0 = none */
    int64_t size;  /* decided allocationSize */
};

static int read_sets (json_t *sets, struct lset *ls, size_t n, dws_error_t *err)
{
    for (size_t i = 0; i < n; i++) {
        json_t *set = json_array_get (sets, i);
        const char *sname = NULL;
        json_int_t cap = 0;
        json_t *k;
        if (json_unpack (set, "{s:s s:s s:I}", "label", &ls[i].label, "allocationStrategy",
                         &sname, "minimumCapacity", &cap)
                < 0
            || cap < 1)
            return dws_errorf (err,
                               "allocation set %zu needs a label, an allocationStrategy and an"
                               " integer minimumCapacity >= 1",
                               i);
        if (dws_strategy_parse (sname, &ls[i].strategy, err) < 0)
            return dws_error_prefix (err, "allocation set %zu (%s): ", i, ls[i].label);
        if (!is_lustre_label (ls[i].label) || ls[i].strategy == DWS_ALLOCATE_PER_COMPUTE)
            return dws_errorf (err,
                               "allocation set %zu (%s): Lustre placement takes only ost, mdt,"
                               " mgt and mgtmdt sets",
                               i, ls[i].label);
        k = json_object_get (json_object_get (set, "constraints"), "count");
        ls[i].count = json_is_integer (k) && json_integer_value (k) > 0 ? json_integer_value (k)
                                                                         : 0;
        ls[i].cap = cap;
    }
    return 0;
}

static bool is_ost (const struct lset *s)
{
    return !strcmp (s->label, "ost");
}

/* MD allocations per set for j OST rabbits */
static int64_t md_count (const struct lset *s, const struct dws_lustre_conf *c, int64_t j)
{
    if (s->strategy == DWS_ALLOCATE_SINGLE_SERVER)
        return 1;
    if (s->count)
        return s->count;
    if (c->osts_per_mdt > 0)
        return ceil_div (j, c->osts_per_mdt);
    return c->mdts;
}

/* Place the MD sets over the first j rabbits (round-robin): sets each
 * MD set's size and every rabbit's md bytes.
 */
static void place_md (struct lset *ls, size_t ns, struct rab *r, int64_t j,
                      const struct dws_lustre_conf *c, int64_t min_bytes)
{
    for (int64_t i = 0; i < j; i++)
        r[i].md = 0;
    for (size_t s = 0; s < ns; s++) {
        if (is_ost (&ls[s]))
            continue;
        int64_t d = md_count (&ls[s], c, j);
        ls[s].size = ceil_div (ls[s].cap, d);
        if (ls[s].size < min_bytes)
            ls[s].size = min_bytes;
        for (int64_t k = 0; k < d; k++) {
            int64_t i = k % j;
            if (r[i].md <= INT64_MAX - ls[s].size)
                r[i].md += ls[s].size;
            else
                r[i].md = INT64_MAX;
        }
    }
}

static int emit (json_t *out, const char *label, int64_t size, struct rab *r, size_t n,
                 int64_t *counts)
{
    /* storage entries by name */
    size_t *idx = calloc (n ? n : 1, sizeof (*idx));
    json_t *list = json_array ();
    int rc = -1;
    if (!idx || !list)
        goto done;
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (counts[i] > 0)
            idx[m++] = i;
    for (size_t a = 1; a < m; a++) /* insertion sort: n is small */
        for (size_t b = a; b > 0 && dws_hostname_cmp (r[idx[b - 1]].name, r[idx[b]].name) > 0;
             b--) {
            size_t t = idx[b];
            idx[b] = idx[b - 1];
            idx[b - 1] = t;
        }
    for (size_t a = 0; a < m; a++)
        if (json_array_append_new (list, json_pack ("{s:s s:I}", "name", r[idx[a]].name,
                                                    "allocationCount",
                                                    (json_int_t)counts[idx[a]]))
            < 0)
            goto done;
    rc = json_array_append_new (out, json_pack ("{s:s s:I s:O}", "label", label,
                                                "allocationSize", (json_int_t)size, "storage",
                                                list));
done:
    json_decref (list);
    free (idx);
    return rc;
}

/* What one placement works on: the rabbits of R (most reserved first),
 * the breakdown's sets, and what is decided: j OST rabbits, OSTs of c
 * bytes, counts[i] OSTs on rabbit i.
 */
struct placement {
    const struct dws_lustre_conf *conf;
    int64_t min_bytes;
    struct rab *r;
    size_t n;
    struct lset *ls;
    size_t ns;
    int64_t *counts;
    int64_t ost_cap; /* the ost set's capacity, 0 without one */
    int64_t j;
    int64_t c;
};

static void placement_free (struct placement *p)
{
    free (p->r);
    free (p->ls);
    free (p->counts);
}

/* The allocationSets of a breakdown's status.storage, given the
 * breakdown, its status or its status.storage; NULL when none.
 */
static json_t *allocation_sets_of (json_t *storage)
{
    json_t *status = json_object_get (storage, "status");
    if (json_is_object (status))
        storage = status;
    if (json_is_object (json_object_get (storage, "storage")))
        storage = json_object_get (storage, "storage");
    json_t *sets = json_object_get (storage, "allocationSets");
    return json_is_array (sets) ? sets : NULL;
}

/* Read R's rabbits (most reserved first, then by name) and the sets. */
static int placement_read (struct placement *p, json_t *sets, json_t *reserved,
                           dws_error_t *err)
{
    const char *name;
    json_t *v;

    p->ns = json_array_size (sets);
    if (!(p->r = calloc (json_object_size (reserved), sizeof (*p->r)))
        || !(p->ls = calloc (p->ns ? p->ns : 1, sizeof (*p->ls)))
        || !(p->counts = calloc (json_object_size (reserved), sizeof (*p->counts))))
        return dws_errorf (err, "out of memory");
    json_object_foreach (reserved, name, v) {
        if (!json_is_integer (v) || json_integer_value (v) < 1
            || json_integer_value (v) > MAX_RABBIT_GIB)
            return dws_errorf (err, "rabbit '%s': reserved GiB must be an integer from 1 to %lld",
                               name, (long long)MAX_RABBIT_GIB);
        p->r[p->n].name = name;
        p->r[p->n++].reserved = json_integer_value (v) * GIB;
    }
    qsort (p->r, p->n, sizeof (*p->r), by_reserved);
    if (read_sets (sets, p->ls, p->ns, err) < 0)
        return -1;
    for (size_t s = 0; s < p->ns; s++) {
        if (is_ost (&p->ls[s])) {
            if (p->ost_cap)
                return dws_errorf (err, "allocation set %zu: a breakdown has a single ost set", s);
            p->ost_cap = p->ls[s].cap;
        }
    }
    return 0;
}

/* Equal OSTs, one on each of the largest j rabbits in [lo, hi] whose
 * first j can each hold one OST and their MDT/MGT share.  False (and j
 * below lo) when no j fits.
 */
static bool place_equal (struct placement *p)
{
    const struct dws_lustre_conf *conf = p->conf;
    int64_t hi = (int64_t)p->n, lo = conf->min_rabbits;
    if (conf->max_rabbits > 0 && conf->max_rabbits < hi)
        hi = conf->max_rabbits;
    if (lo > hi)
        lo = hi; /* R holds fewer rabbits than min_rabbits: use them all */
    if (lo < 1)
        lo = 1;
    for (p->j = p->ost_cap ? hi : 1; p->j >= lo; p->j--) {
        p->c = 0;
        if (p->ost_cap) {
            p->c = ceil_div (ceil_div (p->ost_cap, p->j), GIB) * GIB;
            if (p->c < p->min_bytes)
                p->c = p->min_bytes;
        }
        place_md (p->ls, p->ns, p->r, p->j, conf, p->min_bytes);
        bool fits = true;
        for (int64_t i = 0; i < p->j && fits; i++)
            fits = p->r[i].md <= p->r[i].reserved && p->c <= p->r[i].reserved - p->r[i].md;
        if (fits)
            break;
    }
    if (p->j < lo)
        return false;
    for (int64_t i = 0; i < p->j; i++)
        p->counts[i] = p->ost_cap ? 1 : 0;
    return true;
}

/* The largest OST size u (whole GiB, a whole fraction 1/k of some
 * rabbit's room, at least the minimum) such that the OSTs of size u
 * fitting on each rabbit add up to the ost set; 0 when none does.
 */
static int64_t uneven_unit (const struct placement *p)
{
    const struct rab *r = p->r;
    int64_t unit = 0;
    int64_t min_gib = p->min_bytes > 0 ? ceil_div (p->min_bytes, GIB) : 1;
    for (size_t i = 0; i < p->n && p->ost_cap; i++) {
        int64_t room = (r[i].reserved - r[i].md) / GIB;
        for (int64_t k = 1; k <= 64; k++) {
            int64_t u = room / k, sum = 0;
            if (u < min_gib)
                break;
            if (u <= unit)
                continue;
            for (size_t x = 0; x < p->n; x++)
                sum += ((r[x].reserved - r[x].md) / GIB / u) * u;
            if (sum >= ceil_div (p->ost_cap, GIB))
                unit = u;
        }
    }
    return unit;
}

/* Uneven reservation: the MDT/MGT over every rabbit of R, and on each
 * as many equal-size OSTs (uneven_unit) as fit.
 */
static int place_uneven (struct placement *p, dws_error_t *err)
{
    struct rab *r = p->r;
    p->j = (int64_t)p->n;
    place_md (p->ls, p->ns, r, p->j, p->conf, p->min_bytes);
    for (size_t i = 0; i < p->n; i++) {
        if (r[i].md > r[i].reserved)
            return dws_errorf (err, "rabbit '%s': Fluxion reserved %lld GiB, less than its"
                               " MDT/MGT share", r[i].name, (long long)(r[i].reserved / GIB));
    }
    int64_t unit = uneven_unit (p);
    if (p->ost_cap && unit == 0) {
        int64_t sum = 0;
        for (size_t i = 0; i < p->n; i++)
            sum += r[i].reserved / GIB;
        return dws_errorf (err,
                           "Fluxion reserved %lld GiB on %zu rabbit(s), too little for %lld GiB"
                           " of OSTs plus the MDT/MGT",
                           (long long)sum, p->n, (long long)ceil_div (p->ost_cap, GIB));
    }
    for (size_t i = 0; i < p->n && p->ost_cap; i++)
        p->counts[i] = (r[i].reserved - r[i].md) / (unit * GIB);
    p->c = unit * GIB;
    return 0;
}

/* The allocation sets decided: each set's allocations per rabbit. */
static json_t *placement_emit (const struct placement *p, dws_error_t *err)
{
    json_t *out = json_array ();
    if (!out)
        goto nomem;
    for (size_t s = 0; s < p->ns; s++) {
        const struct lset *ls = &p->ls[s];
        int64_t *mc = calloc (p->n, sizeof (*mc));
        int rc;
        if (!mc)
            goto nomem;
        if (is_ost (ls)) {
            for (size_t i = 0; i < p->n; i++)
                mc[i] = p->counts[i];
            rc = emit (out, ls->label, p->c, p->r, p->n, mc);
        }
        else {
            int64_t d = md_count (ls, p->conf, p->j);
            for (int64_t k = 0; k < d; k++)
                mc[k % p->j]++;
            rc = emit (out, ls->label, ls->size, p->r, p->n, mc);
        }
        free (mc);
        if (rc < 0)
            goto nomem;
    }
    return out;
nomem:
    dws_errorf (err, "out of memory");
    json_decref (out);
    return NULL;
}

json_t *dws_lustre_allocation_sets (json_t *storage,
                                    json_t *reserved,
                                    const struct dws_lustre_conf *conf,
                                    int64_t min_bytes,
                                    dws_error_t *err)
{
    struct dws_lustre_conf dflt;
    struct placement p = {0};
    json_t *sets, *out = NULL;

    if (!conf) {
        dws_lustre_conf_default (&dflt);
        conf = &dflt;
    }
    if (min_bytes < 0) {
        dws_errorf (err, "the minimum allocation size must be >= 0 bytes");
        return NULL;
    }
    if (!(sets = allocation_sets_of (storage))) {
        dws_errorf (err, "status.storage must have an allocationSets list");
        return NULL;
    }
    if (!json_is_object (reserved) || json_object_size (reserved) == 0) {
        dws_errorf (err, "Fluxion allocated no rabbit storage to the job (R holds no ssd)");
        return NULL;
    }
    p.conf = conf;
    p.min_bytes = min_bytes;
    if (placement_read (&p, sets, reserved, err) == 0
        && (place_equal (&p) || place_uneven (&p, err) == 0))
        out = placement_emit (&p, err);
    placement_free (&p);
    return out;
}

/* --- cffi ----------------------------------------------------------------- */

static int conf_of (const char *conf_json, struct dws_lustre_conf *c, dws_error_t *err)
{
    json_t *t = NULL;
    int rc;
    if (conf_json && !(t = dws_json_load ("lustre config", conf_json, 0, err)))
        return -1;
    rc = dws_lustre_conf_parse (t, c, err);
    json_decref (t);
    return rc;
}

static char *dump (json_t *o, dws_error_t *err)
{
    char *s = o ? json_dumps (o, JSON_COMPACT) : NULL;
    if (o && !s)
        dws_errorf (err, "out of memory");
    json_decref (o);
    return s;
}

char *dws_lustre_rewrite_json (const char *resources_json,
                               const char *breakdowns_json,
                               const char *conf_json,
                               int64_t min_gib,
                               dws_error_t *err)
{
    struct dws_lustre_conf c;
    json_t *res = NULL, *bds = NULL, *out = NULL;
    bool unchanged = false, spread = false;
    char *s = NULL;

    if (conf_of (conf_json, &c, err) == 0
        && (res = dws_json_load ("resources", resources_json, 0, err))
        && (bds = dws_json_load ("breakdowns", breakdowns_json, 0, err))
        && (out = dws_lustre_rewrite (res, bds, &c, min_gib, &unchanged, &spread, err))) {
        json_t *o = json_pack ("{s:O s:b}", "resources", unchanged ? json_null () : out,
                               "spread", spread);
        s = dump (o, err);
    }
    json_decref (out);
    json_decref (res);
    json_decref (bds);
    return s;
}

char *dws_lustre_reserved_of_R_json (const char *R_json, dws_error_t *err)
{
    json_t *R = dws_json_load ("R", R_json, 0, err);
    char *s = R ? dump (dws_lustre_reserved_of_R (R, err), err) : NULL;
    json_decref (R);
    return s;
}

char *dws_lustre_allocation_sets_json (const char *storage_json,
                                       const char *reserved_json,
                                       const char *conf_json,
                                       int64_t min_bytes,
                                       dws_error_t *err)
{
    struct dws_lustre_conf c;
    json_t *st = NULL, *rv = NULL;
    char *s = NULL;
    if (conf_of (conf_json, &c, err) == 0 && (st = dws_json_load ("storage", storage_json, 0, err))
        && (rv = dws_json_load ("reserved", reserved_json, 0, err)))
        s = dump (dws_lustre_allocation_sets (st, rv, &c, min_bytes, err), err);
    json_decref (st);
    json_decref (rv);
    return s;
}
