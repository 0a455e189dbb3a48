/* SPDX-License-Identifier: LGPL-3.0-or-later */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "rabbitmap.h"
#include "servers.h"
#include "jsontap.h"

/* json_is on a malloc'd result (or the error text when it is NULL). */
static void result_is (char *got, const char *expect, dws_error_t *err, const char *what)
{
    json_is (got ? got : err->text, expect, what);
    free (got);
}

static void sets_is (const char *storage, const char *counts, const char *expect,
                     const char *what)
{
    dws_error_t err;
    result_is (dws_servers_allocation_sets_json (storage, counts, 4294967296LL, &err), expect,
             &err, what);
}

#define SET(label, strat, cap, extra)                                                      \
    "{\"allocationSets\":[{\"label\":\"" label "\",\"allocationStrategy\":\"" strat         \
    "\",\"minimumCapacity\":" cap extra "}]}"

int main (void)
{
    dws_error_t err;
    const char *counts = "{\"r2\": 3, \"r1\": 16, \"r3\": 16}";

    struct dws_rabbitmap *map = dws_rabbitmap_create_json (
        "{\"computes\":{\"c1\":\"r1\",\"c2\":\"r1\",\"c3\":\"r2\"},\"rabbits\":{}}", &err);
    ok (map != NULL, "a rabbitmap is built from a rabbitmapping document");
    result_is (dws_rabbitmap_counts_json (map, "c3,c[1-2],r1", &err), "{\"r2\":1,\"r1\":2}", &err,
             "rabbit counts skip rabbits used as computes");
    result_is (dws_rabbitmap_counts_json (map, "c9", &err),
             "compute node 'c9' is not attached to any rabbit", &err, "unknown compute");
    result_is (dws_rabbitmap_counts_json (map, "c[1-", &err),
             "job hosts: unbalanced brackets in 'c[1-'", &err, "bad hostlist");
    dws_rabbitmap_destroy (map);
    ok (dws_rabbitmap_create_json ("{\"computes\":{\"c1\":5}}", &err) == NULL,
        "bad map: %s", err.text);
    ok (dws_rabbitmap_create_json ("[", &err) == NULL, "bad JSON: %s", err.text);

    sets_is (SET ("xfs", "AllocatePerCompute", "10737418240", ""), counts,
             "[{\"label\":\"xfs\",\"allocationSize\":10737418240,\"storage\":["
             "{\"name\":\"r1\",\"allocationCount\":16},{\"name\":\"r2\",\"allocationCount\":3},"
             "{\"name\":\"r3\",\"allocationCount\":16}]}]",
             "per compute: one allocation per node on its rabbit");
    sets_is (SET ("xfs", "AllocatePerCompute", "1", ""), counts,
             "[{\"label\":\"xfs\",\"allocationSize\":4294967296,\"storage\":["
             "{\"name\":\"r1\",\"allocationCount\":16},{\"name\":\"r2\",\"allocationCount\":3},"
             "{\"name\":\"r3\",\"allocationCount\":16}]}]",
             "sizes are raised to the minimum allocation");
    sets_is (SET ("mgt", "AllocateSingleServer", "5368709120", ""), counts,
             "[{\"label\":\"mgt\",\"allocationSize\":5368709120,\"storage\":["
             "{\"name\":\"r1\",\"allocationCount\":1}]}]",
             "single server: the rabbit with most nodes (ties by name)");
    sets_is (SET ("ost", "AllocateAcrossServers", "100000000000",
                  ",\"constraints\":{\"count\":2}"),
             counts,
             "[{\"label\":\"ost\",\"allocationSize\":50000000000,\"storage\":["
             "{\"name\":\"r1\",\"allocationCount\":1},{\"name\":\"r3\",\"allocationCount\":1}]}]",
             "count 2: the two busiest rabbits");
    sets_is (SET ("ost", "AllocateAcrossServers", "100000000000",
                  ",\"constraints\":{\"count\":5}"),
             counts,
             "[{\"label\":\"ost\",\"allocationSize\":20000000000,\"storage\":["
             "{\"name\":\"r1\",\"allocationCount\":2},{\"name\":\"r2\",\"allocationCount\":1},"
             "{\"name\":\"r3\",\"allocationCount\":2}]}]",
             "count 5 on 3 rabbits: round-robin, extras to the busiest");
    sets_is (SET ("ost", "AllocateAcrossServers", "35000000000", ""),
             "{\"a\": 16, \"b\": 16, \"c\": 3}",
             "[{\"label\":\"ost\",\"allocationSize\":4294967296,\"storage\":["
             "{\"name\":\"a\",\"allocationCount\":16},{\"name\":\"b\",\"allocationCount\":16},"
             "{\"name\":\"c\",\"allocationCount\":3}]}]",
             "weighted: gcd 1, size ceil(35e9/35) raised to the minimum");
    sets_is (SET ("ost", "AllocateAcrossServers", "3200000000000", ""),
             "{\"a\": 16, \"b\": 8}",
             "[{\"label\":\"ost\",\"allocationSize\":1066666666667,\"storage\":["
             "{\"name\":\"a\",\"allocationCount\":2},{\"name\":\"b\",\"allocationCount\":1}]}]",
             "weighted: gcd 8, 3 allocations of ceil(8*3.2e12/24)");
    sets_is (SET ("ost", "AllocateBogus", "1", ""), counts,
             "allocation set 0 (ost): unknown allocationStrategy 'AllocateBogus'",
             "unknown strategy");
    sets_is (SET ("ost", "AllocateAcrossServers", "1", ",\"constraints\":{\"count\":0}"),
             counts, "allocation set 0 (ost): constraints.count must be an integer >= 1",
             "bad count");
    sets_is (SET ("xfs", "AllocatePerCompute", "1", ""), "{}",
             "the job has no compute nodes attached to rabbits", "no rabbits");
    sets_is (SET ("xfs", "AllocatePerCompute", "1", ""), "{\"r\": 0}",
             "rabbit 'r': node count must be an integer >= 1", "zero count");
    sets_is ("{}", counts, "status.storage must have an allocationSets list", "no sets");
    sets_is ("{\"allocationSets\":[{\"label\":\"x\"}]}", counts,
             "allocation set 0 needs a label, an allocationStrategy and a minimumCapacity >= 1",
             "incomplete set");
    return done_testing ();
}
