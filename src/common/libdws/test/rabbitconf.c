/* SPDX-License-Identifier: LGPL-3.0-or-later */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "config/rabbitconf.h"
#include "jsontap.h"

#define DEFAULTS                                                                    \
    "{\"datain_stall_timeout\": 0.0, \"drain_compute_nodes\": true, \"drain_queues\": null,"                       \
    " \"dws_api_version\": null, \"kubeconfig\": null, \"lustre\": {\"max_rabbits\": 0, \"mdts\": 1, \"min_rabbits\": 1, \"osts_per_mdt\": 0, \"spread\": false, \"whole_rabbit_gib\": 0}, \"mapping\": null,"          \
    " \"min_allocation_size\": 4, \"nnf_api_version\": null,"                       \
    " \"policy\": {\"maximums\": {}}, \"postrun_timeout\": 0.0,"                    \
    " \"prerun_timeout\": 0.0, \"presets\": {}, \"prestage\": \"never\", \"prestage_max_gib\": 0, \"prestage_max_jobs\": 0, \"prestage_node_wait\": 3600.0, \"prolog_timeout\": 1800.0, \"release_computes\": \"after-teardown\","        \
    " \"restrict_persistent_creation\": true, \"save_datamovements\": 0,"           \
    " \"setup_timeout\": 0.0, \"soft_drain\": true, \"tc_timeout\": 10.0,"          \
    " \"teardown_after\": 0.0}"

/* The whole result (or error text) for the table `in` (JSON text). */
static void parse_is (const char *in, const char *expect)
{
    dws_error_t err;
    char *s = dws_rabbitconf_parse_json (in, &err);
    json_is (s ? s : err.text, expect, in ? in : "(NULL)");
    free (s);
}

/* One key of the result: {key: value} parses and gives `expect` (JSON text)
 * for that key, or fails with the message `expect`.
 */
static void key_is (const char *key, const char *value, const char *expect)
{
    char in[1024];
    char what[1200];
    dws_error_t err;
    char *s;

    snprintf (in, sizeof (in), "{\"%s\": %s}", key, value);
    snprintf (what, sizeof (what), "%s = %s", key, value);
    s = dws_rabbitconf_parse_json (in, &err);
    if (s) {
        json_t *o = json_loads (s, 0, NULL);
        char *v = json_dumps (json_object_get (o, key), JSON_ENCODE_ANY | JSON_COMPACT);
        json_is (v, expect, what);
        free (v);
        json_decref (o);
    }
    else
        json_is (err.text, expect, what);
    free (s);
}

static void test_defaults (void)
{
    parse_is (NULL, DEFAULTS);
    parse_is ("null", DEFAULTS);
    parse_is ("{}", DEFAULTS);
    /* null is "not set", so the normalised table is a valid input */
    parse_is (DEFAULTS, DEFAULTS);
    parse_is ("{\"mapping\": null, \"tc_timeout\": null, \"restrict_persistent\": null}",
              DEFAULTS);
    parse_is ("[]", "rabbit: must be a table, got []");
    parse_is ("5", "rabbit: must be a table, got 5");
    parse_is ("\"x\"", "rabbit: must be a table, got \"x\"");
    parse_is ("{", "rabbit: invalid JSON: string or '}' expected near end of file"
                   " (line 1, column 1)");
    parse_is ("{\"tc_timeout\": 1, \"tc_timeout\": 2}",
              "rabbit: invalid JSON: duplicate object key near '\"tc_timeout\"'"
              " (line 1, column 30)");
}

static void test_seconds (void)
{
    const char *keys[] = {"tc_timeout", "setup_timeout", "prerun_timeout", "postrun_timeout",
                          "teardown_after"};
    char msg[256];

    for (size_t i = 0; i < sizeof (keys) / sizeof (keys[0]); i++) {
        const char *k = keys[i];
        key_is (k, "0", "0.0");
        key_is (k, "30", "30.0");
        key_is (k, "2.5", "2.5");
        key_is (k, "-0.0", "0.0");
        key_is (k, "1e3", "1000.0");
        key_is (k, "9223372036854775807", "9.2233720368547758e18");
#define BAD(v, got)                                                                       \
    snprintf (msg, sizeof (msg), "rabbit.%s: must be a number of seconds >= 0, got %s", k, \
              got);                                                                       \
    key_is (k, v, msg)
        BAD ("\"ten\"", "\"ten\"");
        BAD ("\"10\"", "\"10\"");
        BAD ("\"30m\"", "\"30m\"");
        BAD ("true", "true");
        BAD ("false", "false");
        BAD ("-1", "-1");
        BAD ("-0.5", "-0.5");
        BAD ("[10]", "[10]");
        BAD ("{}", "{}");
#undef BAD
    }
}

