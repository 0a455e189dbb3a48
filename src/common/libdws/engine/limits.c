/* limits.c - rabbit storage per user: the decisions (limits.h).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/userlimits.h"
#include "limits.h"
#include "parse/capacity.h"
#include "parse/directive.h"
#include "util/jsonio.h"

static void take (json_t *table, struct limits_rule *r)
{
    json_t *v;
    if ((v = json_object_get (table, DWS_USERLIMITS_GIB)) && json_is_integer (v))
        r->max_gib = json_integer_value (v);
    if ((v = json_object_get (table, DWS_USERLIMITS_JOBS)) && json_is_integer (v))
        r->max_jobs = json_integer_value (v);
}

struct limits_rule limits_rule (json_t *limits, int64_t uid, const char *name)
{
    struct limits_rule r = {0, 0};
    json_t *users = json_object_get (limits, "users");
    json_t *own = NULL;
    char key[32];

    if (!json_is_object (limits))
        return r;
    take (limits, &r);
    if (name)
        own = json_object_get (users, name);
    if (!own) {
        snprintf (key, sizeof (key), "%lld", (long long)uid);
        own = json_object_get (users, key);
    }
    take (own, &r);
    return r;
}

static const char *plural (int64_t n)
{
    return n == 1 ? "" : "s";
}

enum limits_verdict limits_check (const struct limits_rule *r, struct limits_use use,
                                  int64_t want, const char *user, char *why, size_t size)
{
    if (r->max_gib > 0 && want > r->max_gib) {
        snprintf (why, size, "Requested a total of %lld GiB of rabbit storage but "
                  DWS_USERLIMITS_GIB " is %lld GiB (user %s)", (long long)want,
                  (long long)r->max_gib, user);
        return LIMITS_NEVER;
    }
    if (r->max_jobs > 0 && use.jobs + 1 > r->max_jobs) {
        snprintf (why, size, DWS_USERLIMITS_JOBS " %lld: user %s holds %lld GiB in %lld job%s",
                  (long long)r->max_jobs, user, (long long)use.gib, (long long)use.jobs,
                  plural (use.jobs));
        return LIMITS_WAIT;
    }
    if (r->max_gib > 0 && use.gib + want > r->max_gib) {
        snprintf (why, size, DWS_USERLIMITS_GIB " %lld: user %s holds %lld GiB in %lld job%s",
                  (long long)r->max_gib, user, (long long)use.gib, (long long)use.jobs,
                  plural (use.jobs));
        return LIMITS_WAIT;
    }
    if (size > 0)
        why[0] = '\0';
    return LIMITS_GO;
}

enum limits_verdict limits_job_verdict (json_t *limits, int64_t uid, const char *name,
                                        struct limits_use use, bool listed, int64_t want,
                                        char *why, size_t size)
{
    char user[32];
    if (!limits) {
        if (size > 0)
            why[0] = '\0';
        return LIMITS_GO;
    }
    struct limits_rule r = limits_rule (limits, uid, name);
    if (!name) {
        snprintf (user, sizeof (user), "%lld", (long long)uid);
        name = user;
    }
    enum limits_verdict v = limits_check (&r, use, want, name, why, size);
    if (v == LIMITS_GO && !listed) {
        snprintf (why, size, "the persistent storage is not listed yet");
        return LIMITS_WAIT;
    }
    return v;
}

int limits_admit (const struct limits_rule *r, struct limits_use use, const int64_t *want,
                  int n)
{
    char why[8];
    int i;
    for (i = 0; i < n; i++) {
        if (limits_check (r, use, want[i], "", why, sizeof (why)) != LIMITS_GO)
            break;
        use.gib += want[i];
        use.jobs++;
    }
    return i;
}

static bool per_node (const char *type)
{
    return type && (!strcmp (type, "xfs") || !strcmp (type, "gfs2") || !strcmp (type, "raw"));
}

int limits_job_gib (json_t *directives, int64_t nnodes, int64_t *gib, dws_error_t *err)
{
    size_t i;
    json_t *d;
    int64_t total = 0;

    if (nnodes < 1)
        nnodes = 1;
    json_array_foreach (directives, i, d) {
        json_t *parsed = dws_dw_parse (json_string_value (d), err);
        int64_t bytes;
        if (!parsed)
            return -1;
        const char *cmd = json_string_value (json_object_get (parsed, "command"));
        const char *type = dws_dw_arg (parsed, "type");
        if (cmd && (!strcmp (cmd, "jobdw") || !strcmp (cmd, "create_persistent"))
            && (per_node (type) || (type && !strcmp (type, "lustre")))) {
            if (dws_capacity_parse (dws_dw_arg (parsed, "capacity"), &bytes, err) < 0) {
                json_decref (parsed);
                return -1;
            }
            int64_t g = dws_gib_ceil (bytes);
            /* create_persistent's storage is the same whatever the node count */
            total += per_node (type) && !strcmp (cmd, "jobdw") ? g * nnodes : g;
        }
        json_decref (parsed);
    }
    *gib = total;
    return 0;
}

static const char *const verdict_names[] = {"go", "wait", "never"};

char *dws_limits_decide_json (const char *query_json, dws_error_t *err)
{
    json_t *q = dws_json_load ("query", query_json, 0, err);
    json_t *want, *use, *v, *out;
    struct limits_use u = {0, 0};
    char why[256] = "";
    int64_t *w = NULL;
    size_t i, n;
    enum limits_verdict verdict = LIMITS_GO;

    if (!q)
        return NULL;
    want = json_object_get (q, "want");
    use = json_object_get (q, "use");
    if (!json_is_object (q) || !json_is_array (want) || !json_is_integer (json_object_get (q, "uid"))) {
        json_decref (q);
        dws_errorf (err, "query: needs uid (integer) and want (list of GiB)");
        return NULL;
    }
    u.gib = json_integer_value (json_object_get (use, "gib"));
    u.jobs = json_integer_value (json_object_get (use, "jobs"));
    const char *name = json_string_value (json_object_get (q, "name"));
    struct limits_rule r = limits_rule (json_object_get (q, "limits"),
                                        json_integer_value (json_object_get (q, "uid")), name);
    n = json_array_size (want);
    if (n > 0 && !(w = calloc (n, sizeof (*w)))) {
        json_decref (q);
        dws_errorf (err, "out of memory");
        return NULL;
    }
    json_array_foreach (want, i, v)
        w[i] = json_integer_value (v);
    if (n > 0)
        verdict = limits_check (&r, u, w[0], name ? name : "?", why, sizeof (why));
    out = json_pack ("{s:s s:s s:i}", "verdict", verdict_names[verdict], "why", why, "admit",
                     limits_admit (&r, u, w, (int)n));
    free (w);
    json_decref (q);
    return dws_json_dump_take (out, err);
}
