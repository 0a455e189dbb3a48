/* SPDX-License-Identifier: LGPL-3.0-or-later */
#include <string.h>

#include "parse/policy.h"
#include "tap.h"

static void check (const char *dirs, int nnodes, const char *max, const char *expect)
{
    dws_error_t err;
    int rc = dws_policy_check_maximums_json (dirs, nnodes, max, &err);
    is (rc == 0 ? "ok" : err.text, expect, "%s on %d nodes vs %s", dirs, nnodes, max);
}

int main (void)
{
    const char *two_xfs = "[\"#DW jobdw type=xfs capacity=10GiB name=a\","
                          " \"#DW jobdw type=xfs capacity=20GiB name=b\"]";
    check (two_xfs, 4, "{\"xfs\": 30}", "ok");
    check (two_xfs, 4, "{\"xfs\": 29}",
           "Requested a total of 30 GiB of xfs storage per node but max is 29 GiB per node");
    check (two_xfs, 4, "{\"gfs2\": 1}", "ok");
    check (two_xfs, 4, NULL, "ok");
    check (two_xfs, 4, "{}", "ok");
    check ("[\"#DW jobdw type=lustre capacity=100GiB name=l\"]", 4, "{\"lustre\": 25}", "ok");
    check ("[\"#DW jobdw type=lustre capacity=100GiB name=l\"]", 3, "{\"lustre\": 33}",
           "Requested a total of 34 GiB of lustre storage per node but max is 33 GiB per node");
    check ("[\"#DW jobdw type=raw capacity=1TB name=r\", \"#DW copy_in source=a destination=b\","
           " \"#DW persistentdw name=p\"]",
           1, "{\"raw\": 931}",
           "Requested a total of 932 GiB of raw storage per node but max is 931 GiB per node");
    check ("[\"#DW create_persistent type=xfs capacity=10GiB name=pp\"]", 1, "{\"xfs\": 1}",
           "Requested a total of 10 GiB of xfs storage per node but max is 1 GiB per node");
    check ("[\"#DW jobdw type=xfs capacity=1500MiB name=aa\","
           " \"#DW jobdw type=xfs capacity=1500MiB name=bb\"]", 1, "{\"xfs\": 3}",
           "Requested a total of 4 GiB of xfs storage per node but max is 3 GiB per node");
    check (two_xfs, 0, "{\"xfs\": 1}", "cannot apply rabbit.policy.maximums: job has no nodes");
    check (two_xfs, 1, "{\"zfs\": 1}",
           "rabbit.policy.maximums.zfs: unknown file system type (expected xfs, gfs2, raw or"
           " lustre)");
    check (two_xfs, 1, "{\"xfs\": -1}",
           "rabbit.policy.maximums.xfs must be a non-negative integer (GiB per node)");
    check (two_xfs, 1, "{\"xfs\": \"1\"}",
           "rabbit.policy.maximums.xfs must be a non-negative integer (GiB per node)");
    check (two_xfs, 1, "[]", "rabbit.policy.maximums must be a table");
    check ("[\"#DW jobdw type=xfs capacity=lots name=a\"]", 1, "{\"xfs\": 1}",
           "invalid capacity string, lots");
    check ("[\"jobdw\"]", 1, "{\"xfs\": 1}", "missing '#DW' prefix in directive 'jobdw'");
    check ("{", 1, NULL, "directives: invalid JSON: string or '}' expected near end of file (line 1, column 1)");
    return done_testing ();
}
