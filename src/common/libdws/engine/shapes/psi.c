/* psi.c - the PersistentStorageInstances the engine knows (psi.h).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine/limits.h"
#include "parse/directive.h"
#include "psi.h"
#include "util/jsonio.h"
#include "wire/explain.h"

static json_t *str_or_null (json_t *v)
{
    return json_is_string (v) ? json_string (json_string_value (v)) : json_null ();
}

/* The capacity= of the PSI's create_persistent directive, or NULL. */
static json_t *capacity_of (json_t *spec)
{
    const char *dw = json_string_value (json_object_get (spec, "dwDirective"));
    json_t *parsed = dw ? dws_dw_parse (dw, NULL) : NULL;
    const char *cap = parsed ? dws_dw_arg (parsed, "capacity") : NULL;
    json_t *v = cap && *cap ? json_string (cap) : json_null ();
    json_decref (parsed);
    return v;
}

/* The user name the shell found for uid in owners ({"<uid>": name}), or
 * null. */
static json_t *owner_of (json_t *owners, json_t *uid)
{
    char key[32];
    if (!json_is_integer (uid))
        return json_null ();
    snprintf (key, sizeof (key), "%" JSON_INTEGER_FORMAT, json_integer_value (uid));
    return str_or_null (json_object_get (owners, key));
}

/* The GiB the PSI counts against its owner's [rabbit.limits] (its
 * create_persistent as limits_job_gib reads a directive), or null. */
static json_t *gib_of (json_t *spec)
{
    int64_t gib = 0;
    json_t *dirs = json_pack ("[O?]", json_object_get (spec, "dwDirective"));
    json_t *v = dirs && limits_job_gib (dirs, 1, &gib, NULL) == 0 ? json_integer (gib)
                                                                   : json_null ();
    json_decref (dirs);
    return v;
}

/* Whether a Workflow owns the PSI still: the job that creates it counts
 * its GiB until the Workflow lets it go. */
static bool workflow_owned (json_t *md)
{
    size_t i;
    json_t *ref;
    json_array_foreach (json_object_get (md, "ownerReferences"), i, ref) {
        const char *kind = json_string_value (json_object_get (ref, "kind"));
        if (kind && !strcmp (kind, "Workflow"))
            return true;
    }
    return false;
}

static json_t *view_of (json_t *obj, json_t *owners)
{
    json_t *md = json_object_get (obj, "metadata");
    json_t *spec = json_object_get (obj, "spec");
    json_t *status = json_object_get (obj, "status");
    const char *name = json_string_value (json_object_get (md, "name"));
    const char *ann = json_string_value (json_object_get (json_object_get (md, "annotations"),
                                                          PSI_IGNORE_UID));
    const char *spec_state = json_string_value (json_object_get (spec, "state"));
    const char *state = json_string_value (json_object_get (status, "state"));
    json_t *uid = json_object_get (spec, "userID");
    json_t *consumers = json_array ();
    size_t i;
    json_t *ref;
    if (!name || !consumers) {
        json_decref (consumers);
        return NULL;
    }
    json_array_foreach (json_object_get (spec, "consumerReferences"), i, ref) {
        const char *n = json_string_value (json_object_get (ref, "name"));
        if (n)
            json_array_append_new (consumers, json_string (n));
    }
    return json_pack ("{s:s s:s s:o s:o s:o s:s s:b s:b s:o s:o s:s s:o s:b}", "name", name,
                      "type",
                      dws_json_str_or (json_object_get (spec, "fsType"), ""), "capacity",
                      capacity_of (spec), "userid",
                      json_is_integer (uid) && json_integer_value (uid) >= 0
                          ? json_integer (json_integer_value (uid))
                          : json_null (),
                      "owner", owner_of (owners, uid), "state", state ? state : "", "deleting",
                      json_is_string (json_object_get (md, "deletionTimestamp"))
                          || (spec_state && !strcmp (spec_state, "Destroying")),
                      "shared", ann && !strcasecmp (ann, "true"), "consumers", consumers,
                      "created", str_or_null (json_object_get (md, "creationTimestamp")),
                      "resourceVersion",
                      dws_json_str_or (json_object_get (md, "resourceVersion"), ""), "gib",
                      gib_of (spec), "creating", workflow_owned (md));
}

