/* labels.c - allocation-set labels and strategies (see labels.h).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <stddef.h>
#include <string.h>

#include "labels.h"

static const char *const strategy_names[] = {
    [DWS_ALLOCATE_PER_COMPUTE] = "AllocatePerCompute",
    [DWS_ALLOCATE_ACROSS_SERVERS] = "AllocateAcrossServers",
    [DWS_ALLOCATE_SINGLE_SERVER] = "AllocateSingleServer",
};

static const struct {
    const char *label;
    enum dws_strategy strategy;
    bool lustre;
} label_table[] = {
    {"xfs", DWS_ALLOCATE_PER_COMPUTE, false},
    {"gfs2", DWS_ALLOCATE_PER_COMPUTE, false},
    {"raw", DWS_ALLOCATE_PER_COMPUTE, false},
    {"ost", DWS_ALLOCATE_ACROSS_SERVERS, true},
    {"mdt", DWS_ALLOCATE_ACROSS_SERVERS, true},
    {"mgtmdt", DWS_ALLOCATE_ACROSS_SERVERS, true},
    {"mgt", DWS_ALLOCATE_SINGLE_SERVER, true},
};

#define NELEM(a) (sizeof (a) / sizeof ((a)[0]))

int dws_strategy_parse (const char *name, enum dws_strategy *strategy, dws_error_t *err)
{
    for (size_t i = 0; i < NELEM (strategy_names); i++) {
        if (name && !strcmp (name, strategy_names[i])) {
            *strategy = (enum dws_strategy)i;
            return 0;
        }
    }
    if (name && !strcmp (name, "AllocatePerServer"))
        return dws_errorf (err,
                           "allocationStrategy AllocatePerServer is not supported"
                           " (nnf-sos never asks for it)");
    return dws_errorf (err, "unknown allocationStrategy '%s'", name ? name : "(null)");
}

const char *dws_strategy_name (enum dws_strategy strategy)
{
    if ((size_t)strategy >= NELEM (strategy_names))
        return "(invalid)";
    return strategy_names[strategy];
}

bool dws_label_is_lustre (const char *label)
{
    for (size_t i = 0; i < NELEM (label_table); i++)
        if (label && !strcmp (label_table[i].label, label))
            return label_table[i].lustre;
    return false;
}

int dws_label_check (const char *label,
                     const char *strategy,
                     bool *lustre,
                     dws_error_t *err)
{
    for (size_t i = 0; i < NELEM (label_table); i++) {
        if (!label || strcmp (label_table[i].label, label) != 0)
            continue;
        const char *want = strategy_names[label_table[i].strategy];
        if (!strategy || strcmp (strategy, want) != 0)
            return dws_errorf (err,
                               "label '%s' has strategy %s, expected %s",
                               label,
                               strategy ? strategy : "(none)",
                               want);
        if (lustre)
            *lustre = label_table[i].lustre;
        return 0;
    }
    return dws_errorf (err,
                       "unknown label '%s' (expected xfs, gfs2, raw, ost, mdt, mgtmdt"
                       " or mgt)",
                       label ? label : "(null)");
}
