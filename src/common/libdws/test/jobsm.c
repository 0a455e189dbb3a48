/* SPDX-License-Identifier: LGPL-3.0-or-later */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "jobtap/jobsm.h"
#include "jsontap.h"

/* JSON is written with ' for " to keep it readable (and ` for ' inside
 * it): q() swaps them.
 */
static char *q (const char *s)
{
    char *out = strdup (s);
    for (char *p = out; p && *p; p++) {
        if (*p == '\'')
            *p = '"';
        else if (*p == '`')
            *p = '\'';
    }
    return out;
}

/* Expected text: JSON with ' for ", or an error message (kept as is). */
static char *expected (const char *s)
{
    char *j = q (s);
    json_t *o = json_loads (j, JSON_DECODE_ANY, NULL);
    if (o) {
        json_decref (o);
        return j;
    }
    free (j);
    return strdup (s);
}

static struct dws_jobsm *sm_new (const char *config)
{
    dws_error_t err;
    char *c = config ? q (config) : NULL;
    struct dws_jobsm *sm = dws_jobsm_create_json (c, &err);
    if (!sm)
        diag ("create: %s", err.text);
    free (c);
    return sm;
}

/* Feed an event; the actions (or the error text) must be `expect`. */
static void ev (struct dws_jobsm *sm, const char *event, const char *expect, const char *what)
{
    dws_error_t err;
    char *e = q (event);
    char *x = expected (expect);
    char *s = dws_jobsm_event_json (sm, e, &err);
    json_is (s ? s : err.text, x, what);
    free (s);
    free (e);
    free (x);
}

/* As ev, the actions compared as written: no explanation added after a
 * raise (the plugin's own epilog timeout is explained when its exception
 * comes back, after the raise that ends the job at once). */
static void ev_raw (struct dws_jobsm *sm, const char *event, const char *expect,
                    const char *what)
{
    dws_error_t err;
    char *e = q (event);
    char *x = q (expect);
    char *s = dws_jobsm_event_json (sm, e, &err);
    json_t *got = s ? json_loads (s, 0, NULL) : NULL;
    json_t *want = json_loads (x, 0, NULL);
    if (!ok (got && want && json_equal (got, want), "%s", what))
        diag ("got: %s", s ? s : err.text);
    json_decref (got);
    json_decref (want);
    free (s);
    free (e);
    free (x);
}

/* The value of one state key, as compact JSON text. */
static char *state_of (struct dws_jobsm *sm, const char *key)
{
    char *s = dws_jobsm_state_json (sm);
    json_t *o = s ? json_loads (s, 0, NULL) : NULL;
    char *v = json_dumps (json_object_get (o, key), JSON_ENCODE_ANY | JSON_COMPACT);
    json_decref (o);
    free (s);
    return v;
}

static void state_is (struct dws_jobsm *sm, const char *key, const char *expect, const char *what)
{
    char *v = state_of (sm, key);
    is (v, expect, "%s", what);
    free (v);
}

#define DW "#DW jobdw type=xfs capacity=1GiB name=x"
#define RES "[{'type':'node','count':1}]"
#define JOBSPEC "{'resources':" RES ",'attributes':{'system':{'dw':'" DW "'}}}"
#define DEPEND "{'type':'depend','id':42,'userid':1000,'jobspec':" JOBSPEC "}"
#define DEPEND_ACTS                                                                            \
    "[{'action':'dependency-add','name':'dws-create'},{'action':'subscribe'},"                 \
    "{'action':'rpc','topic':'dws.create','tag':'create','payload':{'jobid':42,"               \
    "'userid':1000,'dw_directives':'" DW "','resources':" RES ",'failure_tolerance':0}}]"
#define RESP(tag) "{'type':'rpc-response','tag':'" tag "','ok':true,'payload':{'success':true}}"
#define FAIL(tag, msg) "{'type':'rpc-response','tag':'" tag "','ok':false,'errnum':5,'errstr':'" msg "'}"
#define UPDATE "{'type':'resource-update','state':'DEPEND','jobspec':" JOBSPEC ","            \
    "'payload':{'id':42,'resources':[{'type':'slot'}],'exclude':null}}"
#define UPDATE_ACTS                                                                            \
    "[{'action':'jobspec-update','update':{'resources':[{'type':'slot'}]}},"                   \
    "{'action':'dependency-remove','name':'dws-create'},{'action':'respond','payload':{}}]"
#define RUN_ACTS                                                                               \
    "[{'action':'prolog-start','name':'dws-setup'},{'action':'subscribe'},"                    \
    "{'action':'lookup-R'}]"
#define R_EV "{'type':'R','R':{'version':1}}"
#define R_ACTS                                                                                 \
    "[{'action':'rpc','topic':'dws.setup','tag':'setup','payload':{'jobid':42,"                \
    "'R':{'version':1}}}]"
#define VARS "{'DW_JOB_x':'/mnt/x','DW_WORKFLOW_NAME':'fluxjob-42'}"
#define PROLOG_REMOVE "{'type':'prolog-remove','payload':{'id':42,'variables':" VARS "}}"
#define PROLOG_REMOVE_ACTS                                                                     \
    "[{'action':'post-event','name':'dws_environment','context':{'variables':" VARS "}},"      \
    "{'action':'prolog-finish','name':'dws-setup','status':0},"                              \
    "{'action':'respond','payload':{}}]"
#define EPILOG_ACTS(started)                                                                   \
    "[{'action':'epilog-start','name':'dws-epilog'},"                                          \
    "{'action':'rpc','topic':'dws.post_run','tag':'post_run','payload':{'jobid':42,"           \
    "'run_started':" started "}}]"
#define EPILOG_TIMER_ACTS(started)                                                             \
    "[{'action':'epilog-start','name':'dws-epilog'},"                                          \
    "{'action':'timer-start','key':'epilog-timeout','after':30.0},"                            \
    "{'action':'rpc','topic':'dws.post_run','tag':'post_run','payload':{'jobid':42,"           \
    "'run_started':" started "}}]"
#define EPILOG_REMOVE(state) "{'type':'epilog-remove','state':'" state "','payload':{'id':42}}"
#define RESPOND "[{'action':'respond','payload':{}}]"
#define EXC(t) "{'type':'exception','exc_type':'" t "','severity':0}"
#define TEARDOWN                                                                               \
    "[{'action':'rpc','topic':'dws.teardown','tag':'teardown','payload':{'jobid':42}}]"
#define PROLOG_FAIL "[{'action':'prolog-finish','name':'dws-setup','status':1}]"
#define NOTE "DWS workflow interactions failed: "

/* The broker's answer to an RPC no service is registered for. */
static void enosys_event (char *buf, size_t size, const char *tag)
{
    snprintf (buf, size,
              "{'type':'rpc-response','tag':'%s','ok':false,'errnum':%d,"
              "'errstr':'Function not implemented'}",
              tag, ENOSYS);
}

/* A job walked through depend and resource-update (in SCHED). */
static struct dws_jobsm *scheduled (const char *config)
{
    struct dws_jobsm *sm = sm_new (config);
    ev (sm, DEPEND, DEPEND_ACTS, "setup: depend");
    ev (sm, RESP ("create"), "[]", "setup: create ok");
    ev (sm, UPDATE, UPDATE_ACTS, "setup: resource-update");
    return sm;
}

/* ... and through run, R and prolog-remove (running, start posted). */
static struct dws_jobsm *running (const char *config)
{
    struct dws_jobsm *sm = scheduled (config);
    ev (sm, "{'type':'run'}", RUN_ACTS, "setup: run");
    ev (sm, R_EV, R_ACTS, "setup: R");
    ev (sm, RESP ("setup"), "[]", "setup: setup ok");
    ev (sm, PROLOG_REMOVE, PROLOG_REMOVE_ACTS, "setup: prolog-remove");
    ev (sm, "{'type':'start'}", "[]", "setup: start");
    return sm;
}

static void config (void)
{
    struct dws_jobsm *sm;
    dws_error_t err;

    sm = sm_new (NULL);
    ok (sm != NULL, "no config");
    state_is (sm, "epilog_timeout", "0.0", "no config: no epilog timeout");
    dws_jobsm_destroy (sm);
    sm = sm_new ("null");
    ok (sm != NULL, "JSON null config");
    dws_jobsm_destroy (sm);
    sm = sm_new ("{'epilog-timeout':2.5,'other':1}");
    state_is (sm, "epilog_timeout", "2.5", "epilog-timeout read, other keys ignored");
    dws_jobsm_destroy (sm);
    sm = sm_new ("{'epilog-timeout':7}");
    state_is (sm, "epilog_timeout", "7.0", "an integer epilog-timeout");
    dws_jobsm_destroy (sm);
    sm = sm_new ("{'epilog-timeout':-1}");
    state_is (sm, "epilog_timeout", "0.0", "a negative epilog-timeout disables it");
    dws_jobsm_destroy (sm);

    ok (!dws_jobsm_create_json ("{\"epilog-timeout\":\"5\"}", &err), "string epilog-timeout");
    is (err.text, "dws jobtap config: epilog-timeout must be a number of seconds",
        "... is refused");
    ok (!dws_jobsm_create_json ("[]", &err), "a list config");
    is (err.text, "dws jobtap config must be an object", "... is refused");
    ok (!dws_jobsm_create_json ("{", &err), "bad JSON config");
    ok (!strncmp (err.text, "dws jobtap config: invalid JSON: ", 33), "... is refused: %s",
        err.text);
    dws_jobsm_destroy (NULL);
    ok (1, "destroy (NULL) is fine");
}

static void validate_is (const char *jobspec, const char *expect, const char *what)
{
    dws_error_t err;
    char *j = q (jobspec);
    int rc = dws_jobsm_validate_jobspec_json (j, &err);
    is (rc == 0 ? "ok" : err.text, expect, "%s", what);
    free (j);
}

#define MALFORMED_DW "Malformed #DW directives: dw must be a string or a list of strings"
#define TOLERANCE "dw_failure_tolerance must be a positive integer"

static void validate (void)
{
    validate_is ("{'resources':[]}", "ok", "no dw");
    validate_is ("{'attributes':{'system':{'dw_failure_tolerance':'x'}}}", "ok",
                 "no dw: the tolerance is none of our business");
    validate_is ("{'attributes':{'system':{'dw':'" DW "'}}}", "ok", "dw string");
    validate_is ("{'attributes':{'system':{'dw':['" DW "','#DW copy_in a=b']}}}", "ok",
                 "dw list of strings");
    validate_is ("{'attributes':{'system':{'dw':'" DW "','dw_failure_tolerance':0}}}", "ok",
                 "tolerance 0");
    validate_is ("{'attributes':{'system':{'dw':'" DW "','dw_failure_tolerance':3}}}", "ok",
                 "tolerance 3");
    validate_is ("{'attributes':{'system':{'dw':5}}}", MALFORMED_DW, "dw number");
    validate_is ("{'attributes':{'system':{'dw':null}}}", MALFORMED_DW, "dw null");
    validate_is ("{'attributes':{'system':{'dw':['" DW "',1]}}}", MALFORMED_DW,
                 "dw list with a number");
    validate_is ("{'attributes':{'system':{'dw':{'a':1}}}}", MALFORMED_DW, "dw object");
    /* job.validate leaves the tolerance to depend (a job exception) */
    validate_is ("{'attributes':{'system':{'dw':'" DW "','dw_failure_tolerance':-1}}}", "ok",
                 "validate: tolerance -1 accepted");
    validate_is ("{'attributes':{'system':{'dw':'" DW "','dw_failure_tolerance':'1'}}}", "ok",
                 "validate: tolerance string accepted");
    validate_is ("[]", "jobspec must be an object", "jobspec list");
    validate_is ("{", "jobspec: invalid JSON: string or '}' expected near end of file (line 1,"
                      " column 1)",
                 "jobspec bad JSON");
}

