/* breakdown.c - jobspec rewrite for DirectiveBreakdowns (see breakdown.h).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <string.h>

#include "breakdown.h"
#include "capacity.h"
#include "jsonio.h"

static const struct {
    const char *label;
    const char *strategy;
    bool lustre;
} labels[] = {
    {"xfs", "AllocatePerCompute", false},
    {"gfs2", "AllocatePerCompute", false},
    {"raw", "AllocatePerCompute", false},
    {"ost", "AllocateAcrossServers", true},
    {"mdt", "AllocateAcrossServers", true},
    {"mgtmdt", "AllocateAcrossServers", true},
    {"mgt", "AllocateSingleServer", true},
};

static int check_label (const char *label, const char *strategy, bool *lustre,
                        size_t b, size_t s, dws_error_t *err)
{
    for (size_t i = 0; i < sizeof (labels) / sizeof (labels[0]); i++) {
        if (strcmp (labels[i].label, label) != 0)
            continue;
        if (strcmp (labels[i].strategy, strategy) != 0)
            return dws_errorf (err,
                               "breakdown %zu: allocation set %zu (%s) has strategy %s,"
                               " expected %s",
                               b, s, label, strategy, labels[i].strategy);
        *lustre = labels[i].lustre;
        return 0;
    }
    return dws_errorf (err,
                       "breakdown %zu: allocation set %zu has unknown label '%s'",
                       b, s, label);
}

/* The status.storage of breakdown b (NULL if it holds none). */
static int storage_of (json_t *bd, size_t b, json_t **storage, dws_error_t *err)
{
    json_t *status = json_object_get (bd, "status");
    if (!json_is_object (bd))
        return dws_errorf (err, "breakdown %zu is not an object", b);
    if (!status)
        status = bd; /* given the status itself */
    *storage = json_object_get (status, "storage");
    if (*storage && !json_is_object (*storage) && !json_is_null (*storage))
        return dws_errorf (err, "breakdown %zu: status.storage is not an object", b);
    if (json_is_null (*storage))
        *storage = NULL;
    return 0;
}

int64_t dws_breakdown_gib_per_node (json_t *breakdowns,
                                    int64_t nnodes,
                                    int64_t min_gib,
                                    dws_error_t *err)
{
    int64_t total = 0;
    size_t b;
    json_t *bd;

    if (!json_is_array (breakdowns))
        return dws_errorf (err, "breakdowns must be a list");
    if (nnodes < 1)
        return dws_errorf (err, "the job must request at least one node");
    if (min_gib < 0)
        return dws_errorf (err, "minimum allocation size must be >= 0 GiB");
    json_array_foreach (breakdowns, b, bd) {
        json_t *storage, *sets, *set;
        size_t s;
        if (storage_of (bd, b, &storage, err) < 0)
            return -1;
        if (!storage)
            continue;
        sets = json_object_get (storage, "allocationSets");
        if (!json_is_array (sets))
            return dws_errorf (err, "breakdown %zu: status.storage.allocationSets is not a list",
                               b);
        json_array_foreach (sets, s, set) {
            const char *label, *strategy;
            json_int_t cap;
            bool lustre = false;
            if (json_unpack (set, "{s:s s:s s:I}",
                             "label", &label,
                             "allocationStrategy", &strategy,
                             "minimumCapacity", &cap) < 0
                || cap < 1)
                return dws_errorf (err,
                                   "breakdown %zu: allocation set %zu needs a label, an"
                                   " allocationStrategy and a minimumCapacity >= 1",
                                   b, s);
            if (check_label (label, strategy, &lustre, b, s, err) < 0)
                return -1;
            int64_t per_node = lustre ? cap / nnodes + (cap % nnodes ? 1 : 0) : cap;
            int64_t gib = dws_gib_ceil (per_node);
            total += gib > min_gib ? gib : min_gib;
        }
    }
    return total;
}

static const char *rtype (json_t *r)
{
    return json_string_value (json_object_get (r, "type"));
}

static int count_of (json_t *r, const char *where, int64_t *n, dws_error_t *err)
{
    json_t *c = json_object_get (r, "count");
    if (json_is_object (c))
        return dws_errorf (err,
                           "%s count ranges are not supported with rabbit storage;"
                           " give a fixed count",
                           where);
    if (!json_is_integer (c) || json_integer_value (c) < 1)
        return dws_errorf (err, "%s count must be an integer >= 1", where);
    *n = json_integer_value (c);
    return 0;
}

static bool has_type (json_t *list, const char *type)
{
    size_t i;
    json_t *r;
    json_array_foreach (list, i, r) {
        const char *t = rtype (r);
        if ((t && !strcmp (t, type)) || has_type (json_object_get (r, "with"), type))
            return true;
    }
    return false;
}

