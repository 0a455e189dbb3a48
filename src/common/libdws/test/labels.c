/* SPDX-License-Identifier: LGPL-3.0-or-later */
#include <string.h>

#include "parse/labels.h"
#include "tap.h"

static void label_ok (const char *label, const char *strategy, bool lustre)
{
    dws_error_t err;
    bool l = !lustre;
    ok (dws_label_check (label, strategy, &l, &err) == 0 && l == lustre, "%s goes with %s%s",
        label, strategy, lustre ? " (whole file system)" : " (per node)");
}

static void label_err (const char *label, const char *strategy, const char *expect)
{
    dws_error_t err;
    ok (dws_label_check (label, strategy, NULL, &err) == -1, "%s/%s is refused",
        label ? label : "NULL", strategy ? strategy : "NULL");
    is (err.text, expect, "... with its message");
}

int main (void)
{
    dws_error_t err;
    enum dws_strategy s;

    label_ok ("xfs", "AllocatePerCompute", false);
    label_ok ("gfs2", "AllocatePerCompute", false);
    label_ok ("raw", "AllocatePerCompute", false);
    label_ok ("ost", "AllocateAcrossServers", true);
    label_ok ("mdt", "AllocateAcrossServers", true);
    label_ok ("mgtmdt", "AllocateAcrossServers", true);
    label_ok ("mgt", "AllocateSingleServer", true);
    ok (dws_label_check ("xfs", "AllocatePerCompute", NULL, NULL) == 0, "lustre and err may be NULL");

    label_err ("xfs", "AllocateAcrossServers",
               "label 'xfs' has strategy AllocateAcrossServers, expected AllocatePerCompute");
    label_err ("mgt", "AllocateAcrossServers",
               "label 'mgt' has strategy AllocateAcrossServers, expected AllocateSingleServer");
    label_err ("ost", NULL, "label 'ost' has strategy (none), expected AllocateAcrossServers");
    label_err ("zfs", "AllocatePerCompute",
               "unknown label 'zfs' (expected xfs, gfs2, raw, ost, mdt, mgtmdt or mgt)");
    label_err ("XFS", "AllocatePerCompute",
               "unknown label 'XFS' (expected xfs, gfs2, raw, ost, mdt, mgtmdt or mgt)");
    label_err (NULL, "AllocatePerCompute",
               "unknown label '(null)' (expected xfs, gfs2, raw, ost, mdt, mgtmdt or mgt)");

    ok (dws_strategy_parse ("AllocatePerCompute", &s, &err) == 0 && s == DWS_ALLOCATE_PER_COMPUTE,
        "AllocatePerCompute parses");
    ok (dws_strategy_parse ("AllocateAcrossServers", &s, &err) == 0
            && s == DWS_ALLOCATE_ACROSS_SERVERS,
        "AllocateAcrossServers parses");
    ok (dws_strategy_parse ("AllocateSingleServer", &s, &err) == 0
            && s == DWS_ALLOCATE_SINGLE_SERVER,
        "AllocateSingleServer parses");
    ok (dws_strategy_parse ("AllocatePerServer", &s, &err) == -1, "AllocatePerServer is refused");
    is (err.text, "allocationStrategy AllocatePerServer is not supported (nnf-sos never asks for it)",
        "... with its own message");
    ok (dws_strategy_parse ("allocatepercompute", &s, &err) == -1, "names are case-sensitive");
    is (err.text, "unknown allocationStrategy 'allocatepercompute'", "... unknown strategy message");
    ok (dws_strategy_parse (NULL, &s, &err) == -1, "NULL is refused");
    is (dws_strategy_name (DWS_ALLOCATE_SINGLE_SERVER), "AllocateSingleServer", "names round-trip");
    is (dws_strategy_name ((enum dws_strategy)42), "(invalid)", "an out-of-range strategy has no name");
    return done_testing ();
}