void psi_sync (struct dws_engine *e, json_t *objects, json_t *owners)
{
    json_t *all = json_object ();
    size_t i;
    json_t *obj;
    if (!all)
        return;
    json_array_foreach (objects, i, obj) {
        json_t *v = view_of (obj, owners);
        if (v)
            json_object_set_new (all, json_string_value (json_object_get (v, "name")), v);
    }
    json_decref (e->psis);
    e->psis = all;
}

void psi_watch (struct dws_engine *e, const char *what, json_t *obj, json_t *owners)
{
    const char *name = json_string_value (
        json_object_get (json_object_get (obj, "metadata"), "name"));
    if (!name || !e->psis)
        return; /* the first list, which comes first, has it */
    if (!strcmp (what, "DELETED")) {
        json_object_del (e->psis, name);
        return;
    }
    json_t *v = view_of (obj, owners);
    if (v)
        json_object_set_new (e->psis, name, v);
}

bool psi_synced (struct dws_engine *e)
{
    return e->psis != NULL;
}

json_t *psi_lookup (struct dws_engine *e, const char *name)
{
    return name ? json_object_get (e->psis, name) : NULL;
}

json_t *psi_all (struct dws_engine *e)
{
    return e->psis;
}

bool psi_destroys (json_t *directives)
{
    static const char *const destroy[] = {"destroy_persistent", NULL};
    return dws_dw_any_command (directives, destroy, 0) == 1;
}

int psi_check_destroy (struct dws_engine *e, json_t *directives, json_int_t uid,
                       dws_error_t *err)
{
    size_t i;
    json_t *d;
    int rc = 0;
    if (!psi_synced (e))
        return 0;
    json_array_foreach (directives, i, d) {
        json_t *parsed = json_is_string (d) ? dws_dw_parse (json_string_value (d), NULL) : NULL;
        const char *cmd = json_string_value (json_object_get (parsed, "command"));
        const char *name = parsed ? dws_dw_arg (parsed, "name") : NULL;
        json_t *view = cmd && !strcmp (cmd, "destroy_persistent") ? psi_lookup (e, name) : NULL;
        json_t *owner = json_object_get (view, "userid");
        const char *user = json_string_value (json_object_get (view, "owner"));
        if (json_is_integer (owner) && json_integer_value (owner) != uid) {
            char who[128];
            if (user && *user)
                snprintf (who, sizeof (who), "%.64s (uid %" JSON_INTEGER_FORMAT ")", user,
                          json_integer_value (owner));
            else
                snprintf (who, sizeof (who), "the user with uid %" JSON_INTEGER_FORMAT,
                          json_integer_value (owner));
            rc = dws_errorf (err, "only its owner may destroy persistent storage"
                                  " (#DW destroy_persistent): '%s' belongs to %s", name, who);
        }
        json_decref (parsed);
        if (rc < 0)
            break;
    }
    return rc;
}

/* The index N of "DW Directive N" in note, or -1. */
static long directive_index (const char *note)
{
    static const char *const lead = "DW Directive ";
    const char *p = strstr (note, lead);
    char *end;
    if (!p)
        return -1;
    p += strlen (lead);
    long n = strtol (p, &end, 10);
    return end != p && *end == ':' && n >= 0 ? n : -1;
}

const char *psi_owner_line (struct dws_engine *e, json_t *directives, const char *note,
                            char *buf, size_t size)
{
    if (!note || !dws_explain_is (note, DWS_EXPLAIN_ROW_PERSISTENT_NOT_SHARED))
        return NULL;
    long i = directive_index (note);
    const char *d = i >= 0 ? json_string_value (json_array_get (directives, (size_t)i)) : NULL;
    json_t *parsed = d ? dws_dw_parse (d, NULL) : NULL;
    const char *cmd = json_string_value (json_object_get (parsed, "command"));
    const char *name = parsed ? dws_dw_arg (parsed, "name") : NULL;
    json_t *view = cmd && !strcmp (cmd, "persistentdw") ? psi_lookup (e, name) : NULL;
    json_t *uid = json_object_get (view, "userid");
    const char *line = json_is_integer (uid)
                           ? dws_explain_persistent_owner (
                                 name, json_integer_value (uid),
                                 json_string_value (json_object_get (view, "owner")), buf, size)
                           : NULL;
    json_decref (parsed);
    return line;
}
