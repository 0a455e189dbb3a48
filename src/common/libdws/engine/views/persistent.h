/* persistent.h - the dws.persistent-* requests: persistent storage as
 * `flux dws persistent` shows and shares it.
 *
 * Guest methods, each deciding what the requester may do:
 *
 *   dws.persistent-list {}: every PSI of the namespace (psi.h's view, its
 *     "consumers" read into "jobs": the Flux job ids of the Workflows
 *     using it now; references that name no Flux Workflow stay in
 *     "workflows"), sorted by name.  PSIs only: never a Secret, never a
 *     token.  Requests that come before the PSIs' first list wait for it.
 *   dws.persistent-share {"name"}, dws.persistent-unshare {"name"}: set
 *     or remove the ignore-uid annotation (psi.h) by a merge patch that
 *     carries the resourceVersion the checks were made on.  Allowed to
 *     the PSI's owner (spec.userID) and the instance owner (EPERM for
 *     others); ENOENT for a PSI that does not exist, EBUSY for one being
 *     deleted, {"success": false, "errstr"} for a payload without a
 *     name, EIO with the API server's
 *     words when the patch fails (EAGAIN on a 409: it changed meanwhile).
 *     Answer {"success": true, "name", "shared": b, "changed": b}
 *     (changed false: it already was so, nothing written).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_ENGINE_PERSISTENT_H
#define DWS_ENGINE_PERSISTENT_H

#include "engine/shapes/token.h"
#include "engine/state.h"

/* Before the PSIs' first list: the request event waits for it in the
 * deferral queue (pending.h), fed again once it has come (true), as
 * Workflow requests wait for the first Workflow list; else false.
 */
bool persistent_wait_for_list (struct dws_engine *e, json_t *event);
void persistent_list_request (struct dws_engine *e, json_t *msgid, json_int_t uid);
void persistent_share_request (struct dws_engine *e, json_t *msgid, json_t *p, json_int_t uid,
                               bool share);
/* The answer to a share or unshare patch (token "persistent-share:<seq>"):
 * answers the request it was for (true: engine.c takes it out of the
 * pending table). */
bool persistent_result (struct dws_engine *e, json_t *req, const struct token *t,
                        json_t *event);

#endif /* !DWS_ENGINE_PERSISTENT_H */
