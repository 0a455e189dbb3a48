/* SPDX-License-Identifier: LGPL-3.0-or-later */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "jobtap/dataout.h"
#include "jsontap.h"
#include "util/f58.h"

/* Feed one event (JSON text); the actions must be `expect` (JSON text) or,
 * for a refused event, the error text.
 */
/* JSON written with single quotes, '' for an apostrophe. */
static char *q (const char *s)
{
    char *out = malloc (strlen (s) + 1), *o = out;
    for (; out && *s; s++) {
        if (s[0] == '\'' && s[1] == '\'')
            *o++ = *s++;
        else
            *o++ = *s == '\'' ? '"' : *s;
    }
    if (out)
        *o = '\0';
    return out;
}

static void feed_is (struct dws_dataout *d, const char *event, const char *expect,
                     const char *what)
{
    dws_error_t err = {{0}};
    char *ev = event[0] == '{' || event[0] == '[' ? q (event) : strdup (event);
    char *ex = expect[0] == '[' ? q (expect) : strdup (expect);
    char *got = dws_dataout_event_json (d, ev, &err);
    json_dump_is (got, ex, err.text, JSON_SORT_KEYS, what);
    free (ev);
    free (ex);
}

/* The dependency name that holds a dependent on job x. */
static const char *dep (unsigned long long x)
{
    static char buf[8][64];
    static int n;
    char *f58 = dws_f58_plain (x);
    char *b = buf[n++ % 8];
    snprintf (b, 64, "dws-dataout:%s", f58);
    free (f58);
    return b;
}

static char *fmt (const char *f, ...) __attribute__ ((format (printf, 1, 2)));
static char *fmt (const char *f, ...)
{
    static char buf[8][1024];
    static int n;
    char *b = buf[n++ % 8];
    va_list ap;
    va_start (ap, f);
    vsnprintf (b, 1024, f, ap);
    va_end (ap);
    return b;
}

static void test_dependent_before_release (void)
{
    struct dws_dataout *d = dws_dataout_create ();
    feed_is (d, "{'type':'depend','id':20,'targets':[{'scheme':'afterok','id':10}]}", "[]",
             "an afterok dependent of a running job: nothing yet");
    ok (dws_dataout_tracked (d) == 1, "it is tracked");
    feed_is (d, "{'type':'begin','id':10}",
             fmt ("[{'action':'dependency-add','id':20,'name':'%s','quiet':false}]", dep (10)),
             "its target released: the dependent is held");
    feed_is (d, "{'type':'begin','id':10}", "[]", "a second begin: held once");
    feed_is (d, "{'type':'end','id':10,'ok':true}",
             fmt ("[{'action':'dependency-remove','id':20,'name':'%s','quiet':false}]", dep (10)),
             "DataOut complete: the hold goes");
    ok (dws_dataout_tracked (d) == 0 && dws_dataout_pending (d) == 0, "nothing left");
    dws_dataout_destroy (d);
}

static void test_dependent_after_release (void)
{
    struct dws_dataout *d = dws_dataout_create ();
    feed_is (d, "{'type':'begin','id':10}", "[]", "no dependents: nothing");
    feed_is (d,
             "{'type':'depend','id':21,'targets':[{'scheme':'afterany','id':10},"
             "{'scheme':'afternotok','id':11},{'scheme':'after','id':10},"
             "{'scheme':'begin-time','id':0}]}",
             fmt ("[{'action':'dependency-add','id':21,'name':'%s','quiet':false}]", dep (10)),
             "submitted during DataOut: held at depend (after and others ignored)");
    feed_is (d, "{'type':'end','id':10,'ok':false,'error':'copy failed'}",
             fmt ("[{'action':'dependency-remove','id':21,'name':'%s','quiet':false}]", dep (10)),
             "afterany: a failed copy_out releases it all the same");
    ok (dws_dataout_tracked (d) == 1, "still tracked for its other target");
    feed_is (d, "{'type':'leave','id':21}", "[]", "leave");
    ok (dws_dataout_tracked (d) == 0, "forgotten");
    dws_dataout_destroy (d);
}

