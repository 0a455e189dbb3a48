/* property.c - the badrabbit and alloc_rabbit node properties (property.h,
 * health.h's rules).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <stdio.h>

#include "batch.h"
#include "link.h"
#include "property.h"
#include "table.h"

void property_forget (struct dws_health *h)
{
    for (size_t i = 0; i < h->ncomputes; i++)
        h->computes[i].bad_applied = h->computes[i].alloc_applied = -1;
}

static bool want_bad (struct dws_health *h, const struct compute *c)
{
    if (!h->cfg.soft_drain && h->cfg.fluxion)
        return false;
    return !h->rabbits[c->rabbit].up || link_down (c) || c->mount_failed;
}

static bool want_alloc (struct dws_health *h, const struct compute *c)
{
    return !h->cfg.fluxion && h->rabbits[c->rabbit].allocs > 0;
}

/* The path of a compute in Fluxion's graph, or NULL: not in it. */
static const char *node_path (struct dws_health *h, const struct compute *c, char *buf,
                              size_t len)
{
    if (h->node_paths)
        return json_string_value (json_object_get (h->node_paths, c->name));
    snprintf (buf, len, "/cluster0/%s", c->name); /* Fluxion's rv1 graph */
    return buf;
}

void property_flush (struct dws_health *h, const char *prop, bool alloc, json_t *actions)
{
    if (!h->storage_synced || (h->cfg.fluxion && !h->graph_known))
        return;
    if (alloc ? h->cfg.fluxion : (h->cfg.fluxion && !h->cfg.soft_drain))
        return; /* a property flux-dws does not manage in this mode */
    json_t *add = json_array (), *add_n = json_array ();
    json_t *del = json_array (), *del_n = json_array ();
    for (size_t i = 0; i < h->ncomputes; i++) {
        struct compute *c = &h->computes[i];
        struct rank *rk = table_rank (h, c);
        char buf[256];
        const char *path;
        if (!rk || rk->excluded || !(path = node_path (h, c, buf, sizeof (buf))))
            continue; /* not a node of this instance's graph */
        int want = (alloc ? want_alloc (h, c) : want_bad (h, c)) ? 1 : 0;
        int *applied = alloc ? &c->alloc_applied : &c->bad_applied;
        if (*applied == want)
            continue;
        json_array_append_new (want ? add : del, json_string (path));
        json_array_append_new (want ? add_n : del_n, json_string (c->name));
        *applied = want;
    }
    char tok[48], kv[64];
    if (json_array_size (add) > 0) {
        snprintf (kv, sizeof (kv), "%s=%s", prop, alloc ? "yes" : "bad");
        batch_rpc (actions, FLUXION "set_property",
                   json_pack ("{s:O s:s}", "sp_resource_path", add, "sp_keyval", kv),
                   batch_new (h, alloc ? "alloc" : "bad", add_n, 1, tok, sizeof (tok)));
        batch_count (h, "set_property", 1);
    }
    if (json_array_size (del) > 0) {
        batch_rpc (actions, FLUXION "remove_property",
                   json_pack ("{s:O s:s}", "resource_path", del, "key", prop),
                   batch_new (h, alloc ? "alloc" : "bad", del_n, 1, tok, sizeof (tok)));
        batch_count (h, "remove_property", 1);
    }
    json_decref (add);
    json_decref (add_n);
    json_decref (del);
    json_decref (del_n);
}
