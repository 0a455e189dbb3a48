/* rabbitmap.c - compute -> rabbit lookups (see rabbitmap.h).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <stdlib.h>
#include <string.h>

#include "rabbitmap.h"
#include "util/hostindex.h"
#include "util/hostlist.h"
#include "util/jsonio.h"

struct dws_rabbitmap {
    char **names;              /* owned copies of every name */
    size_t nnames;
    struct hostindex *compute; /* compute -> compute number */
    size_t *rabbit_of;         /* compute number -> rabbit number */
    size_t ncomputes;
    struct hostindex *rabbit;  /* rabbit -> rabbit number */
    const char **rabbits;      /* rabbit number -> name (in names) */
    size_t nrabbits;
};

void dws_rabbitmap_destroy (struct dws_rabbitmap *map)
{
    if (!map)
        return;
    for (size_t i = 0; i < map->nnames; i++)
        free (map->names[i]);
    free (map->names);
    free (map->rabbits);
    free (map->rabbit_of);
    dws_hostindex_destroy (map->compute);
    dws_hostindex_destroy (map->rabbit);
    free (map);
}

static const char *keep (struct dws_rabbitmap *map, const char *s)
{
    char *copy = strdup (s);
    if (copy)
        map->names[map->nnames++] = copy;
    return copy;
}

/* The number of rabbit `r`, added if new; -1 on ENOMEM. */
static long rabbit_number (struct dws_rabbitmap *map, const char *r)
{
    long idx = dws_hostindex_find (map->rabbit, r);
    const char *name;
    if (idx >= 0)
        return idx;
    if (!(name = keep (map, r)))
        return -1;
    idx = (long)map->nrabbits;
    map->rabbits[map->nrabbits++] = name;
    if (dws_hostindex_insert (map->rabbit, name, (size_t)idx) == -2)
        return -1;
    return idx;
}

struct dws_rabbitmap *dws_rabbitmap_create (json_t *mapping, dws_error_t *err)
{
    json_t *computes = json_object_get (mapping, "computes");
    json_t *rabbits = json_object_get (mapping, "rabbits");
    struct dws_rabbitmap *map;
    const char *key;
    json_t *v;
    size_t n, nr;

    if (!json_is_object (mapping)) {
        dws_errorf (err, "rabbitmapping must be an object");
        return NULL;
    }
    if (!computes) {
        computes = mapping; /* a bare {compute: rabbit} object */
        rabbits = NULL;
    }
    if (!json_is_object (computes)) {
        dws_errorf (err, "rabbitmapping: 'computes' must map compute nodes to rabbits");
        return NULL;
    }
    if (rabbits && !json_is_object (rabbits)) {
        dws_errorf (err, "rabbitmapping: 'rabbits' must be an object");
        return NULL;
    }
    n = json_object_size (computes);
    nr = n + json_object_size (rabbits);
    if (!(map = calloc (1, sizeof (*map))))
        goto nomem;
    if (!(map->names = calloc (n + nr + 1, sizeof (char *)))
        || !(map->rabbits = calloc (nr + 1, sizeof (char *)))
        || !(map->rabbit_of = calloc (n + 1, sizeof (size_t)))
        || !(map->compute = dws_hostindex_create (n)) || !(map->rabbit = dws_hostindex_create (nr)))
        goto nomem;
    json_object_foreach (rabbits, key, v) {
        if (rabbit_number (map, key) < 0)
            goto nomem;
    }
    json_object_foreach (computes, key, v) {
        const char *r = json_string_value (v);
        const char *cname;
        long idx;
        if (!r) {
            dws_errorf (err, "rabbitmapping: computes.%s must name a rabbit", key);
            goto error;
        }
        if ((idx = rabbit_number (map, r)) < 0 || !(cname = keep (map, key))
            || dws_hostindex_insert (map->compute, cname, map->ncomputes) == -2)
            goto nomem;
        map->rabbit_of[map->ncomputes++] = (size_t)idx;
    }
    return map;
nomem:
    dws_errorf (err, "out of memory");
error:
    dws_rabbitmap_destroy (map);
    return NULL;
}

struct tally {
    long *count;      /* per rabbit */
    size_t *order;    /* rabbits in order of first use */
    size_t norder;
    unsigned char *seen; /* per compute */
};

static void tally_free (struct tally *t)
{
    free (t->count);
    free (t->order);
    free (t->seen);
}

static int tally_init (struct tally *t, const struct dws_rabbitmap *map)
{
    memset (t, 0, sizeof (*t));
    if (!(t->count = calloc (map->nrabbits + 1, sizeof (long)))
        || !(t->order = calloc (map->nrabbits + 1, sizeof (size_t)))
        || !(t->seen = calloc (map->ncomputes + 1, 1))) {
        tally_free (t);
        return -1;
    }
    return 0;
}

/* Count one host; -1 with a message if no rabbit serves it. */
static int tally_add (struct tally *t, const struct dws_rabbitmap *map, const char *host,
                      dws_error_t *err)
{
    long c = dws_hostindex_find (map->compute, host);
    if (c < 0) {
        if (dws_hostindex_find (map->rabbit, host) >= 0)
            return 0; /* a rabbit used as a compute node */
        return dws_errorf (err, "compute node '%s' is not attached to any rabbit", host);
    }
    if (t->seen[c])
        return 0;
    t->seen[c] = 1;
    size_t r = map->rabbit_of[c];
    if (t->count[r]++ == 0)
        t->order[t->norder++] = r;
    return 0;
}

