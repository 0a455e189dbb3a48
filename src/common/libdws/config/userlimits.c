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

/* The keys of each kind of table, and the sub-tables of the top level. */
static const char *const top_keys[] = {DWS_USERLIMITS_GIB, DWS_USERLIMITS_JOBS,
                                       DWS_USERLIMITS_BANK_GIB, DWS_USERLIMITS_BANK_JOBS,
                                       "users", "banks", NULL};
static const char *const user_keys[] = {DWS_USERLIMITS_GIB, DWS_USERLIMITS_JOBS, NULL};
static const char *const bank_keys[] = {DWS_USERLIMITS_BANK_GIB, DWS_USERLIMITS_BANK_JOBS,
                                        DWS_USERLIMITS_GIB, DWS_USERLIMITS_JOBS, NULL};

static bool listed (const char *const *keys, const char *key)
{
    for (; *keys; keys++)
        if (!strcmp (*keys, key))
            return true;
    return false;
}

/* "a, b and c" (conj "and") into buf */
static const char *spell (const char *const *keys, const char *conj, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; keys[i] && used < size; i++) {
        bool last = i > 0 && !keys[i + 1];
        int n = snprintf (buf + used, size - used, "%s%s%s%s", i == 0 ? "" : last ? " " : ", ",
                          last ? conj : "", last ? " " : "", keys[i]);
        used += n > 0 ? (size_t)n : 0;
    }
    return buf;
}

static bool is_gib_key (const char *key)
{
    return !strcmp (key, DWS_USERLIMITS_GIB) || !strcmp (key, DWS_USERLIMITS_BANK_GIB);
}

/* The limits of a table (the top level, a user's or a bank's; `keys` are
 * those it may hold, its sub-tables skipped) into out. */
static int copy_limits (const char *path, json_t *val, json_t *out, const char *const *keys,
                        dws_error_t *err)
{
    char kpath[PATH_MAX_LEN];
    char names[160];
    const char *key;
    json_t *v;

    json_object_foreach (val, key, v) {
        if (snprintf (kpath, sizeof (kpath), "%s.%s", path, key) >= (int)sizeof (kpath))
            kpath[sizeof (kpath) - 1] = '\0';
        if (!listed (keys, key)) {
            dws_errorf (err, "%s: unknown key (%s has %s)", kpath, path,
                        spell (keys, "and", names, sizeof (names)));
            return -1;
        }
        if (!strcmp (key, "users") || !strcmp (key, "banks"))
            continue;
        if (json_is_null (v))
            continue;
        if (!json_is_integer (v) || json_integer_value (v) < 1) {
            bad (err, kpath, v, "must be an integer >= 1");
            return -1;
        }
        if (is_gib_key (key) && json_integer_value (v) > MAX_GIB) {
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

/* The users' (what = "user") or the banks' (what = "bank") tables. */
static int copy_tables (const char *path, json_t *tables, json_t *out, const char *what,
                        dws_error_t *err)
{
    char upath[PATH_MAX_LEN];
    char names[160];
    bool user = !strcmp (what, "user");
    const char *const *keys = user ? user_keys : bank_keys;
    size_t most = user ? 64 : 255;
    const char *name;
    json_t *v;

    if (!json_is_object (tables)) {
        bad (err, path, tables,
             user ? "must be a table of user names or uids" : "must be a table of bank names");
        return -1;
    }
    json_object_foreach (tables, name, v) {
        json_t *one;
        if (!*name || strlen (name) > most) {
            char problem[80];
            json_t *s = json_string (name);
            snprintf (problem, sizeof (problem), "a %s must be a %s of 1 to %zu characters", what,
                      user ? "name or a uid" : "name", most);
            bad (err, path, s ? s : v, problem);
            json_decref (s);
            return -1;
        }
        if (snprintf (upath, sizeof (upath), "%s.%s", path, name) >= (int)sizeof (upath))
            upath[sizeof (upath) - 1] = '\0'; /* cut: still names the table */
        if (!json_is_object (v)) {
            char problem[200];
            snprintf (problem, sizeof (problem), "must be a table holding %s",
                      spell (keys, "or", names, sizeof (names)));
            bad (err, upath, v, problem);
            return -1;
        }
        if (!(one = json_object ()) || json_object_set_new (out, name, one) < 0) {
            dws_errorf (err, "out of memory");
            return -1;
        }
        if (copy_limits (upath, v, one, keys, err) < 0)
            return -1;
    }
    return 0;
}

/* The sub-table `key` of val ("users" or "banks") into out's, checked. */
static int copy_sub (const char *path, json_t *val, json_t *out, const char *key,
                     const char *what, dws_error_t *err)
{
    char spath[PATH_MAX_LEN];
    json_t *sub = json_object (), *in = json_object_get (val, key);
    if (!sub || json_object_set_new (out, key, sub) < 0) {
        dws_errorf (err, "out of memory");
        return -1;
    }
    if (!in || json_is_null (in))
        return 0;
    if (snprintf (spath, sizeof (spath), "%s.%s", path, key) >= (int)sizeof (spath))
        spath[sizeof (spath) - 1] = '\0';
    return copy_tables (spath, in, sub, what, err);
}

json_t *dws_userlimits_check_table (const char *path, json_t *val, dws_error_t *err)
{
    json_t *out;

    if (!json_is_object (val))
        return bad (err, path, val, "must be a table");
    if (!(out = json_object ())) {
        dws_errorf (err, "out of memory");
        return NULL;
    }
    if (copy_limits (path, val, out, top_keys, err) < 0
        || copy_sub (path, val, out, "users", "user", err) < 0
        || copy_sub (path, val, out, "banks", "bank", err) < 0) {
        json_decref (out);
        return NULL;
    }
    return out;
}
