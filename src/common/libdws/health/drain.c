/* drain.c - drains of computes whose rabbit link went down (drain.h).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire/action.h"
#include "batch.h"
#include "drain.h"
#include "link.h"
#include "table.h"

void drain_flush (struct dws_health *h, json_t *actions)
{
    if (!h->journal_synced || !h->storage_synced)
        return;
    json_t *drains = json_object (); /* reason -> [compute] */
    json_t *undrain = json_array ();
    for (size_t i = 0; i < h->ncomputes; i++) {
        struct compute *c = &h->computes[i];
        struct rank *rk = table_rank (h, c);
        if (!c->link[0] || !rk || rk->excluded)
            continue; /* link not reported, or not a node of ours */
        int state = link_state (c);
        if (state == c->link_seen)
            continue;
        int was = c->link_seen;
        c->link_seen = state;
        bool drainable = h->cfg.drain_compute_nodes
                         && (!h->drainable || json_object_get (h->drainable, c->name));
        char reason[160];
        if (state == LINK_FENCED)
            snprintf (reason, sizeof (reason), "rabbit %s" DWS_HEALTH_FENCED_REASON,
                      h->rabbits[c->rabbit].name);
        else
            snprintf (reason, sizeof (reason), "rabbit %s link %s", h->rabbits[c->rabbit].name,
                      c->link);
        /* A drain of ours with a link reason (done or in flight) is
         * overwritten when the compute is fenced: the reason must say that
         * DWS fails jobs there.  Never an admin's.  A fenced compute whose
         * link is then merely down keeps its reason until the link is Ready.
         */
        bool redrain = state == LINK_FENCED && was != LINK_FENCED
                       && ((rk->drained && link_is_drain_reason (rk->drained)
                            && strcmp (rk->drained, reason) != 0)
                           || (c->drain_sent && strcmp (c->drain_sent, reason) != 0));
        if (state != LINK_UP && drainable && (redrain || (!rk->drained && !c->drain_sent))) {
            char key[sizeof (reason) + 2];
            snprintf (key, sizeof (key), "%c%s", redrain ? 'o' : 'u', reason);
            json_t *list = json_object_get (drains, key);
            if (!list)
                json_object_set_new (drains, key, (list = json_array ()));
            json_array_append_new (list, json_string (c->name));
            free (c->drain_sent);
            c->drain_sent = strdup (reason);
        }
        else if (state == LINK_UP && link_is_drain_reason (rk->drained))
            json_array_append_new (undrain, json_string (c->name));
    }
    const char *key;
    json_t *list;
    json_object_foreach (drains, key, list) {
        char tok[48];
        char *targets = batch_hostlist (list);
        const char *reason = key + 1; /* after the mode: o overwrite, u update */
        batch_rpc (actions, "resource.drain",
                   json_pack ("{s:s s:s s:s}", "targets", targets ? targets : "", "mode",
                              key[0] == 'o' ? "overwrite" : "update", "reason", reason),
                   batch_new (h, "drain", list, 1, tok, sizeof (tok)));
        dws_act_log (actions, "warning", "draining %s: %s", targets ? targets : "?", reason);
        free (targets);
        batch_count (h, "drain", 1);
    }
    if (json_array_size (undrain) > 0) {
        char tok[48];
        char *targets = batch_hostlist (undrain);
        batch_rpc (actions, "resource.undrain",
                   json_pack ("{s:s}", "targets", targets ? targets : ""),
                   batch_new (h, "undrain", undrain, 1, tok, sizeof (tok)));
        dws_act_log (actions, "info", "undraining %s: their rabbit links are up again",
              targets ? targets : "?");
        free (targets);
        batch_count (h, "undrain", 1);
    }
    json_decref (drains);
    json_decref (undrain);
}
