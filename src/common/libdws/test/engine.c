/* SPDX-License-Identifier: LGPL-3.0-or-later
 *
 * The dws service engine (engine.h), driven with hand-made events and no
 * Kubernetes: every test feeds events as JSON text and looks for actions
 * by their fields.  A tiny fake API server (K8S below) keeps the Workflows
 * the engine created and applies its merge patches to them, so a test
 * moves a job on by setting a Workflow's status and feeding it back as a
 * watch event.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "engine/advance.h"
#include "engine/decider/sidestate.h"
#include "engine/engine.h"
#include "engine/job.h"
#include "engine/state.h"
#include "engine/verbs/datain.h"
#include "jsontap.h"
#include "util/error.h"
#include "util/f58.h"
#include "util/jsonio.h"
#include "wire/explain.h"

/* How often each of the decider's rules chose a step over every engine
 * of this run, written where FLUX_DWS_RULE_COUNTS names (a JSON line,
 * appended): t/scripts/rule_coverage.py fails when a rule is fired by no
 * test.  Each engine's counts are taken as it is destroyed.
 */
#define RULES_MAX 1024
static long long rules_fired[RULES_MAX];

static void rules_tally_destroy (struct dws_engine *e)
{
    for (int i = 0; e && i < dws_engine_rule_count () && i < RULES_MAX; i++)
        rules_fired[i] += dws_engine_rule_fired (e, i);
    dws_engine_destroy (e);
}
#define dws_engine_destroy rules_tally_destroy

static void rules_write (void)
{
    const char *path = getenv ("FLUX_DWS_RULE_COUNTS");
    if (!path || !*path)
        return;
    json_t *counts = json_object ();
    for (int i = 0; i < dws_engine_rule_count () && i < RULES_MAX; i++)
        json_object_set_new (counts, dws_engine_rule_name (i), json_integer (rules_fired[i]));
    json_t *line = json_pack ("{s:s s:o}", "source", "C test-engine", "counts", counts);
    char *text = line ? json_dumps (line, JSON_COMPACT) : NULL;
    FILE *f = text ? fopen (path, "a") : NULL;
    if (f) {
        fprintf (f, "%s\n", text);
        fclose (f);
    }
    free (text);
    json_decref (line);
}

#define FIN "flux-framework.readthedocs.io/workflow"
#define LABEL "dataworkflowservices.github.io/workflow.name"
#define PREFIX "DWS/Rabbit interactions failed: "
#define ANN_HOSTS "flux-dws.io/hosts"
#define ANN_EPILOG "flux-dws.io/epilog"
#define ANN_FAILED "flux-dws.io/failed"
#define NOW 1700000000 /* 2023-11-14T22:13:20Z */

/* rabbit1 serves c1 and c2, rabbit2 serves c3 and c4 */
#define SYSCONF                                                                               \
    "{'metadata':{'name':'default'},'spec':{'storageNodes':["                                 \
    "{'type':'Rabbit','name':'rabbit1','computesAccess':[{'name':'c1','index':0},"            \
    "{'name':'c2','index':1}]},"                                                              \
    "{'type':'Rabbit','name':'rabbit2','computesAccess':[{'name':'c3','index':0},"            \
    "{'name':'c4','index':1}]}]}}"
#define TASK "{'type':'slot','count':1,'label':'task','with':[{'type':'core','count':1}]}"
#define DW_XFS "#DW jobdw type=xfs capacity=10GiB name=scratch"
/* a ClientMount of compute `c`, all mounted (or not ready) */
#define CM_MOUNTED(c)                                                                         \
    "{'spec':{'node':'" c "'},'status':{'allReady':true,'mounts':[{'state':'mounted'}]}}"
#define CM_NOT_READY(c)                                                                       \
    "{'spec':{'node':'" c "'},'status':{'allReady':false,'mounts':[{'state':'mounted'}]}}"

/* --- plumbing ---------------------------------------------------------- */

static json_t *A;           /* the actions of the last event (NULL: refused) */
static char errtext[DWS_ERROR_TEXT_MAX]; /* why the last event was refused */
static json_t *K8S;         /* the fake API server: {name: Workflow} */

static void bail (const char *what, const char *text)
{
    printf ("Bail out! %s: %s\n", what, text);
    exit (1);
}

/* JSON is written with ' for " (and ` for '): q() swaps them. */
static char *q (const char *s)
{
    char *out = strdup (s);
    if (!out)
        bail ("out of memory", s);
    for (char *p = out; *p; p++) {
        if (*p == '\'')
            *p = '"';
        else if (*p == '`')
            *p = '\'';
    }
    return out;
}

static char *vfmt (const char *fmt, va_list ap)
{
    char *s = NULL;
    if (vasprintf (&s, fmt, ap) < 0)
        bail ("out of memory", fmt);
    return s;
}

/* Parse printf-formatted JSON text written with ' for ". */
__attribute__ ((format (printf, 1, 2)))
static json_t *jq (const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    char *s = vfmt (fmt, ap);
    va_end (ap);
    char *t = q (s);
    json_error_t jerr;
    json_t *o = json_loads (t, JSON_DECODE_ANY, &jerr);
    if (!o)
        bail (jerr.text, t);
    free (s);
    free (t);
    return o;
}

static char *dump (json_t *o)
{
    return o ? json_dumps (o, JSON_ENCODE_ANY | JSON_COMPACT | JSON_SORT_KEYS) : NULL;
}

/* RFC 7386 merge patch. */
static void merge (json_t *dst, json_t *patch)
{
    const char *k;
    json_t *v;
    json_object_foreach (patch, k, v) {
        json_t *d = json_object_get (dst, k);
        if (json_is_null (v))
            json_object_del (dst, k);
        else if (json_is_object (v) && json_is_object (d))
            merge (d, v);
        else if (json_is_object (v)) {
            json_t *n = json_object ();
            merge (n, v);
            json_object_set_new (dst, k, n);
        }
        else
            json_object_set (dst, k, v);
    }
}

/* The fake API server creates Workflows and applies merge patches. */
static void k8s_apply (json_t *acts)
{
    size_t i;
    json_t *a;
    json_array_foreach (acts, i, a) {
        const char *op = json_string_value (json_object_get (a, "op"));
        const char *kind = json_string_value (json_object_get (a, "kind"));
        const char *name = json_string_value (json_object_get (a, "name"));
        if (!op || !kind || !name || strcmp (kind, "Workflow") != 0)
            continue;
        json_t *body = json_object_get (a, "body");
        if (!strcmp (op, "create") && !json_object_get (K8S, name)) {
            json_t *wf = json_deep_copy (body);
            json_object_set_new (wf, "status", json_object ());
            json_object_set_new (K8S, name, wf);
        }
        else if (!strcmp (op, "patch") && json_object_get (K8S, name))
            merge (json_object_get (K8S, name), body);
    }
}

static void k8s_reset (void)
{
    json_decref (K8S);
    K8S = json_object ();
}

static json_t *wf (long long id)
{
    char name[64];
    snprintf (name, sizeof (name), "fluxjob-%lld", id);
    return json_object_get (K8S, name);
}

/* After every event, each job's Workflow as the engine last saw it is
 * fed to it again, and the SystemConfiguration last fed: nothing new, so
 * no job may take a step (issue 64: the
 * decider chooses from the job's phase and facts, a news bit says which
 * jobs to look at, not what to do).  What acts is counted and shown. */
static int looked_again, acted_again;
/* A Computes verb that asks nothing and looks again (planted below). */
static void computes_forgotten (struct dws_engine *e, struct job *job, const struct step *st)
{
    (void)st;
    advance_mark (e, job, NEWS_LOOK);
}
static bool looks_paused; /* a scenario that plants a broken verb */
static json_t *last_sysconf;            /* the last SystemConfiguration event fed ... */
static struct dws_engine *sysconf_to;  /* ... to this engine */

static void look_again (struct dws_engine *e)
{
    json_t *wfs = json_array ();
    /* the map again: every job is looked at, NEWS_LOOK (map_pass) */
    if (last_sysconf && sysconf_to == e)
        json_array_append (wfs, last_sysconf);
    for (size_t b = 0; b < e->nbuckets; b++)
        for (struct job *j = e->table[b]; j; j = j->next)
            if (j->wf)
                json_array_append_new (wfs, json_pack ("{s:s s:s s:s s:O}", "type", "watch",
                                                       "kind", "Workflow", "event", "MODIFIED",
                                                       "object", j->wf));
    size_t i;
    json_t *ev;
    json_array_foreach (wfs, i, ev) {
        dws_error_t err;
        json_t *again = dws_engine_event (e, ev, &err);
        looked_again++;
        if (json_array_size (again) > 0) {
            char *s = json_dumps (again, JSON_COMPACT);
            diag ("looked at again, acted: %s", s ? s : "?");
            free (s);
            acted_again++;
        }
        json_decref (again);
    }
    json_decref (wfs);
}

/* Feed an event (stolen); A = the actions, or NULL and errtext. */
static bool feedj (struct dws_engine *e, json_t *ev)
{
    dws_error_t err;
    const char *kind = json_string_value (json_object_get (ev, "kind"));
    bool is_sysconf = kind && !strcmp (kind, "SystemConfiguration");
    if (is_sysconf) {
        json_decref (last_sysconf);
        last_sysconf = json_deep_copy (ev);
        sysconf_to = e;
    }
    json_decref (A);
    A = dws_engine_event (e, ev, &err);
    json_decref (ev);
    errtext[0] = '\0';
    if (sysconf_to == e && is_sysconf) {
        size_t i;
        json_t *a;
        json_array_foreach (A, i, a) /* a map refused (logged) is no map to see again */
            if (!strncmp (dws_json_str_or (json_object_get (a, "message"), ""),
                          "SystemConfiguration", 19))
                sysconf_to = NULL;
    }
    if (!A)
        snprintf (errtext, sizeof (errtext), "%s", err.text);
    else {
        k8s_apply (A);
        if (!looks_paused)
            look_again (e);
    }
    return A != NULL;
}

__attribute__ ((format (printf, 2, 3)))
static bool feed (struct dws_engine *e, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    char *s = vfmt (fmt, ap);
    va_end (ap);
    json_t *ev = jq ("%s", s);
    free (s);
    return feedj (e, ev);
}

/* --- looking at actions ---------------------------------------------------- */

/* Does action `a` have the field `key` = `want` and every further
 * NULL-terminated key, value pair of ap?  A string field is compared as
 * is (a note too: it is the reference's text, exactly), any other as
 * compact JSON with sorted keys.
 */
static bool field_is (json_t *a, const char *key, const char *want)
{
    json_t *v = json_object_get (a, key);
    if (json_is_string (v))
        return !strcmp (json_string_value (v), want);
    char *s = dump (v);
    bool yes = s && !strcmp (s, want);
    free (s);
    return yes;
}

static bool matches (json_t *a, const char *key, va_list ap)
{
    const char *k = key;
    bool yes = true;
    while (k) {
        const char *want = va_arg (ap, const char *);
        if (!field_is (a, k, want))
            yes = false;
        k = va_arg (ap, const char *);
    }
    return yes;
}

/* The first action of A with these key, value pairs (NULL-terminated). */
static json_t *find (const char *key, ...)
{
    size_t i;
    json_t *a;
    json_array_foreach (A, i, a) {
        va_list ap;
        va_start (ap, key);
        bool yes = matches (a, key, ap);
        va_end (ap);
        if (yes)
            return a;
    }
    return NULL;
}

/* How many actions of A have these key, value pairs. */
static int count (const char *key, ...)
{
    int n = 0;
    size_t i;
    json_t *a;
    json_array_foreach (A, i, a) {
        va_list ap;
        va_start (ap, key);
        if (matches (a, key, ap))
            n++;
        va_end (ap);
    }
    return n;
}

static void show_actions (void)
{
    char *s = A ? json_dumps (A, JSON_COMPACT) : NULL;
    diag ("actions: %s", s ? s : errtext);
    free (s);
}

/* Is a raise action's sentence where it belongs (explain.h)?  When
 * explain.h knows the note, A holds a post-event DWS_EXPLAIN_EVENT for the
 * same job with {type, note, explanation} and a KVS put of the same under
 * DWS_EXPLAIN_KVS_KEY; when it does not, no such event.  Any other
 * action: true.
 */
static bool explained_beside (json_t *raise)
{
    const char *action = json_string_value (json_object_get (raise, "action"));
    const char *note = json_string_value (json_object_get (raise, "note"));
    char sentence[DWS_EXPLAIN_MAX];
    bool known, event = false, kvs = false;
    size_t i;
    json_t *a;
    if (!action || strcmp (action, "raise") != 0 || !note)
        return true;
    known = dws_explain (note, sentence, sizeof (sentence)) != NULL;
    json_array_foreach (A, i, a) {
        const char *act = json_string_value (json_object_get (a, "action"));
        json_t *o;
        if (!act || !json_equal (json_object_get (a, "id"), json_object_get (raise, "id")))
            continue;
        if (!strcmp (act, "post-event")
            && !strcmp (json_string_value (json_object_get (a, "name")), DWS_EXPLAIN_EVENT))
            o = json_object_get (a, "context");
        else if (!strcmp (act, "kvs"))
            o = json_object_get (json_object_get (a, "put"), DWS_EXPLAIN_KVS_KEY);
        else
            continue;
        if (!o || !json_equal (json_object_get (o, "note"), json_object_get (raise, "note")))
            continue;
        if (!known
            || !json_equal (json_object_get (o, "type"), json_object_get (raise, "type")))
            return false; /* an explanation for a note explain.h does not know */
        const char *got = json_string_value (json_object_get (o, "explanation"));
        if (got && !strcmp (got, sentence)) {
            if (!strcmp (act, "kvs"))
                kvs = true;
            else
                event = true;
        }
    }
    return known ? event && kvs : true;
}

/* ok (an action of A has these key, value pairs); returns it.  A raise
 * must also have its plain sentence beside it (explained_beside).
 */
static json_t *has_ (const char *what, const char *key, ...)
{
    json_t *found = NULL;
    size_t i;
    json_t *a;
    json_array_foreach (A, i, a) {
        va_list ap;
        va_start (ap, key);
        bool yes = matches (a, key, ap);
        va_end (ap);
        if (yes) {
            found = a;
            break;
        }
    }
    if (!ok (found != NULL && explained_beside (found), "%s", what)) {
        if (found)
            diag ("the raise's explanation is not beside it (%s, %s)", DWS_EXPLAIN_EVENT,
                  DWS_EXPLAIN_KVS_KEY);
        show_actions ();
    }
    return found;
}
#define has(what, ...) has_ (what, __VA_ARGS__, NULL)
#define find(...) find (__VA_ARGS__, NULL)
#define count(...) count (__VA_ARGS__, NULL)

static void none (const char *what)
{
    if (!ok (A && json_array_size (A) == 0, "%s", what))
        show_actions ();
}

/* A value at a path of keys (NULL-terminated; "#N" indexes an array). */
static json_t *jp (json_t *o, ...)
{
    va_list ap;
    const char *k;
    va_start (ap, o);
    while (o && (k = va_arg (ap, const char *))) {
        if (k[0] == '#')
            o = json_array_get (o, (size_t)atoi (k + 1));
        else
            o = json_object_get (o, k);
    }
    va_end (ap);
    return o;
}

/* `v` must equal the JSON written with ' for ". */
static void json_at (json_t *v, const char *expect, const char *what)
{
    char *g = dump (v);
    char *x = q (expect);
    json_is (g, x, what);
    free (g);
    free (x);
}

/* A must be exactly these actions (in order). */
static void acts_are (const char *expect, const char *what)
{
    if (!A) {
        ok (0, "%s", what);
        diag ("refused: %s", errtext);
        return;
    }
    json_at (A, expect, what);
}

static json_t *status (struct dws_engine *e)
{
    return dws_engine_status (e);
}

static char *status_text (struct dws_engine *e)
{
    json_t *s = status (e);
    char *t = dump (s);
    json_decref (s);
    return t;
}

/* The engine's entry for job `id` (new reference), or NULL. */
static json_t *job_status (struct dws_engine *e, long long id)
{
    json_t *s = status (e);
    json_t *out = NULL;
    size_t i;
    json_t *j;
    json_array_foreach (json_object_get (s, "jobs"), i, j)
        if (json_integer_value (json_object_get (j, "id")) == id)
            out = json_incref (j);
    json_decref (s);
    return out;
}

static long long njobs (struct dws_engine *e)
{
    json_t *s = status (e);
    long long n = (long long)json_array_size (json_object_get (s, "jobs"));
    json_decref (s);
    return n;
}

static struct dws_engine *engine (const char *config)
{
    dws_error_t err;
    char *c = config ? q (config) : NULL;
    struct dws_engine *e = dws_engine_create_json (c, &err);
    free (c);
    if (!e)
        bail ("engine", err.text);
    sysconf_to = NULL; /* a new engine may have a freed one's address */
    return e;
}

/* --- events ------------------------------------------------------------------ */

static char *resources (int nodes)
{
    char *s = NULL;
    if (asprintf (&s, "[{'type':'node','count':%d,'with':[" TASK "]}]", nodes) < 0)
        bail ("out of memory", "resources");
    return s;
}

static bool create_req (struct dws_engine *e, long long id, int msgid, int tol, int nodes,
                        const char *dw)
{
    char *res = resources (nodes);
    bool rc = feed (e,
                    "{'type':'request','userid':0,'topic':'dws.create','msgid':%d,"
                    "'groupid':100,'now':%d,'payload':{'jobid':%lld,'userid':1000,"
                    "'resources':%s,'dw_directives':'%s','failure_tolerance':%d}}",
                    msgid, NOW, id, res, dw, tol);
    free (res);
    return rc;
}

static bool setup_req (struct dws_engine *e, long long id, int msgid, const char *nodelist)
{
    return feed (e,
                 "{'type':'request','userid':0,"
                 "'topic':'dws.setup','msgid':%d,'payload':{'jobid':%lld,"
                 "'R':{'version':1,'execution':{'R_lite':[],'nodelist':[%s],'starttime':0,"
                 "'expiration':0}}}}",
                 msgid, id, nodelist);
}

static bool post_run_req (struct dws_engine *e, long long id, int msgid, bool started)
{
    return feed (e,
                 "{'type':'request','userid':0,"
                 "'topic':'dws.post_run','msgid':%d,'payload':{'jobid':%lld,"
                 "'run_started':%s}}",
                 msgid, id, started ? "true" : "false");
}

/* A k8s-result for token <what>:<id>; obj is borrowed (NULL: null). */
static bool k8s_result (struct dws_engine *e, const char *what, long long id, bool okv,
                        int code, const char *message, json_t *obj)
{
    char token[96];
    snprintf (token, sizeof (token), "%s:%lld", what, id);
    /* a copy: the engine must not share the fake API server's objects */
    return feedj (e, json_pack ("{s:s s:s s:b s:i s:s s:o}", "type", "k8s-result", "token",
                                token, "ok", okv, "code", code, "message", message, "object",
                                obj ? json_deep_copy (obj) : json_null ()));
}

/* A k8s-result whose object is {"items": [...]} written with '. */
static bool list_result (struct dws_engine *e, const char *what, long long id,
                         const char *items)
{
    json_t *o = jq ("{'items':%s}", items);
    bool rc = k8s_result (e, what, id, true, 200, "", o);
    json_decref (o);
    return rc;
}

static bool watch (struct dws_engine *e, const char *type, json_t *obj)
{
    return feedj (e, json_pack ("{s:s s:s s:s s:o}", "type", "watch", "kind", "Workflow",
                                "event", type, "object", json_deep_copy (obj)));
}

/* Set the job's Workflow status (state, ready, status, more fields written
 * with ') in the fake API server and feed it as a MODIFIED event.
 */
static bool wf_status (struct dws_engine *e, long long id, const char *state, bool ready,
                       const char *st, const char *extra)
{
    json_t *w = wf (id);
    if (!w)
        return false;
    json_t *s = json_pack ("{s:s s:b s:s s:s}", "state", state, "ready", ready, "status", st,
                           "elapsedTimeLastState", "1s");
    if (extra) {
        json_t *x = jq ("%s", extra);
        merge (s, x);
        json_decref (x);
    }
    json_object_set_new (w, "status", s);
    return watch (e, "MODIFIED", w);
}

/* The Workflow completes the state it was asked for. */
static bool complete (struct dws_engine *e, long long id, const char *extra)
{
    const char *want = json_string_value (jp (wf (id), "spec", "desiredState", NULL));
    return want && wf_status (e, id, want, true, "Completed", extra);
}

static bool sysconf (struct dws_engine *e)
{
    return feed (e, "{'type':'sync','kind':'SystemConfiguration','objects':[" SYSCONF "]}");
}

static bool sync_none (struct dws_engine *e)
{
    return feed (e, "{'type':'sync','kind':'Workflow','objects':[]}");
}

/* A DirectiveBreakdown for job `id`: xfs of `gib` per compute. */
static json_t *breakdown (long long id, int gib)
{
    return jq ("{'kind':'DirectiveBreakdown','metadata':{'name':'fluxjob-%lld-0',"
               "'namespace':'default'},'status':{'ready':true,'storage':{'allocationSets':["
               "{'label':'xfs','allocationStrategy':'AllocatePerCompute',"
               "'minimumCapacity':%lld}],'reference':{'kind':'Servers','name':'fluxjob-%lld',"
               "'namespace':'default'}}}}",
               id, (long long)gib << 30, id);
}

static char *token_of (const char *what, long long id)
{
    static char buf[8][96];
    static int n;
    char *b = buf[n++ % 8];
    snprintf (b, sizeof (buf[0]), "%s:%lld", what, id);
    return b;
}
#define TOK(what, id) token_of (what, id)

/* Drive job `id` (tolerance tol, computes `nodelist` written with ', e.g.
 * "'c1','c3'", `nodes` of them) through the happy path until its Workflow
 * has been asked for state `target` (or, for "Proposal", until Proposal is
 * complete and the breakdown read).  A is the last event's actions.
 */
static const char *job_dw = DW_XFS; /* the directives job_to submits */

static bool job_to (struct dws_engine *e, long long id, int tol, const char *nodelist,
                    int nodes, const char *target)
{
    static const char *order[] = {"Proposal", "Setup",   "DataIn",   "PreRun",
                                  "PostRun",  "DataOut", "Teardown", NULL};
    int t = 0;
    while (order[t] && strcmp (order[t], target) != 0)
        t++;
    json_t *bd = breakdown (id, 10);
    bool rc = false;
    char extra[256];
    snprintf (extra, sizeof (extra),
              "{'directiveBreakdowns':[{'name':'fluxjob-%lld-0','namespace':'default'}]}", id);
    if (!create_req (e, id, (int)id, tol, nodes, job_dw)
        || !k8s_result (e, "create", id, true, 201, "", wf (id)) || !complete (e, id, extra)
        || !find ("op", "get", "token", TOK ("breakdown", id))
        || !k8s_result (e, "breakdown", id, true, 200, "", bd)
        || !find ("topic", "job-manager.dws.resource-update"))
        goto out;
    if (t == 0)
        goto done;
    snprintf (extra, sizeof (extra), "{'computes':{'name':'fluxjob-%lld','namespace':'default'}}",
              id);
    if (!setup_req (e, id, 1, nodelist) || !find ("kind", "Servers", "op", "patch")
        || !k8s_result (e, "servers", id, true, 200, "", NULL)
        || !find ("kind", "Workflow", "op", "patch", "token", TOK ("state", id)))
        goto out;
    if (t == 1)
        goto done;
    if (!complete (e, id, extra) || !find ("kind", "Computes")
        || !k8s_result (e, "computes", id, true, 200, "", NULL)
        || !find ("kind", "Workflow", "op", "patch"))
        goto out;
    if (t == 2)
        goto done;
    if (!complete (e, id, extra) || !find ("kind", "Workflow", "op", "patch"))
        goto out;
    if (t == 3)
        goto done;
    if (!complete (e, id, "{'env':{'DW_JOB_scratch':'/mnt/nnf/x'}}")
        || !find ("topic", "job-manager.dws.prolog-remove")
        || !post_run_req (e, id, 2, true) || !find ("kind", "Workflow", "op", "patch"))
        goto out;
    if (t == 4)
        goto done;
    if (!complete (e, id, NULL) || !find ("kind", "Workflow", "op", "patch"))
        goto out;
    if (t == 5)
        goto done;
    if (!complete (e, id, NULL) || !find ("kind", "Workflow", "op", "patch"))
        goto out;
done:
    rc = true;
out:
    if (!rc) {
        diag ("job %lld did not reach %s", id, target);
        show_actions ();
    }
    json_decref (bd);
    return rc;
}

/* --- configuration ----------------------------------------------------------- */

static void config_err (const char *config, const char *expect)
{
    dws_error_t err;
    char *c = q (config);
    struct dws_engine *e = dws_engine_create_json (c, &err);
    is (e ? "(created)" : err.text, expect, "config %s refused", config);
    dws_engine_destroy (e);
    free (c);
}

