/* dataout_hold.c - carry out libdws dataout.h's decisions in the job
 * manager: a dependency added to or removed from a dependent, or its
 * afterok failure raised.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <errno.h>
#include <string.h>
#include <syslog.h>

#include "jobtap/dataout.h"
#include "dataout_hold.h"
#include "wire/jobwire.h"

#define AUX "dws::dataout"

static struct dws_dataout *machine (flux_plugin_t *p)
{
    return flux_plugin_aux_get (p, AUX);
}

static void carry_out (flux_plugin_t *p, json_t *acts)
{
    flux_t *h = flux_jobtap_get_flux (p);
    size_t i;
    json_t *a;

    json_array_foreach (acts, i, a) {
        const char *what = json_string_value (json_object_get (a, "action"));
        const char *name = json_string_value (json_object_get (a, "name"));
        bool quiet = json_is_true (json_object_get (a, "quiet"));
        flux_jobid_t id = (flux_jobid_t)json_integer_value (json_object_get (a, "id"));
        int rc = 0;

        if (!what)
            continue;
        switch (dws_jobwire_action_parse (what)) {
            case DWS_JOBWIRE_ACT_DEPENDENCY_ADD:
                rc = flux_jobtap_dependency_add (p, id, name);
                break;
            case DWS_JOBWIRE_ACT_DEPENDENCY_REMOVE:
                rc = flux_jobtap_dependency_remove (p, id, name);
                break;
            case DWS_JOBWIRE_ACT_RAISE:
                rc = flux_jobtap_raise_exception (
                    p, id, json_string_value (json_object_get (a, "type")),
                    (int)json_integer_value (json_object_get (a, "severity")), "%s",
                    json_string_value (json_object_get (a, "note")));
                break;
            case DWS_JOBWIRE_ACT_POST_EVENT:
                rc = flux_jobtap_event_post_pack (p, id, name, "O",
                                                  json_object_get (a, "context"));
                break;
            default: /* dataout.h returns no other */
                break;
        }
        if (rc < 0 && !quiet)
            flux_log_error (h, "dws: job %ju: %s %s", (uintmax_t)id, what, name ? name : "");
        else if (rc == 0 && name)
            flux_log (h, LOG_INFO, "dws: job %ju: %s %s", (uintmax_t)id, what, name);
    }
}

static int feed (flux_plugin_t *p, json_t *ev, dws_error_t *err)
{
    json_t *acts;
    if (!ev) {
        errno = ENOMEM;
        return dws_errorf (err, "out of memory");
    }
    acts = dws_dataout_event (machine (p), ev, err);
    json_decref (ev);
    if (!acts)
        return -1;
    carry_out (p, acts);
    json_decref (acts);
    return 0;
}

/* job-manager.dws.dataout-begin {id}, dataout-end {id, ok, error?} */
static void service_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg, void *arg)
{
    flux_plugin_t *p = arg;
    const char *topic = "", *s = NULL;
    json_t *payload = NULL;
    dws_error_t err;
    (void)mh;

    (void)flux_msg_get_topic (msg, &topic);
    bool begin = strstr (topic, DWS_JOBWIRE_DATAOUT_BEGIN_METHOD) != NULL;
    if (flux_request_decode (msg, NULL, &s) < 0 || !s
        || !(payload = json_loads (s, 0, NULL)) || !json_is_object (payload)) {
        if (flux_respond_error (h, msg, EPROTO, "dws: a dataout request is a JSON object") < 0)
            flux_log_error (h, "dws: respond");
        json_decref (payload);
        return;
    }
    json_object_set_new (payload, "type", json_string (begin ? "begin" : "end"));
    if (feed (p, payload, &err) < 0) {
        if (flux_respond_error (h, msg, EPROTO, err.text) < 0)
            flux_log_error (h, "dws: respond");
        return;
    }
    if (flux_respond (h, msg, "{}") < 0)
        flux_log_error (h, "dws: respond");
}

