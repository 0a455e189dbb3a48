/* breakdown.c - jobspec rewrite for DirectiveBreakdowns (see breakdown.h).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <stdio.h>
#include <string.h>

#include "breakdown.h"
#include "capacity.h"
#include "labels.h"
#include "util/jsonio.h"

/* "breakdown 'NAME'" or "breakdown INDEX", for messages. */
struct bdname {
    char text[300];
};

static const char *bd_name (json_t *bd, size_t b, struct bdname *n)
{
    const char *name = json_string_value (json_object_get (json_object_get (bd, "metadata"),
                                                           "name"));
    if (name)
        snprintf (n->text, sizeof (n->text), "breakdown '%.256s'", name);
    else
        snprintf (n->text, sizeof (n->text), "breakdown %zu", b);
    return n->text;
}

/* The allocationSets of breakdown b, or NULL in *sets if it holds no
 * storage.  Returns -1 with a message if it is malformed.
 */
static int sets_of (json_t *bd, size_t b, json_t **sets, dws_error_t *err)
{
    struct bdname n;
    json_t *status, *storage, *ready;

    *sets = NULL;
    if (!json_is_object (bd))
        return dws_errorf (err, "%s is not an object", bd_name (bd, b, &n));
    status = json_object_get (bd, "status");
    if (!status) {
        if (json_object_get (bd, "metadata") || json_object_get (bd, "spec")
            || json_object_get (bd, "kind"))
            return dws_errorf (err, "%s has no status yet", bd_name (bd, b, &n));
        status = bd; /* given the status itself */
    }
    if (!json_is_object (status))
        return dws_errorf (err, "%s: status is not an object", bd_name (bd, b, &n));
    ready = json_object_get (status, "ready");
    if (ready && !json_is_boolean (ready))
        return dws_errorf (err, "%s: status.ready is not a boolean", bd_name (bd, b, &n));
    if (json_is_false (ready))
        return dws_errorf (err, "%s is not ready (status.ready is false)", bd_name (bd, b, &n));
    storage = json_object_get (status, "storage");
    if (!storage || json_is_null (storage))
        return 0;
    if (!json_is_object (storage))
        return dws_errorf (err, "%s: status.storage is not an object", bd_name (bd, b, &n));
    *sets = json_object_get (storage, "allocationSets");
    if (!json_is_array (*sets))
        return dws_errorf (err,
                           "%s: status.storage.allocationSets is not a list",
                           bd_name (bd, b, &n));
    return 0;
}

/* Check allocation set s of breakdown b; sets *cap and *lustre. */
static int check_set (json_t *bd, size_t b, json_t *set, size_t s, int64_t *cap, bool *lustre,
                      dws_error_t *err)
{
    struct bdname n;
    const char *label = NULL, *strategy = NULL;
    json_int_t c = 0;

    if (json_unpack (set, "{s:s s:s s:I}", "label", &label, "allocationStrategy", &strategy,
                     "minimumCapacity", &c)
            < 0
        || c < 1)
        return dws_errorf (err,
                           "%s: allocation set %zu needs a label, an allocationStrategy"
                           " and an integer minimumCapacity >= 1",
                           bd_name (bd, b, &n), s);
    if (dws_label_check (label, strategy, lustre, err) < 0)
        return dws_error_prefix (err, "%s: allocation set %zu: ", bd_name (bd, b, &n), s);
    *cap = c;
    return 0;
}

int dws_breakdown_has_storage (json_t *breakdowns, dws_error_t *err)
{
    int found = 0;
    size_t b, s;
    json_t *bd, *sets, *set;

    if (!json_is_array (breakdowns))
        return dws_errorf (err, "breakdowns must be a list");
    json_array_foreach (breakdowns, b, bd) {
        if (sets_of (bd, b, &sets, err) < 0)
            return -1;
        json_array_foreach (sets, s, set) {
            int64_t cap;
            bool lustre;
            if (check_set (bd, b, set, s, &cap, &lustre, err) < 0)
                return -1;
            found = 1;
        }
    }
    return found;
}

static int64_t ceil_div (int64_t a, int64_t b)
{
    return a / b + (a % b ? 1 : 0);
}

int64_t dws_breakdown_gib_per_node (json_t *breakdowns,
                                    int64_t nnodes,
                                    int64_t min_gib,
                                    dws_error_t *err)
{
    int64_t total = 0;
    size_t b, s;
    json_t *bd, *sets, *set;

    if (!json_is_array (breakdowns))
        return dws_errorf (err, "breakdowns must be a list");
    if (nnodes < 1)
        return dws_errorf (err, "the job must request at least one node");
    if (min_gib < 0)
        return dws_errorf (err, "the minimum allocation size must be >= 0 GiB");
    json_array_foreach (breakdowns, b, bd) {
        if (sets_of (bd, b, &sets, err) < 0)
            return -1;
        json_array_foreach (sets, s, set) {
            int64_t cap, gib;
            bool lustre = false;
            if (check_set (bd, b, set, s, &cap, &lustre, err) < 0)
                return -1;
            /* ceil(ceil(cap / n) / GiB) == ceil(cap / (n * GiB)) */
            gib = dws_gib_ceil (lustre ? ceil_div (cap, nnodes) : cap);
            if (gib < min_gib)
                gib = min_gib;
            if (gib > INT64_MAX - total)
                return dws_errorf (err, "the rabbit storage per node is too large");
            total += gib;
        }
    }
    return total;
}

