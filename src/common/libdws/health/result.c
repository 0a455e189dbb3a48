/* result.c - the answers to what health sent (dws_health_result): a batch
 * answered in full is done, a failed one is sent again after
 * DWS_HEALTH_RETRY_DELAY; Fluxion's answer to find says what it has.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <stdlib.h>
#include <string.h>

#include "wire/action.h"
#include "arm.h"
#include "batch.h"
#include "placement/rssd.h"
#include "table.h"

/* The paths of the ssd vertices in Fluxion's find answer (JGF: the matching
 * vertices and their ancestors; R null when none matches), or NULL with
 * why it cannot be read.
 */
static json_t *down_ssd_paths (json_t *answer, dws_error_t *why)
{
    json_t *R = json_object_get (answer, "R");
    if (!json_is_object (answer) || !R) {
        dws_errorf (why, "its find answer has no R");
        return NULL;
    }
    if (json_is_null (R))
        return json_array (); /* nothing down */
    return dws_rssd_graph_paths (json_object_get (R, "graph"), "its find answer's R.graph", why);
}

static int find_result (struct dws_health *h, const char *tok, json_t *answer,
                        const char *errstr, json_t *actions, dws_error_t *err)
{
    /* the one find in flight (a restart forgets its batch, so an answer
     * from a Fluxion since gone never gets here) */
    json_object_del (h->batches, tok);
    h->find_token[0] = '\0';
    dws_error_t why;
    json_t *down = answer ? down_ssd_paths (answer, &why) : NULL;
    if (!down)
        dws_act_log (actions, "warning", "Fluxion's ssd statuses are unknown (%s): giving it every"
             " rabbit's state", answer ? why.text : errstr);
    int rc = dws_health_fluxion_state (h, down, actions, err);
    json_decref (down);
    return rc;
}

/* An ssd batch answered in full (ok) or failed: its vertices that it was
 * the last to set are now known to Fluxion, or unknown (sent again after
 * DWS_HEALTH_RETRY_DELAY).  A batch of an older graph touches nothing.
 */
static void ssd_batch_done (struct dws_health *h, json_t *b, bool ok)
{
    unsigned long id = (unsigned long)json_integer_value (json_object_get (b, "id"));
    size_t first = (size_t)json_integer_value (json_object_get (b, "first"));
    size_t end = (size_t)json_integer_value (json_object_get (b, "end"));
    if ((unsigned long)json_integer_value (json_object_get (b, "gen")) != h->graph_gen
        || end > h->nssd)
        return;
    for (size_t i = first; i < end; i++) {
        struct ssd *s = &h->ssdv[i];
        if (s->batch != id)
            continue;
        s->batch = 0;
        if (!ok)
            s->applied = -1;
    }
    h->holds_dirty = true;
}

int dws_health_result (struct dws_health *h, json_t *event, double now, json_t *actions,
                       dws_error_t *err)
{
    const char *tok = json_string_value (json_object_get (event, "token"));
    json_t *b = tok ? json_object_get (h->batches, tok) : NULL;
    h->now = now;
    if (!tok)
        return dws_errorf (err, "result has no token");
    if (!b)
        return 0; /* a batch already failed and forgotten */
    bool ok = json_is_true (json_object_get (event, "ok"));
    const char *kind = json_string_value (json_object_get (b, "kind"));
    json_t *names = json_object_get (b, "names");
    json_int_t n = json_integer_value (json_object_get (b, "n"));
    const char *msg = json_string_value (json_object_get (event, "errstr"));
    if (!msg)
        msg = json_string_value (json_object_get (event, "message"));
    if (!strcmp (kind, "find"))
        return find_result (h, tok, ok ? json_object_get (event, "payload") : NULL,
                            msg ? msg : "no answer", actions, err);
    if (!ok && !strcmp (kind, "ss")
        && json_integer_value (json_object_get (event, "code")) == 404) {
        dws_act_log (actions, "debug", "SystemStatus %s/default not found: not updated", h->namespace);
        ok = true; /* as DWS says: the WLM only patches it when it exists */
    }
    if (ok) {
        if (n > 1) {
            json_object_set_new (b, "n", json_integer (n - 1));
            return 0;
        }
        if (!strcmp (kind, "ssd"))
            ssd_batch_done (h, b, true);
        json_object_del (h->batches, tok);
        return 0;
    }
    if (!strcmp (kind, "ssd"))
        ssd_batch_done (h, b, false);
    char *what = batch_hostlist (names);
    dws_act_log (actions, "err", "%s update for %s failed (retrying in %gs): %s", kind,
          what ? what : "?", DWS_HEALTH_RETRY_DELAY, msg ? msg : "no answer");
    free (what);
    size_t i;
    json_t *v;
    json_array_foreach (names, i, v) {
        const char *name = json_string_value (v);
        struct compute *c = table_compute (h, name);
        if (!c)
            continue;
        if (!strcmp (kind, "bad"))
            c->bad_applied = -1;
        else if (!strcmp (kind, "alloc"))
            c->alloc_applied = -1;
        else if (!strcmp (kind, "ss"))
            c->ss_applied = -1;
        else { /* drain, undrain: decide those edges again */
            c->link_seen = -1;
            free (c->drain_sent);
            c->drain_sent = NULL;
        }
    }
    json_object_del (h->batches, tok);
    arm_flush (h, DWS_HEALTH_RETRY_DELAY, actions);
    return 0;
}