/* The single `node` entry of a chassis's children, or NULL with a message. */
static json_t *chassis_node (json_t *chassis, dws_error_t *err)
{
    json_t *with = json_object_get (chassis, "with");
    json_t *node = NULL;
    size_t i;
    json_t *r;
    json_array_foreach (with, i, r) {
        const char *t = rtype (r);
        if (t && !strcmp (t, "node")) {
            if (node) {
                dws_errorf (err, "chassis must contain a single node entry");
                return NULL;
            }
            node = r;
        }
        else if (!t || strcmp (t, "storage_node") != 0) {
            dws_errorf (err,
                        "chassis may contain only node and storage_node entries, not '%s'",
                        t ? t : "(no type)");
            return NULL;
        }
    }
    if (!node)
        dws_errorf (err, "chassis must contain a node entry");
    return node;
}

/* The top-level entry to rewrite (node or chassis), or NULL with a message. */
static json_t *top_entry (json_t *resources, dws_error_t *err)
{
    json_t *top;
    const char *t;

    if (!json_is_array (resources) || json_array_size (resources) == 0) {
        dws_errorf (err, "jobspec resources must be a non-empty list");
        return NULL;
    }
    if (json_array_size (resources) != 1) {
        dws_errorf (err,
                    "jobspec resources must have a single top-level entry to use rabbit"
                    " storage (found %zu)",
                    json_array_size (resources));
        return NULL;
    }
    top = json_array_get (resources, 0);
    t = rtype (top);
    if (!t || (strcmp (t, "node") != 0 && strcmp (t, "chassis") != 0)) {
        dws_errorf (err,
                    "rabbit storage needs a jobspec that requests nodes (e.g. flux submit"
                    " -N); the top-level resource is '%s'",
                    t ? t : "(no type)");
        return NULL;
    }
    return top;
}

int64_t dws_jobspec_node_count (json_t *resources, dws_error_t *err)
{
    json_t *top = top_entry (resources, err);
    int64_t n = 0, per = 0;

    if (!top)
        return -1;
    if (!strcmp (rtype (top), "node"))
        return count_of (top, "node", &n, err) < 0 ? -1 : n;
    json_t *node = chassis_node (top, err);
    if (!node || count_of (top, "chassis", &n, err) < 0 || count_of (node, "node", &per, err) < 0)
        return -1;
    return n * per;
}

json_t *dws_breakdown_rewrite (json_t *resources,
                               json_t *breakdowns,
                               int64_t min_gib,
                               bool *unchanged,
                               dws_error_t *err)
{
    int64_t nnodes, gib;
    json_t *top, *copy, *ssd;

    *unchanged = false;
    if (json_is_array (resources) && has_type (resources, "ssd")) {
        *unchanged = true;
        return json_incref (resources);
    }
    if ((nnodes = dws_jobspec_node_count (resources, err)) < 0
        || (gib = dws_breakdown_gib_per_node (breakdowns, nnodes, min_gib, err)) < 0)
        return NULL;
    if (gib == 0) {
        *unchanged = true;
        return json_incref (resources);
    }
    top = json_array_get (resources, 0);
    if (!(copy = json_deep_copy (top)))
        goto nomem;
    if (!strcmp (rtype (top), "chassis")) {
        json_t *node = chassis_node (copy, err);
        int64_t per = json_integer_value (json_object_get (node, "count"));
        ssd = json_pack ("{s:s s:I s:b}", "type", "ssd", "count", (json_int_t)(gib * per),
                         "exclusive", 1);
        if (!ssd || json_array_append_new (json_object_get (copy, "with"), ssd) < 0) {
            json_decref (copy);
            goto nomem;
        }
        json_t *out = json_pack ("[o]", copy);
        if (!out)
            goto nomem;
        return out;
    }
    /* node(N){...} -> slot(N, rabbit){node(1){...}, ssd(G)} */
    json_t *count = json_incref (json_object_get (copy, "count"));
    if (json_object_set_new (copy, "count", json_integer (1)) < 0) {
        json_decref (count);
        json_decref (copy);
        goto nomem;
    }
    json_t *out = json_pack ("[{s:s s:o s:s s:[o {s:s s:I s:b}]}]",
                             "type", "slot",
                             "count", count,
                             "label", "rabbit",
                             "with",
                             copy,
                             "type", "ssd",
                             "count", (json_int_t)gib,
                             "exclusive", 1);
    if (!out)
        goto nomem;
    return out;
nomem:
    dws_errorf (err, "out of memory");
    return NULL;
}

char *dws_breakdown_rewrite_json (const char *resources_json,
                                  const char *breakdowns_json,
                                  int64_t min_gib,
                                  dws_error_t *err)
{
    json_t *res = NULL, *bds = NULL, *out = NULL;
    bool unchanged;
    char *s = NULL;

    if (!(res = dws_json_load ("resources", resources_json, 0, err))
        || !(bds = dws_json_load ("breakdowns", breakdowns_json, 0, err)))
        ;
    else if ((out = dws_breakdown_rewrite (res, bds, min_gib, &unchanged, err))) {
        if (!(s = unchanged ? strdup ("null") : json_dumps (out, JSON_COMPACT)))
            dws_errorf (err, "out of memory");
    }
    json_decref (out);
    json_decref (res);
    json_decref (bds);
    return s;
}
