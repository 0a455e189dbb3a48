/* capacity.h - storage sizes as #DW directives and NNF write them.
 *
 * dws_capacity_parse() reads a capacity the way nnf-sos does
 * (getCapacityInBytes): a number (digits, optional fraction) followed by an
 * optional unit K M G T P (powers of 10) or Ki Mi Gi Ti Pi (powers of 2) and
 * an optional B, at the end of the string; the value is rounded to the
 * nearest byte.  Like nnf-sos, a lowercase "k"/"ki" unit is accepted by the
 * pattern but has no multiplier, giving 0 bytes (nnf then reports
 * "'capacity' must be a non-zero value").  The #DW ruleset only lets
 * "<digits>(KiB|KB|MiB|MB|GiB|GB|TiB|TB)" through, for which both agree.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_CAPACITY_H
#define DWS_CAPACITY_H

#include <stdint.h>

#include "util/error.h"

#define DWS_GIB (1024LL * 1024 * 1024)

/* Returns 0 with *bytes set, or -1 with "invalid capacity string, <s>". */
int dws_capacity_parse (const char *s, int64_t *bytes, dws_error_t *err);

/* Whole GiB needed to hold `bytes` (rounded up). */
int64_t dws_gib_ceil (int64_t bytes);

#endif /* !DWS_CAPACITY_H */
