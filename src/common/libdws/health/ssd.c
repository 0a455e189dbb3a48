/* ssd.c - the flush of the ssd vertices' status to Fluxion (ssd.h).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include "batch.h"
#include "fluxion.h"
#include "ssd.h"

/* What an ssd vertex should be: 0 down (held, or its rabbit is down), 1
 * up, -1 leave it as it is (its rabbit's health is not known: before the
 * Storage list, or a rabbit the topology does not have).
 */
static int want_ssd (struct dws_health *h, const struct ssd *s)
{
    const struct ssd_group *g = &h->groups[s->group];
    if (s->holds > 0)
        return 0;
    if (g->ri < 0 || !h->storage_synced)
        return -1;
    return h->rabbits[g->ri].up ? 1 : 0;
}

/* One batch per rabbit for its vertices that differ from what they should
 * be; the batch knows its range of vertices, so its answer can tell each
 * one that Fluxion has it.
 */
static void flush_group (struct dws_health *h, const struct ssd_group *g, json_t *actions)
{
    char tok[48] = "";
    unsigned long id = 0;
    json_int_t n = 0;
    for (size_t i = g->first; i < g->first + g->n; i++) {
        struct ssd *s = &h->ssdv[i];
        int want = want_ssd (h, s);
        if (want < 0 || s->applied == want)
            continue;
        if (!tok[0]) {
            json_t *names = json_pack ("[s]", g->rabbit);
            batch_new (h, "ssd", names, 0, tok, sizeof (tok));
            json_decref (names);
            id = h->next_token;
        }
        batch_rpc (actions, FLUXION "set_status",
                   json_pack ("{s:s s:s}", "resource_path", s->path, "status",
                              want ? "up" : "down"),
                   tok);
        s->applied = want;
        s->batch = id;
        n++;
    }
    if (n == 0)
        return;
    json_t *b = json_object_get (h->batches, tok);
    json_object_set_new (b, "n", json_integer (n));
    json_object_set_new (b, "id", json_integer ((json_int_t)id));
    json_object_set_new (b, "gen", json_integer ((json_int_t)h->graph_gen));
    json_object_set_new (b, "first", json_integer ((json_int_t)g->first));
    json_object_set_new (b, "end", json_integer ((json_int_t)(g->first + g->n)));
    batch_count (h, "set_status", n);
}

void ssd_flush (struct dws_health *h, json_t *actions)
{
    if (!h->cfg.fluxion || !h->graph_known)
        return;
    if (!h->fluxion_known) {
        fluxion_ask (h, actions);
        return;
    }
    fluxion_seed (h, actions);
    for (size_t g = 0; g < h->ngroups; g++)
        flush_group (h, &h->groups[g], actions);
    h->holds_dirty = true;
}
