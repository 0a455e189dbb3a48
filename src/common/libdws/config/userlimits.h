/* userlimits.h - the limits table of [rabbit]: rabbit storage per user.
 *
 *   [rabbit.limits]
 *   max_user_gib = 2048          # GiB one user may hold at once
 *   max_user_jobs = 4            # rabbit jobs one user may have past dws-create
 *   [rabbit.limits.users.alice]  # a user's own limits (name or uid)
 *   max_user_gib = 8192
 *
 * Every key is optional; an absent one is no limit.  A user's table
 * replaces the top-level value of each key it gives and keeps the others.
 * Values are integers >= 1 (a TOML number, not a string or a boolean);
 * a user key is a user name or a decimal uid, non-empty.  Unknown keys are
 * errors.
 *
 * dws_userlimits_check_table () returns a normalised copy ({"users": {}}
 * always present; absent limits absent) or NULL with one line naming the
 * key: "rabbit.limits.max_user_gib: must be an integer >= 1, got -1".
 * The engine reads the table (engine/limits.h); a user name is matched
 * against the job owner's name the service looks up.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_USERLIMITS_H
#define DWS_USERLIMITS_H

#include <jansson.h>

#include "util/error.h"

/* The limit keys, in order (also those of a user's table). */
#define DWS_USERLIMITS_GIB "max_user_gib"
#define DWS_USERLIMITS_JOBS "max_user_jobs"

json_t *dws_userlimits_check_table (const char *path, json_t *val, dws_error_t *err);

#endif /* !DWS_USERLIMITS_H */