static void test_prolog_timeout (void)
{
    const char *k = "prolog_timeout";
    const char *fsd = "rabbit.prolog_timeout: must be a number of seconds >= 0 or a Flux"
                      " Standard Duration (a number with an optional suffix ms, s, m, h or d,"
                      " e.g. \"30m\"), got ";
    char msg[512];

    key_is (k, "0", "0.0");
    key_is (k, "600", "600.0");
    key_is (k, "12.5", "12.5");
    key_is (k, "\"30m\"", "1800.0");
    key_is (k, "\"1.5h\"", "5400.0");
    key_is (k, "\"90s\"", "90.0");
    key_is (k, "\"2d\"", "172800.0");
    key_is (k, "\"1500ms\"", "1.5");
    key_is (k, "\"45\"", "45.0");
    key_is (k, "\"0\"", "0.0");
    key_is (k, "\"0m\"", "0.0");
    key_is (k, "\".5m\"", "30.0");
    key_is (k, "\"5.m\"", "300.0");
    key_is (k, "\"1e2s\"", "100.0");
    key_is (k, "\"1E-1h\"", "360.0");
#define BAD(v)                                              \
    snprintf (msg, sizeof (msg), "%s%s", fsd, v);          \
    key_is (k, v, msg)
    BAD ("\"ten\"");
    BAD ("\"\"");
    BAD ("\"-5m\"");
    BAD ("\"+5m\"");
    BAD ("\" 5m\"");
    BAD ("\"5m \"");
    BAD ("\"5 m\"");
    BAD ("\"5M\"");
    BAD ("\"5min\"");
    BAD ("\"5w\"");
    BAD ("\"m\"");
    BAD ("\".\"");
    BAD ("\"1e\"");
    BAD ("\"1e+\"");
    BAD ("\"0x10\"");
    BAD ("\"nan\"");
    BAD ("\"1e999\"");
    BAD ("\"1e306d\"");
    BAD ("-1");
    BAD ("true");
    BAD ("[\"30m\"]");
#undef BAD
    key_is (k, "\"inf\"",
            "rabbit.prolog_timeout: must be finite (0 means no timeout), got \"inf\"");
    key_is (k, "\"infinity\"",
            "rabbit.prolog_timeout: must be finite (0 means no timeout), got \"infinity\"");
}

static void test_bools (void)
{
    const char *keys[] = {"drain_compute_nodes", "soft_drain", "restrict_persistent_creation"};
    char msg[256];

    for (size_t i = 0; i < sizeof (keys) / sizeof (keys[0]); i++) {
        const char *k = keys[i];
        key_is (k, "true", "true");
        key_is (k, "false", "false");
        snprintf (msg, sizeof (msg), "rabbit.%s: must be true or false, got 1", k);
        key_is (k, "1", msg);
        snprintf (msg, sizeof (msg), "rabbit.%s: must be true or false, got 0.0", k);
        key_is (k, "0.0", msg);
        snprintf (msg, sizeof (msg), "rabbit.%s: must be true or false, got \"true\"", k);
        key_is (k, "\"true\"", msg);
        snprintf (msg, sizeof (msg), "rabbit.%s: must be true or false, got [true]", k);
        key_is (k, "[true]", msg);
    }
}

static void test_counts (void)
{
    const char *k = "save_datamovements";
    key_is (k, "0", "0");
    key_is (k, "25", "25");
    key_is (k, "-1", "rabbit.save_datamovements: must be an integer >= 0, got -1");
    key_is (k, "2.0", "rabbit.save_datamovements: must be an integer >= 0, got 2.0");
    key_is (k, "2.5", "rabbit.save_datamovements: must be an integer >= 0, got 2.5");
    key_is (k, "true", "rabbit.save_datamovements: must be an integer >= 0, got true");
    key_is (k, "\"5\"", "rabbit.save_datamovements: must be an integer >= 0, got \"5\"");

    k = "min_allocation_size";
    key_is (k, "1", "1");
    key_is (k, "16", "16");
    key_is (k, "8589934591", "8589934591");
    key_is (k, "8589934592",
            "rabbit.min_allocation_size: must be at most 8589934591 GiB (the size in bytes"
            " must fit in 64 bits), got 8589934592");
    key_is (k, "0", "rabbit.min_allocation_size: must be an integer number of GiB >= 1, got 0");
    key_is (k, "-4", "rabbit.min_allocation_size: must be an integer number of GiB >= 1, got -4");
    key_is (k, "4.0",
            "rabbit.min_allocation_size: must be an integer number of GiB >= 1, got 4.0");
    key_is (k, "\"4GiB\"",
            "rabbit.min_allocation_size: must be an integer number of GiB >= 1, got \"4GiB\"");
    key_is (k, "false",
            "rabbit.min_allocation_size: must be an integer number of GiB >= 1, got false");
}

