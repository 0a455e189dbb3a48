/* servers.c - Servers allocationSets (see servers.h).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "breakdown.h"
#include "labels.h"
#include "servers.h"

struct rcount {
    const char *name;
    int64_t nodes;
    int64_t alloc; /* allocations placed on this rabbit */
};

int dws_hostname_cmp (const char *a, const char *b)
{
    while (*a && *b) {
        if (isdigit ((unsigned char)*a) && isdigit ((unsigned char)*b)) {
            const char *x = a, *y = b;
            size_t lx, ly;
            while (*x == '0' && isdigit ((unsigned char)x[1]))
                x++;
            while (*y == '0' && isdigit ((unsigned char)y[1]))
                y++;
            for (lx = 0; isdigit ((unsigned char)x[lx]); lx++)
                ;
            for (ly = 0; isdigit ((unsigned char)y[ly]); ly++)
                ;
            if (lx != ly)
                return lx < ly ? -1 : 1;
            int c = strncmp (x, y, lx);
            if (c)
                return c;
            /* equal values: fewer leading zeros first, then go on */
            if (x - a != y - b)
                return (x - a) < (y - b) ? -1 : 1;
            a = x + lx;
            b = y + ly;
            continue;
        }
        if (*a != *b)
            return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
        a++;
        b++;
    }
    return (unsigned char)*a - (unsigned char)*b;
}

static int by_name (const void *a, const void *b)
{
    return dws_hostname_cmp (((const struct rcount *)a)->name, ((const struct rcount *)b)->name);
}

static int by_nodes_then_name (const void *a, const void *b)
{
    const struct rcount *x = a, *y = b;
    if (x->nodes != y->nodes)
        return x->nodes > y->nodes ? -1 : 1;
    return dws_hostname_cmp (x->name, y->name);
}

