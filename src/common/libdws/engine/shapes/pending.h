/* pending.h - the engine's requests that wait, each in one place:
 *
 * - for an answer: every request the engine makes that is not a job's
 *   (persistent-share and -unshare, dws.drain and -undrain, dws.rabbits
 *   {df}) is one entry of the pending table (e->pending), keyed by the
 *   sequence its tokens carry (token.h).  engine.c finds the entry an
 *   answer is for (none: a stale answer, dropped), hands both to the
 *   kind's handler and, when that says the request is answered, removes
 *   it: the one remove-on-answer path.  (A job's requests wait on the
 *   job: the job table is theirs.)
 * - for a list: a request that came before a list it needs (the first
 *   Workflow list, the PSIs' first list) waits in the one deferral queue
 *   (e->deferred), tagged with what it waits for, and is fed again, in
 *   the order they came, once all of it has come.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_ENGINE_PENDING_H
#define DWS_ENGINE_PENDING_H

#include <stdbool.h>

#include "engine/state.h"
#include "token.h"

/* A new request of a TOKEN_REQUEST or TOKEN_STEP kind, req its own
 * fields (taken; "kind" is set): its sequence, for its tokens. */
json_int_t pending_add (struct dws_engine *e, enum token_kind kind, json_t *req);
/* The request the token is for (borrowed), or NULL: none (answered
 * already, or never made). */
json_t *pending_get (struct dws_engine *e, const struct token *t);
/* The request is answered: it leaves the table. */
void pending_remove (struct dws_engine *e, const struct token *t);

/* The request event waits for the lists 'waits' (enum pending_wait bits). */
void pending_defer (struct dws_engine *e, json_t *event, unsigned waits);
/* The deferred request events whose lists have all come, in the order
 * they came, taken out of the queue (a new reference; an empty array
 * when none). */
json_t *pending_ready (struct dws_engine *e);

#endif /* !DWS_ENGINE_PENDING_H */
