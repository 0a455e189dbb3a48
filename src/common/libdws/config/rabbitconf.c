/* rabbitconf.c - validate and normalise [rabbit] (see rabbitconf.h).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse/directive.h"
#include "parse/policy.h"
#include "placement/lustre.h"
#include "rabbitconf.h"
#include "userlimits.h"
#include "util/idset.h"
#include "util/jsonio.h"

#define PATH_MAX_LEN 160 /* "rabbit.presets.<name>[i]" with the name cut */
#define VALUE_MAX_LEN 80 /* bytes of a value shown after "got " */
#define KEY_MAX_LEN 64   /* bytes of a key shown in a path */

/* A min_allocation_size whose size in bytes fits in int64_t. */
#define MAX_GIB ((json_int_t)(INT64_MAX >> 30))

#define ALIAS "restrict_persistent"
#define RESTRICT DWS_RABBITCONF_RESTRICT
#define LIMITS DWS_RABBITCONF_LIMITS

/* What each check says of a value it refuses; the engine's short messages
 * (dws_rabbitconf_seconds, ...) say the same without the value. */
#define SECONDS_PROBLEM "must be a number of seconds >= 0"
#define BOOL_PROBLEM "must be true or false"

static json_t *check_path (const char *path, json_t *val, dws_error_t *err);
static json_t *check_seconds (const char *path, json_t *val, dws_error_t *err);
static json_t *check_duration (const char *path, json_t *val, dws_error_t *err);
static json_t *check_bool (const char *path, json_t *val, dws_error_t *err);
static json_t *check_count (const char *path, json_t *val, json_int_t least, dws_error_t *err);
static json_t *check_gib (const char *path, json_t *val, json_int_t least, dws_error_t *err);
static json_t *check_apiver (const char *path, json_t *val, dws_error_t *err);
static json_t *check_queues (const char *path, json_t *val, dws_error_t *err);
static json_t *check_policy (const char *path, json_t *val, dws_error_t *err);
static json_t *check_lustre (const char *path, json_t *val, dws_error_t *err);
static json_t *check_presets (const char *path, json_t *val, dws_error_t *err);
static json_t *check_release (const char *path, json_t *val, dws_error_t *err);
static json_t *check_prestage (const char *path, json_t *val, dws_error_t *err);

/* Every key (rabbitconf.h's table): the [rabbit] keys, alphabetical (the
 * order of the output and of messages), then the service's. */
static const struct keyspec {
    const char *name;
    enum dws_rabbitconf_kind kind;
    const char *dflt; /* JSON text of the default, or NULL: check (NULL) */
    json_int_t least;
} keys[] = {
#define KEYSPEC(id, name, kind, dflt, least) {name, DWS_RABBITCONF_##kind, dflt, least},
    DWS_RABBITCONF_KEYS (KEYSPEC) DWS_RABBITCONF_SERVICE_KEYS (KEYSPEC)
#undef KEYSPEC
};
#define NKEYS ((size_t)DWS_RABBIT_NKEYS)
#define NALLKEYS (sizeof (keys) / sizeof (keys[0]))

/* A value of key k checked and normalised (a new reference), or NULL. */
static json_t *check (const struct keyspec *k, const char *path, json_t *val, dws_error_t *err)
{
    switch (k->kind) {
    case DWS_RABBITCONF_BOOL:
        return check_bool (path, val, err);
    case DWS_RABBITCONF_SECONDS:
        return check_seconds (path, val, err);
    case DWS_RABBITCONF_DURATION:
        return check_duration (path, val, err);
    case DWS_RABBITCONF_COUNT:
        return check_count (path, val, k->least, err);
    case DWS_RABBITCONF_GIB:
        return check_gib (path, val, k->least, err);
    case DWS_RABBITCONF_PATH:
        return check_path (path, val, err);
    case DWS_RABBITCONF_APIVER:
        return check_apiver (path, val, err);
    case DWS_RABBITCONF_QUEUES:
        return check_queues (path, val, err);
    case DWS_RABBITCONF_LUSTRE:
        return check_lustre (path, val, err);
    case DWS_RABBITCONF_POLICY:
        return check_policy (path, val, err);
    case DWS_RABBITCONF_PRESETS:
        return check_presets (path, val, err);
    case DWS_RABBITCONF_PRESTAGE:
        return check_prestage (path, val, err);
    case DWS_RABBITCONF_RELEASE:
        return check_release (path, val, err);
    }
    dws_errorf (err, "%s: a key of no kind", path);
    return NULL;
}

