/* sched_hold.c - carry out libdws schedhold.h's decisions in the job
 * manager: a rabbit job's priority left unavailable (it stays in
 * PRIORITY), held jobs let go (flux_jobtap_reprioritize_all, so each
 * priority plugin gives its own priority), and while any job is held a
 * poll every DWS_SCHEDHOLD_POLL seconds: dws.ready (the service's rabbit
 * health applied, or what service there is) and Fluxion's up nodes (find
 * status=up), or where no Fluxion is registered whether any scheduler is
 * (sched.resource-status).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "jobtap/schedhold.h"
#include "sched_hold.h"

#define AUX "dws::schedhold"
#define POLL_TIMEOUT 10.0 /* seconds a poll's answers may take */

struct sched_hold {
    flux_plugin_t *p;
    struct dws_schedhold *m;
    flux_watcher_t *tick;    /* the machine's timer */
    flux_watcher_t *release; /* reprioritize once, after the callback that decided it */
    flux_future_t *poll;     /* wait-all of dws.ready and Fluxion's find */
    flux_future_t *probe;    /* sched.resource-status, where no Fluxion answered */
    const char *probe_service; /* the poll's service word, while probing */
    flux_watcher_t *ask_order; /* ask for the job manager's plugins once running */
    flux_future_t *order;    /* its answer */
};

static struct sched_hold *hold_of (flux_plugin_t *p)
{
    return flux_plugin_aux_get (p, AUX);
}

static void sched_hold_destroy (struct sched_hold *s)
{
    if (!s)
        return;
    flux_watcher_destroy (s->tick);
    flux_watcher_destroy (s->release);
    flux_future_destroy (s->poll);
    flux_future_destroy (s->probe);
    flux_watcher_destroy (s->ask_order);
    flux_future_destroy (s->order);
    dws_schedhold_destroy (s->m);
    free (s);
}

static int level_of (const char *level)
{
    if (level && !strcmp (level, "warning"))
        return LOG_WARNING;
    if (level && !strcmp (level, "err"))
        return LOG_ERR;
    return LOG_INFO;
}

static void poll_start (struct sched_hold *s);

/* Carry out the machine's actions; true when one says "hold". */
static bool carry_out (struct sched_hold *s, json_t *acts)
{
    flux_t *h = flux_jobtap_get_flux (s->p);
    bool hold = false;
    size_t i;
    json_t *a;

    json_array_foreach (acts, i, a) {
        const char *what = json_string_value (json_object_get (a, "action"));
        if (!what)
            continue;
        if (!strcmp (what, "hold"))
            hold = true;
        else if (!strcmp (what, "release")) {
            flux_timer_watcher_reset (s->release, 0., 0.);
            flux_watcher_start (s->release);
        }
        else if (!strcmp (what, "poll"))
            poll_start (s);
        else if (!strcmp (what, "arm")) {
            flux_timer_watcher_reset (s->tick, json_number_value (json_object_get (a, "seconds")),
                                      0.);
            flux_watcher_start (s->tick);
        }
        else if (!strcmp (what, "log"))
            flux_log (h, level_of (json_string_value (json_object_get (a, "level"))), "dws: %s",
                      json_string_value (json_object_get (a, "message")));
    }
    return hold;
}

/* Feed one event (stolen); true when the machine says "hold". */
static bool feed (struct sched_hold *s, json_t *ev)
{
    flux_t *h = flux_jobtap_get_flux (s->p);
    dws_error_t err;
    json_t *acts;
    bool hold;

    if (!ev) {
        flux_log (h, LOG_ERR, "dws: schedhold: out of memory");
        return false;
    }
    acts = dws_schedhold_event (s->m, ev, flux_reactor_now (flux_get_reactor (h)), &err);
    json_decref (ev);
    if (!acts) {
        flux_log (h, LOG_ERR, "dws: schedhold: %s", err.text);
        return false;
    }
    hold = carry_out (s, acts);
    json_decref (acts);
    return hold;
}

/* A poll's answer to the machine: the service's and the scheduler's words
 * (schedhold.h, the ready event) and Fluxion's up nodes (stolen; null
 * when unknown). */
static void feed_ready (struct sched_hold *s, const char *service, const char *scheduler,
                        json_t *nodes_up)
{
    (void)feed (s, json_pack ("{s:s s:s s:s s:o}", "type", "ready", "service", service,
                              "scheduler", scheduler, "nodes_up", nodes_up));
}

/* The errnum and text of a failed RPC (ETIMEDOUT for one not answered). */
static int rpc_error (flux_future_t *f, const char **errstr)
{
    *errstr = NULL;
    if (!f || !flux_future_is_ready (f))
        return ETIMEDOUT;
    if (flux_rpc_get (f, NULL) == 0)
        return 0;
    int errnum = errno ? errno : EPROTO;
    *errstr = flux_future_error_string (f);
    return errnum;
}

/* The scheduler's answer to sched.resource-status: with no Fluxion, is
 * any scheduler loaded (sched-simple, a test's), or none yet? */
