/* SPDX-License-Identifier: LGPL-3.0-or-later */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "jsontap.h"
#include "placement/rabbitmap.h"
#include "placement/servers.h"

/* got must equal expect exactly, list order included */
static void result_is (char *got, const char *expect, dws_error_t *err, const char *what)
{
    json_dump_is (got, expect, err->text, JSON_SORT_KEYS, what);
}

static void sets_min (const char *storage, const char *counts, int64_t min, const char *expect,
                      const char *what)
{
    dws_error_t err;
    result_is (dws_servers_allocation_sets_json (storage, counts, min, &err), expect, &err, what);
}

static void sets_is (const char *storage, const char *counts, const char *expect,
                     const char *what)
{
    sets_min (storage, counts, DWS_MIN_ALLOCATION_BYTES, expect, what);
}

#define SET1(label, strat, cap, extra)                                                     \
    "{\"label\":\"" label "\",\"allocationStrategy\":\"" strat "\",\"minimumCapacity\":" cap \
    extra "}"
#define SET(label, strat, cap, extra) "{\"allocationSets\":[" SET1 (label, strat, cap, extra) "]}"
#define E(name, n) "{\"name\":\"" name "\",\"allocationCount\":" #n "}"

static const char *counts = "{\"r2\": 3, \"r1\": 16, \"r3\": 16}";

