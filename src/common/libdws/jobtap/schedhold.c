/* schedhold.c - rabbit jobs kept from the scheduler until it can judge
 * them (schedhold.h).
 *
 * State: what the last poll found of the dws service and the scheduler,
 * whether the service was ever found ready (it stays so: a new plugin
 * makes a new machine), the nodes Fluxion had up at the last poll,
 * the held jobs ({J: {"nnodes": N, "since": T}}, decimal keys), whether
 * a poll is in flight and whether the timer is armed.  A site holds at
 * most its queue here, and only across a restart.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedhold.h"
#include "util/idset.h"

/* What the last poll found of the dws service. */
enum service {
    SERVICE_UNKNOWN,  /* no poll answered yet */
    SERVICE_NONE,     /* none registered */
    SERVICE_STARTING, /* dws.ready answered false, or not at all */
    SERVICE_READY,    /* dws.ready answered true */
    SERVICE_OTHER,    /* one that does not serve dws.ready */
};

/* What the last poll found of the scheduler. */
enum scheduler {
    SCHEDULER_UNKNOWN, /* no poll answered yet */
    SCHEDULER_NONE,    /* none loaded */
    SCHEDULER_FLUXION,
    SCHEDULER_OTHER, /* one that is not Fluxion, e.g. sched-simple */
};

struct dws_schedhold {
    double timeout;
    enum service service;
    enum scheduler scheduler;
    bool ready;
    json_int_t nodes_up; /* -1: unknown */
    json_t *held;
    bool polling;
    bool armed;
    bool said; /* the log said jobs are held (not for a hold of one poll) */
};

struct dws_schedhold *dws_schedhold_create (double timeout)
{
    struct dws_schedhold *s = calloc (1, sizeof (*s));
    if (!s)
        return NULL;
    s->timeout = timeout > 0 ? timeout : DWS_SCHEDHOLD_TIMEOUT;
    s->nodes_up = -1;
    if (!(s->held = json_object ())) {
        free (s);
        return NULL;
    }
    return s;
}

void dws_schedhold_destroy (struct dws_schedhold *s)
{
    if (!s)
        return;
    json_decref (s->held);
    free (s);
}

int dws_schedhold_held (const struct dws_schedhold *s)
{
    return s ? (int)json_object_size (s->held) : 0;
}

bool dws_schedhold_is_held (const struct dws_schedhold *s, json_int_t id)
{
    char key[32];
    if (!s || json_object_size (s->held) == 0)
        return false;
    snprintf (key, sizeof (key), "%" JSON_INTEGER_FORMAT, id);
    return json_object_get (s->held, key) != NULL;
}