static void test_strings (void)
{
    const char *paths[] = {"mapping", "kubeconfig"};
    char msg[256];

    for (size_t i = 0; i < 2; i++) {
        const char *k = paths[i];
        key_is (k, "\"/etc/flux/system/rabbitmapping\"", "\"/etc/flux/system/rabbitmapping\"");
        key_is (k, "\"relative/kc\"", "\"relative/kc\"");
        snprintf (msg, sizeof (msg),
                  "rabbit.%s: must be a file name (non-empty string), got \"\"", k);
        key_is (k, "\"\"", msg);
        snprintf (msg, sizeof (msg), "rabbit.%s: must be a file name (non-empty string), got 5",
                  k);
        key_is (k, "5", msg);
        snprintf (msg, sizeof (msg),
                  "rabbit.%s: must be a file name (non-empty string), got [\"a\"]", k);
        key_is (k, "[\"a\"]", msg);
    }

    const char *apis[] = {"dws_api_version", "nnf_api_version"};
    for (size_t i = 0; i < 2; i++) {
        const char *k = apis[i];
        key_is (k, "\"v1alpha7\"", "\"v1alpha7\"");
        key_is (k, "\"v1\"", "\"v1\"");
        key_is (k, "\"v2beta1\"", "\"v2beta1\"");
        key_is (k, "\"v1alpha11\"", "\"v1alpha11\"");
        const char *bad[] = {"\"\"", "\"1alpha7\"", "\"v\"", "\"valpha1\"", "\"v1alpha\"",
                             "\"v1gamma1\"", "\"V1\"", "\"v1alpha7 \"",
                             "\"dataworkflowservices.github.io/v1alpha7\"", "7", "true"};
        for (size_t j = 0; j < sizeof (bad) / sizeof (bad[0]); j++) {
            snprintf (msg, sizeof (msg),
                      "rabbit.%s: must be a Kubernetes API version such as \"v1alpha7\" (or be"
                      " left out to discover it), got %s",
                      k, bad[j]);
            key_is (k, bad[j], msg);
        }
    }
}

static void test_queues (void)
{
    const char *k = "drain_queues";
    const char *list_msg = "rabbit.drain_queues: must be a non-empty list of queue names (leave"
                           " it out to drain nodes of every queue), got ";
    char msg[512];

    key_is (k, "[\"pbatch\"]", "[\"pbatch\"]");
    key_is (k, "[\"pbatch\", \"pdebug\"]", "[\"pbatch\", \"pdebug\"]");
    snprintf (msg, sizeof (msg), "%s[]", list_msg);
    key_is (k, "[]", msg);
    snprintf (msg, sizeof (msg), "%s\"pbatch\"", list_msg);
    key_is (k, "\"pbatch\"", msg);
    snprintf (msg, sizeof (msg), "%s{}", list_msg);
    key_is (k, "{}", msg);
    key_is (k, "[\"pbatch\", 5]",
            "rabbit.drain_queues[1]: must be a queue name (non-empty string), got 5");
    key_is (k, "[\"\"]",
            "rabbit.drain_queues[0]: must be a queue name (non-empty string), got \"\"");
    key_is (k, "[null]",
            "rabbit.drain_queues[0]: must be a queue name (non-empty string), got null");
}

/* drain_queues against the nodes' properties: the names no node has (as
 * JSON) when accepted, else "error: " and the message. */
static void props_check_is (const char *dq, const char *props, const char *where,
                            const char *expect)
{
    dws_error_t err;
    char *got = dws_rabbitconf_drain_properties_json (dq, props, where, &err);
    char what[512], buf[DWS_ERROR_TEXT_MAX + 16];
    snprintf (what, sizeof (what), "drain_queues %s against properties %s", dq ? dq : "(NULL)",
              props ? props : "(NULL)");
    if (!got)
        snprintf (buf, sizeof (buf), "error: %s", err.text);
    is (got ? got : buf, expect, "%s", what);
    free (got);
}

static void test_drain_properties (void)
{
    /* R execution.properties: pbatch on ranks 0-1, pdebug on 2, gone on none */
    const char *props = "{\"pdebug\": \"2\", \"pbatch\": \"0-1\", \"gone\": \"\"}";
    props_check_is (NULL, NULL, NULL, "[]");
    props_check_is ("null", NULL, NULL, "[]");
    props_check_is ("null", props, NULL, "[]");
    props_check_is ("[\"pbatch\"]", props, NULL, "[]");
    props_check_is ("[\"pbatch\", \"pdebug\"]", props, NULL, "[]");
    /* some node has one of them: accepted, the others named */
    props_check_is ("[\"pbatch\", \"nosuch\", \"gone\"]", props, NULL,
                    "[\"nosuch\",\"gone\"]");
    /* no node has any of them: refused, naming them and what the nodes have */
    props_check_is ("[\"nosuch\"]", props, NULL,
                    "error: rabbit.drain_queues: no node has the property \"nosuch\": drain"
                    " queues name node properties (the nodes' properties: pbatch, pdebug)");
    props_check_is ("[\"a\", \"gone\"]", props, "--drain-queues",
                    "error: --drain-queues: no node has any of the properties \"a\","
                    " \"gone\": drain queues name node properties (the nodes' properties:"
                    " pbatch, pdebug)");
    /* no properties at all */
    const char *none = "error: rabbit.drain_queues: no node has the property \"pbatch\": drain"
                       " queues name node properties, and no node has any (leave drain_queues"
                       " out to drain nodes of the whole instance)";
    props_check_is ("[\"pbatch\"]", NULL, NULL, none);
    props_check_is ("[\"pbatch\"]", "null", NULL, none);
    props_check_is ("[\"pbatch\"]", "{}", NULL, none);
    props_check_is ("[\"pbatch\"]", "{\"pbatch\": \"\"}", NULL, none);
    /* bad input, named */
    props_check_is ("\"pbatch\"", props, NULL,
                    "error: rabbit.drain_queues: must be a list of queue names");
    props_check_is ("[5]", props, NULL,
                    "error: rabbit.drain_queues[0]: must be a queue name (non-empty string)");
    props_check_is ("[\"pbatch\"]", "[1]", NULL,
                    "error: the nodes' properties (R execution.properties) must be an object");
    props_check_is ("[\"pbatch\"]", "{\"pbatch\": 3}", NULL,
                    "error: R execution.properties.pbatch: must be an idset string");
    props_check_is ("[\"pbatch\"]", "{\"pbatch\": \"1-x\"}", NULL,
                    "error: R execution.properties.pbatch: must be an idset string");
}