/* Compact JSON of v for a message, cut to VALUE_MAX_LEN bytes (at a UTF-8
 * character boundary) with "..." appended.
 */
static void render (json_t *v, char *buf, size_t size)
{
    char *s = json_dumps (v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION (15));
    size_t len;

    if (!s) {
        snprintf (buf, size, "?");
        return;
    }
    len = strlen (s);
    if (len > VALUE_MAX_LEN) {
        len = VALUE_MAX_LEN - 3;
        while (len > 0 && ((unsigned char)s[len] & 0xc0) == 0x80)
            len--;
        snprintf (buf, size, "%.*s...", (int)len, s);
    }
    else
        snprintf (buf, size, "%s", s);
    free (s);
}

static bool is_bare_key (const char *k)
{
    if (!*k)
        return false;
    for (; *k; k++) {
        char c = *k;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
              || c == '_' || c == '-'))
            return false;
    }
    return true;
}

/* parent + "." + key as a TOML dotted key: bare when it can be, else a
 * quoted (JSON) string; a long key is cut.
 */
static void keypath (char *buf, size_t size, const char *parent, const char *key)
{
    if (is_bare_key (key) && strlen (key) <= KEY_MAX_LEN) {
        snprintf (buf, size, "%s.%s", parent, key);
        return;
    }
    json_t *s = json_string (key);
    char *q = s ? json_dumps (s, JSON_ENCODE_ANY) : NULL;
    json_decref (s);
    if (!q) {
        snprintf (buf, size, "%s.?", parent);
        return;
    }
    size_t len = strlen (q);
    if (len > KEY_MAX_LEN) {
        len = KEY_MAX_LEN - 4;
        while (len > 0 && ((unsigned char)q[len] & 0xc0) == 0x80)
            len--;
        snprintf (buf, size, "%s.%.*s...\"", parent, (int)len, q);
    }
    else
        snprintf (buf, size, "%s.%s", parent, q);
    free (q);
}

/* "<path>: <problem>, got <value>"; returns NULL. */
__attribute__ ((format (printf, 4, 5)))
static json_t *bad (dws_error_t *err, const char *path, json_t *val, const char *fmt, ...)
{
    char problem[512];
    char got[VALUE_MAX_LEN + 4];
    va_list ap;

    va_start (ap, fmt);
    vsnprintf (problem, sizeof (problem), fmt, ap);
    va_end (ap);
    render (val, got, sizeof (got));
    dws_errorf (err, "%s: %s, got %s", path, problem, got);
    return NULL;
}

static json_t *nomem (dws_error_t *err)
{
    dws_errorf (err, "out of memory");
    return NULL;
}

/* v, or NULL with "out of memory" when the allocation that made v failed. */
static json_t *keep (json_t *v, dws_error_t *err)
{
    return v ? v : nomem (err);
}

static json_t *check_path (const char *path, json_t *val, dws_error_t *err)
{
    if (!json_is_string (val) || json_string_length (val) == 0)
        return bad (err, path, val, "must be a file name (non-empty string)");
    return keep (json_deep_copy (val), err);
}

/* A finite number >= 0 (integer or real, never a boolean or a string). */
static bool seconds_ok (json_t *val)
{
    double d;
    if (!json_is_number (val))
        return false;
    d = json_number_value (val);
    return isfinite (d) && d >= 0;
}

static json_t *check_seconds (const char *path, json_t *val, dws_error_t *err)
{
    if (!seconds_ok (val))
        return bad (err, path, val, SECONDS_PROBLEM);
    return keep (json_real (json_number_value (val) + 0.0), err);
}

static bool is_digit (char c)
{
    return c >= '0' && c <= '9';
}

/* Flux Standard Duration: a decimal number (no sign, no hex, no inf/nan,
 * no white space) and an optional suffix ms, s, m, h or d.  -1 if s is not
 * one, or its value is not finite.
 */
