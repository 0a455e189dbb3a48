/* servers.c - Servers allocationSets (see servers.h).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <stdlib.h>
#include <string.h>

#include "jsonio.h"
#include "servers.h"

struct rcount {
    const char *name;
    int64_t nodes;
    int64_t alloc; /* allocations placed on this rabbit */
};

static int by_name (const void *a, const void *b)
{
    return strcmp (((const struct rcount *)a)->name, ((const struct rcount *)b)->name);
}

static int by_nodes_then_name (const void *a, const void *b)
{
    const struct rcount *x = a, *y = b;
    if (x->nodes != y->nodes)
        return x->nodes > y->nodes ? -1 : 1;
    return strcmp (x->name, y->name);
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

static int add_storage (json_t *list, const char *name, int64_t count)
{
    return json_array_append_new (list,
                                  json_pack ("{s:s s:I}", "name", name, "allocationCount",
                                             (json_int_t)count));
}

/* storage list for one allocation set; *size set. */
static json_t *place (const char *strategy, json_t *constraints, int64_t cap,
                      struct rcount *rc, size_t nr, int64_t min_bytes, int64_t *size,
                      dws_error_t *err)
{
    json_t *list = json_array ();
    int64_t total = 0, k = 0;
    json_t *count = json_object_get (constraints, "count");

    if (!list)
        goto nomem;
    for (size_t i = 0; i < nr; i++)
        total += rc[i].nodes;
    if (!strcmp (strategy, "AllocatePerCompute")) {
        *size = cap;
        qsort (rc, nr, sizeof (*rc), by_name);
        for (size_t i = 0; i < nr; i++)
            if (add_storage (list, rc[i].name, rc[i].nodes) < 0)
                goto nomem;
    }
    else if (!strcmp (strategy, "AllocateSingleServer")
             || (!strcmp (strategy, "AllocateAcrossServers") && count)) {
        if (!strcmp (strategy, "AllocateSingleServer"))
            k = 1;
        else if (!json_is_integer (count) || (k = json_integer_value (count)) < 1) {
            json_decref (list);
            dws_errorf (err, "constraints.count must be an integer >= 1");
            return NULL;
        }
        *size = ceil_div (cap, k);
        /* the rabbits with the most job nodes first; when K exceeds the
         * rabbits, the extra allocations go round-robin in that order */
        qsort (rc, nr, sizeof (*rc), by_nodes_then_name);
        size_t used = (size_t)k < nr ? (size_t)k : nr;
        for (size_t i = 0; i < used; i++)
            rc[i].alloc = k / (int64_t)used + ((int64_t)i < k % (int64_t)used ? 1 : 0);
        qsort (rc, used, sizeof (*rc), by_name);
        for (size_t i = 0; i < used; i++)
            if (add_storage (list, rc[i].name, rc[i].alloc) < 0)
                goto nomem;
    }
    else if (!strcmp (strategy, "AllocateAcrossServers")) {
        int64_t g = 0;
        for (size_t i = 0; i < nr; i++)
            g = gcd (g, rc[i].nodes);
        *size = ceil_div (g * cap, total);
        qsort (rc, nr, sizeof (*rc), by_name);
        for (size_t i = 0; i < nr; i++)
            if (add_storage (list, rc[i].name, rc[i].nodes / g) < 0)
                goto nomem;
    }
    else {
        json_decref (list);
        dws_errorf (err, "unknown allocationStrategy '%s'", strategy);
        return NULL;
    }
    if (*size < min_bytes)
        *size = min_bytes;
    return list;
nomem:
    json_decref (list);
    dws_errorf (err, "out of memory");
    return NULL;
}

json_t *dws_servers_allocation_sets (json_t *storage,
                                     json_t *rabbit_counts,
                                     int64_t min_bytes,
                                     dws_error_t *err)
{
    json_t *sets, *set, *out = NULL;
    struct rcount *rc = NULL;
    size_t nr = 0, i;
    const char *name;
    json_t *v;

    if (!json_is_object (storage) || !json_is_array (sets = json_object_get (storage,
                                                                            "allocationSets"))) {
        dws_errorf (err, "status.storage must have an allocationSets list");
        return NULL;
    }
    if (!json_is_object (rabbit_counts) || json_object_size (rabbit_counts) == 0) {
        dws_errorf (err, "the job has no compute nodes attached to rabbits");
        return NULL;
    }
    if (!(rc = calloc (json_object_size (rabbit_counts), sizeof (*rc))) || !(out = json_array ()))
        goto nomem;
    json_object_foreach (rabbit_counts, name, v) {
        if (!json_is_integer (v) || json_integer_value (v) < 1) {
            dws_errorf (err, "rabbit '%s': node count must be an integer >= 1", name);
            goto error;
        }
        rc[nr].name = name;
        rc[nr++].nodes = json_integer_value (v);
    }
    json_array_foreach (sets, i, set) {
        const char *label, *strategy;
        json_int_t cap;
        int64_t size;
        json_t *list;
        if (json_unpack (set, "{s:s s:s s:I}", "label", &label, "allocationStrategy", &strategy,
                         "minimumCapacity", &cap) < 0
            || cap < 1) {
            dws_errorf (err,
                        "allocation set %zu needs a label, an allocationStrategy and a"
                        " minimumCapacity >= 1",
                        i);
            goto error;
        }
        if (!(list = place (strategy, json_object_get (set, "constraints"), cap, rc, nr,
                            min_bytes, &size, err))) {
            dws_error_prefix (err, "allocation set %zu (%s): ", i, label);
            goto error;
        }
        if (json_array_append_new (out, json_pack ("{s:s s:I s:o}", "label", label,
                                                   "allocationSize", (json_int_t)size,
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

char *dws_servers_allocation_sets_json (const char *storage_json,
                                        const char *rabbit_counts_json,
                                        int64_t min_bytes,
                                        dws_error_t *err)
{
    json_t *storage = dws_json_load ("storage", storage_json, 0, err);
    json_t *counts = storage ? dws_json_load ("rabbit counts", rabbit_counts_json, 0, err) : NULL;
    char *s = counts ? dws_json_dump_take (dws_servers_allocation_sets (storage, counts,
                                                                       min_bytes, err),
                                           err)
                     : NULL;
    json_decref (storage);
    json_decref (counts);
    return s;
}