static void test_policy (void)
{
    const char *k = "policy";
    key_is (k, "{}", "{\"maximums\": {}}");
    key_is (k, "{\"maximums\": null}", "{\"maximums\": {}}");
    key_is (k, "{\"maximums\": {}}", "{\"maximums\": {}}");
    key_is (k, "{\"maximums\": {\"xfs\": 100, \"lustre\": 0}}",
            "{\"maximums\": {\"xfs\": 100, \"lustre\": 0}}");
    key_is (k, "{\"maximums\": {\"xfs\": 1, \"gfs2\": 2, \"raw\": 3, \"lustre\": 4}}",
            "{\"maximums\": {\"xfs\": 1, \"gfs2\": 2, \"raw\": 3, \"lustre\": 4}}");
    key_is (k, "5", "rabbit.policy: must be a table holding maximums, got 5");
    key_is (k, "[]", "rabbit.policy: must be a table holding maximums, got []");
    key_is (k, "{\"maximum\": {}}",
            "rabbit.policy.maximum: unknown key (rabbit.policy has only maximums)");
    key_is (k, "{\"maximums\": {}, \"minimums\": {}}",
            "rabbit.policy.minimums: unknown key (rabbit.policy has only maximums)");
    key_is (k, "{\"maximums\": []}", "rabbit.policy.maximums must be a table");
    key_is (k, "{\"maximums\": {\"zfs\": 1}}",
            "rabbit.policy.maximums.zfs: unknown file system type (expected xfs, gfs2, raw or"
            " lustre)");
    key_is (k, "{\"maximums\": {\"xfs\": -1}}",
            "rabbit.policy.maximums.xfs must be a non-negative integer (GiB per node)");
    key_is (k, "{\"maximums\": {\"xfs\": 1.5}}",
            "rabbit.policy.maximums.xfs must be a non-negative integer (GiB per node)");
    key_is (k, "{\"maximums\": {\"xfs\": \"10\"}}",
            "rabbit.policy.maximums.xfs must be a non-negative integer (GiB per node)");
    key_is (k, "{\"maximums\": {\"xfs\": true}}",
            "rabbit.policy.maximums.xfs must be a non-negative integer (GiB per node)");
}

static void test_presets (void)
{
    const char *k = "presets";
    key_is (k, "{}", "{}");
    key_is (k, "{\"small\": \"#DW jobdw type=xfs capacity=1GiB name=s\"}",
            "{\"small\": \"#DW jobdw type=xfs capacity=1GiB name=s\"}");
    key_is (k,
            "{\"pair\": [\"#DW jobdw type=xfs capacity=1GiB name=a\", \"#DW persistentdw"
            " name=p\"], \"two\": \"#DW jobdw type=raw capacity=1GiB name=r #DW copy_in"
            " source=/a destination=$DW_JOB_r/\"}",
            "{\"pair\": [\"#DW jobdw type=xfs capacity=1GiB name=a\", \"#DW persistentdw"
            " name=p\"], \"two\": \"#DW jobdw type=raw capacity=1GiB name=r #DW copy_in"
            " source=/a destination=$DW_JOB_r/\"}");
    key_is (k, "{\"my preset\": \"#DW jobdw type=xfs capacity=1GiB name=s\"}",
            "{\"my preset\": \"#DW jobdw type=xfs capacity=1GiB name=s\"}");
    key_is (k, "[]", "rabbit.presets: must be a table of name = #DW directive(s), got []");
    key_is (k, "\"#DW jobdw\"",
            "rabbit.presets: must be a table of name = #DW directive(s), got \"#DW jobdw\"");
    key_is (k, "{\"p\": 3}",
            "rabbit.presets.p: must be a string of #DW directives or a list of them, got 3");
    key_is (k, "{\"p\": null}",
            "rabbit.presets.p: must be a string of #DW directives or a list of them, got null");
    key_is (k, "{\"p\": {\"a\": \"#DW x\"}}",
            "rabbit.presets.p: must be a string of #DW directives or a list of them, got"
            " {\"a\":\"#DW x\"}");
    key_is (k, "{\"p\": [\"#DW a x=1\", 5]}",
            "rabbit.presets.p[1]: must be a string of #DW directives, got 5");
    key_is (k, "{\"p\": []}", "rabbit.presets.p: must hold at least one #DW directive, got []");
    key_is (k, "{\"p\": \"  \"}",
            "rabbit.presets.p: must hold at least one #DW directive, got \"  \"");
    key_is (k, "{\"p\": [\"\", \" \"]}",
            "rabbit.presets.p: must hold at least one #DW directive, got [\"\",\" \"]");
    key_is (k, "{\"p\": \"jobdw type=xfs\"}",
            "rabbit.presets.p: missing '#DW' prefix in directive 'jobdw type=xfs'");
    key_is (k, "{\"p\": \"#DW jobdw a=1 a=2\"}",
            "rabbit.presets.p: repeated argument 'a' in directive '#DW jobdw a=1 a=2'");
    key_is (k, "{\"p\": [\"#DW jobdw a=1\", \"#DW\"]}",
            "rabbit.presets.p: invalid directive '#DW'");
    key_is (k, "{\"ok\": \"#DW a x=1\", \"p q\": \"x\"}",
            "rabbit.presets.\"p q\": missing '#DW' prefix in directive 'x'");
    key_is (k, "{\"\": \"#DW a x=1\"}",
            "rabbit.presets.\"\": a preset name must be non-empty without leading or trailing"
            " white space (no dw attribute could name it)");
    key_is (k, "{\" small\": \"#DW a x=1\"}",
            "rabbit.presets.\" small\": a preset name must be non-empty without leading or"
            " trailing white space (no dw attribute could name it)");
    key_is (k, "{\"small\\u00a0\": \"#DW a x=1\"}",
            "rabbit.presets.\"small\u00a0\": a preset name must be non-empty without leading"
            " or trailing white space (no dw attribute could name it)");
}