static int parse_fsd (const char *s, double *out)
{
    const char *p = s, *num_end;
    char *end;
    size_t ndigits = 0;
    double mult, d;

    while (is_digit (*p))
        p++, ndigits++;
    if (*p == '.') {
        p++;
        while (is_digit (*p))
            p++, ndigits++;
    }
    if (ndigits == 0)
        return -1;
    if (*p == 'e' || *p == 'E') {
        const char *q = p + 1;
        if (*q == '+' || *q == '-')
            q++;
        if (!is_digit (*q))
            return -1;
        while (is_digit (*q))
            q++;
        p = q;
    }
    num_end = p;
    if (!strcmp (p, ""))
        mult = 1;
    else if (!strcmp (p, "ms"))
        mult = 0.001;
    else if (!strcmp (p, "s"))
        mult = 1;
    else if (!strcmp (p, "m"))
        mult = 60;
    else if (!strcmp (p, "h"))
        mult = 3600;
    else if (!strcmp (p, "d"))
        mult = 86400;
    else
        return -1;
    /* the grammar above is a subset of strtod's; insist it read all of it
     * (a locale with another decimal point would not) */
    d = strtod (s, &end);
    if (end != num_end)
        return -1;
    d *= mult;
    if (!isfinite (d))
        return -1;
    *out = d + 0.0;
    return 0;
}

static json_t *check_duration (const char *path, json_t *val, dws_error_t *err)
{
    double d;

    if (json_is_string (val)) {
        const char *s = json_string_value (val);
        if (parse_fsd (s, &d) == 0)
            return keep (json_real (d), err);
        if (!strcmp (s, "inf") || !strcmp (s, "infinity") || !strcmp (s, "INF")
            || !strcmp (s, "INFINITY"))
            return bad (err, path, val, "must be finite (0 means no timeout)");
    }
    else if (seconds_ok (val))
        return keep (json_real (json_number_value (val) + 0.0), err);
    return bad (err,
                path,
                val,
                "must be a number of seconds >= 0 or a Flux Standard Duration"
                " (a number with an optional suffix ms, s, m, h or d, e.g. \"30m\")");
}

static json_t *check_bool (const char *path, json_t *val, dws_error_t *err)
{
    if (!json_is_boolean (val))
        return bad (err, path, val, BOOL_PROBLEM);
    return keep (json_deep_copy (val), err);
}

static json_t *check_count (const char *path, json_t *val, json_int_t least, dws_error_t *err)
{
    if (!json_is_integer (val) || json_integer_value (val) < least)
        return bad (err, path, val, "must be an integer >= %lld", (long long)least);
    return keep (json_integer (json_integer_value (val)), err);
}

static json_t *check_gib (const char *path, json_t *val, json_int_t least, dws_error_t *err)
{
    if (!json_is_integer (val) || json_integer_value (val) < least)
        return bad (err, path, val, "must be an integer number of GiB >= %lld", (long long)least);
    if (json_integer_value (val) > MAX_GIB)
        return bad (err,
                    path,
                    val,
                    "must be at most %lld GiB (the size in bytes must fit in 64 bits)",
                    (long long)MAX_GIB);
    return keep (json_integer (json_integer_value (val)), err);
}

/* "v<N>" optionally followed by "alpha<N>" or "beta<N>". */
static bool apiver_ok (const char *s)
{
    if (*s++ != 'v' || !is_digit (*s))
        return false;
    while (is_digit (*s))
        s++;
    if (!strncmp (s, "alpha", 5))
        s += 5;
    else if (!strncmp (s, "beta", 4))
        s += 4;
    else
        return *s == '\0';
    if (!is_digit (*s))
        return false;
    while (is_digit (*s))
        s++;
    return *s == '\0';
}

static json_t *check_apiver (const char *path, json_t *val, dws_error_t *err)
{
    if (!json_is_string (val) || !apiver_ok (json_string_value (val)))
        return bad (err,
                    path,
                    val,
                    "must be a Kubernetes API version such as \"v1alpha7\" (or be left out"
                    " to discover it)");
    return keep (json_deep_copy (val), err);
}

