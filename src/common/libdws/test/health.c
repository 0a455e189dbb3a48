/* SPDX-License-Identifier: LGPL-3.0-or-later */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "health/health.h"
#include "jsontap.h"

/* Two rabbits: r1 serves c1 and c2, r2 serves c3 and c4.  The Flux
 * instance has c1..c4 as ranks 0..3.  Each rabbit has two ssd vertices.
 */

static double now = 1000.0;

/* JSON with single quotes for readability. */
static json_t *J (const char *fmt, ...)
{
    char buf[4096];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (buf, sizeof (buf), fmt, ap);
    va_end (ap);
    for (char *p = buf; *p; p++)
        if (*p == '\'')
            *p = '"';
    json_error_t e;
    json_t *o = json_loads (buf, 0, &e);
    if (!o)
        diag ("bad test JSON (%s): %s", e.text, buf);
    return o;
}

static json_t *storage (const char *name, const char *status, const char *state,
                        const char *l1, const char *l2)
{
    const char *c1 = !strcmp (name, "r1") ? "c1" : "c3";
    const char *c2 = !strcmp (name, "r1") ? "c2" : "c4";
    return J ("{'metadata':{'name':'%s'},'spec':{'state':'%s','mode':'Live'},"
              "'status':{'status':'%s','message':'','access':{'computes':["
              "{'name':'%s','status':'%s'},{'name':'%s','status':'%s'}]}}}",
              name, state, status, c1, l1, c2, l2);
}

static json_t *actions;

static void reset (void)
{
    json_decref (actions);
    actions = json_array ();
}

static size_t count (const char *what)
{
    size_t n = 0, i;
    json_t *a;
    json_array_foreach (actions, i, a) {
        const char *act = json_string_value (json_object_get (a, "action"));
        const char *topic = json_string_value (json_object_get (a, "topic"));
        const char *kind = json_string_value (json_object_get (a, "kind"));
        if ((topic && !strcmp (topic, what)) || (kind && !strcmp (kind, what))
            || !strcmp (act, what))
            n++;
    }
    return n;
}

/* The k-th action about 'what' (topic, kind or action name). */
static json_t *nth (const char *what, size_t k)
{
    size_t i;
    json_t *a;
    json_array_foreach (actions, i, a) {
        const char *act = json_string_value (json_object_get (a, "action"));
        const char *topic = json_string_value (json_object_get (a, "topic"));
        const char *kind = json_string_value (json_object_get (a, "kind"));
        if ((topic && !strcmp (topic, what)) || (kind && !strcmp (kind, what))
            || !strcmp (act, what)) {
            if (k-- == 0)
                return a;
        }
    }
    return NULL;
}