static void check_is (const char *jobspec, const char *expect, const char *what)
{
    dws_error_t err;
    char *j = q (jobspec);
    int rc = dws_jobsm_check_jobspec_json (j, &err);
    is (rc == 0 ? "ok" : err.text, expect, "%s", what);
    free (j);
}

static void check (void)
{
    check_is ("{'resources':[]}", "ok", "check: no dw");
    check_is ("{'attributes':{'system':{'dw_failure_tolerance':-1}}}", "ok",
              "check: no dw: the tolerance is none of our business");
    check_is ("{'attributes':{'system':{'dw':'" DW "'}}}", "ok", "check: no tolerance");
    check_is ("{'attributes':{'system':{'dw':'" DW "','dw_failure_tolerance':0}}}", "ok",
              "check: tolerance 0");
    check_is ("{'attributes':{'system':{'dw':'" DW "','dw_failure_tolerance':3}}}", "ok",
              "check: tolerance 3");
    check_is ("{'attributes':{'system':{'dw':5,'dw_failure_tolerance':-1}}}", MALFORMED_DW,
              "check: a bad dw first");
    check_is ("{'attributes':{'system':{'dw':'" DW "','dw_failure_tolerance':-1}}}", TOLERANCE,
              "check: tolerance -1");
    check_is ("{'attributes':{'system':{'dw':'" DW "','dw_failure_tolerance':'1'}}}", TOLERANCE,
              "check: tolerance string");
    check_is ("{'attributes':{'system':{'dw':'" DW "','dw_failure_tolerance':1.0}}}", TOLERANCE,
              "check: tolerance real");
    check_is ("{'attributes':{'system':{'dw':'" DW "','dw_failure_tolerance':true}}}",
              TOLERANCE, "check: tolerance boolean");
    check_is ("{'attributes':{'system':{'dw':'" DW "','dw_failure_tolerance':null}}}",
              TOLERANCE, "check: tolerance null");
    check_is ("[]", "jobspec must be an object", "check: jobspec list");
    check_is ("{", "jobspec: invalid JSON: string or '}' expected near end of file (line 1,"
                   " column 1)",
              "check: jobspec bad JSON");
}

static void bad_events (void)
{
    struct dws_jobsm *sm = sm_new (NULL);
    dws_error_t err;
    char *before, *after;

    ev (sm, "[]", "an event must be an object", "event list");
    ev (sm, "{}", "an event needs a 'type' string", "no type");
    ev (sm, "{'type':1}", "an event needs a 'type' string", "type number");
    ev (sm, "{'type':'bogus'}", "unknown event type 'bogus'", "unknown type");
    ok (!dws_jobsm_event_json (sm, "{", &err)
            && !strncmp (err.text, "event: invalid JSON", 19),
        "bad JSON: %s", err.text);
    ok (!dws_jobsm_event_json (NULL, "{\"type\":\"run\"}", &err)
            && !strcmp (err.text, "no job state machine"),
        "NULL machine");
    ev (sm, "{'type':'run'}", "run event: the job is not known yet (no depend or reload event)",
        "run before depend");
    ev (sm, "{'type':'start'}",
        "start event: the job is not known yet (no depend or reload event)", "start before depend");
    ev (sm, "{'type':'depend','userid':1,'jobspec':{}}",
        "depend event: 'id' must be an integer >= 0", "depend without id");
    ev (sm, "{'type':'depend','id':-1,'userid':1,'jobspec':{}}",
        "depend event: 'id' must be an integer >= 0", "depend negative id");
    ev (sm, "{'type':'depend','id':1,'userid':'x','jobspec':{}}",
        "depend event: 'userid' must be an integer >= 0", "depend userid string");
    ev (sm, "{'type':'depend','id':1,'userid':1}", "depend event: 'jobspec' must be an object",
        "depend without jobspec");
    before = dws_jobsm_state_json (sm);
    ev (sm, DEPEND, DEPEND_ACTS, "depend");
    ev (sm, DEPEND, "depend event: job 42 has had its depend event", "duplicate depend");
    ev (sm, "{'type':'reload','id':42,'userid':1,'jobspec':{},'state':'SCHED'}",
        "reload event: the machine already holds job 42 (a reload needs a new machine)",
        "reload after depend");
    free (before);

    /* a bad event leaves the machine unchanged */
    before = dws_jobsm_state_json (sm);
    ev (sm, "{'type':'exception','exc_type':'cancel','severity':'0'}",
        "exception event: 'severity' must be an integer", "exception severity string");
    ev (sm, "{'type':'exception','severity':0}", "exception event: 'exc_type' must be a string",
        "exception without type");
    ev (sm, "{'type':'timer','key':'other','state':'CLEANUP'}",
        "timer event: unknown timer 'other'", "unknown timer");
    ev (sm, "{'type':'timer','key':'epilog-timeout'}", "timer event: 'state' must be a string",
        "timer without state");
    ev (sm, "{'type':'R','R':{}}", "R event: no R lookup is outstanding", "R without lookup");
    ev (sm, "{'type':'rpc-response','tag':'setup','ok':true}",
        "rpc-response event: no dws.setup RPC is outstanding", "response to nothing");
    ev (sm, "{'type':'rpc-response','tag':'nope','ok':true}",
        "rpc-response event: unknown tag 'nope'", "unknown tag");
    ev (sm, "{'type':'rpc-response','ok':true}", "rpc-response event: 'tag' must be a string",
        "no tag");
    ev (sm, "{'type':'rpc-response','tag':'create'}",
        "rpc-response event: 'ok' must be a boolean", "no ok");
    ev (sm, "{'type':'rpc-response','tag':'create','ok':false,'errnum':'5'}",
        "rpc-response event: 'errnum' must be an integer", "errnum string");
    ev (sm, "{'type':'rpc-response','tag':'create','ok':false,'errstr':5}",
        "rpc-response event: 'errstr' must be a string", "errstr number");
    ev (sm, "{'type':'resource-update','state':'DEPEND','payload':{'id':42}}",
        "resource-update event: 'jobspec' must be an object", "resource-update without jobspec");
    ev (sm, "{'type':'resource-update','jobspec':{},'payload':{'id':42}}",
        "resource-update event: 'state' must be a string", "resource-update without state");
    ev (sm, "{'type':'epilog-remove','payload':{'id':42}}",
        "epilog-remove event: 'state' must be a string", "epilog-remove without state");
    ev (sm, "{'type':'release'}", "release event: 'final' must be a boolean",
        "release without final");
    ev (sm, "{'type':'release','final':1}", "release event: 'final' must be a boolean",
        "release final not boolean");
    ev (sm, "{'type':'prolog-remove','payload':{'id':43,'variables':{}}}",
        "prolog-remove event: payload id 43 is not this job's id 42", "payload id of another job");
    after = dws_jobsm_state_json (sm);
    is (after, before, "bad events left the machine unchanged");
    free (before);
    free (after);
    dws_jobsm_destroy (sm);
}

static void no_dw (void)
{
    struct dws_jobsm *sm = sm_new ("{'epilog-timeout':30}");
    ev (sm, "{'type':'depend','id':42,'userid':1,'jobspec':{'resources':[]}}", "[]",
        "no dw: depend does nothing");
    state_is (sm, "has_dw", "false", "no dw: inert");
    ev (sm, "{'type':'run'}", "[]", "no dw: run");
    ev (sm, "{'type':'start'}", "[]", "no dw: start");
    ev (sm, EXC ("cancel"), "[]", "no dw: exception");
    ev (sm, "{'type':'finish'}", "[]", "no dw: finish");
    ev (sm, "{'type':'cleanup'}", "[]", "no dw: cleanup");
    ev (sm, "{'type':'release','final':true}", "[]", "no dw: release");
    ev (sm, "{'type':'free'}", "[]", "no dw: free");
    ev (sm, "{'type':'timer','key':'epilog-timeout','state':'CLEANUP'}", "[]", "no dw: timer");
    ev (sm, PROLOG_REMOVE,
        "[{'action':'respond-error','errnum':22,"
        "'errstr':'dws.prolog-remove: job 42 has no #DW directives'}]",
        "no dw: a service request is refused without an exception");
    ev (sm, EPILOG_REMOVE ("CLEANUP"),
        "[{'action':'respond-error','errnum':22,"
        "'errstr':'dws.epilog-remove: job 42 has no #DW directives'}]",
        "no dw: epilog-remove refused");
    ev (sm, RESP ("create"), "rpc-response event: no dws.create RPC is outstanding",
        "no dw: no RPC was sent");
    dws_jobsm_destroy (sm);
}

static void invalid_dw (void)
{
    struct dws_jobsm *sm = sm_new (NULL);
    ev (sm, "{'type':'depend','id':42,'userid':1,'jobspec':{'attributes':{'system':{'dw':7}}}}",
        "[{'action':'raise','type':'dws-create','severity':0,'note':'" NOTE MALFORMED_DW "'}]",
        "invalid dw at depend: dws-create exception");
    ev (sm, EXC ("dws-create"), "[]", "its exception event does nothing");
    ev (sm, "{'type':'cleanup'}", "[]", "no workflow was asked for: no epilog");
    dws_jobsm_destroy (sm);
}

/* A bad dw_failure_tolerance goes to the service as given, in the
 * reference's order: dependency, dws.create, the service's refusal as the
 * dws-create exception, and the epilog of any failed create.
 */
static void bad_tolerance_is (const char *tol, const char *what)
{
    struct dws_jobsm *sm = sm_new (NULL);
    char depend[512], acts[1024], label[128];

    snprintf (depend, sizeof (depend),
              "{'type':'depend','id':42,'userid':1,'jobspec':{'attributes':{'system':{'dw':'" DW
              "','dw_failure_tolerance':%s}}}}",
              tol);
    snprintf (acts, sizeof (acts),
              "[{'action':'dependency-add','name':'dws-create'},{'action':'subscribe'},"
              "{'action':'rpc','topic':'dws.create','tag':'create','payload':{'jobid':42,"
              "'userid':1,'dw_directives':'" DW "','resources':null,'failure_tolerance':%s}}]",
              tol);
    snprintf (label, sizeof (label), "%s: dependency, dws.create with it as given", what);
    ev (sm, depend, acts, label);
    ev (sm,
        "{'type':'rpc-response','tag':'create','ok':true,'payload':{'success':false,"
        "'errstr':'" TOLERANCE "'}}",
        "[{'action':'raise','type':'dws-create','severity':0,'note':'" NOTE TOLERANCE "'}]",
        "the service refuses it: the dws-create exception with its words");
    ev (sm, EXC ("dws-create"), "[]", "its exception event: nothing more");
    ev (sm, "{'type':'cleanup'}", EPILOG_ACTS ("false"),
        "cleanup: the epilog, dws.post_run (run_started false), as after any failed create");
    ev (sm, RESP ("post_run"), "[]", "the service answers it");
    ev (sm, EPILOG_REMOVE ("CLEANUP"),
        "[{'action':'epilog-finish','name':'dws-epilog','status':0},"
        "{'action':'respond','payload':{}}]",
        "its epilog-remove ends the epilog");
    dws_jobsm_destroy (sm);
}

static void bad_tolerance (void)
{
    bad_tolerance_is ("-2", "negative dw_failure_tolerance");
    bad_tolerance_is ("'two'", "a string dw_failure_tolerance");
    bad_tolerance_is ("1.5", "a real dw_failure_tolerance");
    bad_tolerance_is ("null", "a null dw_failure_tolerance");
}

/* --- persistent storage: dws.create after the job's other dependencies ---- */