static void test_alias (void)
{
    parse_is ("{\"restrict_persistent\": false, \"tc_timeout\": 5}",
              "{\"datain_stall_timeout\": 0.0, \"drain_compute_nodes\": true, \"drain_queues\": null,"
              " \"dws_api_version\": null, \"kubeconfig\": null, \"lustre\": {\"max_rabbits\": 0, \"mdts\": 1, \"min_rabbits\": 1, \"osts_per_mdt\": 0, \"spread\": false, \"whole_rabbit_gib\": 0}, \"mapping\": null,"
              " \"min_allocation_size\": 4, \"nnf_api_version\": null,"
              " \"policy\": {\"maximums\": {}}, \"postrun_timeout\": 0.0,"
              " \"prerun_timeout\": 0.0, \"presets\": {}, \"prestage\": \"never\", \"prestage_max_gib\": 0, \"prestage_max_jobs\": 0, \"prestage_node_wait\": 3600.0, \"prolog_timeout\": 1800.0, \"release_computes\": \"after-teardown\","
              " \"restrict_persistent_creation\": false, \"save_datamovements\": 0,"
              " \"setup_timeout\": 0.0, \"soft_drain\": true, \"tc_timeout\": 5.0,"
              " \"teardown_after\": 0.0}");
    const char *both[][2] = {
        {"{\"restrict_persistent\": false}", "false"},
        {"{\"restrict_persistent\": true}", "true"},
        {"{\"restrict_persistent\": true, \"restrict_persistent_creation\": true}", "true"},
        {"{\"restrict_persistent\": false, \"restrict_persistent_creation\": false}", "false"},
        {"{\"restrict_persistent\": null, \"restrict_persistent_creation\": false}", "false"},
        {"{\"restrict_persistent\": false, \"restrict_persistent_creation\": null}", "false"},
        {"{\"restrict_persistent_creation\": false}", "false"},
        {"{}", "true"},
    };
    for (size_t i = 0; i < sizeof (both) / sizeof (both[0]); i++) {
        dws_error_t err;
        char *s = dws_rabbitconf_parse_json (both[i][0], &err);
        json_t *o = s ? json_loads (s, 0, NULL) : NULL;
        json_t *v = json_object_get (o, "restrict_persistent_creation");
        ok (v && !strcmp (json_is_true (v) ? "true" : "false", both[i][1])
                && !json_object_get (o, "restrict_persistent"),
            "%s -> restrict_persistent_creation = %s", both[i][0], both[i][1]);
        json_decref (o);
        free (s);
    }
    parse_is ("{\"restrict_persistent\": false, \"restrict_persistent_creation\": true}",
              "rabbit.restrict_persistent: conflicts with rabbit.restrict_persistent_creation"
              " = true (it is flux-coral2's name for the same setting: keep only"
              " restrict_persistent_creation), got false");
    parse_is ("{\"restrict_persistent_creation\": false, \"restrict_persistent\": true}",
              "rabbit.restrict_persistent: conflicts with rabbit.restrict_persistent_creation"
              " = false (it is flux-coral2's name for the same setting: keep only"
              " restrict_persistent_creation), got true");
    parse_is ("{\"restrict_persistent\": \"no\"}",
              "rabbit.restrict_persistent: must be true or false, got \"no\"");
    parse_is ("{\"restrict_persistent\": 0, \"restrict_persistent_creation\": \"yes\"}",
              "rabbit.restrict_persistent_creation: must be true or false, got \"yes\"");
}

