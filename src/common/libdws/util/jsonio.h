/* jsonio.h - JSON text in and out of the cffi entry points.
 *
 * Every `*_json` entry point takes JSON text and returns JSON text; these
 * two helpers give them one wording for bad input and one ownership rule.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_JSONIO_H
#define DWS_JSONIO_H

#include <jansson.h>

#include "error.h"

/* Parse text (NULL is treated as empty).  On failure returns NULL with
 * "<what>: invalid JSON: <reason> (line L, column C)".  Any JSON value is
 * accepted; flags are jansson decoding flags added to JSON_DECODE_ANY.
 */
json_t *dws_json_load (const char *what, const char *text, size_t flags, dws_error_t *err);

/* Compact malloc'd text of o, releasing o.  NULL o gives NULL (err left as
 * the caller set it); an encoding failure gives NULL with "out of memory".
 */
char *dws_json_dump_take (json_t *o, dws_error_t *err);

/* v's text, or def when v is not a string. */
const char *dws_json_str_or (json_t *v, const char *def);

/* o.a.b's text, or NULL. */
const char *dws_json_str_at (json_t *o, const char *a, const char *b);

#endif /* !DWS_JSONIO_H */