static void strategies (void)
{
    sets_is (SET ("xfs", "AllocatePerCompute", "10737418240", ""), counts,
             "[{\"label\":\"xfs\",\"allocationSize\":10737418240,\"storage\":["
             E ("r1", 16) "," E ("r2", 3) "," E ("r3", 16) "]}]",
             "per compute: one allocation per node on its rabbit");
    sets_is (SET ("xfs", "AllocatePerCompute", "1", ""), counts,
             "[{\"label\":\"xfs\",\"allocationSize\":4294967296,\"storage\":["
             E ("r1", 16) "," E ("r2", 3) "," E ("r3", 16) "]}]",
             "sizes are raised to the minimum allocation");
    sets_min (SET ("xfs", "AllocatePerCompute", "1", ""), counts, 0,
              "[{\"label\":\"xfs\",\"allocationSize\":1,\"storage\":["
              E ("r1", 16) "," E ("r2", 3) "," E ("r3", 16) "]}]",
              "minimum 0: sizes as asked");
    sets_min (SET ("xfs", "AllocatePerCompute", "1", ""), counts, 8LL << 30,
              "[{\"label\":\"xfs\",\"allocationSize\":8589934592,\"storage\":["
              E ("r1", 16) "," E ("r2", 3) "," E ("r3", 16) "]}]",
              "the minimum is a parameter (8 GiB)");
    sets_is (SET ("mgt", "AllocateSingleServer", "5368709120", ""), counts,
             "[{\"label\":\"mgt\",\"allocationSize\":5368709120,\"storage\":[" E ("r1", 1) "]}]",
             "single server: the rabbit with most nodes (ties by name)");
    sets_is (SET ("xfs", "AllocatePerCompute", "1", ",\"constraints\":{\"count\":2}"), counts,
             "[{\"label\":\"xfs\",\"allocationSize\":4294967296,\"storage\":["
             E ("r1", 16) "," E ("r2", 3) "," E ("r3", 16) "]}]",
             "per compute ignores a count");
    sets_is (SET ("mgt", "AllocateSingleServer", "5368709120", ",\"constraints\":{\"count\":3}"),
             counts,
             "[{\"label\":\"mgt\",\"allocationSize\":5368709120,\"storage\":[" E ("r1", 1) "]}]",
             "single server ignores a count");
    sets_is (SET ("ost", "AllocateAcrossServers", "100000000000",
                  ",\"constraints\":{\"count\":2}"),
             counts,
             "[{\"label\":\"ost\",\"allocationSize\":50000000000,\"storage\":["
             E ("r1", 1) "," E ("r3", 1) "]}]",
             "count 2: the two busiest rabbits");
    sets_is (SET ("ost", "AllocateAcrossServers", "100000000000",
                  ",\"constraints\":{\"count\":5}"),
             counts,
             "[{\"label\":\"ost\",\"allocationSize\":20000000000,\"storage\":["
             E ("r1", 2) "," E ("r2", 1) "," E ("r3", 2) "]}]",
             "count 5 on 3 rabbits: round-robin, extras to the busiest");
    sets_is (SET ("mdt", "AllocateAcrossServers", "100000000001",
                  ",\"constraints\":{\"count\":3,\"scale\":4}"),
             counts,
             "[{\"label\":\"mdt\",\"allocationSize\":33333333334,\"storage\":["
             E ("r1", 1) "," E ("r2", 1) "," E ("r3", 1) "]}]",
             "count 3: size rounded up, scale ignored");
    sets_is (SET ("ost", "AllocateAcrossServers", "35000000000", ""),
             "{\"a\": 16, \"b\": 16, \"c\": 3}",
             "[{\"label\":\"ost\",\"allocationSize\":4294967296,\"storage\":["
             E ("a", 16) "," E ("b", 16) "," E ("c", 3) "]}]",
             "weighted: gcd 1, size ceil(35e9/35) raised to the minimum");
    sets_is (SET ("ost", "AllocateAcrossServers", "3200000000000", ""),
             "{\"a\": 16, \"b\": 8}",
             "[{\"label\":\"ost\",\"allocationSize\":1066666666667,\"storage\":["
             E ("a", 2) "," E ("b", 1) "]}]",
             "weighted: gcd 8, 3 allocations of ceil(8*3.2e12/24)");
    sets_is (SET ("ost", "AllocateAcrossServers", "9223372036854775807", ""),
             "{\"a\": 16, \"b\": 16}",
             "allocation set 0 (ost): the allocations add up to more than 9223372036854775807"
             " bytes",
             "weighted: the largest capacity in 2 shares of 2^62 is too much for nnf-sos");
    sets_is (SET ("ost", "AllocateAcrossServers", "4611686018427387904", ""),
             "{\"a\": 16, \"b\": 16, \"c\": 16}",
             "[{\"label\":\"ost\",\"allocationSize\":1537228672809129302,\"storage\":["
             E ("a", 1) "," E ("b", 1) "," E ("c", 1) "]}]",
             "weighted: no intermediate overflow (gcd 16 times 2^62)");
    sets_is (SET ("ost", "AllocateAcrossServers", "3200000000000", ",\"constraints\":{\"count\":null}"),
             "{\"a\": 16, \"b\": 8}",
             "[{\"label\":\"ost\",\"allocationSize\":1066666666667,\"storage\":["
             E ("a", 2) "," E ("b", 1) "]}]",
             "a null count is no count");
    sets_is ("{\"allocationSets\":[" SET1 ("ost", "AllocateAcrossServers", "1099511627776", "") ","
             SET1 ("mdt", "AllocateAcrossServers", "274877906944", ",\"constraints\":{\"count\":1}") ","
             SET1 ("mgt", "AllocateSingleServer", "5368709120", "") "]}",
             "{\"r10\": 16, \"r9\": 16, \"r100\": 8}",
             "[{\"label\":\"ost\",\"allocationSize\":219902325556,\"storage\":["
             E ("r9", 2) "," E ("r10", 2) "," E ("r100", 1) "]},"
             "{\"label\":\"mdt\",\"allocationSize\":274877906944,\"storage\":[" E ("r9", 1) "]},"
             "{\"label\":\"mgt\",\"allocationSize\":5368709120,\"storage\":[" E ("r9", 1) "]}]",
             "lustre: sets in breakdown order; names in natural order (r9 < r10 < r100)");
    sets_is ("{\"status\":{\"storage\":" SET ("raw", "AllocatePerCompute", "1", "") "}}",
             "{\"r\": 2}",
             "[{\"label\":\"raw\",\"allocationSize\":4294967296,\"storage\":[" E ("r", 2) "]}]",
             "a whole breakdown object is accepted");
    sets_is ("{\"storage\":" SET ("raw", "AllocatePerCompute", "1", "") "}", "{\"r\": 2}",
             "[{\"label\":\"raw\",\"allocationSize\":4294967296,\"storage\":[" E ("r", 2) "]}]",
             "a breakdown status is accepted");
    sets_is ("{\"allocationSets\":[]}", "{\"r\": 2}", "[]", "no sets: no allocations");
}

