/* rabbitdrain.h - dws.drain and dws.undrain: an administrator drains a
 * rabbit from Flux as the nnf CLI's "rabbit drain" does (nnf-sos
 * tools/nnf), so that Flux, DWS and NNF agree whichever tool acted.
 *
 * A drain annotates the rabbit's Storage (default/<rabbit>) with
 * drain_date (UTC, "%Y-%m-%dT%H:%M:%SZ"), drain_reason and, of flux-dws's
 * own, RABBITDRAIN_BY_ANNOTATION (the userid that asked), and taints the
 * rabbit's Kubernetes Node cray.nnf.node.drain=true for NoSchedule and
 * NoExecute (its other taints kept: the Node is read first), in the nnf
 * CLI's order, one rabbit's writes after another's answer; when the Node
 * cannot be read or tainted, the annotations are taken back, as the nnf
 * CLI does (tried RABBITDRAIN_ROLLBACK_TRIES times; the answer says
 * whether they were, and names a rabbit left annotated but not tainted).  An undrain untaints first, then removes them.  nnf-sos then
 * reports the Storage Drained, and rabbit health takes the rabbit's ssd
 * vertices down in Fluxion like any rabbit that is not Ready: new jobs
 * stay off it, running jobs keep what they have.  An undrain removes the
 * taints of that key (not other cray.nnf.node.drain* keys, as the nnf
 * CLI) and the three annotations.  Nothing is kept in the
 * engine but the requests in flight: the state lives on the objects, so
 * it survives every restart, and a drain made with the nnf CLI reads the
 * same.
 *
 * Payload: {"rabbits": RFC 29 hostlist, "reason": text} (undrain: no
 * reason).  Every rabbit must be one of the SystemConfiguration's; the
 * reason is one line of 1..RABBITDRAIN_REASON_MAX bytes.  A bad request
 * is answered EINVAL and changes nothing; the answer comes once every
 * write has answered: {"success": true, "rabbits": [names]}, or EIO
 * naming each rabbit whose write failed ("rabbit R: tainting its
 * Kubernetes Node: MSG; its drain annotations were taken back", or "...;
 * taking its drain annotations back failed 3 times (MSG): its Storage says
 * drained, its Node is not tainted; 'flux dws undrain R' clears them").  Owner-only (request.c's
 * table).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_ENGINE_RABBITDRAIN_H
#define DWS_ENGINE_RABBITDRAIN_H

#include <stdbool.h>

#include "engine/shapes/token.h"
#include "engine/state.h"

#define RABBITDRAIN_TAINT_KEY "cray.nnf.node.drain"
#define RABBITDRAIN_BY_ANNOTATION "flux-dws.io/drained-by"
#define RABBITDRAIN_REASON_MAX 200
#define RABBITDRAIN_ROLLBACK_TRIES 3

void rabbitdrain_request (struct dws_engine *e, json_t *msgid, json_t *payload, json_t *event,
                          bool drain);
/* The answer to one of its k8s actions (token "drain:<seq>:<step>:<rabbit>"):
 * the rabbit's next step, or the end of its chain.  True once every
 * rabbit's has ended and the request is answered (engine.c then takes it
 * out of the pending table). */
bool rabbitdrain_result (struct dws_engine *e, json_t *req, const struct token *t,
                         json_t *event);

#endif /* !DWS_ENGINE_RABBITDRAIN_H */