static void test_afterok_fails (void)
{
    struct dws_dataout *d = dws_dataout_create ();
    feed_is (d, "{'type':'begin','id':10}", "[]", "begin");
    feed_is (d, "{'type':'depend','id':22,'targets':[{'scheme':'afterok','id':10}]}",
             fmt ("[{'action':'dependency-add','id':22,'name':'%s','quiet':false}]", dep (10)),
             "afterok held");
    feed_is (d, "{'type':'depend','id':23,'targets':[{'scheme':'afternotok','id':10}]}",
             fmt ("[{'action':'dependency-add','id':23,'name':'%s','quiet':false}]", dep (10)),
             "afternotok held");
    char *f58 = dws_f58_plain (10);
    feed_is (d, "{'type':'end','id':10,'ok':false,'error':'NnfDataMovement failed: no space'}",
             fmt ("[{'action':'raise','id':22,'type':'dependency','severity':0,"
                  "'note':'dependency: afterok: job %s''s copy_out (DWS DataOut) failed: "
                  "NnfDataMovement failed: no space'},"
                  "{'action':'dependency-remove','id':22,'name':'%s','quiet':false},"
                  "{'action':'dependency-remove','id':23,'name':'%s','quiet':false}]",
                  f58, dep (10), dep (10)),
             "copy_out failed: the afterok dependent fails, the afternotok one goes on");
    ok (dws_dataout_tracked (d) == 0, "nothing left");
    feed_is (d,
             "{'type':'depend','id':26,'targets':[{'scheme':'afterok','id':10},"
             "{'scheme':'afterany','id':10}]}",
             fmt ("[{'action':'raise','id':26,'type':'dependency','severity':0,"
                  "'note':'dependency: afterok: job %s''s copy_out (DWS DataOut) failed: "
                  "NnfDataMovement failed: no space'}]",
                  f58),
             "an afterok dependent submitted after the failure fails at depend");
    free (f58);
    dws_dataout_destroy (d);
}

static void test_two_targets (void)
{
    struct dws_dataout *d = dws_dataout_create ();
    feed_is (d,
             "{'type':'depend','id':24,'targets':[{'scheme':'afterok','id':10},"
             "{'scheme':'afterok','id':11}]}",
             "[]", "two targets");
    feed_is (d, "{'type':'begin','id':10}",
             fmt ("[{'action':'dependency-add','id':24,'name':'%s','quiet':false}]", dep (10)),
             "first released");
    feed_is (d, "{'type':'end','id':10,'ok':true}",
             fmt ("[{'action':'dependency-remove','id':24,'name':'%s','quiet':false}]", dep (10)),
             "first done");
    feed_is (d, "{'type':'begin','id':11}",
             fmt ("[{'action':'dependency-add','id':24,'name':'%s','quiet':false}]", dep (11)),
             "second released later: a hold of another name");
    feed_is (d, "{'type':'end','id':11,'ok':true}",
             fmt ("[{'action':'dependency-remove','id':24,'name':'%s','quiet':false}]", dep (11)),
             "second done");
    dws_dataout_destroy (d);
}

static void test_reload (void)
{
    struct dws_dataout *d = dws_dataout_create ();
    feed_is (d,
             "{'type':'depend','id':25,'reload':true,'targets':[{'scheme':'afterok','id':10},"
             "{'scheme':'afterok','id':11}]}",
             "[]", "a plugin load finds a dependent: it may hold already");
    feed_is (d, "{'type':'pending','ids':[11]}",
             fmt ("[{'action':'dependency-remove','id':25,'name':'%s','quiet':true},"
                  "{'action':'dependency-add','id':25,'name':'%s','quiet':true}]",
                  dep (10), dep (11)),
             "the service's list: the ended target's hold goes, the pending one stays");
    ok (dws_dataout_pending (d) == 1, "one pending");
    feed_is (d, "{'type':'end','id':11,'ok':true}",
             fmt ("[{'action':'dependency-remove','id':25,'name':'%s','quiet':false}]", dep (11)),
             "then it ends");
    dws_dataout_destroy (d);
}

static void test_bad_events (void)
{
    struct dws_dataout *d = dws_dataout_create ();
    feed_is (d, "[]", "a dataout event must be an object with a type", "not an object");
    feed_is (d, "{'type':'later'}", "unknown dataout event type 'later'", "unknown type");
    feed_is (d, "{'type':'begin','id':-1}", "id must be a job id (an integer >= 0)",
             "negative id");
    feed_is (d, "{'type':'end','id':10}", "ok must be true or false", "end without ok");
    feed_is (d, "{'type':'depend','id':1,'targets':{}}", "targets must be a list",
             "targets not a list");
    feed_is (d, "{'type':'depend','id':1,'targets':[{'scheme':'afterok','id':2},{'id':3}]}",
             "targets[1] must be {\"scheme\": S, \"id\": N}", "a bad target");
    ok (dws_dataout_tracked (d) == 0, "a refused depend records nothing");
    feed_is (d, "{'type':'pending','ids':[1,'x']}",
             "ids[1] must be a job id (an integer >= 0)", "bad pending");
    feed_is (d, "not json", "the event is not JSON: invalid token near 'not'",
             "not JSON");
    dws_dataout_destroy (d);
}

int main (void)
{
    test_dependent_before_release ();
    test_dependent_after_release ();
    test_afterok_fails ();
    test_two_targets ();
    test_reload ();
    test_bad_events ();
    return done_testing ();
}