static void errors (void)
{
    sets_is (SET ("ost", "AllocateBogus", "1", ""), counts,
             "allocation set 0 (ost): unknown allocationStrategy 'AllocateBogus'",
             "unknown strategy");
    sets_is (SET ("ost", "AllocatePerServer", "1", ""), counts,
             "allocation set 0 (ost): allocationStrategy AllocatePerServer is not supported"
             " (nnf-sos never asks for it)",
             "AllocatePerServer");
    sets_is (SET ("ost", "AllocateAcrossServers", "1", ",\"constraints\":{\"count\":0}"),
             counts, "allocation set 0 (ost): constraints.count must be an integer >= 1",
             "count 0");
    sets_is (SET ("ost", "AllocateAcrossServers", "1", ",\"constraints\":{\"count\":2.5}"),
             counts, "allocation set 0 (ost): constraints.count must be an integer >= 1",
             "real count");
    sets_is (SET ("xfs", "AllocatePerCompute", "1", ",\"constraints\":{\"count\":\"2\"}"),
             counts, "allocation set 0 (xfs): constraints.count must be an integer >= 1",
             "a bad count is refused whatever the strategy");
    sets_is (SET ("ost", "AllocateAcrossServers", "1", ",\"constraints\":[1]"), counts,
             "allocation set 0 (ost): constraints must be an object", "constraints a list");
    sets_is (SET ("ost", "AllocateAcrossServers", "1",
                  ",\"constraints\":{\"count\":1000000000000}"),
             counts,
             "allocation set 0 (ost): the allocations add up to more than 9223372036854775807"
             " bytes",
             "a count whose bytes overflow");
    sets_is (SET ("xfs", "AllocatePerCompute", "1", ""), "{}",
             "the job has no compute nodes attached to rabbits", "no rabbits");
    sets_is (SET ("xfs", "AllocatePerCompute", "1", ""), "[]",
             "rabbit counts must be an object {rabbit: node count}", "counts a list");
    sets_is (SET ("xfs", "AllocatePerCompute", "1", ""), "{\"r\": 0}",
             "rabbit 'r': node count must be an integer from 1 to 16777216", "zero count");
    sets_is (SET ("xfs", "AllocatePerCompute", "1", ""), "{\"r\": 1.5}",
             "rabbit 'r': node count must be an integer from 1 to 16777216", "real count");
    sets_is (SET ("xfs", "AllocatePerCompute", "1", ""), "{\"r\": 16777217}",
             "rabbit 'r': node count must be an integer from 1 to 16777216", "huge count");
    sets_is ("{}", counts, "status.storage must have an allocationSets list", "no sets");
    sets_is ("[1]", counts, "status.storage must have an allocationSets list", "storage a list");
    sets_is ("{\"allocationSets\":[{\"label\":\"x\"}]}", counts,
             "allocation set 0 needs a label, an allocationStrategy and an integer"
             " minimumCapacity >= 1",
             "incomplete set");
    sets_is ("{\"allocationSets\":[" SET1 ("x", "AllocatePerCompute", "5", "") ",7]}", counts,
             "allocation set 1 needs a label, an allocationStrategy and an integer"
             " minimumCapacity >= 1",
             "a non-object set, named by index");
    sets_is (SET ("xfs", "AllocatePerCompute", "-5", ""), counts,
             "allocation set 0 needs a label, an allocationStrategy and an integer"
             " minimumCapacity >= 1",
             "negative capacity");
    sets_min (SET ("xfs", "AllocatePerCompute", "1", ""), counts, -1,
              "the minimum allocation size must be >= 0 bytes", "negative minimum");
    sets_is ("{", counts, "storage: invalid JSON: string or '}' expected near end of file (line 1, column 1)",
             "bad storage JSON");
    sets_is ("{}", "x", "rabbit counts: invalid JSON: invalid token near 'x' (line 1, column 1)", "bad counts JSON");
}

