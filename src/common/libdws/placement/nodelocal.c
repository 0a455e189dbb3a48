/* nodelocal.c - node-local storage placed before the nodes (nodelocal.h).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <string.h>

#include "nodelocal.h"
#include "parse/labels.h"

/* status.storage.allocationSets of a breakdown (whole object or status). */
static json_t *sets_of (json_t *bd)
{
    json_t *status = json_object_get (bd, "status");
    if (!json_is_object (status))
        status = bd;
    return json_object_get (json_object_get (status, "storage"), "allocationSets");
}

/* The one top-level entry of a plain node request, or NULL. */
static json_t *plain_node (json_t *resources)
{
    json_t *top = json_array_size (resources) == 1 ? json_array_get (resources, 0) : NULL;
    const char *t = json_string_value (json_object_get (top, "type"));
    json_t *count = json_object_get (top, "count");
    if (!t || strcmp (t, "node") || !json_is_integer (count) || json_integer_value (count) < 1)
        return NULL;
    return top;
}

bool dws_nodelocal_placeable (json_t *resources, json_t *breakdowns, dws_error_t *err)
{
    size_t b, s;
    json_t *bd, *set;
    int local = 0, lustre = 0;
    json_array_foreach (breakdowns, b, bd) {
        json_array_foreach (sets_of (bd), s, set) {
            if (dws_label_is_lustre (json_string_value (json_object_get (set, "label"))))
                lustre++;
            else
                local++;
        }
    }
    if (local == 0) {
        dws_errorf (err, "it asks for no node-local storage");
        return false;
    }
    if (lustre > 0) {
        dws_errorf (err, "its node-local storage and its Lustre are placed differently"
                         " (a job with both is not pre-staged)");
        return false;
    }
    if (!plain_node (resources)) {
        dws_errorf (err, "node-local storage is set up before the nodes only for a job"
                         " asking for nodes alone (-N)");
        return false;
    }
    return true;
}

int dws_nodelocal_split (int64_t nodes, const int64_t *sizes, size_t n, int64_t *chassis,
                         int64_t *per, dws_error_t *err)
{
    int64_t most = 0;
    for (size_t i = 0; i < n; i++)
        most = sizes[i] > most ? sizes[i] : most;
    if (nodes < 1)
        return dws_errorf (err, "cannot split %lld nodes", (long long)nodes);
    for (int64_t k = most < nodes ? most : nodes; k >= 1; k--) {
        if (nodes % k != 0)
            continue;
        int64_t fit = 0;
        for (size_t i = 0; i < n; i++)
            fit += sizes[i] >= k;
        if (fit >= nodes / k) {
            *per = k;
            *chassis = nodes / k;
            return 0;
        }
    }
    return dws_errorf (err, "its %lld nodes cannot be split evenly over the %zu chassis of"
                       " the instance (at most %lld nodes each)", (long long)nodes, n,
                       (long long)most);
}

json_t *dws_nodelocal_pin (json_t *resources, int64_t chassis, int64_t per, dws_error_t *err)
{
    json_t *top = plain_node (resources);
    if (!top) {
        dws_errorf (err, "the resources are not one plain node request");
        return NULL;
    }
    if (chassis < 1 || per < 1 || chassis * per != json_integer_value (json_object_get (top, "count"))) {
        dws_errorf (err, "%lld chassis of %lld nodes are not the job's %lld nodes",
                    (long long)chassis, (long long)per,
                    (long long)json_integer_value (json_object_get (top, "count")));
        return NULL;
    }
    json_t *node = json_deep_copy (top);
    if (!node || json_object_set_new (node, "count", json_integer (per)) < 0) {
        json_decref (node);
        dws_errorf (err, "out of memory");
        return NULL;
    }
    json_t *out = json_pack ("[{s:s s:I s:[o]}]", "type", "chassis", "count", (json_int_t)chassis,
                             "with", node);
    if (!out)
        dws_errorf (err, "out of memory");
    return out;
}

json_t *dws_nodelocal_constraint (const char *hosts)
{
    return json_pack ("{s:[s]}", "hostlist", hosts ? hosts : "");
}
