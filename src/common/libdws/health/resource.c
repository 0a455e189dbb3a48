/* resource.c - the Flux resource side: the resource journal (broker
 * ranks, their hostnames, online, drained) and the configuration of
 * which ranks are excluded and which hosts may be drained.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <stdlib.h>
#include <string.h>

#include "wire/action.h"
#include "arm.h"
#include "util/hostlist.h"
#include "util/idset.h"
#include "table.h"

static void apply_exclude (struct dws_health *h)
{
    for (size_t i = 0; i < h->nranks; i++)
        h->ranks[i].excluded = false;
    if (!h->exclude || !*h->exclude || h->nranks == 0)
        return;
    dws_error_t err;
    struct dws_idset *ids = dws_idset_decode (h->exclude, &err);
    if (ids) {
        for (unsigned id = dws_idset_first (ids); id != (unsigned)-1 && id < h->nranks;
             id = dws_idset_next (ids, id))
            h->ranks[id].excluded = true;
        dws_idset_destroy (ids);
        return;
    }
    size_t n = 0;
    char **names = dws_hostlist_expand (h->exclude, &n, &err);
    for (size_t i = 0; names && i < n; i++) {
        long r = table_index (h->rank_index, names[i]);
        if (r >= 0)
            h->ranks[r].excluded = true;
    }
    dws_hostlist_free_names (names);
}

static int journal_restart (struct dws_health *h, json_t *ctx, dws_error_t *err)
{
    const char *nodelist = json_string_value (json_object_get (ctx, "nodelist"));
    const char *online = json_string_value (json_object_get (ctx, "online"));
    size_t n = 0;
    char **names = nodelist ? dws_hostlist_expand (nodelist, &n, err) : NULL;
    if (!names)
        return nodelist ? -1 : dws_errorf (err, "journal restart event has no nodelist");
    table_free_ranks (h);
    h->ranks = calloc (n ? n : 1, sizeof (*h->ranks));
    h->nranks = n;
    for (size_t i = 0; i < n; i++) {
        h->ranks[i].host = strdup (names[i]);
        json_t *list = json_object_get (h->host_ranks, names[i]);
        if (!list) {
            json_object_set_new (h->rank_index, names[i], json_integer ((json_int_t)i));
            json_object_set_new (h->host_ranks, names[i], (list = json_array ()));
        }
        json_array_append_new (list, json_integer ((json_int_t)i));
    }
    dws_hostlist_free_names (names);
    table_resolve_ranks (h);
    struct dws_idset *ids = online ? dws_idset_decode (online, err) : NULL;
    for (unsigned id = ids ? dws_idset_first (ids) : (unsigned)-1;
         id != (unsigned)-1 && id < h->nranks; id = dws_idset_next (ids, id))
        h->ranks[id].online = true;
    dws_idset_destroy (ids);
    apply_exclude (h);
    return 0;
}

/* The ranks of an event's idset, each in range; calls fn on each. */
static int journal_ranks (struct dws_health *h, json_t *ctx, const char *name, json_t *entry,
                          void (*fn) (struct dws_health *, struct rank *, json_t *),
                          dws_error_t *err)
{
    const char *s = json_string_value (json_object_get (ctx, "idset"));
    if (!s)
        return dws_errorf (err, "journal %s event has no idset", name);
    struct dws_idset *ids = dws_idset_decode (s, err);
    if (!ids)
        return -1;
    for (unsigned id = dws_idset_first (ids); id != (unsigned)-1; id = dws_idset_next (ids, id))
        if (id < h->nranks)
            fn (h, &h->ranks[id], entry);
    dws_idset_destroy (ids);
    return 0;
}

static void rank_online (struct dws_health *h, struct rank *r, json_t *e)
{
    (void)h, (void)e;
    r->online = true;
}

static void rank_offline (struct dws_health *h, struct rank *r, json_t *e)
{
    (void)h, (void)e;
    r->online = false;
}

static void rank_drain (struct dws_health *h, struct rank *r, json_t *ctx)
{
    const char *reason = json_string_value (json_object_get (ctx, "reason"));
    bool overwrite = json_integer_value (json_object_get (ctx, "overwrite")) != 0;
    if (!r->drained || overwrite) { /* resource.drain mode=update keeps a reason */
        free (r->drained);
        r->drained = strdup (reason ? reason : "");
    }
    /* The event's reason, not the one kept: the service's drain after a
     * failed unmount (mode=update) leaves an admin's earlier reason in
     * place, and the node must still be Disabled for DWS.  Another drain
     * on top (even one overwriting the reason) does not end that: only an
     * undrain does, as in flux-coral2.
     */
    if (reason && !strncmp (reason, DWS_HEALTH_UNMOUNT_REASON, strlen (DWS_HEALTH_UNMOUNT_REASON)))
        r->unmount = true;
    struct compute *c = table_compute (h, r->host);
    if (c) {
        free (c->drain_sent);
        c->drain_sent = NULL;
    }
}

static void rank_undrain (struct dws_health *h, struct rank *r, json_t *e)
{
    (void)h, (void)e;
    free (r->drained);
    r->drained = NULL;
    r->unmount = false;
}

int dws_health_journal (struct dws_health *h, json_t *events, bool synced, json_t *actions,
                        dws_error_t *err)
{
    if (!json_is_array (events))
        return dws_errorf (err, "journal events must be an array");
    size_t i;
    json_t *ev;
    json_array_foreach (events, i, ev) {
        const char *name = json_string_value (json_object_get (ev, "name"));
        json_t *ctx = json_object_get (ev, "context");
        int rc = 0;
        if (!name)
            return dws_errorf (err, "journal event %zu has no name", i);
        if (!strcmp (name, "restart"))
            rc = journal_restart (h, ctx, err);
        else if (!strcmp (name, "online"))
            rc = journal_ranks (h, ctx, name, ctx, rank_online, err);
        else if (!strcmp (name, "offline"))
            rc = journal_ranks (h, ctx, name, ctx, rank_offline, err);
        else if (!strcmp (name, "drain"))
            rc = journal_ranks (h, ctx, name, ctx, rank_drain, err);
        else if (!strcmp (name, "undrain"))
            rc = journal_ranks (h, ctx, name, ctx, rank_undrain, err);
        if (rc < 0)
            return -1;
    }
    if (synced)
        h->journal_synced = true;
    arm_soon (h, actions);
    return 0;
}

int dws_health_flux_config (struct dws_health *h, const char *exclude, const char *drainable,
                            json_t *actions, dws_error_t *err)
{
    json_t *set = NULL;
    if (drainable) {
        size_t n = 0;
        char **names = dws_hostlist_expand (drainable, &n, err);
        if (!names)
            return -1;
        set = json_object ();
        for (size_t i = 0; i < n; i++)
            json_object_set_new (set, names[i], json_true ());
        dws_hostlist_free_names (names);
    }
    if (exclude && *exclude) {
        dws_error_t e2;
        struct dws_idset *ids = dws_idset_decode (exclude, &e2);
        struct dws_hostlist *hl = ids ? NULL : dws_hostlist_decode (exclude, &e2);
        dws_idset_destroy (ids);
        dws_hostlist_destroy (hl);
        if (!ids && !hl) {
            json_decref (set);
            return dws_errorf (err, "resource.exclude '%s' is neither an idset nor a hostlist",
                               exclude);
        }
    }
    free (h->exclude);
    h->exclude = dws_strdup_null (exclude);
    json_decref (h->drainable);
    h->drainable = set;
    apply_exclude (h);
    arm_soon (h, actions);
    return 0;
}
