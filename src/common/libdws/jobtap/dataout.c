/* dataout.c - hold the dependents of jobs whose DataOut outlives them
 * (dataout.h).
 *
 * State: `pending`, the jobs whose DataOut is under way ({X: true}), and
 * `deps`, the jobs in DEPEND with after* dependencies, each with its
 * targets ({J: {X: {"scheme": S, "held": B}}}).  Keys are decimal ids.
 * Both are small (a site has few jobs in DEPEND with dependencies), so a
 * begin or end walks `deps`.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataout.h"
#include "util/f58.h"
#include "wire/explain.h"
#include "wire/jobwire.h"

struct dws_dataout {
    json_t *pending;
    json_t *deps;
    json_t *failed; /* {X: error} of the last FAILED_KEPT failed DataOuts */
};

/* How many failed DataOuts are remembered for dependents submitted after
 * the failure (their afterok fails at depend).
 */
#define FAILED_KEPT 4096

/* The schemes whose dependents wait for their target's end. */
static bool held_scheme (const char *s)
{
    return s && (!strcmp (s, "afterok") || !strcmp (s, "afterany") || !strcmp (s, "afternotok"));
}

struct dws_dataout *dws_dataout_create (void)
{
    struct dws_dataout *d = calloc (1, sizeof (*d));
    if (!d)
        return NULL;
    d->pending = json_object ();
    d->deps = json_object ();
    d->failed = json_object ();
    if (!d->pending || !d->deps || !d->failed) {
        dws_dataout_destroy (d);
        return NULL;
    }
    return d;
}

void dws_dataout_destroy (struct dws_dataout *d)
{
    if (!d)
        return;
    json_decref (d->pending);
    json_decref (d->deps);
    json_decref (d->failed);
    free (d);
}

int dws_dataout_tracked (const struct dws_dataout *d)
{
    return (int)json_object_size (d->deps);
}

int dws_dataout_pending (const struct dws_dataout *d)
{
    return (int)json_object_size (d->pending);
}

static void key_of (json_int_t id, char *buf, size_t size)
{
    snprintf (buf, size, "%" JSON_INTEGER_FORMAT, id);
}

/* The dependency that holds a dependent on target X. */
static json_t *dependency (const char *action, json_int_t j, const char *x, bool quiet)
{
    char name[64];
    char *f58 = dws_f58_plain (strtoull (x, NULL, 10));
    snprintf (name, sizeof (name), DWS_JOBWIRE_DATAOUT_DEPENDENCY ":%s", f58 ? f58 : x);
    free (f58);
    return json_pack ("{s:s s:I s:s s:b}", "action", action, "id", j, "name", name, "quiet",
                      quiet);
}

/* Hold J on X (not held yet). */
static void hold (json_t *acts, json_int_t j, const char *x, json_t *target)
{
    json_array_append_new (acts, dependency (DWS_JOBWIRE_ACTION (DEPENDENCY_ADD), j, x, false));
    json_object_set_new (target, "held", json_true ());
}

static int get_id (json_t *event, const char *key, json_int_t *id, dws_error_t *err)
{
    json_t *v = json_object_get (event, key);
    if (!json_is_integer (v) || json_integer_value (v) < 0)
        return dws_errorf (err, "%s must be a job id (an integer >= 0)", key);
    *id = json_integer_value (v);
    return 0;
}

/* J's afterok on X cannot be satisfied: X's copy_out failed. */
static void raise_afterok (json_t *acts, json_int_t j, const char *xkey, const char *error)
{
    char note[512];
    char sentence[DWS_EXPLAIN_MAX];
    char *f58 = dws_f58_plain (strtoull (xkey, NULL, 10));
    snprintf (note, sizeof (note), "dependency: afterok: job %s's copy_out (DWS DataOut) failed: %s",
              f58 ? f58 : xkey, error ? error : "no reason given");
    free (f58);
    json_array_append_new (acts, json_pack ("{s:s s:I s:s s:i s:s}", "action",
                                            DWS_JOBWIRE_ACTION (RAISE), "id", j, "type", "dependency", "severity", 0, "note", note));
    /* what the failure means goes beside the note, as for every exception
     * flux-dws raises (explain.h), not into it */
    if (error && dws_explain (error, sentence, sizeof (sentence)))
        json_array_append_new (acts,
                               json_pack ("{s:s s:I s:s s:{s:s s:s s:s}}", "action",
                                          DWS_JOBWIRE_ACTION (POST_EVENT), "id", j, "name", DWS_EXPLAIN_EVENT, "context", "type",
                                          "dependency", "note", note, "explanation", sentence));
}