#define PDW "#DW persistentdw name=keep"
#define PSPEC "{'resources':" RES ",'attributes':{'system':{'dw':'" PDW "'}}}"
#define PDEPEND "{'type':'depend','id':42,'userid':1000,'jobspec':" PSPEC "}"
#define PCREATE                                                                                \
    "{'action':'rpc','topic':'dws.create','tag':'create','payload':{'jobid':42,"               \
    "'userid':1000,'dw_directives':'" PDW "','resources':" RES ",'failure_tolerance':0}}"
#define HOLD_ACTS(n)                                                                           \
    "[{'action':'dependency-add','name':'dws-create'},{'action':'subscribe'},"                 \
    "{'action':'log','level':'info','message':'job 42 uses persistent storage and waits for "  \
    n "'}]"
#define DEP(kind, name) "{'type':'dependency-" kind "','name':'" name "'}"
#define DEP_REMOVE(name, spec)                                                                 \
    "{'type':'dependency-remove','name':'" name "','jobspec':" spec "}"

/* the machine of a job submitted with `after` dependencies (already
 * added when depend comes, as flux-core's dependency-after adds them) */
static struct dws_jobsm *submitted (int ndeps)
{
    struct dws_jobsm *sm = sm_new (NULL);
    ev (sm, "{'type':'create'}", "[{'action':'subscribe'}]",
        "persistent: create subscribes before other plugins add dependencies");
    for (int i = 0; i < ndeps; i++)
        ev (sm, i ? DEP ("add", "after-finish=f2") : DEP ("add", "after-success=f1"), "[]",
            "persistent: another plugin's dependency-add is counted");
    return sm;
}

/* the machine of a persistentdw job the plugin was loaded over in DEPEND,
 * holding `others` other dependencies */
static struct dws_jobsm *reloaded_depend (const char *others, const char *what)
{
    struct dws_jobsm *sm = sm_new (NULL);
    char event[512];

    snprintf (event, sizeof (event),
              "{'type':'reload','id':42,'userid':1000,'jobspec':" PSPEC
              ",'state':'DEPEND','other_dependencies':%s}",
              others);
    ev (sm, event, "[{'action':'subscribe'}]", what);
    return sm;
}

static void persistent (void)
{
    struct dws_jobsm *sm;
    char *before, *after;

    /* persistentdw with an afterok: held until it is gone */
    sm = submitted (1);
    state_is (sm, "other_deps", "1", "persistent: one dependency held");
    ev (sm, PDEPEND,
        HOLD_ACTS ("1 other dependency: dws.create is sent once it is removed"),
        "persistentdw with another dependency: dws-create held, no dws.create yet");
    state_is (sm, "create_deferred", "true", "persistent: create deferred");
    state_is (sm, "created", "false", "persistent: no Workflow asked for");
    ev (sm, DEP ("add", "dws-create"), "[]", "persistent: our own dependency-add is not counted");
    ev (sm, RESP ("create"), "rpc-response event: no dws.create RPC is outstanding",
        "persistent: no dws.create outstanding");
    /* the last removal without a jobspec is a bad event: nothing changes */
    before = dws_jobsm_state_json (sm);
    ev (sm, DEP ("remove", "after-success=f1"),
        "dependency-remove event: 'jobspec' must be an object",
        "persistent: the removal that sends dws.create needs the jobspec");
    after = dws_jobsm_state_json (sm);
    is (after, before, "persistent: ... and leaves the machine unchanged");
    free (before);
    free (after);
    ev (sm, DEP_REMOVE ("after-success=f1", PSPEC), "[" PCREATE "]",
        "persistent: the other dependency removed: dws.create now");
    state_is (sm, "created", "true", "persistent: created");
    ev (sm, RESP ("create"), "[]", "persistent: create ok");
    ev (sm,
        "{'type':'resource-update','state':'DEPEND','jobspec':" PSPEC ","
        "'payload':{'id':42,'resources':[{'type':'slot'}],'exclude':null}}",
        UPDATE_ACTS, "persistent: Proposal done: dws-create removed");
    ev (sm, DEP ("remove", "dws-create"), "[]", "persistent: our own removal: nothing");
    dws_jobsm_destroy (sm);

    /* two dependencies: the second removal sends it */
    sm = submitted (2);
    ev (sm, PDEPEND,
        HOLD_ACTS ("2 other dependencies: dws.create is sent once they are removed"),
        "persistent: two other dependencies");
    ev (sm, DEP_REMOVE ("after-finish=f2", PSPEC), "[]", "persistent: one left: still held");
    ev (sm, DEP_REMOVE ("after-success=f1", PSPEC), "[" PCREATE "]",
        "persistent: none left: dws.create");
    dws_jobsm_destroy (sm);

    /* destroy_persistent waits too; so does a preset name (only the service
     * knows what it holds) */
    sm = submitted (1);
    ev (sm,
        "{'type':'depend','id':42,'userid':1000,'jobspec':{'attributes':{'system':"
        "{'dw':'#DW destroy_persistent name=keep'}}}}",
        HOLD_ACTS ("1 other dependency: dws.create is sent once it is removed"),
        "destroy_persistent with another dependency: held");
    dws_jobsm_destroy (sm);
    sm = submitted (1);
    ev (sm,
        "{'type':'depend','id':42,'userid':1000,'jobspec':{'attributes':{'system':"
        "{'dw':['" DW "','site-preset']}}}}",
        HOLD_ACTS ("1 other dependency: dws.create is sent once it is removed"),
        "a preset name with another dependency: held");
    dws_jobsm_destroy (sm);

    /* no persistent storage, or no other dependency: dws.create at once */
    sm = submitted (1);
    ev (sm, DEPEND, DEPEND_ACTS, "jobdw with another dependency: dws.create at depend");
    ev (sm, DEP_REMOVE ("after-success=f1", JOBSPEC), "[]", "its removal: nothing more");
    dws_jobsm_destroy (sm);
    sm = submitted (0);
    ev (sm, PDEPEND,
        "[{'action':'dependency-add','name':'dws-create'},{'action':'subscribe'}," PCREATE "]",
        "persistentdw without another dependency: dws.create at depend");
    dws_jobsm_destroy (sm);
    sm = submitted (1);
    ev (sm, DEP ("remove", "after-success=f1"), "[]",
        "a dependency removed before depend (its job had ended)");
    ev (sm, PDEPEND,
        "[{'action':'dependency-add','name':'dws-create'},{'action':'subscribe'}," PCREATE "]",
        "persistentdw whose dependency is gone: dws.create at depend");
    dws_jobsm_destroy (sm);

    /* cancelled while it waits: no Workflow, no epilog */
    sm = submitted (1);
    ev (sm, PDEPEND,
        HOLD_ACTS ("1 other dependency: dws.create is sent once it is removed"),
        "persistent: held");
    ev (sm, EXC ("cancel"), "[]", "persistent: cancelled while held");
    ev (sm, DEP_REMOVE ("after-success=f1", PSPEC), "[]",
        "persistent: a removal after that sends nothing");
    ev (sm, "{'type':'cleanup'}", "[]", "persistent: no Workflow, no epilog");
    ev (sm, "{'type':'free'}", "[]", "persistent: nor at free");
    dws_jobsm_destroy (sm);

    /* a severity-1 exception does not end the wait */
    sm = submitted (1);
    ev (sm, PDEPEND,
        HOLD_ACTS ("1 other dependency: dws.create is sent once it is removed"),
        "persistent: held (severity 1 case)");
    ev (sm, "{'type':'exception','exc_type':'test','severity':1}", "[]",
        "persistent: a non-fatal exception");
    ev (sm, DEP_REMOVE ("after-success=f1", PSPEC), "[" PCREATE "]",
        "persistent: still sent when the dependency goes");
    dws_jobsm_destroy (sm);

    /* the plugin reloaded while the job waits */
    sm = reloaded_depend ("1", "reload in DEPEND, waiting for another dependency");
    state_is (sm, "create_deferred", "true", "reload: still deferred");
    ev (sm, PDEPEND, "[]", "reload: the depend of a jobtap load repeats nothing");
    ev (sm, DEP_REMOVE ("after-success=f1", PSPEC), "[" PCREATE "]",
        "reload: the dependency removed: dws.create");
    dws_jobsm_destroy (sm);
    sm = reloaded_depend ("0", "reload in DEPEND, nothing else held");
    state_is (sm, "created", "true", "reload: dws.create was sent before");
    ev (sm, PDEPEND,
        "[{'action':'dependency-add','name':'dws-create'},{'action':'subscribe'}," PCREATE "]",
        "reload: the depend of a jobtap load repeats dws.create");
    dws_jobsm_destroy (sm);
    sm = sm_new (NULL);
    ev (sm,
        "{'type':'reload','id':42,'userid':1000,'jobspec':" PSPEC
        ",'state':'DEPEND','other_dependencies':-1}",
        "reload event: 'other_dependencies' must be an integer >= 0",
        "reload: a bad other_dependencies");
    ev (sm, "{'type':'create'}", "[{'action':'subscribe'}]", "create on an unknown machine");
    ev (sm, PDEPEND,
        "[{'action':'dependency-add','name':'dws-create'},{'action':'subscribe'}," PCREATE "]",
        "depend");
    ev (sm, "{'type':'create'}", "create event: job 42 is known already", "create after depend");
    ev (sm, "{'type':'dependency-add'}", "dependency-add event: 'name' must be a string",
        "dependency-add without a name");
    dws_jobsm_destroy (sm);
}

static void depend_payload (void)
{
    struct dws_jobsm *sm = sm_new (NULL);
    ev (sm,
        "{'type':'depend','id':7,'userid':5,'jobspec':{'attributes':{'system':{'dw':['a','b'],"
        "'dw_failure_tolerance':2}}}}",
        "[{'action':'dependency-add','name':'dws-create'},{'action':'subscribe'},"
        "{'action':'rpc','topic':'dws.create','tag':'create','payload':{'jobid':7,"
        "'userid':5,'dw_directives':['a','b'],'resources':null,'failure_tolerance':2}}]",
        "dw list passed as given, tolerance, resources null when absent");
    dws_jobsm_destroy (sm);
}

