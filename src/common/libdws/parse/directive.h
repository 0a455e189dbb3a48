/* directive.h - #DW directives: splitting a job's dw attribute, presets,
 * and tokenising one directive the way DWS does.
 *
 * A job's dw attribute (Flux jobspec attributes.system.dw) is a string
 * holding one or more "#DW ..." directives (on one line or several), or a
 * list of such strings.  DWS wants one directive per Workflow dwDirectives
 * element, so flux-dws splits at every "#DW" that begins a word.
 *
 * Presets ([rabbit.presets] in the Flux config) map a name to a string or a
 * list of strings.  A dw string, or an element of a dw list, whose whole
 * (stripped) text is a preset name is replaced by the preset's value before
 * splitting.  Preset values are not expanded again.
 *
 * Tokenising follows DWS (dwdparse.BuildArgsMap): whitespace-separated
 * words; word 0 must be "#DW", word 1 is the command, later words are
 * key=value split at the first '=' (a=b=c is key a, value b=c); a bare key
 * has no value; a repeated key (including "command") is an error.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_DIRECTIVE_H
#define DWS_DIRECTIVE_H

#include <jansson.h>

#include "util/error.h"

/* Split `dw` (string or array of strings) into an array of directive
 * strings, expanding `presets` (object or NULL) first.  Errors:
 *   "Malformed #DW directives: dw must be a string or a list of strings"
 *   "rabbit.presets.<name> must be a string or a list of strings"
 */
json_t *dws_dw_split (json_t *dw, json_t *presets, dws_error_t *err);

/* Tokenise one directive into
 *   {"command": "<cmd>", "args": [["key", "value" | null], ...]}
 * (args in directive order; null for a bare key).  Errors use DWS' words:
 *   "missing '#DW' prefix in directive '<d>'"
 *   "repeated argument '<k>' in directive '<d>'"
 *   "invalid directive '#DW'" (no command)
 */
json_t *dws_dw_parse (const char *directive, dws_error_t *err);

/* Value of argument `key` in a parsed directive: the string, "" for a bare
 * key, or NULL if absent.
 */
const char *dws_dw_arg (json_t *parsed, const char *key);

/* 1 if s is non-empty and neither begins nor ends with white space (the
 * Unicode set used for splitting), i.e. s can be the whole stripped text
 * of a dw value and so name a preset; else 0.
 */
int dws_dw_is_preset_name (const char *s);

/* 1 if a directive of `directives` (an array of directive strings, as
 * dws_dw_split returns) has one of the `commands` (a NULL-terminated list);
 * with `unparsed` set, a directive that does not tokenise counts as one
 * too.  0 if none, -1 if directives is not an array.
 */
int dws_dw_any_command (json_t *directives, const char *const commands[], int unparsed);

/* 1 if `dw` (a job's dw attribute, split without presets) uses persistent
 * storage made by another job: a persistentdw or destroy_persistent
 * directive, or an element that is no #DW directive at all (a preset
 * name, which only the service can expand: counted, so as to err on the
 * side of waiting).  0 if not, -1 if dw does not split.
 */
int dws_dw_uses_persistent (json_t *dw);

/* cffi entry points (JSON text in and out; malloc'd results). */
char *dws_dw_split_json (const char *dw_json, const char *presets_json, dws_error_t *err);
char *dws_dw_parse_json (const char *directive, dws_error_t *err);

#endif /* !DWS_DIRECTIVE_H */
