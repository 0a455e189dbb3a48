/* fluxion.c - what Fluxion has of the ssd vertices (fluxion.h,
 * dws_health_fluxion_restart, dws_health_fluxion_state).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include "wire/action.h"
#include "arm.h"
#include "batch.h"
#include "fluxion.h"
#include "hold.h"
#include "property.h"
#include "table.h"

/* Every ssd vertex unknown to Fluxion: sent again at the next flush. */
static void forget_applied_ssds (struct dws_health *h)
{
    for (size_t i = 0; i < h->nssd; i++) {
        h->ssdv[i].applied = -1;
        h->ssdv[i].batch = 0;
    }
    hold_unreport_all (h);
}

void dws_health_fluxion_restart (struct dws_health *h, json_t *actions)
{
    forget_applied_ssds (h);
    property_forget (h);
    /* no ssd is sent until Fluxion says what it has; a find in flight may
     * have been answered by the Fluxion that went away: asked again */
    h->fluxion_known = false;
    json_decref (h->fluxion_down);
    h->fluxion_down = NULL;
    if (h->find_token[0])
        json_object_del (h->batches, h->find_token);
    h->find_token[0] = '\0';
    arm_soon (h, actions);
}

int dws_health_fluxion_state (struct dws_health *h, json_t *down, json_t *actions,
                              dws_error_t *err)
{
    json_t *set = NULL;
    if (down && !json_is_null (down)) {
        size_t i;
        json_t *p;
        if (!json_is_array (down))
            return dws_errorf (err, "fluxion-state 'down' must be an array of paths or null");
        if (!(set = json_object ()))
            return dws_errorf (err, "out of memory");
        json_array_foreach (down, i, p) {
            if (!json_is_string (p)) {
                json_decref (set);
                return dws_errorf (err, "fluxion-state 'down'[%zu] is not a path string", i);
            }
            json_object_set (set, json_string_value (p), json_true ());
        }
    }
    forget_applied_ssds (h);
    json_decref (h->fluxion_down);
    h->fluxion_down = set; /* NULL: not known, so every ssd is sent */
    h->fluxion_known = true;
    arm_soon (h, actions);
    return 0;
}

void fluxion_seed (struct dws_health *h, json_t *actions)
{
    if (!h->fluxion_down)
        return;
    const char *key;
    json_t *v;
    const char *unknown = NULL;
    size_t nunknown = 0;
    json_object_foreach (h->fluxion_down, key, v) {
        if (table_index (h->ssd_index, key) < 0 && nunknown++ == 0)
            unknown = key;
    }
    if (nunknown > 0) {
        /* a down ssd vertex that is not in the graph flux-dws read: the two
         * graphs differ, so "not down" proves nothing; say it and send all */
        dws_act_log (actions, "warning",
             "Fluxion has ssd vertices down that are not in R's graph (%zu, e.g. %s):"
             " giving it every rabbit's state",
             nunknown, unknown);
    }
    else
        for (size_t i = 0; i < h->nssd; i++) {
            struct ssd *s = &h->ssdv[i];
            s->applied = json_object_get (h->fluxion_down, s->path) ? 0 : 1;
            s->batch = 0;
        }
    json_decref (h->fluxion_down);
    h->fluxion_down = NULL;
}

void fluxion_ask (struct dws_health *h, json_t *actions)
{
    if (h->find_token[0])
        return;
    json_t *none = json_array ();
    batch_new (h, "find", none, 1, h->find_token, sizeof (h->find_token));
    json_decref (none);
    batch_rpc (actions, FLUXION "find",
               json_pack ("{s:s s:s}", "criteria", "status=down", "format", "jgf"),
               h->find_token);
}