static json_t *tally_result (struct tally *t, const struct dws_rabbitmap *map, dws_error_t *err)
{
    json_t *out = json_object ();
    for (size_t i = 0; out && i < t->norder; i++) {
        size_t r = t->order[i];
        if (json_object_set_new (out, map->rabbits[r], json_integer (t->count[r])) < 0) {
            json_decref (out);
            out = NULL;
        }
    }
    if (!out)
        dws_errorf (err, "out of memory");
    return out;
}

json_t *dws_rabbitmap_counts (struct dws_rabbitmap *map, const char *hosts, dws_error_t *err)
{
    size_t count = 0;
    char **names;
    struct tally t;
    json_t *out = NULL;

    if (!map) {
        dws_errorf (err, "no rabbit map");
        return NULL;
    }
    if (!(names = dws_hostlist_expand (hosts, &count, err))) {
        dws_error_prefix (err, "job hosts: ");
        return NULL;
    }
    if (tally_init (&t, map) < 0) {
        dws_errorf (err, "out of memory");
        dws_hostlist_free_names (names);
        return NULL;
    }
    size_t i;
    for (i = 0; i < count; i++)
        if (tally_add (&t, map, names[i], err) < 0)
            break;
    if (i == count)
        out = tally_result (&t, map, err);
    tally_free (&t);
    dws_hostlist_free_names (names);
    return out;
}

bool dws_rabbitmap_counts_equal (struct dws_rabbitmap *map, const char *hosts, json_t *want)
{
    json_t *counts = dws_rabbitmap_counts (map, hosts, NULL);
    bool same = counts && json_equal (counts, want);
    json_decref (counts);
    return same;
}

int dws_rabbitmap_tally (struct dws_rabbitmap *map,
                         const char *hosts,
                         struct dws_rabbit_count **counts,
                         size_t *n,
                         dws_error_t *err)
{
    size_t count = 0, i;
    char **names;
    struct tally t;
    int rc = -1;

    *counts = NULL;
    *n = 0;
    if (!map)
        return dws_errorf (err, "no rabbit map");
    if (!hosts)
        return dws_errorf (err, "job hosts: no hostlist");
    if (!(names = dws_hostlist_expand (hosts, &count, err)))
        return dws_error_prefix (err, "job hosts: ");
    if (tally_init (&t, map) < 0) {
        dws_hostlist_free_names (names);
        return dws_errorf (err, "out of memory");
    }
    for (i = 0; i < count; i++)
        if (tally_add (&t, map, names[i], err) < 0)
            break;
    if (i == count) {
        if (!(*counts = calloc (t.norder + 1, sizeof (**counts))))
            dws_errorf (err, "out of memory");
        else {
            for (size_t j = 0; j < t.norder; j++) {
                (*counts)[j].name = map->rabbits[t.order[j]];
                (*counts)[j].nodes = t.count[t.order[j]];
            }
            *n = t.norder;
            rc = 0;
        }
    }
    tally_free (&t);
    dws_hostlist_free_names (names);
    return rc;
}

json_t *dws_rabbitmap_counts_list (struct dws_rabbitmap *map, json_t *hosts, dws_error_t *err)
{
    struct tally t;
    json_t *out = NULL, *h;
    size_t i;

    if (!map) {
        dws_errorf (err, "no rabbit map");
        return NULL;
    }
    if (!json_is_array (hosts)) {
        dws_errorf (err, "job hosts must be a list of host names");
        return NULL;
    }
    if (tally_init (&t, map) < 0) {
        dws_errorf (err, "out of memory");
        return NULL;
    }
    json_array_foreach (hosts, i, h) {
        if (!json_is_string (h)) {
            dws_errorf (err, "job hosts[%zu] is not a host name", i);
            break;
        }
        if (tally_add (&t, map, json_string_value (h), err) < 0)
            break;
    }
    if (i == json_array_size (hosts))
        out = tally_result (&t, map, err);
    tally_free (&t);
    return out;
}

struct dws_rabbitmap *dws_rabbitmap_create_json (const char *mapping_json, dws_error_t *err)
{
    json_t *o = dws_json_load ("rabbitmapping", mapping_json, 0, err);
    struct dws_rabbitmap *map = o ? dws_rabbitmap_create (o, err) : NULL;
    json_decref (o);
    return map;
}

char *dws_rabbitmap_counts_json (struct dws_rabbitmap *map, const char *hosts, dws_error_t *err)
{
    if (!hosts) {
        dws_errorf (err, "job hosts: no hostlist");
        return NULL;
    }
    return dws_json_dump_take (dws_rabbitmap_counts (map, hosts, err), err);
}

char *dws_rabbitmap_counts_list_json (struct dws_rabbitmap *map,
                                      const char *hosts_json,
                                      dws_error_t *err)
{
    json_t *hosts = dws_json_load ("job hosts", hosts_json, 0, err);
    char *s = hosts ? dws_json_dump_take (dws_rabbitmap_counts_list (map, hosts, err), err) : NULL;
    json_decref (hosts);
    return s;
}

char *dws_rabbit_counts_json (const char *hosts_json,
                              const char *mapping_json,
                              dws_error_t *err)
{
    struct dws_rabbitmap *map = dws_rabbitmap_create_json (mapping_json, err);
    char *s = map ? dws_rabbitmap_counts_list_json (map, hosts_json, err) : NULL;
    dws_rabbitmap_destroy (map);
    return s;
}