static void logf_to (json_t *acts, const char *level, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

static void logf_to (json_t *acts, const char *level, const char *fmt, ...)
{
    char text[256];
    va_list ap;
    va_start (ap, fmt);
    (void)vsnprintf (text, sizeof (text), fmt, ap);
    va_end (ap);
    json_array_append_new (acts, json_pack ("{s:s s:s s:s}", "action", "log", "level", level,
                                            "message", text));
}

/* Whether a job of nnodes may go to the scheduler now; if not, why.
 * The hold guards against Fluxion's restart check with our service's
 * rabbit health: a scheduler that is not Fluxion, or a dws service that
 * does not serve dws.ready (flux-coral2's, or an older flux-dws), lets
 * every job go as if there were no hold.
 */
static bool may_go (const struct dws_schedhold *s, json_int_t nnodes, char *why, size_t size)
{
    if (s->scheduler == SCHEDULER_OTHER || s->service == SERVICE_OTHER)
        return true;
    if (!s->ready) {
        if (s->service == SERVICE_NONE)
            snprintf (why, size, "waiting for the dws service to start");
        else
            snprintf (why, size,
                      "waiting for the dws service to apply rabbit health to the scheduler");
        return false;
    }
    if (s->nodes_up >= 0 && nnodes > s->nodes_up) {
        snprintf (why, size, "waiting for %" JSON_INTEGER_FORMAT " nodes up in Fluxion"
                  " (%" JSON_INTEGER_FORMAT " up)", nnodes, s->nodes_up);
        return false;
    }
    return true;
}

static void release (json_t *acts, const char *key)
{
    json_array_append_new (acts, json_pack ("{s:s s:I}", "action", "release", "id",
                                            (json_int_t)strtoll (key, NULL, 10)));
}

/* With jobs held: a poll in flight and the timer armed. */
static void keep_asking (struct dws_schedhold *s, json_t *acts)
{
    if (json_object_size (s->held) == 0)
        return;
    if (!s->polling) {
        s->polling = true;
        json_array_append_new (acts, json_pack ("{s:s}", "action", "poll"));
    }
    if (!s->armed) {
        s->armed = true;
        json_array_append_new (acts, json_pack ("{s:s s:f}", "action", "arm", "seconds",
                                                DWS_SCHEDHOLD_POLL));
    }
}

static int get_id (json_t *ev, json_int_t *id, dws_error_t *err)
{
    json_t *v = json_object_get (ev, "id");
    if (!json_is_integer (v) || json_integer_value (v) < 0)
        return dws_errorf (err, "schedhold event: 'id' must be a job id (an integer >= 0)");
    *id = json_integer_value (v);
    return 0;
}

static int on_priority (struct dws_schedhold *s, json_t *ev, double now, json_t *acts,
                        dws_error_t *err)
{
    json_int_t id = 0;
    json_t *n = json_object_get (ev, "nnodes");
    json_t *loaded = json_object_get (ev, "loaded");
    char key[32], why[160];

    if (get_id (ev, &id, err) < 0)
        return -1;
    if (!json_is_integer (n) || json_integer_value (n) < 0)
        return dws_errorf (err, "schedhold priority: 'nnodes' must be an integer >= 0");
    if (loaded && !json_is_boolean (loaded))
        return dws_errorf (err, "schedhold priority: 'loaded' must be a boolean");
    snprintf (key, sizeof (key), "%" JSON_INTEGER_FORMAT, id);
    if (may_go (s, json_integer_value (n), why, sizeof (why))) {
        json_object_del (s->held, key);
        if (json_is_true (loaded))
            release (acts, key); /* held by the plugin this one replaced */
        return 0;
    }
    if (!json_object_get (s->held, key))
        json_object_set_new (s->held, key, json_pack ("{s:O s:f}", "nnodes", n, "since", now));
    json_array_append_new (acts, json_pack ("{s:s s:s}", "action", "hold", "reason", why));
    keep_asking (s, acts);
    return 0;
}

static int on_leave (struct dws_schedhold *s, json_t *ev, dws_error_t *err)
{
    json_int_t id = 0;
    char key[32];
    if (get_id (ev, &id, err) < 0)
        return -1;
    snprintf (key, sizeof (key), "%" JSON_INTEGER_FORMAT, id);
    json_object_del (s->held, key);
    return 0;
}

/* Let go of every held job that may go; with 'now' >= 0 also those held
 * longer than the timeout. */
static void release_due (struct dws_schedhold *s, double now, json_t *acts)
{
    const char *key;
    json_t *v, *tmp;
    char why[160];
    size_t before = json_object_size (s->held);

    json_object_foreach_safe (s->held, tmp, key, v) {
        json_int_t n = json_integer_value (json_object_get (v, "nnodes"));
        double since = json_real_value (json_object_get (v, "since"));
        if (may_go (s, n, why, sizeof (why)))
            release (acts, key);
        else if (now >= 0 && now - since >= s->timeout) {
            logf_to (acts, "warning", "job %s: held %.0fs (%s): giving it to the scheduler"
                     " anyway", key, now - since, why);
            release (acts, key);
        }
        else
            continue;
        json_object_del (s->held, key);
    }
    if (before > 0 && json_object_size (s->held) == 0 && s->said) {
        logf_to (acts, "info", "rabbit jobs held in PRIORITY: all %zu given to the scheduler",
                 before);
        s->said = false;
    }
}

/* After a poll's answer: say that jobs are held, once, and why (a job
 * held only until the first answer, at a plugin load, is not worth a
 * line). */
static void say_held (struct dws_schedhold *s, json_t *acts)
{
    const char *key;
    json_t *v;
    char why[160];

    if (s->said)
        return;
    json_object_foreach (s->held, key, v) {
        if (!may_go (s, json_integer_value (json_object_get (v, "nnodes")), why, sizeof (why))) {
            logf_to (acts, "info", "holding rabbit jobs in PRIORITY: %s", why);
            s->said = true;
            return;
        }
    }
}

/* A word of the ready event, as one of 'words' (its index), or -1. */
static int word_of (json_t *ev, const char *key, const char *const *words, int n)
{
    const char *w = json_string_value (json_object_get (ev, key));
    for (int i = 0; w && i < n; i++)
        if (!strcmp (w, words[i]))
            return i;
    return -1;
}

static int on_ready (struct dws_schedhold *s, json_t *ev, json_t *acts, dws_error_t *err)
{
    static const char *const services[] = {"none", "starting", "ready", "other"};
    static const enum service service_is[] = {SERVICE_NONE, SERVICE_STARTING, SERVICE_READY,
                                              SERVICE_OTHER};
    static const char *const schedulers[] = {"none", "fluxion", "other"};
    static const enum scheduler scheduler_is[] = {SCHEDULER_NONE, SCHEDULER_FLUXION,
                                                  SCHEDULER_OTHER};
    int svc = word_of (ev, "service", services, 4);
    int sched = word_of (ev, "scheduler", schedulers, 3);
    json_t *n = json_object_get (ev, "nodes_up");

    if (svc < 0)
        return dws_errorf (err, "schedhold ready: 'service' must be one of none, starting,"
                           " ready, other");
    if (sched < 0)
        return dws_errorf (err, "schedhold ready: 'scheduler' must be one of none, fluxion,"
                           " other");
    if (n && !json_is_null (n) && (!json_is_integer (n) || json_integer_value (n) < 0))
        return dws_errorf (err, "schedhold ready: 'nodes_up' must be an integer >= 0 or null");
    s->polling = false;
    s->service = service_is[svc];
    s->scheduler = scheduler_is[sched];
    if (s->service == SERVICE_READY)
        s->ready = true;
    s->nodes_up = json_is_integer (n) ? json_integer_value (n) : -1;
    release_due (s, -1, acts);
    say_held (s, acts);
    return 0;
}

static int on_tick (struct dws_schedhold *s, double now, json_t *acts)
{
    s->armed = false;
    release_due (s, now, acts);
    keep_asking (s, acts);
    return 0;
}

json_t *dws_schedhold_event (struct dws_schedhold *s, json_t *event, double now,
                             dws_error_t *err)
{
    const char *type = json_string_value (json_object_get (event, "type"));
    json_t *acts = json_array ();
    int rc;

    if (!s || !json_is_object (event) || !type) {
        json_decref (acts);
        dws_errorf (err, "a schedhold event must be an object with a type");
        return NULL;
    }
    if (!strcmp (type, "priority"))
        rc = on_priority (s, event, now, acts, err);
    else if (!strcmp (type, "leave"))
        rc = on_leave (s, event, err);
    else if (!strcmp (type, "ready"))
        rc = on_ready (s, event, acts, err);
    else if (!strcmp (type, "tick"))
        rc = on_tick (s, now, acts);
    else
        rc = dws_errorf (err, "unknown schedhold event type '%s'", type);
    if (rc < 0) {
        json_decref (acts);
        return NULL;
    }
    return acts;
}

char *dws_schedhold_event_json (struct dws_schedhold *s, const char *event, double now,
                                dws_error_t *err)
{
    json_error_t jerr;
    json_t *ev = json_loads (event ? event : "", JSON_DECODE_ANY, &jerr);
    if (!ev) {
        dws_errorf (err, "the event is not JSON: %s", jerr.text);
        return NULL;
    }
    json_t *acts = dws_schedhold_event (s, ev, now, err);
    json_decref (ev);
    if (!acts)
        return NULL;
    char *out = json_dumps (acts, JSON_COMPACT);
    json_decref (acts);
    if (!out)
        dws_errorf (err, "out of memory");
    return out;
}

/* --- node count ------------------------------------------------------------- */

#define NNODES_DEPTH 32

static int count_of (json_t *r, json_int_t *count, dws_error_t *err)
{
    json_t *c = json_object_get (r, "count");
    if (json_is_integer (c))
        *count = json_integer_value (c);
    else if (json_is_object (c) && json_is_integer (json_object_get (c, "min")))
        *count = json_integer_value (json_object_get (c, "min"));
    else
        return dws_errorf (err, "a resource's count must be an integer or a range with a min");
    if (*count < 0)
        return dws_errorf (err, "a resource's count must not be negative");
    return 0;
}

static int64_t nodes_in (json_t *resources, int depth, dws_error_t *err)
{
    size_t i;
    json_t *r;
    int64_t total = 0;

    if (!json_is_array (resources))
        return dws_errorf (err, "resources must be an array");
    if (depth > NNODES_DEPTH)
        return dws_errorf (err, "resources are nested more than %d deep", NNODES_DEPTH);
    json_array_foreach (resources, i, r) {
        const char *type = json_string_value (json_object_get (r, "type"));
        json_int_t count = 0;
        int64_t below = 1;
        if (!type)
            return dws_errorf (err, "a resource has no type");
        if (count_of (r, &count, err) < 0)
            return -1;
        if (strcmp (type, "node") != 0) {
            json_t *with = json_object_get (r, "with");
            if (!with)
                continue;
            if ((below = nodes_in (with, depth + 1, err)) < 0)
                return -1;
        }
        if (below > 0 && count > (INT64_MAX - total) / below)
            return dws_errorf (err, "the node count overflows");
        total += count * below;
    }
    return total;
}

int64_t dws_schedhold_nnodes (json_t *resources, dws_error_t *err)
{
    return nodes_in (resources, 0, err);
}

/* --- Fluxion's up nodes ----------------------------------------------------- */

int64_t dws_schedhold_nodes_up (json_t *answer, dws_error_t *err)
{
    json_t *R = json_object_get (answer, "R");
    json_t *lite, *entry;
    struct dws_idset *ranks;
    size_t i;
    int64_t n;

    if (!json_is_object (answer))
        return dws_errorf (err, "Fluxion's find answer is not an object");
    if (!R || json_is_null (R))
        return 0; /* nothing is up */
    lite = json_object_get (json_object_get (R, "execution"), "R_lite");
    if (!json_is_array (lite))
        return dws_errorf (err, "Fluxion's find answer has no R.execution.R_lite array");
    if (!(ranks = dws_idset_create ()))
        return dws_errorf (err, "out of memory");
    json_array_foreach (lite, i, entry) {
        const char *s = json_string_value (json_object_get (entry, "rank"));
        struct dws_idset *one;
        if (!s || !(one = dws_idset_decode (s, err))) {
            dws_idset_destroy (ranks);
            if (!s)
                return dws_errorf (err, "Fluxion's find answer: R_lite[%zu] has no rank idset",
                                   i);
            return dws_error_prefix (err, "Fluxion's find answer: R_lite[%zu]: ", i);
        }
        for (unsigned int r = dws_idset_first (one); r != DWS_IDSET_INVALID;
             r = dws_idset_next (one, r))
            (void)dws_idset_add (ranks, r);
        dws_idset_destroy (one);
    }
    n = (int64_t)dws_idset_count (ranks);
    dws_idset_destroy (ranks);
    return n;
}

/* --- what a poll's answers say -------------------------------------------- */

#define NO_SERVICE "No service matching "

bool dws_schedhold_no_service (int errnum, const char *errstr)
{
    return errnum == ENOSYS && errstr && !strncmp (errstr, NO_SERVICE, strlen (NO_SERVICE));
}

const char *dws_schedhold_service_word (int errnum, const char *errstr, bool ready)
{
    if (errnum == 0)
        return ready ? "ready" : "starting";
    if (errnum == ENOSYS)
        return dws_schedhold_no_service (errnum, errstr) ? "none" : "other";
    return "starting"; /* busy, or an answer we cannot read: ask again */
}

/* --- configuration ---------------------------------------------------------- */

int dws_schedhold_conf (json_t *conf, bool *enabled, double *timeout, dws_error_t *err)
{
    json_t *on = json_object_get (conf, "sched-hold");
    json_t *t = json_object_get (conf, "sched-hold-timeout");
    *enabled = true;
    *timeout = DWS_SCHEDHOLD_TIMEOUT;
    if (on && !json_is_boolean (on))
        return dws_errorf (err, "dws jobtap config: sched-hold must be true or false");
    if (t && (!json_is_number (t) || json_number_value (t) <= 0))
        return dws_errorf (err, "dws jobtap config: sched-hold-timeout must be a number of"
                           " seconds > 0");
    if (on)
        *enabled = json_is_true (on);
    if (t)
        *timeout = json_number_value (t);
    return 0;
}