static void test_unknown (void)
{
    const char *list = "datain_stall_timeout, drain_compute_nodes, drain_queues, dws_api_version, kubeconfig, lustre, mapping,"
                       " min_allocation_size, nnf_api_version, policy, postrun_timeout,"
                       " prerun_timeout, presets, prestage, prestage_max_gib, prestage_max_jobs, prestage_node_wait, prolog_timeout, release_computes, restrict_persistent_creation,"
                       " save_datamovements, setup_timeout, soft_drain, tc_timeout,"
                       " teardown_after";
    char msg[1024];

    snprintf (msg, sizeof (msg), "rabbit.frobnicate: unknown key (valid keys: %s)", list);
    parse_is ("{\"frobnicate\": 1}", msg);
    snprintf (msg, sizeof (msg), "rabbit.x: unknown key (valid keys: %s)", list);
    parse_is ("{\"x\": 1}", msg);
    snprintf (msg, sizeof (msg), "rabbit.epilog_timeout: unknown key (valid keys: %s)", list);
    parse_is ("{\"epilog_timeout\": 1}", msg);
    /* "drain" begins two keys: no suggestion */
    snprintf (msg, sizeof (msg), "rabbit.drain: unknown key (valid keys: %s)", list);
    parse_is ("{\"drain\": 1}", msg);
    snprintf (msg, sizeof (msg), "rabbit.\"a b\": unknown key (valid keys: %s)", list);
    parse_is ("{\"a b\": 1}", msg);
    snprintf (msg, sizeof (msg), "rabbit.\"\": unknown key (valid keys: %s)", list);
    parse_is ("{\"\": 1}", msg);
    snprintf (msg, sizeof (msg),
              "rabbit.\"%s...\": unknown key (valid keys: %s)",
              "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", list);
    parse_is ("{\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
              "xxxxxxxxxxxxxxxxxxxx\": 1}",
              msg);
    /* an unknown key is reported before a bad value of a known one */
    snprintf (msg, sizeof (msg), "rabbit.zzz: unknown key (valid keys: %s)", list);
    parse_is ("{\"tc_timeout\": \"bad\", \"zzz\": 1}", msg);

    const char *near[][2] = {
        {"restrict_persistant", "restrict_persistent_creation"},
        {"restrict_persistent_create", "restrict_persistent_creation"},
        {"restrict-persistent-creation", "restrict_persistent_creation"},
        {"Restrict_Persistent", "restrict_persistent_creation"},
        {"tc-timeout", "tc_timeout"},
        {"setup_timeuot", "setup_timeout"},
        {"prolog-timeout", "prolog_timeout"},
        {"preset", "presets"},
        {"mappings", "mapping"},
        {"kube_config", "kubeconfig"},
        {"drain_compute_node", "drain_compute_nodes"},
        {"softdrain", "soft_drain"},
        {"min_allocation", "min_allocation_size"},
        {"save_datamovement", "save_datamovements"},
        {"teardown-after", "teardown_after"},
        {"maximums", "policy.maximums"},
        {"Maximums", "policy.maximums"},
        {"dws_api", "dws_api_version"},
        {"nnf-api", "nnf_api_version"},
        {"tc_timeout_seconds", "tc_timeout"},
        {"presets_table", "presets"},
    };
    for (size_t i = 0; i < sizeof (near) / sizeof (near[0]); i++) {
        char in[128];
        snprintf (in, sizeof (in), "{\"%s\": 1}", near[i][0]);
        snprintf (msg, sizeof (msg), "rabbit.%s: unknown key (did you mean %s?)", near[i][0],
                  near[i][1]);
        parse_is (in, msg);
    }
}

static void test_release_computes (void)
{
    const char *k = "release_computes";
    const char *msg = "rabbit.release_computes: must be \"after-unmount\" or"
                      " \"after-teardown\", got ";
    char want[256];
    key_is (k, "\"after-unmount\"", "\"after-unmount\"");
    key_is (k, "\"after-teardown\"", "\"after-teardown\"");
    key_is (k, "null", "\"after-teardown\"");
    const char *bad_values[] = {"\"after_unmount\"", "\"After-Unmount\"", "\"\"", "true", "1",
                                "[\"after-unmount\"]", "\"after-unmount \""};
    for (size_t i = 0; i < sizeof (bad_values) / sizeof (bad_values[0]); i++) {
        snprintf (want, sizeof (want), "%s%s", msg, bad_values[i]);
        key_is (k, bad_values[i], want);
    }
    /* the job attribute */
    dws_error_t err;
    json_t *v = json_string ("after-unmount");
    ok (dws_rabbitconf_release_computes (v, &err) == 1, "dw_release_computes=after-unmount: 1");
    json_decref (v);
    v = json_string ("after-teardown");
    ok (dws_rabbitconf_release_computes (v, &err) == 0, "dw_release_computes=after-teardown: 0");
    json_decref (v);
    v = json_string ("never");
    ok (dws_rabbitconf_release_computes (v, &err) == -1, "dw_release_computes=never: refused");
    is (err.text,
        "dw_release_computes must be \"after-unmount\" or \"after-teardown\", got \"never\"",
        "... naming the attribute, its values and what it got");
    json_decref (v);
    v = json_integer (1);
    ok (dws_rabbitconf_release_computes (v, &err) == -1, "dw_release_computes=1: refused");
    is (err.text, "dw_release_computes must be \"after-unmount\" or \"after-teardown\", got 1",
        "... message");
    json_decref (v);
    ok (dws_rabbitconf_release_computes (NULL, &err) == -1, "no value: refused");
    is (err.text,
        "dw_release_computes must be \"after-unmount\" or \"after-teardown\", got nothing",
        "... message");
}