static void test_config (void)
{
    dws_error_t err;
    struct dws_engine *e = dws_engine_create (NULL, &err);
    ok (e != NULL, "NULL config: defaults");
    dws_engine_destroy (e);

    config_err ("[]", "engine config must be an object");
    config_err ("{'tc_timeout':'x'}", "rabbit.tc_timeout: must be a number of seconds >= 0");
    config_err ("{'setup_timeout':-1}", "rabbit.setup_timeout: must be a number of seconds >= 0");
    config_err ("{'prerun_timeout':true}",
                "rabbit.prerun_timeout: must be a number of seconds >= 0");
    config_err ("{'postrun_timeout':[1]}",
                "rabbit.postrun_timeout: must be a number of seconds >= 0");
    config_err ("{'teardown_after':-0.5}",
                "rabbit.teardown_after: must be a number of seconds >= 0");
    config_err ("{'drain_compute_nodes':1}", "rabbit.drain_compute_nodes: must be true or false");
    config_err ("{'restrict_persistent_creation':'yes'}",
                "rabbit.restrict_persistent_creation: must be true or false");
    config_err ("{'save_datamovements':-1}",
                "rabbit.save_datamovements: must be an integer >= 0");
    config_err ("{'save_datamovements':1.5}",
                "rabbit.save_datamovements: must be an integer >= 0");
    config_err ("{'min_allocation_size':0}",
                "rabbit.min_allocation_size: must be an integer >= 1");
    config_err ("{'owner':'root'}", "rabbit.owner: must be an integer >= 0");
    config_err ("{'presets':['x']}", "rabbit.presets: must be a table");
    config_err ("{'policy':{'maximums':3}}", "rabbit.policy.maximums: must be a table");
    config_err ("{'presets':{},'policy':{'maximums':'x'}}",
                "rabbit.policy.maximums: must be a table");
    config_err ("{'namespace':''}", "namespace: must be 1 to 63 characters");
    config_err ("{'namespace':'"
                "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'}",
                "namespace: must be 1 to 63 characters");
    e = dws_engine_create_json ("{", &err);
    ok (e == NULL && strlen (err.text) > 0, "config that is not JSON is refused (%s)",
        err.text);
    e = dws_engine_create_json ("{\"tc_timeout\":null,\"presets\":null,\"policy\":{}}", &err);
    ok (e != NULL, "null values take their defaults");
    dws_engine_destroy (e);

    /* reconfig: a bad one keeps the old configuration */
    e = engine ("{'owner':0,'namespace':'ns1'}");
    sync_none (e);
    feed (e,
          "{'type':'request','userid':0,"
          "'topic':'dws.create','msgid':1,'payload':{'jobid':1,'userid':7,"
          "'resources':[],'dw_directives':'#DW create_persistent type=lustre capacity=1TiB "
          "name=p'}}");
    acts_are ("[{'action':'respond','msgid':1,'payload':{'success':false,'errstr':"
              "'only the instance owner may create persistent storage (#DW create_persistent)'"
              "}}]",
              "create_persistent by a user who is not the owner is refused");
    char *c = q ("{'owner':'x'}");
    ok (dws_engine_reconfig_json (e, c, &err) < 0
            && !strcmp (err.text, "rabbit.owner: must be an integer >= 0"),
        "reconfig with a bad value fails (%s)", err.text);
    free (c);
    ok (dws_engine_reconfig_json (e, "[", &err) < 0, "reconfig with bad JSON fails");
    feed (e,
          "{'type':'request','userid':0,"
          "'topic':'dws.create','msgid':2,'payload':{'jobid':1,'userid':7,"
          "'resources':[],'dw_directives':'#DW create_persistent type=lustre capacity=1TiB "
          "name=p'}}");
    has ("the old configuration stays after a failed reconfig", "action", "respond", "payload",
         "{\"errstr\":\"only the instance owner may create persistent storage (#DW "
         "create_persistent)\",\"success\":false}");
    c = q ("{'owner':0,'restrict_persistent_creation':false,'namespace':'ns2'}");
    ok (dws_engine_reconfig_json (e, c, &err) == 0, "reconfig");
    free (c);
    feed (e,
          "{'type':'request','userid':0,"
          "'topic':'dws.create','msgid':3,'payload':{'jobid':1,'userid':7,"
          "'resources':[],'dw_directives':'#DW create_persistent type=lustre capacity=1TiB "
          "name=p'}}");
    has ("after reconfig create_persistent by anyone creates a Workflow in the new namespace",
         "action", "k8s", "op", "create", "namespace", "ns2", "name", "fluxjob-1");
    dws_engine_destroy (e);
}

/* --- requests --------------------------------------------------------------- */

/* Who may ask: every method of the engine's table (so a method added is
 * covered here) from a user who is not the owner is refused EPERM before
 * its payload is looked at, unless it is a guest's; the payload's
 * "userid" (dws.create's job owner) never stands in for the sender's.
 */
static void test_credentials (void)
{
    struct dws_engine *e = engine ("{'owner':500}");
    int n = dws_engine_method_count (), guests = 0;
    ok (n >= 7 && dws_engine_method_name (n) == NULL && dws_engine_method_name (-1) == NULL,
        "the method table: %d methods, NULL past either end", n);
    sync_none (e);
    for (int i = 0; i < n; i++) {
        const char *m = dws_engine_method_name (i);
        bool guest = dws_engine_method_guest (i);
        guests += guest;
        /* a payload that would pass for the owner: the sender's uid alone decides */
        feed (e,
              "{'type':'request','userid':501,'topic':'dws.%s','msgid':%d,'payload':"
              "{'jobid':1,'userid':500,'resources':[],'dw_directives':'#DW jobdw type=xfs "
              "capacity=1GiB name=x'}}",
              m, 100 + i);
        json_t *first = json_array_get (A, 0);
        bool eperm = json_integer_value (json_object_get (first, "errnum")) == EPERM
                     && !strcmp (json_string_value (json_object_get (first, "action")),
                                 "respond-error");
        ok (guest ? !eperm : eperm && json_array_size (A) == 1,
            "dws.%s from user 501 (owner 500): %s", m, guest ? "answered" : "EPERM, nothing else");
        feed (e, "{'type':'request','userid':500,'topic':'dws.%s','msgid':%d,'payload':{}}", m,
              200 + i);
        first = json_array_get (A, 0);
        ok (json_integer_value (json_object_get (first, "errnum")) != EPERM,
            "dws.%s from the owner is not refused EPERM", m);
    }
    ok (guests == 6 && dws_engine_method_guest (n - 6) == 1
            && !strcmp (dws_engine_method_name (n - 6), "rabbits")
            && !strcmp (dws_engine_method_name (n - 5), "jobs")
            && !strcmp (dws_engine_method_name (n - 4), "job")
            && !strcmp (dws_engine_method_name (n - 3), "persistent-list")
            && !strcmp (dws_engine_method_name (n - 2), "persistent-share")
            && !strcmp (dws_engine_method_name (n - 1), "persistent-unshare"),
        "six guest methods: rabbits, jobs, job, persistent-list, -share, -unshare");
    feed (e, "{'type':'request','userid':501,'topic':'dws.bogus','msgid':3,'payload':{}}");
    acts_are ("[{'action':'respond-error','msgid':3,'errnum':1,"
              "'errstr':'Request requires owner credentials'}]",
              "an unknown method from a guest: EPERM, as the broker answers (no names learnt)");
    json_t *st = status (e);
    ok (json_array_size (json_object_get (st, "jobs")) == 0, "no guest request made a job");
    json_decref (st);
    dws_engine_destroy (e);
}

/* The engine's status without its event counter. */
static char *jobs_text (struct dws_engine *e)
{
    json_t *s = status (e);
    json_object_del (s, "events");
    char *t = dump (s);
    json_decref (s);
    return t;
}

static void refused (struct dws_engine *e, const char *topic, const char *payload,
                     const char *expect)
{
    char *before = jobs_text (e);
    feed (e, "{'type':'request','userid':0,'topic':'%s','msgid':9,'payload':%s}", topic, payload);
    json_t *x = json_pack ("[{s:s s:i s:{s:b s:s}}]", "action", "respond", "msgid", 9,
                           "payload", "success", 0, "errstr", expect);
    char *xs = dump (x);
    char *g = dump (A);
    char *p = q (payload);
    if (!ok (g && xs && !strcmp (g, xs), "%s %s: %s", topic, p, expect)) {
        diag ("     got: %s", g ? g : errtext);
        diag ("expected: %s", xs);
    }
    char *after = jobs_text (e);
    if (strcmp (before, after) != 0) {
        ok (0, "%s %s changed the engine", topic, p);
        diag ("before %s", before);
        diag ("after  %s", after);
    }
    free (before);
    free (after);
    free (p);
    free (g);
    free (xs);
    json_decref (x);
}

static void test_requests (void)
{
    struct dws_engine *e = engine ("{'owner':0,'policy':{'maximums':{'xfs':5}},"
                                   "'presets':{'small':'#DW jobdw type=xfs capacity=1GiB "
                                   "name=s'}}");

    /* before the first Workflow list: requests for unknown jobs wait for it */
    feed (e, "{'type':'request','userid':0,'topic':'dws.setup','msgid':1,'payload':{'jobid':5,"
             "'R':{'execution':{'nodelist':['c1']}}}}");
    none ("dws.setup before the sync: kept until the list");
    feed (e, "{'type':'request','userid':0,'topic':'dws.post_run','msgid':2,'payload':{'jobid':6,"
             "'run_started':true}}");
    none ("dws.post_run before the sync: kept");
    feed (e, "{'type':'request','userid':0,"
             "'topic':'dws.teardown','msgid':3,'payload':{'jobid':7}}");
    none ("dws.teardown before the sync: kept");
    feed (e, "{'type':'request','userid':0,'topic':'dws.abort','msgid':4,'payload':{'jobid':8}}");
    none ("dws.abort before the sync: kept");
    feed (e, "{'type':'request','userid':0,'topic':'dws.status','msgid':'m1'}");
    acts_are ("[{'action':'respond','msgid':'m1','payload':{'success':true,'synced':false,"
              "'jobs':[],'phases':{},'workflows':[],'rabbits':0,'computes':0,'events':4}}]",
              "dws.status before anything (no payload needed; 4 events before it)");
    sync_none (e);
    has ("the list: the kept dws.setup is answered", "action", "respond", "msgid", "1");
    has ("... its Workflow is created again (#487)", "action", "job-info", "id", "5");
    has ("... the kept dws.post_run answered", "action", "respond", "msgid", "2");
    has ("... and its epilog released (no Workflow)", "topic",
         "job-manager.dws.epilog-remove", "payload", "{\"id\":6}");
    has ("... the kept dws.teardown answered", "action", "respond", "msgid", "3");
    has ("... its epilog released", "topic", "job-manager.dws.epilog-remove", "payload",
         "{\"id\":7}");
    has ("... the kept dws.abort answered", "action", "respond", "msgid", "4");
    ok (count ("topic", "job-manager.dws.epilog-remove") == 2, "... abort releases nothing");
    feed (e, "{'type':'request','userid':0,"
             "'topic':'dws.status','msgid':{'any':'thing'},'payload':{}}");
    json_at (jp (find ("action", "respond"), "payload", "synced", NULL), "true",
             "dws.status: synced after the Workflow list; msgid echoed as given");
    json_at (jp (find ("action", "respond"), "msgid", NULL), "{'any':'thing'}",
             "dws.status: the msgid is echoed");

    const char *res = "[{'type':'node','count':1}]";
    char p[512];
    refused (e, "dws.create", "'x'", "dws.create: the payload must be a JSON object");
    refused (e, "dws.create", "{'userid':1,'resources':[],'dw_directives':'" DW_XFS "'}",
             "dws.create: jobid must be a non-negative integer");
    refused (e, "dws.create", "{'jobid':-1,'userid':1,'resources':[],'dw_directives':'x'}",
             "dws.create: jobid must be a non-negative integer");
    refused (e, "dws.create", "{'jobid':'7','userid':1,'resources':[],'dw_directives':'x'}",
             "dws.create: jobid must be a non-negative integer");
    refused (e, "dws.create", "{'jobid':7,'resources':[],'dw_directives':'x'}",
             "dws.create: userid must be a non-negative integer");
    refused (e, "dws.create", "{'jobid':7,'userid':-3,'resources':[],'dw_directives':'x'}",
             "dws.create: userid must be a non-negative integer");
    refused (e, "dws.create",
             "{'jobid':7,'userid':1,'failure_tolerance':-1,'resources':[],"
             "'dw_directives':'x'}",
             "dw_failure_tolerance must be a positive integer");
    refused (e, "dws.create",
             "{'jobid':7,'userid':1,'failure_tolerance':'2','resources':[],"
             "'dw_directives':'x'}",
             "dw_failure_tolerance must be a positive integer");
    refused (e, "dws.create", "{'jobid':7,'userid':1,'dw_directives':'x'}",
             "dws.create: resources must be the jobspec resources");
    refused (e, "dws.create", "{'jobid':7,'userid':1,'resources':'node','dw_directives':'x'}",
             "dws.create: resources must be the jobspec resources");
    refused (e, "dws.create", "{'jobid':7,'userid':1,'resources':[]}",
             "dws.create: dw_directives is missing");
    refused (e, "dws.create", "{'jobid':7,'userid':1,'resources':[],'dw_directives':5}",
             "Malformed #DW directives: dw must be a string or a list of strings");
    refused (e, "dws.create", "{'jobid':7,'userid':1,'resources':[],'dw_directives':[1]}",
             "Malformed #DW directives: dw must be a string or a list of strings");
    refused (e, "dws.create", "{'jobid':7,'userid':1,'resources':[],'dw_directives':[]}",
             "Malformed #DW directives: no #DW directive found");
    refused (e, "dws.create",
             "{'jobid':7,'userid':1,'resources':[],'dw_directives':"
             "'#DW create_persistent type=xfs capacity=1GiB name=p'}",
             "only the instance owner may create persistent storage (#DW create_persistent)");
    snprintf (p, sizeof (p),
              "{'jobid':7,'userid':1,'resources':%s,'dw_directives':'" DW_XFS "'}", res);
    refused (e, "dws.create", p,
             "Requested a total of 10 GiB of xfs storage per node but max is 5 GiB per node");

    refused (e, "dws.setup", "[]", "dws.setup: the payload must be a JSON object");
    refused (e, "dws.setup", "{'R':{}}", "dws.setup: jobid must be a non-negative integer");
    refused (e, "dws.setup", "{'jobid':7}", "dws.setup: R must be an object (RFC 20)");
    refused (e, "dws.setup", "{'jobid':7,'R':'c1'}", "dws.setup: R must be an object (RFC 20)");
    refused (e, "dws.setup", "{'jobid':7,'R':{}}", "dws.setup: R has no execution.nodelist");
    refused (e, "dws.setup", "{'jobid':7,'R':{'execution':{'nodelist':[]}}}",
             "dws.setup: R has no execution.nodelist");
    refused (e, "dws.setup", "{'jobid':7,'R':{'execution':{'nodelist':['c1',5]}}}",
             "dws.setup: R execution.nodelist[1] is not a string");
    feed (e, "{'type':'request','userid':0,'topic':'dws.setup','msgid':9,'payload':{'jobid':7,"
             "'R':{'execution':{'nodelist':['c[1-']}}}}");
    const char *es = json_string_value (jp (A, "#0", "payload", "errstr", NULL));
    ok (es && !strncmp (es, "dws.setup: R execution.nodelist[0]: ", 36)
            && json_is_false (jp (A, "#0", "payload", "success", NULL))
            && json_array_size (A) == 1,
        "dws.setup with a bad hostlist in R: %s", es ? es : "(none)");

    refused (e, "dws.post_run", "{'run_started':true}",
             "dws.post_run: jobid must be a non-negative integer");
    refused (e, "dws.post_run", "{'jobid':7}", "dws.post_run: run_started must be a boolean");
    refused (e, "dws.post_run", "{'jobid':7,'run_started':1}",
             "dws.post_run: run_started must be a boolean");
    refused (e, "dws.teardown", "{}", "dws.teardown: jobid must be a non-negative integer");
    refused (e, "dws.teardown", "{'jobid':1.5}",
             "dws.teardown: jobid must be a non-negative integer");
    refused (e, "dws.abort", "{'jobid':null}", "dws.abort: jobid must be a non-negative integer");
    refused (e, "dws.abort", "null", "dws.abort: the payload must be a JSON object");

    feed (e, "{'type':'request','userid':0,'topic':'dws.bogus','msgid':3,'payload':{}}");
    acts_are ("[{'action':'respond-error','msgid':3,'errnum':38,'errstr':'unknown dws method'}]",
              "an unknown dws method: respond-error ENOSYS");
    ok (!feed (e, "{'type':'request','userid':0,'msgid':3,'payload':{}}")
            && !strcmp (errtext, "request event needs topic, msgid and userid (the sender's)"),
        "a request without a topic is refused: %s", errtext);
    ok (!feed (e, "{'type':'request','userid':0,'topic':'dws.status'}")
            && !strcmp (errtext, "request event needs topic, msgid and userid (the sender's)"),
        "a request without a msgid is refused");
    ok (!feed (e, "{'type':'request','topic':'dws.rabbits','msgid':3}")
            && !strcmp (errtext, "request event needs topic, msgid and userid (the sender's)"),
        "a request without its sender's userid is refused");
    ok (!feed (e, "{'type':'request','userid':'0','topic':'dws.rabbits','msgid':3}"),
        "... and one whose userid is not an integer");

    /* presets expand; within the maximums a Workflow is created */
    snprintf (p, sizeof (p),
              "{'type':'request','userid':0,'topic':'dws.create','msgid':4,'payload':{'jobid':8,"
              "'userid':1,'resources':%s,'dw_directives':'small'}}",
              res);
    feed (e, "%s", p);
    json_t *a = has ("a preset name expands to its directives", "op", "create");
    json_at (jp (a, "body", "spec", "dwDirectives", NULL),
             "['#DW jobdw type=xfs capacity=1GiB name=s']", "dwDirectives from the preset");
    json_at (jp (a, "body", "spec", "groupID", NULL), "1",
             "groupID defaults to the userid without a groupid");
    json_at (jp (a, "body", "metadata", "annotations", "flux-dws.io/failure-tolerance", NULL),
             "'0'", "failure tolerance defaults to 0");
    feed (e, "%s", p);
    none ("a repeated dws.create before the create answers waits for it");
    k8s_result (e, "create", 8, true, 201, "", wf (8));
    ok (count ("action", "respond", "payload", "{\"success\":true}") == 2,
        "both dws.create requests are answered when the create succeeds");
    feed (e, "%s", p);
    acts_are ("[{'action':'respond','msgid':4,'payload':{'success':true}}]",
              "a repeated dws.create after the create: success, nothing else");
    feed (e,
          "{'type':'request','userid':0,"
          "'topic':'dws.create','msgid':5,'payload':{'jobid':9,'userid':1,"
          "'resources':[],'dw_directives':'#DW jobdw type=xfs capacity=1GiB name=a'}}");
    k8s_result (e, "create", 9, false, 403, "admission webhook denied: bad things", NULL);
    acts_are ("[{'action':'respond','msgid':5,'payload':{'success':false,"
              "'errstr':'admission webhook denied: bad things'}}]",
              "a refused create answers dws.create with the Kubernetes message");
    ok (job_status (e, 9) == NULL, "the job of a refused create is forgotten");
    dws_engine_destroy (e);
}

/* --- SystemConfiguration ----------------------------------------------------- */

static void counts_are (struct dws_engine *e, int rabbits, int computes, const char *what)
{
    json_t *s = status (e);
    ok (json_integer_value (json_object_get (s, "rabbits")) == rabbits
            && json_integer_value (json_object_get (s, "computes")) == computes,
        "%s: %d rabbits, %d computes", what, rabbits, computes);
    json_decref (s);
}

static void test_sysconfig (void)
{
    struct dws_engine *e = engine (NULL);
    counts_are (e, 0, 0, "no SystemConfiguration yet");
    sysconf (e);
    none ("the SystemConfiguration list gives no action");
    counts_are (e, 2, 4, "SystemConfiguration sync builds the map");
    feed (e, "{'type':'watch','kind':'SystemConfiguration','event':'MODIFIED','object':"
             "{'metadata':{'name':'other'},'spec':{'storageNodes':[]}}}");
    counts_are (e, 2, 4, "a SystemConfiguration not named default is ignored");
    feed (e, "{'type':'watch','kind':'SystemConfiguration','event':'MODIFIED','object':"
             "{'metadata':{'name':'default'},'spec':{'storageNodes':["
             "{'name':'r1','computesAccess':[{'name':'c1'}]},"
             "{'name':'r2','computesAccess':[{'name':'c1'}]}]}}}");
    acts_are ("[{'action':'log','level':'err','message':"
              "'SystemConfiguration: compute c1 is listed under two rabbits'}]",
              "a compute under two rabbits is an error log");
    counts_are (e, 2, 4, "the old map stays after a bad SystemConfiguration");
    feed (e, "{'type':'watch','kind':'SystemConfiguration','event':'MODIFIED','object':"
             "{'metadata':{'name':'default'},'spec':{'storageNodes':[{'computesAccess':[]}]}}}");
    has ("a storage node without a name is an error log", "action", "log", "message",
         "SystemConfiguration spec.storageNodes[0] has no name");
    feed (e, "{'type':'watch','kind':'SystemConfiguration','event':'DELETED','object':"
             "{'metadata':{'name':'default'},'spec':{'storageNodes':[]}}}");
    counts_are (e, 2, 4, "a DELETED SystemConfiguration is ignored");
    feed (e, "{'type':'watch','kind':'SystemConfiguration','event':'MODIFIED','object':"
             "{'metadata':{'name':'default'},'spec':{'storageNodes':["
             "{'name':'r1','computesAccess':[{'name':'c1'},{'name':'c9'},{}]}]}}}");
    counts_are (e, 1, 2, "a new SystemConfiguration replaces the map (nameless computes skipped)");
    feed (e, "{'type':'watch','kind':'Servers','event':'ADDED','object':{}}");
    none ("watch events of other kinds are ignored");
    dws_engine_destroy (e);
}

/* --- the happy lifecycle -------------------------------------------------- */