static const char *rtype (json_t *r)
{
    return json_string_value (json_object_get (r, "type"));
}

static bool is_type (json_t *r, const char *type)
{
    const char *t = rtype (r);
    return t && !strcmp (t, type);
}

static bool has_type (json_t *list, const char *type, int depth)
{
    size_t i;
    json_t *r;
    if (depth > 2048)
        return false;
    json_array_foreach (list, i, r) {
        if (is_type (r, type) || has_type (json_object_get (r, "with"), type, depth + 1))
            return true;
    }
    return false;
}

static int count_of (json_t *r, const char *where, int64_t *n, dws_error_t *err)
{
    json_t *c = json_object_get (r, "count");
    if (json_is_object (c))
        return dws_errorf (err,
                           "%s: count ranges are not supported with rabbit storage;"
                           " give a fixed count",
                           where);
    if (!json_is_integer (c) || json_integer_value (c) < 1)
        return dws_errorf (err, "%s: count must be an integer >= 1", where);
    if (json_integer_value (c) > DWS_BREAKDOWN_MAX_COUNT)
        return dws_errorf (err, "%s: count %lld is too large (at most %lld)", where,
                           (long long)json_integer_value (c), (long long)DWS_BREAKDOWN_MAX_COUNT);
    *n = json_integer_value (c);
    return 0;
}

enum form { FORM_NODE, FORM_SLOT, FORM_CHASSIS };

struct shape {
    size_t top;    /* index of the entry to rewrite in resources */
    enum form form;
    size_t node;   /* slot/chassis: index of the node in its `with` */
    int64_t outer; /* count of the top entry */
    int64_t per;   /* compute nodes per top entry */
};

/* The single `node` child of a slot or chassis (others: storage_node). */
static int inner_node (json_t *top, const char *where, struct shape *sh, dws_error_t *err)
{
    json_t *with = json_object_get (top, "with");
    bool found = false;
    size_t i;
    json_t *r;

    if (!json_is_array (with))
        return dws_errorf (err, "%s: 'with' must list its node", where);
    json_array_foreach (with, i, r) {
        if (is_type (r, "node"))
            found = true;
    }
    if (!found)
        return dws_errorf (err,
                           "%s holds no node: rabbit storage needs a jobspec that requests"
                           " nodes (e.g. flux submit -N)",
                           where);
    found = false;
    json_array_foreach (with, i, r) {
        if (is_type (r, "node")) {
            if (found)
                return dws_errorf (err, "%s must contain a single node entry", where);
            found = true;
            sh->node = i;
        }
        else if (!is_type (r, "storage_node")) {
            const char *t = rtype (r);
            return dws_errorf (err,
                               "%s may contain only node and storage_node entries, not '%s'",
                               where, t ? t : "(no type)");
        }
    }
    char inner[160];
    snprintf (inner, sizeof (inner), "%s.with[%zu] (node)", where, sh->node);
    return count_of (json_array_get (with, sh->node), inner, &sh->per, err);
}

static int analyse (json_t *resources, struct shape *sh, dws_error_t *err)
{
    size_t i, n = 0;
    json_t *r;
    char where[96];

    if (!json_is_array (resources) || json_array_size (resources) == 0)
        return dws_errorf (err, "jobspec resources must be a non-empty list");
    json_array_foreach (resources, i, r) {
        const char *t = rtype (r);
        if (!json_is_object (r))
            return dws_errorf (err, "jobspec resources[%zu] is not an object", i);
        if (is_type (r, "storage_node"))
            continue;
        if (!t || (strcmp (t, "node") && strcmp (t, "slot") && strcmp (t, "chassis")))
            return dws_errorf (err,
                               "rabbit storage needs a jobspec that requests nodes (e.g. flux"
                               " submit -N); resources[%zu] is '%s'",
                               i, t ? t : "(no type)");
        sh->top = i;
        n++;
    }
    if (n != 1)
        return dws_errorf (err,
                           "jobspec resources must have a single top-level node, slot or"
                           " chassis entry to use rabbit storage (found %zu)",
                           n);
    r = json_array_get (resources, sh->top);
    snprintf (where, sizeof (where), "resources[%zu] (%s)", sh->top, rtype (r));
    if (count_of (r, where, &sh->outer, err) < 0)
        return -1;
    if (is_type (r, "node")) {
        sh->form = FORM_NODE;
        sh->per = 1;
        return 0;
    }
    sh->form = is_type (r, "slot") ? FORM_SLOT : FORM_CHASSIS;
    if (inner_node (r, where, sh, err) < 0)
        return -1;
    if (sh->outer * sh->per > DWS_BREAKDOWN_MAX_COUNT)
        return dws_errorf (err, "%s: %lld nodes are too many (at most %lld)", where,
                           (long long)(sh->outer * sh->per), (long long)DWS_BREAKDOWN_MAX_COUNT);
    return 0;
}