/* Remember a failed DataOut (the oldest forgotten past FAILED_KEPT). */
static void remember_failure (struct dws_dataout *d, const char *xkey, const char *error)
{
    if (json_object_size (d->failed) >= FAILED_KEPT) {
        void *it = json_object_iter (d->failed); /* insertion order: the oldest */
        if (it)
            json_object_del (d->failed, json_object_iter_key (it));
    }
    json_object_set_new (d->failed, xkey, json_string (error ? error : "no reason given"));
}

/* depend: record J's held schemes' targets, hold on the pending ones. */
static int on_depend (struct dws_dataout *d, json_t *ev, json_t *acts, dws_error_t *err)
{
    json_int_t j = 0;
    json_t *targets = json_object_get (ev, "targets");
    bool reload = json_is_true (json_object_get (ev, "reload"));
    char jkey[32];
    size_t i;
    json_t *t;

    if (get_id (ev, "id", &j, err) < 0)
        return -1;
    if (!json_is_array (targets))
        return dws_errorf (err, "targets must be a list");
    json_t *mine = json_object ();
    json_t *failed_now = json_object ();
    json_array_foreach (targets, i, t) {
        const char *scheme = json_string_value (json_object_get (t, "scheme"));
        json_int_t x = 0;
        char xkey[32];
        if (!scheme || get_id (t, "id", &x, err) < 0) {
            json_decref (mine);
            json_decref (failed_now);
            return dws_errorf (err, "targets[%zu] must be {\"scheme\": S, \"id\": N}", i);
        }
        if (!held_scheme (scheme))
            continue;
        key_of (x, xkey, sizeof (xkey));
        if (json_object_get (d->failed, xkey)) {
            /* its DataOut failed before J came: only afterok cares */
            if (!strcmp (scheme, "afterok"))
                json_object_set (failed_now, xkey, json_object_get (d->failed, xkey));
            continue;
        }
        json_object_set_new (mine, xkey, json_pack ("{s:s s:b}", "scheme", scheme, "held",
                                                    reload));
    }
    key_of (j, jkey, sizeof (jkey));
    const char *fx;
    json_t *why;
    json_object_foreach (failed_now, fx, why)
        raise_afterok (acts, j, fx, json_string_value (why));
    json_decref (failed_now);
    if (json_object_size (mine) == 0) {
        json_decref (mine);
        json_object_del (d->deps, jkey);
        return 0;
    }
    json_t *old = json_object_get (d->deps, jkey);
    const char *x;
    json_object_foreach (mine, x, t) {
        /* a depend again (a plugin load) keeps what J already holds */
        if (json_is_true (json_object_get (json_object_get (old, x), "held")))
            json_object_set_new (t, "held", json_true ());
        if (!json_is_true (json_object_get (t, "held")) && json_object_get (d->pending, x))
            hold (acts, j, x, t);
    }
    json_object_set_new (d->deps, jkey, mine);
    return 0;
}

static int on_leave (struct dws_dataout *d, json_t *ev, dws_error_t *err)
{
    json_int_t j = 0;
    char jkey[32];
    if (get_id (ev, "id", &j, err) < 0)
        return -1;
    key_of (j, jkey, sizeof (jkey));
    json_object_del (d->deps, jkey);
    return 0;
}

static int on_begin (struct dws_dataout *d, json_t *ev, json_t *acts, dws_error_t *err)
{
    json_int_t x = 0;
    char xkey[32];
    const char *jkey;
    json_t *mine;

    if (get_id (ev, "id", &x, err) < 0)
        return -1;
    key_of (x, xkey, sizeof (xkey));
    json_object_set_new (d->pending, xkey, json_true ());
    json_object_foreach (d->deps, jkey, mine) {
        json_t *t = json_object_get (mine, xkey);
        if (t && !json_is_true (json_object_get (t, "held")))
            hold (acts, strtoll (jkey, NULL, 10), xkey, t);
    }
    return 0;
}

/* X's DataOut is over for J: fail an afterok J when it failed, then let
 * it go on.  J's entry for X is removed.
 */
static void release_one (json_t *acts, const char *jkey, json_t *mine, const char *xkey,
                         bool ok, const char *error, bool quiet)
{
    json_t *t = json_object_get (mine, xkey);
    json_int_t j = strtoll (jkey, NULL, 10);
    const char *scheme = json_string_value (json_object_get (t, "scheme"));
    if (!ok && scheme && !strcmp (scheme, "afterok"))
        raise_afterok (acts, j, xkey, error);
    if (json_is_true (json_object_get (t, "held")))
        json_array_append_new (acts, dependency (DWS_JOBWIRE_ACTION (DEPENDENCY_REMOVE), j, xkey, quiet));
    json_object_del (mine, xkey);
}

