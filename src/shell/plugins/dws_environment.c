/* dws_environment.c - give a rabbit job's tasks their file system paths.
 *
 * In shell.init, when the jobspec holds attributes.system.dw, read the
 * job's eventlog until dws-jobtap.so's `dws_environment` event and set
 * its variables (DW_JOB_<name>, DW_WORKFLOW_NAME, ...) in the tasks'
 * environment.  The event is posted before the dws-setup prolog finishes,
 * so it is there by the time the shells run; the wait only covers the
 * eventlog reaching the KVS.  libdws (envwait.h) decides which entry ends
 * the wait; an entry that shows the event will never come (a fatal
 * exception, a start without it, the setup abandoned) fails the shell
 * with the reason instead of waiting for the job to be killed.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <errno.h>
#include <stdlib.h>

#define FLUX_SHELL_PLUGIN_NAME "dws_environment"

#include <flux/core.h>
#include <flux/shell.h>
#include <jansson.h>

#include "envwait.h"

static int set_variables (flux_shell_t *shell, json_t *vars)
{
    const char *name;
    json_t *value;

    json_object_foreach (vars, name, value) {
        if (flux_shell_setenvf (shell, 1, name, "%s", json_string_value (value)) < 0)
            return shell_log_errn (errno, "cannot set %s", name);
    }
    return 0;
}

/* Read the eventlog until libdws says the wait is over. */
static int wait_environment (flux_shell_t *shell, flux_jobid_t id)
{
    flux_t *h = flux_shell_get_flux (shell);
    flux_future_t *f;
    const char *line;
    json_t *vars = NULL;
    dws_error_t err = {.text = ""};
    enum dws_envwait verdict = DWS_ENVWAIT_MORE;

    if (!(f = flux_job_event_watch (h, id, "eventlog", 0)))
        return shell_log_errn (errno, "cannot watch the job eventlog");
    while (verdict == DWS_ENVWAIT_MORE) {
        if (flux_job_event_watch_get (f, &line) < 0) {
            int errnum = errno;
            flux_future_destroy (f);
            return shell_log_errn (errnum, "the job eventlog ended without a " DWS_ENVWAIT_EVENT
                                   " event");
        }
        verdict = dws_envwait_entry (line, &vars, &err);
        flux_future_reset (f);
    }
    (void)flux_job_event_watch_cancel (f);
    flux_future_destroy (f);
    if (verdict == DWS_ENVWAIT_FAIL)
        return shell_log_errn (0, "%s", err.text);
    int rc = set_variables (shell, vars);
    json_decref (vars);
    return rc;
}

static int init_cb (flux_plugin_t *p, const char *topic, flux_plugin_arg_t *args, void *arg)
{
    flux_shell_t *shell = flux_plugin_get_shell (p);
    flux_jobid_t id;
    json_t *dw = NULL;
    (void)topic;
    (void)args;
    (void)arg;

    if (!shell)
        return -1;
    if (flux_shell_info_unpack (shell, "{s:I s:{s?{s?{s?o}}}}", "jobid", &id, "jobspec",
                                "attributes", "system", "dw", &dw)
        < 0)
        return shell_log_errn (errno, "cannot read the jobspec");
    if (!dw)
        return 0;
    return wait_environment (shell, id);
}

__attribute__ ((visibility ("default"))) int flux_plugin_init (flux_plugin_t *p)
{
    if (flux_plugin_set_name (p, FLUX_SHELL_PLUGIN_NAME) < 0)
        return -1;
    return flux_plugin_add_handler (p, "shell.init", init_cb, NULL);
}