static void probe_cb (flux_future_t *f, void *arg)
{
    struct sched_hold *s = arg;
    const char *errstr;
    int errnum = rpc_error (f, &errstr);

    s->probe = NULL;
    flux_future_destroy (f);
    feed_ready (s, s->probe_service,
                dws_schedhold_no_service (errnum, errstr) ? "none" : "other", json_null ());
}

static void probe_start (struct sched_hold *s, const char *service)
{
    flux_t *h = flux_jobtap_get_flux (s->p);
    flux_future_t *f = flux_rpc (h, "sched.resource-status", NULL, 0, 0);

    if (!f || flux_future_then (f, POLL_TIMEOUT, probe_cb, s) < 0) {
        flux_log_error (h, "dws: schedhold: cannot ask for the scheduler");
        flux_future_destroy (f);
        feed_ready (s, service, "none", json_null ()); /* asked again at the next tick */
        return;
    }
    s->probe_service = service;
    s->probe = f;
}

/* Both answers in (or the poll timed out): what the dws service says of
 * dws.ready, and Fluxion's up nodes; where no Fluxion is registered, the
 * scheduler is asked whether there is one (probe_start).
 */
static void poll_cb (flux_future_t *all, void *arg)
{
    struct sched_hold *s = arg;
    flux_t *h = flux_jobtap_get_flux (s->p);
    flux_future_t *fr = flux_future_get_child (all, "ready");
    flux_future_t *ff = flux_future_get_child (all, "find");
    const char *errstr = NULL;
    int ready = 0;
    int errnum = rpc_error (fr, &errstr);
    const char *service;
    json_t *nodes_up = json_null ();
    const char *text = NULL;

    if (errnum == 0 && flux_rpc_get_unpack (fr, "{s:b}", "ready", &ready) < 0)
        errnum = EPROTO; /* an answer without "ready": not ours to read */
    service = dws_schedhold_service_word (errnum, errstr, ready);
    errnum = rpc_error (ff, &errstr);
    if (dws_schedhold_no_service (errnum, errstr)) {
        s->poll = NULL;
        flux_future_destroy (all);
        probe_start (s, service);
        return;
    }
    if (errnum == 0 && flux_rpc_get (ff, &text) == 0 && text) {
        dws_error_t err;
        json_t *answer = json_loads (text, 0, NULL);
        int64_t n = answer ? dws_schedhold_nodes_up (answer, &err) : -1;
        if (n >= 0)
            nodes_up = json_integer (n);
        else
            flux_log (h, LOG_ERR, "dws: schedhold: %s",
                      answer ? err.text : "Fluxion's find answer is not JSON");
        json_decref (answer);
    }
    s->poll = NULL;
    flux_future_destroy (all);
    feed_ready (s, service, "fluxion", nodes_up);
}

static void poll_start (struct sched_hold *s)
{
    flux_t *h = flux_jobtap_get_flux (s->p);
    flux_future_t *all = flux_future_wait_all_create ();
    flux_future_t *fr = flux_rpc (h, "dws.ready", "{}", 0, 0);
    flux_future_t *ff = flux_rpc_pack (h, "sched-fluxion-resource.find", 0, 0, "{s:s s:s}",
                                       "criteria", "status=up", "format", "rv1_nosched");

    if (!all || !fr || !ff) {
        flux_future_destroy (fr);
        flux_future_destroy (ff);
        goto error;
    }
    flux_future_set_flux (all, h);
    if (flux_future_push (all, "ready", fr) < 0) {
        flux_future_destroy (fr);
        flux_future_destroy (ff);
        goto error;
    }
    if (flux_future_push (all, "find", ff) < 0) {
        flux_future_destroy (ff);
        goto error;
    }
    if (flux_future_then (all, POLL_TIMEOUT, poll_cb, s) < 0)
        goto error;
    flux_future_destroy (s->poll);
    s->poll = all;
    return;
error:
    flux_log_error (h, "dws: schedhold: cannot poll dws.ready");
    flux_future_destroy (all);
    /* the machine asks again at its next tick */
    feed_ready (s, "starting", "none", json_null ());
}

static void tick_cb (flux_reactor_t *r, flux_watcher_t *w, int revents, void *arg)
{
    struct sched_hold *s = arg;
    (void)r;
    (void)w;
    (void)revents;
    (void)feed (s, json_pack ("{s:s}", "type", "tick"));
}

static void release_cb (flux_reactor_t *r, flux_watcher_t *w, int revents, void *arg)
{
    struct sched_hold *s = arg;
    (void)r;
    (void)revents;
    flux_watcher_stop (w);
    if (flux_jobtap_reprioritize_all (s->p) < 0)
        flux_log_error (flux_jobtap_get_flux (s->p), "dws: schedhold: reprioritize");
}

/* Plugins that set every job's priority whatever an earlier plugin said:
 * one loaded after this plugin overrides its hold (the job manager keeps
 * the last plugin's priority), so rabbit jobs would reach the scheduler
 * after a restart before it can judge them. */
static const char *const priority_plugins[] = {"mf_priority.so", NULL};

static bool priority_plugin (const char *name)
{
    for (int i = 0; priority_plugins[i]; i++)
        if (!strcmp (name, priority_plugins[i]))
            return true;
    return false;
}

