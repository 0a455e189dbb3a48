/* rabbitdf.h - dws.rabbits {"df": true}: the rabbits' space as df shows
 * it (flux dws df).
 *
 * Per rabbit, from its Storage (rabbit health's view): "size" (its
 * drives' bytes), "free" (status.capacity, the free bytes: DWS #284),
 * "used" (size - free); and from every Servers object of the cluster
 * (listed for each request): what Flux jobs hold ("jobs": Servers of a
 * Workflow's jobdw), what persistent storage holds ("persistent": Servers
 * of a PersistentStorageInstance, whoever made it) and the rest of
 * "used" ("other": an NnfSystemStorage, allocations no Servers shows, and
 * space the drives report used but nothing names).  A Servers object
 * counts status.allocationSets[].storage.<rabbit>.allocationSize.  The
 * rabbit's ssd vertices as the service last gave them to Fluxion:
 * "ssds" {"total", "up", "down", "held"} (held: down for a job's hold
 * until its Teardown), and "up"/"why" as dws.rabbits says.  "total" sums
 * every rabbit's figures.  Byte figures are null where the Storage has
 * not reported them.  Open to guests, as dws.rabbits is: nothing in it is a
 * user's.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_ENGINE_RABBITDF_H
#define DWS_ENGINE_RABBITDF_H

#include <stdbool.h>

#include "engine/shapes/token.h"
#include "engine/state.h"

/* Lists the Servers objects, the request waiting in the pending table
 * (token "df:<seq>"). */
void rabbitdf_request (struct dws_engine *e, json_t *msgid);
/* The answer to its Servers list: answers the request (true: it is
 * answered, engine.c takes it out of the pending table). */
bool rabbitdf_result (struct dws_engine *e, json_t *req, const struct token *t, json_t *event);

#endif /* !DWS_ENGINE_RABBITDF_H */
