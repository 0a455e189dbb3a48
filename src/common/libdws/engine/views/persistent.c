/* persistent.c - the dws.persistent-* requests (persistent.h).
 *
 * Who may share a PSI is decided here, as dws.jobs decides who sees
 * which job: its owner (spec.userID) or the instance owner.  The checks
 * run on the engine's view of the PSI (psi.c); the patch carries that
 * view's resourceVersion, so a PSI that changed since (another owner, a
 * deletion begun) is not written: the API server answers 409.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/job.h"
#include "engine/shapes/act.h"
#include "engine/shapes/answer.h"
#include "engine/shapes/pending.h"
#include "engine/shapes/psi.h"
#include "engine/shapes/token.h"
#include "persistent.h"

static const char *topic_of (bool share)
{
    return share ? "dws.persistent-share" : "dws.persistent-unshare";
}

/* The Flux job of a consumer reference "<Workflow>-<directive index>"
 * (nnf-sos names it so), or -1 when it names no flux-dws Workflow.
 */
static json_int_t consumer_job (const char *ref)
{
    const char *dash = strrchr (ref, '-');
    char name[128];
    json_int_t id;
    if (!dash || dash == ref || (size_t)(dash - ref) >= sizeof (name))
        return -1;
    memcpy (name, ref, (size_t)(dash - ref));
    name[dash - ref] = '\0';
    return job_id_from_name (name, &id) ? id : -1;
}

/* A PSI as the list shows it: the view, its consumers read into job ids. */
static json_t *list_entry (json_t *view)
{
    json_t *o = json_deep_copy (view);
    json_t *jobs = json_array ();
    json_t *others = json_array ();
    size_t i;
    json_t *ref;
    if (!o || !jobs || !others) {
        json_decref (o);
        json_decref (jobs);
        json_decref (others);
        return NULL;
    }
    json_array_foreach (json_object_get (view, "consumers"), i, ref) {
        json_int_t id = consumer_job (json_string_value (ref));
        bool seen = false;
        size_t k;
        json_t *v;
        json_array_foreach (jobs, k, v)
            seen = seen || json_integer_value (v) == id;
        if (id >= 0 && !seen)
            json_array_append_new (jobs, json_integer (id));
        else if (id < 0)
            json_array_append (others, ref);
    }
    json_object_del (o, "consumers");
    json_object_del (o, "resourceVersion");
    json_object_del (o, "creating");
    json_object_set_new (o, "jobs", jobs);
    json_object_set_new (o, "workflows", others);
    return o;
}

static int by_name (const void *a, const void *b)
{
    return strcmp (*(const char *const *)a, *(const char *const *)b);
}

bool persistent_wait_for_list (struct dws_engine *e, json_t *event)
{
    if (psi_synced (e))
        return false;
    pending_defer (e, event, PENDING_PSIS);
    return true;
}

void persistent_list_request (struct dws_engine *e, json_t *msgid, json_int_t uid)
{
    (void)uid; /* every user sees every PSI: its name, owner and users,
                * as flux jobs shows every user's jobs; never a Secret */
    json_t *all = psi_all (e);
    size_t n = json_object_size (all), i = 0;
    const char **names = calloc (n ? n : 1, sizeof (*names));
    json_t *list = json_array ();
    const char *name;
    json_t *v;
    if (!names || !list) {
        free (names);
        json_decref (list);
        act_respond_error (e, msgid, ENOMEM, "dws.persistent-list: out of memory");
        return;
    }
    json_object_foreach (all, name, v)
        names[i++] = name;
    qsort (names, n, sizeof (*names), by_name);
    for (i = 0; i < n; i++) {
        json_t *entry = list_entry (json_object_get (all, names[i]));
        if (entry)
            json_array_append_new (list, entry);
    }
    free (names);
    act_respond (e, msgid, json_pack ("{s:b s:o}", "success", 1, "persistent", list));
}

void persistent_share_request (struct dws_engine *e, json_t *msgid, json_t *p, json_int_t uid,
                               bool share)
{
    const char *topic = topic_of (share);
    const char *name = json_string_value (json_object_get (p, "name"));
    if (!name || !*name) {
        act_respond_fail (e, msgid, "%s: name must be a non-empty string", topic);
        return;
    }
    json_t *view = psi_lookup (e, name);
    if (!view) {
        act_respond_error (e, msgid, ENOENT, "%s: no persistent storage named '%s'", topic,
                           name);
        return;
    }
    json_t *owner = json_object_get (view, "userid");
    if (uid != e->cfg.owner && !(json_is_integer (owner) && json_integer_value (owner) == uid)) {
        act_respond_error (e, msgid, EPERM, "%s: '%s' belongs to another user; only its owner"
                           " or the instance owner may %s it", topic, name,
                           share ? "share" : "unshare");
        return;
    }
    if (json_is_true (json_object_get (view, "deleting"))) {
        act_respond_error (e, msgid, EBUSY, "%s: '%s' is being deleted", topic, name);
        return;
    }
    if (json_is_true (json_object_get (view, "shared")) == share) {
        act_respond (e, msgid, json_pack ("{s:b s:s s:b s:b}", "success", 1, "name", name,
                                          "shared", share, "changed", 0));
        return;
    }
    char token[TOKEN_SIZE];
    json_int_t seq = pending_add (e, TOK_PERSISTENT,
                                  json_pack ("{s:O s:s s:b}", "msgid", msgid, "name", name,
                                             "share", share));
    json_t *body = json_pack ("{s:{s:s s:{s:o}}}", "metadata", "resourceVersion",
                              json_string_value (json_object_get (view, "resourceVersion")),
                              "annotations", PSI_IGNORE_UID,
                              share ? json_string ("true") : json_null ());
    act_k8s (e, "patch", "PersistentStorageInstance", e->cfg.namespace, name, body,
             token_for_request (token, sizeof (token), TOK_PERSISTENT, seq));
}

bool persistent_result (struct dws_engine *e, json_t *req, const struct token *t,
                        json_t *event)
{
    (void)t;
    json_t *msgid = json_object_get (req, "msgid");
    const char *name = json_string_value (json_object_get (req, "name"));
    bool share = json_is_true (json_object_get (req, "share"));
    struct k8s_answer a = answer_of (event);
    if (a.ok) {
        act_log (e, "info", "persistent storage '%s' %s", name,
                 share ? "shared (ignore-uid set)" : "unshared (ignore-uid removed)");
        act_respond (e, msgid, json_pack ("{s:b s:s s:b s:b}", "success", 1, "name", name,
                                          "shared", share, "changed", 1));
    }
    else if (a.gone)
        act_respond_error (e, msgid, ENOENT, "%s: no persistent storage named '%s'",
                           topic_of (share), name);
    else if (a.code == 409)
        act_respond_error (e, msgid, EAGAIN, "%s: '%s' changed meanwhile; try again",
                           topic_of (share), name);
    else
        act_respond_error (e, msgid, EIO, "%s: cannot annotate '%s': %s", topic_of (share),
                           name, answer_message (event));
    return true;
}