static void test_lifecycle (void)
{
    const long long id = 12345;
    json_t *a;
    k8s_reset ();
    struct dws_engine *e = engine ("{'owner':0,'setup_timeout':60,'prerun_timeout':30,"
                                   "'postrun_timeout':20}");
    sysconf (e);

    create_req (e, id, 1, 1, 2, DW_XFS);
    ok (json_array_size (A) == 1, "dws.create: one action, no answer yet");
    a = has ("dws.create: k8s create of the Workflow", "action", "k8s", "op", "create", "kind",
             "Workflow", "namespace", "default", "name", "fluxjob-12345", "token",
             "create:12345");
    json_at (jp (a, "body", "spec", NULL),
             "{'desiredState':'Proposal','dwDirectives':['" DW_XFS "'],'wlmID':'flux',"
             "'jobID':'f4fr','userID':1000,'groupID':100}",
             "Workflow spec: desiredState, directives, wlmID, jobID in f58, user and group");
    json_at (jp (a, "body", "metadata", "finalizers", NULL), "['" FIN "']",
             "Workflow carries our finalizer");
    json_at (jp (a, "body", "metadata", "annotations", NULL),
             "{'flux-dws.io/failure-tolerance':'1','flux-dws.io/resources':"
             "'[{\\'type\\':\\'node\\',\\'count\\':2,\\'with\\':[{\\'type\\':\\'slot\\',"
             "\\'count\\':1,\\'label\\':\\'task\\',\\'with\\':[{\\'type\\':\\'core\\',"
             "\\'count\\':1}]}]}]'}",
             "annotations: failure tolerance and the original resources");
    /* a second finalizer in front of ours, as another controller might add */
    json_t *fins = jp (wf (id), "metadata", "finalizers", NULL);
    json_array_insert_new (fins, 0, json_string ("example.com/other"));

    json_t *jstat = job_status (e, id);
    json_at (jp (jstat, "desired", NULL), "'Proposal'", "status: job desired Proposal");
    json_decref (jstat);

    k8s_result (e, "create", id, true, 201, "", wf (id));
    acts_are ("[{'action':'respond','msgid':1,'payload':{'success':true}},"
              "{'action':'memo','id':12345,'memo':{'rabbit_workflow':'fluxjob-12345'}}]",
              "create ok: dws.create answered, memo rabbit_workflow");
    json_t *list = json_pack ("[O]", wf (id));
    feedj (e, json_pack ("{s:s s:s s:o}", "type", "sync", "kind", "Workflow", "objects", list));
    jstat = status (e);
    ok (A && json_array_size (A) == 1 && json_is_true (json_object_get (jstat, "synced"))
            && njobs (e) == 1,
        "the first Workflow list (with ours, no status yet): synced, nothing to do");
    has ("... but ask which active jobs lost a request (orphans)", "action", "active-jobs");
    feedj (e, json_pack ("{s:s s:s s:o}", "type", "sync", "kind", "Workflow", "objects",
                         json_pack ("[O]", wf (id))));
    ok (A && count ("action", "active-jobs") == 0, "a later list (410) does not ask again");
    json_decref (jstat);

    wf_status (e, id, "Proposal", false, "DriverWait", NULL);
    none ("Proposal not ready: nothing");
    wf_status (e, id, "Proposal", true, "Completed",
               "{'directiveBreakdowns':[{'name':'fluxjob-12345-0','namespace':'default'}]}");
    a = has ("Proposal ready: read the DirectiveBreakdown", "action", "k8s", "op", "get", "kind",
             "DirectiveBreakdown", "name", "fluxjob-12345-0", "namespace", "default", "token",
             "breakdown:12345");
    has ("Proposal ready: timing and the Workflow into the KVS", "action", "kvs", "id", "12345",
         "link",
         "{\"rabbit_proposal_timing\":\"data.dws.timing.proposal\",\"rabbit_workflow\":"
         "\"data.dws.workflow\"}");
    json_t *again = json_deep_copy (wf (id));
    watch (e, "MODIFIED", again);
    none ("a repeated Proposal-ready event: nothing (the read is outstanding)");

    json_t *bd = breakdown (id, 10);
    k8s_result (e, "breakdown", id, true, 200, "", bd);
    a = has ("breakdown read: resource-update to the job manager", "action", "rpc", "topic",
             "job-manager.dws.resource-update", "nodeid", "0");
    json_at (jp (a, "payload", NULL),
             "{'id':12345,'exclude':null,'resources':[{'type':'slot','count':2,"
             "'label':'rabbit','with':[{'type':'node','count':1,'with':[" TASK "]},"
             "{'type':'ssd','count':10,'exclusive':true}]}]}",
             "resources rewritten with ssd; nothing excluded (drain_compute_nodes)");
    watch (e, "MODIFIED", again);
    none ("a repeated Proposal-ready event after the resource update: nothing");
    create_req (e, id, 9, 1, 2, DW_XFS);
    ok (count ("action", "respond", "msgid", "9") == 1
            && count ("topic", "job-manager.dws.resource-update", NULL) == 1,
        "a repeated dws.create in DEPEND (a reloaded jobtap plugin): answered, and the"
        " resource-update sent again");

    setup_req (e, id, 2, "'c1','c3'");
    has ("dws.setup: answered", "action", "respond", "msgid", "2");
    ok (!find ("token", "hosts:12345"), "... its hosts are not patched alone (they go with"
        " Setup)");
    a = has ("dws.setup: Servers filled", "action", "k8s", "op", "patch", "kind",
             "Servers", "name", "fluxjob-12345", "namespace", "default", "token",
             "servers:12345");
    json_at (jp (a, "body", NULL),
             "{'spec':{'allocationSets':[{'label':'xfs','allocationSize':10737418240,"
             "'storage':[{'name':'rabbit1','allocationCount':1},"
             "{'name':'rabbit2','allocationCount':1}]}]}}",
             "Servers allocation sets: one xfs allocation on each rabbit");
    a = has ("dws.setup: memo rabbits", "action", "memo", "id", "12345");
    json_at (jp (a, "memo", NULL), "{'rabbits':'rabbit[1-2]'}", "memo: the job's rabbits");
    ok (!find ("token", "state:12345"), "Setup is not asked before Servers are filled");
    setup_req (e, id, 3, "'c1','c3'");
    acts_are ("[{'action':'respond','msgid':3,'payload':{'success':true}}]",
              "a repeated dws.setup is answered and ignored");

    k8s_result (e, "servers", id, true, 200, "", NULL);
    acts_are ("[{'action':'k8s','op':'patch','kind':'Workflow','namespace':'default',"
              "'name':'fluxjob-12345','token':'state:12345',"
              "'body':{'spec':{'desiredState':'Setup'},"
              "'metadata':{'annotations':{'" ANN_HOSTS "':'c[1,3]'}}}},"
              "{'action':'timer-start','key':'setup:12345','after':60.0}]",
              "Servers filled: desiredState Setup, the hosts recorded with it, and the setup"
              " timer");
    watch (e, "MODIFIED", again);
    none ("a stale Proposal-ready event after Setup was asked: nothing");
    json_decref (again);
    k8s_result (e, "state", id, true, 200, "", NULL);
    none ("a state patch that succeeded: nothing");

    wf_status (e, id, "Setup", false, "DriverWait", NULL);
    none ("Setup in progress: nothing");
    wf_status (e, id, "Setup", true, "Completed",
               "{'computes':{'name':'fluxjob-12345','namespace':'default'}}");
    has ("Setup ready: the setup timer stops", "action", "timer-stop", "key", "setup:12345");
    a = has ("Setup ready: Computes filled", "action", "k8s", "op", "patch", "kind", "Computes",
             "name", "fluxjob-12345", "token", "computes:12345");
    json_at (jp (a, "body", NULL), "{'data':[{'name':'c1'},{'name':'c3'}]}",
             "Computes data: the job's computes");
    a = has ("Setup ready: timing into the KVS", "action", "kvs", "link",
             "{\"rabbit_setup_timing\":\"data.dws.timing.setup\"}");
    json_at (jp (a, "put", "data.dws.timing.setup", NULL), "'1s'", "DWS' own figure for Setup");
    ok (json_is_number (jp (a, "put", "data.dws.timeline.setup", "asked", NULL))
            && json_is_number (jp (a, "put", "data.dws.timeline.setup", "done", NULL)),
        "Setup's timeline: when it was asked for and found done");
    ok (!find ("token", "state:12345"), "DataIn is not asked before Computes are filled");
    k8s_result (e, "computes", id, true, 200, "", NULL);
    acts_are ("[{'action':'k8s','op':'patch','kind':'Workflow','namespace':'default',"
              "'name':'fluxjob-12345','token':'state:12345',"
              "'body':{'spec':{'desiredState':'DataIn'}}}]",
              "Computes filled: desiredState DataIn");

    complete (e, id, NULL);
    has ("DataIn ready: desiredState PreRun", "action", "k8s", "op", "patch", "body",
         "{\"spec\":{\"desiredState\":\"PreRun\"}}");
    has ("DataIn ready: the prerun timer (prerun_timeout > 0)", "action", "timer-start", "key",
         "prerun:12345", "after", "30.0");
    json_t *datain = json_deep_copy (wf (id));
    json_object_set_new (jp (datain, "spec", NULL), "desiredState", json_string ("DataIn"));
    watch (e, "MODIFIED", datain);
    none ("a stale DataIn-ready event after PreRun was asked: nothing");
    json_decref (datain);
    jstat = job_status (e, id);
    json_at (jp (jstat, "timers", NULL), "['prerun']", "status: the prerun timer runs");
    json_at (jp (jstat, "hosts", NULL), "'c[1,3]'", "status: the job's hosts");
    json_decref (jstat);

    complete (e, id,
              "{'env':{'DW_JOB_scratch':'/mnt/nnf/abc'},'workflowToken':{'secretName':"
              "'fluxjob-12345-token','secretNamespace':'nnf-system'}}");
    has ("PreRun ready: the prerun timer stops", "action", "timer-stop", "key", "prerun:12345");
    has ("PreRun ready with a workflowToken: read the Secret", "action", "k8s", "op", "get",
         "kind", "Secret", "name", "fluxjob-12345-token", "namespace", "nnf-system", "token",
         "secret:12345");
    ok (!find ("topic", "job-manager.dws.prolog-remove"),
        "the prolog is not released before the token is read");
    json_t *secret = jq ("{'data':{'token':'c2VjcmV0LXRva2Vu'}}");
    k8s_result (e, "secret", id, true, 200, "", secret);
    json_decref (secret);
    acts_are ("[{'action':'rpc','topic':'job-manager.dws.prolog-remove','nodeid':0,"
              "'payload':{'id':12345,'variables':{'DW_JOB_scratch':'/mnt/nnf/abc',"
              "'DW_WORKFLOW_TOKEN':'secret-token'}}}]",
              "Secret read: prolog-remove with the env and the decoded token");

    post_run_req (e, id, 4, true);
    acts_are ("[{'action':'respond','msgid':4,'payload':{'success':true}},"
              "{'action':'k8s','op':'patch','kind':'Workflow','namespace':'default',"
              "'name':'fluxjob-12345','token':'state:12345','body':{'spec':"
              "{'desiredState':'PostRun'},'metadata':{'annotations':{'" ANN_EPILOG
              "':'active'}}}},"
              "{'action':'timer-start','key':'postrun:12345','after':20.0}]",
              "dws.post_run: PostRun with the epilog annotation and the postrun timer");
    post_run_req (e, id, 5, true);
    acts_are ("[{'action':'respond','msgid':5,'payload':{'success':true}}]",
              "a repeated dws.post_run is answered and ignored");
    complete (e, id, NULL);
    has ("PostRun ready: the postrun timer stops", "action", "timer-stop", "key",
         "postrun:12345");
    has ("PostRun ready: desiredState DataOut", "action", "k8s", "body",
         "{\"spec\":{\"desiredState\":\"DataOut\"}}");
    complete (e, id, NULL);
    a = has ("DataOut ready: the Workflow into the KVS", "action", "kvs", "link",
             "{\"rabbit_workflow\":\"data.dws.workflow\"}");
    json_at (jp (a, "put", "data.dws.workflow", "spec", "desiredState", NULL), "'DataOut'",
             "the Workflow saved is the latest one");
    has ("DataOut ready: Teardown (epilog annotation kept)", "action", "k8s", "op", "patch",
         "token", "state:12345", "body",
         "{\"metadata\":{\"annotations\":{\"" ANN_EPILOG "\":\"active\"}},\"spec\":"
         "{\"desiredState\":\"Teardown\"}}");
    ok (!find ("topic", "job-manager.dws.epilog-remove"),
        "the epilog is not released before Teardown completes");

    complete (e, id, NULL);
    has ("Teardown ready: timing into the KVS", "action", "kvs", "link",
         "{\"rabbit_teardown_timing\":\"data.dws.timing.teardown\"}");
    has ("Teardown ready: epilog-remove", "action", "rpc", "topic",
         "job-manager.dws.epilog-remove", "payload", "{\"id\":12345}");
    has ("Teardown ready: the Workflow is deleted", "action", "k8s", "op", "delete", "kind",
         "Workflow", "name", "fluxjob-12345", "token", "delete:12345");
    a = has ("Teardown ready: the finalizer is removed", "action", "k8s", "op", "json-patch",
             "kind", "Workflow", "name", "fluxjob-12345", "token", "finalizer:12345");
    json_at (jp (a, "body", NULL),
             "[{'op':'test','path':'/metadata/finalizers/1','value':'" FIN "'},"
             "{'op':'remove','path':'/metadata/finalizers/1'}]",
             "json-patch: test, then remove our finalizer at its index");
    complete (e, id, NULL);
    ok (!find ("op", "delete") && !find ("topic", "job-manager.dws.epilog-remove"),
        "a repeated Teardown-ready event does not delete or release again");
    k8s_result (e, "delete", id, true, 200, "", NULL);
    none ("delete answered: nothing");
    k8s_result (e, "finalizer", id, false, 422, "test failed", NULL);
    none ("a finalizer patch whose test failed (422) is not an error");
    k8s_result (e, "delete", id, false, 500, "boom", NULL);
    has ("a failed delete is logged", "action", "log", "level", "err", "message",
         "fluxjob-12345: delete failed: boom");
    json_object_set_new (jp (wf (id), "metadata", NULL), "deletionTimestamp",
                         json_string ("2023-11-14T22:13:21Z"));
    /* a removal that fails on its way is asked again once the Workflow
     * is seen with our finalizer after it was asked (the looks that feed
     * the Workflow again are paused: each would be such a sighting) */
    looks_paused = true;
    watch (e, "MODIFIED", wf (id));
    has ("a Workflow being deleted with our finalizer on: remove it again", "op", "json-patch",
         "token", "finalizer:12345");
    k8s_result (e, "finalizer", id, false, 500, "boom", NULL);
    acts_are ("[{'action':'log','level':'err','message':'fluxjob-12345: finalizer failed: boom'}]",
              "the removal fails on its way: logged");
    sysconf (e);
    none ("... not seen since it was asked: a look does not ask again");
    watch (e, "MODIFIED", wf (id));
    has ("... seen again: asked again", "op", "json-patch", "token", "finalizer:12345");
    watch (e, "MODIFIED", wf (id));
    none ("seen while the removal is out: nothing");
    k8s_result (e, "finalizer", id, false, 500, "boom", NULL);
    sysconf (e);
    has ("... it fails: the next look asks again (seen with our finalizer since)", "op",
         "json-patch", "token", "finalizer:12345");
    looks_paused = false;
    watch (e, "DELETED", wf (id));
    ok (A && njobs (e) == 0, "DELETED after our delete: the job is forgotten");
    feed (e, "{'type':'request','userid':0,'topic':'dws.status','msgid':1}");
    json_at (jp (A, "#0", "payload", "jobs", NULL), "[]", "dws.status: no jobs left");
    ok (!jp (A, "#0", "payload", "service", NULL), "dws.status: no service figures given, none");
    feed (e, "{'type':'request','userid':0,'topic':'dws.status','msgid':2,'service':{'events':7}}");
    json_at (jp (A, "#0", "payload", "service", NULL), "{'events':7}",
             "dws.status: the shell's figures are in the engine's answer, built whole");
    k8s_result (e, "state", id, false, 500, "late", NULL);
    none ("a late answer for a forgotten job: nothing");
    feed (e, "{'type':'rpc-result','token':'prolog:12345','ok':false,'errnum':2,'errstr':'x'}");
    none ("a late RPC result for a forgotten job: nothing");
    json_decref (bd);
    dws_engine_destroy (e);
}

/* --- DWS errors and TransientCondition ------------------------------------ */

/* A pre-staged job's DataIn progress is read a quarter of the stall
 * timeout apart, at least 0.1 s and at most 30 s. */
static void test_datain_read_every (void)
{
    ok (datain_read_every (0.2) == 0.1, "datain_stall_timeout 0.2 s: read every 0.1 s (the least)");
    ok (datain_read_every (8) == 2.0, "8 s: every 2 s (a quarter)");
    ok (datain_read_every (120) == 30.0, "120 s: every 30 s");
    ok (datain_read_every (400) == 30.0, "400 s: every 30 s (the most)");
}

static void test_error (void)
{
    k8s_reset ();
    struct dws_engine *e = engine ("{'prerun_timeout':30}");
    sysconf (e);
    sync_none (e);
    ok (job_to (e, 200, 0, "'c1'", 1, "PreRun"), "job 200 reaches PreRun");
    wf_status (e, 200, "PreRun", false, "Error", "{'message':'mount failed on c1'}");
    has ("status Error: exception with DWS' message", "action", "raise", "id", "200", "type",
         "exception", "severity", "0", "note", PREFIX "workflow hit an error: mount failed on c1");
    has ("status Error: logged", "action", "log", "level", "err", "message",
         "fluxjob-200: " PREFIX "workflow hit an error: mount failed on c1");
    has ("status Error: timers stop", "action", "timer-stop", "key", "prerun:200");
    json_t *rec0 = has ("status Error: the Workflow into the KVS", "action", "kvs", "link",
                        "{\"rabbit_workflow\":\"data.dws.workflow\"}");
    ok (json_is_number (jp (rec0, "put", "data.dws.timeline.prerun", "asked", NULL))
            && !jp (rec0, "put", "data.dws.timeline.prerun", "done", NULL),
        "... with PreRun's timeline: asked, never done");
    has ("status Error: Teardown", "action", "k8s", "op", "patch", "body",
         "{\"spec\":{\"desiredState\":\"Teardown\"}}");
    wf_status (e, 200, "PreRun", false, "Error", "{'message':'mount failed on c1'}");
    none ("the same error again: nothing (one exception, one Teardown)");
    complete (e, 200, NULL);
    /* the state's timing, then the record flux dws wait reads */
    json_t *rec = jp (json_array_get (A, 1), "put", "data.dws.teardown", NULL);
    ok (A && json_array_size (A) == 2 && count ("action", "kvs", NULL) == 2
            && json_is_string (json_object_get (rec, "state"))
            && !strcmp (json_string_value (json_object_get (rec, "state")), "complete"),
        "Teardown complete before the epilog: timing and its record only, the Workflow is kept");
    json_t *j = job_status (e, 200);
    json_at (jp (j, "failed_job", NULL), "true", "status: the job failed");
    json_decref (j);
    post_run_req (e, 200, 9, false);
    has ("post_run after Teardown completed: epilog-remove", "topic",
         "job-manager.dws.epilog-remove");
    has ("post_run after Teardown completed: delete", "op", "delete", "token", "delete:200");

    /* the epilog begins while the Teardown an error asked for is under way:
     * the Workflow is marked (a restarted service finds the epilog there) */
    ok (job_to (e, 201, 0, "'c1'", 1, "PreRun"), "job 201 reaches PreRun");
    wf_status (e, 201, "PreRun", false, "Error", "{'message':'mount failed on c1'}");
    has ("status Error: Teardown, no epilog yet", "action", "k8s", "op", "patch", "body",
         "{\"spec\":{\"desiredState\":\"Teardown\"}}");
    post_run_req (e, 201, 10, false);
    has ("post_run during Teardown: the epilog marked on the Workflow", "op", "patch", "kind",
         "Workflow", "body",
         "{\"metadata\":{\"annotations\":{\"" ANN_EPILOG "\":\"active\"}}}");
    ok (!find ("op", "delete"), "... no delete before Teardown is done");
    complete (e, 201, NULL);
    has ("Teardown done: epilog-remove", "topic", "job-manager.dws.epilog-remove");
    has ("... and the Workflow deleted", "op", "delete", "token", "delete:201");
    dws_engine_destroy (e);

    /* nnf-sos' empty user text: the failing driver's error says what failed */
    k8s_reset ();
    e = engine ("{'prerun_timeout':30}");
    sysconf (e);
    sync_none (e);
    job_to (e, 202, 0, "'c1'", 1, "PreRun");
    wf_status (e, 202, "PreRun", false, "Error",
               "{'message':'DW Directive 0: Internal error: ','drivers':["
               "{'watchState':'Setup','error':'an old one'},"
               "{'watchState':'PreRun','error':'internal error: Node: c1: mount/unmount "
               "failed: unable to mount file system: bad'}]}");
    has ("an empty user message: the PreRun driver's error follows it", "action", "raise",
         "note", PREFIX "workflow hit an error: DW Directive 0: Internal error:  (internal "
         "error: Node: c1: mount/unmount failed: unable to mount file system: bad)");
    dws_engine_destroy (e);
    k8s_reset ();
    e = engine ("{'prerun_timeout':30}");
    sysconf (e);
    sync_none (e);
    job_to (e, 203, 0, "'c1'", 1, "PreRun");
    wf_status (e, 203, "PreRun", false, "Error",
               "{'message':'DW Directive 0: User error: no such thing','drivers':["
               "{'watchState':'PreRun','error':'user error: no such thing'}]}");
    has ("a user message: the note is DWS' message alone", "action", "raise", "note",
         PREFIX "workflow hit an error: DW Directive 0: User error: no such thing");
    dws_engine_destroy (e);

    /* a failed state patch fails the job */
    k8s_reset ();
    e = engine (NULL);
    sysconf (e);
    sync_none (e);
    job_to (e, 201, 0, "'c1'", 1, "DataIn");
    k8s_result (e, "state", 201, false, 400, "desiredState is bad", NULL);
    has ("a refused state patch: exception", "action", "raise", "note",
         PREFIX "cannot move workflow fluxjob-201 to DataIn: desiredState is bad");
    k8s_result (e, "state", 201, false, 404, "gone", NULL);
    none ("a state patch that finds no Workflow (404) is left to the watch");
    dws_engine_destroy (e);
}

static void test_tc (void)
{
    k8s_reset ();
    struct dws_engine *e = engine ("{'tc_timeout':15}");
    sysconf (e);
    sync_none (e);
    job_to (e, 300, 0, "'c1'", 1, "DataIn");
    wf_status (e, 300, "DataIn", false, "TransientCondition", "{'message':'slow'}");
    acts_are ("[{'action':'timer-start','key':'tc:300','after':15.0}]",
              "TransientCondition: the tc timer starts");
    wf_status (e, 300, "DataIn", false, "TransientCondition", "{'message':'slow'}");
    none ("TransientCondition again: the timer is not started again");
    wf_status (e, 300, "DataIn", false, "Running", NULL);
    acts_are ("[{'action':'timer-stop','key':'tc:300'}]",
              "TransientCondition cleared: the tc timer stops");
    feed (e, "{'type':'timer','key':'tc:300'}");
    none ("a tc timer that was stopped fires: nothing");
    wf_status (e, 300, "DataIn", false, "TransientCondition", "{'message':'still slow'}");
    has ("TransientCondition again later: the timer starts again", "action", "timer-start",
         "key", "tc:300");
    feed (e, "{'type':'timer','key':'tc:300'}");
    has ("tc timer expiry outside PreRun: exception with DWS' message", "action", "raise",
         "type", "exception", "note",
         PREFIX "workflow in TransientCondition for more than 15 s: still slow");
    has ("tc timer expiry: Teardown", "op", "patch", "body",
         "{\"spec\":{\"desiredState\":\"Teardown\"}}");
    feed (e, "{'type':'timer','key':'tc:300'}");
    none ("the tc timer fires again: nothing");

    /* in PreRun: the computes not mounted fail within the tolerance */
    job_to (e, 301, 1, "'c1','c3'", 2, "PreRun");
    wf_status (e, 301, "PreRun", false, "TransientCondition", NULL);
    feed (e, "{'type':'timer','key':'tc:301'}");
    acts_are ("[{'action':'k8s','op':'list','kind':'ClientMount','label_selector':'" LABEL
              "=fluxjob-301','token':'tc-prerun:301'}]",
              "tc timer expiry in PreRun: list the ClientMounts");
    list_result (e, "tc-prerun", 301,
                 "[{'spec':{'node':'c1'},'status':{'allReady':true,'mounts':"
                 "[{'state':'mounted'}]}}]");
    has ("c3 not mounted: dws-node-failure within the tolerance", "action", "raise", "type",
         "dws-node-failure", "severity", "1", "note", "c3");
    ok (!find ("action", "timer-start"), "giving c3 up starts no timer");
    complete (e, 301, NULL);
    has ("PreRun done (forced ready): the job runs", "action", "rpc", "topic",
         "job-manager.dws.prolog-remove");
    ok (!find ("type", "dws-timeout"), "... and no dws-timeout");
    dws_engine_destroy (e);
}

/* --- timers ----------------------------------------------------------------- */