/* The job manager's plugins, in their order: say so, once, when a priority
 * plugin comes after this one. */
static void order_cb (flux_future_t *f, void *arg)
{
    struct sched_hold *s = arg;
    flux_t *h = flux_jobtap_get_flux (s->p);
    const char *self = flux_plugin_aux_get (s->p, "jobtap::basename");
    json_t *plugins;
    size_t i;
    json_t *v;
    bool after = false;

    if (flux_rpc_get_unpack (f, "{s:o}", "plugins", &plugins) == 0 && self)
        json_array_foreach (plugins, i, v) {
            const char *name = json_string_value (v);
            if (name && !strcmp (name, self))
                after = true;
            else if (name && after && priority_plugin (name))
                flux_log (h, LOG_WARNING,
                          "dws: %s is loaded after %s: its priority overrides the hold of"
                          " rabbit jobs in PRIORITY after a restart (flux-jobtap-dws(1));"
                          " load %s after it",
                          name, self, self);
        }
    flux_future_destroy (f);
    s->order = NULL;
}

static void ask_order_cb (flux_reactor_t *r, flux_watcher_t *w, int revents, void *arg)
{
    struct sched_hold *s = arg;
    flux_t *h = flux_jobtap_get_flux (s->p);
    (void)r;
    (void)w;
    (void)revents;
    if (!(s->order = flux_rpc_pack (h, "job-manager.jobtap", FLUX_NODEID_ANY, 0, "{s:b}",
                                    "query_only", 1))
        || flux_future_then (s->order, 30., order_cb, s) < 0) {
        flux_future_destroy (s->order);
        s->order = NULL; /* not told: the hold works as before */
    }
}

int sched_hold_init (flux_plugin_t *p, json_t *conf)
{
    flux_t *h = flux_jobtap_get_flux (p);
    flux_reactor_t *r = flux_get_reactor (h);
    struct sched_hold *s;
    double timeout;
    bool enabled;
    dws_error_t err;

    if (dws_schedhold_conf (conf, &enabled, &timeout, &err) < 0) {
        flux_log (h, LOG_ERR, "dws: %s", err.text);
        return -1;
    }
    if (!enabled)
        return 0; /* no machine: every sched_hold_* call below does nothing */
    if (!(s = calloc (1, sizeof (*s))))
        return -1;
    s->p = p;
    if (!(s->m = dws_schedhold_create (timeout))
        || !(s->tick = flux_timer_watcher_create (r, DWS_SCHEDHOLD_POLL, 0., tick_cb, s))
        || !(s->release = flux_timer_watcher_create (r, 0., 0., release_cb, s))
        || !(s->ask_order = flux_timer_watcher_create (r, 0., 0., ask_order_cb, s))
        || flux_plugin_aux_set (p, AUX, s, (flux_free_f)sched_hold_destroy) < 0) {
        sched_hold_destroy (s);
        return -1;
    }
    /* a plugin loaded on a running instance finds the service ready at
     * once, before the first rabbit job needs it */
    poll_start (s);
    /* once the reactor runs: the job manager has loaded every configured
     * plugin, and answers (a request sent during its start times out) */
    flux_watcher_start (s->ask_order);
    return 0;
}

void sched_hold_priority (flux_plugin_t *p, flux_jobid_t id, json_t *jobspec,
                          flux_plugin_arg_t *args, bool loaded)
{
    struct sched_hold *s = hold_of (p);
    flux_t *h = flux_jobtap_get_flux (p);
    json_t *resources = json_object_get (jobspec, "resources");
    dws_error_t err;
    int64_t n;

    if (!s)
        return;
    if ((n = dws_schedhold_nnodes (resources, &err)) < 0) {
        /* the scheduler will judge a jobspec we cannot read; holding it
         * would not make it readable */
        flux_log (h, LOG_ERR, "dws: job %ju: not held for the scheduler: %s", (uintmax_t)id,
                  err.text);
        return;
    }
    if (feed (s, json_pack ("{s:s s:I s:I s:b}", "type", "priority", "id", (json_int_t)id,
                            "nnodes", (json_int_t)n, "loaded", loaded))
        && args && flux_jobtap_priority_unavail (p, args) < 0)
        flux_log_error (h, "dws: job %ju: cannot hold it in PRIORITY", (uintmax_t)id);
}

void sched_hold_priority_get (flux_plugin_t *p, flux_jobid_t id, flux_plugin_arg_t *args)
{
    struct sched_hold *s = hold_of (p);
    if (s && dws_schedhold_is_held (s->m, (json_int_t)id)
        && flux_jobtap_priority_unavail (p, args) < 0)
        flux_log_error (flux_jobtap_get_flux (p), "dws: job %ju: cannot keep it held",
                        (uintmax_t)id);
}

void sched_hold_leave (flux_plugin_t *p, flux_jobid_t id)
{
    struct sched_hold *s = hold_of (p);
    if (s && dws_schedhold_is_held (s->m, (json_int_t)id))
        (void)feed (s, json_pack ("{s:s s:I}", "type", "leave", "id", (json_int_t)id));
}