static void lifecycle (void)
{
    struct dws_jobsm *sm = running ("{'epilog-timeout':30}");
    ev (sm, UPDATE, RESPOND, "repeated resource-update: respond only");
    state_is (sm, "prolog_active", "false", "prolog over");
    ev (sm, PROLOG_REMOVE, RESPOND, "duplicate prolog-remove: respond only");
    ev (sm, "{'type':'run'}", "[]", "duplicate run does nothing");
    ev (sm, "{'type':'finish'}", EPILOG_TIMER_ACTS ("true"), "finish starts the epilog, timer");
    state_is (sm, "timer_active", "true", "timer running");
    ev (sm, "{'type':'finish'}", "[]", "duplicate finish does nothing");
    ev (sm, "{'type':'cleanup'}", "[]", "cleanup after finish does nothing");
    ev (sm, RESP ("post_run"), "[]", "post_run ok");
    ev (sm, EPILOG_REMOVE ("CLEANUP"),
        "[{'action':'epilog-finish','name':'dws-epilog','status':0},"
        "{'action':'timer-stop','key':'epilog-timeout'},{'action':'respond','payload':{}}]",
        "epilog-remove finishes the epilog, stops the timer");
    ev (sm, EPILOG_REMOVE ("CLEANUP"), RESPOND, "duplicate epilog-remove: respond only");
    ev (sm, "{'type':'timer','key':'epilog-timeout','state':'CLEANUP'}", "[]",
        "a late timer does nothing");
    ev (sm, EXC ("cancel"), "[]", "an exception after the epilog does nothing");
    state_is (sm, "pending",
              "{\"create\":0,\"setup\":0,\"post_run\":0,\"teardown\":0,\"abort\":0}",
              "no RPC outstanding");
    dws_jobsm_destroy (sm);

    /* without a timeout: no timer actions */
    sm = running (NULL);
    ev (sm, "{'type':'finish'}", EPILOG_ACTS ("true"), "no timeout: no timer-start");
    ev (sm, EPILOG_REMOVE ("CLEANUP"),
        "[{'action':'epilog-finish','name':'dws-epilog','status':0},"
        "{'action':'respond','payload':{}}]",
        "no timeout: no timer-stop");
    dws_jobsm_destroy (sm);

    /* a started job's cleanup waits for finish (its tasks may be running) */
    sm = running (NULL);
    ev (sm, "{'type':'cleanup'}", "[]", "cleanup after start, before finish: no epilog yet");
    state_is (sm, "epilog_started", "false", "epilog not started");
    ev (sm, "{'type':'release','final':false}", "[]", "a partial release: still not");
    ev (sm, "{'type':'finish'}", EPILOG_ACTS ("true"), "finish starts it");
    ev (sm, "{'type':'release','final':true}", "[]", "the final release after it: nothing");
    ev (sm, "{'type':'free'}", "[]", "free: nothing");
    dws_jobsm_destroy (sm);

    /* no finish: the final release (no process is left) starts it */
    sm = running ("{'epilog-timeout':30}");
    ev (sm, "{'type':'cleanup'}", "[]", "cleanup, no finish");
    ev (sm, "{'type':'release','final':true}", EPILOG_TIMER_ACTS ("true"),
        "the final release without finish starts the epilog");
    ev (sm, "{'type':'finish'}", "[]", "a finish after it does nothing");
    dws_jobsm_destroy (sm);

    /* neither (the exec service went away): free starts it, with a warning */
    sm = running (NULL);
    ev (sm, "{'type':'cleanup'}", "[]", "cleanup, no finish");
    ev (sm, "{'type':'free'}",
        "[{'action':'log','level':'warning','message':'job 42: resources freed with no finish"
        " or final release (the exec service gave the job up?); starting the epilog now'},"
        "{'action':'epilog-start','name':'dws-epilog'},"
        "{'action':'rpc','topic':'dws.post_run','tag':'post_run','payload':{'jobid':42,"
        "'run_started':true}}]",
        "free without finish or final release: epilog, warning");
    dws_jobsm_destroy (sm);
}

static void create_response (void)
{
    struct dws_jobsm *sm = sm_new (NULL);
    char event[256], acts[512];

    ev (sm, DEPEND, DEPEND_ACTS, "depend");
    ev (sm, FAIL ("create", "workflow admission denied"),
        "[{'action':'raise','type':'dws-create','severity':0,'note':'" NOTE
        "workflow admission denied'}]",
        "create error response raises dws-create");
    dws_jobsm_destroy (sm);

    sm = sm_new (NULL);
    ev (sm, DEPEND, DEPEND_ACTS, "depend");
    enosys_event (event, sizeof (event), "create");
    snprintf (acts, sizeof (acts),
              "[{'action':'raise','type':'dws-create','severity':0,'note':'%s'}]",
              NOTE "dws.create RPC could not be sent. Admins: is the flux-coral2-dws service"
                   " loaded?");
    ev (sm, event, acts, "ENOSYS: the service is not loaded");
    state_is (sm, "create_failed", "true", "the job has no Workflow");
    ev (sm, EXC ("dws-create"), "[]", "its exception in DEPEND does nothing");
    ev (sm, "{'type':'cleanup'}", EPILOG_ACTS ("false"), "cleanup: epilog, run_started false");
    enosys_event (event, sizeof (event), "post_run");
    snprintf (acts, sizeof (acts),
              "[{'action':'raise','type':'dws-epilog','severity':0,'note':'%s'},"
              "{'action':'epilog-finish','name':'dws-epilog','status':1}]",
              NOTE "dws.post_run RPC could not be sent. Admins: is the flux-coral2-dws service"
                   " loaded?");
    ev (sm, event, acts,
        "post_run ENOSYS with no Workflow (its create failed): the epilog ends, the job does"
        " not wait for a service");
    dws_jobsm_destroy (sm);

    /* the broker's answer when the service goes away holding the request */
    sm = sm_new (NULL);
    ev (sm, DEPEND, DEPEND_ACTS, "depend");
    snprintf (event, sizeof (event),
              "{'type':'rpc-response','tag':'create','ok':false,'errnum':%d,"
              "'errstr':'module disconnect'}",
              EHOSTUNREACH);
    ev (sm, event,
        "[{'action':'log','level':'warning','message':'job 42: the dws service went away with"
        " its dws.create request (module disconnect); the job waits for the service that"
        " replaces it'}]",
        "EHOSTUNREACH (a service reload): no exception, the job stays held");
    state_is (sm, "create_failed", "false", "the next service makes its Workflow");
    ev (sm, UPDATE, UPDATE_ACTS, "the new service's resource-update releases it");
    dws_jobsm_destroy (sm);

    sm = sm_new (NULL);
    ev (sm, DEPEND, DEPEND_ACTS, "depend");
    ev (sm, "{'type':'rpc-response','tag':'create','ok':true,'payload':{'success':false,"
            "'errstr':'bad directive'}}",
        "[{'action':'raise','type':'dws-create','severity':0,'note':'" NOTE "bad directive'}]",
        "success false counts as failure");
    dws_jobsm_destroy (sm);

    sm = sm_new (NULL);
    ev (sm, DEPEND, DEPEND_ACTS, "depend");
    ev (sm, "{'type':'rpc-response','tag':'create','ok':true,'payload':{'success':false}}",
        "[{'action':'raise','type':'dws-create','severity':0,'note':'" NOTE "unknown error'}]",
        "success false without errstr");
    dws_jobsm_destroy (sm);

    sm = sm_new (NULL);
    ev (sm, DEPEND, DEPEND_ACTS, "depend");
    ev (sm, "{'type':'rpc-response','tag':'create','ok':true}", "[]", "ok without payload");
    ev (sm, "{'type':'rpc-response','tag':'create','ok':true}",
        "rpc-response event: no dws.create RPC is outstanding", "a second response is bad");
    dws_jobsm_destroy (sm);
}

#define MALFORMED_ACTS(method, what)                                                           \
    "[{'action':'respond-error','errnum':71,'errstr':'received malformed dws." method          \
    " RPC: " what "'},{'action':'raise','type':'dws','severity':0,'note':'" NOTE              \
    "received malformed dws." method " RPC'},{'action':'log','level':'err','message':"         \
    "'job 42: received malformed dws." method " RPC (" what "): coral2_dws module and "       \
    "dws_jobtap plugin versions may be out of sync'}]"

static void malformed (void)
{
    struct dws_jobsm *sm = sm_new (NULL);
    ev (sm, DEPEND, DEPEND_ACTS, "depend");

#define RU(payload) "{'type':'resource-update','state':'DEPEND','jobspec':" JOBSPEC ",'payload':" payload "}"
    ev (sm, "{'type':'resource-update','state':'DEPEND','jobspec':{}}",
        MALFORMED_ACTS ("resource-update", "the payload is not an object"),
        "resource-update: no payload");
    ev (sm, RU ("[]"), MALFORMED_ACTS ("resource-update", "the payload is not an object"),
        "resource-update: payload list");
    ev (sm, RU ("{'resources':[]}"), MALFORMED_ACTS ("resource-update", "`id` must be an integer"),
        "resource-update: no id");
    ev (sm, RU ("{'id':'42','resources':[]}"),
        MALFORMED_ACTS ("resource-update", "`id` must be an integer"),
        "resource-update: id string");
    ev (sm, RU ("{'id':42,'errmsg':5}"),
        MALFORMED_ACTS ("resource-update", "`errmsg` must be a string"),
        "resource-update: errmsg number");
    ev (sm, RU ("{'id':42,'exclude':null}"),
        MALFORMED_ACTS ("resource-update", "`resources` must be a list"),
        "resource-update: no resources");
    ev (sm, RU ("{'id':42,'resources':{'type':'node'}}"),
        MALFORMED_ACTS ("resource-update", "`resources` must be a list"),
        "resource-update: resources object");
    ev (sm, RU ("{'id':42,'resources':[],'exclude':'n[1-2]'}"),
        MALFORMED_ACTS ("resource-update", "`exclude` must be an object or null"),
        "resource-update: exclude string");
    ev (sm, RU ("{'id':42,'resources':[],'exclude':[]}"),
        MALFORMED_ACTS ("resource-update", "`exclude` must be an object or null"),
        "resource-update: exclude list");
    state_is (sm, "dependency", "true", "malformed updates left the dependency");

#define PR(payload) "{'type':'prolog-remove','payload':" payload "}"
    ev (sm, "{'type':'prolog-remove'}",
        MALFORMED_ACTS ("prolog-remove", "the payload is not an object"),
        "prolog-remove: no payload");
    ev (sm, PR ("'x'"), MALFORMED_ACTS ("prolog-remove", "the payload is not an object"),
        "prolog-remove: payload string");
    ev (sm, PR ("{'variables':{}}"), MALFORMED_ACTS ("prolog-remove", "`id` must be an integer"),
        "prolog-remove: no id");
    ev (sm, PR ("{'id':4.2,'variables':{}}"),
        MALFORMED_ACTS ("prolog-remove", "`id` must be an integer"), "prolog-remove: id real");
    ev (sm, PR ("{'id':42}"), MALFORMED_ACTS ("prolog-remove", "`variables` must be an object"),
        "prolog-remove: no variables");
    ev (sm, PR ("{'id':42,'variables':['A=b']}"),
        MALFORMED_ACTS ("prolog-remove", "`variables` must be an object"),
        "prolog-remove: variables list");
    ev (sm, PR ("{'id':42,'variables':{'A':'a','B':1}}"),
        MALFORMED_ACTS ("prolog-remove", "variable `B` must be a string"),
        "prolog-remove: a variable not a string");

#define ER(payload) "{'type':'epilog-remove','state':'CLEANUP','payload':" payload "}"
    ev (sm, "{'type':'epilog-remove','state':'CLEANUP'}",
        MALFORMED_ACTS ("epilog-remove", "the payload is not an object"),
        "epilog-remove: no payload");
    ev (sm, ER ("null"), MALFORMED_ACTS ("epilog-remove", "the payload is not an object"),
        "epilog-remove: payload null");
    ev (sm, ER ("{}"), MALFORMED_ACTS ("epilog-remove", "`id` must be an integer"),
        "epilog-remove: no id");
    ev (sm, ER ("{'id':true}"), MALFORMED_ACTS ("epilog-remove", "`id` must be an integer"),
        "epilog-remove: id boolean");
    dws_jobsm_destroy (sm);

    /* a malformed request while the prolog or the epilog is held: the
     * raised exception's event finishes the prolog / tears down */
    sm = scheduled (NULL);
    ev (sm, "{'type':'run'}", RUN_ACTS, "run");
    ev (sm, PR ("{'id':42}"), MALFORMED_ACTS ("prolog-remove", "`variables` must be an object"),
        "malformed prolog-remove in the prolog");
    ev (sm, EXC ("dws"), PROLOG_FAIL, "its exception finishes the prolog");
    dws_jobsm_destroy (sm);
}

