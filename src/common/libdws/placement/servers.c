/* servers.c - Servers allocationSets (see servers.h).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "parse/breakdown.h"
#include "parse/labels.h"
#include "rabbitmap.h"
#include "servers.h"
#include "util/jsonio.h"
#include "util/strbuf.h"

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

static struct rcount *load_counts (json_t *counts, size_t *nr, dws_error_t *err)
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

/* What to do with each decided set: rc[first..first+n) sorted by name. */
struct emitter {
    int (*set) (struct emitter *em, const char *label, int64_t size, const struct rcount *rc,
                size_t n);
};

/* Decide every set of `storage` for the rabbits rc[0..nr), in order. */
static int plan (json_t *storage, struct rcount *rc, size_t nr, int64_t min_bytes,
                 struct emitter *em, dws_error_t *err)
{
    json_t *sets, *set;
    int64_t total = 0;
    size_t i;

    if (min_bytes < 0)
        return dws_errorf (err, "the minimum allocation size must be >= 0 bytes");
    storage = storage_object (storage);
    if (!json_is_object (storage) || !json_is_array (sets = json_object_get (storage,
                                                                            "allocationSets")))
        return dws_errorf (err, "status.storage must have an allocationSets list");
    if (nr == 0)
        return dws_errorf (err, "the job has no compute nodes attached to rabbits");
    for (i = 0; i < nr; i++)
        total += rc[i].nodes;
    json_array_foreach (sets, i, set) {
        const char *label = NULL;
        enum dws_strategy strategy = DWS_ALLOCATE_PER_COMPUTE;
        int64_t cap = 0, sum = 0, count = 0;
        struct placement p = {.size = 1};

        if (check_set (set, i, &label, &strategy, &cap, &count, err) < 0)
            return -1;
        place (strategy, count, cap, rc, nr, total, &p);
        if (p.size < min_bytes)
            p.size = min_bytes;
        for (size_t j = p.first; j < p.first + p.n; j++) {
            if (rc[j].alloc > (INT64_MAX - sum) / p.size)
                return dws_errorf (err,
                                   "allocation set %zu (%s): the allocations add up to more"
                                   " than %lld bytes",
                                   i, label, (long long)INT64_MAX);
            sum += rc[j].alloc * p.size;
        }
        qsort (rc + p.first, p.n, sizeof (*rc), by_name);
        if (em->set (em, label, p.size, rc + p.first, p.n) < 0)
            return dws_errorf (err, "out of memory");
    }
    return 0;
}

/* Emit as jansson objects. */
struct json_emitter {
    struct emitter em;
    json_t *out;
};

static int json_set (struct emitter *em, const char *label, int64_t size,
                     const struct rcount *rc, size_t n)
{
    json_t *out = ((struct json_emitter *)em)->out;
    json_t *list = json_array ();
    json_t *set = json_object ();

    if (!list || !set || json_object_set_new_nocheck (set, "label", json_string (label)) < 0
        || json_object_set_new_nocheck (set, "allocationSize", json_integer (size)) < 0
        || json_object_set_new_nocheck (set, "storage", json_incref (list)) < 0)
        goto nomem;
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_object ();
        if (!e || json_array_append_new (list, e) < 0
            || json_object_set_new_nocheck (e, "name", json_string (rc[i].name)) < 0
            || json_object_set_new_nocheck (e, "allocationCount", json_integer (rc[i].alloc))
                   < 0)
            goto nomem;
    }
    json_decref (list);
    return json_array_append_new (out, set);
nomem:
    json_decref (list);
    json_decref (set);
    return -1;
}

/* Emit JSON text. */
struct text_emitter {
    struct emitter em;
    struct dws_strbuf sb;
    size_t nsets;
};

