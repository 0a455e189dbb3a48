/* rabbitdrain.c - dws.drain and dws.undrain (rabbitdrain.h).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "act.h"
#include "answer.h"
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

static void token (char *buf, size_t len, const char *key, const char *step, const char *rabbit)
{
    snprintf (buf, len, "%s%s:%s:%s", RABBITDRAIN_TOKEN, key, step, rabbit);
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

static void patch_storage (struct dws_engine *e, const char *key, const char *step,
                           const char *rabbit, json_t *ann)
{
    char tok[320];
    token (tok, sizeof (tok), key, step, rabbit);
    act_k8s (e, "patch", "Storage", DWS_SYSTEM_NAMESPACE, rabbit,
             json_pack ("{s:{s:o}}", "metadata", "annotations", ann), tok);
}

static void get_node (struct dws_engine *e, const char *key, const char *rabbit)
{
    char tok[320];
    token (tok, sizeof (tok), key, "node", rabbit);
    act_k8s (e, "get", "Node", NULL, rabbit, NULL, tok);
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
    char date[32], by[32], key[32];
    time_t t = (time_t)e->now;
    struct tm tm;
    gmtime_r (&t, &tm);
    strftime (date, sizeof (date), "%Y-%m-%dT%H:%M:%SZ", &tm);
    snprintf (by, sizeof (by), "%" JSON_INTEGER_FORMAT,
              json_integer_value (json_object_get (event, "userid")));
    snprintf (key, sizeof (key), "%" JSON_INTEGER_FORMAT, ++e->drain_seq);
    json_t *req = json_pack ("{s:O s:b s:I s:[] s:{} s:O s:s s:s s:s?}", "msgid", msgid,
                             "drain", drain, "left", (json_int_t)json_array_size (names),
                             "errors", "undo", "rabbits", names, "date", date, "by", by,
                             "reason", reason);
    json_object_set_new (e->drains, key, req);
    size_t i;
    json_t *v;
    /* one chain per rabbit, in the nnf CLI's order: a drain annotates the
     * Storage, then taints the Node; an undrain untaints, then removes
     * the annotations */
    json_array_foreach (names, i, v) {
        const char *r = json_string_value (v);
        if (drain)
            patch_storage (e, key, "storage", r, annotations (req));
        else
            get_node (e, key, r);
        act_log (e, "info", "%s rabbit %s%s%s (userid %s)", drain ? "draining" : "undraining",
                 r, drain ? ": " : "", drain ? reason : "", by);
    }
    json_decref (names);
}

bool rabbitdrain_token (json_t *event)
{
    const char *tok = json_string_value (json_object_get (event, "token"));
    return tok && !strncmp (tok, RABBITDRAIN_TOKEN, strlen (RABBITDRAIN_TOKEN));
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

static void finish (struct dws_engine *e, const char *key, json_t *req)
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
    json_object_del (e->drains, key);
}

static const char *step_words (const char *step)
{
    if (!strcmp (step, "storage"))
        return "annotating its Storage";
    if (!strcmp (step, "unannotate"))
        return "removing its Storage's drain annotations";
    if (!strcmp (step, "node"))
        return "reading its Kubernetes Node";
    return "tainting its Kubernetes Node";
}

/* A failed drain's rollback answered: its rabbit's error, whole.  A
 * rollback that failed is sent again until RABBITDRAIN_ROLLBACK_TRIES have
 * (the writer has retried what Kubernetes calls transient already): one
 * left undone leaves the rabbit annotated as drained and not tainted,
 * which the answer and the log say, with the command that clears it.
 * False while a try is out. */