static void resource_update (void)
{
    struct dws_jobsm *sm;

#define UPD(sys, exclude)                                                                      \
    "{'type':'resource-update','state':'DEPEND','jobspec':{'resources':[],'attributes':"       \
    "{'system':{'dw':'" DW "'" sys "}}},'payload':{'id':42,'resources':[{'type':'slot'}],"     \
    "'exclude':" exclude "}}"
#define UPD_ACTS(constraints)                                                                  \
    "[{'action':'jobspec-update','update':{'resources':[{'type':'slot'}]" constraints "}},"    \
    "{'action':'dependency-remove','name':'dws-create'},{'action':'respond','payload':{}}]"
#define EXCL "{'not':[{'hostlist':['n[1-2]']}]}"
#define MINE "{'properties':['pbatch']}"
#define CONS ",'attributes.system.constraints':"
    static const struct {
        const char *event, *acts, *what;
    } cases[] = {
        {UPD ("", "null"), UPD_ACTS (""), "no constraints, no exclude: no constraints key"},
        {UPD (",'constraints':" MINE, "null"), UPD_ACTS (CONS MINE), "existing constraints"},
        {UPD (",'constraints':null", "null"), UPD_ACTS (""), "null constraints count as none"},
        {UPD ("", EXCL), UPD_ACTS (CONS EXCL), "exclude only"},
        {UPD (",'constraints':" MINE, EXCL), UPD_ACTS (CONS "{'and':[" MINE "," EXCL "]}"),
         "both: and"},
        {UPD (",'constraints':" MINE ",'allow_rabbits':true", EXCL),
         UPD_ACTS (CONS "{'or':[{'properties':['rabbit']},{'and':[" MINE "," EXCL "]}]}"),
         "allow_rabbits: or rabbit"},
        {UPD (",'allow_rabbits':true", EXCL),
         UPD_ACTS (CONS "{'or':[{'properties':['rabbit']}," EXCL "]}"),
         "allow_rabbits with exclude only"},
        {UPD (",'allow_rabbits':true", "null"), UPD_ACTS (""),
         "allow_rabbits without constraints: every node matches, none set"},
        {UPD (",'allow_rabbits':1,'constraints':" MINE, "null"), UPD_ACTS (CONS MINE),
         "allow_rabbits must be true, not 1"},
        {"{'type':'resource-update','state':'DEPEND','jobspec':{},'payload':{'id':42,"
         "'resources':[{'type':'slot'}]}}",
         UPD_ACTS (""), "exclude absent counts as null"},
    };
    for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++) {
        sm = sm_new (NULL);
        ev (sm, DEPEND, DEPEND_ACTS, "depend");
        ev (sm, cases[i].event, cases[i].acts, cases[i].what);
        dws_jobsm_destroy (sm);
    }

    sm = sm_new (NULL);
    ev (sm, DEPEND, DEPEND_ACTS, "depend");
    ev (sm,
        "{'type':'resource-update','state':'PRIORITY','jobspec':{},'payload':{'id':42,"
        "'resources':[]}}",
        "[{'action':'respond-error','errnum':22,"
        "'errstr':'dws.resource-update: job 42 is in state PRIORITY, not DEPEND'}]",
        "resource-update outside DEPEND is refused");
    ev (sm,
        "{'type':'resource-update','state':'DEPEND','jobspec':{},'payload':{'id':42,"
        "'errmsg':'Proposal failed: no rabbits'}}",
        "[{'action':'raise','type':'dws','severity':0,'note':'" NOTE
        "Proposal failed: no rabbits'},{'action':'respond','payload':{}}]",
        "errmsg raises dws and is answered");
    ev (sm, EXC ("dws"), "[]", "its exception in DEPEND does nothing");
    state_is (sm, "dependency", "true", "the dependency stays (the job is cancelled)");
    ev (sm, "{'type':'cleanup'}", EPILOG_ACTS ("false"), "cleanup: epilog, run_started false");
    dws_jobsm_destroy (sm);
}

static void cancel_depend (void)
{
    struct dws_jobsm *sm = sm_new ("{'epilog-timeout':30}");
    ev (sm, DEPEND, DEPEND_ACTS, "depend");
    ev (sm, EXC ("cancel"), "[]", "cancel in DEPEND: nothing yet");
    ev (sm, "{'type':'cleanup'}", EPILOG_TIMER_ACTS ("false"),
        "cleanup without start: epilog with run_started false");
    ev (sm, RESP ("create"), "[]", "the late create response is fine");
    ev (sm, EXC ("cancel"), TEARDOWN, "cancel again in the epilog: teardown");
    ev (sm, EXC ("cancel"), TEARDOWN, "and again: another teardown");
    ev (sm, FAIL ("teardown", "k8s unreachable"),
        "[{'action':'log','level':'err','message':'dws.teardown failed for job 42: k8s "
        "unreachable'}]",
        "a failed teardown is logged");
    ev (sm, RESP ("teardown"), "[]", "a good teardown response");
    ev (sm, EPILOG_REMOVE ("CLEANUP"),
        "[{'action':'epilog-finish','name':'dws-epilog','status':0},"
        "{'action':'timer-stop','key':'epilog-timeout'},{'action':'respond','payload':{}}]",
        "epilog-remove");
    ev (sm, RESP ("post_run"), "[]", "post_run ok after the epilog");
    dws_jobsm_destroy (sm);
}

static void cancel_sched (void)
{
    struct dws_jobsm *sm = scheduled (NULL);
    ev (sm, EXC ("cancel"), "[]", "cancel in SCHED: nothing yet");
    ev (sm, "{'type':'cleanup'}", EPILOG_ACTS ("false"), "cleanup: epilog, run_started false");
    ev (sm, EXC ("cancel"), TEARDOWN, "cancel in the epilog: teardown");
    dws_jobsm_destroy (sm);
}

static void cancel_prolog (void)
{
    struct dws_jobsm *sm = scheduled (NULL);

    /* before R came back */
    ev (sm, "{'type':'run'}", RUN_ACTS, "run");
    ev (sm, EXC ("cancel"), PROLOG_FAIL, "cancel in the prolog: prolog-finish 1");
    ev (sm, R_EV, "[]", "R after the cancel: no Setup");
    ev (sm, PROLOG_REMOVE, RESPOND, "prolog-remove after the prolog ended: respond only");
    ev (sm, "{'type':'cleanup'}", EPILOG_ACTS ("false"), "cleanup: epilog, run_started false");
    dws_jobsm_destroy (sm);

    /* with dws.setup outstanding */
    sm = scheduled (NULL);
    ev (sm, "{'type':'run'}", RUN_ACTS, "run");
    ev (sm, R_EV, R_ACTS, "R");
    ev (sm, EXC ("cancel"), PROLOG_FAIL, "cancel with setup outstanding: prolog-finish 1");
    ev (sm, EXC ("cancel"), "[]", "a second cancel: nothing (epilog not yet started)");
    ev (sm, FAIL ("setup", "cancelled"),
        "[{'action':'log','level':'info','message':'dws.setup failed for job 42 after its "
        "prolog ended: cancelled'}]",
        "a late setup failure is logged, not raised");
    ev (sm, "{'type':'cleanup'}", EPILOG_ACTS ("false"), "cleanup: epilog");
    dws_jobsm_destroy (sm);

    /* a sev 1 exception in the prolog is ignored */
    sm = scheduled (NULL);
    ev (sm, "{'type':'run'}", RUN_ACTS, "run");
    ev (sm, "{'type':'exception','exc_type':'dws-node-failure','severity':1}", "[]",
        "severity 1 ignored");
    state_is (sm, "prolog_active", "true", "prolog still active");
    dws_jobsm_destroy (sm);
}

/* A running job that ends by an exception: flux-core moves it to CLEANUP
 * at the exception, before its tasks are killed; finish comes once they
 * are gone, then the final release.  The epilog waits for finish.
 */
static void end_running (const char *exc, const char *what)
{
    struct dws_jobsm *sm = running (NULL);

    ev (sm, exc, "[]", what);
    ev (sm, "{'type':'cleanup'}", "[]", "... cleanup: the tasks may be running, no epilog");
    state_is (sm, "epilog_started", "false", "... epilog not started");
    state_is (sm, "pending",
              "{\"create\":0,\"setup\":0,\"post_run\":0,\"teardown\":0,\"abort\":0}",
              "... no dws.post_run yet");
    ev (sm, "{'type':'finish'}", EPILOG_ACTS ("true"), "... finish: epilog, run_started true");
    ev (sm, "{'type':'release','final':true}", "[]", "... the final release: nothing more");
    ev (sm, "{'type':'free'}", "[]", "... free: nothing more");
    dws_jobsm_destroy (sm);
}

static void cancel_running (void)
{
    struct dws_jobsm *sm = running (NULL);
    ev (sm, EXC ("cancel"), "[]", "cancel while running: nothing");
    ev (sm, "{'type':'finish'}", EPILOG_ACTS ("true"), "finish: epilog run_started true");
    ev (sm, EXC ("cancel"), TEARDOWN, "cancel in the epilog: teardown");
    dws_jobsm_destroy (sm);

    end_running (EXC ("cancel"), "cancel while running");
    end_running (EXC ("timeout"), "time limit while running");
    end_running (EXC ("node-failure"), "node failure while running");
    end_running (EXC ("lost-shell"), "a lost job shell while running");
    end_running (EXC ("whatever"), "any other fatal exception while running");

    /* a severity-1 exception (e.g. dws-node-failure) changes nothing */
    sm = running (NULL);
    ev (sm, "{'type':'exception','exc_type':'node-failure','severity':1}", "[]",
        "a non-fatal exception while running: nothing");
    ev (sm, "{'type':'finish'}", EPILOG_ACTS ("true"), "finish: epilog");
    dws_jobsm_destroy (sm);
}

static void prolog_failures (void)
{
    struct dws_jobsm *sm = scheduled (NULL);
    ev (sm, "{'type':'run'}", RUN_ACTS, "run");
    ev (sm, "{'type':'R','R':{},'error':'x'}",
        "R event: needs either an 'R' object or an 'error' string", "R and error");
    ev (sm, "{'type':'R'}", "R event: needs either an 'R' object or an 'error' string",
        "neither R nor error");
    ev (sm, "{'type':'R','R':[]}", "R event: needs either an 'R' object or an 'error' string",
        "R not an object");
    ev (sm, "{'type':'R','error':5}", "R event: needs either an 'R' object or an 'error' string",
        "error not a string");
    ev (sm, "{'type':'R','error':'No such file or directory'}",
        "[{'action':'raise','type':'dws-setup','severity':0,'note':'" NOTE
        "could not read R: No such file or directory'},"
        "{'action':'prolog-finish','name':'dws-setup','status':1}]",
        "R error: raise and finish the prolog");
    ev (sm, EXC ("dws-setup"), "[]", "its exception does nothing more");
    ev (sm, "{'type':'cleanup'}", EPILOG_ACTS ("false"), "cleanup: epilog");
    dws_jobsm_destroy (sm);

    sm = scheduled (NULL);
    ev (sm, "{'type':'run'}", RUN_ACTS, "run");
    ev (sm, R_EV, R_ACTS, "R");
    ev (sm, FAIL ("setup", "workflows not found"),
        "[{'action':'raise','type':'dws-setup','severity':0,'note':'" NOTE
        "workflows not found'}]",
        "setup failure raises dws-setup");
    ev (sm, EXC ("dws-setup"), PROLOG_FAIL, "its exception finishes the prolog");
    dws_jobsm_destroy (sm);

    sm = scheduled (NULL);
    ev (sm, "{'type':'run'}", RUN_ACTS, "run");
    ev (sm, R_EV, R_ACTS, "R");
    ev (sm, "{'type':'rpc-response','tag':'setup','ok':true,'payload':{'success':false,"
            "'errstr':'no such workflow'}}",
        "[{'action':'raise','type':'dws-setup','severity':0,'note':'" NOTE
        "no such workflow'}]",
        "setup success false raises dws-setup");
    dws_jobsm_destroy (sm);

    /* nothing serves dws.setup (the service is being reloaded): the job
     * waits for the service, which finds it in RUN without its setup */
    char event[256];
    sm = scheduled (NULL);
    ev (sm, "{'type':'run'}", RUN_ACTS, "run");
    ev (sm, R_EV, R_ACTS, "R");
    enosys_event (event, sizeof (event), "setup");
    ev (sm, event,
        "[{'action':'log','level':'warning','message':'job 42: no dws service was loaded to"
        " take its dws.setup; the job waits for the service to be loaded'}]",
        "setup ENOSYS (a reload's gap): no exception, the prolog stays held");
    state_is (sm, "prolog_active", "true", "the prolog is still held");
    dws_jobsm_destroy (sm);

    /* ... and the same for dws.post_run in the epilog */
    sm = running (NULL);
    ev (sm, "{'type':'finish'}", EPILOG_ACTS ("true"), "finish");
    enosys_event (event, sizeof (event), "post_run");
    ev (sm, event,
        "[{'action':'log','level':'warning','message':'job 42: no dws service was loaded to"
        " take its dws.post_run; the job waits for the service to be loaded'}]",
        "post_run ENOSYS: no exception, the epilog stays held");
    state_is (sm, "epilog_active", "true", "the epilog is still held");
    dws_jobsm_destroy (sm);
}

