/* pending.c - the engine's requests that wait (engine/shapes/pending.h), seen
 * through the engine's API: each answered once by its token, a stale
 * answer dropped, an answer of the wrong kind of event logged, a token
 * that is none refused with its text and nothing changed; requests
 * before a list they need wait for it, each for its own.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "engine/engine.h"
#include "tap.h"

#define NOW 1700000000
#define SYSCONF                                                                                \
    "{'type':'sync','kind':'SystemConfiguration','objects':[{'metadata':"                     \
    "{'name':'default'},'spec':{'storageNodes':["                                              \
    "{'type':'Rabbit','name':'rabbit1','computesAccess':[{'name':'c1'}]}]}}]}"
#define PSI_PROJ                                                                               \
    "{'metadata':{'name':'proj','resourceVersion':'7'},'spec':{'name':'proj','fsType':"       \
    "'lustre','userID':1000,'state':'Active','dwDirective':'#DW create_persistent "          \
    "type=lustre capacity=1TiB name=proj'},'status':{'state':'Active'}}"

static json_t *A;      /* the actions of the last event */
static char errtext[DWS_ERROR_TEXT_MAX];

/* Feed an event written with ' for " (printf-style); false when refused. */
__attribute__ ((format (printf, 2, 3)))
static bool feed (struct dws_engine *e, const char *fmt, ...)
{
    char text[4096];
    va_list ap;
    dws_error_t err;
    va_start (ap, fmt);
    vsnprintf (text, sizeof (text), fmt, ap);
    va_end (ap);
    for (char *p = text; *p; p++)
        if (*p == '\'')
            *p = '"';
    json_t *ev = json_loads (text, 0, NULL);
    if (!ev) {
        printf ("Bail out! bad test JSON: %s\n", text);
        exit (1);
    }
    if (!json_object_get (ev, "now"))
        json_object_set_new (ev, "now", json_integer (NOW));
    json_decref (A);
    A = dws_engine_event (e, ev, &err);
    json_decref (ev);
    errtext[0] = '\0';
    if (!A)
        snprintf (errtext, sizeof (errtext), "%s", err.text);
    return A != NULL;
}

/* The first action of the last event with field == value, or NULL. */
static json_t *find (const char *field, const char *value)
{
    size_t i;
    json_t *a;
    json_array_foreach (A, i, a) {
        const char *v = json_string_value (json_object_get (a, field));
        if (v && !strcmp (v, value))
            return a;
    }
    return NULL;
}

static json_t *respond_to (int msgid)
{
    size_t i;
    json_t *a;
    json_array_foreach (A, i, a) {
        const char *act = json_string_value (json_object_get (a, "action"));
        if (act && !strncmp (act, "respond", 7)
            && json_integer_value (json_object_get (a, "msgid")) == msgid)
            return a;
    }
    return NULL;
}

static bool logged (const char *message)
{
    size_t i;
    json_t *a;
    json_array_foreach (A, i, a) {
        const char *m = json_string_value (json_object_get (a, "message"));
        if (m && !strcmp (m, message))
            return true;
    }
    return false;
}

/* The token of the last event's first k8s action (a copy in buf). */
static const char *token_of_k8s (char *buf, size_t len)
{
    const char *t = json_string_value (json_object_get (find ("action", "k8s"), "token"));
    snprintf (buf, len, "%s", t ? t : "");
    return buf;
}

static char *status_text (struct dws_engine *e)
{
    json_t *s = dws_engine_status (e);
    json_object_del (s, "events"); /* counts every event fed */
    char *text = json_dumps (s, JSON_SORT_KEYS | JSON_COMPACT);
    json_decref (s);
    return text;
}