static json_t *check_queues (const char *path, json_t *val, dws_error_t *err)
{
    char epath[PATH_MAX_LEN + 32];
    size_t i;
    json_t *e;

    if (!json_is_array (val) || json_array_size (val) == 0)
        return bad (err,
                    path,
                    val,
                    "must be a non-empty list of queue names (leave it out to drain"
                    " nodes of every queue)");
    json_array_foreach (val, i, e) {
        if (!json_is_string (e) || json_string_length (e) == 0) {
            snprintf (epath, sizeof (epath), "%s[%zu]", path, i);
            return bad (err, epath, e, "must be a queue name (non-empty string)");
        }
    }
    return keep (json_deep_copy (val), err);
}

/* When a rabbit job's computes go back: its two values. */
#define RELEASE_VALUES "\"" DWS_RELEASE_AFTER_UNMOUNT "\" or \"" DWS_RELEASE_AFTER_TEARDOWN "\""

/* 1 after-unmount, 0 after-teardown, -1 neither. */
static int release_value (json_t *val)
{
    const char *s = json_string_value (val);
    if (s && !strcmp (s, DWS_RELEASE_AFTER_UNMOUNT))
        return 1;
    if (s && !strcmp (s, DWS_RELEASE_AFTER_TEARDOWN))
        return 0;
    return -1;
}

static json_t *check_release (const char *path, json_t *val, dws_error_t *err)
{
    if (release_value (val) < 0)
        return bad (err, path, val, "must be " RELEASE_VALUES);
    return keep (json_deep_copy (val), err);
}

int dws_rabbitconf_release_computes (json_t *value, dws_error_t *err)
{
    char got[VALUE_MAX_LEN + 4];
    int rc = release_value (value);
    if (rc < 0) {
        if (value)
            render (value, got, sizeof (got));
        else
            snprintf (got, sizeof (got), "nothing");
        dws_errorf (err, DWS_RELEASE_ATTR " must be " RELEASE_VALUES ", got %s", got);
    }
    return rc;
}

int dws_rabbitconf_prestage_mode (json_t *val)
{
    const char *s = json_string_value (val);
    if (s && !strcmp (s, DWS_PRESTAGE_NEVER))
        return 0;
    if (s && !strcmp (s, DWS_PRESTAGE_COPY_IN))
        return 1;
    if (s && !strcmp (s, DWS_PRESTAGE_ALWAYS))
        return 2;
    return -1;
}

static json_t *check_prestage (const char *path, json_t *val, dws_error_t *err)
{
    if (dws_rabbitconf_prestage_mode (val) < 0)
        return bad (err, path, val, "must be " DWS_PRESTAGE_VALUES);
    return keep (json_deep_copy (val), err);
}

int dws_rabbitconf_prestage_attr (json_t *value, dws_error_t *err)
{
    char got[VALUE_MAX_LEN + 4];
    const char *s = json_string_value (value);
    if (json_is_true (value) || (s && !strcmp (s, "yes")))
        return 1;
    if (json_is_false (value) || (s && !strcmp (s, "no")))
        return 0;
    if (value)
        render (value, got, sizeof (got));
    else
        snprintf (got, sizeof (got), "nothing");
    dws_errorf (err, DWS_PRESTAGE_ATTR " must be \"yes\" or \"no\", got %s", got);
    return -1;
}

static json_t *check_lustre (const char *path, json_t *val, dws_error_t *err)
{
    return dws_lustre_check_table (path, val, err);
}

static json_t *check_policy (const char *path, json_t *val, dws_error_t *err)
{
    char kpath[PATH_MAX_LEN];
    const char *key;
    json_t *v, *max, *out, *copy;

    if (!json_is_object (val))
        return bad (err, path, val, "must be a table holding maximums");
    json_object_foreach (val, key, v) {
        if (strcmp (key, "maximums") != 0) {
            keypath (kpath, sizeof (kpath), path, key);
            dws_errorf (err, "%s: unknown key (%s has only maximums)", kpath, path);
            return NULL;
        }
    }
    max = json_object_get (val, "maximums");
    if (max && json_is_null (max))
        max = NULL;
    if (dws_policy_check_table (max, err) < 0)
        return NULL;
    if (!(out = json_object ()))
        return nomem (err);
    copy = max ? json_deep_copy (max) : json_object ();
    if (json_object_set_new (out, "maximums", copy) < 0) { /* steals copy */
        json_decref (out);
        return nomem (err);
    }
    return out;
}