static void epilog_failures (void)
{
    struct dws_jobsm *sm = running ("{'epilog-timeout':30}");
    ev (sm, "{'type':'finish'}", EPILOG_TIMER_ACTS ("true"), "finish");
    ev (sm, FAIL ("post_run", "PostRun failed"),
        "[{'action':'raise','type':'dws-epilog','severity':0,'note':'" NOTE "PostRun failed'},"
        "{'action':'epilog-finish','name':'dws-epilog','status':1},"
        "{'action':'timer-stop','key':'epilog-timeout'}]",
        "post_run failure: raise, epilog-finish 1, timer-stop");
    ev (sm, EXC ("dws-epilog"), "[]", "its exception does nothing more");
    ev (sm, EPILOG_REMOVE ("CLEANUP"), RESPOND, "a later epilog-remove: respond only");
    dws_jobsm_destroy (sm);

    sm = running (NULL);
    ev (sm, "{'type':'finish'}", EPILOG_ACTS ("true"), "finish");
    ev (sm, "{'type':'rpc-response','tag':'post_run','ok':true,'payload':{'success':false,"
            "'errstr':'no workflow'}}",
        "[{'action':'raise','type':'dws-epilog','severity':0,'note':'" NOTE "no workflow'},"
        "{'action':'epilog-finish','name':'dws-epilog','status':1}]",
        "post_run success false");
    dws_jobsm_destroy (sm);

    /* post_run fails after an abort finished the epilog */
    sm = running (NULL);
    ev (sm, "{'type':'finish'}", EPILOG_ACTS ("true"), "finish");
    ev (sm, EXC ("dws-epilog-timeout"),
        "[{'action':'rpc','topic':'dws.abort','tag':'abort','payload':{'jobid':42}},"
        "{'action':'epilog-finish','name':'dws-epilog','status':1}]",
        "admin-raised dws-epilog-timeout: abort, epilog-finish 1 (no timer)");
    ev (sm, FAIL ("post_run", "gone"),
        "[{'action':'log','level':'err','message':'dws.post_run failed for job 42 after its "
        "epilog ended: gone'}]",
        "late post_run failure is logged");
    ev (sm, FAIL ("abort", "gone"),
        "[{'action':'log','level':'err','message':'dws.abort failed for job 42: gone'}]",
        "abort failure is logged");
    dws_jobsm_destroy (sm);
}

static void epilog_timeout (void)
{
    struct dws_jobsm *sm = running ("{'epilog-timeout':30}");
    ev (sm, "{'type':'finish'}", EPILOG_TIMER_ACTS ("true"), "finish");
    ev (sm, "{'type':'timer','key':'epilog-timeout','state':'RUN'}", "[]",
        "timer while not in CLEANUP does nothing");
    state_is (sm, "timer_active", "false", "the timer has fired");
    ev_raw (sm, "{'type':'timer','key':'epilog-timeout','state':'CLEANUP'}",
            "[{'action':'raise','type':'dws-epilog-timeout','severity':0,"
            "'note':'DWS epilog timed out'}]",
            "timer in CLEANUP raises dws-epilog-timeout (explained when it comes back)");
    ev (sm, "{'type':'exception','exc_type':'dws-epilog-timeout','severity':0,"
        "'note':'DWS epilog timed out'}",
        "[{'action':'rpc','topic':'dws.abort','tag':'abort','payload':{'jobid':42}},"
        "{'action':'post-event','name':'dws-explanation','context':{"
        "'type':'dws-epilog-timeout','note':'DWS epilog timed out','explanation':"
        "'The rabbit work after the job (unmount, copy_out, teardown) took too long and was"
        " stopped, so results may be missing. Tell your administrator.'}},"
        "{'action':'epilog-finish','name':'dws-epilog','status':1}]",
        "its exception: abort, its explanation before the epilog ends, epilog-finish 1");
    ev (sm, RESP ("abort"), "[]", "abort ok");
    ev (sm, EPILOG_REMOVE ("CLEANUP"), RESPOND, "late epilog-remove: respond only");
    dws_jobsm_destroy (sm);

    sm = running ("{'epilog-timeout':30}");
    ev (sm, "{'type':'finish'}", EPILOG_TIMER_ACTS ("true"), "finish");
    ev (sm, EXC ("dws-epilog-timeout"),
        "[{'action':'rpc','topic':'dws.abort','tag':'abort','payload':{'jobid':42}},"
        "{'action':'epilog-finish','name':'dws-epilog','status':1},"
        "{'action':'timer-stop','key':'epilog-timeout'}]",
        "admin-raised dws-epilog-timeout stops the running timer");
    dws_jobsm_destroy (sm);
}

static void epilog_remove (void)
{
    struct dws_jobsm *sm = running (NULL);
    ev (sm, EPILOG_REMOVE ("RUN"),
        "[{'action':'respond-error','errnum':22,"
        "'errstr':'dws.epilog-remove: job 42 is in state RUN, not CLEANUP'}]",
        "epilog-remove outside CLEANUP is refused");
    ev (sm, EPILOG_REMOVE ("CLEANUP"), RESPOND, "epilog-remove before the epilog: respond only");
    dws_jobsm_destroy (sm);
}

/* dws-prestage through the service's dependency method (jobwire.h
 * DWS_JOBWIRE_SERVICE_DEPENDENCIES), as dws-limit: removed in DEPEND,
 * answered in every other state as prestage-remove is (which an older
 * flux-dws service still sends); never added through it (the plugin adds
 * it itself, with resource-update's 'prestage', before dws-create goes).
 */
#define UPDATE_PRESTAGE                                                                        \
    "{'type':'resource-update','state':'DEPEND','jobspec':" JOBSPEC ","                        \
    "'payload':{'id':42,'resources':[{'type':'slot'}],'exclude':null,'prestage':true}}"
#define UPDATE_PRESTAGE_ACTS                                                                   \
    "[{'action':'jobspec-update','update':{'resources':[{'type':'slot'}]}},"                   \
    "{'action':'dependency-add','name':'dws-prestage'},"                                       \
    "{'action':'dependency-remove','name':'dws-create'},{'action':'respond','payload':{}}]"
#define SDEP(state, payload) "{'type':'dependency','state':'" state "','payload':" payload "}"
#define PRESTAGE_GONE                                                                          \
    "[{'action':'dependency-remove','name':'dws-prestage'},{'action':'respond','payload':{}}]"
#define PRESTAGE_NOT_ADDED                                                                     \
    "[{'action':'respond-error','errnum':22,'errstr':'dws.dependency: dws-prestage is added"  \
    " by the plugin with the resource-update (`prestage`: true), not by this method'}]"

static struct dws_jobsm *prestaged (void)
{
    struct dws_jobsm *sm = sm_new (NULL);
    ev (sm, DEPEND, DEPEND_ACTS, "prestaged: depend");
    ev (sm, RESP ("create"), "[]", "prestaged: create ok");
    ev (sm, UPDATE_PRESTAGE, UPDATE_PRESTAGE_ACTS,
        "prestaged: resource-update adds dws-prestage before dws-create goes");
    return sm;
}

/* prestage-unpin: a given-up pre-staged job's jobspec asks for the usual
 * resources again, the pin's hostlist out of its constraints. */
#define PIN "{'hostlist':['compute-[01-03]']}"
#define USUAL "[{'type':'node','count':3,'with':[{'type':'ssd','count':10}]}]"
#define UNPIN(state, cons, res)                                                                \
    "{'type':'prestage-unpin','state':'" state "','jobspec':{'resources':" res ","            \
    "'attributes':{'system':{'dw':'x','constraints':" cons "}}},'payload':{'id':42,"          \
    "'resources':" USUAL ",'constraint':" PIN "}}"
#define CHASSIS "[{'type':'chassis','count':1,'with':[{'type':'node','count':3}]}]"

static void prestage_unpin (void)
{
    struct dws_jobsm *sm = prestaged ();
    ev (sm, UNPIN ("SCHED", "{'and':[{'not':[{'properties':['badrabbit']}]}," PIN "]}", CHASSIS),
        "[{'action':'jobspec-update','update':{'resources':" USUAL ","
        "'attributes.system.constraints':{'not':[{'properties':['badrabbit']}]}}},"
        "{'action':'respond','payload':{}}]",
        "prestage-unpin in SCHED: the usual resources, the pin out of the and");
    ev (sm, UNPIN ("SCHED", "{'not':[{'properties':['badrabbit']}]}", USUAL), RESPOND,
        "... a repeat (unpinned already): answered only");
    ev (sm, UNPIN ("PRIORITY", PIN, CHASSIS),
        "[{'action':'jobspec-update','update':{'resources':" USUAL ","
        "'attributes.system.constraints':{}}},{'action':'respond','payload':{}}]",
        "... the pin alone: {} (matches all), in PRIORITY");
    ev (sm, UNPIN ("SCHED", "{'or':[{'properties':['rabbit']},{'and':[{'properties':['x']},"
                   PIN "]}]}", CHASSIS),
        "[{'action':'jobspec-update','update':{'resources':" USUAL ","
        "'attributes.system.constraints':{'or':[{'properties':['rabbit']},{'properties':['x']}]}}},"
        "{'action':'respond','payload':{}}]",
        "... inside allow_rabbits' or");
    ev (sm, UNPIN ("RUN", PIN, CHASSIS),
        "[{'action':'respond-error','errnum':16,'errstr':'dws.prestage-unpin: job 42 is in state"
        " RUN: it has its nodes'}]",
        "... in RUN: EBUSY, its storage is used");
    ev (sm, UNPIN ("NEW", PIN, CHASSIS),
        "[{'action':'respond-error','errnum':22,'errstr':'dws.prestage-unpin: job 42 is in state"
        " NEW, not DEPEND, PRIORITY or SCHED'}]",
        "... in NEW: EINVAL");
    ev (sm, "{'type':'prestage-unpin','state':'SCHED','jobspec':{},'payload':{'id':42,"
        "'resources':{},'constraint':" PIN "}}",
        MALFORMED_ACTS ("prestage-unpin", "`resources` must be a list"),
        "prestage-unpin: resources not a list");
    dws_jobsm_destroy (sm);
    sm = prestaged ();
    ev (sm, "{'type':'prestage-unpin','state':'SCHED','jobspec':{},'payload':{'id':42,"
        "'resources':[],'constraint':'x'}}",
        MALFORMED_ACTS ("prestage-unpin", "`constraint` must be an object"),
        "prestage-unpin: constraint not an object");
    dws_jobsm_destroy (sm);
}