static void test_full (void)
{
    parse_is ("{\"mapping\": \"/etc/flux/system/rabbitmapping\","
              " \"kubeconfig\": \"/etc/flux/kc\", \"tc_timeout\": 0,"
              " \"setup_timeout\": 600, \"prerun_timeout\": 300.5, \"postrun_timeout\": 60,"
              " \"teardown_after\": 3600, \"drain_compute_nodes\": false,"
              " \"soft_drain\": false, \"save_datamovements\": 10,"
              " \"restrict_persistent_creation\": false, \"prolog_timeout\": \"30m\","
              " \"policy\": {\"maximums\": {\"xfs\": 500}},"
              " \"presets\": {\"s\": \"#DW jobdw type=xfs capacity=1GiB name=s\"},"
              " \"dws_api_version\": \"v1alpha7\", \"nnf_api_version\": \"v1alpha11\","
              " \"min_allocation_size\": 8, \"drain_queues\": [\"pbatch\"],"
              " \"lustre\": {\"spread\": true, \"osts_per_mdt\": 4},"
              " \"release_computes\": \"after-unmount\"}",
              "{\"datain_stall_timeout\": 0.0, \"drain_compute_nodes\": false, \"drain_queues\": [\"pbatch\"],"
              " \"dws_api_version\": \"v1alpha7\", \"kubeconfig\": \"/etc/flux/kc\","
              " \"lustre\": {\"max_rabbits\": 0, \"mdts\": 1, \"min_rabbits\": 1,"
              " \"osts_per_mdt\": 4, \"spread\": true, \"whole_rabbit_gib\": 0},"
              " \"mapping\": \"/etc/flux/system/rabbitmapping\", \"min_allocation_size\": 8,"
              " \"nnf_api_version\": \"v1alpha11\", \"policy\": {\"maximums\": {\"xfs\": 500}},"
              " \"postrun_timeout\": 60.0, \"prerun_timeout\": 300.5,"
              " \"presets\": {\"s\": \"#DW jobdw type=xfs capacity=1GiB name=s\"},"
              " \"prestage\": \"never\", \"prestage_max_gib\": 0, \"prestage_max_jobs\": 0, \"prestage_node_wait\": 3600.0,"
              " \"prolog_timeout\": 1800.0, \"release_computes\": \"after-unmount\","
              " \"restrict_persistent_creation\": false, \"save_datamovements\": 10, \"setup_timeout\": 600.0, \"soft_drain\": false,"
              " \"tc_timeout\": 0.0, \"teardown_after\": 3600.0}");
    /* errors are reported in key order, whatever the input order */
    parse_is ("{\"tc_timeout\": -1, \"drain_compute_nodes\": 1}",
              "rabbit.drain_compute_nodes: must be true or false, got 1");
}

static void test_values_in_messages (void)
{
    /* long values are cut at 80 bytes, on a UTF-8 boundary */
    key_is ("mapping",
            "[\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
            "aaaaaaaaaaaaaaaaaaa\"]",
            "rabbit.mapping: must be a file name (non-empty string), got"
            " [\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...");
    key_is ("mapping",
            "[\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\u00e9"
            "\u00e9\u00e9\u00e9\"]",
            "rabbit.mapping: must be a file name (non-empty string), got"
            " [\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\u00e9...");
    key_is ("setup_timeout", "0.1", "0.1");
    key_is ("setup_timeout", "-0.1",
            "rabbit.setup_timeout: must be a number of seconds >= 0, got -0.1");
}

/* The key list Python reads is the normalised table's keys, in its order. */
static void test_key_list (void)
{
    json_t *o = json_loads (DEFAULTS, 0, NULL);
    const char *key;
    json_t *val;
    int i = 0, same = 0;

    json_object_foreach (o, key, val) {
        const char *name = dws_rabbitconf_key_name (i++);
        same += name && !strcmp (name, key);
    }
    ok (dws_rabbitconf_key_count () == (int)json_object_size (o)
            && same == dws_rabbitconf_key_count (),
        "the key list is the table's %d keys, in order", dws_rabbitconf_key_count ());
    ok (dws_rabbitconf_key_name (-1) == NULL
            && dws_rabbitconf_key_name (dws_rabbitconf_key_count ()) == NULL,
        "no key out of range");
    json_decref (o);
}