static int text_set (struct emitter *em, const char *label, int64_t size,
                     const struct rcount *rc, size_t n)
{
    struct text_emitter *te = (struct text_emitter *)em;
    struct dws_strbuf *sb = &te->sb;

    dws_strbuf_puts (sb, te->nsets++ ? ",{\"label\":" : "{\"label\":");
    dws_strbuf_json_string (sb, label);
    dws_strbuf_puts (sb, ",\"allocationSize\":");
    dws_strbuf_int (sb, size);
    dws_strbuf_puts (sb, ",\"storage\":[");
    for (size_t i = 0; i < n; i++) {
        dws_strbuf_puts (sb, i ? ",{\"name\":" : "{\"name\":");
        dws_strbuf_json_string (sb, rc[i].name);
        dws_strbuf_puts (sb, ",\"allocationCount\":");
        dws_strbuf_int (sb, rc[i].alloc);
        dws_strbuf_puts (sb, "}");
    }
    dws_strbuf_puts (sb, "]}");
    return sb->nomem ? -1 : 0;
}

/* JSON text for storage and rc[0..nr) (NULL with a message). */
static char *plan_text (json_t *storage, struct rcount *rc, size_t nr, int64_t min_bytes,
                        dws_error_t *err)
{
    struct text_emitter te = {.em = {.set = text_set}};
    char *s;

    dws_strbuf_init (&te.sb);
    dws_strbuf_puts (&te.sb, "[");
    if (plan (storage, rc, nr, min_bytes, &te.em, err) < 0) {
        dws_strbuf_release (&te.sb);
        return NULL;
    }
    dws_strbuf_puts (&te.sb, "]");
    if (!(s = dws_strbuf_finish (&te.sb)))
        dws_errorf (err, "out of memory");
    return s;
}

json_t *dws_servers_allocation_sets (json_t *storage,
                                     json_t *rabbit_counts,
                                     int64_t min_bytes,
                                     dws_error_t *err)
{
    struct json_emitter je = {.em = {.set = json_set}};
    struct rcount *rc;
    size_t nr = 0;

    if (!(rc = load_counts (rabbit_counts, &nr, err)))
        return NULL;
    if (!(je.out = json_array ()))
        dws_errorf (err, "out of memory");
    else if (plan (storage, rc, nr, min_bytes, &je.em, err) < 0) {
        json_decref (je.out);
        je.out = NULL;
    }
    free (rc);
    return je.out;
}

char *dws_servers_allocation_sets_json (const char *storage_json,
                                        const char *rabbit_counts_json,
                                        int64_t min_bytes,
                                        dws_error_t *err)
{
    json_t *storage = dws_json_load ("storage", storage_json, 0, err);
    json_t *counts = storage ? dws_json_load ("rabbit counts", rabbit_counts_json, 0, err) : NULL;
    struct rcount *rc = NULL;
    size_t nr = 0;
    char *s = NULL;

    if (counts && (rc = load_counts (counts, &nr, err)))
        s = plan_text (storage, rc, nr, min_bytes, err);
    free (rc);
    json_decref (storage);
    json_decref (counts);
    return s;
}

char *dws_servers_allocation_sets_hosts_json (struct dws_rabbitmap *map,
                                              const char *hosts,
                                              const char *storage_json,
                                              int64_t min_bytes,
                                              dws_error_t *err)
{
    struct dws_rabbit_count *counts = NULL;
    struct rcount *rc = NULL;
    size_t n = 0;
    json_t *storage = dws_json_load ("storage", storage_json, 0, err);
    char *s = NULL;

    if (storage && dws_rabbitmap_tally (map, hosts, &counts, &n, err) == 0) {
        if (!(rc = calloc (n + 1, sizeof (*rc))))
            dws_errorf (err, "out of memory");
        else {
            for (size_t i = 0; i < n; i++) {
                rc[i].name = counts[i].name;
                rc[i].nodes = counts[i].nodes;
            }
            s = plan_text (storage, rc, n, min_bytes, err);
        }
    }
    free (rc);
    free (counts);
    json_decref (storage);
    return s;
}
