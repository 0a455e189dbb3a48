/* verbtable.h - the one table of the engine's step verbs (advance.h).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_ENGINE_VERBTABLE_H
#define DWS_ENGINE_VERBTABLE_H

#include "advance.h"

/* The table engine.c gives the engine at create (e->verbs). */
const struct verbs *verbtable_get (void);

#endif /* !DWS_ENGINE_VERBTABLE_H */
