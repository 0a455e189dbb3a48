/* userlimits.c - validate and normalise [rabbit.limits] (userlimits.h).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "userlimits.h"

#define VALUE_MAX_LEN 80
#define PATH_MAX_LEN 400
/* a GiB figure whose size in bytes fits in int64_t */
#define MAX_GIB ((json_int_t)(INT64_MAX >> 30))

/* "<path>: <problem>, got <value>" (the style of rabbitconf.c) */
static json_t *bad (dws_error_t *err, const char *path, json_t *val, const char *problem)
{
    char *s = json_dumps (val, JSON_COMPACT | JSON_ENCODE_ANY);
    if (s && strlen (s) > VALUE_MAX_LEN)
        strcpy (s + VALUE_MAX_LEN - 3, "...");
    dws_errorf (err, "%s: %s, got %s", path, problem, s ? s : "?");
    free (s);
    return NULL;
}

static bool is_limit_key (const char *key)
{
    return !strcmp (key, DWS_USERLIMITS_GIB) || !strcmp (key, DWS_USERLIMITS_JOBS);
}

/* The two limits of a table (the top level or a user's) into out. */
static int copy_limits (const char *path, json_t *val, json_t *out, bool top,
                        dws_error_t *err)
{
    char kpath[PATH_MAX_LEN];
    const char *key;
    json_t *v;

    json_object_foreach (val, key, v) {
        if (snprintf (kpath, sizeof (kpath), "%s.%s", path, key) >= (int)sizeof (kpath))
            kpath[sizeof (kpath) - 1] = '\0';
        if (top && !strcmp (key, "users"))
            continue;
        if (!is_limit_key (key)) {
            dws_errorf (err, "%s: unknown key (%s has %s%s %s%s)", kpath, path,
                        DWS_USERLIMITS_GIB, top ? "," : " and", DWS_USERLIMITS_JOBS,
                        top ? " and users" : "");
            return -1;
        }
        if (json_is_null (v))
            continue;
        if (!json_is_integer (v) || json_integer_value (v) < 1) {
            bad (err, kpath, v, "must be an integer >= 1");
            return -1;
        }
        if (!strcmp (key, DWS_USERLIMITS_GIB) && json_integer_value (v) > MAX_GIB) {
            char most[64];
            snprintf (most, sizeof (most), "must be at most %lld GiB", (long long)MAX_GIB);
            bad (err, kpath, v, most);
            return -1;
        }
        if (json_object_set_new (out, key, json_integer (json_integer_value (v))) < 0) {
            dws_errorf (err, "out of memory");
            return -1;
        }
    }
    return 0;
}

static int copy_users (const char *path, json_t *users, json_t *out, dws_error_t *err)
{
    char upath[PATH_MAX_LEN];
    const char *name;
    json_t *v;

    if (!json_is_object (users)) {
        bad (err, path, users, "must be a table of user names or uids");
        return -1;
    }
    json_object_foreach (users, name, v) {
        json_t *one;
        if (!*name || strlen (name) > 64) {
            json_t *s = json_string (name);
            bad (err, path, s ? s : v, "a user must be a name or a uid of 1 to 64 characters");
            json_decref (s);
            return -1;
        }
        if (snprintf (upath, sizeof (upath), "%s.%s", path, name) >= (int)sizeof (upath))
            upath[sizeof (upath) - 1] = '\0'; /* cut: still names the table */
        if (!json_is_object (v)) {
            bad (err, upath, v, "must be a table holding max_user_gib or max_user_jobs");
            return -1;
        }
        if (!(one = json_object ()) || json_object_set_new (out, name, one) < 0) {
            dws_errorf (err, "out of memory");
            return -1;
        }
        if (copy_limits (upath, v, one, false, err) < 0)
            return -1;
    }
    return 0;
}

json_t *dws_userlimits_check_table (const char *path, json_t *val, dws_error_t *err)
{
    char upath[PATH_MAX_LEN];
    json_t *out, *users, *u;

    if (!json_is_object (val))
        return bad (err, path, val, "must be a table");
    if (!(out = json_object ()) || !(users = json_object ())
        || json_object_set_new (out, "users", users) < 0) {
        json_decref (out);
        dws_errorf (err, "out of memory");
        return NULL;
    }
    if (snprintf (upath, sizeof (upath), "%s.users", path) >= (int)sizeof (upath))
        upath[sizeof (upath) - 1] = '\0';
    if (copy_limits (path, val, out, true, err) < 0
        || ((u = json_object_get (val, "users")) && !json_is_null (u)
            && copy_users (upath, u, users, err) < 0)) {
        json_decref (out);
        return NULL;
    }
    return out;
}
