/* ruleset.h - validate #DW directives against DWDirectiveRule data.
 *
 * The rules are the DWS DWDirectiveRule resources (the nnf ruleset ships as
 * flux_dws/data/nnf-ruleset.json), so the validator serves both the WLM side
 * (early feedback, `flux-dws check`) and the emulated DWS admission webhook,
 * and a site can supply its own rules.  Semantics follow DWS
 * (utils/dwdparse): each directive is checked against every rule with its
 * command; any error is returned at once, with DWS' exact text; a directive
 * no rule matched is "invalid directive '<d>'"; uniqueWithin spans the whole
 * workflow; a missing required argument prints its key regex.
 *
 * Key and pattern regexes are RE2 in DWS; they are compiled here as POSIX
 * extended regexes after translating the RE2 classes \d \w \s (and their
 * negations).  Other RE2-only syntax (e.g. (?i), lazy quantifiers) is
 * refused when the rules are loaded, naming the regex.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_RULESET_H
#define DWS_RULESET_H

#include <jansson.h>

#include "util/error.h"

struct dws_ruleset;

/* `rules` is a DWDirectiveRule object, an array of them, or an array of
 * rule specs ({command, driverLabel, watchStates, ruleDefs}).  `ns` is the
 * namespace named by "unable to find ruleset in namespace: <ns>" when there
 * are no rules.
 */
struct dws_ruleset *dws_ruleset_create (json_t *rules, const char *ns, dws_error_t *err);
void dws_ruleset_destroy (struct dws_ruleset *rs);

/* Validate a workflow's directives (array of strings).  On success returns
 * the rule matches in order, as the DWS mutating webhook uses them:
 *   [{"index": i, "command": c, "driverLabel": d, "watchStates": [..]}, ...]
 * On failure NULL with the DWS error text.
 */
json_t *dws_ruleset_validate (struct dws_ruleset *rs, json_t *directives, dws_error_t *err);

/* cffi entry points. */
struct dws_ruleset *dws_ruleset_create_json (const char *rules_json,
                                             const char *ns,
                                             dws_error_t *err);
char *dws_ruleset_validate_json (struct dws_ruleset *rs,
                                 const char *directives_json,
                                 dws_error_t *err);

#endif /* !DWS_RULESET_H */
