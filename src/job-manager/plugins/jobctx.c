/* jobctx.c - one rabbit job in dws-jobtap.so: feed its machine, carry out
 * the actions (jobctx.h).
 *
 * Every decision is the machine's (libdws jobsm.c); this file only maps
 * its actions onto flux_jobtap_*() and flux_rpc().  Carrying out an action
 * can call back into the plugin for the same job at once (raising an
 * exception runs the exception callback), so feeds nest; the machine is
 * already in its new state when its actions come back, which makes that
 * safe, and a context the job manager destroys while actions are being
 * carried out is freed only when the outermost feed returns.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include "jobtap/jobsm.h"
#include "wire/jobwire.h"
#include "jobctx.h"

struct rpc {
    struct rpc *next;
    struct rpc *prev;
    struct jobctx *job;
    flux_future_t *f;
    char *tag;
};

struct jobctx {
    flux_plugin_t *p;
    flux_t *h;
    flux_jobid_t id;
    char f58[32];
    struct dws_jobsm *sm;
    flux_watcher_t *timer;
    double deadline;   /* CLOCK_MONOTONIC seconds when the timer is due */
    struct rpc *rpcs;  /* outstanding dws.* RPCs */
    bool subscribed;   /* a second subscription would double every callback */
    int busy;          /* feeds in progress (they nest) */
    bool destroyed;    /* the job manager dropped the context while busy */
};

static void rpc_free (struct rpc *r)
{
    if (r) {
        flux_future_destroy (r->f);
        free (r->tag);
        free (r);
    }
}

static void rpc_unlink (struct rpc *r)
{
    if (r->prev)
        r->prev->next = r->next;
    else if (r->job->rpcs == r)
        r->job->rpcs = r->next;
    if (r->next)
        r->next->prev = r->prev;
    r->next = r->prev = NULL;
}

static void jobctx_free (struct jobctx *job)
{
    while (job->rpcs) {
        struct rpc *r = job->rpcs;
        rpc_unlink (r);
        rpc_free (r);
    }
    flux_watcher_destroy (job->timer);
    dws_jobsm_destroy (job->sm);
    free (job);
}

/* The aux destructor: the job is inactive or the plugin is going away. */
static void jobctx_destroy (void *arg)
{
    struct jobctx *job = arg;
    if (job->busy > 0)
        job->destroyed = true;
    else
        jobctx_free (job);
}

struct jobctx *jobctx_get (flux_plugin_t *p, flux_jobid_t id)
{
    return flux_jobtap_job_aux_get (p, id, JOBCTX_AUX);
}

struct jobctx *jobctx_attach (flux_plugin_t *p, flux_jobid_t id, json_t *conf)
{
    flux_t *h = flux_jobtap_get_flux (p);
    dws_error_t err;
    struct jobctx *job = calloc (1, sizeof (*job));

    if (!job) {
        flux_log_error (h, "dws: job context");
        return NULL;
    }
    job->p = p;
    job->h = h;
    job->id = id;
    if (flux_job_id_encode (id, "f58", job->f58, sizeof (job->f58)) < 0)
        snprintf (job->f58, sizeof (job->f58), "%ju", (uintmax_t)id);
    if (!(job->sm = dws_jobsm_create (conf, &err))) {
        flux_log (h, LOG_ERR, "dws: job %s: %s", job->f58, err.text);
        free (job);
        return NULL;
    }
    if (flux_jobtap_job_aux_set (p, id, JOBCTX_AUX, job, jobctx_destroy) < 0) {
        flux_log_error (h, "dws: job %s: cannot attach its context", job->f58);
        jobctx_free (job);
        return NULL;
    }
    return job;
}

/* The job's state as the machine names it (NEW, DEPEND, ... INACTIVE). */
static const char *job_state (struct jobctx *job)
{
    flux_plugin_arg_t *args = flux_jobtap_job_lookup (job->p, job->id);
    int state = FLUX_JOB_STATE_INACTIVE;

    if (args)
        (void)flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:i}", "state", &state);
    flux_plugin_arg_destroy (args);
    return flux_job_statetostr (state, "L");
}

/* --- what an action becomes --------------------------------------------- */

static const char *str (json_t *a, const char *key)
{
    const char *s = json_string_value (json_object_get (a, key));
    return s ? s : "";
}

