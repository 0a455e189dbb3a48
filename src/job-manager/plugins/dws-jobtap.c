/* dws-jobtap.c - the job manager's side of flux-dws: holds rabbit jobs
 * (a `dws-create` dependency, a `dws-setup` prolog, a `dws-epilog`
 * epilog) while the dws service drives their DWS Workflows.
 *
 * A thin adapter: jobtap callbacks and job-manager.dws.* requests become
 * events for the job's libdws machine (jobsm.h), whose actions jobctx.c
 * carries out.  Jobs without attributes.system.dw cost one jansson unpack
 * per callback and nothing else.
 *
 * Load with `flux jobtap load dws-jobtap.so [epilog-timeout=SECONDS]` or
 * from [job-manager] plugins.  Loaded while rabbit jobs are active (after
 * `flux jobtap remove dws`, or a job manager restart), it rebuilds each
 * job's machine from what the job manager knows of the job.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include <flux/core.h>
#include <flux/jobtap.h>
#include <jansson.h>

#include "dataout_hold.h"
#include "jobtap/jobsm.h"
#include "wire/jobwire.h"
#include "jobctx.h"
#include "sched_hold.h"

#define PLUGIN_NAME "dws"

/* The jobtap conf, checked at load; every job's machine is made with it. */
static json_t *plugin_conf (flux_plugin_t *p)
{
    return flux_plugin_aux_get (p, "dws::conf");
}

static bool has_dw (json_t *jobspec)
{
    json_t *dw = NULL;
    return json_unpack (jobspec, "{s:{s:{s:o}}}", "attributes", "system", "dw", &dw) == 0;
}

static int feed_new (struct jobctx *job, json_t *ev)
{
    if (!ev) {
        errno = ENOMEM;
        return -1;
    }
    return jobctx_feed (job, ev, NULL);
}

/* --- jobtap callbacks ------------------------------------------------------ */

static int validate_cb (flux_plugin_t *p, const char *topic, flux_plugin_arg_t *args, void *arg)
{
    json_t *jobspec = NULL;
    dws_error_t err;
    (void)topic;
    (void)arg;

    if (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:o}", "jobspec", &jobspec) < 0)
        return flux_jobtap_reject_job (p, args, "dws: cannot read the jobspec: %s",
                                       flux_plugin_arg_strerror (args));
    if (has_dw (jobspec) && dws_jobsm_validate_jobspec (jobspec, &err) < 0)
        return flux_jobtap_reject_job (p, args, "%s", err.text);
    return 0;
}

/* The job's eventlog, read from the KVS with a synchronous lookup (as the
 * job manager's own restart does): only when the plugin is loaded over
 * active rabbit jobs, once per job that needs it.  NULL with a logged
 * error; *fp is to be destroyed either way.
 */
static const char *eventlog_lookup (flux_plugin_t *p, flux_jobid_t id, const char *f58,
                                    flux_future_t **fp)
{
    flux_t *h = flux_jobtap_get_flux (p);
    const char *text = NULL;
    char key[64];

    *fp = NULL;
    if (flux_job_kvs_key (key, sizeof (key), id, "eventlog") < 0
        || !(*fp = flux_kvs_lookup (h, NULL, 0, key)) || flux_kvs_lookup_get (*fp, &text) < 0) {
        flux_log_error (h, "dws: job %s: cannot read its eventlog", f58);
        return NULL;
    }
    return text;
}

static void f58_of (flux_jobid_t id, char *buf, size_t size)
{
    if (flux_job_id_encode (id, "f58", buf, size) < 0)
        snprintf (buf, size, "%ju", (uintmax_t)id);
}

/* A job the job manager replayed from the KVS at a restart: it knows the
 * job's events (its perilog count among them) but records none as posted,
 * so flux_jobtap_job_event_posted() says no for all of them -- and a
 * held epilog taken as done strands the job in CLEANUP for good.  Read
 * the eventlog instead.  On failure the flags stay as they were, with a
 * message.
 */