int64_t dws_jobspec_node_count (json_t *resources, dws_error_t *err)
{
    struct shape sh;
    if (analyse (resources, &sh, err) < 0)
        return -1;
    return sh.outer * sh.per;
}

static int ssd_asks (json_t *list, int64_t above, json_t *out)
{
    size_t i;
    json_t *entry;
    json_array_foreach (list, i, entry) {
        json_t *count = json_object_get (entry, "count");
        int64_t n = json_is_integer (count) && json_integer_value (count) > 0
                        ? json_integer_value (count)
                        : 1;
        const char *type = json_string_value (json_object_get (entry, "type"));
        if (type && !strcmp (type, "ssd")) {
            if (json_array_append_new (out, json_pack ("[I I]", (json_int_t)above,
                                                       (json_int_t)n)) < 0)
                return -1;
        }
        else if (n <= DWS_BREAKDOWN_MAX_COUNT && above <= DWS_BREAKDOWN_MAX_COUNT
                 && ssd_asks (json_object_get (entry, "with"), above * n, out) < 0)
            return -1;
    }
    return 0;
}

json_t *dws_jobspec_ssd_asks (json_t *resources)
{
    json_t *out = json_array ();
    if (out && ssd_asks (resources, 1, out) < 0) {
        json_decref (out);
        return NULL;
    }
    return out;
}

static json_t *ssd (int64_t gib)
{
    return json_pack ("{s:s s:I s:b}", "type", "ssd", "count", (json_int_t)gib, "exclusive", 1);
}

/* The rewritten top entry (new reference), or NULL on ENOMEM. */
static json_t *rewrite_top (json_t *top, const struct shape *sh, int64_t gib)
{
    json_t *copy = json_deep_copy (top);
    json_t *out = NULL;

    if (!copy)
        return NULL;
    if (sh->form == FORM_NODE) {
        /* node(N){..} -> slot(N, rabbit){node(1){..}, ssd(G)} */
        if (json_object_set_new (copy, "count", json_integer (1)) == 0)
            out = json_pack ("{s:s s:I s:s s:[O o]}", "type", "slot", "count",
                             (json_int_t)sh->outer, "label", "rabbit", "with", copy, ssd (gib));
    }
    else if (json_array_append_new (json_object_get (copy, "with"), ssd (gib * sh->per)) == 0)
        out = json_incref (copy);
    json_decref (copy);
    return out;
}

json_t *dws_breakdown_rewrite (json_t *resources,
                               json_t *breakdowns,
                               int64_t min_gib,
                               bool *unchanged,
                               dws_error_t *err)
{
    struct shape sh;
    int64_t gib;
    int any;
    json_t *out, *top;

    *unchanged = false;
    if (min_gib < 0) {
        dws_errorf (err, "the minimum allocation size must be >= 0 GiB");
        return NULL;
    }
    if (json_is_array (resources) && has_type (resources, "ssd", 0)) {
        *unchanged = true;
        return json_incref (resources);
    }
    if ((any = dws_breakdown_has_storage (breakdowns, err)) < 0)
        return NULL;
    if (!any) {
        *unchanged = true;
        return json_incref (resources);
    }
    if (analyse (resources, &sh, err) < 0
        || (gib = dws_breakdown_gib_per_node (breakdowns, sh.outer * sh.per, min_gib, err)) < 0)
        return NULL;
    if (gib > INT64_MAX / sh.per) {
        dws_errorf (err, "the rabbit storage per %s is too large",
                    sh.form == FORM_CHASSIS ? "chassis" : "slot");
        return NULL;
    }
    if (!(out = json_copy (resources)) || !(top = rewrite_top (json_array_get (resources, sh.top),
                                                               &sh, gib))
        || json_array_set_new (out, sh.top, top) < 0) {
        json_decref (out);
        dws_errorf (err, "out of memory");
        return NULL;
    }
    return out;
}

char *dws_breakdown_rewrite_json (const char *resources_json,
                                  const char *breakdowns_json,
                                  int64_t min_gib,
                                  dws_error_t *err)
{
    json_t *res, *bds = NULL, *out = NULL;
    bool unchanged;
    char *s = NULL;

    if ((res = dws_json_load ("resources", resources_json, 0, err))
        && (bds = dws_json_load ("breakdowns", breakdowns_json, 0, err))
        && (out = dws_breakdown_rewrite (res, bds, min_gib, &unchanged, err))) {
        if (!(s = unchanged ? strdup ("null") : json_dumps (out, JSON_COMPACT)))
            dws_errorf (err, "out of memory");
    }
    json_decref (out);
    json_decref (res);
    json_decref (bds);
    return s;
}

int64_t dws_jobspec_node_count_json (const char *resources_json, dws_error_t *err)
{
    json_t *res = dws_json_load ("resources", resources_json, 0, err);
    if (!res)
        return -1;
    int64_t n = dws_jobspec_node_count (res, err);
    json_decref (res);
    return n;
}
