/* SPDX-License-Identifier: LGPL-3.0-or-later */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "jsontap.h"
#include "parse/breakdown.h"

static void rewrite_min (const char *res, const char *bds, int64_t min, const char *expect,
                         const char *what)
{
    dws_error_t err;
    char *s = dws_breakdown_rewrite_json (res, bds, min, &err);
    json_is (s ? s : err.text, expect, what);
    free (s);
}

static void rewrite_is (const char *res, const char *bds, const char *expect, const char *what)
{
    rewrite_min (res, bds, 4, expect, what);
}

/* The ssd count of the rewritten resources (-1 on error). */
static long long ssd_gib (const char *res, const char *bds, int64_t min)
{
    dws_error_t err;
    char *s = dws_breakdown_rewrite_json (res, bds, min, &err);
    json_t *o = s ? json_loads (s, JSON_DECODE_ANY, NULL) : NULL;
    json_t *with = json_object_get (json_array_get (o, 0), "with");
    long long n = -1;
    if (!s)
        diag ("error: %s", err.text);
    n = json_integer_value (json_object_get (json_array_get (with, json_array_size (with) - 1),
                                             "count"));
    json_decref (o);
    free (s);
    return n;
}

#define TASK "{\"type\":\"slot\",\"count\":1,\"label\":\"task\",\"with\":[{\"type\":\"core\",\"count\":1}]}"
#define NODE(n) "[{\"type\":\"node\",\"count\":" #n ",\"with\":[" TASK "]}]"
#define SET(label, strat, cap)                                                                 \
    "{\"label\":\"" label "\",\"allocationStrategy\":\"" strat "\",\"minimumCapacity\":" cap "}"
#define DBD(sets) "{\"status\":{\"ready\":true,\"storage\":{\"allocationSets\":[" sets "]}}}"
#define GIB "1073741824"

static const char *NODE2 = NODE (2);
static const char *XFS10 = "[" DBD (SET ("xfs", "AllocatePerCompute", "10737418240")) "]";

static void forms (void)
{
    rewrite_is (NODE2, XFS10,
                "[{\"type\":\"slot\",\"count\":2,\"label\":\"rabbit\",\"with\":["
                "{\"type\":\"node\",\"count\":1,\"with\":[" TASK "]},"
                "{\"type\":\"ssd\",\"count\":10,\"exclusive\":true}]}]",
                "the spec's example: node(2) + xfs 10GiB");
    rewrite_is ("[{\"type\":\"node\",\"count\":3,\"exclusive\":true}]", XFS10,
                "[{\"type\":\"slot\",\"count\":3,\"label\":\"rabbit\",\"with\":["
                "{\"type\":\"node\",\"count\":1,\"exclusive\":true},"
                "{\"type\":\"ssd\",\"count\":10,\"exclusive\":true}]}]",
                "node keys (exclusive) are kept; no 'with' is fine");
    rewrite_is ("[{\"type\":\"chassis\",\"count\":2,\"with\":[{\"type\":\"node\",\"count\":4,"
                "\"with\":[]},{\"type\":\"storage_node\",\"count\":1}]}]",
                XFS10,
                "[{\"type\":\"chassis\",\"count\":2,\"with\":[{\"type\":\"node\",\"count\":4,"
                "\"with\":[]},{\"type\":\"storage_node\",\"count\":1},"
                "{\"type\":\"ssd\",\"count\":40,\"exclusive\":true}]}]",
                "chassis form: ssd GiB x nodes per chassis, storage_node kept");
    rewrite_is ("[{\"type\":\"slot\",\"count\":2,\"label\":\"task\",\"with\":["
                "{\"type\":\"storage_node\",\"count\":1},{\"type\":\"node\",\"count\":3}]}]",
                XFS10,
                "[{\"type\":\"slot\",\"count\":2,\"label\":\"task\",\"with\":["
                "{\"type\":\"storage_node\",\"count\":1},{\"type\":\"node\",\"count\":3},"
                "{\"type\":\"ssd\",\"count\":30,\"exclusive\":true}]}]",
                "slot form: ssd GiB x nodes per slot, label and storage_node kept");
    rewrite_is ("[{\"type\":\"storage_node\",\"count\":1},{\"type\":\"node\",\"count\":2}]",
                XFS10,
                "[{\"type\":\"storage_node\",\"count\":1},"
                "{\"type\":\"slot\",\"count\":2,\"label\":\"rabbit\",\"with\":["
                "{\"type\":\"node\",\"count\":1},{\"type\":\"ssd\",\"count\":10,"
                "\"exclusive\":true}]}]",
                "a top-level storage_node beside the nodes is kept in place");
}

