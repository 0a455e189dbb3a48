/* rabbitdf.c - dws.rabbits {"df": true} (rabbitdf.h).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "engine/shapes/act.h"
#include "engine/shapes/answer.h"
#include "engine/shapes/pending.h"
#include "engine/shapes/token.h"
#include "health/health.h"
#include "rabbitdf.h"

#define LABEL_PSI "dataworkflowservices.github.io/persistentstorage.name"
#define LABEL_WORKFLOW "dataworkflowservices.github.io/workflow.name"
#define LABEL_OWNER_KIND "dataworkflowservices.github.io/owner.kind"

void rabbitdf_request (struct dws_engine *e, json_t *msgid)
{
    char tok[64];
    json_int_t seq = pending_add (e, TOK_DF, json_pack ("{s:O}", "msgid", msgid));
    act_k8s (e, "list", "Servers", NULL, NULL, NULL,
             token_for_request (tok, sizeof (tok), TOK_DF, seq));
}

/* Whose a Servers object is: "jobs", "persistent" or "other". */
static const char *servers_owner (json_t *obj)
{
    json_t *labels = json_object_get (json_object_get (obj, "metadata"), "labels");
    const char *kind = json_string_value (json_object_get (labels, LABEL_OWNER_KIND));
    if (json_object_get (labels, LABEL_PSI)
        || (kind && !strcmp (kind, "PersistentStorageInstance")))
        return "persistent";
    if (json_object_get (labels, LABEL_WORKFLOW))
        return "jobs";
    return "other";
}

static void add (json_t *o, const char *key, json_int_t n)
{
    json_object_set_new (o, key, json_integer (json_integer_value (json_object_get (o, key)) + n));
}

/* {rabbit: {"jobs", "persistent", "other"}}: the bytes the Servers hold. */
static json_t *servers_sums (json_t *items)
{
    json_t *sums = json_object ();
    size_t i;
    json_t *obj;
    json_array_foreach (items, i, obj) {
        const char *owner = servers_owner (obj);
        size_t k;
        json_t *set;
        json_array_foreach (json_object_get (json_object_get (obj, "status"), "allocationSets"),
                            k, set) {
            const char *rabbit;
            json_t *got;
            json_object_foreach (json_object_get (set, "storage"), rabbit, got) {
                json_int_t n = json_integer_value (json_object_get (got, "allocationSize"));
                if (n <= 0)
                    continue;
                json_t *r = json_object_get (sums, rabbit);
                if (!r)
                    json_object_set_new (sums, rabbit, (r = json_object ()));
                add (r, owner, n);
            }
        }
    }
    return sums;
}

/* The ssd vertices of a dws.rabbits rabbit, counted. */
static json_t *ssd_counts (json_t *rv)
{
    json_t *held = json_object ();
    size_t i, k;
    json_t *h, *p;
    json_array_foreach (json_object_get (rv, "held"), i, h)
        json_array_foreach (json_object_get (h, "ssds"), k, p)
            json_object_set (held, json_string_value (p), json_true ());
    json_t *o = json_pack ("{s:O s:O s:O s:i}", "total", json_object_get (rv, "ssds"), "up",
                           json_object_get (rv, "ssds_up"), "down",
                           json_object_get (rv, "ssds_down"), "held",
                           (int)json_object_size (held));
    json_decref (held);
    return o;
}

static json_t *rabbit_df (json_t *rv, json_t *sums, json_t *total)
{
    const char *name = json_string_value (json_object_get (rv, "name"));
    json_t *s = json_object_get (sums, name);
    json_int_t size = json_integer_value (json_object_get (rv, "capacity"));
    json_t *free_j = json_object_get (rv, "free");
    json_int_t jobs = json_integer_value (json_object_get (s, "jobs"));
    json_int_t pers = json_integer_value (json_object_get (s, "persistent"));
    json_int_t other = json_integer_value (json_object_get (s, "other"));
    json_t *o = json_pack ("{s:s s:O s:O s:I s:I}", "name", name, "up",
                           json_object_get (rv, "up"), "why", json_object_get (rv, "why"),
                           "jobs", jobs, "persistent", pers);
    json_object_set_new (o, "ssds", ssd_counts (rv));
    if (size <= 0 || !json_is_integer (free_j)) {
        json_object_set_new (o, "size", size > 0 ? json_integer (size) : json_null ());
        json_object_set_new (o, "free", json_null ());
        json_object_set_new (o, "used", json_null ());
        json_object_set_new (o, "other", json_integer (other));
    }
    else {
        json_int_t fr = json_integer_value (free_j);
        json_int_t used = fr >= size ? 0 : size - fr;
        /* what the drives say is used beyond what jobs and persistent
         * storage hold: system storage and anything unnamed */
        json_int_t rest = used - jobs - pers;
        if (rest < other)
            rest = other;
        json_object_set_new (o, "size", json_integer (size));
        json_object_set_new (o, "free", json_integer (fr));
        json_object_set_new (o, "used", json_integer (used));
        json_object_set_new (o, "other", json_integer (rest < 0 ? 0 : rest));
        add (total, "size", size);
        add (total, "free", fr);
        add (total, "used", used);
    }
    add (total, "jobs", jobs);
    add (total, "persistent", pers);
    add (total, "other", json_integer_value (json_object_get (o, "other")));
    json_t *ssds = json_object_get (o, "ssds");
    json_t *tssds = json_object_get (total, "ssds");
    const char *k;
    json_t *v;
    json_object_foreach (ssds, k, v)
        add (tssds, k, json_integer_value (v));
    return o;
}

bool rabbitdf_result (struct dws_engine *e, json_t *req, const struct token *t, json_t *event)
{
    json_t *msgid = json_object_get (req, "msgid");
    (void)t;
    struct k8s_answer a = answer_of (event);
    if (!a.ok) {
        act_respond_error (e, msgid, EIO, "dws.rabbits: listing the Servers objects failed: %s",
                           answer_message (event));
        return true;
    }
    json_t *sums = servers_sums (json_object_get (a.obj, "items"));
    json_t *view = dws_health_view (e->health);
    json_t *rabbits = json_array ();
    json_t *total = json_pack ("{s:I s:I s:I s:I s:I s:I s:{s:i s:i s:i s:i}}", "size",
                               (json_int_t)0, "free", (json_int_t)0, "used", (json_int_t)0,
                               "jobs", (json_int_t)0, "persistent", (json_int_t)0, "other",
                               (json_int_t)0, "ssds", "total", 0, "up", 0, "down", 0, "held",
                               0);
    size_t i;
    json_t *rv;
    json_array_foreach (json_object_get (view, "rabbits"), i, rv)
        json_array_append_new (rabbits, rabbit_df (rv, sums, total));
    act_respond (e, msgid,
                 json_pack ("{s:b s:O s:O s:o s:o}", "success", 1, "ready",
                            json_object_get (view, "ready"), "fluxion",
                            json_object_get (view, "fluxion"), "rabbits", rabbits, "total",
                            total));
    json_decref (view);
    json_decref (sums);
    return true;
}