static void test_timers (void)
{
    json_t *a;
    k8s_reset ();
    struct dws_engine *e = engine ("{'setup_timeout':60,'prerun_timeout':30,"
                                   "'postrun_timeout':20}");
    sysconf (e);
    sync_none (e);

    /* setup: the slow rabbit's computes fail within the tolerance */
    job_to (e, 400, 1, "'c1','c3'", 2, "Setup");
    has ("Setup asked: the setup timer", "action", "timer-start", "key", "setup:400");
    feed (e, "{'type':'timer','key':'setup:400'}");
    acts_are ("[{'action':'k8s','op':'list','kind':'Servers','label_selector':'" LABEL
              "=fluxjob-400','token':'setup-timeout:400'}]",
              "setup timer expiry: list the job's Servers");
    list_result (e, "setup-timeout", 400,
                 "[{'spec':{'allocationSets':[{'label':'xfs','storage':["
                 "{'name':'rabbit1','allocationCount':1},{'name':'rabbit2',"
                 "'allocationCount':1}]}]},'status':{'allocationSets':[{'storage':"
                 "{'rabbit1':{'allocationSize':10737418240,'ready':true}}}]}}]");
    has ("rabbit2 slow: dws-node-failure sev 1 naming its compute", "action", "raise", "id",
         "400", "type", "dws-node-failure", "severity", "1", "note", "c3");
    a = has ("dws-node-failure: forceReady and the failed hosts on the Workflow", "action",
             "k8s", "op", "patch", "kind", "Workflow", "token", "force-ready:400");
    json_at (jp (a, "body", NULL),
             "{'spec':{'forceReady':true},'metadata':{'annotations':{'" ANN_FAILED "':'c3'}}}",
             "the patch body");
    ok (!find ("kind", "Computes"), "outside PreRun the Computes are not touched");
    ok (!find ("action", "timer-start"),
        "giving c3 up starts no timer: the setup timer fired once, as flux-coral2's");
    k8s_result (e, "force-ready", 400, true, 200, "", wf (400));
    ok (!find ("action", "raise") && !find ("op", "patch"),
        "forceReady accepted and not reset: nothing more to do");
    complete (e, 400, "{'computes':{'name':'fluxjob-400','namespace':'default'}}");
    a = has ("Setup completes: Computes without the failed host", "kind", "Computes");
    json_at (jp (a, "body", NULL), "{'data':[{'name':'c1'}]}", "Computes data: c1 only");
    ok (!find ("action", "timer-stop"), "... and no timer to stop: the setup timer fired");
    a = job_status (e, 400);
    json_at (jp (a, "failed", NULL), "'c3'", "status: failed hosts");
    json_decref (a);
    feed (e, "{'type':'timer','key':'setup:400'}");
    none ("the stopped setup timer fires after Setup completed: nothing");

    /* setup: hosts given up, and DWS refuses the forceReady patch: the
     * job fails at once (flux-coral2's timer callback raises) */
    job_to (e, 406, 1, "'c1','c3'", 2, "Setup");
    feed (e, "{'type':'timer','key':'setup:406'}");
    list_result (e, "setup-timeout", 406,
                 "[{'spec':{'allocationSets':[{'label':'xfs','storage':["
                 "{'name':'rabbit1','allocationCount':1},{'name':'rabbit2',"
                 "'allocationCount':1}]}]},'status':{'allocationSets':[{'storage':"
                 "{'rabbit1':{'allocationSize':10737418240,'ready':true}}}]}}]");
    has ("rabbit2 slow: c3 given up", "type", "dws-node-failure", "note", "c3");
    ok (!find ("type", "dws-timeout"), "... and no fatal exception yet");
    k8s_result (e, "force-ready", 406, false, 422, "forceReady refused", NULL);
    has ("forceReady refused: fatal dws-timeout naming the hosts and DWS' answer", "action",
         "raise", "id", "406", "type", "dws-timeout", "severity", "0", "note",
         "File system creation took too long: DWS refused forceReady after giving up c3:"
         " forceReady refused");
    has ("... and Teardown", "op", "patch", "name", "fluxjob-406", "body",
         "{\"spec\":{\"desiredState\":\"Teardown\"}}");
    feed (e, "{'type':'timer','key':'setup:406'}");
    none ("no setup timer runs after giving up: nothing fires");

    /* setup_timeout fired before DWS entered Setup: the forceReady landed
     * first and DWS reset it on entering Setup.  flux-dws asks again
     * (once the first patch is answered) and Setup completes. */
    job_to (e, 413, 1, "'c1'", 1, "Setup");
    feed (e, "{'type':'timer','key':'setup:413'}");
    list_result (e, "setup-timeout", 413,
                 "[{'spec':{'allocationSets':[{'label':'xfs','storage':["
                 "{'name':'rabbit1','allocationCount':1}]}]},'status':{}}]");
    has ("the 1-node job's only compute given up", "type", "dws-node-failure", "note", "c1");
    ok (!find ("type", "dws-timeout"), "within a tolerance of 1: no fatal exception");
    json_object_set_new (json_object_get (wf (413), "spec"), "forceReady", json_false ());
    wf_status (e, 413, "Setup", false, "DriverWait", NULL);
    ok (!find ("op", "patch"), "the reset seen before the patch's answer: no second patch yet");
    k8s_result (e, "force-ready", 413, true, 200, "", wf (413));
    a = has ("answered, the Workflow still shows it reset: forceReady asked again", "action",
             "k8s", "op", "patch", "kind", "Workflow", "token", "force-ready:413");
    json_at (jp (a, "body", NULL),
             "{'spec':{'forceReady':true},'metadata':{'annotations':{'" ANN_FAILED "':'c1'}}}",
             "the same patch");
    has ("... and logged", "action", "log", "level", "warning", "message",
         "fluxjob-413: DWS reset forceReady on entering Setup: asking again");
    wf_status (e, 413, "Setup", false, "DriverWait", NULL);
    ok (!find ("op", "patch"), "a view while that patch is out: no third patch");
    k8s_result (e, "force-ready", 413, true, 200, "", wf (413));
    ok (!find ("op", "patch"), "answered, forceReady now set: nothing more");
    complete (e, 413, "{'computes':{'name':'fluxjob-413','namespace':'default'},"
                      "'message':'Forced Ready'}");
    a = has ("Setup forced ready: Computes without the given-up host", "kind", "Computes");
    json_at (jp (a, "body", NULL), "{'data':[]}", "Computes data: empty");
    ok (!find ("type", "dws-timeout"), "the job goes on");

    /* setup over the tolerance */
    job_to (e, 401, 0, "'c1','c3'", 2, "Setup");
    feed (e, "{'type':'timer','key':'setup:401'}");
    list_result (e, "setup-timeout", 401, "[]");
    has ("setup timeout without tolerance: dws-timeout", "action", "raise", "type",
         "dws-timeout", "severity", "0", "note", "File system creation took too long");
    has ("setup timeout: Teardown", "op", "patch", "body",
         "{\"spec\":{\"desiredState\":\"Teardown\"}}");
    feed (e, "{'type':'timer','key':'setup:401'}");
    none ("a timer that already fired fires again: nothing");

    /* prerun */
    job_to (e, 402, 2, "'c[1-4]'", 4, "PreRun");
    has ("PreRun asked: the prerun timer", "action", "timer-start", "key", "prerun:402", "after",
         "30.0");
    feed (e, "{'type':'timer','key':'prerun:402'}");
    acts_are ("[{'action':'k8s','op':'list','kind':'ClientMount','label_selector':'" LABEL
              "=fluxjob-402','token':'prerun-timeout:402'}]",
              "prerun timer expiry: list the ClientMounts");
    list_result (e, "prerun-timeout", 402,
                 "[" CM_MOUNTED ("c1") ","
                 "{'metadata':{'namespace':'c2'},'status':{'allReady':true,'mounts':"
                 "[{'state':'mounted'}]}}," CM_NOT_READY ("c3") "]");
    has ("c3, c4 not mounted: dws-node-failure with a hostlist note", "action", "raise", "type",
         "dws-node-failure", "severity", "1", "note", "c[3-4]");
    a = has ("forceReady patch", "token", "force-ready:402", "kind", "Workflow");
    json_at (jp (a, "body", "metadata", NULL), "{'annotations':{'" ANN_FAILED "':'c[3-4]'}}",
             "failed hosts annotation");
    a = has ("in PreRun the Computes drop the failed hosts", "kind", "Computes", "token",
             "computes-drop:402");
    json_at (jp (a, "body", NULL), "{'data':[{'name':'c1'},{'name':'c2'}]}",
             "Computes data: c1, c2");
    ok (!find ("action", "timer-start"), "giving c[3-4] up starts no timer");
    k8s_result (e, "computes-drop", 402, false, 500, "boom", NULL);
    acts_are ("[{'action':'log','level':'err','message':'fluxjob-402: computes-drop failed:"
              " boom'}]",
              "the Computes' patch fails: logged under its own word");
    k8s_result (e, "force-ready", 402, false, 422, "Unprocessable Entity", NULL);
    has ("forceReady refused in PreRun: fatal dws-timeout", "action", "raise", "id", "402",
         "type", "dws-timeout", "severity", "0", "note",
         "timed out waiting for mounts: DWS refused forceReady after giving up c[3-4]:"
         " Unprocessable Entity");
    has ("... and Teardown", "op", "patch", "name", "fluxjob-402", "body",
         "{\"spec\":{\"desiredState\":\"Teardown\"}}");

    job_to (e, 403, 1, "'c[1-4]'", 4, "PreRun");
    feed (e, "{'type':'timer','key':'prerun:403'}");
    list_result (e, "prerun-timeout", 403,
                 "[" CM_MOUNTED ("c1") "," CM_MOUNTED ("c2") "]");
    has ("two unmounted over a tolerance of 1: dws-timeout", "action", "raise", "type",
         "dws-timeout", "note", "timed out waiting for mounts");
    ok (!find ("type", "dws-node-failure"), "no dws-node-failure over the tolerance");

    job_to (e, 404, 1, "'c1','c3'", 2, "PreRun");
    feed (e, "{'type':'timer','key':'prerun:404'}");
    k8s_result (e, "prerun-timeout", 404, false, 0, "", NULL);
    has ("a failed ClientMount read is logged", "action", "log", "message",
         "fluxjob-404: reading for prerun-timeout failed: ");
    has ("... and every compute counts as failed: dws-timeout", "type", "dws-timeout");

    /* postrun */
    job_to (e, 405, 0, "'c1','c3'", 2, "PostRun");
    has ("PostRun asked: the postrun timer", "action", "timer-start", "key", "postrun:405",
         "after", "20.0");
    ok (!find ("key", "teardown_after:405"), "no teardown_after timer when it is 0");
    feed (e, "{'type':'timer','key':'postrun:405'}");
    acts_are ("[{'action':'k8s','op':'list','kind':'ClientMount','label_selector':'" LABEL
              "=fluxjob-405','token':'postrun-timeout:405'}]",
              "postrun timer expiry: list the ClientMounts");
    list_result (e, "postrun-timeout", 405,
                 "[{'spec':{'node':'c1'},'status':{'mounts':[{'state':'mounted'}]}},"
                 "{'spec':{'node':'c1'},'status':{'mounts':[{'state':'mounted'}]}},"
                 "{'spec':{'node':'c3'},'status':{'mounts':[{'state':'unmounted'}]}}]");
    has ("postrun timeout: drain the still-mounted computes", "action", "drain", "targets", "c1",
         "reason", "failed to unmount rabbit rabbit1 (job f7z)");
    has ("postrun timeout: rabbit-timeout", "action", "raise", "type", "rabbit-timeout",
         "severity", "0", "note", "unmounts timed out, skipping data movement");
    has ("postrun timeout: Teardown with the epilog annotation", "op", "patch", "body",
         "{\"metadata\":{\"annotations\":{\"" ANN_EPILOG "\":\"active\"}},\"spec\":"
         "{\"desiredState\":\"Teardown\"}}");
    ok (count ("action", "drain") == 1, "one drain for c1 (listed twice)");
    dws_engine_destroy (e);

    /* teardown_after */
    k8s_reset ();
    e = engine ("{'teardown_after':5,'postrun_timeout':20}");
    sysconf (e);
    sync_none (e);
    job_to (e, 406, 0, "'c1'", 1, "PostRun");
    has ("PostRun asked: the teardown_after timer", "action", "timer-start", "key",
         "teardown_after:406", "after", "5.0");
    feed (e, "{'type':'timer','key':'teardown_after:406'}");
    has ("teardown_after expiry: teardown-timeout sev 1", "action", "raise", "type",
         "teardown-timeout", "severity", "1", "note", "skipping rabbit data movement");
    has ("teardown_after expiry: the postrun timer stops", "action", "timer-stop", "key",
         "postrun:406");
    has ("teardown_after expiry: Teardown", "op", "patch", "body",
         "{\"metadata\":{\"annotations\":{\"" ANN_EPILOG "\":\"active\"}},\"spec\":"
         "{\"desiredState\":\"Teardown\"}}");
    job_to (e, 407, 0, "'c1'", 1, "DataOut");
    has ("PostRun complete: the teardown_after timer keeps running into DataOut", "action",
         "timer-stop", "key", "postrun:407");
    ok (!find ("key", "teardown_after:407"), "(it is not stopped at PostRun)");
    feed (e, "{'type':'timer','key':'teardown_after:407'}");
    has ("teardown_after expiry in DataOut: teardown-timeout", "type", "teardown-timeout");
    feed (e, "{'type':'timer','key':'teardown_after:407'}");
    none ("teardown_after again: nothing");
    feed (e, "{'type':'timer','key':'nonsense'}");
    none ("a timer key without a colon: nothing");
    feed (e, "{'type':'timer','key':'bogus:407'}");
    none ("a timer of an unknown kind: nothing");
    feed (e, "{'type':'timer','key':'setup:99999'}");
    none ("a timer of an unknown job: nothing");
    dws_engine_destroy (e);
}

/* --- abort -------------------------------------------------------------------- */

/* dws.teardown and dws.abort at the same moment (an exception in the
 * epilog, then its timeout): Teardown is on its way when abort's lists go
 * out, and a fast Teardown completes before they are read.  The Workflow
 * (and its Servers) must stay until both are answered, and what they read
 * still drains and disables.
 */
static void test_abort_teardown_race (void)
{
    k8s_reset ();
    struct dws_engine *e = engine (NULL);
    sysconf (e);
    sync_none (e);
    job_to (e, 510, 0, "'c1','c3'", 2, "PostRun");
    feed (e, "{'type':'request','userid':0,'topic':'dws.teardown','msgid':1,'now':%d,'payload':"
             "{'jobid':510}}",
          NOW);
    has ("race: dws.teardown asks for Teardown", "op", "patch", "kind", "Workflow", "token",
         "state:510");
    feed (e, "{'type':'request','userid':0,'topic':'dws.abort','msgid':2,'now':%d,'payload':"
             "{'jobid':510}}",
          NOW);
    has ("race: dws.abort lists the ClientMounts", "token", "abort-mounts:510");
    has ("race: dws.abort lists the Servers", "token", "abort-servers:510");
    complete (e, 510, NULL);
    ok (!find ("op", "delete"),
        "race: Teardown complete, but the Workflow stays while abort's lists are out");
    ok (!find ("topic", "job-manager.dws.epilog-remove"), "race: no epilog-remove (aborted)");
    list_result (e, "abort-servers", 510,
                 "[{'status':{'allocationSets':[{'storage':{'rabbit2':{'allocationSize':7}}}]}}]");
    has ("race: the Servers read disables the rabbit", "op", "patch", "kind", "Storage", "name",
         "rabbit2");
    ok (!find ("op", "delete"), "race: one list still out: no delete");
    list_result (e, "abort-mounts", 510,
                 "[{'spec':{'node':'c3'},'status':{'mounts':[{'state':'mounted'}]}}]");
    has ("race: the ClientMount read drains the compute still mounted", "action", "drain",
         "targets", "c3", "reason", "failed to unmount rabbit rabbit2 (job f9o)");
    has ("race: then the Workflow is deleted", "op", "delete", "token", "delete:510");
    ok (!find ("topic", "job-manager.dws.epilog-remove"),
        "race: still no epilog-remove (the job manager ended the epilog)");

    /* a failed read still lets Teardown go */
    job_to (e, 511, 0, "'c1'", 1, "PostRun");
    feed (e, "{'type':'request','userid':0,'topic':'dws.abort','msgid':3,'payload':{'jobid':511}}");
    k8s_result (e, "abort-mounts", 511, false, 500, "boom", NULL);
    ok (!find ("kind", "Workflow", "op", "patch"), "failed read: Teardown waits for the other");
    k8s_result (e, "abort-servers", 511, false, 500, "boom", NULL);
    has ("failed reads: Teardown all the same", "op", "patch", "kind", "Workflow", "token",
         "state:511");
    dws_engine_destroy (e);
}

static void test_abort (void)
{
    k8s_reset ();
    struct dws_engine *e = engine (NULL);
    sysconf (e);
    sync_none (e);
    job_to (e, 500, 0, "'c1','c3'", 2, "PostRun");
    feed (e, "{'type':'request','userid':0,'topic':'dws.abort','msgid':7,'now':%d,'payload':"
             "{'jobid':500}}",
          NOW);
    has ("dws.abort: answered", "action", "respond", "msgid", "7", "payload",
         "{\"success\":true}");
    has ("dws.abort: list ClientMounts", "op", "list", "kind", "ClientMount", "token",
         "abort-mounts:500", "label_selector", LABEL "=fluxjob-500");
    has ("dws.abort: list Servers", "op", "list", "kind", "Servers", "token",
         "abort-servers:500");
    ok (!find ("kind", "Workflow", "op", "patch"),
        "dws.abort: no Teardown before the lists are read (it would delete what they read)");
    list_result (e, "abort-mounts", 500,
                 "[{'spec':{'node':'c1'},'status':{'mounts':[{'state':'mounted'}]}},"
                 "{'spec':{'node':'c3'},'status':{'mounts':[]}}]");
    acts_are ("[{'action':'drain','targets':'c1','reason':'failed to unmount rabbit rabbit1"
              " (job f9d)'}]",
              "abort: computes still mounted are drained; Teardown still waits");
    list_result (e, "abort-servers", 500,
                 "[{'status':{'allocationSets':[{'storage':{'rabbit1':{'allocationSize':100},"
                 "'rabbit2':{'allocationSize':0}}},{'storage':{'rabbit1':"
                 "{'allocationSize':5}}}]}}]");
    {
        size_t i, storage_at = SIZE_MAX, teardown_at = SIZE_MAX;
        json_t *a;
        json_array_foreach (A, i, a) {
            const char *kind = json_string_value (json_object_get (a, "kind"));
            if (kind && !strcmp (kind, "Storage") && storage_at == SIZE_MAX)
                storage_at = i;
            if (kind && !strcmp (kind, "Workflow") && teardown_at == SIZE_MAX)
                teardown_at = i;
        }
        ok (storage_at < teardown_at && teardown_at != SIZE_MAX,
            "abort: the rabbit is disabled, then Teardown is asked for");
    }
    ok (count ("kind", "Storage") == 1,
        "abort: rabbits holding allocations are disabled once");
    has ("abort: disabled with reason and date", "op", "patch", "kind", "Storage", "name",
         "rabbit1", "body",
         "{\"metadata\":{\"annotations\":{\"disable_date\":\"2023-11-14T22:13:20Z\","
         "\"disable_reason\":\"flux job fluxjob-500 epilog timed out (dws.abort)\"}},"
         "\"spec\":{\"state\":\"Disabled\"}}");
    has ("abort: Teardown once both lists are read", "op", "patch", "kind", "Workflow", "body",
         "{\"metadata\":{\"annotations\":{\"" ANN_EPILOG "\":\"active\"}},\"spec\":"
         "{\"desiredState\":\"Teardown\"}}");
    complete (e, 500, NULL);
    ok (!find ("topic", "job-manager.dws.epilog-remove"),
        "Teardown after abort: no epilog-remove (the job manager ended the epilog)");
    has ("Teardown after abort: delete", "op", "delete", "token", "delete:500");

    feed (e, "{'type':'request','userid':0,'topic':'dws.abort','msgid':8,'payload':{'jobid':501}}");
    acts_are ("[{'action':'respond','msgid':8,'payload':{'success':true}}]",
              "dws.abort for an unknown job: success, nothing else");
    feed (e, "{'type':'request','userid':0,"
             "'topic':'dws.teardown','msgid':9,'payload':{'jobid':501}}");
    acts_are ("[{'action':'respond','msgid':9,'payload':{'success':true}},"
              "{'action':'rpc','topic':'job-manager.dws.epilog-remove','nodeid':0,"
              "'payload':{'id':501}}]",
              "dws.teardown for an unknown job: success and epilog-remove");
    feed (e, "{'type':'request','userid':0,"
             "'topic':'dws.post_run','msgid':10,'payload':{'jobid':501,"
             "'run_started':true}}");
    acts_are ("[{'action':'respond','msgid':10,'payload':{'success':true}},"
              "{'action':'rpc','topic':'job-manager.dws.epilog-remove','nodeid':0,"
              "'payload':{'id':501}}]",
              "dws.post_run for an unknown job after the sync: success and epilog-remove");

    /* dws.teardown of a job in Setup */
    job_to (e, 502, 0, "'c1'", 1, "Setup");
    feed (e, "{'type':'request','userid':0,"
             "'topic':'dws.teardown','msgid':11,'payload':{'jobid':502}}");
    has ("dws.teardown: Teardown with the epilog annotation", "op", "patch", "body",
         "{\"metadata\":{\"annotations\":{\"" ANN_EPILOG "\":\"active\"}},\"spec\":"
         "{\"desiredState\":\"Teardown\"}}");
    complete (e, 502, NULL);
    has ("... complete: epilog-remove", "topic", "job-manager.dws.epilog-remove");
    dws_engine_destroy (e);
}

/* --- smaller paths ------------------------------------------------------------ */

/* --disable-fluxion ('fluxion': false), as flux-coral2 v0.36.0 defines it:
 * Fluxion's graph has no ssd vertices, so the resource-update carries the
 * resources as submitted (no breakdown applied, not even one the Fluxion
 * rewrite refuses) with only the constraint that keeps the job off
 * rabbits that are down or in use. */
static void test_no_fluxion (void)
{
    json_t *a;
    k8s_reset ();
    struct dws_engine *e = engine ("{'fluxion':false}");
    sysconf (e);
    sync_none (e);
    job_to (e, 1100, 0, "'c1','c2'", 2, "Proposal");
    a = has ("without Fluxion: resource-update", "topic", "job-manager.dws.resource-update");
    json_at (jp (a, "payload", NULL),
             "{'id':1100,'resources':[{'type':'node','count':2,'with':[" TASK "]}],"
             "'exclude':{'and':[{'not':[{'properties':['badrabbit']}]},"
             "{'not':[{'properties':['alloc_rabbit']}]}]}}",
             "without Fluxion: the submitted resources (no ssd), not badrabbit and not "
             "alloc_rabbit");

    create_req (e, 1101, 2, 0, 1, DW_XFS);
    k8s_result (e, "create", 1101, true, 201, "", wf (1101));
    complete (e, 1101, "{'directiveBreakdowns':[{'name':'fluxjob-1101-0'}]}");
    json_t *bd = jq ("{'metadata':{'name':'fluxjob-1101-0'},'status':{'ready':true,'storage':"
                     "{'allocationSets':[{'label':'ost','allocationStrategy':"
                     "'AllocateAcrossServers','minimumCapacity':%lld},{'label':'mdt',"
                     "'allocationStrategy':'AllocateSingleServer','minimumCapacity':1}]}}}",
                     100LL << 30);
    k8s_result (e, "breakdown", 1101, true, 200, "", bd);
    json_decref (bd);
    a = has ("a Lustre breakdown without Fluxion: resource-update", "topic",
             "job-manager.dws.resource-update");
    json_at (jp (a, "payload", "resources", NULL),
             "[{'type':'node','count':1,'with':[" TASK "]}]",
             "... the resources as submitted");
    ok (!jp (a, "payload", "errmsg", NULL), "... and no error");

    create_req (e, 1102, 3, 0, 1, DW_XFS);
    k8s_result (e, "create", 1102, true, 201, "", wf (1102));
    complete (e, 1102, "{'directiveBreakdowns':[{'name':'fluxjob-1102-0'}]}");
    bd = jq ("{'metadata':{'name':'fluxjob-1102-0'},'status':{'ready':true,'storage':"
             "{'allocationSets':[{'label':'xfs','allocationStrategy':"
             "'AllocateSingleServer','minimumCapacity':1}]}}}");
    k8s_result (e, "breakdown", 1102, true, 200, "", bd);
    json_decref (bd);
    a = has ("a breakdown the Fluxion rewrite refuses: not looked at without Fluxion", "topic",
             "job-manager.dws.resource-update");
    ok (!jp (a, "payload", "errmsg", NULL) && !find ("body", "{\"spec\":{\"desiredState\":"
                                                             "\"Teardown\"}}"),
        "... no errmsg, no Teardown");
    dws_engine_destroy (e);

    /* no early release without Fluxion (alloc_rabbit lasts until Teardown,
     * so do the computes), whatever release_computes says */
    k8s_reset ();
    e = engine ("{'fluxion':false,'release_computes':'after-unmount'}");
    sysconf (e);
    sync_none (e);
    job_to (e, 1103, 0, "'c1'", 1, "DataOut");
    ok (find ("kind", "Workflow", "op", "patch") && !find ("topic", "job-manager.dws.epilog-remove")
            && !find ("topic", "job-manager.dws.dataout-begin"),
        "without Fluxion PostRun done: DataOut, the computes kept");
    complete (e, 1103, NULL);
    ok (!find ("topic", "job-manager.dws.epilog-remove"), "... DataOut done: still kept");
    complete (e, 1103, NULL);
    has ("... Teardown done: the epilog ends", "topic", "job-manager.dws.epilog-remove");
    dws_engine_destroy (e);
}

static void test_more (void)
{
    json_t *a;
    k8s_reset ();
    /* dws.setup before the SystemConfiguration: resumed when it comes */
    struct dws_engine *e = engine ("{'drain_compute_nodes':false,'save_datamovements':1}");
    sync_none (e);
    job_to (e, 1000, 0, "'c1'", 1, "Proposal");
    a = has ("drain_compute_nodes false: rabbits marked badrabbit are excluded", "topic",
             "job-manager.dws.resource-update");
    json_at (jp (a, "payload", "exclude", NULL), "{'not':[{'properties':['badrabbit']}]}",
             "the exclude constraint");
    setup_req (e, 1000, 1, "'c1'");
    has ("dws.setup without a SystemConfiguration: waits (logged)", "action", "log", "level",
         "warning", "message",
         "fluxjob-1000: waiting for SystemConfiguration 'default' to place the job's rabbit "
         "storage");
    ok (!find ("token", "hosts:1000"), "... nothing written yet");
    watch (e, "MODIFIED", wf (1000));
    ok (A && json_array_size (A) == 0, "... looked at again while it waits: said once");
    sysconf (e);
    has ("the SystemConfiguration arrives: Setup goes on (the Servers)", "kind", "Servers",
         "op", "patch", "token", "servers:1000");
    /* the Workflow seen again and the map listed again (a re-list) before
     * the Servers' answer: they are not filled twice */
    watch (e, "MODIFIED", wf (1000));
    sysconf (e);
    ok (A && !find ("kind", "Servers"),
        "the Workflow seen, the map listed again before the Servers' answer: no second fill");
    k8s_result (e, "servers", 1000, true, 200, "", NULL);
    has ("... their answer: Setup asked, with the hosts", "op", "patch", "token", "state:1000");

    /* the workflow token Secret cannot be used */
    job_to (e, 1001, 0, "'c1'", 1, "PreRun");
    complete (e, 1001, "{'workflowToken':{'secretName':'s1'}}");
    has ("the Secret in the Workflow's namespace when none is named", "kind", "Secret",
         "namespace", "default", "name", "s1");
    json_t *secret = jq ("{'data':{'token':'not base64!'}}");
    k8s_result (e, "secret", 1001, true, 200, "", secret);
    json_decref (secret);
    has ("a Secret whose token is not base64: exception", "action", "raise", "note",
         PREFIX "cannot read the workflow token: the Secret has no usable data.token");
    ok (!find ("topic", "job-manager.dws.prolog-remove"), "... the prolog is not released");
    job_to (e, 1002, 0, "'c1'", 1, "PreRun");
    complete (e, 1002, "{'workflowToken':{'secretName':'s2','secretNamespace':''}}");
    k8s_result (e, "secret", 1002, false, 404, "secrets \"s2\" not found", NULL);
    has ("a Secret that cannot be read: exception with the Kubernetes message", "action",
         "raise", "note", PREFIX "cannot read the workflow token: secrets \"s2\" not found");

    /* save_datamovements: the failed ones first, at most N */
    job_to (e, 1003, 0, "'c1'", 1, "Setup");
    feed (e, "{'type':'request','userid':0,"
             "'topic':'dws.teardown','msgid':5,'payload':{'jobid':1003}}");
    has ("Teardown with save_datamovements: list the data movements", "op", "list", "kind",
         "NnfDataMovement", "token", "dm:1003", "label_selector", LABEL "=fluxjob-1003");
    ok (!find ("token", "state:1003"), "... and Teardown waits for the list");
    list_result (e, "dm", 1003,
                 "[{'metadata':{'name':'ok'},'status':{'status':'Success'}},"
                 "{'metadata':{'name':'bad'},'status':{'status':'Failed'}}]");
    acts_are ("[{'action':'kvs','id':1003,'put':{'data.dws.datamovements':[{'metadata':"
              "{'name':'bad'},'status':{'status':'Failed'}}]},'link':{'rabbit_datamovements':"
              "'data.dws.datamovements'}},{'action':'k8s','op':'patch','kind':'Workflow',"
              "'namespace':'default','name':'fluxjob-1003','body':{'spec':{'desiredState':"
              "'Teardown'},'metadata':{'annotations':{'flux-dws.io/epilog':'active'}}},"
              "'token':'state:1003'}]",
              "the failed data movement is saved in the KVS, then Teardown is asked for");

    /* a failed Servers or Computes patch fails the job */
    job_to (e, 1004, 0, "'c1'", 1, "Proposal");
    setup_req (e, 1004, 1, "'c1'");
    k8s_result (e, "servers", 1004, false, 422, "allocationSets are bad", NULL);
    has ("a refused Servers patch: exception", "action", "raise", "note",
         PREFIX "cannot fill the Servers: allocationSets are bad");
    ok (!find ("body", "{\"spec\":{\"desiredState\":\"Setup\"}}"), "... no Setup");
    job_to (e, 1005, 0, "'c1'", 1, "Setup");
    complete (e, 1005, NULL);
    has ("without status.computes the Computes object is named after the Workflow", "kind",
         "Computes", "name", "fluxjob-1005");
    k8s_result (e, "computes", 1005, false, 500, "etcd is down", NULL);
    has ("a failed Computes patch: exception", "action", "raise", "note",
         PREFIX "cannot fill the Computes: etcd is down");
    job_to (e, 1006, 0, "'c1'", 1, "Proposal");
    setup_req (e, 1006, 1, "'c1'");
    k8s_result (e, "servers", 1006, true, 200, "", NULL);
    k8s_result (e, "state", 1006, false, 409, "conflict", NULL);
    has ("a refused Setup ask (the hosts with it): exception", "action", "raise", "note",
         PREFIX "cannot move workflow fluxjob-1006 to Setup: conflict");
    /* the epilog begins (the job never ran) while the Servers' patch is
     * out: Teardown follows, and their answer asks no Setup */
    job_to (e, 1007, 0, "'c1'", 1, "Proposal");
    setup_req (e, 1007, 1, "'c1'");
    post_run_req (e, 1007, 2, false);
    has ("epilog begun with the Servers' patch out: its data movements read for Teardown",
         "token", "dm:1007");
    k8s_result (e, "servers", 1007, true, 200, "", NULL);
    ok (!find ("body", "{\"spec\":{\"desiredState\":\"Setup\"}}") && !find ("token",
        "hosts:1007"), "... the Servers' answer asks no Setup for a Workflow torn down");
    /* deleted outside Flux while the Servers' patch is out: created again
     * (its hosts with the create), and the old one's answer, late, moves
     * nothing on the new one */
    job_to (e, 1008, 0, "'c1'", 1, "Proposal");
    json_object_set_new (json_object_get (wf (1008), "metadata"), "uid", json_string ("one"));
    watch (e, "MODIFIED", wf (1008));
    setup_req (e, 1008, 1, "'c1'");
    has ("dws.setup: the Servers' patch", "token", "servers:1008");
    watch (e, "DELETED", wf (1008));
    a = has ("deleted before its Setup: created again", "op", "create", "kind", "Workflow",
             "token", "create:1008");
    json_at (jp (a, "body", "metadata", "annotations", ANN_HOSTS, NULL), "'c1'",
             "... with its hosts");
    json_object_set_new (json_object_get (wf (1008), "metadata"), "uid", json_string ("two"));
    k8s_result (e, "create", 1008, true, 201, "", wf (1008));
    k8s_result (e, "servers", 1008, true, 200, "", NULL);
    ok (!find ("token", "state:1008"), "... the old one's Servers' answer asks no Setup");
    struct job *j1008 = job_lookup (e, 1008);
    ok (j1008 && j1008->view.uid && !strcmp (j1008->view.uid, "two"),
        "... and its Workflow is the new one");
    /* a verb that never ends the rule that chose it (a bug, planted): the
     * job's run stops at its bound, logged, and the event ends without
     * marking it due again (each mark once ran it again: the due list
     * grew 256-fold a round) */
    job_to (e, 1009, 0, "'c1'", 1, "Setup");
    const struct verbs *verbs = e->verbs;
    struct verbs broken = *verbs;
    broken.step[STEP_COMPUTES] = computes_forgotten;
    e->verbs = &broken;
    looks_paused = true;
    complete (e, 1009, NULL);
    has ("a rule its verb never ends: the run is cut at its bound, logged", "action", "log",
         "message", "fluxjob-1009: still news after 256 steps; left for the next input");
    ok (json_array_size (A) < 300 && e->ndue == 0, "... the event ends, nothing left due");
    e->verbs = verbs;
    looks_paused = false;
    dws_engine_destroy (e);

    /* the resources cannot be rewritten: the job manager raises the exception */
    k8s_reset ();
    e = engine (NULL);
    sysconf (e);
    sync_none (e);
    create_req (e, 1010, 1, 0, 1, DW_XFS);
    k8s_result (e, "create", 1010, true, 201, "", wf (1010));
    complete (e, 1010, "{'directiveBreakdowns':[{'name':'fluxjob-1010-0'}]}");
    json_t *bd = jq ("{'metadata':{'name':'fluxjob-1010-0'},'status':{'ready':true,'storage':"
                     "{'allocationSets':[{'label':'xfs','allocationStrategy':"
                     "'AllocateSingleServer','minimumCapacity':1}]}}}");
    k8s_result (e, "breakdown", 1010, true, 200, "", bd);
    json_decref (bd);
    a = has ("a breakdown the rewrite refuses: resource-update with errmsg", "topic",
             "job-manager.dws.resource-update");
    ok (json_is_string (jp (a, "payload", "errmsg", NULL))
            && json_is_null (jp (a, "payload", "exclude", NULL)),
        "... errmsg: %s", json_string_value (jp (a, "payload", "errmsg", NULL)));
    ok (!find ("action", "raise"), "... the engine raises nothing itself");
    has ("... and the Workflow goes to Teardown", "op", "patch", "body",
         "{\"spec\":{\"desiredState\":\"Teardown\"}}");
    k8s_result (e, "breakdown", 1010, false, 404, "gone", NULL);
    none ("a repeated breakdown answer after the failure: nothing");

    create_req (e, 1011, 2, 0, 1, DW_XFS);
    k8s_result (e, "create", 1011, true, 201, "", wf (1011));
    complete (e, 1011, "{'directiveBreakdowns':[{'name':'fluxjob-1011-0'}]}");
    k8s_result (e, "breakdown", 1011, false, 403, "forbidden", NULL);
    has ("a failed breakdown read: exception", "action", "raise", "note",
         PREFIX "cannot read a DirectiveBreakdown: forbidden");
    dws_engine_destroy (e);
}