/* One preset value: a string or non-empty list of strings holding at least
 * one #DW directive, each of which tokenises.
 */
static int check_preset (const char *path, json_t *val, dws_error_t *err)
{
    char epath[PATH_MAX_LEN + 32];
    json_t *split, *d;
    size_t i;

    if (json_is_array (val)) {
        if (json_array_size (val) == 0) {
            bad (err, path, val, "must hold at least one #DW directive");
            return -1;
        }
        json_array_foreach (val, i, d) {
            if (!json_is_string (d)) {
                snprintf (epath, sizeof (epath), "%s[%zu]", path, i);
                bad (err, epath, d, "must be a string of #DW directives");
                return -1;
            }
        }
    }
    else if (!json_is_string (val)) {
        bad (err, path, val, "must be a string of #DW directives or a list of them");
        return -1;
    }
    if (!(split = dws_dw_split (val, NULL, err)))
        return dws_error_prefix (err, "%s: ", path);
    if (json_array_size (split) == 0) {
        json_decref (split);
        bad (err, path, val, "must hold at least one #DW directive");
        return -1;
    }
    json_array_foreach (split, i, d) {
        json_t *parsed = dws_dw_parse (json_string_value (d), err);
        if (!parsed) {
            json_decref (split);
            return dws_error_prefix (err, "%s: ", path);
        }
        json_decref (parsed);
    }
    json_decref (split);
    return 0;
}

static json_t *check_presets (const char *path, json_t *val, dws_error_t *err)
{
    char kpath[PATH_MAX_LEN];
    const char *name;
    json_t *v;

    if (!json_is_object (val))
        return bad (err, path, val, "must be a table of name = #DW directive(s)");
    json_object_foreach (val, name, v) {
        keypath (kpath, sizeof (kpath), path, name);
        if (!dws_dw_is_preset_name (name)) {
            dws_errorf (err,
                        "%s: a preset name must be non-empty without leading or trailing"
                        " white space (no dw attribute could name it)",
                        kpath);
            return NULL;
        }
        if (check_preset (kpath, v, err) < 0)
            return NULL;
    }
    return keep (json_deep_copy (val), err);
}

/* ---- unknown keys ---- */

