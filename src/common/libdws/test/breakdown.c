/* SPDX-License-Identifier: LGPL-3.0-or-later */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "breakdown.h"
#include "jsontap.h"

#define GIB "1073741824"

static void rewrite_is (const char *res, const char *bds, const char *expect, const char *what)
{
    dws_error_t err;
    char *s = dws_breakdown_rewrite_json (res, bds, 4, &err);
    json_is (s ? s : err.text, expect, what);
    free (s);
}

static const char *NODE2 =
    "[{\"type\":\"node\",\"count\":2,\"with\":[{\"type\":\"slot\",\"count\":1,"
    "\"label\":\"task\",\"with\":[{\"type\":\"core\",\"count\":1}]}]}]";
static const char *XFS10 =
    "[{\"status\":{\"storage\":{\"allocationSets\":[{\"label\":\"xfs\","
    "\"allocationStrategy\":\"AllocatePerCompute\",\"minimumCapacity\":10737418240}]}}}]";

int main (void)
{
    rewrite_is (NODE2, XFS10,
                "[{\"type\":\"slot\",\"count\":2,\"label\":\"rabbit\",\"with\":["
                "{\"type\":\"node\",\"count\":1,\"with\":[{\"type\":\"slot\",\"count\":1,"
                "\"label\":\"task\",\"with\":[{\"type\":\"core\",\"count\":1}]}]},"
                "{\"type\":\"ssd\",\"count\":10,\"exclusive\":true}]}]",
                "the spec's example: node(2) + xfs 10GiB");
    rewrite_is ("[{\"type\":\"chassis\",\"count\":2,\"with\":[{\"type\":\"node\",\"count\":4,"
                "\"with\":[]},{\"type\":\"storage_node\",\"count\":1}]}]",
                XFS10,
                "[{\"type\":\"chassis\",\"count\":2,\"with\":[{\"type\":\"node\",\"count\":4,"
                "\"with\":[]},{\"type\":\"storage_node\",\"count\":1},"
                "{\"type\":\"ssd\",\"count\":40,\"exclusive\":true}]}]",
                "chassis form: ssd GiB x nodes per chassis, storage_node tolerated");
    rewrite_is (NODE2,
                "[{\"storage\":{\"allocationSets\":["
                "{\"label\":\"ost\",\"allocationStrategy\":\"AllocateAcrossServers\","
                "\"minimumCapacity\":107374182400},"
                "{\"label\":\"mgtmdt\",\"allocationStrategy\":\"AllocateAcrossServers\","
                "\"minimumCapacity\":5368709120}]}},"
                " {\"status\":{\"storage\":null}}]",
                "[{\"type\":\"slot\",\"count\":2,\"label\":\"rabbit\",\"with\":["
                "{\"type\":\"node\",\"count\":1,\"with\":[{\"type\":\"slot\",\"count\":1,"
                "\"label\":\"task\",\"with\":[{\"type\":\"core\",\"count\":1}]}]},"
                "{\"type\":\"ssd\",\"count\":54,\"exclusive\":true}]}]",
                "lustre: 100GiB/2 = 50 + mgtmdt 5GiB/2 = 3 raised to 4; status objects accepted");
    rewrite_is (NODE2, "[{\"status\":{\"storage\":{\"allocationSets\":[{\"label\":\"raw\","
                       "\"allocationStrategy\":\"AllocatePerCompute\",\"minimumCapacity\":1}]}}}]",
                "[{\"type\":\"slot\",\"count\":2,\"label\":\"rabbit\",\"with\":["
                "{\"type\":\"node\",\"count\":1,\"with\":[{\"type\":\"slot\",\"count\":1,"
                "\"label\":\"task\",\"with\":[{\"type\":\"core\",\"count\":1}]}]},"
                "{\"type\":\"ssd\",\"count\":4,\"exclusive\":true}]}]",
                "the minimum allocation size applies");
    rewrite_is ("[{\"type\":\"slot\",\"count\":1,\"label\":\"rabbit\",\"with\":["
                "{\"type\":\"node\",\"count\":1},{\"type\":\"ssd\",\"count\":5}]}]",
                XFS10, "null", "resources with ssd are left alone");
    rewrite_is (NODE2, "[{\"status\":{}}]", "null", "no storage breakdowns: left alone");

    rewrite_is ("[{\"type\":\"slot\",\"count\":2,\"with\":[{\"type\":\"core\",\"count\":1}]}]",
                XFS10,
                "rabbit storage needs a jobspec that requests nodes (e.g. flux submit -N);"
                " the top-level resource is 'slot'",
                "a nodeless jobspec is refused");
    rewrite_is ("[{\"type\":\"node\",\"count\":{\"min\":1,\"max\":4}}]", XFS10,
                "node count ranges are not supported with rabbit storage; give a fixed count",
                "count ranges are refused");
    rewrite_is ("[{\"type\":\"node\",\"count\":1},{\"type\":\"node\",\"count\":1}]", XFS10,
                "jobspec resources must have a single top-level entry to use rabbit storage"
                " (found 2)",
                "two top-level entries are refused");
    rewrite_is ("[{\"type\":\"chassis\",\"count\":1,\"with\":[{\"type\":\"core\",\"count\":1}]}]",
                XFS10, "chassis may contain only node and storage_node entries, not 'core'",
                "odd chassis contents are refused");
    rewrite_is (NODE2, "[{\"status\":{\"storage\":{\"allocationSets\":[{\"label\":\"xfs\","
                       "\"allocationStrategy\":\"AllocateAcrossServers\","
                       "\"minimumCapacity\":1}]}}}]",
                "breakdown 0: allocation set 0 (xfs) has strategy AllocateAcrossServers,"
                " expected AllocatePerCompute",
                "a label with the wrong strategy is refused");
    rewrite_is (NODE2, "[{\"status\":{\"storage\":{\"allocationSets\":[{\"label\":\"zfs\","
                       "\"allocationStrategy\":\"AllocatePerCompute\","
                       "\"minimumCapacity\":1}]}}}]",
                "breakdown 0: allocation set 0 has unknown label 'zfs'",
                "an unknown label is refused");
    rewrite_is (NODE2, "[{\"status\":{\"storage\":{\"allocationSets\":[{\"label\":\"xfs\"}]}}}]",
                "breakdown 0: allocation set 0 needs a label, an allocationStrategy and a"
                " minimumCapacity >= 1",
                "an incomplete set is refused");
    rewrite_is (NODE2, "{}", "breakdowns must be a list", "breakdowns must be a list");
    rewrite_is ("{", XFS10, "resources: invalid JSON: string or '}' expected near end of file (line 1, column 1)",
                "bad resources JSON");

    dws_error_t err;
    json_t *empty = json_array ();
    ok (dws_breakdown_gib_per_node (empty, 0, 4, &err) == -1, "zero nodes: %s", err.text);
    json_decref (empty);
    return done_testing ();
}
