/* rabbitdrain.c - dws.drain and dws.undrain (engine/views/rabbitdrain.h): the
 * writes a request makes, the answers that finish it, its refusals.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "engine/engine.h"
#include "tap.h"

#define OWNER 500
#define NOW 1700000000 /* 2023-11-14T22:13:20Z */
#define SYSCONF                                                                                \
    "{\"type\":\"sync\",\"kind\":\"SystemConfiguration\",\"objects\":[{\"metadata\":"          \
    "{\"name\":\"default\"},\"spec\":{\"storageNodes\":["                                       \
    "{\"type\":\"Rabbit\",\"name\":\"rabbit1\",\"computesAccess\":[{\"name\":\"c1\"}]},"       \
    "{\"type\":\"Rabbit\",\"name\":\"rabbit2\",\"computesAccess\":[{\"name\":\"c2\"}]}]}}]}"

static json_t *A; /* the actions of the last event */

static void feed (struct dws_engine *e, const char *text)
{
    dws_error_t err;
    json_error_t jerr;
    json_t *ev = json_loads (text, 0, &jerr);
    if (!ev) {
        printf ("Bail out! bad test JSON: %s\n", jerr.text);
        exit (1);
    }
    json_object_set_new (ev, "now", json_integer (NOW));
    json_decref (A);
    A = dws_engine_event (e, ev, &err);
    json_decref (ev);
    if (!A) {
        printf ("Bail out! event refused: %s\n", err.text);
        exit (1);
    }
}

static void request (struct dws_engine *e, const char *topic, int userid, const char *payload)
{
    char buf[1024];
    snprintf (buf, sizeof (buf),
              "{\"type\":\"request\",\"topic\":\"%s\",\"msgid\":7,\"userid\":%d,"
              "\"payload\":%s}",
              topic, userid, payload);
    feed (e, buf);
}

/* The actions of the last event named 'action', as compact sorted JSON, one
 * per line (the log lines left out). */
