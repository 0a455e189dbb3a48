/* pending.c - the requests that wait: for an answer, for a list
 * (pending.h).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <stdio.h>

#include "pending.h"
#include "psi.h"

static void key_of (char *buf, size_t len, json_int_t seq)
{
    snprintf (buf, len, "%" JSON_INTEGER_FORMAT, seq);
}

json_int_t pending_add (struct dws_engine *e, enum token_kind kind, json_t *req)
{
    char key[32];
    json_int_t seq = ++e->pending_seq;
    key_of (key, sizeof (key), seq);
    json_object_set_new (req, "kind", json_integer (kind));
    json_object_set_new (e->pending, key, req);
    return seq;
}

json_t *pending_get (struct dws_engine *e, const struct token *t)
{
    char key[32];
    key_of (key, sizeof (key), t->n);
    json_t *req = json_object_get (e->pending, key);
    if (!req || json_integer_value (json_object_get (req, "kind")) != t->kind)
        return NULL;
    return req;
}

void pending_remove (struct dws_engine *e, const struct token *t)
{
    char key[32];
    key_of (key, sizeof (key), t->n);
    json_object_del (e->pending, key);
}

void pending_defer (struct dws_engine *e, json_t *event, unsigned waits)
{
    json_array_append_new (e->deferred, json_pack ("{s:i s:O}", "waits", (int)waits, "event",
                                                   event));
}

json_t *pending_ready (struct dws_engine *e)
{
    unsigned have = (e->synced ? PENDING_WORKFLOWS : 0u) | (psi_synced (e) ? PENDING_PSIS : 0u);
    json_t *ready = json_array ();
    json_t *waiting = json_array ();
    size_t i;
    json_t *d;
    if (!ready || !waiting) {
        json_decref (waiting);
        return ready; /* out of memory: they wait for the next list */
    }
    json_array_foreach (e->deferred, i, d) {
        unsigned waits = (unsigned)json_integer_value (json_object_get (d, "waits"));
        if ((waits & ~have) == 0)
            json_array_append (ready, json_object_get (d, "event"));
        else
            json_array_append (waiting, d);
    }
    json_decref (e->deferred);
    e->deferred = waiting;
    return ready;
}