static void replayed_flags (flux_plugin_t *p, flux_jobid_t id, int state, bool *start,
                            bool *finish, bool *prolog, bool *epilog)
{
    flux_future_t *f;
    char f58[32];
    const char *text;
    bool s, fi, pr, ep;
    dws_error_t err;

    f58_of (id, f58, sizeof (f58));
    if (!(text = eventlog_lookup (p, id, f58, &f)))
        goto done;
    if (dws_jobsm_eventlog_flags (text, &s, &fi, &pr, &ep, &err) < 0) {
        flux_log (flux_jobtap_get_flux (p), LOG_ERR, "dws: job %s: %s", f58, err.text);
        goto done;
    }
    *start = s;
    *finish = fi;
    *prolog = state == FLUX_JOB_STATE_RUN && pr;
    *epilog = state == FLUX_JOB_STATE_CLEANUP && ep;
done:
    flux_future_destroy (f);
}

/* The dependencies other than dws-create a job in DEPEND holds, from its
 * eventlog (the job manager keeps them to itself); 0 when it cannot be
 * read (logged).
 */
static int other_deps (flux_plugin_t *p, flux_jobid_t id)
{
    flux_future_t *f;
    char f58[32];
    const char *text;
    int n = 0;
    dws_error_t err;

    f58_of (id, f58, sizeof (f58));
    if ((text = eventlog_lookup (p, id, f58, &f))
        && dws_jobsm_eventlog_other_deps (text, &n, &err) < 0) {
        flux_log (flux_jobtap_get_flux (p), LOG_ERR, "dws: job %s: %s", f58, err.text);
        n = 0;
    }
    flux_future_destroy (f);
    return n;
}

/* job.new: at submission the job is NEW and job.state.depend does the
 * rest; a job in any other state is one the plugin was loaded over.
 */
static int new_cb (flux_plugin_t *p, const char *topic, flux_plugin_arg_t *args, void *arg)
{
    flux_jobid_t id;
    json_int_t userid;
    int state;
    json_t *jobspec;
    struct jobctx *job;
    (void)topic;
    (void)arg;

    if (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:I s:I s:i s:o}", "id", &id,
                                "userid", &userid, "state", &state, "jobspec", &jobspec)
        < 0)
        return 0;
    if (state == FLUX_JOB_STATE_DEPEND)
        dataout_hold_depend (p, id, jobspec, true); /* any job: it may hold on one */
    if (state == FLUX_JOB_STATE_NEW || !has_dw (jobspec) || jobctx_get (p, id))
        return 0;
    if (state == FLUX_JOB_STATE_PRIORITY) /* a plugin before this one may have held it */
        sched_hold_priority (p, id, jobspec, NULL, true);
    if (!(job = jobctx_attach (p, id, plugin_conf (p))))
        return -1;
    /* The old plugin's flags died with it; the job's posted events tell
     * them: the dws-setup prolog is held from RUN until dws_environment is
     * posted (then it is finished at once), the dws-epilog from its
     * epilog-start to the end of CLEANUP.  (An epilog-start of another
     * plugin alone would be taken for ours; see flux-jobtap-dws(1).)
     */
    bool start = flux_jobtap_job_event_posted (p, id, "start") > 0;
    bool finish = flux_jobtap_job_event_posted (p, id, "finish") > 0;
    bool prolog = state == FLUX_JOB_STATE_RUN && !start
                  && flux_jobtap_job_event_posted (p, id, "prolog-start") > 0
                  && flux_jobtap_job_event_posted (p, id, "dws_environment") <= 0;
    bool epilog = state == FLUX_JOB_STATE_CLEANUP
                  && flux_jobtap_job_event_posted (p, id, "epilog-start") > 0;
    if (flux_jobtap_job_event_posted (p, id, "submit") <= 0)
        replayed_flags (p, id, state, &start, &finish, &prolog, &epilog);
    return feed_new (job, json_pack ("{s:s s:I s:I s:O s:s s:b s:b s:b s:b s:i}", "type",
                                     "reload", "id", (json_int_t)id, "userid", userid,
                                     "jobspec", jobspec, "state",
                                     flux_job_statetostr (state, "L"), "start_posted", start,
                                     "finish_posted", finish, "prolog_active", prolog,
                                     "epilog_active", epilog, "other_dependencies",
                                     state == FLUX_JOB_STATE_DEPEND ? other_deps (p, id) : 0));
}

/* job.create: a job just submitted, before other plugins add their
 * dependencies (job.dependency.*): its machine follows its events from
 * here.  (At a plugin load job.create comes for every active job: those
 * are job.new's.)
 */