/* --- restart ------------------------------------------------------------------ */

/* A Workflow as a restarted service finds it. */
static json_t *found (long long id, const char *desired, const char *state, bool ready,
                      const char *annotations, const char *status_extra)
{
    json_t *w = jq ("{'metadata':{'name':'fluxjob-%lld','namespace':'default',"
                    "'finalizers':['" FIN "'],'annotations':{"
                    "'flux-dws.io/resources':'[{\\'type\\':\\'node\\',\\'count\\':1}]',"
                    "'flux-dws.io/failure-tolerance':'0'%s%s}},"
                    "'spec':{'desiredState':'%s','wlmID':'flux','jobID':'f1','userID':1000,"
                    "'groupID':100,'dwDirectives':['" DW_XFS "']},"
                    "'status':{'state':'%s','ready':%s,'status':'%s','elapsedTimeLastState':'1s',"
                    "'directiveBreakdowns':[{'name':'fluxjob-%lld-0','namespace':'default'}],"
                    "'computes':{'name':'fluxjob-%lld','namespace':'default'}}}",
                    id, annotations ? "," : "", annotations ? annotations : "", desired, state,
                    ready ? "true" : "false", ready ? "Completed" : "DriverWait", id, id);
    if (status_extra) {
        json_t *x = jq ("%s", status_extra);
        merge (json_object_get (w, "status"), x);
        json_decref (x);
    }
    return w;
}

/* Before Teardown: what it deletes and the job's KVS keeps */
static void test_teardown_reads (void)
{
    k8s_reset ();
    struct dws_engine *e = engine ("{'save_datamovements':2}");
    sync_none (e);
    sysconf (e);

    /* the Failed ones first, each group most recent first, at most N */
    job_to (e, 2000, 0, "'c1'", 1, "DataOut");
    complete (e, 2000, NULL);
    has ("DataOut complete with save_datamovements: list them", "op", "list", "kind",
         "NnfDataMovement", "token", "dm:2000");
    ok (!find ("token", "state:2000"), "... Teardown not asked yet");
    ok (find ("action", "kvs") != NULL, "... the Workflow is saved at once");
    json_t *st = job_status (e, 2000);
    ok (st && !strcmp (json_string_value (json_object_get (st, "desired")), "Teardown"),
        "... the engine's view: on its way to Teardown");
    json_decref (st);
    complete (e, 2000, NULL); /* a repeated DataOut event: nothing moves meanwhile */
    none ("a DataOut event meanwhile changes nothing");
    list_result (e, "dm", 2000,
                 "[{'metadata':{'name':'a','creationTimestamp':'2026-01-01T00:00:01Z'},"
                 "'status':{'status':'Success'}},"
                 "{'metadata':{'name':'b','creationTimestamp':'2026-01-01T00:00:03Z'},"
                 "'status':{'status':'Success'}},"
                 "{'metadata':{'name':'c','creationTimestamp':'2026-01-01T00:00:02Z'},"
                 "'status':{'status':'Failed'}},"
                 "{'metadata':{'name':'d','creationTimestamp':'2026-01-01T00:00:00Z'},"
                 "'status':{'status':'Running'}}]");
    json_t *a = has ("the data movements are saved", "action", "kvs", "id", "2000");
    json_at (jp (a, "put", "data.dws.datamovements", NULL),
             "[{'metadata':{'name':'c','creationTimestamp':'2026-01-01T00:00:02Z'},"
             "'status':{'status':'Failed'}},"
             "{'metadata':{'name':'b','creationTimestamp':'2026-01-01T00:00:03Z'},"
             "'status':{'status':'Success'}}]",
             "... Failed first, then the most recent, 2 of them");
    has ("... then Teardown", "token", "state:2000", "op", "patch");

    /* a failed list: logged, Teardown anyway */
    job_to (e, 2001, 0, "'c1'", 1, "DataOut");
    complete (e, 2001, NULL);
    k8s_result (e, "dm", 2001, false, 500, "etcd is sad", NULL);
    has ("a failed data movement list is logged", "action", "log", "message",
         "fluxjob-2001: cannot list its NnfDataMovements: etcd is sad");
    has ("... and Teardown is asked for anyway", "token", "state:2001");
    ok (!find ("action", "kvs"), "... nothing saved");
    dws_engine_destroy (e);

    /* #DW container: the launcher's log, read before Teardown deletes the Pods */
    e = engine (NULL);
    sync_none (e);
    sysconf (e);
    job_dw = DW_XFS " #DW container name=c profile=example-mpi DW_JOB_foo_local_storage=scratch";
    job_to (e, 2002, 0, "'c1'", 1, "DataOut");
    complete (e, 2002, NULL);
    has ("DataOut complete with a container: list the Workflow's Pods", "op", "list", "kind",
         "Pod", "namespace", "default", "token", "pods:2002", "label_selector",
         LABEL "=fluxjob-2002,dataworkflowservices.github.io/workflow.namespace=default");
    ok (!find ("token", "state:2002"), "... Teardown not asked yet");
    list_result (e, "pods", 2002,
                 "[{'metadata':{'name':'fluxjob-2002-worker-0','namespace':'default','labels':"
                 "{'training.kubeflow.org/job-role':'worker'}},'spec':{'containers':["
                 "{'name':'w'}]}},"
                 "{'metadata':{'name':'fluxjob-2002-launcher-x','namespace':'default','labels':"
                 "{'training.kubeflow.org/job-role':'launcher'}},'spec':{'containers':["
                 "{'name':'example-mpi'},{'name':'sidecar'}]}}]");
    acts_are ("[{'action':'k8s','op':'log','kind':'Pod','namespace':'default','name':"
              "'fluxjob-2002-launcher-x','container':'example-mpi','tail_lines':5000,"
              "'token':'podlog:2002'}]",
              "the launcher's first container's log is read");
    json_t *log = jq ("{'log':'hello\\nworld\\n'}");
    k8s_result (e, "podlog", 2002, true, 200, "", log);
    json_decref (log);
    acts_are ("[{'action':'kvs','id':2002,'put':{'data.dws.container_log':'hello\\nworld\\n'},"
              "'link':{'rabbit_container_log':'data.dws.container_log'}},"
              "{'action':'k8s','op':'patch','kind':'Workflow','namespace':'default','name':"
              "'fluxjob-2002','body':{'spec':{'desiredState':'Teardown'},'metadata':"
              "{'annotations':{'flux-dws.io/epilog':'active'}}},'token':'state:2002'}]",
              "the log is saved as rabbit_container_log, then Teardown");

    /* a long log keeps its last 50,000 bytes; without a launcher the first Pod by name */
    job_to (e, 2003, 0, "'c1'", 1, "PostRun");
    feed (e, "{'type':'request','userid':0,"
             "'topic':'dws.teardown','msgid':7,'payload':{'jobid':2003}}");
    list_result (e, "pods", 2003,
                 "[{'metadata':{'name':'p-b'},'spec':{'containers':[{'name':'b'}]}},"
                 "{'metadata':{'name':'p-a'},'spec':{'containers':[{'name':'a'}]}},"
                 "{'metadata':{'name':'p-0'},'spec':{}}]");
    has ("no launcher: the first Pod by name that has a container", "op", "log", "name", "p-a",
         "container", "a", "namespace", "default");
    char *big = malloc (60001);
    memset (big, 'x', 60000);
    big[0] = 'F';
    big[9999] = 'L';
    big[60000] = '\0';
    log = json_pack ("{s:s}", "log", big);
    k8s_result (e, "podlog", 2003, true, 200, "", log);
    json_decref (log);
    free (big);
    a = has ("the tail of a long log is saved", "action", "kvs", "id", "2003");
    const char *kept = json_string_value (jp (a, "put", "data.dws.container_log", NULL));
    ok (kept && strlen (kept) == 50000 && kept[0] == 'x' && !strchr (kept, 'L'),
        "... its last 50,000 bytes");
    has ("... then Teardown", "token", "state:2003");

    /* no Pods, a failed log read, a container job torn down before PreRun */
    job_to (e, 2004, 0, "'c1'", 1, "PreRun");
    feed (e, "{'type':'request','userid':0,"
             "'topic':'dws.teardown','msgid':8,'payload':{'jobid':2004}}");
    list_result (e, "pods", 2004, "[]");
    has ("no Pods: Teardown at once", "token", "state:2004");
    job_to (e, 2005, 0, "'c1'", 1, "PreRun");
    feed (e, "{'type':'request','userid':0,"
             "'topic':'dws.teardown','msgid':9,'payload':{'jobid':2005}}");
    list_result (e, "pods", 2005, "[{'metadata':{'name':'p'},'spec':{'containers':["
                                  "{'name':'c'}]}}]");
    k8s_result (e, "podlog", 2005, false, 400, "container c is waiting to start", NULL);
    has ("a failed log read is logged", "action", "log", "message",
         "fluxjob-2005: cannot read its container log: container c is waiting to start");
    has ("... and Teardown is asked for", "token", "state:2005");
    job_to (e, 2006, 0, "'c1'", 1, "DataIn");
    feed (e, "{'type':'request','userid':0,"
             "'topic':'dws.teardown','msgid':10,'payload':{'jobid':2006}}");
    ok (!find ("kind", "Pod"), "torn down before PreRun: no Pods to read");
    has ("... Teardown at once", "token", "state:2006");
    job_dw = DW_XFS;
    dws_engine_destroy (e);
}

static void test_rebuild (void)
{
    json_t *a;
    k8s_reset ();
    struct dws_engine *e = engine ("{'setup_timeout':60,'postrun_timeout':20}");
    sysconf (e);
    json_t *list = json_array ();
    json_array_append_new (list, found (601, "Setup", "Setup", false,
                                        "'" ANN_HOSTS "':'c1'", NULL));
    json_array_append_new (list, found (602, "Setup", "Setup", true,
                                        "'" ANN_HOSTS "':'c[1-2]'", NULL));
    json_array_append_new (list, found (603, "DataIn", "DataIn", true,
                                        "'" ANN_HOSTS "':'c1'", NULL));
    json_array_append_new (list, found (604, "PreRun", "PreRun", true, "'" ANN_HOSTS "':'c1'",
                                        "{'env':{'DW_JOB_x':'/mnt/x'}}"));
    json_array_append_new (list, found (605, "PostRun", "PostRun", false,
                                        "'" ANN_HOSTS "':'c1','" ANN_EPILOG "':'active'",
                                        NULL));
    json_array_append_new (list, found (606, "Teardown", "Teardown", true,
                                        "'" ANN_HOSTS "':'c1','" ANN_EPILOG "':'active'",
                                        NULL));
    json_array_append_new (list, found (607, "Teardown", "Teardown", true,
                                        "'" ANN_HOSTS "':'c1'", NULL));
    json_array_append_new (list, found (608, "Proposal", "Proposal", true,
                                        "'" ANN_HOSTS "':'c[1,3]'", NULL));
    json_t *forced = found (612, "Setup", "Setup", false,
                            "'" ANN_HOSTS "':'c[1,3]','" ANN_FAILED "':'c3'", NULL);
    json_object_set_new (json_object_get (forced, "spec"), "forceReady", json_true ());
    json_array_append_new (list, forced);
    json_t *other = found (609, "Setup", "Setup", true, NULL, NULL);
    json_object_set_new (json_object_get (other, "spec"), "wlmID", json_string ("slurm"));
    json_array_append_new (list, other);
    other = found (610, "Setup", "Setup", true, NULL, NULL);
    json_object_set_new (json_object_get (other, "metadata"), "name", json_string ("mine"));
    json_array_append_new (list, other);
    other = found (611, "Teardown", "Teardown", true, NULL, NULL);
    json_object_set_new (json_object_get (other, "metadata"), "deletionTimestamp",
                         json_string ("x"));
    json_object_set_new (json_object_get (other, "metadata"), "finalizers", json_array ());
    json_array_append_new (list, other);
    feedj (e, json_pack ("{s:s s:s s:O}", "type", "sync", "kind", "Workflow", "objects", list));

    ok (njobs (e) == 9, "the restarted engine picks up our 9 Workflows (not another WLM's, "
        "not a foreign name, not one on its way out)");
    has ("picked up in Setup: logged", "action", "log", "level", "info", "message",
         "fluxjob-601: picked up in Setup");
    has ("picked up in Setup: the setup timer is re-armed", "action", "timer-start", "key",
         "setup:601", "after", "60.0");
    a = has ("Setup complete: the completion is re-processed (Computes)", "kind", "Computes",
             "token", "computes:602");
    json_at (jp (a, "body", NULL), "{'data':[{'name':'c1'},{'name':'c2'}]}",
             "Computes from the hosts annotation");
    has ("DataIn complete: PreRun", "op", "patch", "name", "fluxjob-603", "body",
         "{\"spec\":{\"desiredState\":\"PreRun\"}}");
    ok (!find ("key", "prerun:603"), "no prerun timer when prerun_timeout is 0");
    has ("PreRun complete without a workflowToken: prolog-remove with the env", "action", "rpc",
         "topic", "job-manager.dws.prolog-remove", "payload",
         "{\"id\":604,\"variables\":{\"DW_JOB_x\":\"/mnt/x\"}}");
    has ("picked up in PostRun: the postrun timer is re-armed", "action", "timer-start", "key",
         "postrun:605");
    has ("Teardown complete with the epilog annotation: epilog-remove", "topic",
         "job-manager.dws.epilog-remove", "payload", "{\"id\":606}");
    has ("... and delete", "op", "delete", "name", "fluxjob-606");
    has ("... and the finalizer removed", "op", "json-patch", "name", "fluxjob-606", "body",
         "[{\"op\":\"test\",\"path\":\"/metadata/finalizers/0\",\"value\":\"" FIN "\"},"
         "{\"op\":\"remove\",\"path\":\"/metadata/finalizers/0\"}]");
    ok (!find ("payload", "{\"id\":607}") && !find ("name", "fluxjob-607"),
        "Teardown complete without the epilog annotation: kept, nothing done");
    has ("Proposal complete with hosts: breakdowns read again", "op", "get", "kind",
         "DirectiveBreakdown", "token", "breakdown:608");
    ok (!find ("name", "fluxjob-609") && !find ("name", "mine")
            && !find ("name", "fluxjob-611"),
        "other Workflows get no action");
    ok (!find ("key", "setup:612"),
        "picked up in Setup with forceReady set: its one setup timeout is spent, none armed");
    ok (!find ("name", "fluxjob-612"), "... and forceReady is set: nothing asked");

    json_t *bd = breakdown (608, 10);
    k8s_result (e, "breakdown", 608, true, 200, "", bd);
    json_decref (bd);
    a = has ("the rebuilt job in Proposal: resource-update again", "topic",
             "job-manager.dws.resource-update");
    json_at (jp (a, "payload", "resources", NULL),
             "[{'type':'slot','count':1,'label':'rabbit','with':[{'type':'node','count':1},"
             "{'type':'ssd','count':10,'exclusive':true}]}]",
             "... from the resources annotation");
    has ("hosts already recorded: Servers filled at once", "kind", "Servers", "token",
         "servers:608");
    has ("... memo rabbits", "action", "memo", "memo", "{\"rabbits\":\"rabbit[1-2]\"}");

    post_run_req (e, 607, 3, true);
    has ("post_run for the kept job: epilog-remove", "topic", "job-manager.dws.epilog-remove",
         "payload", "{\"id\":607}");
    has ("... and delete", "op", "delete", "name", "fluxjob-607");

    /* vanished while we did not watch */
    json_array_remove (list, 0);
    feedj (e, json_pack ("{s:s s:s s:O}", "type", "sync", "kind", "Workflow", "objects", list));
    has ("a Workflow the re-list lacks (job running): exception", "action", "raise", "id",
         "601", "note", PREFIX "workflow fluxjob-601 was deleted outside of Flux");
    has ("... its timers stop", "action", "timer-stop", "key", "setup:601");
    ok (job_status (e, 601) == NULL, "... and the job is forgotten");
    ok (!find ("id", "602") && !find ("name", "fluxjob-602"),
        "a re-list changes nothing for jobs whose state was handled");
    json_decref (list);
    dws_engine_destroy (e);
}

/* --- Workflows that vanish ----------------------------------------------------- */

static void test_vanish (void)
{
    k8s_reset ();
    struct dws_engine *e = engine (NULL);
    sysconf (e);
    sync_none (e);

    /* in Proposal, the breakdown read outstanding */
    create_req (e, 700, 1, 0, 1, DW_XFS);
    k8s_result (e, "create", 700, true, 201, "", wf (700));
    wf_status (e, 700, "Proposal", true, "Completed",
               "{'directiveBreakdowns':[{'name':'fluxjob-700-0'}]}");
    has ("Proposal complete: read the breakdown (namespace defaults)", "op", "get", "namespace",
         "default", "token", "breakdown:700");
    json_t *old = json_deep_copy (wf (700));
    json_object_del (K8S, "fluxjob-700");
    watch (e, "DELETED", old);
    has ("deleted while waiting in Proposal: logged", "action", "log", "level", "warning",
         "message",
         "fluxjob-700: Workflow deleted outside Flux while the job waited; creating it again");
    json_t *a = has ("... and created again", "op", "create", "kind", "Workflow", "token",
                     "create:700");
    json_at (jp (a, "body", "spec", "dwDirectives", NULL), "['" DW_XFS "']",
             "... with the same directives");
    watch (e, "DELETED", old);
    none ("a DELETED of the old object while the create is outstanding: nothing");
    json_t *bd = breakdown (700, 10);
    k8s_result (e, "breakdown", 700, true, 200, "", bd);
    none ("the late answer of the old Workflow's breakdown read: nothing");
    k8s_result (e, "create", 700, true, 201, "", wf (700));
    acts_are ("[{'action':'memo','id':700,'memo':{'rabbit_workflow':'fluxjob-700'}}]",
              "created again: memo (no request to answer)");
    wf_status (e, 700, "Proposal", true, "Completed",
               "{'directiveBreakdowns':[{'name':'fluxjob-700-0'}]}");
    has ("the new Workflow's Proposal: its breakdown is read", "op", "get", "token",
         "breakdown:700");
    k8s_result (e, "breakdown", 700, true, 200, "", bd);
    has ("... and the job goes on", "topic", "job-manager.dws.resource-update");
    k8s_result (e, "breakdown", 700, false, 500, "late", NULL);
    none ("a duplicate breakdown answer: nothing (does not fail the job)");
    json_decref (bd);
    json_decref (old);

    /* dws.setup came, Setup not asked yet: created again with the hosts */
    job_to (e, 710, 0, "'c1','c3'", 2, "Proposal");
    setup_req (e, 710, 1, "'c1','c3'");
    has ("dws.setup: the Servers patch", "token", "servers:710");
    old = json_deep_copy (wf (710));
    json_object_del (K8S, "fluxjob-710");
    k8s_result (e, "servers", 710, false, 404, "servers \"fluxjob-710\" not found", NULL);
    none ("the Servers patch finds no Servers (404): left to the watch");
    watch (e, "DELETED", old);
    json_decref (old);
    ok (!find ("action", "raise"), "deleted after dws.setup, before Setup: no exception");
    a = has ("... created again", "op", "create", "token", "create:710");
    json_at (jp (a, "body", "metadata", "annotations", ANN_HOSTS, NULL), "'c[1,3]'",
             "... with the hosts");
    k8s_result (e, "create", 710, true, 201, "", wf (710));
    complete (e, 710, "{'directiveBreakdowns':[{'name':'fluxjob-710-0'}]}");
    bd = breakdown (710, 10);
    k8s_result (e, "breakdown", 710, true, 200, "", bd);
    json_decref (bd);
    ok (!find ("topic", "job-manager.dws.resource-update"),
        "... Proposal again: no second resource-update");
    has ("... the Servers are filled at once (hosts recorded at create)", "kind", "Servers",
         "token", "servers:710");
    k8s_result (e, "servers", 710, true, 200, "", NULL);
    has ("... and Setup is asked", "op", "patch", "token", "state:710", "body",
         "{\"metadata\":{\"annotations\":{\"" ANN_HOSTS "\":\"c[1,3]\"}},"
         "\"spec\":{\"desiredState\":\"Setup\"}}");

    /* the same with the DELETED first, and Servers patches outstanding */
    job_to (e, 711, 0, "'c1','c3'", 2, "Proposal");
    setup_req (e, 711, 1, "'c1','c3'");
    has ("dws.setup: Servers patch outstanding", "token", "servers:711");
    old = json_deep_copy (wf (711));
    json_object_del (K8S, "fluxjob-711");
    watch (e, "DELETED", old);
    json_decref (old);
    has ("deleted with a Servers patch outstanding: created again", "op", "create", "token",
         "create:711");
    k8s_result (e, "servers", 711, false, 404, "servers \"fluxjob-711\" not found", NULL);
    none ("the old Servers patch's 404 afterwards: nothing");
    k8s_result (e, "create", 711, true, 201, "", wf (711));
    complete (e, 711, "{'directiveBreakdowns':[{'name':'fluxjob-711-0'}]}");
    bd = breakdown (711, 10);
    k8s_result (e, "breakdown", 711, true, 200, "", bd);
    json_decref (bd);
    has ("... Setup starts over: Servers filled again", "kind", "Servers", "token",
         "servers:711");
    k8s_result (e, "servers", 711, true, 200, "", NULL);
    has ("... and Setup is asked", "op", "patch", "token", "state:711", "body",
         "{\"metadata\":{\"annotations\":{\"" ANN_HOSTS "\":\"c[1,3]\"}},"
         "\"spec\":{\"desiredState\":\"Setup\"}}");
    k8s_result (e, "servers", 711, true, 200, "", NULL);
    none ("a repeated Servers answer: nothing");

    /* running */
    job_to (e, 701, 0, "'c1'", 1, "DataIn");
    watch (e, "DELETED", wf (701));
    has ("deleted while running: exception", "action", "raise", "id", "701", "type", "exception",
         "severity", "0", "note", PREFIX "workflow fluxjob-701 was deleted outside of Flux");
    if (!ok (A && json_array_size (A) == 3,
             "... and nothing else but its explanation (eventlog, KVS)"))
        show_actions ();
    ok (job_status (e, 701) == NULL, "... and the job is forgotten");

    /* during the epilog */
    job_to (e, 702, 0, "'c1'", 1, "PostRun");
    watch (e, "DELETED", wf (702));
    has ("deleted during the epilog: warning", "action", "log", "level", "warning");
    has ("... and epilog-remove", "topic", "job-manager.dws.epilog-remove", "payload",
         "{\"id\":702}");
    ok (!find ("action", "raise"), "... no exception");

    /* being deleted by someone else while running */
    job_to (e, 703, 0, "'c1'", 1, "DataIn");
    json_object_set_new (jp (wf (703), "metadata", NULL), "deletionTimestamp",
                         json_string ("2023-11-14T22:13:21Z"));
    watch (e, "MODIFIED", wf (703));
    has ("deletionTimestamp while running: exception", "action", "raise", "note",
         PREFIX "workflow fluxjob-703 is being deleted outside of Flux");

    /* a sighting is read once, in the phase it was seen in: the deletion
     * of an older object while the create is out is nothing, and stays
     * nothing once a create that finds its Workflow made (409, no object)
     * moves the job on */
    create_req (e, 705, 1, 0, 1, DW_XFS);
    old = json_deep_copy (wf (705));
    watch (e, "DELETED", old);
    json_decref (old);
    none ("an older object deleted while the create is out: nothing");
    k8s_result (e, "create", 705, false, 409, "already exists", NULL);
    ok (!find ("op", "create"), "... the create answers 409: not created again");
    ok (!find ("action", "raise"), "... nor failed");
    json_t *js = job_status (e, 705);
    json_at (jp (js, "phase", NULL), "'proposal'", "... the job waits in Proposal");
    json_decref (js);

    /* its epilog began while the create was out (Teardown follows the
     * create): an Error the Workflow was seen with meanwhile is not read */
    create_req (e, 706, 1, 0, 1, DW_XFS);
    post_run_req (e, 706, 2, false);
    wf_status (e, 706, "Proposal", false, "Error", "{'message':'boom'}");
    none ("in Error while the create is out: nothing yet");
    k8s_result (e, "create", 706, true, 201, "", wf (706));
    has ("created, its epilog begun: Teardown", "op", "patch", "token", "state:706", "body",
         "{\"metadata\":{\"annotations\":{\"" ANN_EPILOG "\":\"active\"}},\"spec\":"
         "{\"desiredState\":\"Teardown\"}}");
    ok (!find ("action", "raise"), "... and no exception for the Error seen before");

    /* dws.setup of a job whose Workflow vanished (unknown after the sync) */
    k8s_reset ();
    dws_engine_destroy (e);
    e = engine (NULL);
    sysconf (e);
    sync_none (e);
    setup_req (e, 704, 3, "'c1','c2'");
    has ("dws.setup for an unknown job: answered", "action", "respond", "msgid", "3");
    has ("... the job is read", "action", "job-info", "id", "704", "token", "job-info:704");
    feed (e, "{'type':'job-info','token':'job-info:704','ok':true,'userid':1000,'jobspec':"
             "{'resources':[{'type':'node','count':2}],'attributes':{'system':{"
             "'dw':'" DW_XFS "','dw_failure_tolerance':1}}}}");
    a = has ("job read: the Workflow is created again with the hosts", "op", "create",
             "token", "create:704");
    json_at (jp (a, "body", "metadata", "annotations", NULL),
             "{'flux-dws.io/failure-tolerance':'1','flux-dws.io/resources':"
             "'[{\\'type\\':\\'node\\',\\'count\\':2}]','" ANN_HOSTS "':'c[1-2]'}",
             "... annotations");
    k8s_result (e, "create", 704, true, 201, "", wf (704));
    complete (e, 704, "{'directiveBreakdowns':[{'name':'fluxjob-704-0'}]}");
    bd = breakdown (704, 10);
    k8s_result (e, "breakdown", 704, true, 200, "", bd);
    json_decref (bd);
    ok (!find ("topic", "job-manager.dws.resource-update"),
        "the re-created job does not update its resources again");
    has ("... and goes on to fill the Servers", "kind", "Servers", "token", "servers:704");
    feed (e, "{'type':'job-info','token':'job-info:705','ok':true}");
    none ("a job-info answer for an unknown job: nothing");

    setup_req (e, 706, 4, "'c1'");
    feed (e, "{'type':'job-info','token':'job-info:706','ok':false,'errstr':'no such job'}");
    has ("job-info fails: exception", "action", "raise", "note",
         PREFIX "cannot read the job to create its Workflow again: no such job");
    ok (job_status (e, 706) == NULL, "... and the job is forgotten");
    dws_engine_destroy (e);
}

