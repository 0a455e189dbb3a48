/* SPDX-License-Identifier: LGPL-3.0-or-later */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "jobtap/schedhold.h"
#include "jsontap.h"

/* JSON written with single quotes. */
static char *q (const char *s)
{
    char *out = strdup (s);
    for (char *o = out; o && *o; o++)
        if (*o == '\'')
            *o = '"';
    return out;
}

/* Feed one event (JSON text, single quotes) at time now; the actions must
 * be `expect` (JSON text) or, for a refused event, the error text.
 */
static void feed_is (struct dws_schedhold *s, const char *event, double now,
                     const char *expect, const char *what)
{
    dws_error_t err = {{0}};
    char *ev = event[0] == '{' ? q (event) : strdup (event);
    char *ex = expect[0] == '[' ? q (expect) : strdup (expect);
    char *got = dws_schedhold_event_json (s, ev, now, &err);
    json_dump_is (got, ex, err.text, JSON_SORT_KEYS, what);
    free (ev);
    free (ex);
}

#define WAIT_SERVICE "waiting for the dws service to apply rabbit health to the scheduler"
#define HOLD_LOG "{'action':'log','level':'info','message':'holding rabbit jobs in PRIORITY: "
#define WAIT_START "waiting for the dws service to start"
#define POLL "{'action':'poll'}"
#define ARM "{'action':'arm','seconds':1.0}"

/* After a restart: held until the service is ready, then let go. */
static void test_restart (void)
{
    struct dws_schedhold *s = dws_schedhold_create (60);

    feed_is (s, "{'type':'priority','id':1,'nnodes':1}", 0.,
             "[{'action':'hold','reason':'" WAIT_SERVICE "'},"
             POLL "," ARM "]",
             "the first rabbit job is held, a poll goes out, the timer is armed");
    feed_is (s, "{'type':'priority','id':2,'nnodes':2}", 0.1,
             "[{'action':'hold','reason':'" WAIT_SERVICE "'}]",
             "a second one is held: the poll in flight and the timer serve it too");
    ok (dws_schedhold_held (s) == 2 && dws_schedhold_is_held (s, 1)
        && !dws_schedhold_is_held (s, 3), "two held");
    feed_is (s, "{'type':'ready','service':'none','scheduler':'fluxion','nodes_up':null}", 0.2,
             "[" HOLD_LOG WAIT_START "'}]",
             "no service yet: both stay, and the log says so once");
    feed_is (s, "{'type':'tick'}", 1.0, "[" POLL "," ARM "]", "the tick asks again");
    feed_is (s, "{'type':'ready','service':'ready','scheduler':'fluxion','nodes_up':1}", 1.1,
             "[{'action':'release','id':1}]", "ready with 1 node up: the 1-node job goes");
    feed_is (s, "{'type':'priority','id':3,'nnodes':2}", 1.2,
             "[{'action':'hold','reason':'waiting for 2 nodes up in Fluxion (1 up)'}," POLL "]",
             "a new 2-node job waits for its nodes: asked at once (the timer is armed)");
    feed_is (s, "{'type':'tick'}", 2.0, "[" ARM "]", "the poll is in flight: only the timer");
    feed_is (s, "{'type':'ready','service':'starting','scheduler':'fluxion','nodes_up':4}", 2.1,
             "[{'action':'release','id':2},{'action':'release','id':3},"
             "{'action':'log','level':'info','message':"
             "'rabbit jobs held in PRIORITY: all 2 given to the scheduler'}]",
             "4 nodes up: the rest go (the service once ready stays so)");
    feed_is (s, "{'type':'tick'}", 3.0, "[]", "nothing held: no more polls");
    feed_is (s, "{'type':'priority','id':4,'nnodes':4}", 3.1, "[]",
             "ready and nodes enough: a job passes without a question");
    ok (dws_schedhold_held (s) == 0, "none held");
    dws_schedhold_destroy (s);
}

/* No Fluxion (nodes unknown): the service alone decides. */
static void test_no_fluxion (void)
{
    struct dws_schedhold *s = dws_schedhold_create (60);
    feed_is (s, "{'type':'ready','service':'ready','scheduler':'none','nodes_up':null}", 0., "[]", "ready at load");
    feed_is (s, "{'type':'priority','id':7,'nnodes':100}", 0.1, "[]",
             "nodes unknown: the job passes");
    dws_schedhold_destroy (s);
}