static int create_cb (flux_plugin_t *p, const char *topic, flux_plugin_arg_t *args, void *arg)
{
    flux_jobid_t id;
    int state;
    json_t *jobspec;
    struct jobctx *job;
    (void)topic;
    (void)arg;

    if (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:I s:i s:o}", "id", &id, "state",
                                &state, "jobspec", &jobspec)
            < 0
        || state != FLUX_JOB_STATE_NEW || !has_dw (jobspec) || jobctx_get (p, id))
        return 0;
    if (!(job = jobctx_attach (p, id, plugin_conf (p))))
        return -1;
    return feed_new (job, json_pack ("{s:s}", "type", "create"));
}

/* job.event.dependency-add, job.event.dependency-remove (subscribed) */
static int dependency_cb (flux_plugin_t *p, const char *topic, flux_plugin_arg_t *args,
                          void *arg)
{
    flux_jobid_t id;
    const char *name = NULL;
    json_t *jobspec = NULL;
    struct jobctx *job;
    (void)arg;

    if (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:I s:o s:{s:{s:s}}}", "id", &id,
                                "jobspec", &jobspec, "entry", "context", "description", &name)
            < 0
        || !(job = jobctx_get (p, id)))
        return 0;
    return feed_new (job, json_pack ("{s:s s:s s:O}", "type", strrchr (topic, '.') + 1, "name",
                                     name, "jobspec", jobspec));
}

static int depend_cb (flux_plugin_t *p, const char *topic, flux_plugin_arg_t *args, void *arg)
{
    flux_jobid_t id;
    json_int_t userid;
    json_t *jobspec;
    struct jobctx *job;
    (void)topic;
    (void)arg;

    if (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:I s:I s:o}", "id", &id, "userid",
                                &userid, "jobspec", &jobspec)
        < 0)
        return flux_jobtap_error (p, args, "dws: cannot read the job: %s",
                                  flux_plugin_arg_strerror (args));
    /* any job that depends on one whose copy_out outlives it */
    dataout_hold_depend (p, id, jobspec, false);
    if (!(job = jobctx_get (p, id))) {
        if (!has_dw (jobspec))
            return 0;
        if (!(job = jobctx_attach (p, id, plugin_conf (p))))
            return -1;
    }
    return feed_new (job, json_pack ("{s:s s:I s:I s:O}", "type", "depend", "id",
                                     (json_int_t)id, "userid", userid, "jobspec", jobspec));
}

/* job.state.priority: a rabbit job waits here until the scheduler can
 * judge it (after a restart: sched_hold.h) */
static int priority_cb (flux_plugin_t *p, const char *topic, flux_plugin_arg_t *args,
                        void *arg)
{
    flux_jobid_t id;
    json_t *jobspec;
    (void)topic;
    (void)arg;

    if (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:I s:o}", "id", &id, "jobspec",
                                &jobspec)
            == 0
        && has_dw (jobspec))
        sched_hold_priority (p, id, jobspec, args, false);
    return 0;
}

/* job.priority.get: a held job's priority stays unavailable */
static int priority_get_cb (flux_plugin_t *p, const char *topic, flux_plugin_arg_t *args,
                            void *arg)
{
    flux_jobid_t id;
    (void)topic;
    (void)arg;

    if (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:I}", "id", &id) == 0)
        sched_hold_priority_get (p, id, args);
    return 0;
}

/* sched, inactive: the job left DEPEND (and PRIORITY) */
static int leave_cb (flux_plugin_t *p, const char *topic, flux_plugin_arg_t *args, void *arg)
{
    flux_jobid_t id;
    (void)topic;
    (void)arg;

    if (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:I}", "id", &id) == 0) {
        dataout_hold_leave (p, id);
        sched_hold_leave (p, id);
    }
    return 0;
}

/* run, start, finish, cleanup, free: the event's name is the topic's last
 * word */
static int simple_cb (flux_plugin_t *p, const char *topic, flux_plugin_arg_t *args, void *arg)
{
    flux_jobid_t id;
    struct jobctx *job;
    (void)arg;

    if (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:I}", "id", &id) < 0
        || !(job = jobctx_get (p, id)))
        return 0;
    return feed_new (job, json_pack ("{s:s}", "type", strrchr (topic, '.') + 1));
}