static int64_t gcd (int64_t a, int64_t b)
{
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static int64_t ceil_div (int64_t a, int64_t b)
{
    return a / b + (a % b ? 1 : 0);
}

struct placement {
    int64_t size;   /* allocationSize */
    size_t first;   /* rc[first..first+n) hold the allocations (in alloc) */
    size_t n;
};

/* Decide one set's placement over rc[0..nr) (rc is reordered). */
static void place (enum dws_strategy strategy, int64_t count, int64_t cap, struct rcount *rc,
                   size_t nr, int64_t total, struct placement *p)
{
    int64_t k = 0;

    p->first = 0;
    if (strategy == DWS_ALLOCATE_PER_COMPUTE) {
        p->size = cap;
        p->n = nr;
        for (size_t i = 0; i < nr; i++)
            rc[i].alloc = rc[i].nodes;
    }
    else if (strategy == DWS_ALLOCATE_SINGLE_SERVER || count) {
        k = strategy == DWS_ALLOCATE_SINGLE_SERVER ? 1 : count;
        p->size = ceil_div (cap, k);
        /* the rabbits with the most job nodes first; when K exceeds the
         * rabbits, the extra allocations go round-robin in that order */
        qsort (rc, nr, sizeof (*rc), by_nodes_then_name);
        p->n = (size_t)k < nr ? (size_t)k : nr;
        for (size_t i = 0; i < p->n; i++)
            rc[i].alloc = k / (int64_t)p->n + ((int64_t)i < k % (int64_t)p->n ? 1 : 0);
    }
    else {
        int64_t g = 0;
        for (size_t i = 0; i < nr; i++)
            g = gcd (g, rc[i].nodes);
        /* total / g is a whole number: ceil (g * cap / total) without
         * the product */
        p->size = ceil_div (cap, total / g);
        p->n = nr;
        for (size_t i = 0; i < nr; i++)
            rc[i].alloc = rc[i].nodes / g;
    }
}

static json_t *storage_list (struct rcount *rc, const struct placement *p)
{
    json_t *list = json_array ();
    qsort (rc + p->first, p->n, sizeof (*rc), by_name);
    for (size_t i = p->first; list && i < p->first + p->n; i++) {
        json_t *e = json_pack ("{s:s s:I}", "name", rc[i].name, "allocationCount",
                               (json_int_t)rc[i].alloc);
        if (json_array_append_new (list, e) < 0) {
            json_decref (list);
            list = NULL;
        }
    }
    return list;
}

/* The status.storage object, given it, its status or the breakdown. */
static json_t *storage_object (json_t *o)
{
    json_t *status = json_object_get (o, "status");
    json_t *storage;
    if (json_is_object (status))
        o = status;
    storage = json_object_get (o, "storage");
    return json_is_object (storage) ? storage : o;
}

static struct rcount *load_counts (json_t *counts, size_t *nr, int64_t *total, dws_error_t *err)
{
    struct rcount *rc;
    const char *name;
    json_t *v;

    if (!json_is_object (counts) || json_object_size (counts) == 0) {
        dws_errorf (err,
                    json_is_object (counts)
                        ? "the job has no compute nodes attached to rabbits"
                        : "rabbit counts must be an object {rabbit: node count}");
        return NULL;
    }
    if (!(rc = calloc (json_object_size (counts), sizeof (*rc)))) {
        dws_errorf (err, "out of memory");
        return NULL;
    }
    *nr = 0;
    *total = 0;
    json_object_foreach (counts, name, v) {
        if (!json_is_integer (v) || json_integer_value (v) < 1
            || json_integer_value (v) > DWS_BREAKDOWN_MAX_COUNT) {
            dws_errorf (err, "rabbit '%s': node count must be an integer from 1 to %lld", name,
                        (long long)DWS_BREAKDOWN_MAX_COUNT);
            free (rc);
            return NULL;
        }
        rc[*nr].name = name;
        rc[(*nr)++].nodes = json_integer_value (v);
        *total += json_integer_value (v);
    }
    return rc;
}

/* Check set i of the storage; sets its fields (*count 0: none given). */
static int check_set (json_t *set, size_t i, const char **label, enum dws_strategy *strategy,
                      int64_t *cap, int64_t *count, dws_error_t *err)
{
    const char *sname = NULL;
    json_int_t c = 0;
    json_t *constraints, *k;

    if (json_unpack (set, "{s:s s:s s:I}", "label", label, "allocationStrategy", &sname,
                     "minimumCapacity", &c)
            < 0
        || c < 1)
        return dws_errorf (err,
                           "allocation set %zu needs a label, an allocationStrategy and an"
                           " integer minimumCapacity >= 1",
                           i);
    if (dws_strategy_parse (sname, strategy, err) < 0)
        return dws_error_prefix (err, "allocation set %zu (%s): ", i, *label);
    constraints = json_object_get (set, "constraints");
    if (constraints && !json_is_object (constraints) && !json_is_null (constraints))
        return dws_errorf (err, "allocation set %zu (%s): constraints must be an object", i,
                           *label);
    k = json_object_get (constraints, "count");
    if (k && !json_is_null (k) && (!json_is_integer (k) || json_integer_value (k) < 1))
        return dws_errorf (err,
                           "allocation set %zu (%s): constraints.count must be an integer >= 1",
                           i, *label);
    *count = json_is_integer (k) ? json_integer_value (k) : 0;
    *cap = c;
    return 0;
}

json_t *dws_servers_allocation_sets (json_t *storage,
                                     json_t *rabbit_counts,
                                     int64_t min_bytes,
                                     dws_error_t *err)
{
    json_t *sets, *set, *out = NULL;
    struct rcount *rc = NULL;
    size_t nr = 0, i;
    int64_t total = 0;

    if (min_bytes < 0) {
        dws_errorf (err, "the minimum allocation size must be >= 0 bytes");
        return NULL;
    }
    storage = storage_object (storage);
    if (!json_is_object (storage) || !json_is_array (sets = json_object_get (storage,
                                                                            "allocationSets"))) {
        dws_errorf (err, "status.storage must have an allocationSets list");
        return NULL;
    }
    if (!(rc = load_counts (rabbit_counts, &nr, &total, err)))
        return NULL;
    if (!(out = json_array ()))
        goto nomem;
    json_array_foreach (sets, i, set) {
        const char *label = NULL;
        enum dws_strategy strategy = DWS_ALLOCATE_PER_COMPUTE;
        int64_t cap = 0, sum = 0;
        int64_t count = 0;
        json_t *list;
        struct placement p = {.size = 1};

        if (check_set (set, i, &label, &strategy, &cap, &count, err) < 0)
            goto error;
        place (strategy, count, cap, rc, nr, total, &p);
        if (p.size < min_bytes)
            p.size = min_bytes;
        for (size_t j = p.first; j < p.first + p.n; j++) {
            if (rc[j].alloc > (INT64_MAX - sum) / p.size) {
                dws_errorf (err,
                            "allocation set %zu (%s): the allocations add up to more than"
                            " %lld bytes",
                            i, label, (long long)INT64_MAX);
                goto error;
            }
            sum += rc[j].alloc * p.size;
        }
        if (!(list = storage_list (rc, &p))
            || json_array_append_new (out, json_pack ("{s:s s:I s:o}", "label", label,
                                                      "allocationSize", (json_int_t)p.size,
                                                      "storage", list))
                   < 0)
            goto nomem;
    }
    free (rc);
    return out;
nomem:
    dws_errorf (err, "out of memory");
error:
    free (rc);
    json_decref (out);
    return NULL;
}

static json_t *load (const char *what, const char *text, dws_error_t *err)
{
    json_error_t jerr;
    json_t *o = json_loads (text ? text : "", JSON_DECODE_ANY, &jerr);
    if (!o)
        dws_errorf (err, "%s: invalid JSON: %s", what, jerr.text);
    return o;
}

char *dws_servers_allocation_sets_json (const char *storage_json,
                                        const char *rabbit_counts_json,
                                        int64_t min_bytes,
                                        dws_error_t *err)
{
    json_t *storage = load ("storage", storage_json, err);
    json_t *counts = storage ? load ("rabbit counts", rabbit_counts_json, err) : NULL;
    json_t *out = counts ? dws_servers_allocation_sets (storage, counts, min_bytes, err) : NULL;
    char *s = NULL;

    if (out && !(s = json_dumps (out, JSON_COMPACT)))
        dws_errorf (err, "out of memory");
    json_decref (out);
    json_decref (storage);
    json_decref (counts);
    return s;
}