static bool rollback_answered (struct dws_engine *e, const char *key, json_t *req,
                               const char *rabbit, struct k8s_answer *a, json_t *event)
{
    json_t *undo = json_object_get (req, "undo");
    json_t *u = json_object_get (undo, rabbit);
    json_int_t tries = json_integer_value (json_object_get (u, "tries"));
    char msg[768];
    if (!u)
        return false; /* a late answer: its chain has ended */
    if (!a->ok && !a->gone && tries < RABBITDRAIN_ROLLBACK_TRIES) {
        json_object_set_new (u, "tries", json_integer (tries + 1));
        act_log (e, "warning", "drain rabbit %s: taking its drain annotations back failed (%s);"
                 " trying again", rabbit, answer_message (event));
        patch_storage (e, key, "rollback", rabbit, annotations (NULL));
        return false;
    }
    const char *why = json_string_value (json_object_get (u, "why"));
    if (a->ok || a->gone) /* gone: no Storage, nothing of the drain is left */
        snprintf (msg, sizeof (msg), "%s; its drain annotations were taken back", why);
    else {
        snprintf (msg, sizeof (msg), "%s; taking its drain annotations back failed %lld times"
                  " (%s): its Storage says drained, its Node is not tainted;"
                  " 'flux dws undrain %s' clears them", why, (long long)tries,
                  answer_message (event), rabbit);
        act_log (e, "err", "drain %s", msg);
    }
    json_array_append_new (json_object_get (req, "errors"), json_string (msg));
    json_object_del (undo, rabbit);
    return true;
}

/* What a rabbit's chain does after an answer: the next write, or its end
 * (true). */
static bool next_step (struct dws_engine *e, const char *key, json_t *req, const char *step,
                       const char *rabbit, struct k8s_answer *a, json_t *event)
{
    bool drain = json_is_true (json_object_get (req, "drain"));
    if (drain && !strcmp (step, "rollback"))
        return rollback_answered (e, key, req, rabbit, a, event);
    if (!a->ok) {
        char msg[512];
        if (a->gone)
            snprintf (msg, sizeof (msg), "rabbit %s: %s: not found", rabbit, step_words (step));
        else
            snprintf (msg, sizeof (msg), "rabbit %s: %s: %s", rabbit, step_words (step),
                      answer_message (event));
        act_log (e, "err", "%s %s", drain ? "drain" : "undrain", msg);
        /* a drain that could not taint the Node takes its annotations back,
         * as the nnf CLI does; its error is written once that answers */
        if (drain && (!strcmp (step, "node") || !strcmp (step, "taint"))) {
            json_object_set_new (json_object_get (req, "undo"), rabbit,
                                 json_pack ("{s:s s:i}", "why", msg, "tries", 1));
            patch_storage (e, key, "rollback", rabbit, annotations (NULL));
            return false;
        }
        json_array_append_new (json_object_get (req, "errors"), json_string (msg));
        return true;
    }
    if (!strcmp (step, "storage")) {
        get_node (e, key, rabbit);
        return false;
    }
    if (!strcmp (step, "node")) {
        char tok[320];
        token (tok, sizeof (tok), key, "taint", rabbit);
        act_k8s (e, "patch", "Node", NULL, rabbit,
                 json_pack ("{s:{s:o}}", "spec", "taints", new_taints (a->obj, drain)), tok);
        return false;
    }
    if (!strcmp (step, "taint") && !drain) {
        patch_storage (e, key, "unannotate", rabbit, annotations (NULL));
        return false;
    }
    return true; /* taint (drain), unannotate, rollback */
}

void rabbitdrain_result (struct dws_engine *e, json_t *event)
{
    const char *tok = json_string_value (json_object_get (event, "token"));
    char key[32], step[16];
    const char *p = tok + strlen (RABBITDRAIN_TOKEN);
    const char *c1 = strchr (p, ':');
    const char *c2 = c1 ? strchr (c1 + 1, ':') : NULL;
    if (!c2 || (size_t)(c1 - p) >= sizeof (key) || (size_t)(c2 - c1 - 1) >= sizeof (step))
        return;
    snprintf (key, sizeof (key), "%.*s", (int)(c1 - p), p);
    snprintf (step, sizeof (step), "%.*s", (int)(c2 - c1 - 1), c1 + 1);
    json_t *req = json_object_get (e->drains, key);
    if (!req)
        return; /* a late answer */
    struct k8s_answer a = answer_of (event);
    if (!next_step (e, key, req, step, c2 + 1, &a, event))
        return;
    json_int_t left = json_integer_value (json_object_get (req, "left")) - 1;
    json_object_set_new (req, "left", json_integer (left));
    if (left <= 0)
        finish (e, key, req);
}
