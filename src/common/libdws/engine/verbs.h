/* verbs.h - the one table of the engine's step verbs (advance.h).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_ENGINE_VERBS_H
#define DWS_ENGINE_VERBS_H

#include "advance.h"

/* The table engine.c gives the engine at create (e->verbs). */
const struct verbs *verbs_table (void);

#endif /* !DWS_ENGINE_VERBS_H */