/* A token that is none: the event is refused naming it, nothing changes. */
static void refused (struct dws_engine *e, const char *type, const char *token)
{
    char want[512];
    char *before = status_text (e);
    snprintf (want, sizeof (want), "unknown token '%s'", token);
    bool r = feed (e, "{'type':'%s','token':'%s','ok':true,'code':200,'object':{}}", type,
                   token);
    char *after = status_text (e);
    ok (!r && !strcmp (errtext, want) && !strcmp (before, after), "%s '%s' refused: %s", type,
        token, r ? "accepted" : errtext);
    free (before);
    free (after);
}

static struct dws_engine *engine (void)
{
    dws_error_t err;
    struct dws_engine *e = dws_engine_create_json ("{\"owner\":0}", &err);
    if (!e) {
        printf ("Bail out! %s\n", err.text);
        exit (1);
    }
    return e;
}

static void test_df (void)
{
    struct dws_engine *e = engine ();
    char tok[320], bad[340];
    feed (e, "{'type':'request','userid':0,'topic':'dws.rabbits','msgid':7,"
             "'payload':{'df':true}}");
    token_of_k8s (tok, sizeof (tok));
    ok (strncmp (tok, "df:", 3) == 0 && !respond_to (7), "df: the Servers listed (%s)", tok);

    feed (e, "{'type':'rpc-result','token':'%s','ok':true}", tok);
    char want[400];
    snprintf (want, sizeof (want), "unexpected rpc-result for token '%s'", tok);
    ok (logged (want) && !respond_to (7), "an rpc-result for a k8s token: logged, not taken");

    snprintf (bad, sizeof (bad), "%sx", tok);
    refused (e, "k8s-result", bad);

    feed (e, "{'type':'k8s-result','token':'%s','ok':true,'code':200,'object':{'items':[]}}",
          tok);
    ok (json_is_true (json_object_get (json_object_get (respond_to (7), "payload"), "success")),
        "its answer answers the request");
    feed (e, "{'type':'k8s-result','token':'%s','ok':true,'code':200,'object':{'items':[]}}",
          tok);
    ok (json_array_size (A) == 0, "the same answer again (stale): dropped, nothing done");
    feed (e, "{'type':'k8s-result','token':'df:999','ok':true,'code':200,'object':{}}");
    ok (json_array_size (A) == 0, "an answer to a request never made: dropped");
    dws_engine_destroy (e);
}

static void test_drain (void)
{
    struct dws_engine *e = engine ();
    char tok[320], other[340];
    feed (e, SYSCONF);
    feed (e, "{'type':'request','userid':0,'topic':'dws.drain','msgid':8,"
             "'payload':{'rabbits':'rabbit1','reason':'bad drive'}}");
    token_of_k8s (tok, sizeof (tok));
    ok (strncmp (tok, "drain:", 6) == 0 && strstr (tok, ":storage:rabbit1"),
        "drain: the Storage annotated (%s)", tok);
    long seq = strtol (tok + 6, NULL, 10);

    snprintf (other, sizeof (other), "df:%ld", seq);
    feed (e, "{'type':'k8s-result','token':'%s','ok':true,'code':200,'object':{'items':[]}}",
          other);
    ok (json_array_size (A) == 0, "another kind's token of its number: not its answer, dropped");

    feed (e, "{'type':'k8s-result','token':'%s','ok':true,'code':200,'object':{}}", tok);
    token_of_k8s (tok, sizeof (tok));
    ok (strstr (tok, ":node:rabbit1") != NULL, "... then its Node read (%s)", tok);

    snprintf (other, sizeof (other), "drain:%ld:bogus:rabbit1", seq);
    refused (e, "k8s-result", other);
    ok (!respond_to (8), "... a step no drain has does not end its chain");
    snprintf (other, sizeof (other), "drain:%ld:node:", seq);
    refused (e, "k8s-result", other);

    feed (e, "{'type':'k8s-result','token':'%s','ok':true,'code':200,'object':{'spec':{}}}",
          tok);
    token_of_k8s (tok, sizeof (tok));
    ok (strstr (tok, ":taint:rabbit1") != NULL && !respond_to (8), "... then tainted (%s)",
        tok);
    feed (e, "{'type':'k8s-result','token':'%s','ok':true,'code':200,'object':{}}", tok);
    ok (json_is_true (json_object_get (json_object_get (respond_to (8), "payload"), "success")),
        "the last step's answer answers the request");
    feed (e, "{'type':'k8s-result','token':'%s','ok':true,'code':200,'object':{}}", tok);
    ok (json_array_size (A) == 0, "the same answer again (stale): dropped, nothing done");
    feed (e, "{'type':'job-info','token':'%s','ok':true}", tok);
    ok (json_array_size (A) == 0, "... as a job-info event too");
    dws_engine_destroy (e);
}