/* release: the exec system gave back (some of) the job's resources */
static int release_cb (flux_plugin_t *p, const char *topic, flux_plugin_arg_t *args, void *arg)
{
    flux_jobid_t id;
    int final = 0;
    struct jobctx *job;
    (void)topic;
    (void)arg;

    if (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:I s:{s:{s?b}}}", "id", &id,
                                "entry", "context", "final", &final)
            < 0
        || !(job = jobctx_get (p, id)))
        return 0;
    return feed_new (job, json_pack ("{s:s s:b}", "type", "release", "final", final));
}

static int exception_cb (flux_plugin_t *p, const char *topic, flux_plugin_arg_t *args,
                         void *arg)
{
    flux_jobid_t id;
    const char *type = NULL, *note = "";
    int severity = -1;
    struct jobctx *job;
    (void)topic;
    (void)arg;

    if (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:I s:{s:{s:s s:i s?s}}}", "id",
                                &id, "entry", "context", "type", &type, "severity", &severity,
                                "note", &note)
            < 0
        || !(job = jobctx_get (p, id)))
        return 0;
    return feed_new (job, json_pack ("{s:s s:s s:i s:s}", "type", "exception", "exc_type", type,
                                     "severity", severity, "note", note));
}

static const struct flux_plugin_handler tab[] = {
    {"job.validate", validate_cb, NULL},
    {"job.create", create_cb, NULL},
    {"job.new", new_cb, NULL},
    {"job.event.dependency-add", dependency_cb, NULL},
    {"job.event.dependency-remove", dependency_cb, NULL},
    {"job.state.depend", depend_cb, NULL},
    {"job.state.priority", priority_cb, NULL},
    {"job.priority.get", priority_get_cb, NULL},
    {"job.state.sched", leave_cb, NULL},
    {"job.state.inactive", leave_cb, NULL},
    {"job.state.run", simple_cb, NULL},
    {"job.event.start", simple_cb, NULL},
    {"job.event.finish", simple_cb, NULL},
    {"job.event.release", release_cb, NULL},
    {"job.state.cleanup", simple_cb, NULL},
    {"job.event.free", simple_cb, NULL},
    {"job.event.exception", exception_cb, NULL},
    {0},
};

/* --- job-manager.dws.* (the dws service's callbacks; owner only) ------------ */

static void respond_errorf (flux_t *h, const flux_msg_t *msg, int errnum, const char *fmt, ...)
    __attribute__ ((format (printf, 4, 5)));

static void respond_errorf (flux_t *h, const flux_msg_t *msg, int errnum, const char *fmt, ...)
{
    char text[512];
    va_list ap;
    va_start (ap, fmt);
    (void)vsnprintf (text, sizeof (text), fmt, ap);
    va_end (ap);
    if (flux_respond_error (h, msg, errnum, text) < 0)
        flux_log_error (h, "dws: respond");
}

static void service_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg, void *arg)
{
    flux_plugin_t *p = arg;
    const char *topic = "", *s = NULL, *method;
    json_t *payload = NULL, *ev = NULL, *jobspec = NULL, *idv;
    flux_plugin_arg_t *args = NULL;
    int state = FLUX_JOB_STATE_INACTIVE;
    struct jobctx *job = NULL;
    (void)mh;

    (void)flux_msg_get_topic (msg, &topic);
    method = strrchr (topic, '.') ? strrchr (topic, '.') + 1 : topic;
    if (flux_request_decode (msg, NULL, &s) == 0 && s)
        payload = json_loads (s, JSON_DECODE_ANY, NULL);
    idv = json_object_get (payload, "id");
    if (json_is_integer (idv) && json_integer_value (idv) >= 0) {
        flux_jobid_t id = (flux_jobid_t)json_integer_value (idv);
        if ((args = flux_jobtap_job_lookup (p, id)))
            (void)flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:i s:o}", "state",
                                          &state, "jobspec", &jobspec);
        job = jobctx_get (p, id);
    }
    if (!job) {
        /* no machine to ask (a malformed payload, no such job, a job
         * without dw): jobsm still decides the answer, as in the harness */
        dws_error_t err;
        json_t *acts = dws_jobsm_unrouted (method, payload,
                                           args && state != FLUX_JOB_STATE_INACTIVE,
                                           jobspec && has_dw (jobspec), &err);
        if (acts)
            jobctx_answer_unrouted (h, acts, msg);
        else
            respond_errorf (h, msg, EPROTO, "dws.%s: %s", method, err.text);
        json_decref (acts);
        goto done;
    }
    if (!strcmp (method, DWS_JOBWIRE_RESOURCE_UPDATE_METHOD)
        || !strcmp (method, DWS_JOBWIRE_DEPENDENCY_METHOD)
        || !strcmp (method, DWS_JOBWIRE_PRESTAGE_UNPIN_METHOD))
        ev = json_pack ("{s:s s:O s:s s:O}", "type", method, "payload", payload, "state",
                        flux_job_statetostr (state, "L"), "jobspec",
                        jobspec ? jobspec : json_null ());
    else if (!strcmp (method, DWS_JOBWIRE_EPILOG_REMOVE_METHOD)
             || !strcmp (method, DWS_JOBWIRE_PRESTAGE_REMOVE_METHOD))
        ev = json_pack ("{s:s s:O s:s}", "type", method, "payload", payload, "state",
                        flux_job_statetostr (state, "L"));
    else
        ev = json_pack ("{s:s s:O}", "type", method, "payload", payload);
    if (!ev) {
        respond_errorf (h, msg, ENOMEM, "dws.%s: out of memory", method);
        goto done;
    }
    (void)jobctx_feed (job, ev, msg);