/* Held past the timeout: let go with a warning, whatever the polls say. */
static void test_timeout (void)
{
    struct dws_schedhold *s = dws_schedhold_create (5);
    feed_is (s, "{'type':'priority','id':1,'nnodes':1}", 0.,
             "[{'action':'hold','reason':'" WAIT_SERVICE "'},"
             POLL "," ARM "]", "held");
    feed_is (s, "{'type':'tick'}", 1.0, "[" ARM "]", "a poll still in flight: not sent twice");
    feed_is (s, "{'type':'priority','id':2,'nnodes':1}", 3.0,
             "[{'action':'hold','reason':'" WAIT_SERVICE "'}]", "a second, later");
    feed_is (s, "{'type':'ready','service':'starting','scheduler':'fluxion'}", 4.0,
             "[" HOLD_LOG WAIT_SERVICE "'}]", "the service not ready: the log says so once");
    feed_is (s, "{'type':'tick'}", 5.5,
             "[{'action':'log','level':'warning','message':'job 1: held 6s (" WAIT_SERVICE
             "): giving it to the scheduler anyway'},{'action':'release','id':1}," POLL "," ARM
             "]",
             "the first is let go at its timeout, the second is still held");
    feed_is (s, "{'type':'leave','id':2}", 6.0, "[]", "the second is canceled");
    feed_is (s, "{'type':'tick'}", 9.0, "[]", "nothing left: no poll, no timer");
    dws_schedhold_destroy (s);
}

/* A plugin loaded over a job in PRIORITY (held by the plugin before). */
static void test_loaded (void)
{
    struct dws_schedhold *s = dws_schedhold_create (60);
    feed_is (s, "{'type':'ready','service':'ready','scheduler':'fluxion','nodes_up':2}", 0., "[]", "ready");
    feed_is (s, "{'type':'priority','id':5,'nnodes':1,'loaded':true}", 0.1,
             "[{'action':'release','id':5}]", "found in PRIORITY at load: let go");
    feed_is (s, "{'type':'priority','id':6,'nnodes':1,'loaded':false}", 0.2, "[]",
             "from the callback: it just goes");
    dws_schedhold_destroy (s);
}

/* A dws service that does not serve dws.ready (flux-coral2's, an older
 * flux-dws, a test's stand-in): no hold, as before the hold existed. */
static void test_other_service (void)
{
    struct dws_schedhold *s = dws_schedhold_create (60);
    feed_is (s, "{'type':'ready','service':'other','scheduler':'fluxion','nodes_up':1}", 0.,
             "[]", "found at load");
    feed_is (s, "{'type':'priority','id':1,'nnodes':4}", 0.1, "[]",
             "a job passes, even with fewer nodes up than it asks for");
    ok (dws_schedhold_held (s) == 0, "none held");
    dws_schedhold_destroy (s);

    /* the instance started before the service: held for it, then let go */
    s = dws_schedhold_create (60);
    feed_is (s, "{'type':'ready','service':'none','scheduler':'none','nodes_up':null}", 0.,
             "[]", "nothing registered at load");
    feed_is (s, "{'type':'priority','id':2,'nnodes':1}", 1.,
             "[{'action':'hold','reason':'" WAIT_START "'},"
             POLL "," ARM "]",
             "no service: held for one, asked at once");
    feed_is (s, "{'type':'ready','service':'other','scheduler':'other','nodes_up':null}", 1.01,
             "[{'action':'release','id':2}]",
             "a service without dws.ready: let go at once (no log for a hold of one poll)");
    feed_is (s, "{'type':'tick'}", 2.0, "[]", "nothing held: no more polls");
    dws_schedhold_destroy (s);
}

/* A scheduler that is not Fluxion (sched-simple): no hold, whatever our
 * service says (it waits for Fluxion's graph to call itself ready). */
static void test_other_scheduler (void)
{
    struct dws_schedhold *s = dws_schedhold_create (60);
    feed_is (s, "{'type':'priority','id':1,'nnodes':1}", 0.,
             "[{'action':'hold','reason':'" WAIT_SERVICE "'},"
             POLL "," ARM "]",
             "before the first poll's answer: held for it");
    feed_is (s, "{'type':'ready','service':'starting','scheduler':'other','nodes_up':null}", 0.01,
             "[{'action':'release','id':1}]",
             "sched-simple: let go though the service is not ready, without a log");
    feed_is (s, "{'type':'priority','id':2,'nnodes':100}", 0.1, "[]", "later jobs pass");
    /* the scheduler replaced by Fluxion (a module reload): our service's
     * word counts again at the next poll */
    feed_is (s, "{'type':'ready','service':'starting','scheduler':'fluxion','nodes_up':0}", 0.2,
             "[]", "Fluxion now");
    feed_is (s, "{'type':'priority','id':3,'nnodes':1}", 0.3,
             "[{'action':'hold','reason':'" WAIT_SERVICE "'},"
             POLL "]",
             "with Fluxion and our service not ready: held (the timer still armed)");
    dws_schedhold_destroy (s);
}

