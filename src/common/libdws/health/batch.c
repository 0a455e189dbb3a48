/* batch.c - what rabbit health sends, in batches (batch.h).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>

#include "batch.h"
#include "util/hostlist.h"
#include "wire/wire.h"

const char *batch_new (struct dws_health *h, const char *kind, json_t *names, int n,
                       char *tok, size_t len)
{
    snprintf (tok, len, DWS_HEALTH_TOKEN "%lu", ++h->next_token);
    json_object_set_new (h->batches, tok,
                         json_pack ("{s:s s:O s:i}", "kind", kind, "names", names, "n", n));
    return tok;
}

void batch_rpc (json_t *actions, const char *topic, json_t *payload, const char *tok)
{
    json_array_append_new (actions, json_pack ("{s:s s:s s:o s:i s:s}", "action", DWS_WIRE_ACTION (RPC),
                                               "topic", topic, "payload", payload, "nodeid", 0,
                                               "token", tok));
}

char *batch_hostlist (json_t *names)
{
    size_t n = json_array_size (names);
    const char **v = calloc (n ? n : 1, sizeof (*v));
    for (size_t i = 0; i < n; i++)
        v[i] = json_string_value (json_array_get (names, i));
    dws_error_t err;
    char *s = dws_hostlist_compress (v, n, &err);
    free (v);
    return s;
}

void batch_count (struct dws_health *h, const char *what, json_int_t n)
{
    json_t *v = json_object_get (h->sent, what);
    json_object_set_new (h->sent, what, json_integer (json_integer_value (v) + n));
}