static void test_persistent (void)
{
    struct dws_engine *e = engine ();
    char tok[320];
    feed (e, "{'type':'sync','kind':'PersistentStorageInstance','objects':[" PSI_PROJ "],"
             "'owners':{}}");
    feed (e, "{'type':'request','userid':1000,'topic':'dws.persistent-share','msgid':9,"
             "'payload':{'name':'proj'}}");
    token_of_k8s (tok, sizeof (tok));
    ok (!strncmp (tok, "persistent-share:", 17), "share: the PSI patched (%s)", tok);
    feed (e, "{'type':'k8s-result','token':'%s','ok':true,'code':200,'object':{}}", tok);
    ok (json_is_true (json_object_get (json_object_get (respond_to (9), "payload"), "changed")),
        "its answer answers the request");
    feed (e, "{'type':'k8s-result','token':'%s','ok':false,'code':409,'message':'x'}", tok);
    ok (json_array_size (A) == 0, "a second answer (stale): dropped");
    refused (e, "k8s-result", "persistent-share:abc");
    dws_engine_destroy (e);
}

static void test_health (void)
{
    struct dws_engine *e = engine ();
    refused (e, "rpc-result", "health:abc");
    refused (e, "k8s-result", "health:");
    feed (e, "{'type':'rpc-result','token':'health:999','ok':true}");
    ok (json_array_size (A) == 0, "a health batch it does not have (stale): dropped");
    feed (e, "{'type':'job-info','token':'health:1','ok':true}");
    ok (logged ("unexpected job-info for token 'health:1'"),
        "a job-info event with a health token: logged");
    dws_engine_destroy (e);
}

/* Requests before a list they need wait for that list, each for its own,
 * and are answered in the order they came once it has come. */
static void test_deferred (void)
{
    struct dws_engine *e = engine ();
    feed (e, "{'type':'request','userid':0,'topic':'dws.post_run','msgid':1,"
             "'payload':{'jobid':77,'run_started':true}}");
    feed (e, "{'type':'request','userid':1000,'topic':'dws.persistent-list','msgid':2}");
    feed (e, "{'type':'request','userid':0,'topic':'dws.abort','msgid':3,"
             "'payload':{'jobid':78}}");
    ok (json_array_size (A) == 0, "before any list: nothing answered");
    feed (e, "{'type':'sync','kind':'PersistentStorageInstance','objects':[],'owners':{}}");
    ok (respond_to (2) && !respond_to (1) && !respond_to (3),
        "the PSI list: the request that waited for it, not those waiting for Workflows");
    feed (e, "{'type':'sync','kind':'Workflow','objects':[]}");
    ok (respond_to (1) && respond_to (3) && !respond_to (2),
        "the Workflow list: the two that waited for it");
    size_t i1 = 0, i3 = 0, i;
    json_t *a;
    json_array_foreach (A, i, a) {
        if (a == respond_to (1))
            i1 = i;
        if (a == respond_to (3))
            i3 = i;
    }
    ok (i1 < i3, "... in the order they came");
    dws_engine_destroy (e);
}

int main (void)
{
    test_df ();
    test_drain ();
    test_persistent ();
    test_health ();
    test_deferred ();
    json_decref (A);
    return done_testing ();
}
