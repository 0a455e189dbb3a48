/* pick.c - ssd vertices for a hold of the dws service's own
 * (dws_health_pick): storage held in Fluxion for a job that has no nodes
 * yet (pre-staging, doc/guide/prestage.rst).
 *
 * Fluxion cannot hold ssd vertices for anyone but a job with nodes
 * without corrupting the next job's R (its rv1 writer keeps the vertices
 * of a node-less match and hands them to the next match it emits), so
 * the service holds vertices down, as early release does, and picks them
 * here: free vertices (no hold, not down) of rabbits that are up, at most
 * what the rabbit's Storage says is free, the rabbits with the most room
 * first.  It leaves free the vertices that the jobs ahead of this one in
 * the queue, which get their ssd with their nodes, may need: holding them
 * would keep such a job from fitting, and a first-come queue waiting on it
 * would never give the pre-staged jobs behind it their nodes.
 * Fluxion gives a job the highest-numbered vertices of a chassis
 * first; the lowest are taken here, so a vertex Fluxion gave a job just
 * before the hold applies is rare, and the caller checks for it (find
 * "sched-now=allocated and status=down") and picks again without it.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <stdlib.h>
#include <string.h>

#include "health.h"
#include "state.h"
#include "table.h"

#define GIB (1024LL * 1024 * 1024)

struct cand {
    size_t group;
    int64_t free; /* vertices that may be taken */
};

static int cand_cmp (const void *a, const void *b)
{
    const struct cand *x = a, *y = b;
    if (x->free != y->free)
        return x->free > y->free ? -1 : 1;
    return x->group < y->group ? -1 : x->group > y->group;
}

static bool usable (const struct dws_health *h, const struct ssd *s, json_t *avoid)
{
    return s->holds == 0 && s->applied != 0 && !json_object_get (avoid, s->path)
           && !(h->fluxion_down && json_object_get (h->fluxion_down, s->path));
}

/* How many of group g's vertices may be taken. */
static int64_t group_free (const struct dws_health *h, const struct ssd_group *g, json_t *avoid)
{
    if (g->ri < 0 || g->gib <= 0 || !h->rabbits[g->ri].up)
        return 0;
    int64_t n = 0;
    for (size_t k = 0; k < g->n; k++)
        n += usable (h, &h->ssdv[g->first + k], avoid);
    int64_t free_bytes = h->rabbits[g->ri].sv.free_bytes;
    if (free_bytes >= 0 && free_bytes / GIB / g->gib < n)
        n = free_bytes / GIB / g->gib;
    return n;
}

/* Take up to `most` usable vertices of group g, each rabbit's lowest
 * first: their paths onto `paths`, their GiB as the rabbit's in `rsv`.
 * How many were taken.
 */
static int64_t take (const struct dws_health *h, const struct ssd_group *g, json_t *avoid,
                     int64_t most, json_t *paths, json_t *rsv)
{
    int64_t taken = 0;
    for (size_t k = 0; k < g->n && taken < most; k++) {
        const struct ssd *s = &h->ssdv[g->first + k];
        if (!usable (h, s, avoid))
            continue;
        json_array_append_new (paths, json_string (s->path));
        taken++;
    }
    if (taken > 0)
        json_object_set_new (rsv, g->rabbit, json_integer (taken * g->gib));
    return taken;
}

/* The vertices the ssd asks in 'leave' ([[slots, GiB]]) take, in the
 * smallest vertices the graph has: each slot's GiB in whole vertices, as
 * Fluxion gives an exclusive ssd request.  The most it could take, since
 * the rabbits the scheduler will choose are not known.
 */
static int64_t leave_vertices (const struct dws_health *h, json_t *leave)
{
    int64_t small = 0, n = 0;
    for (size_t i = 0; i < h->ngroups; i++)
        if (h->groups[i].gib > 0 && (small == 0 || h->groups[i].gib < small))
            small = h->groups[i].gib;
    size_t i;
    json_t *ask;
    json_array_foreach (leave, i, ask) {
        int64_t slots = json_integer_value (json_array_get (ask, 0));
        int64_t gib = json_integer_value (json_array_get (ask, 1));
        if (small > 0 && slots > 0 && gib > 0)
            n += slots * ((gib + small - 1) / small);
    }
    return n;
}

