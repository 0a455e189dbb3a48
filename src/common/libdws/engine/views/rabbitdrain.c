/* rabbitdrain.c - dws.drain and dws.undrain (rabbitdrain.h).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/shapes/act.h"
#include "engine/shapes/answer.h"
#include "engine/shapes/pending.h"
#include "engine/shapes/token.h"
#include "rabbitdrain.h"
#include "util/hostlist.h"
#include "wire/wire.h"

/* The reason as one line of text: no control character, not blank. */
static bool reason_ok (const char *s)
{
    bool blank = true;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p < 0x20 || *p == 0x7f)
            return false;
        if (*p != ' ')
            blank = false;
    }
    return !blank;
}

/* The rabbits of the payload's hostlist, every one known; NULL after
 * answering EINVAL. */
static json_t *wanted_rabbits (struct dws_engine *e, json_t *msgid, json_t *payload,
                               const char *topic)
{
    const char *s = json_string_value (json_object_get (payload, "rabbits"));
    dws_error_t err;
    if (!s || !*s) {
        act_respond_error (e, msgid, EINVAL, "%s: rabbits must be a hostlist of rabbits",
                           topic);
        return NULL;
    }
    struct dws_hostlist *hl = dws_hostlist_decode (s, &err);
    if (!hl) {
        act_respond_error (e, msgid, EINVAL, "%s: rabbits: %s", topic, err.text);
        return NULL;
    }
    json_t *names = json_array ();
    json_t *unknown = json_array ();
    size_t n = dws_hostlist_count (hl);
    for (size_t i = 0; i < n; i++) {
        char host[256];
        if (dws_hostlist_nth (hl, i, host, sizeof (host)) < 0)
            continue;
        json_array_append_new (json_object_get (e->rabbits, host) ? names : unknown,
                               json_string (host));
    }
    dws_hostlist_destroy (hl);
    if (json_array_size (unknown) > 0 || json_array_size (names) == 0) {
        struct dws_hostlist *u = dws_hostlist_create ();
        size_t i;
        json_t *v;
        json_array_foreach (unknown, i, v)
            dws_hostlist_append_host (u, json_string_value (v), NULL);
        char *text = dws_hostlist_encode (u);
        if (!e->rabbits || json_object_size (e->rabbits) == 0)
            act_respond_error (e, msgid, EINVAL,
                               "%s: no rabbits known yet (no SystemConfiguration)", topic);
        else
            act_respond_error (e, msgid, EINVAL, "%s: unknown rabbit%s: %s", topic,
                               json_array_size (unknown) == 1 ? "" : "s",
                               text && *text ? text : s);
        free (text);
        dws_hostlist_destroy (u);
        json_decref (names);
        names = NULL;
    }
    json_decref (unknown);
    return names;
}

/* The Storage annotations a drain writes (the request's), or null for
 * each, which an undrain and a rollback write. */
static json_t *annotations (json_t *req)
{
    if (!req)
        return json_pack ("{s:n s:n s:n}", "drain_date", "drain_reason",
                          RABBITDRAIN_BY_ANNOTATION);
    return json_pack ("{s:O s:O s:O}", "drain_date", json_object_get (req, "date"),
                      "drain_reason", json_object_get (req, "reason"),
                      RABBITDRAIN_BY_ANNOTATION, json_object_get (req, "by"));
}

/* The Node's taints without RABBITDRAIN_TAINT_KEY's (as the nnf CLI
 * keeps every other key) and, for a drain, with it for both effects;
 * JSON null for none. */
static json_t *new_taints (json_t *node, bool drain)
{
    json_t *out = json_array ();
    size_t i;
    json_t *t;
    json_array_foreach (json_object_get (json_object_get (node, "spec"), "taints"), i, t) {
        const char *k = json_string_value (json_object_get (t, "key"));
        if (json_is_object (t) && !(k && !strcmp (k, RABBITDRAIN_TAINT_KEY)))
            json_array_append (out, t);
    }
    if (drain) {
        json_array_append_new (out, json_pack ("{s:s s:s s:s}", "key", RABBITDRAIN_TAINT_KEY,
                                               "value", "true", "effect", "NoSchedule"));
        json_array_append_new (out, json_pack ("{s:s s:s s:s}", "key", RABBITDRAIN_TAINT_KEY,
                                               "value", "true", "effect", "NoExecute"));
    }
    if (json_array_size (out) == 0) {
        json_decref (out);
        return json_null ();
    }
    return out;
}

/* A rabbit's chain of writes, one step after another's answer, in the
 * nnf CLI's order: a drain annotates the Storage, reads the Node, taints
 * it; an undrain reads the Node, untaints it, then removes the
 * annotations.  A drain whose Node cannot be read or tainted takes its
 * annotations back (rollback, tried RABBITDRAIN_ROLLBACK_TRIES times).
 * The steps (state.h DRAIN_STEPS) and what follows each, in one table;
 * step_next reads it, step_send carries a step out.
 */