static size_t levenshtein (const char *a, const char *b)
{
    size_t la = strlen (a), lb = strlen (b);
    size_t row[KEY_MAX_LEN + 1];

    if (lb > KEY_MAX_LEN || la > KEY_MAX_LEN)
        return SIZE_MAX;
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

/* The key a near-miss spelling most likely meant, or NULL. */
static const char *suggest (const char *key)
{
    char norm[KEY_MAX_LEN + 1];
    size_t len = strlen (key), best_d = SIZE_MAX, limit;
    const char *best = NULL;

    if (len > KEY_MAX_LEN)
        return NULL;
    for (size_t i = 0; i <= len; i++) {
        char c = key[i];
        norm[i] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a')
                  : (c == '-' || c == ' ') ? '_'
                                           : c;
    }
    if (!strcmp (norm, "maximums"))
        return "policy.maximums";
    for (size_t k = 0; k <= NKEYS; k++) {
        const char *cand = k < NKEYS ? keys[k].name : ALIAS;
        size_t d = levenshtein (norm, cand);
        if (d < best_d) {
            best_d = d;
            best = k < NKEYS ? cand : RESTRICT;
        }
    }
    limit = len <= 4 ? 1 : len < 10 ? 2 : len / 5;
    if (best_d <= limit)
        return best;
    /* a truncated key ("min_allocation") or one with a tail ("tc_timeout_s") */
    best = NULL;
    for (size_t k = 0; k < NKEYS && len >= 5; k++) {
        size_t n = strlen (keys[k].name);
        if ((!strncmp (keys[k].name, norm, len) && keys[k].name[len] == '_')
            || (!strncmp (norm, keys[k].name, n) && norm[n] == '_')) {
            if (best)
                return NULL; /* ambiguous */
            best = keys[k].name;
        }
    }
    return best;
}

static json_t *unknown_key (const char *key, dws_error_t *err)
{
    char path[PATH_MAX_LEN];
    const char *s = suggest (key);

    keypath (path, sizeof (path), "rabbit", key);
    if (s)
        dws_errorf (err, "%s: unknown key (did you mean %s?)", path, s);
    else {
        char list[1024] = "";
        size_t n = 0;
        for (size_t k = 0; k < NKEYS && n < sizeof (list); k++)
            n += (size_t)snprintf (list + n, sizeof (list) - n, "%s%s", k ? ", " : "",
                                   keys[k].name);
        dws_errorf (err, "%s: unknown key (valid keys: %s)", path, list);
    }
    return NULL;
}

static bool known (const char *key)
{
    if (!strcmp (key, ALIAS) || !strcmp (key, LIMITS))
        return true;
    for (size_t k = 0; k < NKEYS; k++)
        if (!strcmp (key, keys[k].name))
            return true;
    return false;
}

static json_t *get (json_t *rabbit, const char *key)
{
    json_t *v = rabbit ? json_object_get (rabbit, key) : NULL;
    return v && !json_is_null (v) ? v : NULL;
}

/* restrict_persistent_creation, or its alias restrict_persistent. */
static json_t *check_restrict (json_t *rabbit, dws_error_t *err)
{
    json_t *c = get (rabbit, RESTRICT);
    json_t *a = get (rabbit, ALIAS);

    if (c && !json_is_boolean (c))
        return check_bool ("rabbit." RESTRICT, c, err);
    if (a && !json_is_boolean (a))
        return check_bool ("rabbit." ALIAS, a, err);
    if (c && a && json_is_true (c) != json_is_true (a))
        return bad (err,
                    "rabbit." ALIAS,
                    a,
                    "conflicts with rabbit." RESTRICT " = %s (it is flux-coral2's name for the"
                    " same setting: keep only " RESTRICT ")",
                    json_is_true (c) ? "true" : "false");
    if (!c && !a)
        return json_true ();
    return json_boolean (json_is_true (c ? c : a));
}

/* Key k's default (a new reference), or NULL with err set. */
static json_t *dflt (const struct keyspec *k, const char *path, dws_error_t *err)
{
    if (!k->dflt)
        return check (k, path, NULL, err);
    return keep (json_loads (k->dflt, JSON_DECODE_ANY, NULL), err);
}

const char *dws_rabbitconf_key (enum dws_rabbitconf_key id)
{
    return (size_t)id < NALLKEYS ? keys[id].name : NULL;
}

json_t *dws_rabbitconf_value (json_t *cfg, enum dws_rabbitconf_key id)
{
    dws_error_t err;
    json_t *v;

    if ((size_t)id >= NALLKEYS)
        return NULL;
    if ((v = get (cfg, keys[id].name)))
        return json_incref (v);
    return keys[id].dflt ? dflt (&keys[id], keys[id].name, &err) : NULL;
}

/* The engine's read of key id, which must be of kind a or b: cfg's value
 * (checked, with the engine's short message) or the key's default; a new
 * reference, or NULL with err set. */
static json_t *engine_value (json_t *cfg, enum dws_rabbitconf_key id, enum dws_rabbitconf_kind a,
                             enum dws_rabbitconf_kind b, dws_error_t *err)
{
    const struct keyspec *k = (size_t)id < NALLKEYS ? &keys[id] : NULL;
    json_t *v;

    if (!k || (k->kind != a && k->kind != b)) {
        dws_errorf (err, "rabbit key %d is not of the kind asked", (int)id);
        return NULL;
    }
    if (!(v = json_is_object (cfg) ? get (cfg, k->name) : NULL))
        return keep (json_loads (k->dflt, JSON_DECODE_ANY, NULL), err);
    if (k->kind == DWS_RABBITCONF_SECONDS && !seconds_ok (v))
        dws_errorf (err, "rabbit.%s: " SECONDS_PROBLEM, k->name);
    else if (k->kind == DWS_RABBITCONF_BOOL && !json_is_boolean (v))
        dws_errorf (err, "rabbit.%s: " BOOL_PROBLEM, k->name);
    else if ((k->kind == DWS_RABBITCONF_COUNT || k->kind == DWS_RABBITCONF_GIB)
             && (!json_is_integer (v) || json_integer_value (v) < k->least))
        dws_errorf (err, "rabbit.%s: must be an integer >= %lld", k->name, (long long)k->least);
    else
        return json_incref (v);
    return NULL;
}

int dws_rabbitconf_seconds (json_t *cfg, enum dws_rabbitconf_key id, double *out,
                            dws_error_t *err)
{
    json_t *v = engine_value (cfg, id, DWS_RABBITCONF_SECONDS, DWS_RABBITCONF_SECONDS, err);
    if (!v)
        return -1;
    *out = json_number_value (v);
    json_decref (v);
    return 0;
}

int dws_rabbitconf_bool (json_t *cfg, enum dws_rabbitconf_key id, bool *out, dws_error_t *err)
{
    json_t *v = engine_value (cfg, id, DWS_RABBITCONF_BOOL, DWS_RABBITCONF_BOOL, err);
    if (!v)
        return -1;
    *out = json_is_true (v);
    json_decref (v);
    return 0;
}

int dws_rabbitconf_int (json_t *cfg, enum dws_rabbitconf_key id, int64_t *out,
                        dws_error_t *err)
{
    json_t *v = engine_value (cfg, id, DWS_RABBITCONF_COUNT, DWS_RABBITCONF_GIB, err);
    if (!v)
        return -1;
    *out = json_integer_value (v);
    json_decref (v);
    return 0;
}

int dws_rabbitconf_key_count (void)
{
    return (int)NKEYS;
}

const char *dws_rabbitconf_key_name (int i)
{
    return i >= 0 && (size_t)i < NKEYS ? keys[i].name : NULL;
}

json_t *dws_rabbitconf_parse (json_t *rabbit, dws_error_t *err)
{
    const char *key;
    json_t *val, *out;

    if (rabbit && json_is_null (rabbit))
        rabbit = NULL;
    if (rabbit && !json_is_object (rabbit))
        return bad (err, "rabbit", rabbit, "must be a table");
    if (rabbit) {
        json_object_foreach (rabbit, key, val) {
            if (!known (key))
                return unknown_key (key, err);
        }
    }
    if (!(out = json_object ()))
        return nomem (err);
    for (size_t k = 0; k < NKEYS; k++) {
        char path[PATH_MAX_LEN];
        json_t *nv;

        snprintf (path, sizeof (path), "rabbit.%s", keys[k].name);
        if (k == DWS_RABBIT_RESTRICT_PERSISTENT_CREATION)
            nv = check_restrict (rabbit, err);
        else if ((val = get (rabbit, keys[k].name)))
            nv = check (&keys[k], path, val, err);
        else
            nv = dflt (&keys[k], path, err);
        if (!nv || json_object_set_new (out, keys[k].name, nv) < 0) {
            if (nv)
                nomem (err);
            json_decref (out);
            return NULL;
        }
    }
    if ((val = get (rabbit, LIMITS))) {
        json_t *nv = dws_userlimits_check_table ("rabbit." LIMITS, val, err);
        if (!nv || json_object_set_new (out, LIMITS, nv) < 0) {
            if (nv)
                nomem (err);
            json_decref (out);
            return NULL;
        }
    }
    return out;
}

char *dws_rabbitconf_parse_json (const char *rabbit_json, dws_error_t *err)
{
    json_t *in = NULL;
    char *s;

    if (rabbit_json && !(in = dws_json_load ("rabbit", rabbit_json, JSON_REJECT_DUPLICATES, err)))
        return NULL;
    s = dws_json_dump_take (dws_rabbitconf_parse (in, err), err);
    json_decref (in);
    return s;
}

/* ---- drain_queues against the nodes' properties ---- */

/* Append a JSON-quoted name to buf (", "-separated, cut at size). */
static void append_quoted (char *buf, size_t size, size_t *len, const char *name)
{
    json_t *s = json_string (name);
    char *quoted = s ? json_dumps (s, JSON_ENCODE_ANY) : NULL;
    if (*len < size)
        *len += (size_t)snprintf (buf + *len, size - *len, "%s%s", *len ? ", " : "",
                                  quoted ? quoted : "?");
    free (quoted);
    json_decref (s);
}

/* Whether the idset text names at least one node; -1 if it is not an idset. */
static int idset_nonempty (const char *s)
{
    struct dws_idset *set = s ? dws_idset_decode (s, NULL) : NULL;
    if (!set)
        return -1;
    int n = dws_idset_count (set) > 0;
    dws_idset_destroy (set);
    return n;
}

static int cmp_names (const void *a, const void *b)
{
    return strcmp (*(const char *const *)a, *(const char *const *)b);
}

static int drain_properties (json_t *drain_queues, json_t *properties, const char *where,
                             json_t *missing_out, dws_error_t *err)
{
    char missing[512] = "", known[512] = "";
    size_t nm = 0, nk = 0, nfound = 0, i;
    const char *name;
    json_t *q, *ids;

    if (!json_is_array (drain_queues))
        return dws_errorf (err, "%s: must be a list of queue names", where);
    if (properties && !json_is_object (properties))
        return dws_errorf (err, "the nodes' properties (R execution.properties) must be an"
                                " object");
    /* the properties some node has, named in sorted order */
    size_t nprops = json_object_size (properties), nnames = 0;
    const char **names = calloc (nprops ? nprops : 1, sizeof (*names));
    if (!names)
        return dws_errorf (err, "out of memory");
    json_object_foreach (properties, name, ids) {
        int n = idset_nonempty (json_string_value (ids));
        if (n < 0) {
            free (names);
            return dws_errorf (err, "R execution.properties.%s: must be an idset string",
                               name);
        }
        if (n > 0)
            names[nnames++] = name;
    }
    qsort (names, nnames, sizeof (*names), cmp_names);
    for (size_t k = 0; k < nnames && nk < sizeof (known); k++)
        nk += (size_t)snprintf (known + nk, sizeof (known) - nk, "%s%s", nk ? ", " : "",
                                names[k]);
    free (names);
    json_array_foreach (drain_queues, i, q) {
        if (!json_is_string (q) || json_string_length (q) == 0)
            return dws_errorf (err, "%s[%zu]: must be a queue name (non-empty string)", where,
                               i);
        ids = json_object_get (properties, json_string_value (q));
        if (ids && idset_nonempty (json_string_value (ids)) > 0) {
            nfound++;
            continue;
        }
        append_quoted (missing, sizeof (missing), &nm, json_string_value (q));
        if (json_array_append (missing_out, q) < 0)
            return dws_errorf (err, "out of memory");
    }
    if (nfound > 0 || json_array_size (drain_queues) == 0)
        return 0;
    const char *which = json_array_size (drain_queues) > 1 ? "any of the properties"
                                                           : "the property";
    if (nk == 0)
        return dws_errorf (err,
                           "%s: no node has %s %s: drain queues name node properties, and"
                           " no node has any (leave drain_queues out to drain nodes of the"
                           " whole instance)",
                           where, which, missing);
    return dws_errorf (err,
                       "%s: no node has %s %s: drain queues name node properties (the"
                       " nodes' properties: %s)",
                       where, which, missing, known);
}

json_t *dws_rabbitconf_drain_properties (json_t *drain_queues, json_t *properties,
                                         const char *where, dws_error_t *err)
{
    json_t *missing = json_array ();
    if (!missing) {
        dws_errorf (err, "out of memory");
        return NULL;
    }
    if (!drain_queues || json_is_null (drain_queues))
        return missing;
    if (properties && json_is_null (properties))
        properties = NULL;
    if (drain_properties (drain_queues, properties, where ? where : "rabbit.drain_queues",
                          missing, err) < 0) {
        json_decref (missing);
        return NULL;
    }
    return missing;
}

char *dws_rabbitconf_drain_properties_json (const char *drain_queues_json,
                                            const char *properties_json, const char *where,
                                            dws_error_t *err)
{
    json_t *dq = NULL, *props = NULL;
    char *out = NULL;

    if (drain_queues_json
        && !(dq = dws_json_load (keys[DWS_RABBIT_DRAIN_QUEUES].name, drain_queues_json, 0, err)))
        return NULL;
    if (properties_json && !(props = dws_json_load ("properties", properties_json, 0, err)))
        goto done;
    out = dws_json_dump_take (dws_rabbitconf_drain_properties (dq, props, where, err), err);
done:
    json_decref (dq);
    json_decref (props);
    return out;
}
