/* userlimits.h - the limits table of [rabbit]: rabbit storage per user
 * and per bank.
 *
 *   [rabbit.limits]
 *   max_user_gib = 2048          # GiB one user may hold at once (all banks)
 *   max_user_jobs = 4            # rabbit jobs one user may have past dws-create
 *   max_bank_gib = 20000         # GiB one bank's jobs may hold at once
 *   max_bank_jobs = 40           # rabbit jobs of one bank past dws-create
 *   [rabbit.limits.users.alice]  # a user's own limits (name or uid)
 *   max_user_gib = 8192
 *   [rabbit.limits.banks.physics]  # a bank's own limits
 *   max_bank_gib = 40000         # the bank as a whole
 *   max_user_gib = 4096          # each user, of the jobs charged to the bank
 *
 * Every key is optional; an absent one is no limit.  A user's table
 * replaces the top-level value of each key it gives and keeps the others;
 * a bank's table replaces the top level's max_bank_gib/max_bank_jobs, and
 * its max_user_gib/max_user_jobs are limits of their own (a user within
 * the bank), beside the user's.  A bank is flux-accounting's, read from
 * the job (attributes.system.bank).  Values are integers >= 1 (a TOML
 * number, not a string or a boolean); a user key is a user name or a
 * decimal uid, non-empty; a bank key is a bank's name, non-empty.
 * Unknown keys are errors.
 *
 * dws_userlimits_check_table () returns a normalised copy ({"users": {},
 * "banks": {}} always present; absent limits absent) or NULL with one line
 * naming the key: "rabbit.limits.max_user_gib: must be an integer >= 1,
 * got -1".
 * The engine reads the table (engine/limits.h); a user name is matched
 * against the job owner's name the service looks up.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_USERLIMITS_H
#define DWS_USERLIMITS_H

#include <jansson.h>

#include "util/error.h"

/* The limit keys: a user's (also those of a user's table) and a bank's
 * as a whole (a bank's table holds all four). */
#define DWS_USERLIMITS_GIB "max_user_gib"
#define DWS_USERLIMITS_JOBS "max_user_jobs"
#define DWS_USERLIMITS_BANK_GIB "max_bank_gib"
#define DWS_USERLIMITS_BANK_JOBS "max_bank_jobs"

json_t *dws_userlimits_check_table (const char *path, json_t *val, dws_error_t *err);

#endif /* !DWS_USERLIMITS_H */