static void prestage_dependency (void)
{
    struct dws_jobsm *sm = prestaged ();
    ev (sm, SDEP ("DEPEND", "{'id':42,'name':'dws-prestage','add':false}"), PRESTAGE_GONE,
        "dependency method: dws-prestage removed in DEPEND");
    ev (sm, SDEP ("DEPEND", "{'id':42,'name':'dws-prestage','add':false}"), PRESTAGE_GONE,
        "... a repeat removes it again (the job manager's ENOENT is let pass)");
    dws_jobsm_destroy (sm);

    /* every other state: answered, nothing removed (prestage-remove's rule) */
    static const char *const others[] = {"NEW", "PRIORITY", "SCHED", "RUN", "CLEANUP"};
    for (size_t i = 0; i < sizeof (others) / sizeof (others[0]); i++) {
        char event[256], what[128];
        sm = prestaged ();
        snprintf (event, sizeof (event),
                  SDEP ("%s", "{'id':42,'name':'dws-prestage','add':false}"), others[i]);
        snprintf (what, sizeof (what), "dependency method: dws-prestage in %s: answered only",
                  others[i]);
        ev (sm, event, RESPOND, what);
        snprintf (event, sizeof (event), "{'type':'prestage-remove','state':'%s',"
                  "'payload':{'id':42}}", others[i]);
        snprintf (what, sizeof (what), "... as prestage-remove in %s", others[i]);
        ev (sm, event, RESPOND, what);
        dws_jobsm_destroy (sm);
    }

    /* added through the method: refused, in any state, nothing held */
    sm = prestaged ();
    ev (sm, SDEP ("DEPEND", "{'id':42,'name':'dws-prestage','add':true}"), PRESTAGE_NOT_ADDED,
        "dependency method: dws-prestage added in DEPEND is refused");
    ev (sm, SDEP ("NEW", "{'id':42,'name':'dws-prestage','add':true}"), PRESTAGE_NOT_ADDED,
        "... in NEW too");
    ev (sm, SDEP ("SCHED", "{'id':42,'name':'dws-prestage','add':true}"), PRESTAGE_NOT_ADDED,
        "... and after DEPEND");
    /* the other names: dws-create is the plugin's, not the service's */
    ev (sm, SDEP ("DEPEND", "{'id':42,'name':'dws-create','add':false}"),
        "[{'action':'respond-error','errnum':22,"
        "'errstr':'dws.dependency: `dws-create` is not a flux-dws dependency'}]",
        "dependency method: dws-create is not the service's to remove");
    ev (sm, SDEP ("DEPEND", "{'id':42,'name':'dws-limit','add':false}"),
        "[{'action':'dependency-remove','name':'dws-limit'},{'action':'respond','payload':{}}]",
        "dependency method: dws-limit through the same method");

    /* malformed: the clear error of every method */
    ev (sm, SDEP ("DEPEND", "{'id':42,'add':false}"),
        MALFORMED_ACTS ("dependency", "`name` must be a string"), "dependency: no name");
    ev (sm, SDEP ("DEPEND", "{'id':42,'name':7,'add':false}"),
        MALFORMED_ACTS ("dependency", "`name` must be a string"), "dependency: name number");
    ev (sm, SDEP ("DEPEND", "{'id':42,'name':'dws-prestage'}"),
        MALFORMED_ACTS ("dependency", "`add` must be a boolean"), "dependency: no add");
    ev (sm, SDEP ("DEPEND", "{'id':42,'name':'dws-prestage','add':0}"),
        MALFORMED_ACTS ("dependency", "`add` must be a boolean"), "dependency: add 0");
    ev (sm, SDEP ("DEPEND", "{'id':'42','name':'dws-prestage','add':false}"),
        MALFORMED_ACTS ("dependency", "`id` must be an integer"), "dependency: id string");
    ev (sm, SDEP ("DEPEND", "[]"),
        MALFORMED_ACTS ("dependency", "the payload is not an object"), "dependency: a list");
    ev (sm, "{'type':'prestage-remove','state':'DEPEND','payload':{'id':'42'}}",
        MALFORMED_ACTS ("prestage-remove", "`id` must be an integer"),
        "prestage-remove: id string");
    dws_jobsm_destroy (sm);

    /* an older flux-dws service's prestage-remove still lets the job go */
    sm = prestaged ();
    ev (sm, "{'type':'prestage-remove','state':'DEPEND','payload':{'id':42}}", PRESTAGE_GONE,
        "prestage-remove (an older service): dws-prestage removed in DEPEND");
    dws_jobsm_destroy (sm);
    ok (dws_jobsm_service_count () == 5 && !strcmp (dws_jobsm_service_name (3), "prestage-remove")
            && !strcmp (dws_jobsm_service_name (4), "prestage-unpin"),
        "prestage-remove is still registered, beside the reference's three, and prestage-unpin");
}

#define RELOAD(state, flags)                                                                   \
    "{'type':'reload','id':42,'userid':1000,'jobspec':" JOBSPEC ",'state':'" state "'" flags "}"

static void reload (void)
{
    struct dws_jobsm *sm;

    sm = sm_new (NULL);
    ev (sm, RELOAD ("NEW", ""), "[]", "reload in NEW: nothing");
    ev (sm, "{'type':'run'}",
        "run event: job 42 was reloaded in NEW; its depend event comes first",
        "reload in NEW: depend first");
    ev (sm, "{'type':'depend','id':43,'userid':1000,'jobspec':" JOBSPEC "}",
        "depend event: id 43 is not this job's id 42", "reload in NEW: depend of another job");
    ev (sm, DEPEND, DEPEND_ACTS, "reload in NEW: then depend as usual");
    dws_jobsm_destroy (sm);

    /* flux jobtap load: job.new, then job.state.depend */
    sm = sm_new (NULL);
    ev (sm, RELOAD ("DEPEND", ""), "[{'action':'subscribe'}]",
        "reload in DEPEND: taken as held, subscribed");
    ev (sm, DEPEND, DEPEND_ACTS, "reload in DEPEND: depend holds and asks again");
    ev (sm, UPDATE, UPDATE_ACTS, "reload in DEPEND: resource-update removes the dependency");
    ev (sm, DEPEND, "depend event: job 42 has had its depend event",
        "reload in DEPEND: a second depend is a bad event");
    dws_jobsm_destroy (sm);

    /* job manager restart: job.new only, never job.state.depend; the
     * restarted service sends the resource-update again
     */
    sm = sm_new (NULL);
    ev (sm, RELOAD ("DEPEND", ""), "[{'action':'subscribe'}]", "restart in DEPEND: subscribed");
    state_is (sm, "dependency", "true", "restart in DEPEND: the replayed dependency is held");
    ev (sm, UPDATE, UPDATE_ACTS,
        "restart in DEPEND: the service's resource-update removes the dependency (no depend)");
    ev (sm, UPDATE, RESPOND, "restart in DEPEND: a repeated resource-update is answered only");
    ev (sm, DEPEND, "[]", "a depend after the resource-update holds nothing");
    ev (sm, "{'type':'run'}", RUN_ACTS, "restart in DEPEND: then run as usual");
    dws_jobsm_destroy (sm);

    sm = sm_new (NULL);
    ev (sm, RELOAD ("DEPEND", ""), "[{'action':'subscribe'}]", "restart in DEPEND");
    ev (sm, EXC ("cancel"), "[]", "restart in DEPEND: cancelled before its resources");
    ev (sm, "{'type':'cleanup'}", EPILOG_ACTS ("false"),
        "restart in DEPEND, cancelled: the epilog tears the Workflow down");
    dws_jobsm_destroy (sm);

    sm = sm_new (NULL);
    ev (sm, "{'type':'reload','id':42,'userid':1,'jobspec':{},'state':'DEPEND'}", "[]",
        "reload in DEPEND without dw: inert");
    ev (sm, "{'type':'depend','id':42,'userid':1,'jobspec':{}}", "[]",
        "reload in DEPEND without dw: its depend does nothing");
    dws_jobsm_destroy (sm);

    sm = sm_new (NULL);
    ev (sm, RELOAD ("SCHED", ""), "[{'action':'subscribe'}]", "reload in SCHED");
    ev (sm, UPDATE, RESPOND, "reload in SCHED: a resource-update is a repeat");
    ev (sm, "{'type':'run'}", RUN_ACTS, "reload in SCHED: run");
    dws_jobsm_destroy (sm);

    sm = sm_new (NULL);
    ev (sm, RELOAD ("RUN", ",'prolog_active':true"),
        "[{'action':'subscribe'},{'action':'lookup-R'}]",
        "reload in RUN with the prolog held: R read to ask dws.setup again (a prolog-remove"
        " sent while no plugin was loaded is lost)");
    ev (sm, "{'type':'run'}", "[]", "reload in RUN: a run event does nothing");
    ev (sm, R_EV, R_ACTS, "R: dws.setup asked again");
    ev (sm, "{'type':'rpc-response','tag':'setup','ok':true,'payload':{}}", "[]",
        "the service takes it as a repeat");
    ev (sm, PROLOG_REMOVE, PROLOG_REMOVE_ACTS, "reload in RUN: prolog-remove finishes it");
    ev (sm, "{'type':'start'}", "[]", "start");
    ev (sm, "{'type':'finish'}", EPILOG_ACTS ("true"), "finish");
    dws_jobsm_destroy (sm);

    sm = sm_new (NULL);
    ev (sm, RELOAD ("RUN", ",'start_posted':true"), "[{'action':'subscribe'}]",
        "reload in RUN, prolog over, started");
    ev (sm, PROLOG_REMOVE, RESPOND, "a lost prolog's prolog-remove: respond only (no junk)");
    ev (sm, "{'type':'cleanup'}", "[]", "cleanup: started, so wait for finish");
    ev (sm, "{'type':'finish'}", EPILOG_ACTS ("true"), "finish: run_started from reload");
    dws_jobsm_destroy (sm);

    /* reloaded in CLEANUP after a cancel, tasks still dying: finish starts it */
    sm = sm_new (NULL);
    ev (sm, RELOAD ("CLEANUP", ",'start_posted':true"), "[{'action':'subscribe'}]",
        "reload in CLEANUP, started, not finished");
    state_is (sm, "epilog_started", "false", "the epilog is still to start");
    ev (sm, "{'type':'cleanup'}", "[]", "a cleanup event does not start it");
    ev (sm, "{'type':'finish'}", EPILOG_ACTS ("true"), "finish starts it");
    dws_jobsm_destroy (sm);

    sm = sm_new (NULL);
    ev (sm, RELOAD ("CLEANUP", ",'start_posted':true,'finish_posted':false"),
        "[{'action':'subscribe'}]", "reload in CLEANUP, started, finish_posted false");
    ev (sm, "{'type':'release','final':true}", EPILOG_ACTS ("true"),
        "the final release starts it");
    dws_jobsm_destroy (sm);

    sm = sm_new (NULL);
    ev (sm, RELOAD ("CLEANUP", ",'start_posted':true,'finish_posted':true"),
        "[{'action':'subscribe'}]", "reload in CLEANUP after finish, epilog not active");
    state_is (sm, "epilog_started", "true", "taken as done");
    ev (sm, "{'type':'free'}", "[]", "free: nothing");
    dws_jobsm_destroy (sm);

    sm = sm_new (NULL);
    ev (sm, RELOAD ("RUN", ",'start_posted':true,'finish_posted':1"),
        "reload event: 'finish_posted' must be a boolean", "finish_posted not boolean");
    dws_jobsm_destroy (sm);

    sm = sm_new ("{'epilog-timeout':30}");
    ev (sm, RELOAD ("CLEANUP", ",'start_posted':true,'epilog_active':true"),
        "[{'action':'subscribe'},{'action':'timer-start','key':'epilog-timeout','after':30.0},"
        "{'action':'rpc','topic':'dws.post_run','tag':'post_run','payload':{'jobid':42,"
        "'run_started':true}}]",
        "reload in CLEANUP with the epilog held: timer restarted, dws.post_run asked again"
        " (an epilog-remove sent while no plugin was loaded is lost)");
    char enosys[160];
    snprintf (enosys, sizeof (enosys),
              "{'type':'rpc-response','tag':'post_run','ok':false,'errnum':%d,"
              "'errstr':'No service matching dws.post_run is registered'}",
              ENOSYS);
    ev (sm, enosys,
        "[{'action':'log','level':'info','message':'job 42: dws.post_run asked again after a"
        " reload failed (No service matching dws.post_run is registered); the dws service"
        " finds the job when it starts'}]",
        "asked before the service is loaded (a job manager restart): no exception, the epilog"
        " stays held");
    ev (sm, "{'type':'cleanup'}", "[]", "no second epilog");
    ev (sm, EXC ("cancel"), TEARDOWN, "cancel: teardown");
    ev (sm, EPILOG_REMOVE ("CLEANUP"),
        "[{'action':'epilog-finish','name':'dws-epilog','status':0},"
        "{'action':'timer-stop','key':'epilog-timeout'},{'action':'respond','payload':{}}]",
        "epilog-remove");
    dws_jobsm_destroy (sm);

    sm = sm_new (NULL);
    ev (sm, RELOAD ("CLEANUP", ""), "[{'action':'subscribe'}]", "reload in CLEANUP, no epilog");
    ev (sm, "{'type':'cleanup'}", "[]", "an inactive epilog in CLEANUP is taken as done");
    ev (sm, "{'type':'finish'}", "[]", "finish neither");
    dws_jobsm_destroy (sm);

    sm = sm_new (NULL);
    ev (sm, "{'type':'reload','id':42,'userid':1,'jobspec':{},'state':'RUN'}", "[]",
        "reload without dw: inert");
    state_is (sm, "has_dw", "false", "inert");
    dws_jobsm_destroy (sm);

    sm = sm_new (NULL);
    ev (sm,
        "{'type':'reload','id':42,'userid':1,'jobspec':{'attributes':{'system':{'dw':1}}},"
        "'state':'CLEANUP'}",
        "[]", "reload with an invalid dw: nothing (no workflow)");
    ev (sm, "{'type':'cleanup'}", "[]", "no epilog");
    dws_jobsm_destroy (sm);

    sm = sm_new (NULL);
    ev (sm, RELOAD ("INACTIVE", ""),
        "reload event: 'INACTIVE' is not an active job state (NEW, DEPEND, PRIORITY, SCHED,"
        " RUN, CLEANUP)",
        "reload INACTIVE");
    ev (sm, RELOAD ("RUN", ",'prolog_active':1"), "reload event: 'prolog_active' must be a boolean",
        "reload flag not boolean");
    ev (sm, "{'type':'reload','id':42,'userid':1,'jobspec':{}}",
        "reload event: 'state' must be a string", "reload without state");
    state_is (sm, "known", "false", "bad reloads left the machine unknown");
    dws_jobsm_destroy (sm);
}

