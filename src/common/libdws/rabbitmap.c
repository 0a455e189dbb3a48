/* rabbitmap.c - compute -> rabbit lookups (see rabbitmap.h).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <stdlib.h>
#include <string.h>

#include "hostindex.h"
#include "hostlist.h"
#include "jsonio.h"
#include "rabbitmap.h"

struct dws_rabbitmap {
    char **names;              /* owned: computes then rabbits */
    size_t nnames;
    struct hostindex *compute; /* compute -> rabbit number */
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

struct dws_rabbitmap *dws_rabbitmap_create (json_t *mapping, dws_error_t *err)
{
    json_t *computes = json_object_get (mapping, "computes");
    struct dws_rabbitmap *map;
    const char *c;
    json_t *v;
    size_t n;

    if (!computes)
        computes = mapping;
    if (!json_is_object (computes)) {
        dws_errorf (err, "rabbitmapping: 'computes' must map compute nodes to rabbits");
        return NULL;
    }
    n = json_object_size (computes);
    if (!(map = calloc (1, sizeof (*map))) || !(map->names = calloc (2 * n + 1, sizeof (char *)))
        || !(map->rabbits = calloc (n + 1, sizeof (char *)))
        || !(map->compute = dws_hostindex_create (n)) || !(map->rabbit = dws_hostindex_create (n)))
        goto nomem;
    json_object_foreach (computes, c, v) {
        const char *r = json_string_value (v);
        const char *cname, *rname;
        long idx;
        if (!r) {
            dws_errorf (err, "rabbitmapping: computes.%s must name a rabbit", c);
            goto error;
        }
        if ((idx = dws_hostindex_find (map->rabbit, r)) < 0) {
            if (!(rname = keep (map, r)))
                goto nomem;
            idx = (long)map->nrabbits;
            map->rabbits[map->nrabbits++] = rname;
            if (dws_hostindex_insert (map->rabbit, rname, (size_t)idx) == -2)
                goto nomem;
        }
        if (!(cname = keep (map, c)) || dws_hostindex_insert (map->compute, cname, (size_t)idx) == -2)
            goto nomem;
    }
    return map;
nomem:
    dws_errorf (err, "out of memory");
error:
    dws_rabbitmap_destroy (map);
    return NULL;
}

json_t *dws_rabbitmap_counts (struct dws_rabbitmap *map, const char *hosts, dws_error_t *err)
{
    size_t count = 0;
    char **names = dws_hostlist_expand (hosts, &count, err);
    long *tally = NULL, *order = NULL;
    size_t norder = 0;
    json_t *out = NULL;

    if (!names) {
        dws_error_prefix (err, "job hosts: ");
        return NULL;
    }
    if (!(tally = calloc (map->nrabbits + 1, sizeof (long)))
        || !(order = calloc (map->nrabbits + 1, sizeof (long))) || !(out = json_object ()))
        goto nomem;
    for (size_t i = 0; i < count; i++) {
        long r = dws_hostindex_find (map->compute, names[i]);
        if (r < 0) {
            if (dws_hostindex_find (map->rabbit, names[i]) >= 0)
                continue; /* a rabbit used as a compute node */
            dws_errorf (err, "compute node '%s' is not attached to any rabbit", names[i]);
            json_decref (out);
            out = NULL;
            goto done;
        }
        if (tally[r]++ == 0)
            order[norder++] = r;
    }
    for (size_t i = 0; i < norder; i++)
        if (json_object_set_new (out, map->rabbits[order[i]], json_integer (tally[order[i]])) < 0)
            goto nomem;
    goto done;
nomem:
    dws_errorf (err, "out of memory");
    json_decref (out);
    out = NULL;
done:
    dws_hostlist_free_names (names);
    free (tally);
    free (order);
    return out;
}

struct dws_rabbitmap *dws_rabbitmap_create_json (const char *mapping_json, dws_error_t *err)
{
    json_t *o = dws_json_load ("rabbitmapping", mapping_json, 0, err);
    struct dws_rabbitmap *map;
    if (!o)
        return NULL;
    map = dws_rabbitmap_create (o, err);
    json_decref (o);
    return map;
}

char *dws_rabbitmap_counts_json (struct dws_rabbitmap *map, const char *hosts, dws_error_t *err)
{
    return dws_json_dump_take (dws_rabbitmap_counts (map, hosts, err), err);
}
