/* SPDX-License-Identifier: LGPL-3.0-or-later */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "jobtap/envwait.h"
#include "jsontap.h"

/* Feed one entry; check the verdict, the variables or the message. */
static void entry (const char *line, enum dws_envwait want, const char *expect, const char *what)
{
    json_t *vars = (json_t *)1;
    dws_error_t err = {.text = ""};
    enum dws_envwait rc = dws_envwait_entry (line, &vars, &err);
    ok (rc == want, "%s: verdict", what);
    if (rc == DWS_ENVWAIT_FOUND) {
        char *s = json_dumps (vars, JSON_COMPACT | JSON_SORT_KEYS);
        json_is (s, expect, what);
        free (s);
        json_decref (vars);
    }
    else {
        ok (vars == NULL, "%s: no variables", what);
        is (err.text, expect ? expect : "", "%s: message", what);
    }
}

int main (void)
{
    entry ("{\"timestamp\":1,\"name\":\"submit\",\"context\":{\"userid\":1}}", DWS_ENVWAIT_MORE,
           NULL, "submit: keep reading");
    entry ("{\"timestamp\":1,\"name\":\"prolog-start\",\"context\":{\"description\":"
           "\"dws-setup\"}}",
           DWS_ENVWAIT_MORE, NULL, "prolog-start: keep reading");
    entry ("{\"timestamp\":1,\"name\":\"prolog-finish\",\"context\":{\"description\":"
           "\"other\",\"status\":0}}",
           DWS_ENVWAIT_MORE, NULL, "another plugin's prolog-finish: keep reading");
    entry ("{\"timestamp\":1,\"name\":\"exception\",\"context\":{\"type\":\"dws-node-failure\","
           "\"severity\":1,\"note\":\"c1\"}}",
           DWS_ENVWAIT_MORE, NULL, "a severity 1 exception: keep reading");
    entry ("{\"timestamp\":1,\"name\":\"dws_environment\",\"context\":{\"variables\":"
           "{\"DW_JOB_a\":\"/mnt/nnf/x\",\"DW_WORKFLOW_NAME\":\"fluxjob-1\"}}}",
           DWS_ENVWAIT_FOUND, "{\"DW_JOB_a\":\"/mnt/nnf/x\",\"DW_WORKFLOW_NAME\":\"fluxjob-1\"}",
           "dws_environment: the variables");
    entry ("{\"timestamp\":1,\"name\":\"dws_environment\",\"context\":{\"variables\":{}}}",
           DWS_ENVWAIT_FOUND, "{}", "dws_environment with no variables");
    entry ("{\"timestamp\":1,\"name\":\"exception\",\"context\":{\"type\":\"cancel\","
           "\"severity\":0,\"note\":\"\"}}",
           DWS_ENVWAIT_FAIL, "job exception (cancel) before the rabbit environment: (no note)",
           "a fatal exception ends the wait");
    entry ("{\"timestamp\":1,\"name\":\"start\"}", DWS_ENVWAIT_FAIL,
           "the job started without a dws_environment event (was dws-jobtap.so loaded when "
           "the job ran?)",
           "start first");
    entry ("{\"timestamp\":1,\"name\":\"prolog-finish\",\"context\":{\"description\":"
           "\"dws-setup\",\"status\":1}}",
           DWS_ENVWAIT_FAIL, "the rabbit setup was abandoned (dws-setup prolog status 1)",
           "dws-setup abandoned");
    entry ("{\"timestamp\":1,\"name\":\"prolog-finish\",\"context\":{\"description\":"
           "\"dws-setup\",\"status\":0}}",
           DWS_ENVWAIT_FAIL, "the dws-setup prolog finished without a dws_environment event",
           "dws-setup finished without the event");
    entry ("not json", DWS_ENVWAIT_FAIL, "job eventlog: an entry without a name: not json",
           "garbage line");
    entry ("{\"timestamp\":1}", DWS_ENVWAIT_FAIL,
           "job eventlog: an entry without a name: {\"timestamp\":1}", "no name");
    entry ("{\"name\":\"dws_environment\",\"context\":{}}", DWS_ENVWAIT_FAIL,
           "dws_environment event: context.variables must be an object", "no variables");
    entry ("{\"name\":\"dws_environment\"}", DWS_ENVWAIT_FAIL,
           "dws_environment event: context.variables must be an object", "no context");
    entry ("{\"name\":\"dws_environment\",\"context\":{\"variables\":{\"A\":1}}}",
           DWS_ENVWAIT_FAIL, "dws_environment event: variable A is not a string",
           "a number as a value");
    entry ("{\"name\":\"dws_environment\",\"context\":{\"variables\":{\"A=B\":\"x\"}}}",
           DWS_ENVWAIT_FAIL, "dws_environment event: 'A=B' is not a variable name",
           "'=' in a name");
    entry ("{\"name\":\"dws_environment\",\"context\":{\"variables\":{\"\":\"x\"}}}",
           DWS_ENVWAIT_FAIL, "dws_environment event: '' is not a variable name", "empty name");

    json_t *vars;
    dws_error_t err;
    ok (dws_envwait_entry (NULL, &vars, &err) == DWS_ENVWAIT_FAIL
            && !strcmp (err.text, "no eventlog entry"),
        "NULL line");
    ok (dws_envwait_entry ("{}", NULL, NULL) == DWS_ENVWAIT_FAIL, "NULL vars, NULL err");
    return done_testing ();
}