static void state_dump (void)
{
    struct dws_jobsm *sm = scheduled ("{'epilog-timeout':1.5}");
    char *s = dws_jobsm_state_json (sm);
    json_is (s,
             "{\"phase\":\"sched\",\"known\":true,\"id\":42,\"userid\":1000,\"await_depend\":false,\"depend_optional\":false,\"has_dw\":true,"
             "\"created\":true,\"create_failed\":false,\"dependency\":false,\"other_deps\":0,"
             "\"create_deferred\":false,\"start_posted\":false,"
             "\"prolog_active\":false,\"r_pending\":false,\"epilog_started\":false,"
             "\"epilog_active\":false,\"timer_active\":false,\"epilog_timeout\":1.5,"
             "\"pending\":{\"create\":0,\"setup\":0,\"post_run\":0,\"teardown\":0,\"abort\":0}}",
             "state dump");
    free (s);
    ok (dws_jobsm_state_json (NULL) == NULL, "state of NULL is NULL");
    dws_jobsm_destroy (sm);
}

/* Requests that reach no machine, and the one table of action names. */
static void unrouted (void)
{
    dws_error_t err;
    char *s;

    s = dws_jobsm_unrouted_json ("epilog-remove", "[]", 1, 1, &err);
    ok (s && strstr (s, "received malformed dws.epilog-remove RPC: the payload is not an object")
            && strstr (s, "may be out of sync"),
        "a payload that is not an object: EPROTO and the skew hint");
    free (s);
    s = dws_jobsm_unrouted_json ("epilog-remove", "not json", 1, 1, &err);
    ok (s && strstr (s, "the payload is not an object"), "a payload that is not JSON: the same");
    free (s);
    s = dws_jobsm_unrouted_json ("epilog-remove", "{\"id\":\"x\"}", 1, 1, &err);
    ok (s && strstr (s, "'id' must be a job id"), "an id that is no job id: EPROTO");
    free (s);
    s = dws_jobsm_unrouted_json ("epilog-remove", "{\"id\":9}", 0, 0, &err);
    json_is (s, "[{\"action\":\"respond-error\",\"errnum\":2,"
                "\"errstr\":\"dws.epilog-remove: job 9 is not active\"}]",
             "a job that is not active: ENOENT");
    free (s);
    s = dws_jobsm_unrouted_json ("epilog-remove", "{\"id\":9}", 1, 0, &err);
    json_is (s, "[{\"action\":\"respond-error\",\"errnum\":22,"
                "\"errstr\":\"dws.epilog-remove: job 9 has no #DW directives\"}]",
             "a job without dw: EINVAL, the text a machine gives an inert job");
    free (s);
    ok (!dws_jobsm_unrouted_json ("epilog-remove", "{\"id\":9}", 1, 1, &err)
            && strstr (err.text, "its machine answers"),
        "an active rabbit job is its machine's to answer: %s", err.text);
    ok (dws_jobwire_action_count () == DWS_JOBWIRE_ACT_COUNT, "action count");
    bool roundtrip = true;
    for (int i = 0; i < DWS_JOBWIRE_ACT_COUNT; i++)
        roundtrip = roundtrip && dws_jobwire_action_parse (dws_jobwire_action_name (i)) == i;
    ok (roundtrip, "every action name parses back to its action");
    ok (dws_jobwire_action_parse ("bogus") == -1 && dws_jobwire_action_parse (NULL) == -1
            && !dws_jobwire_action_name (DWS_JOBWIRE_ACT_COUNT) && !dws_jobwire_action_name (-1),
        "unknown names and actions");
}

static void eventlog_flags (void)
{
    dws_error_t err;
    bool s = true, fi = false, pr = true, ep = true;
    const char *held =
        "{\"timestamp\":1.0,\"name\":\"submit\",\"context\":{\"userid\":0}}\n"
        "{\"timestamp\":2.0,\"name\":\"prolog-start\",\"context\":{\"description\":\"dws-setup\"}}\n"
        "{\"timestamp\":3.0,\"name\":\"prolog-finish\",\"context\":{\"description\":\"dws-setup\",\"status\":0}}\n"
        "{\"timestamp\":4.0,\"name\":\"start\"}\n"
        "{\"timestamp\":5.0,\"name\":\"finish\",\"context\":{\"status\":0}}\n"
        "{\"timestamp\":6.0,\"name\":\"epilog-start\",\"context\":{\"description\":\"dws-epilog\"}}\n"
        "{\"timestamp\":7.0,\"name\":\"epilog-start\",\"context\":{\"description\":\"other\"}}\n"
        "{\"timestamp\":8.0,\"name\":\"epilog-finish\",\"context\":{\"description\":\"other\",\"status\":0}}\n";
    ok (dws_jobsm_eventlog_flags (held, &s, &fi, &pr, &ep, &err) == 0 && s && fi && !pr && ep,
        "eventlog: started, finished, prolog over, dws-epilog held (another plugin's epilog"
        " ended)");
    ok (dws_jobsm_eventlog_flags (
            "{\"timestamp\":1,\"name\":\"submit\"}\n"
            "{\"timestamp\":2,\"name\":\"prolog-start\",\"context\":{\"description\":\"dws-setup\"}}\n",
            &s, &fi, &pr, &ep, &err)
                == 0
            && !s && pr && !ep,
        "eventlog: dws-setup prolog held, not started");
    ok (dws_jobsm_eventlog_flags (
            "{\"timestamp\":1,\"name\":\"epilog-start\",\"context\":{\"description\":\"dws-epilog\"}}\n"
            "{\"timestamp\":2,\"name\":\"epilog-finish\",\"context\":{\"description\":\"dws-epilog\",\"status\":1}}",
            &s, &fi, &pr, &ep, &err)
                == 0
            && !ep,
        "eventlog: dws-epilog finished (no final newline)");
    ok (dws_jobsm_eventlog_flags (
            "{\"timestamp\":1,\"name\":\"epilog-start\",\"context\":{\"description\":\"other\"}}\n",
            &s, &fi, &pr, &ep, &err)
                == 0
            && !ep,
        "eventlog: another plugin's epilog is not ours");
    s = pr = ep = true;
    fi = false;
    ok (dws_jobsm_eventlog_flags ("{\"name\":\"submit\"}\nnot json\n", &s, &fi, &pr, &ep, &err) < 0
            && strstr (err.text, "line 2") && s && pr && ep,
        "eventlog: a bad line is an error naming it, flags untouched");
    ok (dws_jobsm_eventlog_flags (NULL, &s, &fi, &pr, &ep, &err) < 0, "eventlog: NULL is an error");
    ok (dws_jobsm_eventlog_flags ("", &s, &fi, &pr, &ep, &err) == 0 && !s && !pr && !ep,
        "eventlog: empty: nothing posted");
}

#define DEPEV(name, d) "{\"timestamp\":1,\"name\":\"" name "\",\"context\":{\"description\":\"" d "\"}}\n"

static void eventlog_other_deps (void)
{
    dws_error_t err;
    int n = -1;

    ok (dws_jobsm_eventlog_other_deps (
            "{\"timestamp\":0,\"name\":\"submit\",\"context\":{}}\n"
            DEPEV ("dependency-add", "after-success=f1") DEPEV ("dependency-add", "begin-time=9")
            DEPEV ("dependency-add", "dws-create") DEPEV ("dependency-remove", "begin-time=9"),
            &n, &err)
                == 0
            && n == 1,
        "eventlog: one other dependency held (dws-create and removed ones not counted)");
    ok (dws_jobsm_eventlog_other_deps (DEPEV ("dependency-add", "after-success=f1")
                                           DEPEV ("dependency-remove", "after-success=f1"),
                                       &n, &err)
                == 0
            && n == 0,
        "eventlog: added and removed: none");
    ok (dws_jobsm_eventlog_other_deps (DEPEV ("dependency-add", "dws-create")
                                           DEPEV ("dependency-add", "dws-prestage")
                                           DEPEV ("dependency-remove", "dws-create")
                                           DEPEV ("dependency-add", "begin-time=9"),
                                       &n, &err)
                == 0
            && n == 1,
        "eventlog: dws-prestage is ours, not another plugin's");
    n = 7;
    ok (dws_jobsm_eventlog_other_deps ("not json\n", &n, &err) < 0 && strstr (err.text, "line 1")
            && n == 7,
        "eventlog: a bad line is an error, the count untouched");
    ok (dws_jobsm_eventlog_other_deps (NULL, &n, &err) < 0, "eventlog: NULL is an error");
}

int main (void)
{
    config ();
    validate ();
    check ();
    bad_tolerance ();
    persistent ();
    bad_events ();
    no_dw ();
    invalid_dw ();
    depend_payload ();
    lifecycle ();
    create_response ();
    malformed ();
    resource_update ();
    cancel_depend ();
    cancel_sched ();
    cancel_prolog ();
    cancel_running ();
    prolog_failures ();
    epilog_failures ();
    epilog_timeout ();
    epilog_remove ();
    prestage_dependency ();
    prestage_unpin ();
    reload ();
    eventlog_flags ();
    eventlog_other_deps ();
    state_dump ();
    unrouted ();
    return done_testing ();
}
