/* SPDX-License-Identifier: LGPL-3.0-or-later */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "jsontap.h"
#include "placement/nodelocal.h"

#define TASK "{\"type\":\"slot\",\"count\":1,\"label\":\"task\",\"with\":[{\"type\":\"core\",\"count\":1}]}"
#define NODE(n) "[{\"type\":\"node\",\"count\":" #n ",\"with\":[" TASK "]}]"
#define SET(label, strat) "{\"label\":\"" label "\",\"allocationStrategy\":\"" strat "\",\"minimumCapacity\":1}"
#define DBD(sets) "{\"status\":{\"ready\":true,\"storage\":{\"allocationSets\":[" sets "]}}}"

static bool placeable (const char *res, const char *bds, char *why, size_t len)
{
    dws_error_t err = {0};
    json_t *r = json_loads (res, JSON_DECODE_ANY, NULL);
    json_t *b = json_loads (bds, JSON_DECODE_ANY, NULL);
    bool ok = dws_nodelocal_placeable (r, b, &err);
    snprintf (why, len, "%.200s", ok ? "" : err.text);
    json_decref (r);
    json_decref (b);
    return ok;
}

static void which_jobs (void)
{
    char why[256];
    const char *xfs = "[" DBD (SET ("xfs", "AllocatePerCompute")) "]";
    const char *gfs2raw = "[" DBD (SET ("gfs2", "AllocatePerCompute")) ","
                          DBD (SET ("raw", "AllocatePerCompute")) "]";
    const char *mixed = "[" DBD (SET ("xfs", "AllocatePerCompute")) ","
                        DBD (SET ("ost", "AllocateAcrossServers")) "]";
    const char *lustre = "[" DBD (SET ("mgtmdt", "AllocateAcrossServers") ","
                         SET ("ost", "AllocateAcrossServers")) "]";
    ok (placeable (NODE (4), xfs, why, sizeof (why)), "xfs on nodes alone: placeable");
    ok (placeable (NODE (1), gfs2raw, why, sizeof (why)), "gfs2 and raw: placeable");
    ok (!placeable (NODE (4), mixed, why, sizeof (why)) && strstr (why, "and its Lustre"),
        "xfs with Lustre: not, saying so (%s)", why);
    ok (!placeable (NODE (4), lustre, why, sizeof (why)) && strstr (why, "no node-local"),
        "Lustre alone: not node-local (%s)", why);
    ok (!placeable ("[]", "[]", why, sizeof (why)), "no storage: not placeable");
    ok (!placeable ("[{\"type\":\"slot\",\"count\":2,\"with\":[{\"type\":\"node\",\"count\":1}]}]",
                    xfs, why, sizeof (why))
            && strstr (why, "nodes alone (-N)"),
        "slots: not, saying why (%s)", why);
    ok (!placeable ("[{\"type\":\"node\",\"count\":{\"min\":1}}]", xfs, why, sizeof (why)),
        "a count range: not placeable");
}

/* An instance of `n` chassis of 16 nodes (El Capitan's). */
static const int64_t SIXTEEN[32] = {16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16,
                                    16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16};

static void split_is (int64_t nodes, const int64_t *sizes, size_t n, int64_t chassis, int64_t per)
{
    dws_error_t err = {0};
    int64_t c = -1, k = -1;
    int rc = dws_nodelocal_split (nodes, sizes, n, &c, &k, &err);
    ok (rc == 0 && c == chassis && k == per, "%lld nodes: %lld x %lld (got %lld x %lld) %s",
        (long long)nodes, (long long)chassis, (long long)per, (long long)c, (long long)k,
        rc < 0 ? err.text : "");
}

static void splits (void)
{
    split_is (1, SIXTEEN, 32, 1, 1);
    split_is (16, SIXTEEN, 32, 1, 16);
    split_is (12, SIXTEEN, 32, 1, 12);
    split_is (32, SIXTEEN, 32, 2, 16);
    split_is (20, SIXTEEN, 32, 2, 10);
    split_is (17, SIXTEEN, 32, 17, 1); /* a prime over a chassis: one node each */
    const int64_t kind[] = {3, 1}; /* the emulator's kind system */
    split_is (2, kind, 2, 1, 2);
    split_is (3, kind, 2, 1, 3);
    split_is (1, kind, 2, 1, 1);
    const int64_t two[] = {2, 2};
    split_is (4, two, 2, 2, 2);
    dws_error_t err;
    int64_t c, k;
    ok (dws_nodelocal_split (4, kind, 2, &c, &k, &err) < 0
            && strstr (err.text, "cannot be split evenly over the 2 chassis"),
        "4 nodes over chassis of 3 and 1: none (%s)", err.text);
    ok (dws_nodelocal_split (0, SIXTEEN, 32, &c, &k, &err) < 0 && strstr (err.text, "cannot split"),
        "0 nodes: an error");
    ok (dws_nodelocal_split (4, NULL, 0, &c, &k, &err) < 0, "no chassis: an error");
    ok (dws_nodelocal_split (33 * 16, SIXTEEN, 32, &c, &k, &err) < 0,
        "more nodes than the chassis hold: an error");
}

static void pins (void)
{
    dws_error_t err;
    json_t *r = json_loads (NODE (4), 0, NULL);
    json_t *p = dws_nodelocal_pin (r, 2, 2, &err);
    char *s = p ? json_dumps (p, JSON_COMPACT) : NULL;
    json_is (s ? s : err.text,
             "[{\"type\":\"chassis\",\"count\":2,\"with\":[{\"type\":\"node\",\"count\":2,"
             "\"with\":[" TASK "]}]}]",
             "node(4) -> chassis(2){node(2)}, its slots kept");
    free (s);
    json_decref (p);
    ok (dws_nodelocal_pin (r, 3, 1, &err) == NULL && strstr (err.text, "not the job's 4 nodes"),
        "a split that is not the job's nodes: refused (%s)", err.text);
    json_decref (r);
    json_t *c = dws_nodelocal_constraint ("compute-[03-04]");
    s = json_dumps (c, JSON_COMPACT);
    json_is (s, "{\"hostlist\":[\"compute-[03-04]\"]}", "the RFC 31 hostlist constraint");
    free (s);
    json_decref (c);
}

int main (void)
{
    which_jobs ();
    splits ();
    pins ();
    return done_testing ();
}