/* The service's dws.released answer (a plugin loaded again). */
static void released_cb (flux_future_t *f, void *arg)
{
    flux_plugin_t *p = arg;
    flux_t *h = flux_jobtap_get_flux (p);
    json_t *jobs = NULL;
    dws_error_t err;

    if (flux_rpc_get_unpack (f, "{s:o}", "jobs", &jobs) < 0) {
        /* no service: it tells us of every DataOut it sees end, later */
        const char *why = flux_future_error_string (f);
        flux_log (h, LOG_INFO, "dws: no DataOut list from the dws service: %s",
                  why ? why : strerror (errno));
    }
    else if (feed (p, json_pack ("{s:s s:O}", "type", "pending", "ids", jobs), &err) < 0)
        flux_log (h, LOG_ERR, "dws: the dws service's DataOut list: %s", err.text);
    flux_plugin_aux_delete_value (p, f); /* destroys f */
}

int dataout_hold_init (flux_plugin_t *p)
{
    flux_t *h = flux_jobtap_get_flux (p);
    struct dws_dataout *d = dws_dataout_create ();
    flux_future_t *f;

    if (!d || flux_plugin_aux_set (p, AUX, d, (flux_free_f)dws_dataout_destroy) < 0) {
        dws_dataout_destroy (d);
        return -1;
    }
    if (flux_jobtap_service_register (p, DWS_JOBWIRE_DATAOUT_BEGIN_METHOD, service_cb, p) < 0
        || flux_jobtap_service_register (p, DWS_JOBWIRE_DATAOUT_END_METHOD, service_cb, p) < 0) {
        flux_log_error (h, "dws: cannot register " DWS_JOBWIRE_TOPIC_PREFIX "dataout-*");
        return -1;
    }
    /* the future is the plugin's: a plugin removed before the answer
     * takes it along, so no answer can call into an unloaded plugin */
    if (!(f = flux_rpc (h, "dws.released", "{}", 0, 0))
        || flux_plugin_aux_set (p, NULL, f, (flux_free_f)flux_future_destroy) < 0) {
        flux_log_error (h, "dws: cannot ask dws.released");
        flux_future_destroy (f);
        return 0;
    }
    if (flux_future_then (f, 30., released_cb, p) < 0) {
        flux_log_error (h, "dws: cannot ask dws.released");
        flux_plugin_aux_delete_value (p, f);
    }
    return 0;
}

void dataout_hold_depend (flux_plugin_t *p, flux_jobid_t id, json_t *jobspec, bool reload)
{
    json_t *deps = NULL, *targets, *dep;
    dws_error_t err;
    size_t i;

    if (json_unpack (jobspec, "{s:{s:{s:o}}}", "attributes", "system", "dependencies", &deps)
            < 0
        || !json_is_array (deps))
        return;
    if (!(targets = json_array ()))
        return;
    json_array_foreach (deps, i, dep) {
        const char *scheme = json_string_value (json_object_get (dep, "scheme"));
        const char *value = json_string_value (json_object_get (dep, "value"));
        flux_jobid_t target;
        if (scheme && value && !strncmp (scheme, "after", 5)
            && flux_job_id_parse (value, &target) == 0)
            json_array_append_new (targets, json_pack ("{s:s s:I}", "scheme", scheme, "id",
                                                       (json_int_t)target));
    }
    if (json_array_size (targets) == 0) {
        json_decref (targets);
        return;
    }
    if (feed (p, json_pack ("{s:s s:I s:o s:b}", "type", "depend", "id", (json_int_t)id,
                            "targets", targets, "reload", reload),
              &err)
        < 0)
        flux_log (flux_jobtap_get_flux (p), LOG_ERR, "dws: job %ju: %s", (uintmax_t)id,
                  err.text);
}

void dataout_hold_leave (flux_plugin_t *p, flux_jobid_t id)
{
    dws_error_t err;
    if (dws_dataout_tracked (machine (p)) == 0)
        return;
    if (feed (p, json_pack ("{s:s s:I}", "type", "leave", "id", (json_int_t)id), &err) < 0)
        flux_log (flux_jobtap_get_flux (p), LOG_ERR, "dws: job %ju: %s", (uintmax_t)id,
                  err.text);
}
