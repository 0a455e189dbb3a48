/* SPDX-License-Identifier: LGPL-3.0-or-later */
#include <stdbool.h>
#include <string.h>

#include "capacity.h"
#include "directive.h"
#include "policy.h"
#include "util/jsonio.h"

static const char *types[] = {"xfs", "gfs2", "raw", "lustre"};
#define NTYPES 4

static int type_index (const char *t)
{
    for (int i = 0; i < NTYPES; i++)
        if (t && !strcmp (t, types[i]))
            return i;
    return -1;
}

int dws_policy_check_table (json_t *maximums, dws_error_t *err)
{
    const char *key;
    json_t *val;

    if (!maximums || json_is_null (maximums))
        return 0;
    if (!json_is_object (maximums))
        return dws_errorf (err, "rabbit.policy.maximums must be a table");
    json_object_foreach (maximums, key, val) {
        if (type_index (key) < 0)
            return dws_errorf (err,
                               "rabbit.policy.maximums.%s: unknown file system type"
                               " (expected xfs, gfs2, raw or lustre)",
                               key);
        if (!json_is_integer (val) || json_integer_value (val) < 0)
            return dws_errorf (err,
                               "rabbit.policy.maximums.%s must be a non-negative integer"
                               " (GiB per node)",
                               key);
    }
    return 0;
}

int dws_policy_check_maximums (json_t *directives,
                               int nnodes,
                               json_t *maximums,
                               dws_error_t *err)
{
    int64_t gib[NTYPES] = {0};
    int order[NTYPES];
    int norder = 0;
    size_t i;
    json_t *d;

    if (dws_policy_check_table (maximums, err) < 0)
        return -1;
    if (!maximums || json_object_size (maximums) == 0)
        return 0;
    if (nnodes < 1)
        return dws_errorf (err, "cannot apply rabbit.policy.maximums: job has no nodes");
    json_array_foreach (directives, i, d) {
        json_t *parsed = dws_dw_parse (json_string_value (d), err);
        int64_t cap;
        int t;
        if (!parsed)
            return -1;
        const char *cmd = json_string_value (json_object_get (parsed, "command"));
        if ((!strcmp (cmd, "jobdw") || !strcmp (cmd, "create_persistent"))
            && (t = type_index (dws_dw_arg (parsed, "type"))) >= 0) {
            if (dws_capacity_parse (dws_dw_arg (parsed, "capacity"), &cap, err) < 0) {
                json_decref (parsed);
                return -1;
            }
            bool seen = false;
            for (int k = 0; k < norder; k++)
                seen = seen || order[k] == t;
            if (!seen)
                order[norder++] = t;
            /* per-node GiB of this directive, rounded up, as the incumbent
             * sums its breakdowns' per-node figures */
            if (!strcmp (types[t], "lustre"))
                gib[t] += dws_gib_ceil (cap / nnodes + (cap % nnodes ? 1 : 0));
            else
                gib[t] += dws_gib_ceil (cap);
        }
        json_decref (parsed);
    }
    for (int k = 0; k < norder; k++) {
        int t = order[k];
        json_t *max = json_object_get (maximums, types[t]);
        if (max && gib[t] > json_integer_value (max))
            return dws_errorf (err,
                               "Requested a total of %lld GiB of %s storage per node but max"
                               " is %lld GiB per node",
                               (long long)gib[t],
                               types[t],
                               (long long)json_integer_value (max));
    }
    return 0;
}

int dws_policy_check_maximums_json (const char *directives_json,
                                    int nnodes,
                                    const char *maximums_json,
                                    dws_error_t *err)
{
    json_t *dirs = dws_json_load ("directives", directives_json, 0, err);
    json_t *max = NULL;
    int rc = -1;

    if (!dirs)
        return -1;
    if (maximums_json && !(max = dws_json_load ("maximums", maximums_json, 0, err)))
        ;
    else
        rc = dws_policy_check_maximums (dirs, nnodes, json_is_null (max) ? NULL : max, err);
    json_decref (dirs);
    json_decref (max);
    return rc;
}