/* --- orphans (requests lost in a restart) -------------------------------------- */

static void test_orphans (void)
{
    k8s_reset ();
    struct dws_engine *e = engine (NULL);
    sysconf (e);
    sync_none (e);
    feed (e, "{'type':'orphans','jobs':[{'id':800,'state':'DEPEND','dependencies':"
             "['dws-create']},{'id':801,'state':'DEPEND','dependencies':[]},802,"
             "{'id':-1,'state':'DEPEND','dependencies':['dws-create']},"
             "{'id':-2,'state':'CLEANUP','rabbit':true},{'state':'RUN'},{'id':803}]}");
    has ("DEPEND held by dws-create without a Workflow: job-info", "action", "job-info", "id",
         "800", "token", "job-info:800", "R", "false");
    has ("a bare id counts as held by dws-create", "action", "job-info", "id", "802");
    ok (count ("action", "job-info") == 2, "nothing for other dependencies or bad entries");
    ok (!find ("topic", "job-manager.dws.epilog-remove"),
        "... nor for a negative id (in CLEANUP, its Workflow gone: no epilog released)");
    json_t *gone = jq ("{'metadata':{'name':'fluxjob-800'},'spec':{'wlmID':'flux'}}");
    watch (e, "DELETED", gone);
    json_decref (gone);
    none ("a DELETED Workflow of a job waiting to be created: nothing");
    feed (e, "{'type':'job-info','token':'job-info:800','ok':true,'userid':1000,'jobspec':"
             "{'resources':[{'type':'node','count':1}],'attributes':{'system':{"
             "'dw':'" DW_XFS "'}}}}");
    json_t *a = has ("job read: Workflow created", "op", "create", "token", "create:800");
    ok (a && !json_object_get (jp (a, "body", "metadata", "annotations", NULL), ANN_HOSTS),
        "... without hosts");
    feed (e, "{'type':'job-info','token':'job-info:802','ok':true,'userid':1000,'jobspec':"
             "{'resources':[],'attributes':{'system':{}}}}");
    has ("a job without a dw attribute: exception", "action", "raise", "note",
         PREFIX "cannot create the Workflow again: the jobspec has no dw attribute");

    /* the Workflow shows up while the job-info read is outstanding (the
     * old service's create landed after the re-list): adopted */
    feed (e, "{'type':'orphans','jobs':[{'id':812,'state':'DEPEND','dependencies':"
             "['dws-create']}]}");
    has ("orphan 812: job-info", "action", "job-info", "id", "812");
    json_t *late = found (812, "Proposal", "Proposal", false, NULL, NULL);
    watch (e, "ADDED", late);
    has ("the Workflow of a job waiting for job-info shows up: picked up", "action", "log",
         "message", "fluxjob-812: picked up in Proposal");
    feed (e, "{'type':'job-info','token':'job-info:812','ok':true,'userid':1000,'jobspec':"
             "{'resources':[{'type':'node','count':1}],'attributes':{'system':{"
             "'dw':'" DW_XFS "'}}}}");
    none ("... the job-info answer then creates nothing");
    watch (e, "DELETED", late);
    a = has ("... and when that Workflow vanishes it is created again with its directives",
             "op", "create", "token", "create:812");
    json_at (jp (a, "body", "spec", "dwDirectives", NULL), "['" DW_XFS "']",
             "... the directives taken from the adopted Workflow");
    json_decref (late);
    feed (e, "{'type':'orphans','jobs':[{'id':813,'state':'DEPEND','dependencies':"
             "['dws-create']}]}");
    late = found (813, "Proposal", "Proposal", false, NULL, NULL);
    json_object_del (json_object_get (late, "spec"), "dwDirectives");
    watch (e, "ADDED", late);
    watch (e, "DELETED", late);
    json_decref (late);
    ok (!find ("op", "create"), "a vanished Workflow without directives is not created again");
    has ("... the job fails instead", "action", "raise", "id", "813");

    /* RUN with a lost dws.setup */
    job_to (e, 804, 0, "'c1'", 1, "Proposal");
    feed (e, "{'type':'orphans','jobs':[{'id':804,'state':'RUN'}]}");
    has ("RUN with no hosts and the Workflow in Proposal: job-info with R", "action",
         "job-info", "id", "804", "R", "true");
    feed (e, "{'type':'job-info','token':'job-info:804','ok':true,'userid':1000,'R':"
             "{'execution':{'nodelist':['c3']}}}");
    has ("R read: Setup goes on (the Servers)", "token", "servers:804");
    feed (e, "{'type':'orphans','jobs':[{'id':804,'state':'RUN'}]}");
    none ("RUN again once the hosts are known: nothing");

    job_to (e, 805, 0, "'c1'", 1, "Proposal");
    feed (e, "{'type':'orphans','jobs':[{'id':805,'state':'RUN'}]}");
    feed (e, "{'type':'job-info','token':'job-info:805','ok':false,'errstr':'EPERM'}");
    has ("reading R fails: exception", "action", "raise", "id", "805", "note",
         PREFIX "cannot read the job's R: EPERM");
    json_t *j = job_status (e, 805);
    ok (j != NULL, "... the job whose Workflow exists is not forgotten");
    json_decref (j);
    has ("... and its Workflow goes to Teardown", "op", "patch", "name", "fluxjob-805", "body",
         "{\"spec\":{\"desiredState\":\"Teardown\"}}");

    job_to (e, 810, 0, "'c1'", 1, "Proposal");
    feed (e, "{'type':'orphans','jobs':[{'id':810,'state':'RUN'}]}");
    feed (e, "{'type':'job-info','token':'job-info:810','ok':true,'R':'c1'}");
    has ("an R that is not an object: exception", "action", "raise", "id", "810", "note",
         PREFIX "cannot read the job's R: none");
    job_to (e, 811, 0, "'c1'", 1, "Proposal");
    feed (e, "{'type':'orphans','jobs':[{'id':811,'state':'RUN'}]}");
    feed (e, "{'type':'job-info','token':'job-info:811','ok':true,'R':{'execution':{}}}");
    has ("an R without a nodelist: exception", "action", "raise", "id", "811", "note",
         PREFIX "cannot read the job's R: R has no execution.nodelist");

    /* CLEANUP without the epilog */
    job_to (e, 806, 0, "'c1'", 1, "PostRun");
    job_to (e, 807, 0, "'c1'", 1, "PreRun");
    complete (e, 807, NULL);
    job_to (e, 808, 0, "'c1'", 1, "Setup");
    feed (e, "{'type':'orphans','jobs':[{'id':806,'state':'CLEANUP'},{'id':807,'state':"
             "'CLEANUP'},{'id':808,'state':'CLEANUP'},{'id':809,'state':'CLEANUP'}]}");
    ok (!find ("name", "fluxjob-806"), "CLEANUP with the epilog begun: nothing");
    has ("CLEANUP after PreRun without post_run: PostRun with the epilog annotation", "op",
         "patch", "name", "fluxjob-807", "body",
         "{\"metadata\":{\"annotations\":{\"" ANN_EPILOG "\":\"active\"}},\"spec\":"
         "{\"desiredState\":\"PostRun\"}}");
    has ("CLEANUP before PreRun: Teardown", "op", "patch", "name", "fluxjob-808", "body",
         "{\"metadata\":{\"annotations\":{\"" ANN_EPILOG "\":\"active\"}},\"spec\":"
         "{\"desiredState\":\"Teardown\"}}");
    ok (!feed (e, "{'type':'orphans'}") && !strcmp (errtext, "orphans event needs a jobs array"),
        "orphans without jobs: refused");
    dws_engine_destroy (e);
}

/* dws-limit across a restart: the job manager's list says who holds it */
#define DEP_TOPIC "job-manager.dws.dependency"
#define JOBINFO_XFS(id)                                                                        \
    "{'type':'job-info','token':'job-info:" #id "','ok':true,'userid':1000,'jobspec':"         \
    "{'resources':[{'type':'node','count':1}],'attributes':{'system':{'dw':'" DW_XFS "'}}}}"

/* A Workflow taken up after a restart: the job's bank and project are
 * read from its annotations (what the job is charged to) */
static void test_adopt_account (void)
{
    k8s_reset ();
    struct dws_engine *e = engine (NULL);
    sysconf (e);
    json_t *w833 = found (833, "Proposal", "Proposal", false,
                          "'" ANN_BANK "':'physics','" ANN_PROJECT "':'quantum'", NULL);
    watch (e, "ADDED", w833);
    json_decref (w833);
    struct job *j833 = job_lookup (e, 833);
    ok (j833 && j833->bank && !strcmp (j833->bank, "physics") && j833->project
            && !strcmp (j833->project, "quantum"),
        "a Workflow taken up: its bank and project from its annotations");
    dws_engine_destroy (e);
}

static void test_orphans_limit (void)
{
    k8s_reset ();
    struct dws_engine *e = engine ("{'limits':{'max_user_jobs':1,'users':{}}}");
    sysconf (e);
    /* 831's Workflow was made by the old service, which went away before
     * the create's answer: taken up from the list */
    json_t *w831 = found (831, "Proposal", "Proposal", false, NULL, NULL);
    json_t *objs = json_pack ("{s:s s:s s:[O]}", "type", "sync", "kind", "Workflow", "objects",
                              w831);
    feedj (e, objs);
    has ("a Workflow taken up in Proposal: its memo written again (the create's answer"
         " wrote it)", "action", "memo", "id", "831", "memo",
         "{\"rabbit_workflow\":\"fluxjob-831\"}");
    feed (e, "{'type':'sync','kind':'PersistentStorageInstance','objects':[]}");
    feed (e, "{'type':'orphans','jobs':[{'id':830,'state':'DEPEND','dependencies':"
             "['dws-create','dws-limit']},{'id':831,'state':'DEPEND','dependencies':"
             "['dws-create','dws-limit']},{'id':832,'state':'DEPEND','dependencies':"
             "['dws-create']}]}");
    has ("831 holds dws-limit and its Workflow exists: dws-limit removed at once", "topic",
         DEP_TOPIC, "payload", "{\"add\":false,\"id\":831,\"name\":\"dws-limit\"}");
    has ("830 holds dws-limit without a Workflow: its jobspec read", "action", "job-info", "id",
         "830");
    ok (count ("topic", DEP_TOPIC) == 1, "... nothing else about dws-limit yet");
    feed (e, JOBINFO_XFS (830));
    has ("830 over max_user_jobs (831 counts): it waits", "action", "log", "message",
         "fluxjob-830: waits for its user's rabbit storage: max_user_jobs 1: user 1000 holds"
         " 10 GiB in 1 job");
    ok (count ("topic", DEP_TOPIC) == 0, "... not held a second time: it holds dws-limit");
    feed (e, JOBINFO_XFS (832));
    has ("832 (no dws-limit) over the limit too: held now", "topic", DEP_TOPIC, "payload",
         "{\"add\":true,\"id\":832,\"name\":\"dws-limit\"}");
    /* 831 ends (cancelled): 830 goes, and loses dws-limit once its
     * Workflow exists */
    json_object_set (K8S, "fluxjob-831", w831);
    feed (e, "{'type':'request','userid':0,'topic':'dws.teardown','msgid':9,"
             "'payload':{'jobid':831}}");
    k8s_apply (A);
    complete (e, 831, NULL);
    has ("831 torn down: deleted", "op", "delete", "name", "fluxjob-831");
    ok (!find ("op", "create"), "... it counts until it is gone");
    watch (e, "DELETED", w831);
    json_decref (w831);
    has ("831 gone: 830 goes first (submission order)", "op", "create", "token", "create:830");
    ok (count ("topic", DEP_TOPIC) == 0, "... dws-limit stays until the create answers");
    k8s_apply (A);
    k8s_result (e, "create", 830, true, 201, "", wf (830));
    has ("830's create answered: dws-limit removed (found held after the restart)", "topic",
         DEP_TOPIC, "payload", "{\"add\":false,\"id\":830,\"name\":\"dws-limit\"}");
    dws_engine_destroy (e);

    /* the limits raised across the restart: the job goes at once and
     * loses the dws-limit it was found holding */
    k8s_reset ();
    e = engine ("{'limits':{'max_user_jobs':5,'users':{}}}");
    sysconf (e);
    sync_none (e);
    feed (e, "{'type':'sync','kind':'PersistentStorageInstance','objects':[]}");
    feed (e, "{'type':'orphans','jobs':[{'id':833,'state':'DEPEND','dependencies':"
             "['dws-create','dws-limit']}]}");
    feed (e, JOBINFO_XFS (833));
    has ("within the limits now: created", "op", "create", "token", "create:833");
    k8s_apply (A);
    k8s_result (e, "create", 833, true, 201, "", wf (833));
    has ("... and dws-limit removed once it exists", "topic", DEP_TOPIC, "payload",
         "{\"add\":false,\"id\":833,\"name\":\"dws-limit\"}");
    dws_engine_destroy (e);
}

/* Jobs that ended while no service watched, and a lost epilog-remove */
static void test_orphans_ended (void)
{
    k8s_reset ();
    struct dws_engine *e = engine (NULL);
    sysconf (e);
    json_t *p820 = found (820, "Proposal", "Proposal", true, NULL, NULL);
    json_t *p821 = found (821, "PreRun", "PreRun", true, NULL, NULL);
    json_t *p822 = found (822, "Proposal", "Proposal", true, NULL, NULL);
    feedj (e, json_pack ("{s:s s:s s:[OOO]}", "type", "sync", "kind", "Workflow", "objects",
                         p820, p821, p822));
    has ("first list: which jobs are active?", "action", "active-jobs");
    feed (e, "{'type':'orphans','jobs':[]}");
    ok (!find ("op", "patch"), "a failed listing (not complete): nothing is torn down");

    feed (e, "{'type':'orphans','complete':true,'jobs':[{'id':821,'state':'RUN'},"
             "{'id':830,'state':'CLEANUP','rabbit':true},{'id':831,'state':'CLEANUP',"
             "'rabbit':false},{'id':832,'state':'CLEANUP'}]}");
    has ("a listed Workflow whose job is not active: torn down", "action", "log", "message",
         "fluxjob-820: job is no longer active; tearing its Workflow down");
    json_t *td = has ("... Teardown asked", "op", "patch", "name", "fluxjob-820");
    ok (td && !strcmp (json_string_value (jp (td, "body", "spec", "desiredState", NULL)),
                       "Teardown"), "... desiredState Teardown");
    has ("... the other one too", "op", "patch", "name", "fluxjob-822");
    ok (!find ("name", "fluxjob-821"), "an active job's Workflow is left alone");
    has ("a rabbit job in CLEANUP with no Workflow: its epilog released", "action", "rpc",
         "topic", "job-manager.dws.epilog-remove", "payload", "{\"id\":830}");
    ok (count ("topic", "job-manager.dws.epilog-remove") == 1,
        "... not for a job without the rabbit_workflow memo");
    json_decref (p820);
    p820 = found (820, "Teardown", "Teardown", true, NULL, NULL);
    watch (e, "MODIFIED", p820);
    has ("Teardown done: the Workflow is deleted", "op", "delete", "name", "fluxjob-820");
    ok (!find ("topic", "job-manager.dws.epilog-remove"), "... and no epilog to release");

    /* a Workflow created after the first list is never taken for ended */
    job_to (e, 840, 0, "'c1'", 1, "Proposal");
    feed (e, "{'type':'orphans','complete':true,'jobs':[]}");
    ok (!find ("name", "fluxjob-840"), "a job known only after the first list: left alone");

    /* dws.post_run again after the epilog-remove went out (a jobtap
     * plugin reloaded with the epilog held asks again) */
    job_to (e, 841, 0, "'c1'", 1, "PreRun");
    complete (e, 841, NULL);
    feed (e, "{'type':'request','userid':0,'topic':'dws.post_run','msgid':1,'payload':{'jobid':841,"
             "'run_started':true}}");
    feed (e, "{'type':'request','userid':0,'topic':'dws.post_run','msgid':2,'payload':{'jobid':841,"
             "'run_started':true}}");
    ok (!find ("topic", "job-manager.dws.epilog-remove"),
        "a repeated post_run before the epilog is released: nothing more");
    for (int i = 0; i < 4 && !find ("op", "delete"); i++)
        complete (e, 841, NULL);
    has ("torn down: the epilog released", "topic", "job-manager.dws.epilog-remove");
    feed (e, "{'type':'request','userid':0,'topic':'dws.post_run','msgid':3,'payload':{'jobid':841,"
             "'run_started':true}}");
    has ("post_run again after that: the epilog-remove is sent again", "topic",
         "job-manager.dws.epilog-remove", "payload", "{\"id\":841}");

    /* dws.setup again after PreRun (a jobtap plugin reloaded while it
     * held the prolog): the prolog-remove it may have missed goes again */
    job_to (e, 842, 0, "'c1'", 1, "PreRun");
    complete (e, 842, NULL);
    has ("PreRun done: the prolog released", "topic", "job-manager.dws.prolog-remove");
    feed (e, "{'type':'request','userid':0,'topic':'dws.setup','msgid':4,'payload':{'jobid':842,"
             "'R':{'execution':{'nodelist':['c1']}}}}");
    has ("a repeated dws.setup after PreRun: prolog-remove again", "topic",
         "job-manager.dws.prolog-remove", "payload", "{\"id\":842,\"variables\":{}}");
    job_to (e, 843, 0, "'c1'", 1, "Setup");
    feed (e, "{'type':'request','userid':0,'topic':'dws.setup','msgid':5,'payload':{'jobid':843,"
             "'R':{'execution':{'nodelist':['c1']}}}}");
    ok (!find ("topic", "job-manager.dws.prolog-remove"),
        "a repeated dws.setup before PreRun is done: nothing more");
    json_decref (p820);
    json_decref (p821);
    json_decref (p822);
    dws_engine_destroy (e);
}

/* A dws.create refused before the job list (here a bad tolerance, as a
 * job submitted while the service starts): the job fails by that answer,
 * and the list that may still show it in DEPEND, held by dws-create, does
 * not make the service read it and fail it a second time.
 */
static void test_orphans_refused (void)
{
    k8s_reset ();
    struct dws_engine *e = engine (NULL);
    sysconf (e);
    feed (e, "{'type':'request','userid':0,'topic':'dws.create','msgid':3,'payload':{'jobid':850,"
             "'userid':1000,'resources':[{'type':'node','count':1}],'failure_tolerance':-1,"
             "'dw_directives':'" DW_XFS "'}}");
    has ("a bad tolerance refused at once", "action", "respond", "msgid", "3");
    sync_none (e);
    feed (e, "{'type':'orphans','jobs':[{'id':850,'state':'DEPEND','dependencies':"
             "['dws-create']},{'id':851,'state':'DEPEND','dependencies':['dws-create']}]}");
    ok (count ("action", "job-info") == 1, "refused before the list: not an orphan");
    has ("... another job held by dws-create still is", "action", "job-info", "id", "851");
    feed (e, "{'type':'request','userid':0,'topic':'dws.create','msgid':4,'payload':{'jobid':852,"
             "'userid':1000,'resources':[{'type':'node','count':1}],'failure_tolerance':'x',"
             "'dw_directives':'" DW_XFS "'}}");
    feed (e, "{'type':'orphans','jobs':[{'id':850,'state':'DEPEND','dependencies':"
             "['dws-create']}]}");
    has ("a second list (none comes in a service's life) reads it", "action", "job-info",
         "id", "850");
    /* the other order: listed (its jobspec being read), then refused */
    feed (e, "{'type':'request','userid':0,'topic':'dws.create','msgid':5,'payload':{'jobid':851,"
             "'userid':1000,'resources':[{'type':'node','count':1}],'failure_tolerance':-1,"
             "'dw_directives':'" DW_XFS "'}}");
    ok (job_status (e, 851) == NULL, "refused while its jobspec is read: forgotten");
    feed (e, "{'type':'job-info','token':'job-info:851','ok':true,'userid':1000,'jobspec':"
             "{'resources':[{'type':'node','count':1}],'attributes':{'system':{"
             "'dw':'" DW_XFS "','dw_failure_tolerance':-1}}}}");
    none ("... its jobspec then is a late answer: no second exception");
    dws_engine_destroy (e);
}

/* A job in DEPEND after a restart that holds other dependencies besides
 * dws-create and uses persistent storage has no Workflow because the
 * jobtap plugin keeps its dws.create until they are gone (the job that
 * makes the storage first): it is not created from the orphan list.
 */