json_t *dws_health_pick (struct dws_health *h, int64_t gib, json_t *avoid, json_t *leave,
                         json_t **reserved, dws_error_t *err)
{
    struct cand *c = calloc (h->ngroups ? h->ngroups : 1, sizeof (*c));
    json_t *paths = json_array ();
    json_t *rsv = json_object ();
    int64_t have = 0, room = 0, nfree = 0, taken_all = 0;
    int64_t keep = leave_vertices (h, leave);
    *reserved = NULL;
    if (!c || !paths || !rsv) {
        dws_errorf (err, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < h->ngroups; i++) {
        c[i].group = i;
        c[i].free = group_free (h, &h->groups[i], avoid);
        room += c[i].free * h->groups[i].gib;
        nfree += c[i].free;
    }
    qsort (c, h->ngroups, sizeof (*c), cand_cmp);
    for (size_t i = 0; i < h->ngroups && have < gib; i++) {
        const struct ssd_group *g = &h->groups[c[i].group];
        int64_t need = (gib - have + g->gib - 1) / g->gib;
        int64_t taken = take (h, g, avoid, need < c[i].free ? need : c[i].free, paths, rsv);
        have += taken * g->gib;
        taken_all += taken;
    }
    if (have < gib) {
        dws_errorf (err, "%lld GiB of rabbit ssd wanted, %lld GiB free on the rabbits that"
                    " are up", (long long)gib, (long long)room);
        goto fail;
    }
    if (nfree - taken_all < keep) {
        dws_errorf (err, "%lld GiB of rabbit ssd wanted (%lld vertices), %lld of the %lld"
                    " free vertices kept for the jobs ahead of it that get their ssd with"
                    " their nodes", (long long)gib, (long long)taken_all, (long long)keep,
                    (long long)nfree);
        goto fail;
    }
    free (c);
    *reserved = rsv;
    return paths;
fail:
    free (c);
    json_decref (paths);
    json_decref (rsv);
    return NULL;
}

/* A rabbit's computes in this instance that may run a job: broker ranks
 * online and not drained.  Their names, when `names` is not NULL.
 */
static int64_t chassis_nodes (const struct dws_health *h, const struct rabbit *r, json_t *names)
{
    int64_t n = 0;
    for (size_t i = 0; i < r->nmembers; i++) {
        const struct compute *c = &h->computes[r->members[i]];
        if (c->rank < 0 || (size_t)c->rank >= h->nranks)
            continue;
        const struct rank *k = &h->ranks[c->rank];
        if (!k->online || k->drained)
            continue;
        n++;
        if (names)
            json_array_append_new (names, json_string (c->name));
    }
    return n;
}

struct chassis_cand {
    size_t group;
    int64_t nodes;  /* its computes that may run the job */
    int64_t free;   /* vertices that may be taken */
    int64_t want;   /* vertices the job's allocations on it take */
    int allocs;     /* jobs using the rabbit */
};

/* Rabbits whose nodes are least in use by rabbit jobs first (their nodes
 * are likelier to come soon), then the most room, then the graph's order.
 */
static int chassis_cmp (const void *a, const void *b)
{
    const struct chassis_cand *x = a, *y = b;
    if (x->allocs != y->allocs)
        return x->allocs < y->allocs ? -1 : 1;
    if (x->free != y->free)
        return x->free > y->free ? -1 : 1;
    return x->group < y->group ? -1 : x->group > y->group;
}

json_t *dws_health_pick_chassis (struct dws_health *h, int64_t chassis, int64_t per,
                                 int64_t node_gib, json_t *avoid, json_t *leave,
                                 json_t **reserved, json_t **hosts, dws_error_t *err)
{
    struct chassis_cand *c = calloc (h->ngroups ? h->ngroups : 1, sizeof (*c));
    json_t *paths = json_array ();
    json_t *rsv = json_object ();
    json_t *names = json_array ();
    int64_t nfree = 0, taken_all = 0, fit = 0, nodes_fit = 0;
    int64_t keep = leave_vertices (h, leave);
    size_t n = 0;
    *reserved = *hosts = NULL;
    if (!c || !paths || !rsv || !names) {
        dws_errorf (err, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < h->ngroups; i++) {
        const struct ssd_group *g = &h->groups[i];
        int64_t free = group_free (h, g, avoid);
        nfree += free;
        if (g->ri < 0 || g->gib <= 0 || !h->rabbits[g->ri].up)
            continue;
        struct chassis_cand *x = &c[n];
        x->group = i;
        x->free = free;
        x->want = per * ((node_gib + g->gib - 1) / g->gib); /* one exclusive ssd per node */
        x->nodes = chassis_nodes (h, &h->rabbits[g->ri], NULL);
        x->allocs = h->rabbits[g->ri].allocs;
        nodes_fit += x->nodes >= per;
        if (x->nodes >= per && x->free >= x->want) {
            n++;
            fit++;
        }
    }
    if (fit < chassis) {
        dws_errorf (err, "%lld rabbits wanted with %lld nodes up and %lld ssd vertices free"
                    " (one per node, %lld GiB each); %lld have the nodes, %lld both",
                    (long long)chassis, (long long)per, (long long)per, (long long)node_gib,
                    (long long)nodes_fit, (long long)fit);
        goto fail;
    }
    qsort (c, n, sizeof (*c), chassis_cmp);
    for (int64_t i = 0; i < chassis; i++) {
        const struct ssd_group *g = &h->groups[c[i].group];
        taken_all += take (h, g, avoid, c[i].want, paths, rsv);
        chassis_nodes (h, &h->rabbits[g->ri], names);
    }
    if (nfree - taken_all < keep) {
        dws_errorf (err, "%lld ssd vertices wanted on %lld rabbits, %lld of the %lld free"
                    " vertices kept for the jobs ahead of it that get their ssd with their"
                    " nodes", (long long)taken_all, (long long)chassis, (long long)keep,
                    (long long)nfree);
        goto fail;
    }
    free (c);
    *reserved = rsv;
    *hosts = names;
    return paths;
fail:
    free (c);
    json_decref (paths);
    json_decref (rsv);
    json_decref (names);
    return NULL;
}

bool dws_health_known (struct dws_health *h)
{
    return h->graph_gen > 0 && h->nranks > 0 && h->nrabbits > 0;
}

unsigned long dws_health_updown_gen (struct dws_health *h)
{
    return h->updown_gen;
}

bool dws_health_rabbit_down (struct dws_health *h, const char *rabbit)
{
    long ri = table_index (h->rabbit_index, rabbit);
    return ri >= 0 && h->rabbits[ri].sv.obj && !h->rabbits[ri].up;
}

const char *dws_health_first_down (struct dws_health *h, json_t *rabbits)
{
    const char *rabbit;
    json_t *v;
    json_object_foreach (rabbits, rabbit, v)
        if (dws_health_rabbit_down (h, rabbit))
            return rabbit;
    return NULL;
}

int64_t dws_health_chassis_fit (struct dws_health *h, int64_t per, int64_t node_gib)
{
    int64_t fit = 0;
    for (size_t i = 0; i < h->ngroups; i++) {
        const struct ssd_group *g = &h->groups[i];
        if (g->ri < 0 || g->gib <= 0)
            continue;
        int64_t nodes = 0;
        const struct rabbit *r = &h->rabbits[g->ri];
        for (size_t k = 0; k < r->nmembers; k++)
            nodes += h->computes[r->members[k]].rank >= 0;
        fit += nodes >= per && (int64_t)g->n >= per * ((node_gib + g->gib - 1) / g->gib);
    }
    return fit;
}

int64_t *dws_health_chassis_sizes (struct dws_health *h, size_t *n)
{
    int64_t *sizes = h->nrabbits ? calloc (h->nrabbits, sizeof (*sizes)) : NULL;
    *n = sizes ? h->nrabbits : 0;
    for (size_t i = 0; sizes && i < h->nrabbits; i++)
        for (size_t k = 0; k < h->rabbits[i].nmembers; k++)
            sizes[i] += h->computes[h->rabbits[i].members[k]].rank >= 0;
    return sizes;
}

size_t dws_health_nodes (struct dws_health *h)
{
    return h->nranks;
}

int64_t dws_health_graph_gib (struct dws_health *h)
{
    int64_t gib = 0;
    for (size_t i = 0; i < h->ngroups; i++)
        gib += (int64_t)h->groups[i].n * h->groups[i].gib;
    return gib;
}