static void names (void)
{
    cmp_ok (dws_hostname_cmp ("r9", "r10"), <, 0, "r9 < r10");
    cmp_ok (dws_hostname_cmp ("r10", "r9"), >, 0, "r10 > r9");
    cmp_ok (dws_hostname_cmp ("elcap201", "elcap201"), ==, 0, "equal names");
    cmp_ok (dws_hostname_cmp ("r01", "r1"), >, 0, "r1 < r01 (same value, fewer zeros first)");
    cmp_ok (dws_hostname_cmp ("r002", "r10"), <, 0, "r002 < r10 (by value)");
    cmp_ok (dws_hostname_cmp ("r", "r1"), <, 0, "a prefix comes first");
    cmp_ok (dws_hostname_cmp ("a1b2", "a1b10"), <, 0, "every digit run compares as a number");
    cmp_ok (dws_hostname_cmp ("a", "b"), <, 0, "letters as bytes");
    cmp_ok (dws_hostname_cmp ("0", "00"), <, 0, "0 < 00");
}

static void from_hosts (void)
{
    dws_error_t err;
    struct dws_rabbitmap *map = dws_rabbitmap_create_json (
        "{\"c1\":\"r10\",\"c2\":\"r10\",\"c3\":\"r9\",\"c4\":\"r9\",\"c5\":\"r9\"}",
        &err);
    const char *lustre = "{\"allocationSets\":["
        SET1 ("ost", "AllocateAcrossServers", "10737418240", "") ","
        SET1 ("mgt", "AllocateSingleServer", "5368709120", "") "]}";

    result_is (dws_servers_allocation_sets_hosts_json (map, "c[1-5],r9", lustre, 0, &err),
             "[{\"label\":\"ost\",\"allocationSize\":2147483648,\"storage\":["
             E ("r9", 3) "," E ("r10", 2) "]},"
             "{\"label\":\"mgt\",\"allocationSize\":5368709120,\"storage\":[" E ("r9", 1) "]}]",
             &err, "from a hostlist and a prepared map");
    char *want = dws_servers_allocation_sets_json (lustre, "{\"r10\":2,\"r9\":3}", 0, &err);
    result_is (dws_servers_allocation_sets_hosts_json (map, "c[1-5]", lustre, 0, &err), want, &err,
             "... the same as from the counts");
    free (want);
    result_is (dws_servers_allocation_sets_hosts_json (map, "c6", lustre, 0, &err),
             "compute node 'c6' is not attached to any rabbit", &err, "unknown host");
    result_is (dws_servers_allocation_sets_hosts_json (map, "r9", lustre, 0, &err),
             "the job has no compute nodes attached to rabbits", &err, "only rabbits");
    result_is (dws_servers_allocation_sets_hosts_json (map, "c1", "[", 0, &err),
             "storage: invalid JSON: ']' expected near end of file (line 1, column 1)", &err, "bad storage");
    result_is (dws_servers_allocation_sets_hosts_json (map, NULL, lustre, 0, &err),
             "job hosts: no hostlist", &err, "NULL hosts");
    result_is (dws_servers_allocation_sets_hosts_json (NULL, "c1", lustre, 0, &err),
             "no rabbit map", &err, "NULL map");
    result_is (dws_servers_allocation_sets_hosts_json (map, "c1", "{}", 0, &err),
             "status.storage must have an allocationSets list", &err, "no sets");
    result_is (dws_servers_allocation_sets_hosts_json (map, "c1", lustre, -1, &err),
             "the minimum allocation size must be >= 0 bytes", &err, "negative minimum");
    dws_rabbitmap_destroy (map);

    json_t *st = json_loads (lustre, 0, NULL);
    json_t *c = json_loads ("{\"a\\\"b\":4}", 0, NULL);
    json_t *o = dws_servers_allocation_sets (st, c, 0, &err);
    char *got = json_dumps (o, JSON_COMPACT);
    result_is (dws_servers_allocation_sets_json (lustre, "{\"a\\\"b\":4}", 0, &err), got, &err,
             "json_t and text results agree (escaped names too)");
    free (got);
    json_decref (o);
    json_decref (st);
    json_decref (c);
}

int main (void)
{
    strategies ();
    from_hosts ();
    errors ();
    names ();
    return done_testing ();
}
