/* status.h - the dws.status answer (dws_engine_status in engine.h
 * is the engine's part of it).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_ENGINE_STATUS_H
#define DWS_ENGINE_STATUS_H

#include "engine/state.h"

/* Answer dws.status whole: the engine's status, the ids of its
 * Workflows, and the service's own figures (service, an object or NULL).
 */
void status_request (struct dws_engine *e, json_t *msgid, json_t *service);

#endif /* !DWS_ENGINE_STATUS_H */