static char *only (const char *action)
{
    json_t *out = json_array ();
    size_t i;
    json_t *a;
    json_array_foreach (A, i, a) {
        if (!strcmp (json_string_value (json_object_get (a, "action")), action))
            json_array_append (out, a);
    }
    char *s = json_dumps (out, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref (out);
    return s;
}

static void only_is (const char *action, const char *want, const char *what)
{
    char *got = only (action);
    json_error_t jerr;
    json_t *w = json_loads (want, 0, &jerr);
    char *wants = w ? json_dumps (w, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    ok (wants && !strcmp (got, wants), "%s", what);
    if (!wants || strcmp (got, wants) != 0)
        diag ("got  %s\nwant %s", got, wants ? wants : want);
    free (got);
    free (wants);
    json_decref (w);
}

static void answer (struct dws_engine *e, const char *token, bool okay, const char *obj)
{
    char buf[1024];
    snprintf (buf, sizeof (buf),
              "{\"type\":\"k8s-result\",\"token\":\"%s\",\"ok\":%s,\"code\":%d%s%s%s}", token,
              okay ? "true" : "false", okay ? 200 : 404, obj ? ",\"object\":" : "",
              obj ? obj : "", okay ? "" : ",\"message\":\"nodes \\\"x\\\" not found\"");
    feed (e, buf);
}

static struct dws_engine *engine (void)
{
    dws_error_t err;
    struct dws_engine *e = dws_engine_create_json ("{\"owner\":500}", &err);
    if (!e) {
        printf ("Bail out! %s\n", err.text);
        exit (1);
    }
    feed (e, SYSCONF);
    return e;
}

#define ANN_DRAIN                                                                              \
    "\"body\":{\"metadata\":{\"annotations\":{\"drain_date\":\"2023-11-14T22:13:20Z\","        \
    "\"drain_reason\":\"bad drive\",\"flux-dws.io/drained-by\":\"500\"}}}}"
#define ANN_NULL                                                                               \
    "\"body\":{\"metadata\":{\"annotations\":{\"drain_date\":null,\"drain_reason\":null,"      \
    "\"flux-dws.io/drained-by\":null}}}}"
#define STORAGE(r, tok)                                                                        \
    "{\"action\":\"k8s\",\"op\":\"patch\",\"kind\":\"Storage\",\"namespace\":\"default\","     \
    "\"name\":\"" r "\",\"token\":\"" tok "\","
#define GET_NODE(r, tok)                                                                       \
    "{\"action\":\"k8s\",\"op\":\"get\",\"kind\":\"Node\",\"name\":\"" r "\",\"token\":\""   \
    tok "\"}"
#define TAINT_NS "{\"key\":\"cray.nnf.node.drain\",\"value\":\"true\",\"effect\":\"NoSchedule\"}"
#define TAINT_NE "{\"key\":\"cray.nnf.node.drain\",\"value\":\"true\",\"effect\":\"NoExecute\"}"

static void test_drain (void)
{
    struct dws_engine *e = engine ();
    request (e, "dws.drain", OWNER, "{\"rabbits\":\"rabbit[1-2]\",\"reason\":\"bad drive\"}");
    only_is ("k8s",
             "[" STORAGE ("rabbit1", "drain:1:storage:rabbit1") ANN_DRAIN ","
             STORAGE ("rabbit2", "drain:1:storage:rabbit2") ANN_DRAIN "]",
             "a drain first annotates each Storage, as the nnf CLI does");
    only_is ("respond", "[]", "no answer yet");
    answer (e, "drain:1:storage:rabbit1", true, "{}");
    only_is ("k8s", "[" GET_NODE ("rabbit1", "drain:1:node:rabbit1") "]",
             "annotated: then the Node is read");
    answer (e, "drain:1:node:rabbit1", true,
            "{\"spec\":{\"taints\":[{\"key\":\"cray.nnf.node\",\"value\":\"true\","
            "\"effect\":\"NoSchedule\"}," TAINT_NS "]}}");
    only_is ("k8s",
             "[{\"action\":\"k8s\",\"op\":\"patch\",\"kind\":\"Node\",\"name\":\"rabbit1\","
             "\"token\":\"drain:1:taint:rabbit1\",\"body\":{\"spec\":{\"taints\":["
             "{\"key\":\"cray.nnf.node\",\"value\":\"true\",\"effect\":\"NoSchedule\"},"
             TAINT_NS "," TAINT_NE "]}}}]",
             "the Node read: its taints patched, other keys kept, the drain key once per effect");
    answer (e, "drain:1:taint:rabbit1", true, "{}");
    answer (e, "drain:1:storage:rabbit2", true, "{}");
    only_is ("respond", "[]", "no answer while a rabbit's writes are out");
    answer (e, "drain:1:node:rabbit2", true, "{\"spec\":{}}");
    only_is ("k8s",
             "[{\"action\":\"k8s\",\"op\":\"patch\",\"kind\":\"Node\",\"name\":\"rabbit2\","
             "\"token\":\"drain:1:taint:rabbit2\",\"body\":{\"spec\":{\"taints\":["
             TAINT_NS "," TAINT_NE "]}}}]",
             "a Node without taints gets the two");
    answer (e, "drain:1:taint:rabbit2", true, "{}");
    only_is ("respond",
             "[{\"action\":\"respond\",\"msgid\":7,\"payload\":{\"success\":true,"
             "\"rabbits\":[\"rabbit1\",\"rabbit2\"]}}]",
             "the last write answered: success");
    answer (e, "drain:1:taint:rabbit2", true, "{}");
    only_is ("respond", "[]", "a late answer is dropped");
    dws_engine_destroy (e);
}

static void test_rollback (void)
{
    struct dws_engine *e = engine ();
    request (e, "dws.drain", OWNER, "{\"rabbits\":\"rabbit1\",\"reason\":\"bad drive\"}");
    answer (e, "drain:1:storage:rabbit1", true, "{}");
    answer (e, "drain:1:node:rabbit1", false, NULL);
    only_is ("k8s", "[" STORAGE ("rabbit1", "drain:1:rollback:rabbit1") ANN_NULL "]",
             "no Node to taint: the annotations are taken back, as the nnf CLI does");
    only_is ("respond-error", "[]", "no answer before the rollback answered");
    answer (e, "drain:1:rollback:rabbit1", true, "{}");
    only_is ("respond-error",
             "[{\"action\":\"respond-error\",\"msgid\":7,\"errnum\":5,\"errstr\":"
             "\"dws.drain: rabbit rabbit1: reading its Kubernetes Node: not found;"
             " its drain annotations were taken back\"}]",
             "then EIO naming the rabbit and the write, and that the drain was undone");
    request (e, "dws.drain", OWNER, "{\"rabbits\":\"rabbit2\",\"reason\":\"bad drive\"}");
    answer (e, "drain:2:storage:rabbit2", false, NULL);
    only_is ("respond-error",
             "[{\"action\":\"respond-error\",\"msgid\":7,\"errnum\":5,\"errstr\":"
             "\"dws.drain: rabbit rabbit2: annotating its Storage: not found\"}]",
             "no Storage: nothing else is written");
    only_is ("k8s", "[]", "not even the Node");
    dws_engine_destroy (e);
}

/* A failed rollback is tried again; one that keeps failing is named. */
static void test_rollback_fails (void)
{
    struct dws_engine *e = engine ();
    request (e, "dws.drain", OWNER, "{\"rabbits\":\"rabbit1\",\"reason\":\"bad drive\"}");
    answer (e, "drain:1:storage:rabbit1", true, "{}");
    answer (e, "drain:1:node:rabbit1", true, "{\"spec\":{}}");
    feed (e, "{\"type\":\"k8s-result\",\"token\":\"drain:1:taint:rabbit1\",\"ok\":false,"
             "\"code\":403,\"message\":\"nodes \\\"rabbit1\\\" is forbidden\"}");
    only_is ("k8s", "[" STORAGE ("rabbit1", "drain:1:rollback:rabbit1") ANN_NULL "]",
             "the taint refused: the annotations are taken back");
    feed (e, "{\"type\":\"k8s-result\",\"token\":\"drain:1:rollback:rabbit1\",\"ok\":false,"
             "\"code\":409,\"message\":\"conflict\"}");
    only_is ("k8s", "[" STORAGE ("rabbit1", "drain:1:rollback:rabbit1") ANN_NULL "]",
             "the rollback failed: tried again");
    only_is ("log",
             "[{\"action\":\"log\",\"level\":\"warning\",\"message\":\"drain rabbit"
             " rabbit1: taking its drain annotations back failed (conflict); trying again\"}]",
             "... and the log says so, word for word");
    only_is ("respond-error", "[]", "... no answer meanwhile");
    answer (e, "drain:1:rollback:rabbit1", true, "{}");
    only_is ("respond-error",
             "[{\"action\":\"respond-error\",\"msgid\":7,\"errnum\":5,\"errstr\":"
             "\"dws.drain: rabbit rabbit1: tainting its Kubernetes Node: nodes \\\"rabbit1\\\" is"
             " forbidden; its drain annotations were taken back\"}]",
             "the second try took them back: the answer says so");

    request (e, "dws.drain", OWNER, "{\"rabbits\":\"rabbit2\",\"reason\":\"bad drive\"}");
    answer (e, "drain:2:storage:rabbit2", true, "{}");
    answer (e, "drain:2:node:rabbit2", false, NULL);
    for (int i = 1; i <= 3; i++) {
        feed (e, "{\"type\":\"k8s-result\",\"token\":\"drain:2:rollback:rabbit2\","
                 "\"ok\":false,\"code\":500,\"message\":\"etcd is down\"}");
        if (i < 3)
            only_is ("k8s", "[" STORAGE ("rabbit2", "drain:2:rollback:rabbit2") ANN_NULL "]",
                     "a failed rollback is tried again, up to three times");
    }
    only_is ("k8s", "[]", "three tries: no fourth");
    only_is ("respond-error",
             "[{\"action\":\"respond-error\",\"msgid\":7,\"errnum\":5,\"errstr\":"
             "\"dws.drain: rabbit rabbit2: reading its Kubernetes Node: not found; taking its"
             " drain annotations back failed 3 times (etcd is down): its Storage says drained,"
             " its Node is not tainted; 'flux dws undrain rabbit2' clears them\"}]",
             "a rabbit left half-drained is named, with what clears it");
    request (e, "dws.drain", OWNER, "{\"rabbits\":\"rabbit1\",\"reason\":\"bad drive\"}");
    answer (e, "drain:3:storage:rabbit1", true, "{}");
    answer (e, "drain:3:node:rabbit1", false, NULL);
    answer (e, "drain:3:rollback:rabbit1", false, NULL);
    only_is ("respond-error",
             "[{\"action\":\"respond-error\",\"msgid\":7,\"errnum\":5,\"errstr\":"
             "\"dws.drain: rabbit rabbit1: reading its Kubernetes Node: not found;"
             " its drain annotations were taken back\"}]",
             "a Storage gone under the rollback: nothing of the drain is left");
    dws_engine_destroy (e);
}

static void test_undrain_and_failure (void)
{
    struct dws_engine *e = engine ();
    request (e, "dws.undrain", OWNER, "{\"rabbits\":\"rabbit2\"}");
    only_is ("k8s", "[" GET_NODE ("rabbit2", "drain:1:node:rabbit2") "]",
             "an undrain first reads the Node");
    answer (e, "drain:1:node:rabbit2", true,
            "{\"spec\":{\"taints\":[{\"key\":\"cray.nnf.node.drain\",\"effect\":\"NoSchedule\"},"
            "{\"key\":\"cray.nnf.node.drain.csi\",\"effect\":\"NoSchedule\"}]}}");
    only_is ("k8s",
             "[{\"action\":\"k8s\",\"op\":\"patch\",\"kind\":\"Node\",\"name\":\"rabbit2\","
             "\"token\":\"drain:1:taint:rabbit2\",\"body\":{\"spec\":{\"taints\":["
             "{\"key\":\"cray.nnf.node.drain.csi\",\"effect\":\"NoSchedule\"}]}}}]",
             "only the nnf CLI's key goes, as its undrain does");
    answer (e, "drain:1:taint:rabbit2", true, "{}");
    only_is ("k8s", "[" STORAGE ("rabbit2", "drain:1:unannotate:rabbit2") ANN_NULL "]",
             "untainted: then the annotations go");
    answer (e, "drain:1:unannotate:rabbit2", false, NULL);
    only_is ("respond-error",
             "[{\"action\":\"respond-error\",\"msgid\":7,\"errnum\":5,\"errstr\":"
             "\"dws.undrain: rabbit rabbit2: removing its Storage's drain annotations:"
             " not found\"}]",
             "a failed write: EIO naming the rabbit and the write");
    request (e, "dws.undrain", OWNER, "{\"rabbits\":\"rabbit1\"}");
    answer (e, "drain:2:node:rabbit1", true, "{\"spec\":{\"taints\":[{\"key\":"
                                             "\"cray.nnf.node.drain\",\"effect\":\"NoExecute\"}]}}");
    only_is ("k8s",
             "[{\"action\":\"k8s\",\"op\":\"patch\",\"kind\":\"Node\",\"name\":\"rabbit1\","
             "\"token\":\"drain:2:taint:rabbit1\",\"body\":{\"spec\":{\"taints\":null}}}]",
             "no taint left: null, as the nnf CLI sends");
    dws_engine_destroy (e);
}

static void refused (struct dws_engine *e, const char *topic, int userid, const char *payload,
                     int errnum, const char *errstr)
{
    request (e, topic, userid, payload);
    json_t *a = json_array_get (A, 0);
    const char *got = json_string_value (json_object_get (a, "errstr"));
    ok (json_array_size (A) == 1 && json_integer_value (json_object_get (a, "errnum")) == errnum
            && got && !strcmp (got, errstr),
        "%s %s: %s", topic, payload, errstr);
    if (!got || strcmp (got, errstr) != 0)
        diag ("got %s", got ? got : "(none)");
}

static void test_refusals (void)
{
    struct dws_engine *e = engine ();
    refused (e, "dws.drain", 501, "{\"rabbits\":\"rabbit1\",\"reason\":\"x\"}", EPERM,
             "Request requires owner credentials");
    refused (e, "dws.undrain", 501, "{\"rabbits\":\"rabbit1\"}", EPERM,
             "Request requires owner credentials");
    refused (e, "dws.drain", OWNER, "{\"rabbits\":\"nosuch\",\"reason\":\"x\"}", EINVAL,
             "dws.drain: unknown rabbit: nosuch");
    refused (e, "dws.drain", OWNER, "{\"rabbits\":\"rabbit[1-3],x[1-2]\",\"reason\":\"x\"}",
             EINVAL, "dws.drain: unknown rabbits: rabbit3,x[1-2]");
    refused (e, "dws.drain", OWNER, "{\"rabbits\":\"rabbit[1-\",\"reason\":\"x\"}", EINVAL,
             "dws.drain: rabbits: unbalanced brackets in 'rabbit[1-'");
    refused (e, "dws.drain", OWNER, "{\"rabbits\":7,\"reason\":\"x\"}", EINVAL,
             "dws.drain: rabbits must be a hostlist of rabbits");
    refused (e, "dws.drain", OWNER, "{\"rabbits\":\"rabbit1\"}", EINVAL,
             "dws.drain: reason must be one line of 1 to 200 characters, not blank");
    refused (e, "dws.drain", OWNER, "{\"rabbits\":\"rabbit1\",\"reason\":\"a\\tb\"}", EINVAL,
             "dws.drain: reason must be one line of 1 to 200 characters, not blank");
    refused (e, "dws.drain", OWNER, "{\"rabbits\":\"rabbit1\",\"reason\":\"   \"}", EINVAL,
             "dws.drain: reason must be one line of 1 to 200 characters, not blank");
    refused (e, "dws.undrain", OWNER, "{\"rabbits\":\"rabbit1\",\"reason\":\"x\"}", EINVAL,
             "dws.undrain: an undrain takes no reason");
    dws_engine_destroy (e);

    dws_error_t err;
    e = dws_engine_create_json ("{\"owner\":500}", &err);
    refused (e, "dws.drain", OWNER, "{\"rabbits\":\"rabbit1\",\"reason\":\"x\"}", EINVAL,
             "dws.drain: no rabbits known yet (no SystemConfiguration)");
    dws_engine_destroy (e);
}

int main (void)
{
    test_drain ();
    test_rollback ();
    test_rollback_fails ();
    test_undrain_and_failure ();
    test_refusals ();
    json_decref (A);
    return done_testing ();
}