static void sizes (void)
{
    rewrite_is (NODE2,
                "[{\"storage\":{\"allocationSets\":["
                SET ("ost", "AllocateAcrossServers", "107374182400") ","
                SET ("mgtmdt", "AllocateAcrossServers", "5368709120") "]}},"
                " {\"status\":{\"storage\":null}}]",
                "[{\"type\":\"slot\",\"count\":2,\"label\":\"rabbit\",\"with\":["
                "{\"type\":\"node\",\"count\":1,\"with\":[" TASK "]},"
                "{\"type\":\"ssd\",\"count\":54,\"exclusive\":true}]}]",
                "lustre: 100GiB/2 = 50 + mgtmdt 5GiB/2 = 3 raised to 4; status objects accepted");
    cmp_ok (ssd_gib (NODE2, "[" DBD (SET ("raw", "AllocatePerCompute", "1")) "]", 4), ==, 4,
            "a 1-byte raw set is raised to the 4 GiB minimum");
    cmp_ok (ssd_gib (NODE2, "[" DBD (SET ("raw", "AllocatePerCompute", "1")) "]", 0), ==, 1,
            "with minimum 0 it is rounded up to 1 GiB");
    cmp_ok (ssd_gib (NODE2, "[" DBD (SET ("raw", "AllocatePerCompute", "1")) "]", 16), ==, 16,
            "the minimum is a real parameter (16 GiB)");
    cmp_ok (ssd_gib (NODE2, "[" DBD (SET ("xfs", "AllocatePerCompute", GIB)) "]", 0), ==, 1,
            "exactly 1 GiB stays 1 GiB");
    cmp_ok (ssd_gib (NODE2, "[" DBD (SET ("xfs", "AllocatePerCompute", "1073741825")) "]", 0),
            ==, 2, "1 GiB + 1 byte rounds up to 2 GiB");
    cmp_ok (ssd_gib (NODE (3), "[" DBD (SET ("ost", "AllocateAcrossServers", "3221225473")) "]", 0),
            ==, 2, "lustre: (3 GiB + 1 byte) / 3 nodes rounds up to 2 GiB");
    cmp_ok (ssd_gib (NODE (3), "[" DBD (SET ("ost", "AllocateAcrossServers", "3221225472")) "]", 0),
            ==, 1, "lustre: 3 GiB / 3 nodes is exactly 1 GiB");
    cmp_ok (ssd_gib (NODE (4), "[" DBD (SET ("mgt", "AllocateSingleServer", "5368709120")) "]", 0),
            ==, 2, "mgt (single server) is divided by the nodes too");
    cmp_ok (ssd_gib (NODE2,
                     "[" DBD (SET ("xfs", "AllocatePerCompute", "10737418240")) ","
                     DBD (SET ("gfs2", "AllocatePerCompute", GIB)) ","
                     DBD (SET ("raw", "AllocatePerCompute", "5905580032")) ","
                     "{\"status\":{\"ready\":true}}]", 4),
            ==, 10 + 4 + 6, "directives add up: 10 + gfs2 1 GiB raised to 4 + raw 5.5 GiB to 6");
    cmp_ok (ssd_gib ("[{\"type\":\"chassis\",\"count\":3,\"with\":[{\"type\":\"node\","
                     "\"count\":4}]}]",
                     "[" DBD (SET ("ost", "AllocateAcrossServers", "128849018880")) "]", 4),
            ==, 10 * 4, "chassis(3){node(4)}: lustre 120 GiB / 12 nodes = 10 GiB x 4 per chassis");
}

static void left_alone (void)
{
    rewrite_is ("[{\"type\":\"slot\",\"count\":1,\"label\":\"rabbit\",\"with\":["
                "{\"type\":\"node\",\"count\":1},{\"type\":\"ssd\",\"count\":5}]}]",
                XFS10, "null", "resources with ssd are left alone");
    rewrite_is ("[{\"type\":\"chassis\",\"count\":1,\"with\":[{\"type\":\"node\",\"count\":1,"
                "\"with\":[{\"type\":\"slot\",\"count\":1,\"with\":[{\"type\":\"ssd\","
                "\"count\":1}]}]}]}]",
                "[42]", "null", "an ssd deep inside is found (and the breakdowns not read)");
    rewrite_is (NODE2, "[{\"status\":{}}]", "null", "no storage breakdowns: left alone");
    rewrite_is (NODE2, "[]", "null", "no breakdowns: left alone");
    rewrite_is ("[{\"type\":\"slot\",\"count\":1,\"with\":[{\"type\":\"core\",\"count\":1}]}]",
                "[{\"status\":{\"ready\":true,\"compute\":{}}}]", "null",
                "persistentdw only: a nodeless jobspec is fine");
    rewrite_is (NODE2, "[" DBD ("") "]", "null", "an empty allocationSets list needs nothing");
}

