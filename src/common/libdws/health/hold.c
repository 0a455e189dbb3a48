/* hold.c - jobs holding ssd vertices down in Fluxion (health.h,
 * dws_health_hold): the holds, each vertex's count of them, and whether
 * Fluxion has applied each hold.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>

#include "arm.h"
#include "hold.h"
#include "table.h"

static void hold_key (char *key, size_t len, json_int_t id)
{
    snprintf (key, len, "%lld", (long long)id);
}

/* A hold on these paths begins (delta 1) or ends (-1). */
static void adjust (struct dws_health *h, json_t *paths, int delta)
{
    size_t k;
    json_t *p;
    json_array_foreach (paths, k, p) {
        long i = table_index (h->ssd_index, json_string_value (p));
        if (i >= 0)
            h->ssdv[i].holds += delta;
    }
}

void hold_count (struct dws_health *h)
{
    for (size_t i = 0; i < h->nssd; i++)
        h->ssdv[i].holds = 0;
    const char *key;
    json_t *hold;
    json_object_foreach (h->holds, key, hold)
        adjust (h, json_object_get (hold, "paths"), 1);
}

void hold_unreport_all (struct dws_health *h)
{
    const char *key;
    json_t *hold;
    json_object_foreach (h->holds, key, hold)
        json_object_set_new (hold, "reported", json_false ());
    h->holds_dirty = true;
}

bool hold_is_applied (struct dws_health *h, json_t *hold)
{
    if (!h->cfg.fluxion)
        return true;
    size_t k;
    json_t *p;
    json_array_foreach (json_object_get (hold, "paths"), k, p) {
        long i = table_index (h->ssd_index, json_string_value (p));
        if (i < 0 || h->ssdv[i].applied != 0 || h->ssdv[i].batch != 0)
            return false;
    }
    return true;
}

int dws_health_hold (struct dws_health *h, json_int_t id, json_t *paths, double since,
                     double now, json_t *actions, dws_error_t *err)
{
    size_t k;
    json_t *p;
    if (!json_is_array (paths))
        return dws_errorf (err, "hold of job %lld: paths must be an array of ssd vertex paths",
                           (long long)id);
    json_array_foreach (paths, k, p) {
        if (!json_is_string (p))
            return dws_errorf (err, "hold of job %lld: paths[%zu] is not a path string",
                               (long long)id, k);
    }
    char key[32];
    hold_key (key, sizeof (key), id);
    json_t *old = json_object_get (h->holds, key);
    if (since <= 0)
        since = old ? json_real_value (json_object_get (old, "since")) : now;
    json_t *copy = json_deep_copy (paths);
    json_t *hold = copy ? json_pack ("{s:o s:f s:b}", "paths", copy, "since", since,
                                     "reported", 0)
                        : NULL;
    if (!hold)
        return dws_errorf (err, "out of memory");
    if (old)
        adjust (h, json_object_get (old, "paths"), -1);
    adjust (h, copy, 1);
    json_object_set_new (h->holds, key, hold); /* releases old */
    h->now = now;
    h->holds_dirty = true;
    arm_soon (h, actions);
    return 0;
}

void dws_health_unhold (struct dws_health *h, json_int_t id, double now, json_t *actions)
{
    char key[32];
    hold_key (key, sizeof (key), id);
    json_t *hold = json_object_get (h->holds, key);
    if (!hold)
        return;
    adjust (h, json_object_get (hold, "paths"), -1);
    json_object_del (h->holds, key);
    h->now = now;
    /* the flush is armed even when no hold is left: what it freed goes up */
    arm_flush (h, DWS_HEALTH_FLUSH_DELAY, actions);
}

bool dws_health_holding (struct dws_health *h, json_int_t id)
{
    char key[32];
    hold_key (key, sizeof (key), id);
    return json_object_get (h->holds, key) != NULL;
}

bool dws_health_hold_applied (struct dws_health *h, json_int_t id)
{
    char key[32];
    hold_key (key, sizeof (key), id);
    json_t *hold = json_object_get (h->holds, key);
    return hold && hold_is_applied (h, hold);
}

json_t *dws_health_holds_applied (struct dws_health *h)
{
    json_t *out = json_array ();
    if (!out || !h->holds_dirty)
        return out;
    h->holds_dirty = false;
    const char *key;
    json_t *hold;
    json_object_foreach (h->holds, key, hold) {
        bool applied = hold_is_applied (h, hold);
        if (applied == json_is_true (json_object_get (hold, "reported")))
            continue;
        json_object_set_new (hold, "reported", json_boolean (applied));
        if (applied)
            json_array_append_new (out, json_integer (strtoll (key, NULL, 10)));
    }
    return out;
}