static int do_dependency_add (struct jobctx *job, json_t *a, const flux_msg_t *msg)
{
    (void)msg;
    return flux_jobtap_dependency_add (job->p, job->id, str (a, "name"));
}

static int do_dependency_remove (struct jobctx *job, json_t *a, const flux_msg_t *msg)
{
    (void)msg;
    /* gone already: a repeated resource-update after a plugin reload */
    if (flux_jobtap_dependency_remove (job->p, job->id, str (a, "name")) < 0 && errno != ENOENT)
        return -1;
    return 0;
}

static int do_subscribe (struct jobctx *job, json_t *a, const flux_msg_t *msg)
{
    (void)a;
    (void)msg;
    if (job->subscribed)
        return 0;
    if (flux_jobtap_job_subscribe (job->p, job->id) < 0)
        return -1;
    job->subscribed = true;
    return 0;
}

static void rpc_continuation (flux_future_t *f, void *arg)
{
    struct rpc *r = arg;
    struct jobctx *job = r->job;
    json_t *payload = NULL, *ev;

    rpc_unlink (r);
    if (flux_rpc_get_unpack (f, "o", &payload) == 0)
        ev = json_pack ("{s:s s:s s:b s:O}", "type", "rpc-response", "tag", r->tag, "ok", 1,
                        "payload", payload);
    else {
        int errnum = errno;
        ev = json_pack ("{s:s s:s s:b s:i s:s}", "type", "rpc-response", "tag", r->tag, "ok", 0,
                        "errnum", errnum, "errstr", future_strerror (f, errnum));
    }
    if (ev)
        jobctx_feed (job, ev, NULL);
    else
        flux_log (job->h, LOG_ERR, "dws: job %s: out of memory", job->f58);
    rpc_free (r);
}

static int do_rpc (struct jobctx *job, json_t *a, const flux_msg_t *msg)
{
    struct rpc *r;
    (void)msg;

    if (!(r = calloc (1, sizeof (*r))) || !(r->tag = strdup (str (a, "tag")))) {
        free (r);
        return -1;
    }
    r->job = job;
    if (!(r->f = flux_rpc_pack (job->h, str (a, "topic"), FLUX_NODEID_ANY, 0, "O",
                                json_object_get (a, "payload")))
        || flux_future_then (r->f, -1., rpc_continuation, r) < 0) {
        /* tell the machine, so the job fails instead of waiting */
        int errnum = errno;
        json_t *ev = json_pack ("{s:s s:s s:b s:i s:s}", "type", "rpc-response", "tag", r->tag,
                                "ok", 0, "errnum", errnum, "errstr", strerror (errnum));
        rpc_free (r);
        if (ev)
            jobctx_feed (job, ev, NULL);
        return 0;
    }
    r->next = job->rpcs;
    if (job->rpcs)
        job->rpcs->prev = r;
    job->rpcs = r;
    return 0;
}

static int do_lookup_R (struct jobctx *job, json_t *a, const flux_msg_t *msg)
{
    flux_plugin_arg_t *args = flux_jobtap_job_lookup (job->p, job->id);
    json_t *R = NULL, *ev;
    (void)a;
    (void)msg;

    if (args
        && flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s?o}", "R", &R) == 0 && R)
        ev = json_pack ("{s:s s:O}", "type", "R", "R", R);
    else
        ev = json_pack ("{s:s s:s}", "type", "R", "error", "the job manager has no R for it");
    flux_plugin_arg_destroy (args);
    if (!ev)
        return -1;
    jobctx_feed (job, ev, NULL);
    return 0;
}

static int do_prolog_start (struct jobctx *job, json_t *a, const flux_msg_t *msg)
{
    (void)msg;
    return flux_jobtap_prolog_start (job->p, str (a, "name"));
}

static int do_prolog_finish (struct jobctx *job, json_t *a, const flux_msg_t *msg)
{
    (void)msg;
    return flux_jobtap_prolog_finish (job->p, job->id, str (a, "name"),
                                      (int)json_integer_value (json_object_get (a, "status")));
}

static int do_epilog_start (struct jobctx *job, json_t *a, const flux_msg_t *msg)
{
    (void)msg;
    return flux_jobtap_epilog_start (job->p, str (a, "name"));
}

