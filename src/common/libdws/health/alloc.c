/* alloc.c - the rabbits each job's Workflow uses (dws_health_allocation):
 * without Fluxion, their computes get the alloc_rabbit property.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <stdio.h>

#include "arm.h"
#include "table.h"

void dws_health_allocation (struct dws_health *h, json_int_t id, json_t *rabbits,
                            json_t *actions)
{
    char key[32];
    snprintf (key, sizeof (key), "%lld", (long long)id);
    json_t *had = json_object_get (h->jobs, key);
    if (!had && json_array_size (rabbits) == 0)
        return;
    if (had && json_equal (had, rabbits))
        return;
    size_t i;
    json_t *v;
    json_array_foreach (had, i, v) {
        long ri = table_index (h->rabbit_index, json_string_value (v));
        if (ri >= 0)
            h->rabbits[ri].allocs--;
    }
    json_object_del (h->jobs, key);
    if (json_array_size (rabbits) > 0) {
        json_t *kept = json_array ();
        json_array_foreach (rabbits, i, v) {
            long ri = table_index (h->rabbit_index, json_string_value (v));
            if (ri >= 0) {
                h->rabbits[ri].allocs++;
                json_array_append (kept, v);
            }
        }
        json_object_set_new (h->jobs, key, kept);
    }
    if (!h->cfg.fluxion)
        arm_soon (h, actions); /* alloc_rabbit */
}
