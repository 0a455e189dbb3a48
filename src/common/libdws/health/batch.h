/* batch.h - what rabbit health sends, in batches: each RPC or patch
 * carries a token (DWS_HEALTH_TOKEN...) naming its batch, whose answer
 * dws_health_result reads.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_HEALTH_BATCH_H
#define DWS_HEALTH_BATCH_H

#include "state.h"

/* A new batch of 'kind' ("ssd", "bad", "alloc", "drain", "undrain", "ss",
 * "find") for 'names' (copied), answered by 'n' results: its token, in
 * tok[len] (returned).
 */
const char *batch_new (struct dws_health *h, const char *kind, json_t *names, int n,
                       char *tok, size_t len);

/* Append an "rpc" action to rank 0 (payload stolen). */
void batch_rpc (json_t *actions, const char *topic, json_t *payload, const char *tok);

/* 'names' (a JSON array of strings) as one hostlist, or NULL; free it. */
char *batch_hostlist (json_t *names);

/* Count n more of 'what' sent (the view's "sent"). */
void batch_count (struct dws_health *h, const char *what, json_int_t n);

#endif /* !DWS_HEALTH_BATCH_H */