static const struct {
    const char *doing;          /* in the error of a step that failed */
    enum drain_step ok[2];      /* next after it succeeded: [undrain], [drain] */
    enum drain_step failed[2];  /* next after it failed */
    bool gone_is_done;          /* a 404 is what it asked (nothing left to undo) */
} steps[DRAIN_STEP_COUNT] = {
#define END DRAIN_STEP_COUNT
    [DRAIN_STEP_STORAGE] = {"annotating its Storage", {END, DRAIN_STEP_NODE}, {END, END},
                            false},
    [DRAIN_STEP_NODE] = {"reading its Kubernetes Node", {DRAIN_STEP_TAINT, DRAIN_STEP_TAINT},
                         {END, DRAIN_STEP_ROLLBACK}, false},
    [DRAIN_STEP_TAINT] = {"tainting its Kubernetes Node", {DRAIN_STEP_UNANNOTATE, END},
                          {END, DRAIN_STEP_ROLLBACK}, false},
    [DRAIN_STEP_UNANNOTATE] = {"removing its Storage's drain annotations", {END, END},
                               {END, END}, false},
    [DRAIN_STEP_ROLLBACK] = {"taking its drain annotations back", {END, END},
                             {END, DRAIN_STEP_ROLLBACK}, true},
#undef END
};

/* The one choice of a rabbit's next step: its first (done is
 * DRAIN_STEP_COUNT), or what follows done's answer (ok or not; again:
 * tries of the rollback remain).  DRAIN_STEP_COUNT: the chain ends. */
static enum drain_step step_next (bool drain, enum drain_step done, bool ok, bool again)
{
    if (done == DRAIN_STEP_COUNT)
        return drain ? DRAIN_STEP_STORAGE : DRAIN_STEP_NODE;
    enum drain_step next = ok ? steps[done].ok[drain] : steps[done].failed[drain];
    if (next == DRAIN_STEP_ROLLBACK && done == DRAIN_STEP_ROLLBACK && !again)
        return DRAIN_STEP_COUNT;
    return next;
}

static void step_send (struct dws_engine *e, json_int_t seq, json_t *req, enum drain_step step,
                       const char *rabbit, json_t *node)
{
    char tok[320];
    token_for_step (tok, sizeof (tok), TOK_DRAIN, seq, step, rabbit);
    switch (step) {
    case DRAIN_STEP_STORAGE:
    case DRAIN_STEP_UNANNOTATE:
    case DRAIN_STEP_ROLLBACK:
        act_k8s (e, "patch", "Storage", DWS_SYSTEM_NAMESPACE, rabbit,
                 json_pack ("{s:{s:o}}", "metadata", "annotations",
                            annotations (step == DRAIN_STEP_STORAGE ? req : NULL)),
                 tok);
        break;
    case DRAIN_STEP_NODE:
        act_k8s (e, "get", "Node", NULL, rabbit, NULL, tok);
        break;
    case DRAIN_STEP_TAINT:
        act_k8s (e, "patch", "Node", NULL, rabbit,
                 json_pack ("{s:{s:o}}", "spec", "taints",
                            new_taints (node, json_is_true (json_object_get (req, "drain")))),
                 tok);
        break;
    case DRAIN_STEP_COUNT:
        break;
    }
}

void rabbitdrain_request (struct dws_engine *e, json_t *msgid, json_t *payload, json_t *event,
                          bool drain)
{
    const char *topic = drain ? "dws.drain" : "dws.undrain";
    const char *reason = json_string_value (json_object_get (payload, "reason"));
    if (drain && (!reason || !reason_ok (reason) || strlen (reason) > RABBITDRAIN_REASON_MAX)) {
        act_respond_error (e, msgid, EINVAL,
                           "%s: reason must be one line of 1 to %d characters, not blank",
                           topic, RABBITDRAIN_REASON_MAX);
        return;
    }
    if (!drain && json_object_get (payload, "reason")) {
        act_respond_error (e, msgid, EINVAL, "%s: an undrain takes no reason", topic);
        return;
    }
    json_t *names = wanted_rabbits (e, msgid, payload, topic);
    if (!names)
        return;
    char date[32], by[32];
    time_t t = (time_t)e->now;
    struct tm tm;
    gmtime_r (&t, &tm);
    strftime (date, sizeof (date), "%Y-%m-%dT%H:%M:%SZ", &tm);
    snprintf (by, sizeof (by), "%" JSON_INTEGER_FORMAT,
              json_integer_value (json_object_get (event, "userid")));
    json_t *req = json_pack ("{s:O s:b s:I s:[] s:{} s:O s:s s:s s:s?}", "msgid", msgid,
                             "drain", drain, "left", (json_int_t)json_array_size (names),
                             "errors", "undo", "rabbits", names, "date", date, "by", by,
                             "reason", reason);
    json_int_t seq = pending_add (e, TOK_DRAIN, req);
    size_t i;
    json_t *v;
    /* one chain per rabbit (steps[]) */
    json_array_foreach (names, i, v) {
        const char *r = json_string_value (v);
        step_send (e, seq, req, step_next (drain, DRAIN_STEP_COUNT, true, false), r, NULL);
        act_log (e, "info", "%s rabbit %s%s%s (userid %s)", drain ? "draining" : "undraining",
                 r, drain ? ": " : "", drain ? reason : "", by);
    }
    json_decref (names);
}