static int do_epilog_finish (struct jobctx *job, json_t *a, const flux_msg_t *msg)
{
    (void)msg;
    return flux_jobtap_epilog_finish (job->p, job->id, str (a, "name"),
                                      (int)json_integer_value (json_object_get (a, "status")));
}

static double monotime (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A timer started while the job manager replays its jobs at a restart
 * (before its reactor ever ran) was seen to fire at once under flux-core
 * 0.88.  So the timer keeps its own deadline on the monotonic clock and a
 * call before it only starts the timer again for what is left.
 */
static void timer_cb (flux_reactor_t *r, flux_watcher_t *w, int revents, void *arg)
{
    struct jobctx *job = arg;
    double left = job->deadline - monotime ();
    json_t *ev;
    (void)r;
    (void)revents;
    if (left > 0.) {
        flux_timer_watcher_reset (w, left, 0.);
        flux_watcher_start (w);
        return;
    }
    ev = json_pack ("{s:s s:s s:s}", "type", "timer", "key", DWS_JOBWIRE_TIMER, "state",
                    job_state (job));
    if (ev)
        jobctx_feed (job, ev, NULL);
}

static int do_timer_start (struct jobctx *job, json_t *a, const flux_msg_t *msg)
{
    double after = json_number_value (json_object_get (a, "after"));
    (void)msg;

    if (!job->timer
        && !(job->timer = flux_timer_watcher_create (flux_get_reactor (job->h), after, 0.,
                                                     timer_cb, job)))
        return -1;
    job->deadline = monotime () + after;
    flux_watcher_stop (job->timer);
    flux_timer_watcher_reset (job->timer, after, 0.);
    flux_watcher_start (job->timer);
    return 0;
}

static int do_timer_stop (struct jobctx *job, json_t *a, const flux_msg_t *msg)
{
    (void)a;
    (void)msg;
    flux_watcher_stop (job->timer);
    return 0;
}

static int do_raise (struct jobctx *job, json_t *a, const flux_msg_t *msg)
{
    (void)msg;
    return flux_jobtap_raise_exception (job->p, job->id, str (a, "type"),
                                        (int)json_integer_value (json_object_get (a, "severity")),
                                        "%s", str (a, "note"));
}

static int do_jobspec_update (struct jobctx *job, json_t *a, const flux_msg_t *msg)
{
    (void)msg;
    return flux_jobtap_jobspec_update_id_pack (job->p, job->id, "O",
                                               json_object_get (a, "update"));
}

static int do_post_event (struct jobctx *job, json_t *a, const flux_msg_t *msg)
{
    (void)msg;
    return flux_jobtap_event_post_pack (job->p, job->id, str (a, "name"), "O",
                                        json_object_get (a, "context"));
}

/* respond, respond-error and log need only the handle: they also answer
 * requests that reach no job (jobctx_answer_unrouted) */

static int respond (flux_t *h, json_t *a, const flux_msg_t *msg)
{
    if (!msg) {
        errno = EINVAL;
        return -1;
    }
    return flux_respond_pack (h, msg, "O", json_object_get (a, "payload"));
}

static int respond_error (flux_t *h, json_t *a, const flux_msg_t *msg)
{
    if (!msg) {
        errno = EINVAL;
        return -1;
    }
    return flux_respond_error (h, msg, (int)json_integer_value (json_object_get (a, "errnum")),
                               str (a, "errstr"));
}

static void log_line (flux_t *h, const char *who, json_t *a)
{
    const char *level = str (a, "level");
    int pri = !strcmp (level, "err") ? LOG_ERR : !strcmp (level, "warning") ? LOG_WARNING
                                               : !strcmp (level, "debug")   ? LOG_DEBUG
                                                                            : LOG_INFO;
    flux_log (h, pri, "dws: %s%s", who, str (a, "message"));
}

static int do_respond (struct jobctx *job, json_t *a, const flux_msg_t *msg)
{
    return respond (job->h, a, msg);
}

static int do_respond_error (struct jobctx *job, json_t *a, const flux_msg_t *msg)
{
    return respond_error (job->h, a, msg);
}

static int do_log (struct jobctx *job, json_t *a, const flux_msg_t *msg)
{
    char who[64];
    (void)msg;
    snprintf (who, sizeof (who), "job %s: ", job->f58);
    log_line (job->h, who, a);
    return 0;
}

/* Indexed by jobwire.h's action enum: the names live there only. */
static int (*const actions[DWS_JOBWIRE_ACT_COUNT]) (struct jobctx *job, json_t *a,
                                                     const flux_msg_t *msg) = {
    [DWS_JOBWIRE_ACT_DEPENDENCY_ADD] = do_dependency_add,
    [DWS_JOBWIRE_ACT_DEPENDENCY_REMOVE] = do_dependency_remove,
    [DWS_JOBWIRE_ACT_SUBSCRIBE] = do_subscribe,
    [DWS_JOBWIRE_ACT_RPC] = do_rpc,
    [DWS_JOBWIRE_ACT_LOOKUP_R] = do_lookup_R,
    [DWS_JOBWIRE_ACT_PROLOG_START] = do_prolog_start,
    [DWS_JOBWIRE_ACT_PROLOG_FINISH] = do_prolog_finish,
    [DWS_JOBWIRE_ACT_EPILOG_START] = do_epilog_start,
    [DWS_JOBWIRE_ACT_EPILOG_FINISH] = do_epilog_finish,
    [DWS_JOBWIRE_ACT_TIMER_START] = do_timer_start,
    [DWS_JOBWIRE_ACT_TIMER_STOP] = do_timer_stop,
    [DWS_JOBWIRE_ACT_RAISE] = do_raise,
    [DWS_JOBWIRE_ACT_JOBSPEC_UPDATE] = do_jobspec_update,
    [DWS_JOBWIRE_ACT_POST_EVENT] = do_post_event,
    [DWS_JOBWIRE_ACT_RESPOND] = do_respond,
    [DWS_JOBWIRE_ACT_RESPOND_ERROR] = do_respond_error,
    [DWS_JOBWIRE_ACT_LOG] = do_log,
};

static void carry_out (struct jobctx *job, json_t *a, const flux_msg_t *msg)
{
    const char *what = str (a, "action");
    int i = dws_jobwire_action_parse (what);

    if (i < 0 || !actions[i]) {
        flux_log (job->h, LOG_ERR, "dws: job %s: unknown action '%s'", job->f58, what);
        return;
    }
    if (actions[i](job, a, msg) < 0)
        flux_log_error (job->h, "dws: job %s: %s%s%s", job->f58, what, *str (a, "name") ? " " : "",
                        str (a, "name"));
}

void jobctx_answer_unrouted (flux_t *h, json_t *acts, const flux_msg_t *msg)
{
    size_t i;
    json_t *a;

    json_array_foreach (acts, i, a) {
        int rc = 0;
        switch (dws_jobwire_action_parse (str (a, "action"))) {
            case DWS_JOBWIRE_ACT_RESPOND:
                rc = respond (h, a, msg);
                break;
            case DWS_JOBWIRE_ACT_RESPOND_ERROR:
                rc = respond_error (h, a, msg);
                break;
            case DWS_JOBWIRE_ACT_LOG:
                log_line (h, "", a);
                break;
            default:
                flux_log (h, LOG_ERR, "dws: no job to carry out '%s' for", str (a, "action"));
                break;
        }
        if (rc < 0)
            flux_log_error (h, "dws: respond");
    }
}

int jobctx_feed (struct jobctx *job, json_t *event, const flux_msg_t *msg)
{
    dws_error_t err;
    json_t *acts, *a;
    size_t i;
    int rc = 0;

    job->busy++;
    if (!(acts = dws_jobsm_event (job->sm, event, &err))) {
        flux_log (job->h, LOG_ERR, "dws: job %s: %s event: %s", job->f58, str (event, "type"),
                  err.text);
        if (msg && flux_respond_error (job->h, msg, EPROTO, err.text) < 0)
            flux_log_error (job->h, "dws: job %s: respond", job->f58);
        rc = -1;
    }
    json_decref (event);
    json_array_foreach (acts, i, a) {
        /* once the job is gone only the answer to the request and the
         * log lines still have somewhere to go */
        int what = dws_jobwire_action_parse (str (a, "action"));
        if (job->destroyed && what != DWS_JOBWIRE_ACT_RESPOND
            && what != DWS_JOBWIRE_ACT_RESPOND_ERROR && what != DWS_JOBWIRE_ACT_LOG)
            continue;
        carry_out (job, a, msg);
    }
    json_decref (acts);
    if (--job->busy == 0 && job->destroyed)
        jobctx_free (job);
    return rc;
}