/* The engine reads each key through the table: absent, every reader gives
 * the default dws_rabbitconf_parse puts in the normalised table (one
 * default per key); a value of the wrong type gets the engine's short
 * message; a reader refuses a key of another kind. */
static void test_engine_readers (void)
{
    dws_error_t err;
    json_t *defaults = dws_rabbitconf_parse (NULL, &err);
    int same = 0, nread = 0;

    for (int id = 0; id < DWS_RABBIT_NKEYS; id++) {
        json_t *want = json_object_get (defaults, dws_rabbitconf_key (id));
        json_t *v = dws_rabbitconf_value (NULL, id);
        double d;
        bool b;
        int64_t i;
        if (dws_rabbitconf_seconds (NULL, id, &d, &err) == 0)
            nread++, same += json_is_number (want) && json_number_value (want) == d;
        else if (dws_rabbitconf_bool (NULL, id, &b, &err) == 0)
            nread++, same += json_is_boolean (want) && json_is_true (want) == b;
        else if (dws_rabbitconf_int (NULL, id, &i, &err) == 0)
            nread++, same += json_is_integer (want) && json_integer_value (want) == i;
        /* lustre's default is the lustre table's own (NULL here) */
        if (v || id != DWS_RABBIT_LUSTRE)
            same += json_equal (v, want) ? 0 : -100;
        json_decref (v);
    }
    ok (nread == 14 && same == nread,
        "the engine's readers give the normalised table's defaults (%d of %d keys read)", same,
        nread);
    json_decref (defaults);

    json_t *cfg = json_pack ("{s:s s:i s:i s:b s:n}", "tc_timeout", "ten", "prestage_max_jobs",
                             -1, "min_allocation_size", 0, "fluxion", 0, "soft_drain");
    double d = -1;
    bool b = true;
    int64_t i = -1;
    ok (dws_rabbitconf_seconds (cfg, DWS_RABBIT_TC_TIMEOUT, &d, &err) < 0, "a bad number");
    is (err.text, "rabbit.tc_timeout: must be a number of seconds >= 0", "... the short message");
    ok (dws_rabbitconf_int (cfg, DWS_RABBIT_PRESTAGE_MAX_JOBS, &i, &err) < 0, "a count < 0");
    is (err.text, "rabbit.prestage_max_jobs: must be an integer >= 0", "... says its least");
    ok (dws_rabbitconf_int (cfg, DWS_RABBIT_MIN_ALLOCATION_SIZE, &i, &err) < 0, "GiB < 1");
    is (err.text, "rabbit.min_allocation_size: must be an integer >= 1", "... says its least");
    ok (dws_rabbitconf_bool (cfg, DWS_RABBIT_FLUXION, &b, &err) == 0 && !b,
        "a service key is read through the same table");
    ok (dws_rabbitconf_bool (cfg, DWS_RABBIT_SOFT_DRAIN, &b, &err) == 0 && b,
        "null is the default");
    ok (dws_rabbitconf_int (cfg, DWS_RABBIT_OWNER, &i, &err) == 0 && i == 0,
        "the owner's default is 0");
    ok (dws_rabbitconf_bool (cfg, DWS_RABBIT_TC_TIMEOUT, &b, &err) < 0
            && dws_rabbitconf_seconds (cfg, DWS_RABBIT_ALLKEYS, &d, &err) < 0,
        "a key of another kind, or none, is refused (%s)", err.text);
    ok (dws_rabbitconf_key (DWS_RABBIT_OWNER) && !strcmp (dws_rabbitconf_key (DWS_RABBIT_OWNER),
                                                          "owner")
            && dws_rabbitconf_key (DWS_RABBIT_ALLKEYS) == NULL
            && dws_rabbitconf_key_name (DWS_RABBIT_OWNER) == NULL,
        "the service's keys are named but are not [rabbit] keys");
    json_decref (cfg);
    parse_is ("{\"owner\": 0}",
              "rabbit.owner: unknown key (valid keys: datain_stall_timeout, drain_compute_nodes,"
              " drain_queues,"
              " dws_api_version, kubeconfig, lustre, mapping, min_allocation_size,"
              " nnf_api_version, policy, postrun_timeout, prerun_timeout, presets, prestage,"
              " prestage_max_gib, prestage_max_jobs, prestage_node_wait, prolog_timeout, release_computes,"
              " restrict_persistent_creation, save_datamovements, setup_timeout, soft_drain,"
              " tc_timeout, teardown_after)");
}

int main (void)
{
    test_defaults ();
    test_key_list ();
    test_engine_readers ();
    test_seconds ();
    test_prolog_timeout ();
    test_bools ();
    test_counts ();
    test_strings ();
    test_queues ();
    test_drain_properties ();
    test_policy ();
    test_presets ();
    test_alias ();
    test_unknown ();
    test_release_computes ();
    test_full ();
    test_values_in_messages ();
    return done_testing ();
}
