/* SPDX-License-Identifier: LGPL-3.0-or-later */
#include <stdlib.h>
#include <string.h>

#include "jsontap.h"
#include "parse/ruleset.h"


static const char *RULES =
    "{\"metadata\": {\"name\": \"test\"}, \"spec\": ["
    " {\"command\": \"jobdw\", \"watchStates\": \"Proposal,Setup\", \"ruleDefs\": ["
    "  {\"key\": \"^type$\", \"type\": \"string\", \"pattern\": \"^(xfs|lustre)$\","
    "   \"isRequired\": true, \"isValueRequired\": true},"
    "  {\"key\": \"^capacity$\", \"type\": \"string\", \"pattern\": \"^\\\\d+GiB$\","
    "   \"isRequired\": true, \"isValueRequired\": true},"
    "  {\"key\": \"^name$\", \"type\": \"string\", \"pattern\": \"^[a-z][a-z0-9\\\\-]+$\","
    "   \"isRequired\": true, \"isValueRequired\": true, \"uniqueWithin\": \"jobdw_name\"},"
    "  {\"key\": \"^count$\", \"type\": \"integer\", \"min\": 2, \"max\": 10},"
    "  {\"key\": \"^fast$\", \"type\": \"bool\", \"pattern\": \"x\"},"
    "  {\"key\": \"^odd$\", \"type\": \"float\"},"
    "  {\"key\": \"^requires$\", \"type\": \"list-of-string\","
    "   \"patterns\": [\"^copy-offload$\", \"^user-container-auth$\"],"
    "   \"isValueRequired\": true}]},"
    " {\"command\": \"copy_in\", \"driverLabel\": \"dm\", \"watchStates\": \"DataIn\","
    "  \"ruleDefs\": [{\"key\": \"^source$\", \"type\": \"string\", \"isRequired\": true}]}"
    "]}";

static struct dws_ruleset *rs;

static void check (const char *dirs, const char *expect)
{
    dws_error_t err;
    char *s = dws_ruleset_validate_json (rs, dirs, &err);
    json_is (s ? s : err.text, expect, dirs);
    free (s);
}

#define J(d) "[\"" d "\"]"

int main (void)
{
    dws_error_t err;

    rs = dws_ruleset_create_json (RULES, "dws-system", &err);
    ok (rs != NULL, "rules load%s%s", rs ? "" : ": ", rs ? "" : err.text);
    check (J ("#DW jobdw type=xfs capacity=1GiB name=aa-b"),
           "[{\"index\": 0, \"command\": \"jobdw\", \"driverLabel\": \"test\","
           " \"watchStates\": [\"Proposal\", \"Setup\"]}]");
    check ("[\"#DW copy_in source=x\"]",
           "[{\"index\": 0, \"command\": \"copy_in\", \"driverLabel\": \"dm\","
           " \"watchStates\": [\"DataIn\"]}]");
    check (J ("#DW jobdw type=zfs capacity=1GiB name=aa"), "argument 'type' invalid string 'zfs'");
    check (J ("#DW jobdw type=xfs capacity=1GiB"), "missing required argument '^name$'");
    check (J ("#DW jobdw type=xfs capacity=1GiB name=aa color=red"),
           "unsupported argument 'color'");
    check (J ("#DW jobdw type capacity=1GiB name=aa"), "argument 'type' requires value");
    check (J ("#DW jobdw type= capacity=1GiB name=aa"), "argument 'type' invalid string ''");
    check (J ("#DW jobdw type=xfs capacity=1GiB name=aa count=x"),
           "argument 'count' invalid integer 'x'");
    check (J ("#DW jobdw type=xfs capacity=1GiB name=aa count=11"),
           "argument 'count' specified integer value 11 is greather than maximum value 10");
    check (J ("#DW jobdw type=xfs capacity=1GiB name=aa count=1"),
           "argument 'count' specified integer value 1 is less than minimum value 2");
    check (J ("#DW jobdw type=xfs capacity=1GiB name=aa fast=maybe"),
           "argument 'fast' invalid boolean 'maybe'");
    check (J ("#DW jobdw type=xfs capacity=1GiB name=aa fast"),
           "[{\"index\": 0, \"command\": \"jobdw\", \"driverLabel\": \"test\","
           " \"watchStates\": [\"Proposal\", \"Setup\"]}]");
    check (J ("#DW jobdw type=xfs capacity=1GiB name=aa odd=1"),
           "unsupported rule type 'float'");
    check (J ("#DW jobdw type=xfs capacity=1GiB name=aa requires=copy-offload,bogus"),
           "argument 'requires' invalid string 'bogus' in list 'copy-offload,bogus'");
    check (J ("#DW jobdw type=xfs capacity=1GiB name=aa requires=copy-offload,copy-offload"),
           "argument 'requires' word 'copy-offload' repeated in list"
           " 'copy-offload,copy-offload'");
    check ("[\"#DW jobdw type=xfs capacity=1GiB name=aa\","
           " \"#DW jobdw type=xfs capacity=1GiB name=aa\"]",
           "value 'aa' must be unique within 'jobdw_name'");
    check (J ("#DW nosuch x=1"), "invalid directive '#DW nosuch x=1'");
    check (J ("jobdw"), "missing '#DW' prefix in directive 'jobdw'");
    check ("[5]", "directives must be a list of strings");
    check ("{}", "directives must be a list of strings");
    dws_ruleset_destroy (rs);

    rs = dws_ruleset_create_json ("[]", "dws-system", &err);
    check (J ("#DW jobdw"), "unable to find ruleset in namespace: dws-system");
    dws_ruleset_destroy (rs);

    ok (dws_ruleset_create_json ("{\"spec\": [{\"command\": \"x\", \"ruleDefs\":"
                                 " [{\"key\": \"(?i)a\", \"type\": \"string\"}]}]}",
                                 "ns", &err) == NULL,
        "RE2-only syntax is refused: %s", err.text);
    ok (dws_ruleset_create_json ("{\"spec\": [{\"command\": \"x\", \"ruleDefs\":"
                                 " [{\"key\": \"a(\", \"type\": \"string\"}]}]}",
                                 "ns", &err) == NULL,
        "a broken regex is refused: %s", err.text);
    ok (dws_ruleset_create_json ("{\"spec\": [{\"ruleDefs\": []}]}", "ns", &err) == NULL,
        "a rule without a command is refused: %s", err.text);
    ok (dws_ruleset_create_json ("7", "ns", &err) == NULL, "non-object rules: %s", err.text);
    ok (dws_ruleset_create_json ("{", "ns", &err) == NULL, "bad JSON: %s", err.text);
    return done_testing ();
}