static void bad_jobspecs (void)
{
    rewrite_is ("[{\"type\":\"slot\",\"count\":2,\"with\":[{\"type\":\"core\",\"count\":1}]}]",
                XFS10,
                "resources[0] (slot) holds no node: rabbit storage needs a jobspec that"
                " requests nodes (e.g. flux submit -N)",
                "a nodeless slot (flux submit -n) is refused");
    rewrite_is ("[{\"type\":\"slot\",\"count\":2,\"with\":[]}]", XFS10,
                "resources[0] (slot) holds no node: rabbit storage needs a jobspec that"
                " requests nodes (e.g. flux submit -N)",
                "an empty slot is refused");
    rewrite_is ("[{\"type\":\"core\",\"count\":2}]", XFS10,
                "rabbit storage needs a jobspec that requests nodes (e.g. flux submit -N);"
                " resources[0] is 'core'",
                "a top-level core is refused");
    rewrite_is ("[{\"count\":2}]", XFS10,
                "rabbit storage needs a jobspec that requests nodes (e.g. flux submit -N);"
                " resources[0] is '(no type)'",
                "an untyped entry is refused");
    rewrite_is ("[{\"type\":\"node\",\"count\":{\"min\":1,\"max\":4}}]", XFS10,
                "resources[0] (node): count ranges are not supported with rabbit storage;"
                " give a fixed count",
                "node count ranges are refused");
    rewrite_is ("[{\"type\":\"chassis\",\"count\":{\"min\":1},\"with\":[{\"type\":\"node\","
                "\"count\":1}]}]",
                XFS10,
                "resources[0] (chassis): count ranges are not supported with rabbit storage;"
                " give a fixed count",
                "chassis count ranges are refused");
    rewrite_is ("[{\"type\":\"chassis\",\"count\":1,\"with\":[{\"type\":\"node\","
                "\"count\":{\"min\":2}}]}]",
                XFS10,
                "resources[0] (chassis).with[0] (node): count ranges are not supported with"
                " rabbit storage; give a fixed count",
                "inner node count ranges are refused");
    rewrite_is ("[{\"type\":\"node\",\"count\":0}]", XFS10,
                "resources[0] (node): count must be an integer >= 1", "count 0 is refused");
    rewrite_is ("[{\"type\":\"node\",\"count\":\"2\"}]", XFS10,
                "resources[0] (node): count must be an integer >= 1", "a string count is refused");
    rewrite_is ("[{\"type\":\"node\"}]", XFS10,
                "resources[0] (node): count must be an integer >= 1", "a missing count is refused");
    rewrite_is ("[{\"type\":\"node\",\"count\":16777217}]", XFS10,
                "resources[0] (node): count 16777217 is too large (at most 16777216)",
                "a huge count is refused");
    rewrite_is ("[{\"type\":\"chassis\",\"count\":65536,\"with\":[{\"type\":\"node\","
                "\"count\":65536}]}]",
                XFS10, "resources[0] (chassis): 4294967296 nodes are too many (at most 16777216)",
                "a huge node total is refused");
    rewrite_is ("[{\"type\":\"node\",\"count\":1},{\"type\":\"node\",\"count\":1}]", XFS10,
                "jobspec resources must have a single top-level node, slot or chassis entry to"
                " use rabbit storage (found 2)",
                "two top-level entries are refused");
    rewrite_is ("[{\"type\":\"storage_node\",\"count\":1}]", XFS10,
                "jobspec resources must have a single top-level node, slot or chassis entry to"
                " use rabbit storage (found 0)",
                "storage_node alone is refused");
    rewrite_is ("[{\"type\":\"chassis\",\"count\":1,\"with\":[{\"type\":\"node\",\"count\":1},"
                "{\"type\":\"core\",\"count\":1}]}]",
                XFS10,
                "resources[0] (chassis) may contain only node and storage_node entries, not"
                " 'core'",
                "odd chassis contents are refused");
    rewrite_is ("[{\"type\":\"chassis\",\"count\":1,\"with\":[{\"type\":\"node\",\"count\":1},"
                "{\"type\":\"node\",\"count\":1}]}]",
                XFS10, "resources[0] (chassis) must contain a single node entry",
                "two nodes in a chassis are refused");
    rewrite_is ("[{\"type\":\"chassis\",\"count\":1}]", XFS10,
                "resources[0] (chassis): 'with' must list its node", "a chassis without 'with'");
    rewrite_is ("[{\"type\":\"chassis\",\"count\":1,\"with\":[{\"type\":\"node\","
                "\"count\":1},7]}]", XFS10,
                "resources[0] (chassis) may contain only node and storage_node entries, not"
                " '(no type)'",
                "a non-object child is refused");
    rewrite_is ("[]", XFS10, "jobspec resources must be a non-empty list", "empty resources");
    rewrite_is ("{\"type\":\"node\"}", XFS10, "jobspec resources must be a non-empty list",
                "resources not a list");
    rewrite_is ("[\"node\"]", XFS10, "jobspec resources[0] is not an object",
                "a string entry is refused");
}

