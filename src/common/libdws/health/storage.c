/* storage.c - Storage objects in, and what they say of each rabbit
 * (health.h's rules): each object is parsed once where it enters
 * (storageview.c) and kept in its rabbit; storage_decide reads the view.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <stdio.h>
#include <string.h>

#include "wire/action.h"
#include "arm.h"
#include "storage.h"
#include "table.h"

/* Whether a rabbit whose Storage says 'status' can be used (health.h):
 * Ready, or Degraded ("ready but operating in a degraded state", DWS'
 * ResourceStatus) unless a reboot is required (nnf-sos' Degraded after a
 * STONITH event, rebootRequired true).
 */
static bool usable (const char *status, bool reboot)
{
    if (!status)
        return false;
    if (!strcmp (status, "Ready"))
        return true;
    return !strcmp (status, "Degraded") && !reboot;
}

/* r->up, r->why and r->note from its view. */
static void decide_up (struct rabbit *r)
{
    const struct storageview *v = &r->sv;
    if (!v->obj) {
        r->up = false;
        r->note[0] = '\0';
        snprintf (r->why, sizeof (r->why), "no Storage object");
        return;
    }
    const char *status = v->status;
    const char *message = v->message;
    bool reboot = v->reboot_required;
    const char *dreason = v->disable_reason;
    bool disabled = v->state && !strcmp (v->state, "Disabled");
    const char *colon = message && *message ? ": " : "";
    r->up = !disabled && usable (status, reboot);
    r->note[0] = '\0';
    if (disabled)
        snprintf (r->why, sizeof (r->why), "disabled%s%s", dreason ? ": " : "",
                  dreason ? dreason : "");
    else if (!status)
        snprintf (r->why, sizeof (r->why), "Storage has no status yet");
    else if (!r->up && !strcmp (status, "Drained") && (v->drain_reason || v->drain_date))
        snprintf (r->why, sizeof (r->why), "drained%s%s%s%s", v->drain_date ? " " : "",
                  v->drain_date ? v->drain_date : "", v->drain_reason ? ": " : "",
                  v->drain_reason ? v->drain_reason : "");
    else if (!r->up && reboot)
        snprintf (r->why, sizeof (r->why), "Storage status %s, reboot required%s%s", status,
                  colon, *colon ? message : "");
    else if (!r->up)
        snprintf (r->why, sizeof (r->why), "Storage status %s%s%s", status, colon,
                  *colon ? message : "");
    else {
        r->why[0] = '\0';
        if (strcmp (status, "Ready") != 0)
            snprintf (r->note, sizeof (r->note), "Storage status %s, still usable%s%s",
                      status, colon, *colon ? message : "");
    }
}

void storage_decide (struct dws_health *h, struct rabbit *r, json_t *actions)
{
    bool was_up = r->up;
    char was_why[sizeof (r->why)];
    snprintf (was_why, sizeof (was_why), "%s", r->why);

    decide_up (r);
    if (was_up != r->up || strcmp (was_why, r->why) != 0) {
        h->updown_gen++;
        if (h->storage_synced)
            dws_act_log (actions, r->up ? "info" : "warning", "rabbit %s is %s%s%s", r->name,
                  r->up ? "up" : "down", r->up ? (r->note[0] ? ": " : "") : ": ",
                  r->up ? r->note : r->why);
    }

    /* the links: every compute of this rabbit, reported or not */
    for (size_t k = 0; k < r->nmembers; k++) {
        struct compute *c = &h->computes[r->members[k]];
        const char *st = json_string_value (json_object_get (r->sv.links, c->name));
        snprintf (c->link, sizeof (c->link), "%s", st ? st : "");
        c->mount_failed = false; /* cleared by the rabbit's next Storage event */
    }
    arm_soon (h, actions);
}

/* Rabbit r's Storage is now obj (NULL: none): parsed once, then decided. */
static void storage_read (struct dws_health *h, struct rabbit *r, json_t *obj, json_t *actions)
{
    struct storageview v;
    storageview_parse (obj, &v);
    storageview_clear (&r->sv);
    r->sv = v;
    storage_decide (h, r, actions);
}

int dws_health_storage (struct dws_health *h, const char *event, json_t *obj, json_t *actions,
                        dws_error_t *err)
{
    const char *name = storageview_name (obj);
    if (!event || !name)
        return dws_errorf (err, "Storage event needs an event type and metadata.name");
    bool deleted = !strcmp (event, "DELETED");
    if (deleted)
        json_object_del (h->storages, name);
    else
        json_object_set (h->storages, name, obj);
    long ri = table_index (h->rabbit_index, name);
    if (ri < 0)
        return 0; /* not a rabbit of the SystemConfiguration (yet) */
    storage_read (h, &h->rabbits[ri], deleted ? NULL : obj, actions);
    return 0;
}

int dws_health_storage_sync (struct dws_health *h, json_t *objects, json_t *actions,
                             dws_error_t *err)
{
    if (!json_is_array (objects))
        return dws_errorf (err, "Storage sync needs an objects array");
    json_object_clear (h->storages);
    size_t i;
    json_t *obj;
    json_array_foreach (objects, i, obj) {
        const char *name = storageview_name (obj);
        if (name)
            json_object_set (h->storages, name, obj);
    }
    for (size_t k = 0; k < h->nrabbits; k++)
        storage_read (h, &h->rabbits[k], json_object_get (h->storages, h->rabbits[k].name),
                      actions);
    h->storage_synced = true;
    arm_soon (h, actions);
    return 0;
}

void dws_health_mount_failed (struct dws_health *h, json_t *hosts, json_t *actions)
{
    size_t i;
    json_t *v;
    json_array_foreach (hosts, i, v) {
        struct compute *c = table_compute (h, json_string_value (v));
        if (c)
            c->mount_failed = true;
    }
    arm_soon (h, actions);
}
