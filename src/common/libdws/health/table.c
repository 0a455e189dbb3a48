/* table.c - rabbit health's tables (table.h).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <stdlib.h>

#include "table.h"

long table_index (json_t *index, const char *name)
{
    json_t *v = name ? json_object_get (index, name) : NULL;
    return v ? (long)json_integer_value (v) : -1;
}

struct compute *table_compute (struct dws_health *h, const char *name)
{
    long i = table_index (h->compute_index, name);
    return i < 0 ? NULL : &h->computes[i];
}

struct rank *table_rank (struct dws_health *h, const struct compute *c)
{
    return c->rank < 0 || (size_t)c->rank >= h->nranks ? NULL : &h->ranks[c->rank];
}

void table_free (struct rabbit *rabbits, size_t nrabbits, struct compute *computes,
                 size_t ncomputes)
{
    for (size_t i = 0; i < nrabbits; i++) {
        free (rabbits[i].name);
        free (rabbits[i].members);
        storageview_clear (&rabbits[i].sv);
    }
    for (size_t i = 0; i < ncomputes; i++) {
        free (computes[i].name);
        free (computes[i].drain_sent);
    }
    free (rabbits);
    free (computes);
}

void table_free_ssds (struct dws_health *h)
{
    for (size_t i = 0; i < h->nssd; i++)
        free (h->ssdv[i].path);
    for (size_t g = 0; g < h->ngroups; g++)
        free (h->groups[g].rabbit);
    free (h->ssdv);
    free (h->groups);
    h->ssdv = NULL;
    h->groups = NULL;
    h->nssd = h->ngroups = 0;
    json_object_clear (h->ssd_index);
    json_object_clear (h->group_index);
}

void table_free_ranks (struct dws_health *h)
{
    for (size_t i = 0; i < h->nranks; i++) {
        free (h->ranks[i].host);
        free (h->ranks[i].drained);
    }
    free (h->ranks);
    h->ranks = NULL;
    h->nranks = 0;
    json_object_clear (h->rank_index);
    json_object_clear (h->host_ranks);
}

void table_resolve_ranks (struct dws_health *h)
{
    for (size_t i = 0; i < h->ncomputes; i++)
        h->computes[i].rank = table_index (h->rank_index, h->computes[i].name);
}

void table_resolve_groups (struct dws_health *h)
{
    for (size_t g = 0; g < h->ngroups; g++)
        h->groups[g].ri = table_index (h->rabbit_index, h->groups[g].rabbit);
}