static void test_orphans_persistent (void)
{
    k8s_reset ();
    struct dws_engine *e = engine (NULL);
    sysconf (e);
    sync_none (e);
    feed (e, "{'type':'orphans','jobs':[{'id':840,'state':'DEPEND','dependencies':"
             "['after-success=f1','dws-create']},{'id':841,'state':'DEPEND','dependencies':"
             "['after-success=f1','dws-create']},{'id':842,'state':'DEPEND','dependencies':"
             "['dws-create']},{'id':843,'state':'DEPEND','dependencies':"
             "['after-success=f1','dws-create']}]}");
    ok (count ("action", "job-info") == 4, "persistent orphans: every job is read");
    feed (e, "{'type':'job-info','token':'job-info:840','ok':true,'userid':1000,'jobspec':"
             "{'resources':[{'type':'node','count':1}],'attributes':{'system':{"
             "'dw':'#DW persistentdw name=keep'}}}}");
    has ("persistentdw with another dependency: not created, said so", "action", "log",
         "level", "info", "message",
         "fluxjob-840: job uses persistent storage and waits for its other dependencies;"
         " its dws.create comes once they are gone");
    ok (count ("op", "create") == 0, "... no Workflow");
    ok (job_status (e, 840) == NULL, "... the job is forgotten (its dws.create is to come)");
    feed (e, "{'type':'job-info','token':'job-info:841','ok':true,'userid':1000,'jobspec':"
             "{'resources':[{'type':'node','count':1}],'attributes':{'system':{"
             "'dw':'" DW_XFS "'}}}}");
    has ("jobdw with another dependency: its lost create is made", "op", "create", "token",
         "create:841");
    feed (e, "{'type':'job-info','token':'job-info:842','ok':true,'userid':1000,'jobspec':"
             "{'resources':[{'type':'node','count':1}],'attributes':{'system':{"
             "'dw':'#DW persistentdw name=keep'}}}}");
    has ("persistentdw held by dws-create alone: its lost create is made", "op", "create",
         "token", "create:842");
    /* the plugin's dws.create comes while the job is read: it is answered */
    feed (e, "{'type':'request','userid':0,'topic':'dws.create','msgid':9,'payload':{'jobid':843,"
             "'userid':1000,'resources':[{'type':'node','count':1}],'failure_tolerance':0,"
             "'dw_directives':'#DW persistentdw name=keep'}}");
    feed (e, "{'type':'job-info','token':'job-info:843','ok':true,'userid':1000,'jobspec':"
             "{'resources':[{'type':'node','count':1}],'attributes':{'system':{"
             "'dw':'#DW persistentdw name=keep'}}}}");
    has ("a dws.create that came meanwhile: the Workflow is made", "op", "create", "token",
         "create:843");
    dws_engine_destroy (e);
}

/* --- malformed events ------------------------------------------------------------ */

/* A lost dws.create re-created from the job's jobspec passes the checks
 * a dws.create does: the owner-only create_persistent rule, the policy
 * maximums, the failure tolerance (issue 24.2).
 */
static void recreate_refused (struct dws_engine *e, long long id, const char *jobspec,
                              const char *why)
{
    char note[512];
    feed (e, "{'type':'orphans','jobs':[{'id':%lld,'state':'DEPEND','dependencies':"
             "['dws-create']}]}", id);
    feed (e, "{'type':'job-info','token':'job-info:%lld','ok':true,'userid':1000,"
             "'jobspec':%s}", id, jobspec);
    snprintf (note, sizeof (note), PREFIX "cannot create the Workflow again: %s", why);
    has (why, "action", "raise", "type", "dws-create", "note", note);
    ok (count ("op", "create") == 0, "... and no Workflow is created");
    ok (job_status (e, id) == NULL, "... and the job is forgotten");
}

static void test_recreate_checks (void)
{
    k8s_reset ();
    struct dws_engine *e = engine ("{'owner':0,'policy':{'maximums':{'xfs':5}}}");
    sysconf (e);
    sync_none (e);
    recreate_refused (e, 830,
                      "{'resources':[{'type':'node','count':1}],'attributes':{'system':{"
                      "'dw':'#DW create_persistent type=xfs capacity=1GiB name=p'}}}",
                      "only the instance owner may create persistent storage"
                      " (#DW create_persistent)");
    recreate_refused (e, 831,
                      "{'resources':[{'type':'node','count':1}],'attributes':{'system':{"
                      "'dw':'" DW_XFS "'}}}",
                      "Requested a total of 10 GiB of xfs storage per node but max is 5 GiB"
                      " per node");
    recreate_refused (e, 832,
                      "{'resources':[{'type':'node','count':1}],'attributes':{'system':{"
                      "'dw':'#DW jobdw type=xfs capacity=1GiB name=s',"
                      "'dw_failure_tolerance':-1}}}",
                      "dw_failure_tolerance must be a positive integer");
    recreate_refused (e, 833, "{'resources':'two nodes','attributes':{'system':{"
                      "'dw':'#DW jobdw type=xfs capacity=1GiB name=s'}}}",
                      "jobspec: resources must be the jobspec resources");
    feed (e, "{'type':'orphans','jobs':[{'id':834,'state':'DEPEND','dependencies':"
             "['dws-create']}]}");
    feed (e, "{'type':'job-info','token':'job-info:834','ok':true,'userid':1000,'jobspec':"
             "{'resources':[{'type':'node','count':1}],'attributes':{'system':{"
             "'dw':'#DW jobdw type=xfs capacity=1GiB name=s'}}}}");
    has ("within every check the Workflow is created again", "op", "create", "token",
         "create:834");
    dws_engine_destroy (e);
}

static void bad (struct dws_engine *e, const char *event, const char *expect)
{
    char *before = status_text (e);
    bool r = feed (e, "%s", event);
    char *after = status_text (e);
    ok (!r && !strcmp (errtext, expect) && !strcmp (before, after), "%s refused: %s", event,
        expect);
    if (r || strcmp (errtext, expect) != 0)
        diag ("got: %s", r ? "actions" : errtext);
    if (strcmp (before, after) != 0)
        diag ("changed: %s -> %s", before, after);
    free (before);
    free (after);
}

static void test_malformed (void)
{
    dws_error_t err;
    k8s_reset ();
    struct dws_engine *e = engine (NULL);
    sysconf (e);
    sync_none (e);
    job_to (e, 900, 0, "'c1'", 1, "PostRun");

    json_t *arr = json_array ();
    char *before = status_text (e);
    json_t *r = dws_engine_event (e, arr, &err);
    char *after = status_text (e);
    ok (!r && !strcmp (err.text, "event must be a JSON object") && !strcmp (before, after),
        "an event that is not an object is refused: %s", err.text);
    free (before);
    free (after);
    json_decref (arr);
    char *s = dws_engine_event_json (e, "{\"type\":", &err);
    ok (!s && strlen (err.text) > 0, "event text that is not JSON is refused: %s", err.text);

    bad (e, "{}", "event has no type");
    bad (e, "{'type':5}", "event has no type");
    bad (e, "{'type':'bogus','now':1}", "unknown event type 'bogus'");
    bad (e, "{'type':'timer','key':'tc:900','now':'soon'}", "event 'now' must be a number");
    bad (e, "{'type':'watch','event':'ADDED','object':{}}", "watch event has no kind");
    bad (e, "{'type':'sync','objects':[]}", "sync event has no kind");
    bad (e, "{'type':'sync','kind':'Workflow'}", "sync event needs an objects array");
    bad (e, "{'type':'sync','kind':'Workflow','objects':{}}", "sync event needs an objects array");
    bad (e, "{'type':'watch','kind':'Workflow','object':{}}", "watch event needs event and object");
    bad (e, "{'type':'watch','kind':'Workflow','event':'ADDED','object':[]}",
         "watch event needs event and object");
    bad (e, "{'type':'k8s-result','ok':true}", "event has no token");
    bad (e, "{'type':'rpc-result','token':5}", "event has no token");
    bad (e, "{'type':'k8s-result','token':'nocolon'}", "unknown token 'nocolon'");
    bad (e, "{'type':'k8s-result','token':'state:abc'}", "unknown token 'state:abc'");
    bad (e, "{'type':'k8s-result','token':'state:-900'}", "unknown token 'state:-900'");
    bad (e, "{'type':'k8s-result','token':'state:'}", "unknown token 'state:'");
    bad (e, "{'type':'job-info','token':'"
            "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx:900'}",
         "unknown token '"
         "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx:900'");
    bad (e, "{'type':'k8s-result','token':'state:"
            "000000000000000000000000000000000000000000000000000000000000000900'}",
         "unknown token 'state:"
         "000000000000000000000000000000000000000000000000000000000000000900'");
    bad (e, "{'type':'timer'}", "timer event has no key");
    bad (e, "{'type':'orphans','jobs':5}", "orphans event needs a jobs array");

    /* a refused event's 'now' is not taken: the abort date stays NOW */
    feed (e, "{'type':'request','userid':0,'topic':'dws.abort','msgid':1,'now':%d,'payload':"
             "{'jobid':900}}",
          NOW);
    bad (e, "{'type':'bogus','now':0}", "unknown event type 'bogus'");
    list_result (e, "abort-servers", 900,
                 "[{'status':{'allocationSets':[{'storage':{'rabbit1':"
                 "{'allocationSize':1}}}]}}]");
    has ("a refused event does not move the clock", "kind", "Storage", "body",
         "{\"metadata\":{\"annotations\":{\"disable_date\":\"2023-11-14T22:13:20Z\","
         "\"disable_reason\":\"flux job fluxjob-900 epilog timed out (dws.abort)\"}},"
         "\"spec\":{\"state\":\"Disabled\"}}");
    k8s_result (e, "bogus", 900, true, 200, "", NULL);
    has ("an answer to an unknown token kind is logged", "action", "log", "message",
         "fluxjob-900: unexpected answer 'bogus'");
    feed (e, "{'type':'rpc-result','token':'resource-update:900','ok':false,'errstr':'nope'}");
    acts_are ("[{'action':'log','level':'err','message':'fluxjob-900: resource-update RPC "
              "failed: nope'}]",
              "a failed RPC with a token is logged");
    dws_engine_destroy (e);
}

static void test_status_json (void)
{
    dws_error_t err;
    struct dws_engine *e = engine (NULL);
    char *s = dws_engine_status_json (e, &err);
    json_t *o = s ? json_loads (s, 0, NULL) : NULL;
    json_at (o, "{'synced':false,'jobs':[],'phases':{},'rabbits':0,'computes':0,'events':0}",
             "status JSON of a new engine");
    json_decref (o);
    free (s);
    s = dws_engine_event_json (
        e, "{\"type\":\"request\",\"topic\":\"dws.status\",\"msgid\":1,\"userid\":0}", &err);
    ok (s != NULL && strstr (s, "\"respond\"") != NULL, "event JSON entry point");
    free (s);
    s = dws_f58_plain (0);
    is (s, "f1", "f58 of 0");
    free (s);
    s = dws_f58_plain (12345);
    is (s, "f4fr", "f58 of 12345");
    free (s);
    dws_engine_destroy (e);
}

/* --- a job as its owner sees it (dws.jobs, dws.job) ------------------------- */
static json_t *respond_to (int msgid)
{
    size_t i;
    json_t *a;
    json_array_foreach (A, i, a)
        if (json_integer_value (json_object_get (a, "msgid")) == msgid)
            return a;
    return NULL;
}

static void test_jobview (void)
{
    struct dws_engine *e = engine ("{'owner':0}");
    sysconf (e);
    sync_none (e);
    if (!job_to (e, 71, 0, "'c1','c3'", 2, "DataIn"))
        return;
    /* job 71 belongs to uid 1000 (create_req); 1001 is another user */
    feed (e, "{'type':'request','userid':1000,'topic':'dws.jobs','msgid':900,'payload':{}}");
    json_t *r = respond_to (900);
    json_t *j = jp (r, "payload", "jobs", "#0", NULL);
    ok (json_array_size (jp (r, "payload", "jobs", NULL)) == 1
            && json_integer_value (json_object_get (j, "id")) == 71,
        "dws.jobs: the owner of job 71 sees it");
    json_at (jp (j, "phase", NULL), "'datain'", "dws.jobs: its phase");
    json_at (jp (j, "directives", "#0", "args", "type", NULL), "'xfs'",
             "dws.jobs: its directive's file-system type");
    ok (json_object_get (j, "rabbits") != NULL, "dws.jobs: its rabbits (%s)",
        json_string_value (json_object_get (j, "rabbits")));
    ok (!json_object_get (j, "directive") && !json_object_get (j, "env"),
        "dws.jobs: a line's worth, not the whole job");

    feed (e, "{'type':'request','userid':1001,'topic':'dws.jobs','msgid':901,'payload':{}}");
    ok (json_array_size (jp (respond_to (901), "payload", "jobs", NULL)) == 0,
        "dws.jobs: another user sees none of it");
    feed (e, "{'type':'request','userid':1001,'topic':'dws.jobs','msgid':902,"
             "'payload':{'all_users':true}}");
    json_at (jp (respond_to (902), "errnum", NULL), "1", "dws.jobs all_users from a user: EPERM");
    feed (e, "{'type':'request','userid':0,'topic':'dws.jobs','msgid':903,"
             "'payload':{'all_users':true,'ids':[71,5]}}");
    ok (json_array_size (jp (respond_to (903), "payload", "jobs", NULL)) == 1,
        "dws.jobs all_users from the instance owner, ids [71, 5]: job 71");
    feed (e, "{'type':'request','userid':0,'topic':'dws.jobs','msgid':904,"
             "'payload':{'ids':[-1]}}");
    json_at (jp (respond_to (904), "payload", "errstr", NULL),
             "'dws.jobs: ids[0] must be a non-negative integer'", "dws.jobs: a bad id");
    feed (e, "{'type':'request','userid':0,'topic':'dws.jobs','msgid':905,"
             "'payload':{'all_users':1}}");
    json_at (jp (respond_to (905), "payload", "errstr", NULL),
             "'dws.jobs: all_users must be a boolean'", "dws.jobs: a bad all_users");

    feed (e, "{'type':'request','userid':1001,'topic':'dws.job','msgid':910,"
             "'payload':{'jobid':71}}");
    json_at (jp (respond_to (910), "errstr", NULL), "'dws.job: job 71 belongs to another user'",
             "dws.job from another user: refused");
    ok (!find ("kind", "NnfDataMovement"), "... and nothing is read for it");
    feed (e, "{'type':'request','userid':1000,'topic':'dws.job','msgid':911,"
             "'payload':{'jobid':99}}");
    json_at (jp (respond_to (911), "errnum", NULL), "2", "dws.job for an unknown job: ENOENT");
    feed (e, "{'type':'request','userid':1000,'topic':'dws.job','msgid':912,"
             "'payload':{'jobid':'71'}}");
    json_at (jp (respond_to (912), "payload", "errstr", NULL),
             "'dws.job: jobid must be a non-negative integer'", "dws.job: a malformed jobid");

    feed (e, "{'type':'request','userid':1000,'topic':'dws.job','msgid':913,"
             "'payload':{'jobid':71}}");
    has ("dws.job: the job's NnfDataMovements are listed first", "action", "k8s", "op", "list",
         "kind", "NnfDataMovement", "token", "jobview:71");
    ok (!respond_to (913), "... before the answer");
    feed (e, "{'type':'request','userid':0,'topic':'dws.job','msgid':914,"
             "'payload':{'jobid':71}}");
    ok (!find ("kind", "NnfDataMovement"), "a second dws.job meanwhile shares the list");
    list_result (e, "jobview", 71,
                 "[{'metadata':{'name':'dm-1','labels':{'dm.cray.hpe.com/initiator':'copy_in'}},"
                 "'spec':{'source':{'path':'/lus/in'},'destination':{'path':'$DW_JOB_x/in'}},"
                 "'status':{'state':'Running','commandStatus':{'progress':42,"
                 "'elapsedTime':'4.2s','lastMessage':'Copied 1 GiB (42%)','command':'mpirun'}}}]");
    json_t *full = jp (respond_to (913), "payload", NULL);
    ok (full && respond_to (914), "both dws.job requests are answered by the one list");
    json_at (jp (full, "datamovements", "#0", "commandStatus", "progress", NULL), "42",
             "dws.job: a data movement's progress");
    json_at (jp (full, "datamovements", "#0", "initiator", NULL), "'copy_in'",
             "dws.job: which directive moves it");
    ok (!jp (full, "datamovements", "#0", "commandStatus", "command", NULL),
        "dws.job: not the command nnf-dm runs");
    json_at (jp (full, "directives", "#0", "allocation_sets", "#0", "minimumCapacity", NULL),
             "10737418240", "dws.job: the directive's allocation, from its breakdown");
    json_at (jp (full, "hosts", NULL), "'c[1,3]'", "dws.job: the job's computes");
    ok (json_is_number (jp (full, "timeline", "Setup", "asked", NULL))
            && json_is_number (jp (full, "timeline", "Setup", "done", NULL))
            && json_is_number (jp (full, "timeline", "DataIn", "asked", NULL))
            && !jp (full, "timeline", "DataIn", "done", NULL),
        "dws.job: the timeline so far (Setup asked and done, DataIn asked)");
    ok (!json_object_get (full, "workflowToken") && !json_object_get (full, "wf"),
        "dws.job: no Workflow object, no token");

    feed (e, "{'type':'request','userid':1000,'topic':'dws.job','msgid':915,"
             "'payload':{'jobid':71}}");
    k8s_result (e, "jobview", 71, false, 500, "the API server is down", NULL);
    json_at (jp (respond_to (915), "payload", "datamovements_error", NULL),
             "'the API server is down'", "dws.job: a failed list is said, the rest answered");

    feed (e, "{'type':'request','userid':1000,'topic':'dws.job','msgid':916,"
             "'payload':{'jobid':71}}");
    watch (e, "DELETED", wf (71));
    json_at (jp (respond_to (916), "errnum", NULL), "2",
             "dws.job waiting while the Workflow goes: ENOENT (its record is in the KVS)");
    dws_engine_destroy (e);
}

/* --- early release (release.c) ---------------------------------------------- */

/* The index in A of the first action with this topic, or -1. */
static long topic_at (const char *topic)
{
    size_t i;
    json_t *a;
    json_array_foreach (A, i, a) {
        const char *t = json_string_value (json_object_get (a, "topic"));
        if (t && !strcmp (t, topic))
            return (long)i;
    }
    return -1;
}

/* Job `id` on c1 through PostRun, its completion fed: A is what follows. */
static bool postrun_done (struct dws_engine *e, long long id)
{
    return job_to (e, id, 0, "'c1'", 1, "PostRun") && complete (e, id, NULL);
}

/* The computes go back: DataOut asked with the held paths first, and
 * nothing released before that patch is written (a restart between would
 * find a job ended with its DataOut not asked for); then dataout-begin,
 * then (never before) the epilog-remove.
 */
static void released_ok (struct dws_engine *e, long long id, const char *held, const char *what)
{
    char payload[64];
    snprintf (payload, sizeof (payload), "{\"id\":%lld}", id);
    json_t *p = find ("kind", "Workflow", "op", "patch");
    ok (p && !strcmp (dws_json_str_or (jp (p, "body", "spec", "desiredState", NULL), ""),
                      "DataOut")
            && !strcmp (dws_json_str_or (jp (p, "body", "metadata", "annotations",
                                             "flux-dws.io/held-ssds", NULL),
                                         "(none)"),
                        held),
        "%s: DataOut asked, the held ssds %s on the Workflow", what, held);
    ok (topic_at ("job-manager.dws.epilog-remove") < 0
            && topic_at ("job-manager.dws.dataout-begin") < 0,
        "... the epilog not ended before that patch is written");
    char *token = strdup (dws_json_str_or (jp (p, "token", NULL), ""));
    feed (e, "{'type':'k8s-result','token':'%s','ok':true,'code':200}", token);
    free (token);
    long begin = topic_at ("job-manager.dws.dataout-begin");
    long epilog = topic_at ("job-manager.dws.epilog-remove");
    if (!ok (begin >= 0 && epilog > begin, "... written: dataout-begin, then the epilog-remove"))
        show_actions ();
    has ("... dataout-begin names the job", "topic", "job-manager.dws.dataout-begin", "payload",
         payload);
    has ("... the epilog-remove too", "topic", "job-manager.dws.epilog-remove", "payload",
         payload);
}

/* The computes kept until Teardown, for `why`: no epilog-remove, no
 * dataout-begin, DataOut asked all the same.
 */
static void kept_ok (long long id, const char *why, const char *what)
{
    char msg[256];
    snprintf (msg, sizeof (msg), "fluxjob-%lld: computes kept until Teardown: %s", id, why);
    has (what, "action", "log", "level", "warning", "message", msg);
    ok (topic_at ("job-manager.dws.epilog-remove") < 0
            && topic_at ("job-manager.dws.dataout-begin") < 0,
        "... no epilog-remove, no dataout-begin");
    json_t *p = find ("kind", "Workflow", "op", "patch");
    ok (p && !strcmp (dws_json_str_or (jp (p, "body", "spec", "desiredState", NULL), ""),
                      "DataOut")
            && !jp (p, "body", "metadata", "annotations", NULL),
        "... DataOut asked, nothing held");
}

/* Teardown after DataOut: the epilog ends then, and no dataout-begin. */
static void late_end_ok (struct dws_engine *e, long long id, const char *what)
{
    complete (e, id, NULL); /* DataOut */
    complete (e, id, NULL); /* Teardown */
    ok (topic_at ("job-manager.dws.epilog-remove") >= 0
            && topic_at ("job-manager.dws.dataout-begin") < 0,
        "%s: the epilog ends at Teardown, with no dataout-begin", what);
}