/* Forget the dependents whose targets are all over. */
static void prune (struct dws_dataout *d)
{
    const char *jkey;
    json_t *mine;
    void *tmp;
    json_object_foreach_safe (d->deps, tmp, jkey, mine) {
        if (json_object_size (mine) == 0)
            json_object_del (d->deps, jkey);
    }
}

static int on_end (struct dws_dataout *d, json_t *ev, json_t *acts, dws_error_t *err)
{
    json_int_t x = 0;
    char xkey[32];
    const char *jkey;
    json_t *mine;
    json_t *okv = json_object_get (ev, "ok");
    const char *error = json_string_value (json_object_get (ev, "error"));

    if (get_id (ev, "id", &x, err) < 0)
        return -1;
    if (!json_is_boolean (okv))
        return dws_errorf (err, "ok must be true or false");
    key_of (x, xkey, sizeof (xkey));
    json_object_del (d->pending, xkey);
    if (!json_is_true (okv))
        remember_failure (d, xkey, error);
    json_object_foreach (d->deps, jkey, mine) {
        if (json_object_get (mine, xkey))
            release_one (acts, jkey, mine, xkey, json_is_true (okv), error, false);
    }
    prune (d);
    return 0;
}

static int on_pending (struct dws_dataout *d, json_t *ev, json_t *acts, dws_error_t *err)
{
    json_t *ids = json_object_get (ev, "ids");
    size_t i;
    json_t *v;
    const char *jkey, *xkey;
    json_t *mine, *t;
    void *tmp;

    if (!json_is_array (ids))
        return dws_errorf (err, "ids must be a list of job ids");
    json_array_foreach (ids, i, v) {
        if (!json_is_integer (v) || json_integer_value (v) < 0)
            return dws_errorf (err, "ids[%zu] must be a job id (an integer >= 0)", i);
    }
    json_object_clear (d->pending);
    json_array_foreach (ids, i, v) {
        char key[32];
        key_of (json_integer_value (v), key, sizeof (key));
        json_object_set_new (d->pending, key, json_true ());
    }
    json_object_foreach (d->deps, jkey, mine) {
        json_object_foreach_safe (mine, tmp, xkey, t) {
            bool pending = json_object_get (d->pending, xkey) != NULL;
            if (pending)
                /* held before the load, or not: add it (quiet: it may be) */
                json_array_append_new (acts, dependency (DWS_JOBWIRE_ACTION (DEPENDENCY_ADD),
                                                         strtoll (jkey, NULL, 10), xkey, true));
            if (pending)
                json_object_set_new (t, "held", json_true ());
            else
                release_one (acts, jkey, mine, xkey, true, NULL, true);
        }
    }
    prune (d);
    return 0;
}

json_t *dws_dataout_event (struct dws_dataout *d, json_t *event, dws_error_t *err)
{
    const char *type = json_string_value (json_object_get (event, "type"));
    json_t *acts = json_array ();
    int rc;

    if (!d || !json_is_object (event) || !type) {
        json_decref (acts);
        dws_errorf (err, "a dataout event must be an object with a type");
        return NULL;
    }
    /* every handler checks its event before it changes anything */
    if (!strcmp (type, "depend"))
        rc = on_depend (d, event, acts, err);
    else if (!strcmp (type, "leave"))
        rc = on_leave (d, event, err);
    else if (!strcmp (type, "begin"))
        rc = on_begin (d, event, acts, err);
    else if (!strcmp (type, "end"))
        rc = on_end (d, event, acts, err);
    else if (!strcmp (type, "pending"))
        rc = on_pending (d, event, acts, err);
    else
        rc = dws_errorf (err, "unknown dataout event type '%s'", type);
    if (rc < 0) {
        json_decref (acts);
        return NULL;
    }
    return acts;
}

char *dws_dataout_event_json (struct dws_dataout *d, const char *event, dws_error_t *err)
{
    json_error_t jerr;
    json_t *ev = json_loads (event ? event : "", JSON_DECODE_ANY, &jerr);
    if (!ev) {
        dws_errorf (err, "the event is not JSON: %s", jerr.text);
        return NULL;
    }
    json_t *acts = dws_dataout_event (d, ev, err);
    json_decref (ev);
    if (!acts)
        return NULL;
    char *s = json_dumps (acts, JSON_COMPACT);
    json_decref (acts);
    if (!s)
        dws_errorf (err, "out of memory");
    return s;
}