/* The request's answer, once every rabbit's chain has ended. */
static void finish (struct dws_engine *e, json_t *req)
{
    json_t *errors = json_object_get (req, "errors");
    json_t *msgid = json_object_get (req, "msgid");
    if (json_array_size (errors) == 0)
        act_respond (e, msgid, json_pack ("{s:b s:O}", "success", 1, "rabbits",
                                          json_object_get (req, "rabbits")));
    else {
        char buf[DWS_ERROR_TEXT_MAX] = "";
        size_t len = 0, i;
        json_t *v;
        json_array_foreach (errors, i, v) {
            int n = snprintf (buf + len, sizeof (buf) - len, "%s%s", i ? "; " : "",
                              json_string_value (v));
            if (n < 0 || (size_t)n >= sizeof (buf) - len)
                break;
            len += (size_t)n;
        }
        act_respond_error (e, msgid, EIO, "%s: %s",
                           json_is_true (json_object_get (req, "drain")) ? "dws.drain"
                                                                         : "dws.undrain",
                           buf);
    }
}

/* What the outcome of a step is recorded as: its error, or the rollback
 * it sets off (the error written once that has answered), or the rollback
 * tried again. */
static void step_outcome (struct dws_engine *e, json_t *req, enum drain_step done,
                          enum drain_step next, bool ok, const char *rabbit,
                          struct k8s_answer *a, json_t *event)
{
    bool drain = json_is_true (json_object_get (req, "drain"));
    json_t *undo = json_object_get (req, "undo");
    json_t *u = json_object_get (undo, rabbit);
    json_int_t tries = json_integer_value (json_object_get (u, "tries"));
    char msg[768];
    if (done == DRAIN_STEP_ROLLBACK && next == DRAIN_STEP_ROLLBACK) {
        json_object_set_new (u, "tries", json_integer (tries + 1));
        act_log (e, "warning", "drain rabbit %s: %s failed (%s); trying again", rabbit,
                 steps[done].doing, answer_message (event));
        return;
    }
    if (done == DRAIN_STEP_ROLLBACK) {
        const char *why = json_string_value (json_object_get (u, "why"));
        if (ok) /* gone too: no Storage, nothing of the drain is left */
            snprintf (msg, sizeof (msg), "%s; its drain annotations were taken back", why);
        else {
            snprintf (msg, sizeof (msg), "%s; %s failed %lld times (%s): its Storage says"
                      " drained, its Node is not tainted; 'flux dws undrain %s' clears them",
                      why, steps[done].doing, (long long)tries, answer_message (event), rabbit);
            act_log (e, "err", "drain %s", msg);
        }
        json_array_append_new (json_object_get (req, "errors"), json_string (msg));
        json_object_del (undo, rabbit);
        return;
    }
    if (ok)
        return;
    if (a->gone)
        snprintf (msg, sizeof (msg), "rabbit %s: %s: not found", rabbit, steps[done].doing);
    else
        snprintf (msg, sizeof (msg), "rabbit %s: %s: %s", rabbit, steps[done].doing,
                  answer_message (event));
    act_log (e, "err", "%s %s", drain ? "drain" : "undrain", msg);
    if (next == DRAIN_STEP_ROLLBACK)
        json_object_set_new (undo, rabbit, json_pack ("{s:s s:i}", "why", msg, "tries", 1));
    else
        json_array_append_new (json_object_get (req, "errors"), json_string (msg));
}

bool rabbitdrain_result (struct dws_engine *e, json_t *req, const struct token *t,
                         json_t *event)
{
    bool drain = json_is_true (json_object_get (req, "drain"));
    json_t *u = json_object_get (json_object_get (req, "undo"), t->rabbit);
    if (t->step == DRAIN_STEP_ROLLBACK && !u)
        return false; /* a late answer: its chain has ended */
    struct k8s_answer a = answer_of (event);
    bool ok = a.ok || (a.gone && steps[t->step].gone_is_done);
    bool again = json_integer_value (json_object_get (u, "tries")) < RABBITDRAIN_ROLLBACK_TRIES;
    enum drain_step next = step_next (drain, t->step, ok, again);
    step_outcome (e, req, t->step, next, ok, t->rabbit, &a, event);
    if (next != DRAIN_STEP_COUNT) {
        step_send (e, t->n, req, next, t->rabbit, a.obj);
        return false;
    }
    json_int_t left = json_integer_value (json_object_get (req, "left")) - 1;
    json_object_set_new (req, "left", json_integer (left));
    if (left > 0)
        return false;
    finish (e, req);
    return true;
}