static void test_words (void)
{
    ok (dws_schedhold_no_service (ENOSYS, "No service matching dws.ready is registered"),
        "the broker's ENOSYS: no service");
    ok (!dws_schedhold_no_service (ENOSYS, "Unknown service method 'dws.ready'"),
        "the service's ENOSYS: a service");
    ok (!dws_schedhold_no_service (ENOSYS, NULL), "ENOSYS without text: a service");
    ok (!dws_schedhold_no_service (EPERM, "No service matching dws.ready is registered"),
        "another errnum: a service");
    is (dws_schedhold_service_word (0, NULL, true), "ready", "answered true");
    is (dws_schedhold_service_word (0, NULL, false), "starting", "answered false");
    is (dws_schedhold_service_word (ENOSYS, "No service matching dws.ready is registered",
                                    false), "none", "none registered");
    is (dws_schedhold_service_word (ENOSYS, "Unknown service method 'dws.ready'", false),
        "other", "a service without the method");
    is (dws_schedhold_service_word (ENOSYS, "unknown dws method", false), "other",
        "an older flux-dws");
    is (dws_schedhold_service_word (ETIMEDOUT, NULL, false), "starting", "no answer yet");
    is (dws_schedhold_service_word (EPROTO, NULL, false), "starting", "an answer not ours");
}

static void test_bad_events (void)
{
    struct dws_schedhold *s = dws_schedhold_create (0); /* the default */
    feed_is (s, "not json", 0., "the event is not JSON: invalid token near 'not'", "not JSON");
    feed_is (s, "{'id':1}", 0., "a schedhold event must be an object with a type", "no type");
    feed_is (s, "{'type':'later'}", 0., "unknown schedhold event type 'later'", "unknown type");
    feed_is (s, "{'type':'priority','id':-1,'nnodes':1}", 0.,
             "schedhold event: 'id' must be a job id (an integer >= 0)", "bad id");
    feed_is (s, "{'type':'priority','id':1,'nnodes':'two'}", 0.,
             "schedhold priority: 'nnodes' must be an integer >= 0", "bad nnodes");
    feed_is (s, "{'type':'priority','id':1,'nnodes':1,'loaded':1}", 0.,
             "schedhold priority: 'loaded' must be a boolean", "bad loaded");
    feed_is (s, "{'type':'ready','ready':true}", 0.,
             "schedhold ready: 'service' must be one of none, starting, ready, other",
             "no service word");
    feed_is (s, "{'type':'ready','service':'up','scheduler':'fluxion'}", 0.,
             "schedhold ready: 'service' must be one of none, starting, ready, other",
             "bad service word");
    feed_is (s, "{'type':'ready','service':'ready','scheduler':'sched-simple'}", 0.,
             "schedhold ready: 'scheduler' must be one of none, fluxion, other",
             "bad scheduler word");
    feed_is (s, "{'type':'ready','service':'ready','scheduler':'fluxion','nodes_up':-3}", 0.,
             "schedhold ready: 'nodes_up' must be an integer >= 0 or null", "bad nodes_up");
    feed_is (s, "{'type':'leave'}", 0.,
             "schedhold event: 'id' must be a job id (an integer >= 0)", "leave without id");
    ok (dws_schedhold_held (s) == 0, "bad events change nothing");
    dws_schedhold_destroy (s);
}

static void nnodes_is (const char *resources, long long expect, const char *what)
{
    dws_error_t err = {{0}};
    char *text = q (resources);
    json_t *r = json_loads (text, 0, NULL);
    long long got = (long long)dws_schedhold_nnodes (r, &err);
    if (expect < 0)
        is (got < 0 ? err.text : "no error", "resources must be an array", "%s", what);
    else
        ok (got == expect, "%s: %lld nodes (got %lld: %s)", what, expect, got, err.text);
    json_decref (r);
    free (text);
}