static void test_release (void)
{
    k8s_reset ();
    /* fluxion = false (--disable-fluxion, as flux-coral2 v0.36.0): only
     * alloc_rabbit keeps other jobs off the rabbits, until Teardown, so
     * the computes are kept until then whatever release_computes says */
    struct dws_engine *e = engine ("{'owner':0,'release_computes':'after-unmount',"
                                   "'fluxion':false}");
    json_t *td;
    sysconf (e);
    sync_none (e);
    ok (postrun_done (e, 900), "fluxion = false: job 900 through PostRun");
    ok (!find ("action", "job-info") && !find ("action", "timer-start"),
        "... no R read, no hold to wait for");
    ok (topic_at ("job-manager.dws.epilog-remove") < 0
            && topic_at ("job-manager.dws.dataout-begin") < 0,
        "... no epilog-remove, no dataout-begin: the computes are kept");
    json_t *j = job_status (e, 900);
    ok (!json_is_true (jp (j, "released", NULL)), "... the engine has it not released");
    json_decref (j);
    late_end_ok (e, 900, "fluxion = false");
    dws_engine_destroy (e);

    /* with Fluxion: the R is read, its ssds held first (teardown_after
     * for job 909) */
    k8s_reset ();
    e = engine ("{'owner':0,'release_computes':'after-unmount','teardown_after':5}");
    sysconf (e);
    sync_none (e);
    ok (postrun_done (e, 901), "job 901 through PostRun");
    has ("PostRun done: the job's R is read", "action", "job-info", "id", "901", "token",
         "job-info:901", "R", "true");
    has ("... for at most 60 s", "action", "timer-start", "key", "release:901", "after", "60.0");
    ok (topic_at ("job-manager.dws.epilog-remove") < 0
            && topic_at ("job-manager.dws.dataout-begin") < 0 && !find ("kind", "Workflow"),
        "... nothing released, DataOut not asked yet");
    j = job_status (e, 901);
    ok (!strcmp (dws_json_str_or (jp (j, "phase", NULL), ""), "releasing"),
        "... the engine's phase is releasing");
    json_decref (j);
    feed (e, "{'type':'job-info','token':'job-info:901','ok':true,'R':{'version':1,"
             "'execution':{'R_lite':[],'nodelist':['c1']},'scheduling':{'graph':{'nodes':"
             "[{'id':'0','metadata':{'type':'node','paths':{'containment':'/c/c1'}}}],"
             "'edges':[]}}}}");
    has ("an R without ssd vertices: the timer stops", "action", "timer-stop", "key",
         "release:901");
    released_ok (e, 901, "[]", "an R without ssd vertices");

    /* in the window between DataOut asked with the held ssds and that
     * patch's answer: another desiredState patch's answer (PostRun's,
     * late) ends nothing; teardown_after expires: the job, in CLEANUP
     * still, is told, and torn down; its epilog ends at the deletion */
    ok (postrun_done (e, 909), "job 909 through PostRun");
    feed (e, "{'type':'job-info','token':'job-info:909','ok':true,'R':{'version':1,"
             "'execution':{'R_lite':[],'nodelist':['c1']},'scheduling':{'graph':{'nodes':"
             "[{'id':'0','metadata':{'type':'node','paths':{'containment':'/c/c1'}}}],"
             "'edges':[]}}}}");
    has ("DataOut asked with the held ssds, on a token of its own", "kind", "Workflow", "op",
         "patch", "token", "dataout-held:909");
    feed (e, "{'type':'k8s-result','token':'state:909','ok':true,'code':200}");
    ok (A && topic_at ("job-manager.dws.epilog-remove") < 0
            && topic_at ("job-manager.dws.dataout-begin") < 0,
        "... a late answer to another desiredState patch: the epilog not ended");
    feed (e, "{'type':'timer','key':'teardown_after:909'}");
    has ("teardown_after in the window: the job, active still, is told", "action", "raise",
         "id", "909", "type", "teardown-timeout");
    td = has ("... and torn down", "op", "patch", "name", "fluxjob-909");
    ok (td && !strcmp (dws_json_str_or (jp (td, "body", "spec", "desiredState", NULL), ""),
                       "Teardown"),
        "... to Teardown");
    feed (e, "{'type':'k8s-result','token':'dataout-held:909','ok':true,'code':200}");
    ok (topic_at ("job-manager.dws.epilog-remove") < 0
            && topic_at ("job-manager.dws.dataout-begin") < 0,
        "the held DataOut written after that: nothing released");
    complete (e, 909, NULL); /* Teardown */
    ok (topic_at ("job-manager.dws.epilog-remove") >= 0
            && topic_at ("job-manager.dws.dataout-begin") < 0,
        "Teardown done: its epilog ends with the deletion, with no dataout-begin");
    watch (e, "DELETED", wf (909));
    ok (topic_at ("job-manager.dws.epilog-remove") < 0, "... and not again when it is gone");

    /* DataOut fails before the held ssds' patch answers, the Workflow
     * seen in DataOut with them (the patch landed): the computes go back
     * first, then the failure is recorded, the released job's (no
     * exception reaches it) */
    ok (postrun_done (e, 910), "job 910 through PostRun");
    feed (e, "{'type':'job-info','token':'job-info:910','ok':true,'R':{'version':1,"
             "'execution':{'R_lite':[],'nodelist':['c1']},'scheduling':{'graph':{'nodes':"
             "[{'id':'0','metadata':{'type':'node','paths':{'containment':'/c/c1'}}}],"
             "'edges':[]}}}}");
    has ("job 910: DataOut asked with the held ssds", "kind", "Workflow", "op", "patch", "token",
         "dataout-held:910");
    ok (wf_status (e, 910, "DataOut", false, "Error",
                   "{'message':'DW Directive 1: Internal error: copy_out failed'}"),
        "... its DataOut in Error before that patch answered");
    {
        long begin = topic_at ("job-manager.dws.dataout-begin");
        long epilog = topic_at ("job-manager.dws.epilog-remove");
        ok (begin >= 0 && epilog > begin, "... released first: dataout-begin, the epilog-remove");
        ok (!find ("action", "raise", NULL, NULL, NULL, NULL),
            "... and no exception reaches the released job");
        ok (find ("action", "log", "level", "err", NULL, NULL) != NULL,
            "... its failure logged, the released job's");
    }
    feed (e, "{'type':'k8s-result','token':'dataout-held:910','ok':true,'code':200}");
    ok (topic_at ("job-manager.dws.epilog-remove") < 0, "... the patch's answer ends nothing again");

    /* no R: the job-info failed, or answered without one */
    ok (postrun_done (e, 902), "job 902 through PostRun");
    feed (e, "{'type':'job-info','token':'job-info:902','ok':false,'errstr':'no such job'}");
    kept_ok (902, "no such job", "no R (job-info failed): the computes kept");
    has ("... the timer stops", "action", "timer-stop", "key", "release:902");
    late_end_ok (e, 902, "no R");
    ok (postrun_done (e, 903), "job 903 through PostRun");
    feed (e, "{'type':'job-info','token':'job-info:903','ok':true}");
    kept_ok (903, "the job's R could not be read", "job-info without R: the computes kept");

    /* an R without the scheduling key (Fluxion's match-format is not rv1) */
    ok (postrun_done (e, 904), "job 904 through PostRun");
    feed (e, "{'type':'job-info','token':'job-info:904','ok':true,'R':{'version':1,"
             "'execution':{'R_lite':[],'nodelist':['c1']}}}");
    kept_ok (904, "R has no scheduling graph: is Fluxion's match-format rv1?",
             "an R without scheduling: the computes kept");

    /* Fluxion does not confirm the hold (the ssd is not in the graph health
     * knows, so it never is) within 60 s */
    ok (postrun_done (e, 905), "job 905 through PostRun");
    feed (e, "{'type':'job-info','token':'job-info:905','ok':true,'R':{'version':1,"
             "'execution':{'R_lite':[],'nodelist':['c1']},'scheduling':{'graph':{'nodes':"
             "[{'id':'0','metadata':{'type':'ssd','paths':{'containment':'/c/ch0/ssd0'}}}],"
             "'edges':[]}}}}");
    ok (topic_at ("job-manager.dws.epilog-remove") < 0
            && topic_at ("job-manager.dws.dataout-begin") < 0 && !find ("kind", "Workflow"),
        "an ssd held but not confirmed: nothing released yet");
    feed (e, "{'type':'timer','key':'release:905','now':%d}", NOW + 60);
    kept_ok (905, "Fluxion did not confirm the ssd holds within 60 s",
             "no confirmation in 60 s: the computes kept");
    late_end_ok (e, 905, "no confirmation");
    feed (e, "{'type':'timer','key':'release:905'}");
    ok (topic_at ("job-manager.dws.epilog-remove") < 0 && !find ("kind", "Workflow"),
        "a late release timer: nothing");

    /* an excepted job (its PostRun failed) is not released: Teardown first */
    ok (job_to (e, 906, 0, "'c1'", 1, "PostRun"), "job 906 reaches PostRun");
    wf_status (e, 906, "PostRun", false, "Error", "{'message':'unmount failed on c1'}");
    list_result (e, "postrun-failed", 906, "[]"); /* the ClientMounts: all unmounted */
    has ("PostRun Error: an exception", "action", "raise", "id", "906");
    td = has ("... a Workflow patch", "op", "patch", "name", "fluxjob-906");
    ok (td && !strcmp (dws_json_str_or (jp (td, "body", "spec", "desiredState", NULL), ""),
                       "Teardown"),
        "... to Teardown");
    ok (!find ("action", "job-info") && topic_at ("job-manager.dws.epilog-remove") < 0
            && topic_at ("job-manager.dws.dataout-begin") < 0,
        "... no R read, nothing released");
    wf_status (e, 906, "PostRun", true, "Completed", NULL);
    ok (A && !find ("action", "job-info") && topic_at ("job-manager.dws.epilog-remove") < 0
            && topic_at ("job-manager.dws.dataout-begin") < 0,
        "a late PostRun Completed of the excepted job: still nothing released");
    complete (e, 906, NULL); /* Teardown */
    ok (topic_at ("job-manager.dws.epilog-remove") >= 0
            && topic_at ("job-manager.dws.dataout-begin") < 0,
        "the excepted job's epilog ends at Teardown, with no dataout-begin");
    dws_engine_destroy (e);

    /* a service restarted after DataOut was written with the held ssds,
     * before the epilog ended: the job is in CLEANUP still */
    k8s_reset ();
    e = engine ("{'owner':0,'release_computes':'after-unmount'}");
    sysconf (e);
    json_t *w907 = found (907, "DataOut", "DataOut", false,
                          "'" ANN_HOSTS "':'c1','" ANN_EPILOG "':'active',"
                          "'flux-dws.io/held-ssds':'[]'", NULL);
    json_t *w908 = found (908, "DataOut", "DataOut", false,
                          "'" ANN_HOSTS "':'c1','" ANN_EPILOG "':'active',"
                          "'flux-dws.io/held-ssds':'[]'", NULL);
    feedj (e, json_pack ("{s:s s:s s:[oo]}", "type", "sync", "kind", "Workflow", "objects",
                         w907, w908));
    ok (topic_at ("job-manager.dws.epilog-remove") < 0, "taken up released: nothing sent yet");
    feed (e, "{'type':'orphans','complete':true,'jobs':[{'id':907,'state':'CLEANUP',"
             "'rabbit':true}]}");
    long begin = topic_at ("job-manager.dws.dataout-begin");
    long epilog = topic_at ("job-manager.dws.epilog-remove");
    ok (begin >= 0 && epilog > begin && count ("topic", "job-manager.dws.epilog-remove") == 1,
        "released but in CLEANUP: dataout-begin, then its epilog ended");
    has ("... that one alone", "topic", "job-manager.dws.epilog-remove", "payload",
         "{\"id\":907}");
    ok (!find ("name", "fluxjob-908") && !find ("name", "fluxjob-907"),
        "... both Workflows go on in DataOut (908, inactive, is not torn down)");
    dws_engine_destroy (e);
}

/* --- persistent storage (dws.persistent-*) ------------------------------------ */

#define PSI_OBJ(name, uid, extra)                                                              \
    "{'metadata':{'name':'" name "','resourceVersion':'7','creationTimestamp':"               \
    "'2026-01-01T00:00:00Z'" extra "},'spec':{'name':'" name "','fsType':'lustre',"           \
    "'userID':" uid ",'state':'Active','dwDirective':'#DW create_persistent type=lustre "     \
    "capacity=1TiB name=" name "','consumerReferences':[{'kind':'Workflow','name':"          \
    "'fluxjob-71-0','namespace':'default'},{'kind':'Workflow','name':'slurm-3-1',"           \
    "'namespace':'default'}]},'status':{'state':'Degraded'}}"

static void test_persistent (void)
{
    struct dws_engine *e = engine ("{'owner':0}");
    sync_none (e);
    feed (e, "{'type':'request','userid':1000,'topic':'dws.persistent-list','msgid':1}");
    ok (json_array_size (A) == 0, "persistent-list before the PSIs are listed waits");
    feed (e, "{'type':'request','userid':1001,'topic':'dws.persistent-share','msgid':2,"
             "'payload':{'name':'proj'}}");
    ok (json_array_size (A) == 0, "... and so does persistent-share");

    feed (e, "{'type':'sync','kind':'PersistentStorageInstance','objects':[" PSI_OBJ (
                 "proj", "1000", "") "," PSI_OBJ ("gone", "1000",
                                                   ",'deletionTimestamp':'2026-01-02T00:00:00Z'")
             "],'owners':{'1000':'alice'}}");
    ok (json_array_size (jp (respond_to (1), "payload", "persistent", NULL)) == 2
            && json_integer_value (jp (respond_to (2), "errnum", NULL)) == EPERM,
        "... both answered once the list has come");
    feed (e, "{'type':'request','userid':1001,'topic':'dws.persistent-list','msgid':3}");
    json_at (jp (respond_to (3), "payload", "persistent", "#1", NULL),
             "{'name':'proj','type':'lustre','capacity':'1TiB','userid':1000,'owner':'alice',"
             "'state':'Degraded',"
             "'deleting':false,'shared':false,'jobs':[71],'workflows':['slurm-3-1'],"
             "'created':'2026-01-01T00:00:00Z','gib':1024}",
             "persistent-list from any user: every PSI, its jobs from its consumers, sorted");
    json_at (jp (respond_to (3), "payload", "persistent", "#0", "deleting", NULL), "true",
             "... one with a deletionTimestamp is deleting");

    feed (e, "{'type':'request','userid':1001,'topic':'dws.persistent-share','msgid':4,"
             "'payload':{'name':'proj'}}");
    json_at (jp (respond_to (4), "errnum", NULL), "1", "share by another user: EPERM");
    ok (!find ("action", "k8s"), "... and nothing is written");
    feed (e, "{'type':'request','userid':1000,'topic':'dws.persistent-share','msgid':5,"
             "'payload':{'name':'nosuch'}}");
    json_at (jp (respond_to (5), "errnum", NULL), "2", "share of an unknown PSI: ENOENT");
    feed (e, "{'type':'request','userid':1000,'topic':'dws.persistent-share','msgid':6,"
             "'payload':{'name':'gone'}}");
    json_at (jp (respond_to (6), "errnum", NULL), "16", "share of a PSI being deleted: EBUSY");
    feed (e, "{'type':'request','userid':1000,'topic':'dws.persistent-share','msgid':7,"
             "'payload':{'name':7}}");
    json_at (jp (respond_to (7), "payload", "errstr", NULL),
             "'dws.persistent-share: name must be a non-empty string'",
             "share with a bad name: refused, success false");

    feed (e, "{'type':'request','userid':1000,'topic':'dws.persistent-share','msgid':8,"
             "'payload':{'name':'proj'}}");
    json_t *patch = find ("action", "k8s", "op", "patch", "kind", "PersistentStorageInstance");
    json_at (jp (patch, "body", NULL),
             "{'metadata':{'resourceVersion':'7','annotations':"
             "{'dataworkflowservices.github.io/ignore-uid':'true'}}}",
             "share by the PSI's owner: a merge patch of the annotation, on the version checked");
    ok (!respond_to (8), "... answered once the patch is");
    const char *tok = json_string_value (json_object_get (patch, "token"));
    char *token = tok ? strdup (tok) : NULL;
    feed (e, "{'type':'k8s-result','token':'%s','ok':false,'code':409,'message':'conflict'}",
          token ? token : "");
    json_at (jp (respond_to (8), "errnum", NULL), "11", "a 409 on the patch: EAGAIN");
    feed (e, "{'type':'k8s-result','token':'%s','ok':true,'code':200}", token ? token : "");
    ok (json_array_size (A) == 0, "a late second answer is ignored");
    free (token);

    feed (e, "{'type':'request','userid':0,'topic':'dws.persistent-share','msgid':9,"
             "'payload':{'name':'proj'}}");
    tok = json_string_value (json_object_get (find ("action", "k8s"), "token"));
    token = tok ? strdup (tok) : NULL;
    feed (e, "{'type':'k8s-result','token':'%s','ok':false,'code':403,'message':"
             "'persistentstorageinstances is forbidden'}", token ? token : "");
    json_at (jp (respond_to (9), "errstr", NULL),
             "'dws.persistent-share: cannot annotate `proj`: persistentstorageinstances is"
             " forbidden'", "the instance owner's share, refused by the API server: EIO, its words");
    free (token);
    feed (e, "{'type':'request','userid':0,'topic':'dws.persistent-share','msgid':10,"
             "'payload':{'name':'proj'}}");
    tok = json_string_value (json_object_get (find ("action", "k8s"), "token"));
    token = tok ? strdup (tok) : NULL;
    feed (e, "{'type':'k8s-result','token':'%s','ok':true,'code':200}", token ? token : "");
    json_at (jp (respond_to (10), "payload", NULL),
             "{'success':true,'name':'proj','shared':true,'changed':true}", "... and accepted");
    free (token);

    feed (e, "{'type':'watch','kind':'PersistentStorageInstance','event':'MODIFIED','object':"
             PSI_OBJ ("proj", "1000", ",'annotations':{'dataworkflowservices.github.io/ignore-uid'"
                                      ":'True'}") "}");
    feed (e, "{'type':'request','userid':1000,'topic':'dws.persistent-share','msgid':11,"
             "'payload':{'name':'proj'}}");
    json_at (jp (respond_to (11), "payload", "changed", NULL), "false",
             "shared already (any case of true): answered, nothing written");
    ok (!find ("action", "k8s"), "... no patch");
    feed (e, "{'type':'request','userid':1000,'topic':'dws.persistent-unshare','msgid':12,"
             "'payload':{'name':'proj'}}");
    json_at (jp (find ("action", "k8s"), "body", "metadata", "annotations", NULL),
             "{'dataworkflowservices.github.io/ignore-uid':null}",
             "unshare: the annotation removed");
    feed (e, "{'type':'watch','kind':'PersistentStorageInstance','event':'DELETED','object':"
             PSI_OBJ ("proj", "1000", "") "}");
    feed (e, "{'type':'request','userid':1000,'topic':'dws.persistent-list','msgid':13}");
    ok (json_array_size (jp (respond_to (13), "payload", "persistent", NULL)) == 1,
        "a deleted PSI leaves the list");
    dws_engine_destroy (e);

    char buf[DWS_EXPLAIN_MAX];
    ok (dws_explain_is (PREFIX "workflow hit an error: DW Directive 0: User error: User ID does"
                               " not match existing persistent storage",
                        DWS_EXPLAIN_ROW_PERSISTENT_NOT_SHARED)
            && !dws_explain_is (PREFIX "workflow hit an error: DW Directive 0: User error: user"
                                       " ID does not match existing persistent storage",
                                DWS_EXPLAIN_ROW_PERSISTENT_NOT_SHARED),
        "dws_explain_is: persistentdw's refusal, not destroy_persistent's");
    ok (dws_explain_persistent_owner ("proj", 1000, "alice", buf, sizeof (buf))
            && !strcmp (buf, "'proj' belongs to alice (uid 1000). That user (or the"
                             " instance owner) can share it with: flux dws persistent share proj"),
        "the owner's line");
    ok (dws_explain_persistent_owner ("proj", 1000, NULL, buf, sizeof (buf))
            && !strcmp (buf, "'proj' belongs to the user with uid 1000. That user (or the"
                             " instance owner) can share it with: flux dws persistent share proj"),
        "... without a user name, the uid");
    ok (!dws_explain_persistent_owner ("proj", -1, NULL, buf, sizeof (buf))
            && dws_explain_persistent_owner ("proj", 1000, "alice", buf, 10) && strlen (buf) == 9,
        "... none for a negative uid; cut to fit");
}

/* A dws.create from uid's job `id` (msgid) with the directive dw. */
static bool create_as (struct dws_engine *e, long long id, int msgid, int uid, const char *dw)
{
    char *res = resources (1);
    bool rc = feed (e,
                    "{'type':'request','userid':0,'topic':'dws.create','msgid':%d,"
                    "'groupid':100,'now':%d,'payload':{'jobid':%lld,'userid':%d,"
                    "'resources':%s,'dw_directives':'%s','failure_tolerance':0}}",
                    msgid, NOW, id, uid, res, dw);
    free (res);
    return rc;
}

static bool workflow_created (long long id)
{
    char name[64];
    snprintf (name, sizeof (name), "fluxjob-%lld", id);
    return find ("action", "k8s", "op", "create", "kind", "Workflow", "name", name) != NULL;
}

/* DWS refuses a destroy_persistent of another user's PSI only at Teardown,
 * after the job ran, its epilog waiting out its timeout: refused at
 * dws.create instead, naming the owner, once the PSIs are listed. */
static void test_persistent_destroy (void)
{
    struct dws_engine *e = engine ("{'owner':0}");
    sync_none (e);
    create_as (e, 801, 1, 1000, "#DW destroy_persistent name=proj");
    ok (json_array_size (A) == 0,
        "destroy_persistent before the PSIs are listed: the create waits for the list");
    create_as (e, 802, 2, 1000, "#DW persistentdw name=proj");
    ok (workflow_created (802), "... a persistentdw does not wait (DWS judges it at once)");
    create_as (e, 803, 3, 0, "#DW destroy_persistent name=proj");
    create_as (e, 804, 4, 1001, "#DW destroy_persistent name=proj");
    create_as (e, 805, 5, 1000, "#DW destroy_persistent name=nosuch");
    create_as (e, 806, 6, 1000, "#DW destroy_persistent name=anon");
    ok (json_array_size (A) == 0, "... nor do the other destroys answer before it");

    feed (e, "{'type':'sync','kind':'PersistentStorageInstance','objects':[" PSI_OBJ (
                 "proj", "1001", "") "," PSI_OBJ ("anon", "1002", "")
             "],'owners':{'1001':'bob'}}");
    json_at (jp (respond_to (1), "payload", NULL),
             "{'success':false,'errstr':'only its owner may destroy persistent storage"
             " (#DW destroy_persistent): `proj` belongs to bob (uid 1001)'}",
             "the list come: another user's destroy_persistent refused, the owner named");
    ok (!workflow_created (801), "... and no Workflow made for it");
    json_at (jp (respond_to (3), "payload", "errstr", NULL),
             "'only its owner may destroy persistent storage (#DW destroy_persistent):"
             " `proj` belongs to bob (uid 1001)'",
             "the instance owner's too: DWS checks the Workflow's userID at Teardown");
    ok (!respond_to (4) && workflow_created (804), "the owner's own goes on to DWS");
    ok (!respond_to (5) && workflow_created (805),
        "an unknown name goes on (DWS takes a missing PSI as destroyed)");
    json_at (jp (respond_to (6), "payload", "errstr", NULL),
             "'only its owner may destroy persistent storage (#DW destroy_persistent):"
             " `anon` belongs to the user with uid 1002'",
             "an owner with no user name: the uid");
    ok (!find ("action", "raise"), "refused by the answer (the plugin raises dws-create)");

    create_as (e, 807, 7, 1000, "#DW destroy_persistent name=proj");
    ok (respond_to (7) && !workflow_created (807), "once listed, refused at once");
    feed (e, "{'type':'watch','kind':'PersistentStorageInstance','event':'MODIFIED','object':"
             PSI_OBJ ("proj", "1001", ",'annotations':{'dataworkflowservices.github.io/ignore-uid'"
                                      ":'true'}") "}");
    create_as (e, 808, 8, 1000, "#DW destroy_persistent name=proj");
    ok (respond_to (8) && !workflow_created (808), "shared, still its owner's to destroy");
    char buf[DWS_EXPLAIN_MAX];
    ok (dws_explain ("DWS workflow interactions failed: only its owner may destroy persistent"
                     " storage (#DW destroy_persistent): 'proj' belongs to bob (uid 1001)",
                     buf, sizeof (buf))
            && dws_explain_is ("only its owner may destroy persistent storage"
                               " (#DW destroy_persistent): 'p' belongs to bob (uid 1)",
                               "persistent-destroy-owner"),
        "the refusal has a sentence of its own: %s", buf);
    dws_engine_destroy (e);
}

/* A pre-staged job (doc/guide/prestage.rst) of persistent storage alone:
 * nothing to place, so no ssd to hold in Fluxion.  Set up and filled
 * before its nodes, it is let go with the one dependency method of the
 * waits the service owns (as dws-limit): dws-prestage removed.
 */
static void test_prestage_release (void)
{
    struct dws_engine *e = engine ("{'prestage':'always'}");
    long long id = 950;
    char extra[256];
    k8s_reset ();
    sync_none (e);
    sysconf (e);
    json_t *bd = jq ("{'kind':'DirectiveBreakdown','metadata':{'name':'fluxjob-950-0',"
                     "'namespace':'default'},'status':{'ready':true}}");
    snprintf (extra, sizeof (extra),
              "{'directiveBreakdowns':[{'name':'fluxjob-%lld-0','namespace':'default'}]}", id);
    ok (create_req (e, id, 1, 0, 1, "#DW persistentdw name=proj")
            && k8s_result (e, "create", id, true, 201, "", wf (id)) && complete (e, id, extra)
            && k8s_result (e, "breakdown", id, true, 200, "", bd),
        "prestage: a persistentdw job through Proposal, its breakdown read");
    k8s_result (e, "prestage", id, true, 200, "", wf (id));
    json_at (jp (find ("topic", "job-manager.dws.resource-update"), "payload", "prestage", NULL),
             "true", "prestage: its resources sent with prestage (the plugin adds dws-prestage)");
    has ("prestage: Setup asked, no nodes yet", "kind", "Workflow", "op", "patch", "body",
         "{\"spec\":{\"desiredState\":\"Setup\"}}");
    complete (e, id, NULL);
    has ("prestage: then DataIn", "kind", "Workflow", "op", "patch", "body",
         "{\"spec\":{\"desiredState\":\"DataIn\"}}");
    ok (!find ("topic", "job-manager.dws.dependency"), "prestage: still held until DataIn is done");
    complete (e, id, NULL);
    json_t *rel = has ("prestage: DataIn done: dws-prestage removed through the dependency method",
                       "topic", "job-manager.dws.dependency");
    char *p = rel ? json_dumps (json_object_get (rel, "payload"), JSON_COMPACT) : NULL;
    is (p, "{\"id\":950,\"name\":\"dws-prestage\",\"add\":false}",
        "... its payload {id, name, add}, as dws-limit's");
    free (p);
    ok (count ("action", "rpc") == 1 && !find ("topic", "job-manager.dws.prestage-remove"),
        "... and no prestage-remove (kept in the plugin for an older service)");
    /* the plugin reloaded asks again: the resources again (it holds
     * dws-prestage anew), then the removal again */
    create_req (e, id, 2, 0, 1, "#DW persistentdw name=proj");
    ok (find ("topic", "job-manager.dws.resource-update")
            && count ("topic", "job-manager.dws.dependency", "payload",
                      "{\"add\":false,\"id\":950,\"name\":\"dws-prestage\"}") == 1,
        "prestage: a repeated dws.create: resources, then dws-prestage removed again");
    json_decref (bd);
    dws_engine_destroy (e);
}

/* The machines beside the phase refuse a move their table lacks: logged,
 * naming the job, the machine and both values, the value kept. */
static void test_side_machines (void)
{
    struct dws_engine *e = engine (NULL);
    struct job *job = job_create (e, 4242);
    e->actions = json_array ();
    sidestate_setup (e, job, SETUP_PENDING);
    sidestate_setup (e, job, SETUP_WAITS_MAP);
    sidestate_prolog (e, job, PROLOG_ENDED);
    sidestate_epilog (e, job, EPILOG_ACTIVE);
    sidestate_epilog (e, job, EPILOG_REMOVED);
    sidestate_ssd (e, job, SSD_VERIFIED);
    sidestate_restage (e, job, RESTAGE_AGAIN);
    sidestate_prestage_stage (e, job, PRESTAGE_RECORDED);
    sidestate_prestage_stage (e, job, PRESTAGE_READY);
    ok (json_array_size (e->actions) == 0, "side machines: the moves their tables list, silent");
    sidestate_setup (e, job, SETUP_NONE);
    sidestate_setup (e, job, SETUP_WAITS_MAP);
    sidestate_prolog (e, job, PROLOG_HELD);
    sidestate_epilog (e, job, EPILOG_ACTIVE);
    sidestate_ssd (e, job, SSD_FINDING);
    sidestate_restage (e, job, RESTAGE_NONE);
    sidestate_prestage_stage (e, job, PRESTAGE_RECORDED);
    sidestate_prolog (e, job, PROLOG_ENDED);
    json_decref (A);
    A = e->actions;
    e->actions = NULL;
    const char *refused[] = {
        "fluxjob-4242: setup start none -> waits-map refused (not in its table)",
        "fluxjob-4242: prolog ended -> held refused (not in its table)",
        "fluxjob-4242: epilog removed -> active refused (not in its table)",
        "fluxjob-4242: ssd hold verified -> finding refused (not in its table)",
        "fluxjob-4242: re-staging again -> none refused (not in its table)",
        "fluxjob-4242: pre-staging ready -> recorded refused (not in its table)",
    };
    for (size_t i = 0; i < sizeof (refused) / sizeof (refused[0]); i++)
        has (refused[i], "action", "log", "level", "err", "message", refused[i]);
    ok (json_array_size (A) == 6, "... one line each; the same value again is no move");
    ok (job->setup == SETUP_NONE && job->prolog == PROLOG_ENDED && job->epilog == EPILOG_REMOVED
            && job->ps.ssd == SSD_VERIFIED && job->ps.restage == RESTAGE_AGAIN
            && job->ps.stage == PRESTAGE_READY,
        "... and each keeps its value");
    dws_engine_destroy (e);
}

int main (void)
{
    K8S = json_object ();
    test_config ();
    test_requests ();
    test_credentials ();
    test_sysconfig ();
    test_lifecycle ();
    test_datain_read_every ();
    test_error ();
    test_tc ();
    test_timers ();
    test_abort ();
    test_abort_teardown_race ();
    test_more ();
    test_no_fluxion ();
    test_teardown_reads ();
    test_rebuild ();
    test_vanish ();
    test_orphans ();
    test_orphans_limit ();
    test_adopt_account ();
    test_orphans_ended ();
    test_orphans_persistent ();
    test_orphans_refused ();
    test_recreate_checks ();
    test_malformed ();
    test_status_json ();
    test_jobview ();
    test_release ();
    test_persistent ();
    test_persistent_destroy ();
    test_prestage_release ();
    test_side_machines ();
    ok (acted_again == 0 && looked_again > 0,
        "every job looked at again after each event takes no step (%d looks, %d acted)",
        looked_again, acted_again);
    json_decref (last_sysconf);
    json_decref (A);
    json_decref (K8S);
    rules_write ();
    return done_testing ();
}