static void bad_breakdowns (void)
{
    rewrite_is (NODE2, "[" DBD (SET ("xfs", "AllocateAcrossServers", "1")) "]",
                "breakdown 0: allocation set 0: label 'xfs' has strategy AllocateAcrossServers,"
                " expected AllocatePerCompute",
                "a label with the wrong strategy is refused");
    rewrite_is (NODE2, "[{\"status\":{}}," DBD (SET ("xfs", "AllocatePerCompute", "1") ","
                                               SET ("zfs", "AllocatePerCompute", "1")) "]",
                "breakdown 1: allocation set 1: unknown label 'zfs' (expected xfs, gfs2, raw,"
                " ost, mdt, mgtmdt or mgt)",
                "an unknown label is refused, naming breakdown and set");
    rewrite_is (NODE2,
                "[{\"metadata\":{\"name\":\"fluxjob-7-0\"},\"status\":{\"storage\":{"
                "\"allocationSets\":[" SET ("mgt", "AllocatePerCompute", "1") "]}}}]",
                "breakdown 'fluxjob-7-0': allocation set 0: label 'mgt' has strategy"
                " AllocatePerCompute, expected AllocateSingleServer",
                "a whole breakdown object is named by metadata.name");
    rewrite_is (NODE2, "[" DBD ("{\"label\":\"xfs\"}") "]",
                "breakdown 0: allocation set 0 needs a label, an allocationStrategy and an"
                " integer minimumCapacity >= 1",
                "an incomplete set is refused");
    rewrite_is (NODE2, "[" DBD (SET ("xfs", "AllocatePerCompute", "0")) "]",
                "breakdown 0: allocation set 0 needs a label, an allocationStrategy and an"
                " integer minimumCapacity >= 1",
                "minimumCapacity 0 is refused");
    rewrite_is (NODE2, "[" DBD (SET ("xfs", "AllocatePerCompute", "1e10")) "]",
                "breakdown 0: allocation set 0 needs a label, an allocationStrategy and an"
                " integer minimumCapacity >= 1",
                "a real minimumCapacity is refused");
    rewrite_is (NODE2, "[" DBD ("3") "]",
                "breakdown 0: allocation set 0 needs a label, an allocationStrategy and an"
                " integer minimumCapacity >= 1",
                "a non-object set is refused");
    rewrite_is (NODE2, "{}", "breakdowns must be a list", "breakdowns must be a list");
    rewrite_is (NODE2, "[\"x\"]", "breakdown 0 is not an object", "a string breakdown");
    rewrite_is (NODE2, "[{\"status\":[]}]", "breakdown 0: status is not an object",
                "status not an object");
    rewrite_is (NODE2, "[{\"ready\":false,\"storage\":null}]",
                "breakdown 0 is not ready (status.ready is false)", "a breakdown not ready");
    rewrite_is (NODE2, "[{\"ready\":\"yes\"}]", "breakdown 0: status.ready is not a boolean",
                "ready not a boolean");
    rewrite_is (NODE2, "[{\"kind\":\"DirectiveBreakdown\",\"metadata\":{\"name\":\"w-0\"}}]",
                "breakdown 'w-0' has no status yet", "a whole object without status");
    rewrite_is (NODE2, "[{\"storage\":[1]}]", "breakdown 0: status.storage is not an object",
                "storage not an object");
    rewrite_is (NODE2, "[{\"storage\":{\"allocationSets\":{}}}]",
                "breakdown 0: status.storage.allocationSets is not a list",
                "allocationSets not a list");
    rewrite_min (NODE2, XFS10, -1, "the minimum allocation size must be >= 0 GiB",
                 "a negative minimum is refused");
    rewrite_min (NODE2, "[" DBD (SET ("xfs", "AllocatePerCompute", "1") ","
                               SET ("xfs", "AllocatePerCompute", "1")) "]",
                 INT64_MAX / 2 + 1, "the rabbit storage per node is too large",
                 "per-node GiB overflow is refused");
    rewrite_min ("[{\"type\":\"chassis\",\"count\":1,\"with\":[{\"type\":\"node\","
                 "\"count\":16}]}]",
                 XFS10, INT64_MAX / 8, "the rabbit storage per chassis is too large",
                 "per-chassis GiB overflow is refused");
    rewrite_is ("{", XFS10, "resources: invalid JSON: string or '}' expected near end of file (line 1, column 1)",
                "bad resources JSON");
    rewrite_is (NODE2, "[", "breakdowns: invalid JSON: ']' expected near end of file (line 1, column 1)",
                "bad breakdowns JSON");
    rewrite_is (NULL, XFS10, "resources: invalid JSON: unexpected token near end of file (line 1, column 0)",
                "NULL resources");
}