static char *dump (json_t *o)
{
    return json_dumps (o, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
}

static void payload_is (const char *what, size_t k, const char *expect, const char *msg)
{
    json_t *a = nth (what, k);
    json_t *p = a ? json_object_get (a, "payload") : NULL;
    if (a && !p)
        p = json_object_get (a, "body");
    char *s = p ? dump (p) : strdup ("(none)");
    json_t *e = J ("%s", expect);
    char *es = dump (e);
    is (s, es, "%s", msg);
    free (s);
    free (es);
    json_decref (e);
}

#define FIND "sched-fluxion-resource.find"

static char find_token[64]; /* the find the last flushes sent, not answered */

static void flush (struct dws_health *h)
{
    reset ();
    now += 1;
    dws_health_flush (h, now, actions);
    json_t *a = nth (FIND, 0);
    if (a)
        snprintf (find_token, sizeof (find_token), "%s",
                  json_string_value (json_object_get (a, "token")));
}

static void none (struct dws_health *h, const char *msg)
{
    flush (h);
    char *s = dump (actions);
    ok (json_array_size (actions) == 0, "%s", msg);
    if (json_array_size (actions) != 0)
        diag ("actions: %s", s);
    free (s);
}

/* Answer every rpc and k8s action of the last flush (ok or not). */
static void answer_all (struct dws_health *h, bool ok_, int status)
{
    json_t *pending = json_incref (actions);
    reset ();
    size_t i;
    json_t *a;
    json_array_foreach (pending, i, a) {
        json_t *tok = json_object_get (a, "token");
        const char *topic = json_string_value (json_object_get (a, "topic"));
        if (!tok || (topic && !strcmp (topic, FIND)))
            continue; /* Fluxion's find is answered by fluxion_says () */
        json_t *ev = json_pack ("{s:O s:b s:s s:i}", "token", tok, "ok", ok_, "errstr",
                                ok_ ? "" : "injected failure", "code", status);
        dws_error_t err;
        if (dws_health_result (h, ev, now, actions, &err) < 0)
            diag ("result refused: %s", err.text);
        json_decref (ev);
    }
    json_decref (pending);
}

static void feed_storage (struct dws_health *h, json_t *obj)
{
    dws_error_t err;
    reset ();
    if (dws_health_storage (h, "MODIFIED", obj, actions, &err) < 0)
        diag ("storage refused: %s", err.text);
    json_decref (obj);
}

static void feed_journal (struct dws_health *h, const char *events)
{
    dws_error_t err;
    json_t *ev = J ("%s", events);
    reset ();
    if (dws_health_journal (h, ev, true, actions, &err) < 0)
        diag ("journal refused: %s", err.text);
    json_decref (ev);
}

/* Answer the find the engine sent (flushing to make it send one if it has
 * not): 'answer' is its payload, NULL for a failed RPC. */
static void fluxion_answers (struct dws_health *h, json_t *answer)
{
    dws_error_t err;
    if (!find_token[0])
        flush (h);
    if (!find_token[0]) {
        diag ("the engine sent no find");
        return;
    }
    json_t *ev = answer ? json_pack ("{s:s s:b s:O}", "token", find_token, "ok", 1, "payload",
                                     answer)
                        : json_pack ("{s:s s:b s:s}", "token", find_token, "ok", 0, "errstr",
                                     "No service matching " FIND " is registered");
    find_token[0] = '\0';
    reset ();
    if (dws_health_result (h, ev, now, actions, &err) < 0)
        diag ("find result refused: %s", err.text);
    json_decref (ev);
}

/* Fluxion's answer to find status=down in JGF, from the paths of its down
 * vertices (a fresh dws2jgf graph has every ssd down; Fluxion also lists
 * their ancestors: those without "ssd" here); NULL: the RPC failed. */
static void fluxion_says (struct dws_health *h, const char *down)
{
    json_t *answer = NULL;
    if (down) {
        json_t *paths = J ("%s", down);
        json_t *nodes = json_array ();
        size_t i;
        json_t *p;
        json_array_foreach (paths, i, p)
            json_array_append_new (nodes,
                                   json_pack ("{s:s s:{s:s s:{s:O}}}", "id", "x", "metadata",
                                              "type",
                                              strstr (json_string_value (p), "ssd") ? "ssd"
                                                                                    : "chassis",
                                              "paths", "containment", p));
        answer = json_array_size (nodes) ? json_pack ("{s:{s:{s:o s:[]}}}", "R", "graph",
                                                      "nodes", nodes, "edges")
                                         : json_pack ("{s:n}", "R");
        if (!json_array_size (nodes))
            json_decref (nodes);
        json_decref (paths);
    }
    fluxion_answers (h, answer);
    json_decref (answer);
}

/* What the graph adds to its ssds and nodes (the pick tests: its vertex
 * sizes, "ssd_gib"). */
static const char *graph_extra = "";

static struct dws_health *system_create (bool fluxion, bool drain, bool soft, bool queues)
{
    struct dws_health *h = dws_health_create ();
    struct dws_health_config cfg = {
        .fluxion = fluxion,
        .drain_compute_nodes = drain,
        .soft_drain = soft,
        .drain_queues = queues,
        .namespace = "default",
    };
    dws_error_t err;
    dws_health_configure (h, &cfg);
    reset ();
    json_t *topo = J ("{'c1':'r1','c2':'r1','c3':'r2','c4':'r2'}");
    ok (dws_health_topology (h, topo, actions, &err) == 0, "topology accepted");
    json_decref (topo);
    json_t *graph = J ("{'ssds':{'r1':['/cl/chassis0/ssd0','/cl/chassis0/ssd1'],"
                       "'r2':['/cl/chassis1/ssd0','/cl/chassis1/ssd1']},"
                       "'nodes':{'c1':'/cl/chassis0/c1','c2':'/cl/chassis0/c2',"
                       "'c3':'/cl/chassis1/c3','c4':'/cl/chassis1/c4'}%s}", graph_extra);
    if (fluxion)
        ok (dws_health_graph (h, graph, actions, &err) == 0, "graph accepted");
    json_decref (graph);
    if (fluxion)
        fluxion_says (h, "['/cl/chassis0/ssd0','/cl/chassis0/ssd1','/cl/chassis1/ssd0',"
                         "'/cl/chassis1/ssd1','/cl','/cl/chassis0']");
    return h;
}

/* Storage all healthy, journal: all online, nothing drained. */
static void system_sync (struct dws_health *h)
{
    dws_error_t err;
    json_t *objs = json_array ();
    json_array_append_new (objs, storage ("r1", "Ready", "Enabled", "Ready", "Ready"));
    json_array_append_new (objs, storage ("r2", "Ready", "Enabled", "Ready", "Ready"));
    reset ();
    ok (dws_health_storage_sync (h, objs, actions, &err) == 0, "Storage sync accepted");
    json_decref (objs);
    ok (count ("timer-start") == 1, "a change arms the flush timer");
    feed_journal (h, "[{'name':'restart','context':{'ranks':'0-3','online':'0-3',"
                     "'nodelist':'c[1-4]'}}]");
}

static void test_fluxion_rabbit_transitions (void)
{
    struct dws_health *h = system_create (true, true, true, false);
    none (h, "nothing is sent before the Storage list and the journal");
    system_sync (h);
    flush (h);
    ok (count ("sched-fluxion-resource.set_status") == 4,
        "start-up: every ssd vertex of the up rabbits is set (4)");
    payload_is ("sched-fluxion-resource.set_status", 0,
                "{'resource_path':'/cl/chassis0/ssd0','status':'up'}", "set_status payload");
    ok (count ("sched-fluxion-resource.remove_property") == 1
            && count ("sched-fluxion-resource.set_property") == 0,
        "start-up: badrabbit removed from every node in one RPC");
    payload_is ("sched-fluxion-resource.remove_property", 0,
                "{'resource_path':['/cl/chassis0/c1','/cl/chassis0/c2','/cl/chassis1/c3',"
                "'/cl/chassis1/c4'],'key':'badrabbit'}",
                "remove_property lists the graph paths");
    ok (count ("SystemStatus") == 1, "start-up: one SystemStatus patch");
    payload_is ("SystemStatus", 0,
                "{'data':{'nodes':{'c1':'Enabled','c2':'Enabled','c3':'Enabled',"
                "'c4':'Enabled'}}}",
                "SystemStatus: every compute Enabled");
    ok (count ("resource.drain") == 0 && count ("resource.undrain") == 0,
        "start-up: nothing drained or undrained");
    answer_all (h, true, 0);
    none (h, "nothing changed: nothing sent");

    feed_storage (h, storage ("r1", "Ready", "Enabled", "Ready", "Ready"));
    none (h, "the same Storage again: nothing sent");
    json_t *used = J ("{'r2':1,'r1':2,'r9':1}");
    ok (dws_health_first_down (h, used) == NULL, "first down: none while all are up"
        " (a rabbit never seen is not down)");

    feed_storage (h, storage ("r1", "Offline", "Enabled", "Ready", "Ready"));
    ok (dws_health_first_down (h, used) && !strcmp (dws_health_first_down (h, used), "r1"),
        "first down: r1, once its Storage says Offline");
    json_decref (used);
    flush (h);
    ok (count ("sched-fluxion-resource.set_status") == 2, "r1 down: its 2 ssds down");
    payload_is ("sched-fluxion-resource.set_status", 1,
                "{'resource_path':'/cl/chassis0/ssd1','status':'down'}", "status down");
    payload_is ("sched-fluxion-resource.set_property", 0,
                "{'sp_resource_path':['/cl/chassis0/c1','/cl/chassis0/c2'],"
                "'sp_keyval':'badrabbit=bad'}",
                "r1 down: badrabbit on its computes, one RPC");
    ok (count ("resource.drain") == 0, "a down rabbit drains nothing (links are Ready)");
    ok (count ("log") == 0, "the flush itself logs nothing (the event did)");
    answer_all (h, true, 0);

    /* down -> up again between two flushes: nothing sent */
    feed_storage (h, storage ("r1", "Ready", "Enabled", "Ready", "Ready"));
    feed_storage (h, storage ("r1", "Offline", "Enabled", "Ready", "Ready"));
    none (h, "up and down again within one flush window: nothing sent");

    feed_storage (h, storage ("r1", "Ready", "Enabled", "Ready", "Ready"));
    flush (h);
    ok (count ("sched-fluxion-resource.set_status") == 2, "r1 up again: its 2 ssds up");
    payload_is ("sched-fluxion-resource.remove_property", 0,
                "{'resource_path':['/cl/chassis0/c1','/cl/chassis0/c2'],'key':'badrabbit'}",
                "r1 up: badrabbit removed");
    answer_all (h, true, 0);

    /* Disabled by an admin, with a reason */
    json_t *obj = storage ("r2", "Disabled", "Disabled", "Ready", "Ready");
    json_object_set_new (json_object_get (obj, "metadata"), "annotations",
                         J ("{'disable_reason':'bad drive','disable_date':'2026-11-23T10:00:00Z'}"));
    feed_storage (h, obj);
    ok (count ("log") == 1, "a rabbit going down is logged");
    flush (h);
    ok (count ("sched-fluxion-resource.set_status") == 2, "r2 disabled: its ssds down");
    json_t *view = dws_health_view (h);
    json_t *r2 = json_array_get (json_object_get (view, "rabbits"), 1);
    is (json_string_value (json_object_get (r2, "why")), "disabled: bad drive",
        "the view says why r2 is down");
    is (json_string_value (json_object_get (json_object_get (r2, "storage"), "disable_date")),
        "2026-11-23T10:00:00Z", "the view has the disable date");
    is (json_string_value (json_object_get (r2, "fluxion")), "down",
        "the view has r2's ssds down in Fluxion");
    json_decref (view);
    answer_all (h, true, 0);

    /* Testing mode, status written by hand; a fenced rabbit (Degraded) */
    obj = storage ("r2", "Ready", "Enabled", "Ready", "Ready");
    json_object_set_new (json_object_get (obj, "spec"), "mode", json_string ("Testing"));
    feed_storage (h, obj);
    flush (h);
    ok (count ("sched-fluxion-resource.set_status") == 2, "r2 Ready in Testing mode: up");
    answer_all (h, true, 0);
    /* Degraded without rebootRequired (a RAID rebuild): still usable */
    obj = storage ("r2", "Degraded", "Enabled", "Ready", "Ready");
    json_object_set_new (json_object_get (obj, "status"), "message",
                         json_string ("RAID rebuild in progress"));
    feed_storage (h, obj);
    none (h, "r2 Degraded without rebootRequired: still up, nothing sent");
    view = dws_health_view (h);
    r2 = json_array_get (json_object_get (view, "rabbits"), 1);
    ok (json_is_true (json_object_get (r2, "up")), "the view has r2 up");
    is (json_string_value (json_object_get (r2, "note")),
        "Storage status Degraded, still usable: RAID rebuild in progress",
        "the view notes that it is Degraded and why");
    is (json_string_value (json_object_get (r2, "why")), "", "and has no why");
    json_decref (view);

    /* Degraded with rebootRequired: nnf-sos' fenced rabbit, down */
    obj = storage ("r2", "Degraded", "Enabled", "Ready", "Ready");
    json_object_set_new (json_object_get (obj, "status"), "message",
                         json_string ("Storage node requires reboot to recover from STONITH "
                                      "event"));
    json_object_set_new (json_object_get (obj, "status"), "rebootRequired", json_true ());
    feed_storage (h, obj);
    flush (h);
    ok (count ("sched-fluxion-resource.set_status") == 2,
        "r2 Degraded with rebootRequired (fenced by STONITH): down");
    view = dws_health_view (h);
    r2 = json_array_get (json_object_get (view, "rabbits"), 1);
    is (json_string_value (json_object_get (r2, "why")),
        "Storage status Degraded, reboot required: Storage node requires reboot to recover"
        " from STONITH event",
        "the view says a reboot is required and quotes the Storage message");
    ok (json_is_true (json_object_get (json_object_get (r2, "storage"), "reboot_required")),
        "the view's Storage summary has reboot_required");
    is (json_string_value (json_object_get (r2, "note")), "", "and no note");
    json_decref (view);
    answer_all (h, true, 0);

    /* the statuses that mean unusable, each from an up rabbit */
    const char *unusable[] = {"Starting", "Disabled", "NotPresent", "Offline", "Failed",
                              "Drained", "Fenced", "Unknown"};
    for (size_t k = 0; k < sizeof (unusable) / sizeof (unusable[0]); k++) {
        feed_storage (h, storage ("r2", "Ready", "Enabled", "Ready", "Ready"));
        flush (h);
        answer_all (h, true, 0);
        feed_storage (h, storage ("r2", unusable[k], "Enabled", "Ready", "Ready"));
        flush (h);
        char msg[64];
        snprintf (msg, sizeof (msg), "Storage status %s: r2's ssds down", unusable[k]);
        ok (count ("sched-fluxion-resource.set_status") == 2, "%s (both)", msg);
        payload_is ("sched-fluxion-resource.set_status", 0,
                    "{'resource_path':'/cl/chassis1/ssd0','status':'down'}", msg);
        answer_all (h, true, 0);
    }

    /* the Storage object deleted */
    reset ();
    dws_error_t err;
    obj = J ("{'metadata':{'name':'r1'}}");
    ok (dws_health_storage (h, "DELETED", obj, actions, &err) == 0, "DELETED accepted");
    json_decref (obj);
    flush (h);
    ok (count ("sched-fluxion-resource.set_status") == 2, "r1's Storage deleted: ssds down");
    answer_all (h, true, 0);
    reset ();
    obj = J ("{'metadata':{'name':'r9'},'status':{'status':'Ready'}}");
    ok (dws_health_storage (h, "ADDED", obj, actions, &err) == 0 && json_array_size (actions) == 0,
        "a Storage that is not a rabbit of the SystemConfiguration is ignored");
    json_decref (obj);
    dws_health_destroy (h);
}

static void test_links_and_drains (void)
{
    struct dws_health *h = system_create (true, true, true, false);
    system_sync (h);
    flush (h);
    answer_all (h, true, 0);

    feed_storage (h, storage ("r1", "Ready", "Enabled", "Offline", "Ready"));
    flush (h);
    ok (count ("sched-fluxion-resource.set_status") == 0, "a link down leaves the ssds up");
    payload_is ("resource.drain", 0,
                "{'targets':'c1','mode':'update','reason':'rabbit r1 link Offline'}",
                "c1's link down: c1 drained, reason names the rabbit and the link status");
    payload_is ("sched-fluxion-resource.set_property", 0,
                "{'sp_resource_path':['/cl/chassis0/c1'],'sp_keyval':'badrabbit=bad'}",
                "c1's link down: badrabbit on c1");
    answer_all (h, true, 0);
    feed_storage (h, storage ("r1", "Ready", "Enabled", "Offline", "Ready"));
    none (h, "the drain is not sent again while the journal has not shown it");
    feed_journal (h, "[{'name':'drain','context':{'idset':'0','nodelist':'c1',"
                     "'reason':'rabbit r1 link Offline','overwrite':0}}]");
    none (h, "the journal shows the drain: nothing else to do");

    feed_storage (h, storage ("r1", "Ready", "Enabled", "Ready", "Ready"));
    flush (h);
    payload_is ("resource.undrain", 0, "{'targets':'c1'}", "c1's link back: c1 undrained");
    payload_is ("sched-fluxion-resource.remove_property", 0,
                "{'resource_path':['/cl/chassis0/c1'],'key':'badrabbit'}",
                "c1's link back: badrabbit removed");
    answer_all (h, true, 0);
    feed_journal (h, "[{'name':'undrain','context':{'idset':'0','nodelist':'c1'}}]");
    none (h, "the journal shows the undrain: nothing else");

    /* an admin's drain is never undrained by us */
    feed_journal (h, "[{'name':'drain','context':{'idset':'1','nodelist':'c2',"
                     "'reason':'bad DIMM','overwrite':0}}]");
    none (h, "an admin drain: nothing sent");
    feed_storage (h, storage ("r1", "Ready", "Enabled", "Ready", "Fenced"));
    flush (h);
    ok (count ("resource.drain") == 0, "a drained node whose link goes down is not drained again");
    answer_all (h, true, 0);
    feed_storage (h, storage ("r1", "Ready", "Enabled", "Ready", "Ready"));
    flush (h);
    ok (count ("resource.undrain") == 0, "link back: the admin's drain stays");
    answer_all (h, true, 0);

    /* an admin undrains a node whose link is still down: it stays undrained */
    feed_storage (h, storage ("r2", "Ready", "Enabled", "Offline", "Offline"));
    flush (h);
    payload_is ("resource.drain", 0,
                "{'targets':'c[3-4]','mode':'update','reason':'rabbit r2 link Offline'}",
                "two links down on one rabbit: one drain RPC");
    answer_all (h, true, 0);
    feed_journal (h, "[{'name':'drain','context':{'idset':'2-3','nodelist':'c[3-4]',"
                     "'reason':'rabbit r2 link Offline','overwrite':0}},"
                     "{'name':'undrain','context':{'idset':'2','nodelist':'c3'}}]");
    feed_storage (h, storage ("r2", "Ready", "Enabled", "Offline", "Offline"));
    none (h, "an admin's undrain of a down link stands");
    feed_storage (h, storage ("r2", "Ready", "Enabled", "Ready", "Offline"));
    flush (h);
    ok (json_array_size (actions) == 1 && count ("sched-fluxion-resource.remove_property") == 1,
        "c3's link up (no drain of ours in place): only badrabbit removed");
    answer_all (h, true, 0);
    feed_storage (h, storage ("r2", "Ready", "Enabled", "Offline", "Offline"));
    flush (h);
    payload_is ("resource.drain", 0,
                "{'targets':'c3','mode':'update','reason':'rabbit r2 link Offline'}",
                "c3's link down again: drained again");
    answer_all (h, true, 0);

    /* the flux journal replays drain with overwrite semantics */
    feed_journal (h, "[{'name':'drain','context':{'idset':'3','nodelist':'c4',"
                     "'reason':'other','overwrite':0}}]");
    json_t *view = dws_health_view (h);
    json_t *c4 = json_array_get (json_object_get (json_array_get (json_object_get (view,
                                                                                    "rabbits"),
                                                                   1),
                                                  "computes"),
                                 1);
    is (json_string_value (json_object_get (c4, "drained")), "rabbit r2 link Offline",
        "a drain in update mode keeps the reason of a drained node");
    json_decref (view);
    feed_journal (h, "[{'name':'drain','context':{'idset':'3','nodelist':'c4',"
                     "'reason':'other','overwrite':1}}]");
    feed_storage (h, storage ("r2", "Ready", "Enabled", "Offline", "Ready"));
    flush (h);
    ok (count ("resource.undrain") == 0, "a drain overwritten by an admin is not undrained");
    dws_health_destroy (h);
}

static void test_drain_options (void)
{
    /* drains off, soft_drain on: badrabbit only */
    struct dws_health *h = system_create (true, false, true, false);
    system_sync (h);
    flush (h);
    answer_all (h, true, 0);
    feed_storage (h, storage ("r1", "Ready", "Enabled", "Offline", "Ready"));
    flush (h);
    ok (count ("resource.drain") == 0 && count ("sched-fluxion-resource.set_property") == 1,
        "drain_compute_nodes=false: badrabbit, no drain");
    dws_health_destroy (h);

    /* drains off, soft_drain off: nothing marks the node */
    h = system_create (true, false, false, false);
    system_sync (h);
    flush (h);
    ok (count ("sched-fluxion-resource.remove_property") == 0,
        "soft_drain=false: badrabbit is never touched");
    answer_all (h, true, 0);
    feed_storage (h, storage ("r1", "Ready", "Enabled", "Offline", "Ready"));
    none (h, "drains and soft drain off: a link down sends nothing");
    dws_health_destroy (h);

    /* drain_queues: only c1 may be drained */
    h = system_create (true, true, true, true);
    reset ();
    dws_error_t err;
    ok (dws_health_flux_config (h, NULL, "c1", actions, &err) == 0, "drainable c1 accepted");
    system_sync (h);
    flush (h);
    answer_all (h, true, 0);
    feed_storage (h, storage ("r1", "Ready", "Enabled", "Offline", "Offline"));
    flush (h);
    payload_is ("resource.drain", 0,
                "{'targets':'c1','mode':'update','reason':'rabbit r1 link Offline'}",
                "drain_queues: only the node of the queue is drained");
    payload_is ("sched-fluxion-resource.set_property", 0,
                "{'sp_resource_path':['/cl/chassis0/c1','/cl/chassis0/c2'],"
                "'sp_keyval':'badrabbit=bad'}",
                "drain_queues: both get badrabbit");
    json_t *c = dws_health_job_constraint (&(struct dws_health_config){
        .fluxion = true, .drain_compute_nodes = true, .soft_drain = true,
        .drain_queues = true});
    char *s = dump (c);
    is (s, "{\"not\":[{\"properties\":[\"badrabbit\"]}]}",
        "with drain_queues jobs get the not badrabbit constraint");
    free (s);
    json_decref (c);
    dws_health_destroy (h);

    c = dws_health_job_constraint (&(struct dws_health_config){
        .fluxion = true, .drain_compute_nodes = true, .soft_drain = true});
    ok (json_is_null (c), "Fluxion with drains: no constraint (as flux-coral2)");
    json_decref (c);
    c = dws_health_job_constraint (&(struct dws_health_config){
        .fluxion = true, .drain_compute_nodes = false, .soft_drain = false});
    s = dump (c);
    is (s, "{\"not\":[{\"properties\":[\"badrabbit\"]}]}", "drains off: not badrabbit");
    free (s);
    json_decref (c);
    c = dws_health_job_constraint (&(struct dws_health_config){.fluxion = false});
    s = dump (c);
    is (s,
        "{\"and\":[{\"not\":[{\"properties\":[\"badrabbit\"]}]},{\"not\":[{\"properties\":"
        "[\"alloc_rabbit\"]}]}]}",
        "without Fluxion: not badrabbit and not alloc_rabbit");
    free (s);
    json_decref (c);
}

static void test_exclude (void)
{
    struct dws_health *h = system_create (true, true, true, false);
    dws_error_t err;
    reset ();
    ok (dws_health_flux_config (h, "1", NULL, actions, &err) == 0, "exclude rank 1 accepted");
    system_sync (h);
    flush (h);
    payload_is ("sched-fluxion-resource.remove_property", 0,
                "{'resource_path':['/cl/chassis0/c1','/cl/chassis1/c3','/cl/chassis1/c4'],"
                "'key':'badrabbit'}",
                "an excluded node gets no property");
    payload_is ("SystemStatus", 0,
                "{'data':{'nodes':{'c1':'Enabled','c3':'Enabled','c4':'Enabled'}}}",
                "an excluded node is left out of SystemStatus");
    answer_all (h, true, 0);
    feed_storage (h, storage ("r1", "Ready", "Enabled", "Offline", "Offline"));
    flush (h);
    payload_is ("resource.drain", 0,
                "{'targets':'c1','mode':'update','reason':'rabbit r1 link Offline'}",
                "an excluded node is never drained");
    reset ();
    ok (dws_health_flux_config (h, "c[3-4]", NULL, actions, &err) == 0,
        "exclude as a hostlist accepted");
    flush (h);
    payload_is ("sched-fluxion-resource.set_property", 0,
                "{'sp_resource_path':['/cl/chassis0/c2'],'sp_keyval':'badrabbit=bad'}",
                "c2 no longer excluded: it gets badrabbit");
    payload_is ("resource.drain", 0,
                "{'targets':'c2','mode':'update','reason':'rabbit r1 link Offline'}",
                "c2 no longer excluded: its down link drains it");
    reset ();
    ok (dws_health_flux_config (h, "c[3-", NULL, actions, &err) < 0, "a bad exclude is refused");
    is (err.text, "resource.exclude 'c[3-' is neither an idset nor a hostlist",
        "... with a message naming it");
    dws_health_destroy (h);
}

static void test_no_fluxion (void)
{
    struct dws_health *h = system_create (false, true, true, false);
    system_sync (h);
    flush (h);
    ok (count ("sched-fluxion-resource.set_status") == 0, "no Fluxion: no set_status");
    payload_is ("sched-fluxion-resource.remove_property", 0,
                "{'resource_path':['/cluster0/c1','/cluster0/c2','/cluster0/c3',"
                "'/cluster0/c4'],'key':'badrabbit'}",
                "no Fluxion graph: node paths are /cluster0/<host>");
    payload_is ("sched-fluxion-resource.remove_property", 1,
                "{'resource_path':['/cluster0/c1','/cluster0/c2','/cluster0/c3',"
                "'/cluster0/c4'],'key':'alloc_rabbit'}",
                "alloc_rabbit removed everywhere at start-up");
    answer_all (h, true, 0);
    json_t *r = J ("['r1']");
    reset ();
    dws_health_allocation (h, 42, r, actions);
    flush (h);
    payload_is ("sched-fluxion-resource.set_property", 0,
                "{'sp_resource_path':['/cluster0/c1','/cluster0/c2'],"
                "'sp_keyval':'alloc_rabbit=yes'}",
                "a job on r1: alloc_rabbit on r1's computes, one RPC");
    answer_all (h, true, 0);
    reset ();
    dws_health_allocation (h, 43, r, actions);
    none (h, "a second job on r1: nothing new");
    reset ();
    dws_health_allocation (h, 42, NULL, actions);
    none (h, "one of two jobs gone: r1 still allocated");
    json_t *view = dws_health_view (h);
    char *s = dump (json_object_get (json_array_get (json_object_get (view, "rabbits"), 0),
                                     "jobs"));
    is (s, "[43]", "the view lists the job on r1");
    free (s);
    json_decref (view);
    reset ();
    dws_health_allocation (h, 43, NULL, actions);
    flush (h);
    payload_is ("sched-fluxion-resource.remove_property", 0,
                "{'resource_path':['/cluster0/c1','/cluster0/c2'],'key':'alloc_rabbit'}",
                "the last job gone: alloc_rabbit removed");
    json_decref (r);
    answer_all (h, true, 0);
    feed_storage (h, storage ("r2", "Offline", "Enabled", "Ready", "Ready"));
    flush (h);
    payload_is ("sched-fluxion-resource.set_property", 0,
                "{'sp_resource_path':['/cluster0/c3','/cluster0/c4'],"
                "'sp_keyval':'badrabbit=bad'}",
                "no Fluxion: a down rabbit's computes get badrabbit");
    dws_health_destroy (h);
}

static void test_systemstatus (void)
{
    struct dws_health *h = system_create (true, true, true, false);
    system_sync (h);
    flush (h);
    answer_all (h, true, 0);
    feed_journal (h, "[{'name':'offline','context':{'idset':'2-3'}}]");
    flush (h);
    payload_is ("SystemStatus", 0, "{'data':{'nodes':{'c3':'Disabled','c4':'Disabled'}}}",
                "brokers lost: Disabled in SystemStatus, one patch");
    answer_all (h, true, 0);
    feed_journal (h, "[{'name':'online','context':{'idset':'3'}}]");
    flush (h);
    payload_is ("SystemStatus", 0, "{'data':{'nodes':{'c4':'Enabled'}}}",
                "a broker back: Enabled again, only it");
    answer_all (h, true, 0);
    feed_journal (h, "[{'name':'drain','context':{'idset':'0','nodelist':'c1',"
                     "'reason':'failed to unmount rabbit','overwrite':0}}]");
    flush (h);
    payload_is ("SystemStatus", 0, "{'data':{'nodes':{'c1':'Disabled'}}}",
                "drained after a failed unmount: Disabled");
    answer_all (h, true, 0);
    feed_journal (h, "[{'name':'undrain','context':{'idset':'0','nodelist':'c1'}}]");
    flush (h);
    payload_is ("SystemStatus", 0, "{'data':{'nodes':{'c1':'Enabled'}}}",
                "undrained: Enabled again");
    answer_all (h, false, 404);
    none (h, "SystemStatus missing (404): not retried");
    feed_journal (h, "[{'name':'offline','context':{'idset':'0'}}]");
    flush (h);
    answer_all (h, false, 500);
    ok (count ("timer-start") == 1 && count ("log") == 1,
        "a failed SystemStatus patch is logged and retried later");
    flush (h);
    payload_is ("SystemStatus", 0, "{'data':{'nodes':{'c1':'Disabled'}}}",
                "the retry sends it again");
    dws_health_destroy (h);
}

/* What a pick needs is known once the one graph and the journal came
 * (a pre-staged job waits for it: prestage.c). */
static void test_known (void)
{
    struct dws_health *h = system_create (true, true, true, false);
    ok (!dws_health_known (h), "the graph alone: not known (no nodes yet)");
    system_sync (h);
    ok (dws_health_known (h), "the first graph and the journal: known");
    dws_health_destroy (h);
}

/* A journal restart event that names no online ranks: none is online
 * (the mutation run: a rank set online by itself went unnoticed). */
static void test_restart_without_online (void)
{
    struct dws_health *h = system_create (true, true, true, false);
    json_t *objs = json_array ();
    dws_error_t err;
    json_array_append_new (objs, storage ("r1", "Ready", "Enabled", "Ready", "Ready"));
    json_array_append_new (objs, storage ("r2", "Ready", "Enabled", "Ready", "Ready"));
    ok (dws_health_storage_sync (h, objs, actions, &err) == 0, "Storage sync accepted");
    json_decref (objs);
    feed_journal (h, "[{'name':'restart','context':{'ranks':'0-3','nodelist':'c[1-4]'}}]");
    flush (h);
    payload_is ("SystemStatus", 0,
                "{'data':{'nodes':{'c1':'Disabled','c2':'Disabled','c3':'Disabled',"
                "'c4':'Disabled'}}}",
                "a restart event without online: every node Disabled in SystemStatus");
    dws_health_destroy (h);
}

/* Issue 22 item 6: Disabled means "cannot take part", whatever the drain
 * reason kept, and per host over all its ranks. */
static void test_systemstatus_unmount_and_hosts (void)
{
    struct dws_health *h = system_create (true, true, true, false);
    system_sync (h);
    flush (h);
    answer_all (h, true, 0);
    feed_journal (h, "[{'name':'drain','context':{'idset':'1','nodelist':'c2',"
                     "'reason':'bad DIMM','overwrite':0}}]");
    none (h, "a maintenance drain leaves the node Enabled for DWS");
    /* the service's drain (mode=update) keeps the admin's reason, but its
     * event carries the unmount reason */
    feed_journal (h, "[{'name':'drain','context':{'idset':'1','nodelist':'c2',"
                     "'reason':'failed to unmount rabbit','overwrite':0}}]");
    flush (h);
    payload_is ("SystemStatus", 0, "{'data':{'nodes':{'c2':'Disabled'}}}",
                "an unmount drain on an already-drained node: Disabled");
    answer_all (h, true, 0);
    json_t *view = dws_health_view (h);
    json_t *c2 = json_array_get (json_object_get (json_array_get (json_object_get (view,
                                                                                   "rabbits"),
                                                                  0),
                                                  "computes"),
                                 1);
    is (json_string_value (json_object_get (c2, "drained")), "bad DIMM",
        "the view shows the reason flux-core kept");
    ok (json_is_true (json_object_get (c2, "unmount_drained")),
        "and that it was drained for a failed unmount");
    json_decref (view);
    feed_journal (h, "[{'name':'drain','context':{'idset':'1','nodelist':'c2',"
                     "'reason':'replacing the node','overwrite':1}}]");
    none (h, "an admin's reason written over it: still Disabled until an undrain");
    feed_journal (h, "[{'name':'undrain','context':{'idset':'1','nodelist':'c2'}}]");
    flush (h);
    payload_is ("SystemStatus", 0, "{'data':{'nodes':{'c2':'Enabled'}}}",
                "undrained: Enabled");
    answer_all (h, true, 0);
    dws_health_destroy (h);

    /* several ranks with one hostname (flux start --test-hosts) */
    h = system_create (true, true, true, false);
    dws_error_t err;
    json_t *objs = json_array ();
    json_array_append_new (objs, storage ("r1", "Ready", "Enabled", "Ready", "Ready"));
    json_array_append_new (objs, storage ("r2", "Ready", "Enabled", "Ready", "Ready"));
    reset ();
    ok (dws_health_storage_sync (h, objs, actions, &err) == 0, "Storage sync accepted");
    json_decref (objs);
    feed_journal (h, "[{'name':'restart','context':{'ranks':'0-4','online':'0-4',"
                     "'nodelist':'c[1-3],c3,c4'}}]");
    flush (h);
    payload_is ("SystemStatus", 0,
                "{'data':{'nodes':{'c1':'Enabled','c2':'Enabled','c3':'Enabled',"
                "'c4':'Enabled'}}}",
                "ranks 2 and 3 share c3: one entry");
    answer_all (h, true, 0);
    for (int first = 2; first <= 3; first++) {
        int second = first == 2 ? 3 : 2;
        char ev[128];
        snprintf (ev, sizeof (ev), "[{'name':'offline','context':{'idset':'%d'}}]", first);
        feed_journal (h, ev);
        flush (h);
        payload_is ("SystemStatus", 0, "{'data':{'nodes':{'c3':'Disabled'}}}",
                    "one broker of c3 offline: c3 Disabled");
        answer_all (h, true, 0);
        snprintf (ev, sizeof (ev), "[{'name':'offline','context':{'idset':'%d'}}]", second);
        feed_journal (h, ev);
        none (h, "its other broker offline too: no change");
        snprintf (ev, sizeof (ev), "[{'name':'online','context':{'idset':'%d'}}]", first);
        feed_journal (h, ev);
        none (h, "one of them back: still Disabled");
        snprintf (ev, sizeof (ev), "[{'name':'online','context':{'idset':'%d'}}]", second);
        feed_journal (h, ev);
        flush (h);
        payload_is ("SystemStatus", 0, "{'data':{'nodes':{'c3':'Enabled'}}}",
                    "both back: Enabled");
        answer_all (h, true, 0);
    }
    feed_journal (h, "[{'name':'drain','context':{'idset':'2','nodelist':'c3',"
                     "'reason':'failed to unmount rabbit','overwrite':0}}]");
    flush (h);
    payload_is ("SystemStatus", 0, "{'data':{'nodes':{'c3':'Disabled'}}}",
                "the first rank of a shared host drained after a failed unmount: Disabled");
    answer_all (h, true, 0);
    feed_journal (h, "[{'name':'undrain','context':{'idset':'2','nodelist':'c3'}}]");
    flush (h);
    payload_is ("SystemStatus", 0, "{'data':{'nodes':{'c3':'Enabled'}}}",
                "undrained: Enabled");
    answer_all (h, true, 0);
    feed_journal (h, "[{'name':'offline','context':{'idset':'4'}}]");
    flush (h);
    payload_is ("SystemStatus", 0, "{'data':{'nodes':{'c4':'Disabled'}}}",
                "a rank after the shared host keeps its own host");
    answer_all (h, true, 0);
    dws_health_destroy (h);
}

static void test_failures_and_restarts (void)
{
    struct dws_health *h = system_create (true, true, true, false);
    system_sync (h);
    flush (h);
    answer_all (h, false, 0);
    ok (count ("timer-start") == 1, "failed updates arm a retry");
    json_t *t = nth ("timer-start", 0);
    ok (t && json_real_value (json_object_get (t, "after")) == DWS_HEALTH_RETRY_DELAY,
        "the retry comes after %g s", DWS_HEALTH_RETRY_DELAY);
    flush (h);
    ok (count ("sched-fluxion-resource.set_status") == 4 && count ("SystemStatus") == 1
            && count ("sched-fluxion-resource.remove_property") == 1,
        "the retry sends everything that failed again");
    answer_all (h, true, 0);
    none (h, "then nothing");

    reset ();
    dws_health_fluxion_restart (h, actions);
    flush (h);
    ok (count ("sched-fluxion-resource.set_status") == 0
            && count ("sched-fluxion-resource.remove_property") == 1,
        "a Fluxion restart: no ssd is sent before Fluxion says what it has");
    answer_all (h, true, 0);
    fluxion_says (h, "['/cl/chassis0/ssd0','/cl/chassis0/ssd1','/cl/chassis1/ssd0',"
                     "'/cl/chassis1/ssd1']");
    flush (h);
    ok (count ("sched-fluxion-resource.set_status") == 4 && count ("SystemStatus") == 0,
        "a Fluxion restart: Fluxion gets its state again, DWS does not");
    answer_all (h, true, 0);

    /* a new graph (fewer ssds) */
    dws_error_t err;
    json_t *graph = J ("{'ssds':{'r1':['/cl/chassis0/ssd0']},'nodes':{}}");
    reset ();
    ok (dws_health_graph (h, graph, actions, &err) == 0, "a new graph");
    json_decref (graph);
    flush (h);
    ok (count ("sched-fluxion-resource.set_status") == 1, "its one ssd is set");
    payload_is ("sched-fluxion-resource.remove_property", 0,
                "{'resource_path':['/cluster0/c1','/cluster0/c2','/cluster0/c3',"
                "'/cluster0/c4'],'key':'badrabbit'}",
                "a graph without node vertices: rv1 paths");

    /* a mount failure: badrabbit until the rabbit's next Storage event */
    answer_all (h, true, 0);
    json_t *hosts = J ("['c2','nosuch']");
    reset ();
    dws_health_mount_failed (h, hosts, actions);
    json_decref (hosts);
    flush (h);
    payload_is ("sched-fluxion-resource.set_property", 0,
                "{'sp_resource_path':['/cluster0/c2'],'sp_keyval':'badrabbit=bad'}",
                "a failed mount: badrabbit on the node");
    answer_all (h, true, 0);
    feed_storage (h, storage ("r1", "Ready", "Enabled", "Ready", "Ready"));
    flush (h);
    payload_is ("sched-fluxion-resource.remove_property", 0,
                "{'resource_path':['/cluster0/c2'],'key':'badrabbit'}",
                "the rabbit's next Storage event clears it");
    dws_health_destroy (h);

    /* a restarted service: everything is sent once */
    h = system_create (true, true, true, false);
    system_sync (h);
    feed_journal (h, "[{'name':'drain','context':{'idset':'0','nodelist':'c1',"
                     "'reason':'rabbit r1 link Offline','overwrite':0}}]");
    flush (h);
    payload_is ("resource.undrain", 0, "{'targets':'c1'}",
                "after a restart, a link drain whose link is Ready again is undrained");
    dws_health_destroy (h);
}

static void test_storm (void)
{
    struct dws_health *h = system_create (true, true, true, false);
    system_sync (h);
    flush (h);
    answer_all (h, true, 0);
    const char *st[] = {"Ready", "Offline", "Failed", "Ready"};
    for (int i = 0; i < 1000; i++)
        feed_storage (h, storage (i % 2 ? "r1" : "r2", st[i % 4], "Enabled", st[(i / 2) % 4],
                                  st[(i / 3) % 4]));
    feed_storage (h, storage ("r1", "Ready", "Enabled", "Ready", "Ready"));
    feed_storage (h, storage ("r2", "Ready", "Enabled", "Ready", "Ready"));
    none (h, "a storm of 1000 Storage events that ends where it began: nothing sent");
    for (int i = 0; i < 1000; i++)
        feed_storage (h, storage (i % 2 ? "r1" : "r2", st[i % 4], "Enabled", "Ready", "Ready"));
    feed_storage (h, storage ("r2", "Offline", "Enabled", "Ready", "Ready"));
    flush (h);
    ok (count ("sched-fluxion-resource.set_status") == 2
            && count ("sched-fluxion-resource.set_property") == 1 && json_array_size (actions) == 3,
        "a storm that ends with r2 down: 2 set_status + 1 set_property");
    dws_health_destroy (h);
}

static void test_storage_before_topology (void)
{
    struct dws_health *h = dws_health_create ();
    dws_error_t err;
    json_t *objs = json_array ();
    json_array_append_new (objs, storage ("r1", "Ready", "Enabled", "Ready", "Ready"));
    json_array_append_new (objs, storage ("r2", "Offline", "Enabled", "Ready", "Ready"));
    reset ();
    ok (dws_health_storage_sync (h, objs, actions, &err) == 0,
        "a Storage list before the SystemConfiguration is kept");
    json_decref (objs);
    json_t *topo = J ("{'c1':'r1','c2':'r1','c3':'r2','c4':'r2'}");
    ok (dws_health_topology (h, topo, actions, &err) == 0, "then the topology");
    json_decref (topo);
    json_t *view = dws_health_view (h);
    json_t *r = json_object_get (view, "rabbits");
    ok (json_is_true (json_object_get (json_array_get (r, 0), "up"))
            && json_is_false (json_object_get (json_array_get (r, 1), "up")),
        "the rabbits take their Storage as soon as they are known");
    json_decref (view);
    dws_health_destroy (h);
}

static void test_bad_input (void)
{
    struct dws_health *h = dws_health_create ();
    dws_error_t err;
    reset ();
    json_t *v = J ("['c1']");
    ok (dws_health_topology (h, v, actions, &err) < 0, "topology not an object: refused");
    is (err.text, "topology must be an object {compute: rabbit}", "... message");
    json_decref (v);
    v = J ("{'c1':3}");
    ok (dws_health_topology (h, v, actions, &err) < 0, "topology with a bad rabbit: refused");
    is (err.text, "topology: the rabbit of c1 is not a string", "... message");
    json_decref (v);
    v = J ("{}");
    ok (dws_health_storage (h, "ADDED", v, actions, &err) < 0, "Storage without a name");
    is (err.text, "Storage event needs an event type and metadata.name", "... message");
    ok (dws_health_storage_sync (h, v, actions, &err) < 0, "Storage sync not an array");
    ok (dws_health_journal (h, v, false, actions, &err) < 0, "journal not an array");
    json_decref (v);
    v = J ("[{'context':{}}]");
    ok (dws_health_journal (h, v, false, actions, &err) < 0, "journal event without a name");
    is (err.text, "journal event 0 has no name", "... message");
    json_decref (v);
    v = J ("[{'name':'restart','context':{}}]");
    ok (dws_health_journal (h, v, false, actions, &err) < 0, "restart without a nodelist");
    json_decref (v);
    v = J ("[{'name':'online','context':{'idset':'x-'}}]");
    ok (dws_health_journal (h, v, false, actions, &err) < 0, "online with a bad idset");
    json_decref (v);
    v = J ("[{'name':'drain','context':{}}]");
    ok (dws_health_journal (h, v, false, actions, &err) < 0, "drain without an idset");
    is (err.text, "journal drain event has no idset", "... message");
    json_decref (v);
    v = J ("{'ssds':[]}");
    ok (dws_health_graph (h, v, actions, &err) < 0, "graph with ssds not an object: refused");
    json_decref (v);
    ok (dws_health_flux_config (h, NULL, "c[", actions, &err) < 0, "bad drainable hostlist");
    v = J ("{'ok':true}");
    ok (dws_health_result (h, v, now, actions, &err) < 0, "a result without a token");
    json_decref (v);
    v = J ("{'token':'health:999','ok':false}");
    ok (dws_health_result (h, v, now, actions, &err) == 0 && json_array_size (actions) == 0,
        "a result for an unknown batch is ignored");
    json_decref (v);
    dws_health_destroy (h);
}

/* What Fluxion already has is not sent again: a service restart (a new
 * engine) against a Fluxion whose ssds are as Storage says costs nothing. */
static void test_fluxion_state (void)
{
    dws_error_t err;
    /* r1 up, r2 down in Fluxion already; Storage agrees */
    struct dws_health *h = dws_health_create ();
    json_t *topo = J ("{'c1':'r1','c2':'r1','c3':'r2','c4':'r2'}");
    json_t *graph = J ("{'ssds':{'r1':['/cl/chassis0/ssd0','/cl/chassis0/ssd1'],"
                       "'r2':['/cl/chassis1/ssd0','/cl/chassis1/ssd1']},'nodes':{}}");
    reset ();
    flush (h);
    ok (count (FIND) == 0, "no find before the graph is known");
    dws_health_graph (h, graph, actions, &err);
    flush (h);
    payload_is (FIND, 0, "{'criteria':'status=down','format':'jgf'}",
                "with the graph, Fluxion is asked which vertices it has down");
    /* the answer comes before the topology: it is kept */
    fluxion_says (h, "['/cl','/cl/chassis1','/cl/chassis1/ssd0','/cl/chassis1/ssd1']");
    dws_health_topology (h, topo, actions, &err);
    json_t *objs = json_array ();
    json_array_append_new (objs, storage ("r1", "Ready", "Enabled", "Ready", "Ready"));
    json_array_append_new (objs, storage ("r2", "Offline", "Enabled", "Ready", "Ready"));
    dws_health_storage_sync (h, objs, actions, &err);
    json_decref (objs);
    feed_journal (h, "[{'name':'restart','context':{'ranks':'0-3','online':'0-3',"
                     "'nodelist':'c[1-4]'}}]");
    flush (h);
    ok (count ("sched-fluxion-resource.set_status") == 0,
        "service restart, Fluxion as Storage says: no set_status");
    json_t *view = dws_health_view (h);
    json_t *r = json_object_get (view, "rabbits");
    is (json_string_value (json_object_get (json_array_get (r, 0), "fluxion")), "up",
        "the view has r1 up in Fluxion (from its answer)");
    is (json_string_value (json_object_get (json_array_get (r, 1), "fluxion")), "down",
        "and r2 down");
    json_decref (view);

    dws_health_destroy (h);

    /* the same, with the Storage list and a flush before the topology */
    h = dws_health_create ();
    reset ();
    dws_health_graph (h, graph, actions, &err);
    fluxion_says (h, "['/cl/chassis1/ssd0','/cl/chassis1/ssd1']");
    objs = json_array ();
    json_array_append_new (objs, storage ("r1", "Ready", "Enabled", "Ready", "Ready"));
    json_array_append_new (objs, storage ("r2", "Offline", "Enabled", "Ready", "Ready"));
    dws_health_storage_sync (h, objs, actions, &err);
    json_decref (objs);
    flush (h);
    reset ();
    dws_health_topology (h, topo, actions, &err);
    feed_journal (h, "[{'name':'restart','context':{'ranks':'0-3','online':'0-3',"
                     "'nodelist':'c[1-4]'}}]");
    flush (h);
    ok (count ("sched-fluxion-resource.set_status") == 0,
        "Fluxion's answer waits for the topology: still no set_status");

    /* r2 comes back: only its 2 vertices */
    answer_all (h, true, 0);
    feed_storage (h, storage ("r2", "Ready", "Enabled", "Ready", "Ready"));
    flush (h);
    ok (count ("sched-fluxion-resource.set_status") == 2, "r2 back: its 2 ssds up");

    /* Fluxion restarts with r1 half down (someone set one vertex by hand) */
    answer_all (h, true, 0);
    reset ();
    dws_health_fluxion_restart (h, actions);
    flush (h);
    ok (count ("sched-fluxion-resource.set_status") == 0 && count (FIND) == 1,
        "after a Fluxion restart no ssd goes out before its answer to a new find");
    view = dws_health_view (h);
    ok (json_is_false (json_object_get (view, "ready")), "and the view is not ready");
    json_decref (view);
    answer_all (h, true, 0);
    fluxion_says (h, "['/cl/chassis0/ssd1']");
    flush (h);
    ok (count ("sched-fluxion-resource.set_status") == 1,
        "a rabbit half down in Fluxion gets only the vertex that differs");
    payload_is ("sched-fluxion-resource.set_status", 0,
                "{'resource_path':'/cl/chassis0/ssd1','status':'up'}", "r1 ssd1 up");

    /* Fluxion could not be asked: every ssd goes out */
    answer_all (h, true, 0);
    reset ();
    dws_health_fluxion_restart (h, actions);
    fluxion_says (h, NULL);
    flush (h);
    ok (count ("sched-fluxion-resource.set_status") == 4,
        "its state unknown: every ssd is sent");
    answer_all (h, true, 0);
    none (h, "then nothing");

    /* a set_status still in flight when Fluxion restarts went out before
     * the new find on the same handle, so the answer has it */
    answer_all (h, true, 0);
    feed_storage (h, storage ("r2", "Offline", "Enabled", "Ready", "Ready"));
    flush (h); /* r2's 2 set_status down, not answered yet */
    json_t *in_flight = json_incref (actions);
    reset ();
    dws_health_fluxion_restart (h, actions);
    fluxion_says (h, "['/cl/chassis1/ssd0','/cl/chassis1/ssd1']");
    flush (h);
    ok (count ("sched-fluxion-resource.set_status") == 0,
        "a set_status sent before the find is in its answer: not sent again");
    json_decref (actions);
    actions = in_flight;
    answer_all (h, true, 0); /* they land */
    none (h, "then nothing");

    /* a find asked of a Fluxion that restarted before answering is asked again */
    reset ();
    dws_health_fluxion_restart (h, actions);
    flush (h);
    char old_find[64];
    snprintf (old_find, sizeof (old_find), "%s", find_token);
    dws_health_fluxion_restart (h, actions);
    flush (h);
    ok (count (FIND) == 1 && strcmp (find_token, old_find) != 0, "a new find after a restart");
    json_t *stale = json_pack ("{s:s s:b s:{s:n}}", "token", old_find, "ok", 1, "payload", "R");
    reset ();
    ok (dws_health_result (h, stale, now, actions, &err) == 0, "the old answer is ignored");
    json_decref (stale);
    flush (h);
    ok (count ("sched-fluxion-resource.set_status") == 0, "so nothing is sent on it");
    fluxion_says (h, "['/cl/chassis1/ssd0','/cl/chassis1/ssd1']");
    none (h, "the new answer agrees with Storage: nothing");
    feed_storage (h, storage ("r2", "Ready", "Enabled", "Ready", "Ready"));
    flush (h);
    answer_all (h, true, 0);

    /* answers that cannot be read, or that name vertices R's graph does not
     * have: the state is unknown and every ssd goes out, with a warning */
    const char *odd[] = {
        "{'nothing':1}", "{'R':{'version':1}}",
        "{'R':{'graph':{'nodes':[{'metadata':{'type':'ssd','paths':{'containment':"
        "'/other/chassis9/ssd0'}}}]}}}",
    };
    const char *warned[] = {
        "Fluxion's ssd statuses are unknown (its find answer has no R): giving it every"
        " rabbit's state",
        "Fluxion's ssd statuses are unknown (its find answer's R.graph is not a JGF graph"
        " (no nodes list)): giving it every rabbit's state",
        "Fluxion has ssd vertices down that are not in R's graph (1, e.g."
        " /other/chassis9/ssd0): giving it every rabbit's state",
    };
    for (size_t i = 0; i < sizeof (odd) / sizeof (odd[0]); i++) {
        reset ();
        dws_health_fluxion_restart (h, actions);
        json_t *ans = J ("%s", odd[i]);
        fluxion_answers (h, ans);
        json_decref (ans);
        json_t *logged = actions;
        actions = NULL;
        flush (h);
        json_t *both = json_array ();
        json_array_extend (both, logged);
        json_array_extend (both, actions);
        json_decref (logged);
        json_decref (actions);
        actions = both;
        ok (count ("sched-fluxion-resource.set_status") == 4, "odd answer %zu: all 4 sent", i);
        json_t *log = nth ("log", 0);
        is (json_string_value (json_object_get (log, "message")), warned[i], "... warned");
        answer_all (h, true, 0);
    }

    /* a failed set_status is sent again */
    feed_storage (h, storage ("r1", "Offline", "Enabled", "Ready", "Ready"));
    flush (h);
    answer_all (h, false, 0);
    flush (h);
    ok (count ("sched-fluxion-resource.set_status") == 2, "a failed set_status is sent again");

    /* bad answers */
    json_t *v = J ("{'a':1}");
    ok (dws_health_fluxion_state (h, v, actions, &err) < 0, "down not an array: refused");
    is (err.text, "fluxion-state 'down' must be an array of paths or null", "... message");
    json_decref (v);
    v = J ("['/cl/chassis0/ssd0', 7]");
    ok (dws_health_fluxion_state (h, v, actions, &err) < 0, "a path not a string: refused");
    is (err.text, "fluxion-state 'down'[1] is not a path string", "... message");
    json_decref (v);
    json_decref (topo);
    json_decref (graph);
    dws_health_destroy (h);
}

/* The rabbits' ssd capacity (Lustre refusals): none until the Storage
 * list has come, then the sum and the largest, up or down.  A Storage
 * event may come before the list (the watch's first events race the
 * list's answer): its capacity is recorded but not counted, or the
 * engine would refuse, at start-up, a Lustre job that the other rabbits
 * together hold ("more than all 1 rabbits hold").
 */
static void test_capacity (void)
{
    dws_error_t err;
    int64_t total, largest, count;
    struct dws_health *h = system_create (true, true, true, false);
    dws_health_capacity (h, &total, &largest, &count);
    ok (total == 0 && largest == 0 && count == 0, "no capacity before the Storage list");
    json_t *early = storage ("r1", "Ready", "Enabled", "Ready", "Ready");
    json_object_set_new (json_object_get (early, "status"), "capacity",
                         json_integer (4LL << 40));
    feed_storage (h, early);
    dws_health_capacity (h, &total, &largest, &count);
    ok (total == 0 && largest == 0 && count == 0,
        "a Storage event before the list: still no capacity (got %lld B on %lld rabbits)",
        (long long)total, (long long)count);
    json_t *r1 = storage ("r1", "Ready", "Enabled", "Ready", "Ready");
    json_t *r2 = storage ("r2", "Offline", "Enabled", "Ready", "Ready");
    json_object_set_new (json_object_get (r1, "status"), "capacity",
                         json_integer (4LL << 40));
    json_object_set_new (json_object_get (r2, "status"), "capacity",
                         json_integer (2LL << 40));
    json_t *objs = json_pack ("[oo]", r1, r2);
    reset ();
    ok (dws_health_storage_sync (h, objs, actions, &err) == 0, "Storage sync accepted");
    json_decref (objs);
    dws_health_capacity (h, &total, &largest, &count);
    ok (total == 6LL << 40 && largest == 4LL << 40 && count == 2,
        "the sum and the largest of both rabbits' capacity, the Offline one too");
    feed_storage (h, storage ("r2", "Ready", "Enabled", "Ready", "Ready"));
    dws_health_capacity (h, &total, &largest, &count);
    ok (total == 4LL << 40 && count == 1, "a Storage without a capacity counts for none");
    dws_health_destroy (h);
}

static json_int_t view_int (json_t *view, size_t i, const char *key, bool *null)
{
    json_t *v = json_object_get (json_array_get (json_object_get (view, "rabbits"), i), key);
    *null = json_is_null (v);
    return json_integer_value (v);
}

/* status.capacity is free space (DWS #284): a rabbit's total is the sum
 * of status.devices[].capacity (a failed drive reports 0), and the view
 * shows total ("capacity"), free and used.  A Storage that lists no
 * device capacity gives status.capacity as its total.
 */
static void test_capacity_devices (void)
{
    dws_error_t err;
    int64_t total, largest, count;
    bool null;
    struct dws_health *h = system_create (true, true, true, false);
    json_t *view = dws_health_view (h);
    view_int (view, 0, "free", &null);
    ok (null, "free is null before any Storage");
    view_int (view, 0, "used", &null);
    ok (null, "used is null before any Storage");
    json_decref (view);
    json_t *r1 = storage ("r1", "Ready", "Enabled", "Ready", "Ready");
    json_t *st = json_object_get (r1, "status");
    json_object_set_new (st, "capacity", json_integer (3LL << 40));
    json_object_set_new (st, "devices",
                         J ("[{'slot':'0','capacity':%lld,'status':'Ready'},"
                            "{'slot':'1','capacity':%lld,'status':'Ready'},"
                            "{'slot':'2','capacity':0,'status':'Failed'}]",
                            (long long)(4LL << 40), (long long)(4LL << 40)));
    json_t *r2 = storage ("r2", "Ready", "Enabled", "Ready", "Ready");
    json_object_set_new (json_object_get (r2, "status"), "capacity", json_integer (2LL << 40));
    json_t *objs = json_pack ("[oo]", r1, r2);
    reset ();
    ok (dws_health_storage_sync (h, objs, actions, &err) == 0, "Storage sync accepted");
    json_decref (objs);
    dws_health_capacity (h, &total, &largest, &count);
    ok (total == 10LL << 40 && largest == 8LL << 40 && count == 2,
        "totals: r1's drives (8 TiB, not its 3 TiB free), r2's capacity (2 TiB)");
    view = dws_health_view (h);
    ok (view_int (view, 0, "capacity", &null) == 8LL << 40, "r1's capacity is its total");
    ok (view_int (view, 0, "free", &null) == 3LL << 40 && !null, "r1's free is status.capacity");
    ok (view_int (view, 0, "used", &null) == 5LL << 40 && !null, "r1's used is total - free");
    ok (view_int (view, 1, "capacity", &null) == 2LL << 40
            && view_int (view, 1, "free", &null) == 2LL << 40
            && view_int (view, 1, "used", &null) == 0,
        "r2 (no devices): total and free its status.capacity, 0 used");
    json_decref (view);
    dws_health_destroy (h);
}

/* --- holds: a job's ssd vertices kept down until its Teardown ------------ */

#define SET_STATUS "sched-fluxion-resource.set_status"

static int hold (struct dws_health *h, json_int_t id, const char *paths)
{
    dws_error_t err;
    json_t *p = J ("%s", paths);
    reset ();
    int rc = dws_health_hold (h, id, p, 0, now, actions, &err);
    if (rc < 0)
        diag ("hold refused: %s", err.text);
    json_decref (p);
    return rc;
}

/* A hold, its set_status sent and answered (ok_). */
static void hold_answered (struct dws_health *h, json_int_t id, const char *paths, bool ok_)
{
    hold (h, id, paths);
    flush (h);
    answer_all (h, ok_, 0);
}

static void unhold (struct dws_health *h, json_int_t id)
{
    reset ();
    dws_health_unhold (h, id, now, actions);
}

/* The ids dws_health_holds_applied lists now, as compact JSON. */
static void applied_list_is (struct dws_health *h, const char *expect, const char *msg)
{
    json_t *got = dws_health_holds_applied (h);
    char *s = dump (got);
    is (s, expect, "%s", msg);
    free (s);
    json_decref (got);
}

/* o[key] as compact JSON (sorted keys) is 'fmt' with the hold's start. */
static void member_is (json_t *o, const char *key, const char *fmt, double since,
                       const char *msg)
{
    char expect[512];
    snprintf (expect, sizeof (expect), fmt, since);
    char *got = dump (json_object_get (o, key));
    is (got, expect, "%s", msg);
    free (got);
}

/* Answer the first n rpc actions of the last flush (ok or not); the others
 * stay in 'actions' for later. */
static void answer_first (struct dws_health *h, size_t n, bool ok_)
{
    json_t *pending = json_incref (actions);
    json_t *rest = json_array ();
    json_t *out = json_array ();
    size_t i;
    json_t *a;
    json_array_foreach (pending, i, a) {
        json_t *tok = json_object_get (a, "token");
        if (!tok || i >= n) {
            json_array_append (rest, a);
            continue;
        }
        json_t *ev = json_pack ("{s:O s:b s:s}", "token", tok, "ok", ok_, "errstr",
                                ok_ ? "" : "injected failure");
        dws_error_t err;
        if (dws_health_result (h, ev, now, out, &err) < 0)
            diag ("result refused: %s", err.text);
        json_decref (ev);
    }
    json_decref (pending);
    json_decref (out);
    json_decref (actions);
    actions = rest;
}

/* The set_status of the last flush, as "path=status ..." in order. */
static void statuses_are (const char *expect, const char *msg)
{
    char buf[1024] = "";
    size_t len = 0;
    json_t *a;
    for (size_t k = 0; (a = nth (SET_STATUS, k)) != NULL; k++) {
        json_t *p = json_object_get (a, "payload");
        len += (size_t)snprintf (buf + len, sizeof (buf) - len, "%s%s=%s", len ? " " : "",
                                 json_string_value (json_object_get (p, "resource_path")),
                                 json_string_value (json_object_get (p, "status")));
    }
    is (buf, expect, "%s", msg);
}

static struct dws_health *healthy_system (void)
{
    struct dws_health *h = system_create (true, true, true, false);
    system_sync (h);
    flush (h);
    answer_all (h, true, 0);
    none (h, "a healthy system, every ssd up: nothing more to send");
    return h;
}

static void test_hold_and_unhold (void)
{
    struct dws_health *h = healthy_system ();

    ok (!dws_health_hold_applied (h, 7), "a job that holds nothing: not applied");
    ok (!dws_health_holding (h, 7), "... nor holding");
    double t7 = now;
    ok (hold (h, 7, "['/cl/chassis0/ssd1','/cl/chassis1/ssd0']") == 0, "job 7 holds 2 ssds");
    ok (dws_health_holding (h, 7) && !dws_health_holding (h, 8),
        "holding: job 7 from its hold, before any is applied; not job 8");
    ok (count ("timer-start") == 1, "a hold arms the flush");
    ok (!dws_health_hold_applied (h, 7), "not applied before anything is sent");
    applied_list_is (h, "[]", "holds_applied: none yet");
    flush (h);
    statuses_are ("/cl/chassis0/ssd1=down /cl/chassis1/ssd0=down",
                  "the flush sets exactly the held vertices down (one RPC each)");
    ok (!dws_health_hold_applied (h, 7), "sent, not answered: not applied");
    answer_first (h, 1, true);
    ok (!dws_health_hold_applied (h, 7), "one of two answered: not applied");
    applied_list_is (h, "[]", "holds_applied: none yet");
    answer_first (h, 1, true);
    ok (dws_health_hold_applied (h, 7), "both answered: applied");
    applied_list_is (h, "[7]", "holds_applied lists job 7 once");
    applied_list_is (h, "[]", "... and not again");
    none (h, "applied: nothing more to send");

    json_t *view = dws_health_view (h);
    json_t *r1 = json_array_get (json_object_get (view, "rabbits"), 0);
    member_is (r1, "held",
               "[{\"down\":true,\"job\":7,\"since\":%.1f,\"ssds\":[\"/cl/chassis0/ssd1\"]}]",
               t7, "the view: r1's held ssd, its job, since when, down in Fluxion");
    is (json_string_value (json_object_get (r1, "fluxion")), "up",
        "r1's other ssd is up (FLUXION says what the free vertices are)");
    member_is (view, "holds",
               "[{\"applied\":true,\"job\":7,\"paths\":[\"/cl/chassis0/ssd1\","
               "\"/cl/chassis1/ssd0\"],\"since\":%.1f}]",
               t7, "the view's holds list every hold");
    json_decref (view);

    /* a second job holds one of the same vertices: already down */
    ok (hold (h, 8, "['/cl/chassis1/ssd0']") == 0, "job 8 holds r2's ssd0 too");
    ok (dws_health_hold_applied (h, 8), "a vertex already down in Fluxion: applied at once");
    applied_list_is (h, "[8]", "holds_applied lists job 8");
    none (h, "nothing sent for it");

    unhold (h, 7);
    flush (h);
    statuses_are ("/cl/chassis0/ssd1=up",
                  "job 7's hold ends: its ssd no one else holds goes up, r2's ssd0 stays down");
    answer_all (h, true, 0);
    ok (!dws_health_hold_applied (h, 7), "an ended hold is not applied");
    ok (!dws_health_holding (h, 7) && dws_health_holding (h, 8),
        "... nor holding; job 8 still is");
    unhold (h, 8);
    flush (h);
    statuses_are ("/cl/chassis1/ssd0=up", "job 8's hold ends: r2's ssd0 up");
    answer_all (h, true, 0);
    unhold (h, 8);
    none (h, "ending a hold twice: nothing");

    /* the rabbit is down when the hold ends: the vertex stays down */
    hold (h, 9, "['/cl/chassis0/ssd0']");
    flush (h);
    statuses_are ("/cl/chassis0/ssd0=down", "job 9 holds r1's ssd0");
    answer_all (h, true, 0);
    feed_storage (h, storage ("r1", "Offline", "Enabled", "Ready", "Ready"));
    flush (h);
    statuses_are ("/cl/chassis0/ssd1=down", "r1 down: only its free ssd is sent down");
    answer_all (h, true, 0);
    unhold (h, 9);
    flush (h);
    statuses_are ("", "job 9's hold ends while r1 is down: its ssd stays down");
    feed_storage (h, storage ("r1", "Ready", "Enabled", "Ready", "Ready"));
    flush (h);
    statuses_are ("/cl/chassis0/ssd0=up /cl/chassis0/ssd1=up", "r1 back: both up");
    answer_all (h, true, 0);
    dws_health_destroy (h);
}

static void test_hold_rabbit_flaps (void)
{
    struct dws_health *h = healthy_system ();
    hold_answered (h, 7, "['/cl/chassis0/ssd0']", true);
    ok (dws_health_hold_applied (h, 7), "job 7's hold is applied");
    applied_list_is (h, "[7]", "and listed");

    feed_storage (h, storage ("r1", "Offline", "Enabled", "Ready", "Ready"));
    flush (h);
    statuses_are ("/cl/chassis0/ssd1=down", "r1 down during the hold: its free ssd down");
    answer_all (h, true, 0);
    feed_storage (h, storage ("r1", "Ready", "Enabled", "Ready", "Ready"));
    flush (h);
    statuses_are ("/cl/chassis0/ssd1=up",
                  "r1 Ready again during the hold: only its free ssd comes up");
    answer_all (h, true, 0);
    ok (dws_health_hold_applied (h, 7), "the hold is still applied");
    applied_list_is (h, "[]", "and not listed again");

    json_t *view = dws_health_view (h);
    json_t *r1 = json_array_get (json_object_get (view, "rabbits"), 0);
    is (json_string_value (json_object_get (r1, "fluxion")), "up", "the view: r1 up");
    ok (json_array_size (json_object_get (r1, "held")) == 1, "with one held entry");
    json_decref (view);

    /* every vertex of a rabbit held: FLUXION tells them */
    hold_answered (h, 8, "['/cl/chassis0/ssd1']", true);
    view = dws_health_view (h);
    r1 = json_array_get (json_object_get (view, "rabbits"), 0);
    is (json_string_value (json_object_get (r1, "fluxion")), "down",
        "every r1 ssd held: the view says down");
    json_decref (view);

    /* holding again replaces the paths */
    hold (h, 8, "['/cl/chassis1/ssd1']");
    flush (h);
    statuses_are ("/cl/chassis0/ssd1=up /cl/chassis1/ssd1=down",
                  "job 8 holds another ssd instead: the old one up, the new one down");
    answer_all (h, true, 0);
    ok (dws_health_hold_applied (h, 8), "its new hold is applied");
    dws_health_destroy (h);
}

/* Fluxion restarts and answers find with these vertices down (NULL: the
 * find fails); then a flush. */
static void fluxion_restarts (struct dws_health *h, const char *down)
{
    reset ();
    dws_health_fluxion_restart (h, actions);
    fluxion_says (h, down);
    flush (h);
}

static void test_hold_fluxion_restart (void)
{
    struct dws_health *h = healthy_system ();
    hold_answered (h, 7, "['/cl/chassis0/ssd0','/cl/chassis0/ssd1']", true);
    applied_list_is (h, "[7]", "job 7's hold applied");

    /* Fluxion restarts: its graph (dws2jgf) comes back with every ssd down */
    reset ();
    dws_health_fluxion_restart (h, actions);
    ok (!dws_health_hold_applied (h, 7), "after a Fluxion restart the hold is not applied");
    applied_list_is (h, "[]", "nothing listed");
    flush (h);
    ok (count (SET_STATUS) == 0 && count (FIND) == 1, "no set_status before its find answer");
    fluxion_says (h, "['/cl/chassis0/ssd0','/cl/chassis0/ssd1','/cl/chassis1/ssd0',"
                     "'/cl/chassis1/ssd1']");
    flush (h);
    statuses_are ("/cl/chassis1/ssd0=up /cl/chassis1/ssd1=up",
                  "Fluxion has them all down: only r2's free ssds go up, the held stay down");
    ok (dws_health_hold_applied (h, 7), "Fluxion said the held ones are down: applied again");
    applied_list_is (h, "[7]", "job 7 listed again");
    answer_all (h, true, 0);

    /* a Fluxion that does not have them down: sent again */
    fluxion_restarts (h, "[]");
    statuses_are ("/cl/chassis0/ssd0=down /cl/chassis0/ssd1=down",
                  "a Fluxion with nothing down: the held ones are sent down again");
    ok (!dws_health_hold_applied (h, 7), "not applied until answered");
    answer_all (h, true, 0);
    ok (dws_health_hold_applied (h, 7), "answered: applied");
    applied_list_is (h, "[7]", "listed again");

    /* unknown state (find failed): every vertex goes out, held ones down */
    fluxion_restarts (h, NULL);
    statuses_are ("/cl/chassis0/ssd0=down /cl/chassis0/ssd1=down /cl/chassis1/ssd0=up"
                  " /cl/chassis1/ssd1=up",
                  "Fluxion's state unknown: every vertex, the held ones down");
    answer_all (h, true, 0);
    ok (dws_health_hold_applied (h, 7), "applied");
    dws_health_destroy (h);
}

static void test_hold_failures (void)
{
    struct dws_health *h = healthy_system ();
    hold_answered (h, 7, "['/cl/chassis1/ssd1']", false);
    ok (count ("log") == 1, "a failed set_status down is logged");
    ok (count ("timer-start") == 1, "and the flush armed for the retry");
    ok (json_real_value (json_object_get (nth ("timer-start", 0), "after"))
            == DWS_HEALTH_RETRY_DELAY,
        "after DWS_HEALTH_RETRY_DELAY");
    ok (!dws_health_hold_applied (h, 7), "failed: not applied");
    applied_list_is (h, "[]", "not listed");
    flush (h);
    statuses_are ("/cl/chassis1/ssd1=down", "the retry sends it again");
    answer_all (h, true, 0);
    ok (dws_health_hold_applied (h, 7), "answered: applied");
    applied_list_is (h, "[7]", "listed");

    /* answers of older batches do not apply a newer state: down (A), up
     * (B), down again (C); A's answer comes while C is in flight */
    unhold (h, 7);
    flush (h); /* B: up */
    json_t *b = json_incref (actions);
    hold (h, 7, "['/cl/chassis1/ssd1']");
    flush (h); /* C: down */
    json_t *c = json_incref (actions);
    json_decref (actions);
    actions = b;
    answer_all (h, true, 0);
    ok (!dws_health_hold_applied (h, 7), "the up's answer does not apply the new hold");
    json_decref (actions);
    actions = c;
    answer_all (h, true, 0);
    ok (dws_health_hold_applied (h, 7), "the down's answer does");

    /* a failure of the older batch leaves the newer one alone */
    unhold (h, 7);
    flush (h);
    b = json_incref (actions);
    hold (h, 7, "['/cl/chassis1/ssd1']");
    flush (h);
    c = json_incref (actions);
    json_decref (actions);
    actions = c;
    answer_all (h, true, 0);
    ok (dws_health_hold_applied (h, 7), "the newer down answered: applied");
    json_decref (actions);
    actions = b;
    answer_all (h, false, 0);
    ok (dws_health_hold_applied (h, 7), "the older up failing afterwards changes nothing");
    flush (h);
    statuses_are ("", "and nothing is sent again for it");
    dws_health_destroy (h);
}

static void test_hold_unknown_paths (void)
{
    dws_error_t err;
    struct dws_health *h = healthy_system ();
    double t7 = now;
    ok (hold (h, 7, "['/cl/chassis2/ssd0','/cl/chassis0/ssd0']") == 0,
        "a hold with a path the graph does not have is kept");
    flush (h);
    statuses_are ("/cl/chassis0/ssd0=down", "the known one is sent down");
    answer_all (h, true, 0);
    ok (!dws_health_hold_applied (h, 7), "not applied while a path is unknown");
    json_t *view = dws_health_view (h);
    member_is (view, "holds",
               "[{\"applied\":false,\"job\":7,\"paths\":[\"/cl/chassis2/ssd0\","
               "\"/cl/chassis0/ssd0\"],\"since\":%.1f}]",
               t7, "the view lists the hold, not applied");
    json_decref (view);

    /* a graph that has it (a new rabbit r3, not in the topology) */
    reset ();
    json_t *graph = J ("{'ssds':{'r1':['/cl/chassis0/ssd0','/cl/chassis0/ssd1'],"
                       "'r2':['/cl/chassis1/ssd0','/cl/chassis1/ssd1'],"
                       "'r3':['/cl/chassis2/ssd0','/cl/chassis2/ssd1']},"
                       "'nodes':{'c1':'/cl/chassis0/c1','c2':'/cl/chassis0/c2',"
                       "'c3':'/cl/chassis1/c3','c4':'/cl/chassis1/c4'}%s}", graph_extra);
    ok (dws_health_graph (h, graph, actions, &err) == 0, "a graph with r3");
    json_decref (graph);
    flush (h);
    statuses_are ("/cl/chassis0/ssd0=down /cl/chassis0/ssd1=up /cl/chassis1/ssd0=up"
                  " /cl/chassis1/ssd1=up /cl/chassis2/ssd0=down",
                  "a new graph: every vertex again, the held r3 one down, r3's free one left");
    answer_all (h, true, 0);
    ok (dws_health_hold_applied (h, 7), "every path known and down: applied");
    applied_list_is (h, "[7]", "listed");
    unhold (h, 7);
    flush (h);
    statuses_are ("/cl/chassis0/ssd0=up",
                  "hold ends: r1's ssd up; r3 (not in the topology) stays down");
    dws_health_destroy (h);

    /* an empty hold and Fluxion off: nothing to wait for */
    h = healthy_system ();
    ok (hold (h, 5, "[]") == 0, "an empty hold");
    ok (dws_health_hold_applied (h, 5), "is applied at once");
    applied_list_is (h, "[5]", "and listed");
    none (h, "nothing sent");
    dws_health_destroy (h);
    h = system_create (false, true, true, false);
    system_sync (h);
    ok (hold (h, 6, "['/cl/chassis0/ssd0']") == 0, "without Fluxion a hold is accepted");
    ok (dws_health_hold_applied (h, 6), "and applied at once");
    applied_list_is (h, "[6]", "listed");
    flush (h);
    ok (count (SET_STATUS) == 0, "no set_status without Fluxion");
    dws_health_destroy (h);

    /* bad holds */
    h = dws_health_create ();
    json_t *v = J ("{'a':1}");
    ok (dws_health_hold (h, 3, v, 0, now, actions, &err) < 0, "paths not an array: refused");
    is (err.text, "hold of job 3: paths must be an array of ssd vertex paths", "... message");
    json_decref (v);
    v = J ("['/cl/chassis0/ssd0', 4]");
    ok (dws_health_hold (h, 3, v, 0, now, actions, &err) < 0, "a path not a string: refused");
    is (err.text, "hold of job 3: paths[1] is not a path string", "... message");
    json_decref (v);
    ok (!dws_health_hold_applied (h, 3), "a refused hold holds nothing");
    dws_health_destroy (h);
}

/* A service restart: holds come back (from the Workflows) before the
 * Storage list; the held vertices need no rabbit health to go down, and
 * the time recorded before the restart is kept. */
static void test_hold_at_start (void)
{
    dws_error_t err;
    struct dws_health *h = system_create (true, true, true, false);
    json_t *p = J ("['/cl/chassis1/ssd1']");
    reset ();
    ok (dws_health_hold (h, 7, p, 500.0, now, actions, &err) == 0,
        "a hold with its recorded start, before the Storage list");
    ok (count ("timer-start") == 1, "arms the flush");
    flush (h);
    statuses_are ("", "Fluxion (fresh graph) has it down already: nothing sent");
    ok (dws_health_hold_applied (h, 7), "applied from Fluxion's find answer");
    ok (dws_health_hold (h, 7, p, 0, now, actions, &err) == 0, "held again");
    json_decref (p);
    none (h, "nothing to send for it");
    system_sync (h);
    flush (h);
    statuses_are ("/cl/chassis0/ssd0=up /cl/chassis0/ssd1=up /cl/chassis1/ssd0=up",
                  "the Storage list: the free vertices up, the held stays down");
    json_t *view = dws_health_view (h);
    json_t *hold0 = json_array_get (json_object_get (view, "holds"), 0);
    ok (json_real_value (json_object_get (hold0, "since")) == 500.0,
        "the recorded start is kept by the view, and by holding again");
    json_decref (view);
    dws_health_destroy (h);

    /* a Fluxion with the vertex up, before the Storage list: sent down */
    h = dws_health_create ();
    reset ();
    json_t *topo = J ("{'c1':'r1','c2':'r1','c3':'r2','c4':'r2'}");
    json_t *graph = J ("{'ssds':{'r1':['/cl/chassis0/ssd0','/cl/chassis0/ssd1'],"
                       "'r2':['/cl/chassis1/ssd0','/cl/chassis1/ssd1']},'nodes':{}}");
    dws_health_topology (h, topo, actions, &err);
    dws_health_graph (h, graph, actions, &err);
    hold (h, 7, "['/cl/chassis1/ssd1']");
    fluxion_says (h, "[]");
    flush (h);
    statuses_are ("/cl/chassis1/ssd1=down",
                  "before the Storage list only the held vertex is sent (down)");
    answer_all (h, true, 0);
    ok (dws_health_hold_applied (h, 7), "and applied once answered");
    json_decref (topo);
    json_decref (graph);
    dws_health_destroy (h);
}

#define FENCED_C1 "rabbit r1 fenced this node: rabbit jobs fail here until it is unfenced"

static json_t *compute_of (json_t *view, size_t rabbit, size_t k)
{
    return json_array_get (json_object_get (json_array_get (json_object_get (view, "rabbits"),
                                                            rabbit),
                                            "computes"),
                           k);
}

/* Storage, journal, graph and Fluxion known, but not which computes each
 * rabbit serves (the SystemConfiguration comes late): no ssd state can
 * have been applied, so health is not ready and lists no rabbit. */
static void test_not_ready_before_the_topology (void)
{
    dws_error_t err;
    struct dws_health *h = dws_health_create ();
    struct dws_health_config cfg = {.fluxion = true, .namespace = "default"};
    dws_health_configure (h, &cfg);
    reset ();
    json_t *graph = J ("{'ssds':{'r1':['/cl/chassis0/ssd0'],'r2':['/cl/chassis1/ssd0']},"
                       "'nodes':{}}");
    dws_health_graph (h, graph, actions, &err);
    json_decref (graph);
    fluxion_says (h, "[]");
    json_t *objs = json_array ();
    json_array_append_new (objs, storage ("r1", "Ready", "Enabled", "Ready", "Ready"));
    json_array_append_new (objs, storage ("r2", "Ready", "Enabled", "Ready", "Ready"));
    dws_health_storage_sync (h, objs, actions, &err);
    json_decref (objs);
    feed_journal (h, "[{'name':'restart','context':{'ranks':'0-3','online':'0-3',"
                     "'nodelist':'c[1-4]'}}]");
    flush (h);
    answer_all (h, true, 0);
    ok (!dws_health_ready (h), "without the topology: not ready");
    json_t *view = dws_health_view (h);
    ok (json_is_false (json_object_get (view, "ready"))
            && json_array_size (json_object_get (view, "rabbits")) == 0,
        "and the view says so, with no rabbit listed");
    json_decref (view);
    json_t *topo = J ("{'c1':'r1','c2':'r1','c3':'r2','c4':'r2'}");
    ok (dws_health_topology (h, topo, actions, &err) == 0, "the topology comes");
    json_decref (topo);
    flush (h);
    answer_all (h, true, 0);
    ok (dws_health_ready (h), "then ready");
    view = dws_health_view (h);
    ok (json_is_true (json_object_get (view, "ready"))
            && json_array_size (json_object_get (view, "rabbits")) == 2,
        "and the view lists its two rabbits, ready");
    json_decref (view);
    dws_health_destroy (h);
}

static void test_fenced_computes (void)
{
    struct dws_health *h = system_create (true, true, false, false);
    system_sync (h);
    flush (h);
    answer_all (h, true, 0);
    ok (dws_health_ready (h), "ready once Fluxion has its state");

    /* a compute fenced: drained with a reason saying so, before rabbit jobs go */
    feed_storage (h, storage ("r1", "Ready", "Enabled", "Fenced", "Ready"));
    flush (h);
    ok (count ("sched-fluxion-resource.set_status") == 0, "a fenced compute leaves the ssds up");
    payload_is ("resource.drain", 0,
                "{'targets':'c1','mode':'update','reason':'" FENCED_C1 "'}",
                "c1 fenced: drained, the reason names the rabbit and the fencing");
    ok (!dws_health_ready (h), "not ready while the drain of a fenced compute is in flight");
    answer_all (h, true, 0);
    ok (dws_health_ready (h), "ready once the drain is answered");
    feed_journal (h, "[{'name':'drain','context':{'idset':'0','nodelist':'c1',"
                     "'reason':'" FENCED_C1 "','overwrite':0}}]");
    json_t *view = dws_health_view (h);
    ok (json_is_true (json_object_get (compute_of (view, 0, 0), "fenced")),
        "the view has c1 fenced");
    ok (json_is_false (json_object_get (compute_of (view, 0, 1), "fenced")),
        "and c2 not fenced");
    json_decref (view);
    feed_storage (h, storage ("r1", "Ready", "Enabled", "Fenced", "Ready"));
    none (h, "the same Storage again: nothing (edge-triggered)");

    /* unfenced: undrained */
    feed_storage (h, storage ("r1", "Ready", "Enabled", "Ready", "Ready"));
    flush (h);
    payload_is ("resource.undrain", 0, "{'targets':'c1'}", "c1 unfenced: undrained");
    answer_all (h, true, 0);
    feed_journal (h, "[{'name':'undrain','context':{'idset':'0','nodelist':'c1'}}]");
    none (h, "the journal shows the undrain: nothing else");

    /* a link drain of ours becomes a fenced drain (overwrite), not an admin's */
    feed_storage (h, storage ("r1", "Ready", "Enabled", "Offline", "Ready"));
    flush (h);
    payload_is ("resource.drain", 0,
                "{'targets':'c1','mode':'update','reason':'rabbit r1 link Offline'}",
                "c1's link down: drained for the link");
    answer_all (h, true, 0);
    feed_journal (h, "[{'name':'drain','context':{'idset':'0','nodelist':'c1',"
                     "'reason':'rabbit r1 link Offline','overwrite':0}}]");
    feed_storage (h, storage ("r1", "Ready", "Enabled", "Fenced", "Ready"));
    flush (h);
    payload_is ("resource.drain", 0,
                "{'targets':'c1','mode':'overwrite','reason':'" FENCED_C1 "'}",
                "then fenced: our link drain's reason is overwritten");
    answer_all (h, true, 0);
    feed_journal (h, "[{'name':'drain','context':{'idset':'0','nodelist':'c1',"
                     "'reason':'" FENCED_C1 "','overwrite':1}}]");
    feed_storage (h, storage ("r1", "Ready", "Enabled", "Offline", "Ready"));
    flush (h);
    ok (count ("resource.drain") == 0 && count ("resource.undrain") == 0,
        "fenced then merely down: the drain stays as it is");
    answer_all (h, true, 0);
    feed_storage (h, storage ("r1", "Ready", "Enabled", "Ready", "Ready"));
    flush (h);
    payload_is ("resource.undrain", 0, "{'targets':'c1'}", "link Ready: undrained");
    answer_all (h, true, 0);
    feed_journal (h, "[{'name':'undrain','context':{'idset':'0','nodelist':'c1'}}]");

    /* an admin's drain is left as it is */
    feed_journal (h, "[{'name':'drain','context':{'idset':'1','nodelist':'c2',"
                     "'reason':'bad DIMM','overwrite':0}}]");
    feed_storage (h, storage ("r1", "Ready", "Enabled", "Ready", "Fenced"));
    flush (h);
    ok (count ("resource.drain") == 0, "an admin-drained compute fenced: not drained again");
    answer_all (h, true, 0);
    feed_storage (h, storage ("r1", "Ready", "Enabled", "Ready", "Ready"));
    flush (h);
    ok (count ("resource.undrain") == 0, "unfenced: the admin's drain stays");
    answer_all (h, true, 0);

    /* a Degraded link is usable (DWS: ready, degraded) */
    feed_storage (h, storage ("r2", "Ready", "Enabled", "Degraded", "Ready"));
    none (h, "a Degraded link: not down, nothing sent");
    dws_health_destroy (h);
}

/* A pick's answer against what is expected: "paths|reserved" and, for a
 * chassis pick, "|hosts"; "error: TEXT" when it refused.  Takes the
 * answer's references. */
static void picked_is (json_t *paths, json_t *reserved, json_t *hosts, const dws_error_t *err,
                       const char *expect, const char *msg)
{
    char got[sizeof (err->text) + 64];
    if (paths) {
        char *p = dump (paths), *r = dump (reserved), *n = hosts ? dump (hosts) : NULL;
        snprintf (got, sizeof (got), "%s|%s%s%s", p, r, n ? "|" : "", n ? n : "");
        free (p);
        free (r);
        free (n);
    }
    else
        snprintf (got, sizeof (got), "error: %s", err->text);
    is (got, expect, "%s", msg);
    json_decref (paths);
    json_decref (reserved);
    json_decref (hosts);
}

static void pick_is (struct dws_health *h, int64_t gib, const char *avoid, const char *leave,
                     const char *expect, const char *msg)
{
    dws_error_t err = {0};
    json_t *reserved = NULL;
    json_t *av = avoid ? J ("%s", avoid) : NULL;
    json_t *lv = leave ? J ("%s", leave) : NULL;
    json_t *paths = dws_health_pick (h, gib, av, lv, &reserved, &err);
    picked_is (paths, reserved, NULL, &err, expect, msg);
    json_decref (av);
    json_decref (lv);
}

static void pick_chassis_is (struct dws_health *h, int64_t chassis, int64_t per,
                             int64_t node_gib, const char *leave, const char *expect,
                             const char *msg)
{
    dws_error_t err = {0};
    json_t *reserved = NULL, *hosts = NULL;
    json_t *lv = leave ? J ("%s", leave) : NULL;
    json_t *paths = dws_health_pick_chassis (h, chassis, per, node_gib, NULL, lv, &reserved,
                                             &hosts, &err);
    picked_is (paths, reserved, hosts, &err, expect, msg);
    json_decref (lv);
}

/* Vertices for the service's own holds (pre-staging): the most room
 * first, within each rabbit the lowest vertices, never a held, avoided or
 * down one, and never what the jobs ahead of it need. */
static void test_pick (void)
{
    graph_extra = ",'ssd_gib':{'r1':100,'r2':100}";
    struct dws_health *h = healthy_system ();
    graph_extra = "";

    pick_is (h, 150, NULL, NULL,
             "[\"/cl/chassis0/ssd0\",\"/cl/chassis0/ssd1\"]|{\"r1\":200}",
             "150 GiB: two 100 GiB vertices of one rabbit (equal room: the graph's first)");
    pick_is (h, 100, "{'/cl/chassis1/ssd0':true}", NULL,
             "[\"/cl/chassis0/ssd0\"]|{\"r1\":100}",
             "an avoided vertex leaves r2 less room: r1's lowest");
    pick_is (h, 400, NULL, NULL,
             "[\"/cl/chassis0/ssd0\",\"/cl/chassis0/ssd1\",\"/cl/chassis1/ssd0\","
             "\"/cl/chassis1/ssd1\"]|{\"r1\":200,\"r2\":200}",
             "every free vertex when all are wanted");
    pick_is (h, 500, NULL, NULL,
             "error: 500 GiB of rabbit ssd wanted, 400 GiB free on the rabbits that are up",
             "more than is free: refused, saying how much is");
    pick_is (h, 200, NULL, "[[3,100]]",
             "error: 200 GiB of rabbit ssd wanted (2 vertices), 3 of the 4 free vertices"
             " kept for the jobs ahead of it that get their ssd with their nodes",
             "what the jobs ahead need is kept free");
    pick_is (h, 100, NULL, "[[3,100]]",
             "[\"/cl/chassis0/ssd0\"]|{\"r1\":100}",
             "one vertex left beside the three kept: taken");

    hold_answered (h, 7, "['/cl/chassis0/ssd0']", true);
    pick_is (h, 150, NULL, NULL,
             "[\"/cl/chassis1/ssd0\",\"/cl/chassis1/ssd1\"]|{\"r2\":200}",
             "r1's ssd0 held: r2 has the most room");
    pick_is (h, 250, NULL, NULL,
             "[\"/cl/chassis1/ssd0\",\"/cl/chassis1/ssd1\",\"/cl/chassis0/ssd1\"]"
             "|{\"r1\":100,\"r2\":200}",
             "then r1's free vertex, never the held one");

    feed_storage (h, storage ("r2", "Offline", "Enabled", "Ready", "Ready"));
    pick_is (h, 150, NULL, NULL,
             "error: 150 GiB of rabbit ssd wanted, 100 GiB free on the rabbits that are up",
             "r2 down: only r1's free vertex counts");
    feed_storage (h, storage ("r2", "Ready", "Enabled", "Ready", "Ready"));
    unhold (h, 7);
    flush (h);
    answer_all (h, true, 0);
    pick_is (h, 100, NULL, NULL, "[\"/cl/chassis0/ssd0\"]|{\"r1\":100}",
             "the hold ended and its vertex up again: it may be picked");

    pick_chassis_is (h, 1, 2, 100, NULL,
                     "[\"/cl/chassis0/ssd0\",\"/cl/chassis0/ssd1\"]|{\"r1\":200}"
                     "|[\"c1\",\"c2\"]",
                     "node-local: one rabbit with its two nodes up and a vertex for each");
    pick_chassis_is (h, 2, 1, 150, NULL,
                     "[\"/cl/chassis0/ssd0\",\"/cl/chassis0/ssd1\",\"/cl/chassis1/ssd0\","
                     "\"/cl/chassis1/ssd1\"]|{\"r1\":200,\"r2\":200}"
                     "|[\"c1\",\"c2\",\"c3\",\"c4\"]",
                     "150 GiB a node takes two 100 GiB vertices on each of two rabbits");
    feed_journal (h, "[{'name':'drain','context':{'idset':'0','nodelist':'c1',"
                     "'reason':'x','overwrite':0}}]");
    pick_chassis_is (h, 1, 2, 100, NULL,
                     "[\"/cl/chassis1/ssd0\",\"/cl/chassis1/ssd1\"]|{\"r2\":200}"
                     "|[\"c3\",\"c4\"]",
                     "c1 drained: r1 has one node that may run it, r2 is chosen");
    pick_chassis_is (h, 2, 2, 100, NULL,
                     "error: 2 rabbits wanted with 2 nodes up and 2 ssd vertices free (one"
                     " per node, 100 GiB each); 1 have the nodes, 1 both",
                     "two such rabbits wanted, one has its nodes: refused, saying which");
    pick_chassis_is (h, 1, 2, 100, "[[3,100]]",
                     "error: 2 ssd vertices wanted on 1 rabbits, 3 of the 4 free vertices"
                     " kept for the jobs ahead of it that get their ssd with their nodes",
                     "node-local keeps what the jobs ahead need free too");
    dws_health_destroy (h);
}

int main (void)
{
    test_fluxion_rabbit_transitions ();
    test_links_and_drains ();
    test_not_ready_before_the_topology ();
    test_fenced_computes ();
    test_drain_options ();
    test_exclude ();
    test_no_fluxion ();
    test_systemstatus ();
    test_systemstatus_unmount_and_hosts ();
    test_restart_without_online ();
    test_known ();
    test_failures_and_restarts ();
    test_fluxion_state ();
    test_storm ();
    test_storage_before_topology ();
    test_bad_input ();
    test_capacity ();
    test_capacity_devices ();
    test_hold_and_unhold ();
    test_hold_rabbit_flaps ();
    test_hold_fluxion_restart ();
    test_hold_failures ();
    test_hold_unknown_paths ();
    test_hold_at_start ();
    test_pick ();
    json_decref (actions);
    return done_testing ();
}
