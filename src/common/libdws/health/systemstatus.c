/* systemstatus.c - DWS' SystemStatus (systemstatus.h).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include "batch.h"
#include "systemstatus.h"
#include "wire/wire.h"

struct host_state systemstatus_host (struct dws_health *h, const struct compute *c)
{
    struct host_state st = {false, false, false};
    size_t i;
    json_t *v;
    json_array_foreach (json_object_get (h->host_ranks, c->name), i, v) {
        json_int_t r = json_integer_value (v);
        if (r < 0 || (size_t)r >= h->nranks || h->ranks[r].excluded)
            continue;
        st.ours = true;
        st.offline |= !h->ranks[r].online;
        st.unmount |= h->ranks[r].unmount;
    }
    return st;
}

/* SystemStatus: Disabled for the computes DWS must leave out (the
 * reference's meaning): a host with a broker offline, or drained after a
 * failed unmount until an undrain.  Other drains (maintenance) leave it
 * Enabled: its mounts must still be removed normally.
 */
void systemstatus_flush (struct dws_health *h, json_t *actions)
{
    if (!h->journal_synced || h->nranks == 0)
        return;
    json_t *nodes = json_object ();
    json_t *names = json_array ();
    for (size_t i = 0; i < h->ncomputes; i++) {
        struct compute *c = &h->computes[i];
        struct host_state st = systemstatus_host (h, c);
        if (!st.ours)
            continue;
        int want = st.offline || st.unmount;
        if (c->ss_applied == want)
            continue;
        c->ss_applied = want;
        json_object_set_new (nodes, c->name, json_string (want ? "Disabled" : "Enabled"));
        json_array_append_new (names, json_string (c->name));
    }
    if (json_object_size (nodes) > 0) {
        char tok[48];
        json_t *a = json_pack ("{s:s s:s s:s s:s s:s s:{s:{s:O}} s:s}", "action", DWS_WIRE_ACTION (K8S), "op",
                               "patch", "kind", "SystemStatus", "namespace", h->namespace,
                               "name", "default", "body", "data", "nodes", nodes, "token",
                               batch_new (h, "ss", names, 1, tok, sizeof (tok)));
        json_array_append_new (actions, a);
        batch_count (h, "systemstatus", 1);
    }
    json_decref (nodes);
    json_decref (names);
}