done:
    flux_plugin_arg_destroy (args);
    json_decref (payload);
}

/* --- load ------------------------------------------------------------------ */

/* Logs, at every load, "dws: epilog timeout = %.3fs" with the value as
 * configured (0.000s without one; <= 0 means none), as the reference does;
 * without a conf also "dws: failed to unpack config: ..." (info: that is
 * not an error).  A conf that is not valid refuses the load.
 */
static int conf_load (flux_plugin_t *p, flux_t *h)
{
    const char *text = flux_plugin_get_conf (p);
    json_error_t jerr;
    dws_error_t err;
    json_t *conf, *t;
    struct dws_jobsm *probe;

    if (!text) {
        flux_log (h, LOG_INFO, "dws: failed to unpack config: no plugin configuration"
                  " (epilog-timeout disabled)");
        flux_log (h, LOG_INFO, "dws: epilog timeout = %.3fs", 0.);
        return 0;
    }
    if (!(conf = json_loads (text, JSON_DECODE_ANY, &jerr))) {
        flux_log (h, LOG_ERR, "dws: failed to unpack config: %s", jerr.text);
        return -1;
    }
    if (!(probe = dws_jobsm_create (conf, &err))) {
        flux_log (h, LOG_ERR, "dws: failed to unpack config: %s", err.text);
        json_decref (conf);
        return -1;
    }
    dws_jobsm_destroy (probe);
    t = json_object_get (conf, "epilog-timeout");
    flux_log (h, LOG_INFO, "dws: epilog timeout = %.3fs", t ? json_number_value (t) : 0.);
    if (flux_plugin_aux_set (p, "dws::conf", conf, (flux_free_f)json_decref) < 0) {
        json_decref (conf);
        return -1;
    }
    return 0;
}

__attribute__ ((visibility ("default"))) int flux_plugin_init (flux_plugin_t *p)
{
    flux_t *h = flux_jobtap_get_flux (p);

    if (flux_plugin_register (p, PLUGIN_NAME, tab) < 0 || conf_load (p, h) < 0
        || dataout_hold_init (p) < 0 || sched_hold_init (p, plugin_conf (p)) < 0)
        return -1;
    /* owner only: flux_jobtap_service_register() gives no other role */
    for (int i = 0; i < dws_jobsm_service_count (); i++) {
        const char *method = dws_jobsm_service_name (i);
        if (flux_jobtap_service_register (p, method, service_cb, p) < 0) {
            flux_log_error (h, "dws: cannot register " DWS_JOBWIRE_TOPIC_PREFIX "%s", method);
            return -1;
        }
    }
    /* flux-dws' own: the service adds or removes dws-limit and removes
     * dws-prestage (jobwire.h); prestage-remove, registered above, is
     * kept for an older flux-dws service */
    if (flux_jobtap_service_register (p, DWS_JOBWIRE_DEPENDENCY_METHOD, service_cb, p) < 0) {
        flux_log_error (h, "dws: cannot register " DWS_JOBWIRE_TOPIC_PREFIX "%s",
                        DWS_JOBWIRE_DEPENDENCY_METHOD);
        return -1;
    }
    return 0;
}
