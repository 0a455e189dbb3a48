/* envwait.c - when a job shell has its rabbit environment (envwait.h).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <string.h>

#include "wire/jobwire.h"
#include "envwait.h"

#define PROLOG DWS_JOBWIRE_PROLOG

/* An environment variable name: not empty, no '=' (setenv refuses it). */
static int check_vars (json_t *vars, dws_error_t *err)
{
    const char *name;
    json_t *value;

    if (!json_is_object (vars))
        return dws_errorf (err, DWS_ENVWAIT_EVENT " event: context.variables must be an object");
    json_object_foreach (vars, name, value) {
        if (!*name || strchr (name, '='))
            return dws_errorf (err, DWS_ENVWAIT_EVENT " event: '%s' is not a variable name",
                               name);
        if (!json_is_string (value))
            return dws_errorf (err, DWS_ENVWAIT_EVENT " event: variable %s is not a string",
                               name);
    }
    return 0;
}

enum dws_envwait dws_envwait_entry (const char *line, json_t **vars, dws_error_t *err)
{
    json_t *entry, *context;
    const char *name;
    enum dws_envwait rc = DWS_ENVWAIT_MORE;

    if (!line || !vars) {
        dws_errorf (err, "no eventlog entry");
        return DWS_ENVWAIT_FAIL;
    }
    *vars = NULL;
    if (!(entry = json_loads (line, 0, NULL))
        || !(name = json_string_value (json_object_get (entry, "name")))) {
        json_decref (entry);
        dws_errorf (err, "job eventlog: an entry without a name: %.80s", line);
        return DWS_ENVWAIT_FAIL;
    }
    context = json_object_get (entry, "context");
    if (!strcmp (name, DWS_ENVWAIT_EVENT)) {
        json_t *v = json_object_get (context, "variables");
        if (check_vars (v, err) < 0)
            rc = DWS_ENVWAIT_FAIL;
        else {
            *vars = json_incref (v);
            rc = DWS_ENVWAIT_FOUND;
        }
    }
    else if (!strcmp (name, "exception")) {
        json_t *sev = json_object_get (context, "severity");
        if (json_is_integer (sev) && json_integer_value (sev) == 0) {
            const char *type = json_string_value (json_object_get (context, "type"));
            const char *note = json_string_value (json_object_get (context, "note"));
            dws_errorf (err, "job exception (%s) before the rabbit environment: %s",
                        type ? type : "?", note && *note ? note : "(no note)");
            rc = DWS_ENVWAIT_FAIL;
        }
    }
    else if (!strcmp (name, "start")) {
        dws_errorf (err, "the job started without a " DWS_ENVWAIT_EVENT " event"
                    " (was dws-jobtap.so loaded when the job ran?)");
        rc = DWS_ENVWAIT_FAIL;
    }
    else if (!strcmp (name, "prolog-finish")) {
        const char *desc = json_string_value (json_object_get (context, "description"));
        if (desc && !strcmp (desc, PROLOG)) {
            json_t *status = json_object_get (context, "status");
            if (json_is_integer (status) && json_integer_value (status) != 0)
                dws_errorf (err, "the rabbit setup was abandoned (" PROLOG
                            " prolog status %lld)", (long long)json_integer_value (status));
            else
                dws_errorf (err, "the " PROLOG " prolog finished without a " DWS_ENVWAIT_EVENT
                            " event");
            rc = DWS_ENVWAIT_FAIL;
        }
    }
    json_decref (entry);
    return rc;
}
