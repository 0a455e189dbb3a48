/* token.h - tokens "<kind>:<jobid>" (the kinds: state.h).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_ENGINE_TOKEN_H
#define DWS_ENGINE_TOKEN_H

#include "state.h"

const char *token_kind_name (enum token_kind kind);
/* The kind of the first len bytes of s, or -1 for none. */
int token_kind_parse (const char *s, size_t len);
/* "<kind>:<jobid>" */
const char *token_for (char *buf, size_t len, enum token_kind kind, struct job *job);

#endif /* !DWS_ENGINE_TOKEN_H */
