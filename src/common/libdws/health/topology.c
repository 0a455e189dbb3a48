/* topology.c - the computes each rabbit serves (dws_health_topology):
 * the rabbit and compute tables, rebuilt when it changes, keeping what
 * is known of the rabbits and computes that stay.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arm.h"
#include "storage.h"
#include "table.h"

static void compute_init (struct compute *c, const char *name, int rabbit)
{
    memset (c, 0, sizeof (*c));
    c->name = strdup (name);
    c->rabbit = rabbit;
    c->rank = -1;
    c->link_seen = c->bad_applied = c->alloc_applied = c->ss_applied = -1;
}

/* A rabbit new to the topology: no Storage object until the Storage list
 * has come, then the one kept for its name.
 */
static void rabbit_init (struct dws_health *h, struct rabbit *rb, const char *name)
{
    rb->name = strdup (name);
    snprintf (rb->why, sizeof (rb->why), "no Storage object");
    storageview_parse (h->storage_synced ? json_object_get (h->storages, name) : NULL,
                       &rb->sv);
}

/* Is c2r the topology we have? */
static bool same_topology (struct dws_health *h, json_t *c2r)
{
    if (json_object_size (c2r) != h->ncomputes)
        return false;
    const char *c;
    json_t *r;
    json_object_foreach (c2r, c, r) {
        struct compute *cp = table_compute (h, c);
        if (!cp || strcmp (h->rabbits[cp->rabbit].name, json_string_value (r)) != 0)
            return false;
    }
    return true;
}

int dws_health_topology (struct dws_health *h, json_t *c2r, json_t *actions, dws_error_t *err)
{
    if (!json_is_object (c2r))
        return dws_errorf (err, "topology must be an object {compute: rabbit}");
    const char *c;
    json_t *r;
    json_object_foreach (c2r, c, r) {
        if (!json_is_string (r))
            return dws_errorf (err, "topology: the rabbit of %s is not a string", c);
    }
    h->topology_known = true;
    if (same_topology (h, c2r))
        return 0;
    /* Build the new tables, moving over what is known of the rabbits and
     * computes that stay (a compute stays if it keeps its rabbit).
     */
    struct dws_health old = *h;
    json_t *old_c2r = json_object (); /* compute -> its old rabbit */
    for (size_t i = 0; i < old.ncomputes; i++)
        json_object_set_new (old_c2r, old.computes[i].name,
                             json_string (old.rabbits[old.computes[i].rabbit].name));
    size_t n = json_object_size (c2r);
    h->computes = calloc (n ? n : 1, sizeof (*h->computes));
    h->rabbits = calloc (n ? n : 1, sizeof (*h->rabbits));
    h->rabbit_index = json_object ();
    h->compute_index = json_object ();
    h->nrabbits = h->ncomputes = 0;
    json_object_foreach (c2r, c, r) {
        const char *rname = json_string_value (r);
        long ri = table_index (h->rabbit_index, rname);
        if (ri < 0) {
            ri = (long)h->nrabbits++;
            struct rabbit *rb = &h->rabbits[ri];
            long oi = table_index (old.rabbit_index, rname);
            if (oi >= 0) {
                *rb = old.rabbits[oi];
                memset (&old.rabbits[oi], 0, sizeof (old.rabbits[oi]));
                rb->members = NULL;
                rb->nmembers = 0;
            }
            else
                rabbit_init (h, rb, rname);
            rb->members = calloc (n ? n : 1, sizeof (*rb->members));
            json_object_set_new (h->rabbit_index, rname, json_integer (ri));
        }
        struct compute *cp = &h->computes[h->ncomputes];
        /* a compute keeps its state if it keeps its rabbit */
        long oi = table_index (old.compute_index, c);
        const char *was = json_string_value (json_object_get (old_c2r, c));
        if (oi >= 0 && was && !strcmp (was, rname)) {
            *cp = old.computes[oi];
            memset (&old.computes[oi], 0, sizeof (old.computes[oi]));
            cp->rabbit = (int)ri;
        }
        else
            compute_init (cp, c, (int)ri);
        struct rabbit *rb = &h->rabbits[ri];
        rb->members[rb->nmembers++] = h->ncomputes;
        json_object_set_new (h->compute_index, c, json_integer ((json_int_t)h->ncomputes));
        h->ncomputes++;
    }
    table_free (old.rabbits, old.nrabbits, old.computes, old.ncomputes);
    json_decref (old_c2r);
    json_decref (old.rabbit_index);
    json_decref (old.compute_index);
    table_resolve_ranks (h);
    table_resolve_groups (h);
    /* the Storage objects may have come first (their watch is another):
     * each rabbit decides from its view (a new one's was parsed above) */
    if (h->storage_synced)
        for (size_t i = 0; i < h->nrabbits; i++)
            storage_decide (h, &h->rabbits[i], actions);
    arm_soon (h, actions);
    return 0;
}
