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
 * The eventlog is first read through this shell's own broker, whose KVS
 * copy can stop one commit behind rank 0's (flux-core #5657: a watch on a
 * non-leader rank that never wakes).  A shell that has no answer from it
 * within `-o dws-env-fallback=SECONDS` (default 5), or whose watch fails,
 * reads the eventlog from rank 0, which holds the authoritative copy, and
 * says so once at warning level.  A job's shells therefore never wait on
 * their own rank's KVS for good: they end with the variables, or with the
 * reason rank 0's eventlog gives.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#define FLUX_SHELL_PLUGIN_NAME "dws_environment"

#include <flux/core.h>
#include <flux/shell.h>
#include <jansson.h>

#include "jobtap/envwait.h"

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

/* Seconds a shell waits for its own broker's eventlog before reading
 * rank 0's, unless -o dws-env-fallback=SECONDS says otherwise. */
#define DWS_ENV_FALLBACK_DEFAULT 5.0

/* One eventlog watch: through the local broker or on rank 0. */
struct envwatch {
    flux_t *h;
    flux_jobid_t id;
    uint32_t nodeid; /* FLUX_NODEID_ANY (this broker) or 0 */
    flux_future_t *f;
};

static int envwatch_start (struct envwatch *w, uint32_t nodeid)
{
    w->nodeid = nodeid;
    w->f = flux_rpc_pack (w->h, "job-info.eventlog-watch", nodeid, FLUX_RPC_STREAMING,
                          "{s:I s:s s:i}", "id", w->id, "path", "eventlog", "flags", 0);
    return w->f ? 0 : -1;
}

/* Stop a watch without waiting for its end: the broker that holds it may
 * be the one that stopped answering. */
static void envwatch_stop (struct envwatch *w)
{
    if (!w->f)
        return;
    flux_future_t *f = flux_rpc_pack (w->h, "job-info.eventlog-watch-cancel", w->nodeid,
                                      FLUX_RPC_NORESPONSE, "{s:i}", "matchtag",
                                      (int)flux_rpc_get_matchtag (w->f));
    flux_future_destroy (f);
    flux_future_destroy (w->f);
    w->f = NULL;
}

static double monotonic_seconds (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* -o dws-env-fallback=SECONDS, a number >= 0 (0: read rank 0's at once). */
static int fallback_option (flux_shell_t *shell, double *seconds)
{
    double value = DWS_ENV_FALLBACK_DEFAULT;
    int rc = flux_shell_getopt_unpack (shell, "dws-env-fallback", "F", &value);

    if (rc < 0 || !isfinite (value) || value < 0)
        return shell_log_errn (0, "-o dws-env-fallback must be a number of seconds >= 0");
    *seconds = value;
    return 0;
}

/* Read the eventlog until libdws says the wait is over, from rank 0 once
 * the local broker has given no verdict within `fallback` seconds or its
 * watch failed. */
static int wait_environment (flux_shell_t *shell, flux_jobid_t id, double fallback)
{
    flux_t *h = flux_shell_get_flux (shell);
    struct envwatch w = {.h = h, .id = id};
    uint32_t rank = 0;
    const char *line;
    json_t *vars = NULL;
    dws_error_t err = {.text = ""};
    enum dws_envwait verdict = DWS_ENVWAIT_MORE;
    double deadline = monotonic_seconds () + fallback;

    /* on rank 0 the local copy is the authoritative one */
    if (flux_get_rank (h, &rank) < 0)
        return shell_log_errn (errno, "cannot tell this broker's rank");
    if (envwatch_start (&w, rank == 0 ? 0 : FLUX_NODEID_ANY) < 0)
        return shell_log_errn (errno, "cannot watch the job eventlog");
    while (verdict == DWS_ENVWAIT_MORE) {
        if (w.nodeid != 0) {
            double left = deadline - monotonic_seconds ();
            bool late = flux_future_wait_for (w.f, left > 0 ? left : 0.) < 0;
            if (late || flux_job_event_watch_get (w.f, &line) < 0) {
                if (late)
                    shell_warn ("no verdict from the job eventlog read through this broker"
                                " (rank %u) within %.3gs; reading it from rank 0",
                                (unsigned)rank, fallback);
                else
                    shell_warn ("the job eventlog read through this broker (rank %u) failed: %s;"
                                " reading it from rank 0",
                                (unsigned)rank, future_strerror (w.f, errno));
                envwatch_stop (&w);
                if (envwatch_start (&w, 0) < 0)
                    return shell_log_errn (errno, "cannot watch the job eventlog on rank 0");
                continue;
            }
        }
        else if (flux_job_event_watch_get (w.f, &line) < 0) {
            int errnum = errno;
            flux_future_destroy (w.f);
            return shell_log_errn (errnum, "the job eventlog ended without a " DWS_ENVWAIT_EVENT
                                   " event");
        }
        verdict = dws_envwait_entry (line, &vars, &err);
        flux_future_reset (w.f);
    }
    envwatch_stop (&w);
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
    double fallback = DWS_ENV_FALLBACK_DEFAULT;
    if (fallback_option (shell, &fallback) < 0)
        return -1;
    return wait_environment (shell, id, fallback);
}

__attribute__ ((visibility ("default"))) int flux_plugin_init (flux_plugin_t *p)
{
    if (flux_plugin_set_name (p, FLUX_SHELL_PLUGIN_NAME) < 0)
        return -1;
    return flux_plugin_add_handler (p, "shell.init", init_cb, NULL);
}