static void direct (void)
{
    dws_error_t err;
    json_t *empty = json_array ();
    json_t *res = json_loads ("[{\"type\":\"chassis\",\"count\":3,\"with\":[{\"type\":\"node\","
                              "\"count\":4}]}]",
                              0, NULL);
    json_t *bds = json_loads (XFS10, 0, NULL);

    cmp_ok (dws_jobspec_node_count (res, &err), ==, 12, "chassis(3){node(4)} is 12 nodes");
    ok (dws_breakdown_gib_per_node (empty, 0, 4, &err) == -1, "zero nodes: %s", err.text);
    ok (dws_breakdown_gib_per_node (empty, 2, -1, &err) == -1, "negative minimum: %s", err.text);
    cmp_ok (dws_breakdown_gib_per_node (empty, 2, 4, &err), ==, 0, "no breakdowns: 0 GiB");
    json_t *junk = json_pack ("[i]", 1);
    ok (dws_breakdown_gib_per_node (junk, 2, 4, &err) == -1, "not breakdowns: %s", err.text);
    json_decref (junk);
    cmp_ok (dws_breakdown_has_storage (bds, &err), ==, 1, "has_storage: yes");
    cmp_ok (dws_breakdown_has_storage (empty, &err), ==, 0, "has_storage: no");
    ok (dws_breakdown_has_storage (NULL, &err) == -1, "has_storage(NULL): %s", err.text);
    ok (dws_breakdown_has_storage (bds, NULL) == 1 && dws_jobspec_node_count (bds, NULL) == -1,
        "err may be NULL");
    json_decref (empty);
    json_decref (res);
    json_decref (bds);
}

static void ssd_asks_is (const char *res, const char *expect, const char *what)
{
    json_t *r = json_loads (res, JSON_DECODE_ANY, NULL);
    json_t *asks = dws_jobspec_ssd_asks (r);
    char *s = asks ? json_dumps (asks, JSON_COMPACT) : NULL;
    json_is (s ? s : "NULL", expect, what);
    free (s);
    json_decref (asks);
    json_decref (r);
}

/* What a pick leaves room for: each ssd entry, with the slots above it. */
static void ssd_asks (void)
{
    ssd_asks_is ("[{\"type\":\"slot\",\"count\":3,\"label\":\"rabbit\",\"with\":["
                 "{\"type\":\"node\",\"count\":1},"
                 "{\"type\":\"ssd\",\"count\":10,\"exclusive\":true}]}]",
                 "[[3,10]]", "a node-local rewrite: one ask per node");
    ssd_asks_is ("[{\"type\":\"chassis\",\"count\":2,\"with\":["
                 "{\"type\":\"node\",\"count\":4},{\"type\":\"ssd\",\"count\":40}]}]",
                 "[[2,40]]", "a chassis rewrite: one ask per chassis");
    ssd_asks_is ("[{\"type\":\"node\",\"count\":8},{\"type\":\"ssd\",\"count\":300}]",
                 "[[1,300]]", "a spread Lustre: one ask for the whole");
    ssd_asks_is (NODE2, "[]", "no ssd: no ask");
    ssd_asks_is ("{\"type\":\"node\"}", "[]", "not an array: no ask");
    ssd_asks_is ("[{\"type\":\"slot\",\"count\":{\"min\":2},\"with\":["
                 "{\"type\":\"ssd\",\"count\":5}]}]",
                 "[[1,5]]", "a count that is not an integer counts as 1");
}

int main (void)
{
    forms ();
    sizes ();
    left_alone ();
    bad_jobspecs ();
    bad_breakdowns ();
    direct ();
    ssd_asks ();
    return done_testing ();
}