static void test_nnodes (void)
{
    nnodes_is ("[{'type':'node','count':4,'with':[{'type':'slot','count':1,'with':"
               "[{'type':'core','count':1}]}]}]",
               4, "node form");
    nnodes_is ("[{'type':'slot','count':3,'label':'rabbit','with':[{'type':'node','count':1,"
               "'with':[{'type':'slot','count':1,'with':[{'type':'core','count':1}]}]},"
               "{'type':'ssd','count':10}]}]",
               3, "rewritten node-local form (slot of node and ssd)");
    nnodes_is ("[{'type':'chassis','count':2,'with':[{'type':'node','count':4},"
               "{'type':'ssd','count':100}]}]",
               8, "chassis form");
    nnodes_is ("[{'type':'node','count':{'min':2,'max':4}}]", 2, "a range counts its min");
    nnodes_is ("[{'type':'slot','count':4,'with':[{'type':'core','count':2}]}]", 0,
               "cores only: no node");
    nnodes_is ("[{'type':'node','count':2},{'type':'ssd','count':5}]", 2,
               "Lustre spread: node beside ssd");
    nnodes_is ("{'type':'node'}", -1, "not an array");

    dws_error_t err = {{0}};
    json_t *r = json_loads ("[{\"type\":\"node\"}]", 0, NULL);
    ok (dws_schedhold_nnodes (r, &err) < 0
        && !strcmp (err.text, "a resource's count must be an integer or a range with a min"),
        "no count: %s", err.text);
    json_decref (r);
}

static void nodes_up_is (const char *answer, long long expect, const char *experr,
                         const char *what)
{
    dws_error_t err = {{0}};
    char *text = q (answer);
    json_t *a = json_loads (text, 0, NULL);
    long long got = (long long)dws_schedhold_nodes_up (a, &err);
    if (experr)
        is (got < 0 ? err.text : "no error", experr, "%s", what);
    else
        ok (got == expect, "%s: %lld (got %lld: %s)", what, expect, got, err.text);
    json_decref (a);
    free (text);
}

static void test_nodes_up (void)
{
    nodes_up_is ("{'R':{'version':1,'execution':{'R_lite':[{'rank':'0-3','children':"
                 "{'core':'0-1'}},{'rank':'2,5','children':{'core':'0'}}]}}}",
                 5, NULL, "ranks of R_lite, each counted once");
    nodes_up_is ("{'R':null}", 0, NULL, "nothing up");
    nodes_up_is ("{'R':{'version':1,'execution':{}}}", 0,
                 "Fluxion's find answer has no R.execution.R_lite array", "no R_lite");
    nodes_up_is ("{'R':{'version':1,'execution':{'R_lite':[{'children':{}}]}}}", 0,
                 "Fluxion's find answer: R_lite[0] has no rank idset", "no rank");
    nodes_up_is ("[1]", 0, "Fluxion's find answer is not an object", "not an object");
}

static void test_conf (void)
{
    dws_error_t err = {{0}};
    double t = 0;
    bool on = false;
    json_t *c = json_pack ("{s:f}", "sched-hold-timeout", 30.5);
    ok (dws_schedhold_conf (c, &on, &t, &err) == 0 && t == 30.5 && on,
        "sched-hold-timeout read; the hold on");
    json_decref (c);
    ok (dws_schedhold_conf (NULL, &on, &t, &err) == 0 && t == DWS_SCHEDHOLD_TIMEOUT && on,
        "no conf: the defaults");
    c = json_pack ("{s:b}", "sched-hold", 0);
    ok (dws_schedhold_conf (c, &on, &t, &err) == 0 && !on, "sched-hold = false: off");
    json_decref (c);
    c = json_pack ("{s:i}", "sched-hold-timeout", 0);
    ok (dws_schedhold_conf (c, &on, &t, &err) < 0
        && !strcmp (err.text, "dws jobtap config: sched-hold-timeout must be a number of"
                    " seconds > 0"),
        "0 refused: %s", err.text);
    json_decref (c);
    c = json_pack ("{s:s}", "sched-hold", "no");
    ok (dws_schedhold_conf (c, &on, &t, &err) < 0
        && !strcmp (err.text, "dws jobtap config: sched-hold must be true or false"),
        "a string refused: %s", err.text);
    json_decref (c);
}

int main (void)
{
    test_restart ();
    test_no_fluxion ();
    test_timeout ();
    test_loaded ();
    test_other_service ();
    test_other_scheduler ();
    test_words ();
    test_bad_events ();
    test_nnodes ();
    test_nodes_up ();
    test_conf ();
    return done_testing ();
}
