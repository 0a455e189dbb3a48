/* limits.h - rabbit storage per user: the decisions, as pure functions.
 *
 * [rabbit.limits] (config/userlimits.h) caps what one user holds at once:
 * max_user_gib, the GiB of rabbit storage, and max_user_jobs, the rabbit
 * jobs past dws-create (a Workflow made, running or holding storage).
 * What counts (admit.c gathers it):
 *   - a job counts for max_user_jobs from its Workflow's create until the
 *     Workflow is deleted;
 *   - its GiB (limits_job_gib: what its #DW directives ask for) count from
 *     the create until Teardown is done;
 *   - a PersistentStorageInstance counts its directive's GiB against its
 *     owner (spec.userID) while it exists.
 * A job that alone asks for more than max_user_gib is refused at
 * dws.create; one over what the user holds now waits (phase
 * "waiting-limit", the dws-limit dependency) and goes, in submission
 * order, once the user's other jobs free enough.  Nothing here reads the
 * job table: admit.c feeds these functions.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_ENGINE_LIMITS_H
#define DWS_ENGINE_LIMITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "util/error.h"

/* A user's limits; 0 = none. */
struct limits_rule {
    int64_t max_gib;
    int64_t max_jobs;
};

/* What a user holds now. */
struct limits_use {
    int64_t gib;
    int64_t jobs;
};

enum limits_verdict {
    LIMITS_GO = 0, /* within every limit with what the user holds */
    LIMITS_WAIT,   /* over a limit with what the user holds: wait */
    LIMITS_NEVER,  /* over max_user_gib alone: refuse */
};

/* The limits of user uid (name: the user's name, or NULL) from the
 * normalised limits table (NULL: no limits).  A user's table (by name
 * first, then by decimal uid) overrides the top level's values key by key.
 */
struct limits_rule limits_rule (json_t *limits, int64_t uid, const char *name);

/* May a job asking for `want` GiB go on while its user (named `user` in
 * the message) holds `use`?  WAIT and NEVER write why into why[size]:
 *   NEVER "Requested a total of 4096 GiB of rabbit storage but max_user_gib
 *          is 2048 GiB (user alice)"
 *   WAIT  "max_user_gib 2048: user alice holds 1900 GiB in 3 jobs"
 *         "max_user_jobs 2: user alice holds 200 GiB in 2 jobs"
 */
enum limits_verdict limits_check (const struct limits_rule *r, struct limits_use use,
                                  int64_t want, const char *user, char *why, size_t size);

/* The verdict on a job of user uid (name: the user's name, or NULL)
 * asking for `want` GiB while its user holds `use`: limits_check () with
 * the user's rule from the normalised limits table (NULL: GO), the user
 * named by name or uid.  listed false: the user's persistent storage is
 * not listed yet, so a job that would go waits.  The decider's question
 * (decide.c) and the reason a waiting job shows (admit.c).
 */
enum limits_verdict limits_job_verdict (json_t *limits, int64_t uid, const char *name,
                                        struct limits_use use, bool listed, int64_t want,
                                        char *why, size_t size);

/* Of a user's n waiting jobs (want[i] GiB each, in submission order), how
 * many go now: the first ones, each added to what the user holds, while
 * each fits; the first that does not fit stops the rest (no job overtakes
 * an older one of the same user).
 */
int limits_admit (const struct limits_rule *r, struct limits_use use, const int64_t *want,
                  int n);

/* The GiB a job's directives ask for: each jobdw and create_persistent
 * capacity rounded up to whole GiB, times the job's node count for xfs,
 * gfs2 and raw (their capacity is per compute node), once for lustre (the
 * file system's total).  nnodes < 1 counts one node.  0, or -1 with a
 * parse error.
 */
int limits_job_gib (json_t *directives, int64_t nnodes, int64_t *gib, dws_error_t *err);

/* For Python (cffi): query {"limits": table|null, "uid": N, "name": S|null,
 * "use": {"gib", "jobs"}, "want": [GiB, ...]} answers {"verdict":
 * "go"|"wait"|"never" (for want[0]), "why": S, "admit": N (of want)}.
 */
char *dws_limits_decide_json (const char *query_json, dws_error_t *err);

#endif /* !DWS_ENGINE_LIMITS_H */
