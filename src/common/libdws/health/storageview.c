/* storageview.c - a Storage object read once (storageview.h).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <string.h>

#include "storageview.h"

static const char *str_at (json_t *o, const char *a, const char *b)
{
    return json_string_value (json_object_get (json_object_get (o, a), b));
}

/* A Storage's space: 'total' the sum of its status.devices[].capacity or,
 * when no drive reports one, its status.capacity; 'free' its
 * status.capacity, -1 when not reported.
 */
static void space (json_t *status, struct storageview *v)
{
    json_t *cap = json_object_get (status, "capacity");
    json_t *dev;
    size_t i;

    v->free_bytes = -1;
    if (json_is_integer (cap) && json_integer_value (cap) >= 0)
        v->free_bytes = json_integer_value (cap);
    v->total = 0;
    json_array_foreach (json_object_get (status, "devices"), i, dev) {
        json_int_t c = json_integer_value (json_object_get (dev, "capacity"));
        if (c > 0)
            v->total = c > INT64_MAX - v->total ? INT64_MAX : v->total + c;
    }
    if (v->total == 0 && v->free_bytes > 0)
        v->total = v->free_bytes;
}

/* {compute: status} of status.access.computes; a later entry for a
 * compute wins.
 */
static json_t *links (json_t *status)
{
    json_t *listed = json_object ();
    size_t i;
    json_t *ent;
    json_array_foreach (json_object_get (json_object_get (status, "access"), "computes"), i,
                        ent) {
        const char *cname = json_string_value (json_object_get (ent, "name"));
        const char *st = json_string_value (json_object_get (ent, "status"));
        if (cname)
            json_object_set_new (listed, cname, json_string (st ? st : "Unknown"));
    }
    return listed;
}

void storageview_parse (json_t *obj, struct storageview *v)
{
    memset (v, 0, sizeof (*v));
    v->free_bytes = -1;
    if (!obj)
        return;
    json_t *status = json_object_get (obj, "status");
    json_t *ann = json_object_get (json_object_get (obj, "metadata"), "annotations");
    v->obj = json_incref (obj);
    v->state = str_at (obj, "spec", "state");
    v->mode = str_at (obj, "spec", "mode");
    v->status = str_at (obj, "status", "status");
    v->message = str_at (obj, "status", "message");
    v->reboot_required = json_is_true (json_object_get (status, "rebootRequired"));
    v->disable_reason = json_string_value (json_object_get (ann, "disable_reason"));
    v->disable_date = json_string_value (json_object_get (ann, "disable_date"));
    v->drain_reason = json_string_value (json_object_get (ann, "drain_reason"));
    v->drain_date = json_string_value (json_object_get (ann, "drain_date"));
    v->drained_by = json_string_value (json_object_get (ann, "flux-dws.io/drained-by"));
    space (status, v);
    v->links = links (status);
}

void storageview_clear (struct storageview *v)
{
    json_decref (v->obj);
    json_decref (v->links);
    storageview_parse (NULL, v);
}

const char *storageview_name (json_t *obj)
{
    return str_at (obj, "metadata", "name");
}

json_t *storageview_summary (const struct storageview *v)
{
    if (!v->obj)
        return json_null ();
    json_t *o = json_pack ("{s:s? s:s s:s s:s s:b s:s? s:s?}", "status", v->status, "state",
                           v->state ? v->state : "Enabled", "mode", v->mode ? v->mode : "Live",
                           "message", v->message ? v->message : "", "reboot_required",
                           v->reboot_required, "disable_reason", v->disable_reason,
                           "disable_date", v->disable_date);
    /* a drain (dws.drain's or the nnf CLI's): only when there is one */
    if (o && (v->drain_reason || v->drain_date)) {
        json_t *d = json_pack ("{s:s? s:s? s:s?}", "drain_reason", v->drain_reason, "drain_date",
                               v->drain_date, "drained_by", v->drained_by);
        json_object_update (o, d);
        json_decref (d);
    }
    return o;
}
