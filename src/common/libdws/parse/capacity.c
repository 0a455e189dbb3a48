/* SPDX-License-Identifier: LGPL-3.0-or-later */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "capacity.h"

/* Does s[0..len) match \d+(\.\d*)?|\.\d+ exactly? */
static bool number_token (const char *s, size_t len)
{
    size_t i = 0, d1 = 0, d2 = 0;
    while (i < len && s[i] >= '0' && s[i] <= '9') {
        i++;
        d1++;
    }
    if (i < len && s[i] == '.') {
        i++;
        while (i < len && s[i] >= '0' && s[i] <= '9') {
            i++;
            d2++;
        }
    }
    return i == len && (d1 > 0 || d2 > 0);
}

static double multiplier (const char *unit, size_t len)
{
    static const struct {
        const char *unit;
        double mult;
    } units[] = {
        {"", 1},
        {"K", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}, {"P", 1e15},
        {"Ki", 1024.0}, {"Mi", 1048576.0}, {"Gi", 1073741824.0},
        {"Ti", 1099511627776.0}, {"Pi", 1125899906842624.0},
    };
    for (size_t i = 0; i < sizeof (units) / sizeof (units[0]); i++)
        if (strlen (units[i].unit) == len && !strncmp (units[i].unit, unit, len))
            return units[i].mult;
    return 0; /* "k", "ki": matched by nnf's pattern, absent from its table */
}

int dws_capacity_parse (const char *s, int64_t *bytes, dws_error_t *err)
{
    size_t len, end, ulen = 0;
    double v;

    if (!s)
        return dws_errorf (err, "invalid capacity string, ");
    len = strlen (s);
    end = len;
    if (end > 0 && s[end - 1] == 'B')
        end--;
    if (end > 0 && s[end - 1] == 'i' && end > 1 && strchr ("kKMGTP", s[end - 2]))
        ulen = 2;
    else if (end > 0 && strchr ("kKMGTP", s[end - 1]) && s[end - 1])
        ulen = 1;
    end -= ulen;
    /* leftmost start whose suffix up to `end` is a number */
    for (size_t start = 0; start < end; start++) {
        if (!number_token (s + start, end - start))
            continue;
        v = strtod (s + start, NULL) * multiplier (s + end, ulen);
        v = round (v);
        if (!(v < 9223372036854775807.0))
            return dws_errorf (err, "invalid capacity string, %s (too large)", s);
        *bytes = (int64_t)v;
        return 0;
    }
    return dws_errorf (err, "invalid capacity string, %s", s);
}

int64_t dws_gib_ceil (int64_t bytes)
{
    return bytes <= 0 ? 0 : (bytes + DWS_GIB - 1) / DWS_GIB;
}
