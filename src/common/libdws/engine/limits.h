/* limits.h - rabbit storage per user and per bank: the decisions, as pure
 * functions.
 *
 * [rabbit.limits] (config/userlimits.h) caps what one user holds at once:
 * max_user_gib, the GiB of rabbit storage, and max_user_jobs, the rabbit
 * jobs past dws-create (a Workflow made, running or holding storage); the
 * same for a flux-accounting bank as a whole (max_bank_gib,
 * max_bank_jobs) and for each user within a bank (a bank's max_user_gib,
 * max_user_jobs).
 * What counts (admit.c gathers it):
 *   - a job counts for max_user_jobs from its Workflow's create until the
 *     Workflow is deleted;
 *   - its GiB (limits_job_gib: what its #DW directives ask for) count from
 *     the create until Teardown is done;
 *   - a PersistentStorageInstance counts its directive's GiB against its
 *     owner (spec.userID) while it exists (a PSI has no bank);
 *   - a job counts toward its bank's limits (and its user's within it)
 *     only where it names a bank.
 * A job that alone asks for more than a GiB limit is refused at
 * dws.create; one over what a scope holds now waits (phase
 * "waiting-limit", the dws-limit dependency) and goes, in submission
 * order, once the other jobs free enough.  Nothing here reads the job
 * table: admit.c feeds these functions.
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

/* The scopes a job is weighed in: its user (all the user's jobs), and
 * where it names a bank, the bank as a whole and its user within the bank
 * (the user's jobs charged to it).
 */
enum limits_scope {
    LIMITS_USER = 0,
    LIMITS_BANK,
    LIMITS_BANK_USER,
    LIMITS_NSCOPES,
};

/* A scope's limits; 0 = none. */
struct limits_rule {
    int64_t max_gib;
    int64_t max_jobs;
};

/* What a scope holds now. */
struct limits_use {
    int64_t gib;
    int64_t jobs;
};

/* Whose a job is: its owner (uid, and name when known) and its bank
 * (flux-accounting's, or NULL: none). */
struct limits_who {
    int64_t uid;
    const char *name;
    const char *bank;
};

/* What each of a job's scopes holds (a bank's two unused without one). */
struct limits_held {
    struct limits_use use[LIMITS_NSCOPES];
};

/* A job's held use marked not counted (the user's jobs -1): it has no
 * limits to weigh, or its create was sent (a Workflow created again is
 * not held). */
void limits_held_uncount (struct limits_held *held);

/* A job's limits in each of its scopes. */
struct limits_rules {
    struct limits_rule rule[LIMITS_NSCOPES];
};

enum limits_verdict {
    LIMITS_GO = 0, /* within every limit with what the scopes hold */
    LIMITS_WAIT,   /* over a limit with what a scope holds: wait */
    LIMITS_NEVER,  /* over a GiB limit alone: refuse */
};

/* The limits of a job of `who` from the normalised limits table (NULL: no
 * limits).  The user's: the top level's max_user_gib/max_user_jobs, which
 * a user's table (by name first, then by decimal uid) overrides key by
 * key.  The bank's: its table's max_bank_gib/max_bank_jobs, else the top
 * level's.  The user's within the bank: its table's max_user_gib and
 * max_user_jobs.  No bank: no bank limits.
 */
struct limits_rules limits_rules (json_t *limits, const struct limits_who *who);

/* May a job of `who` asking for `want` GiB go on while its scopes hold
 * `held`?  WAIT and NEVER write why into why[size] and the scope that
 * says no into *scope (NULL: not wanted):
 *   NEVER "Requested a total of 4096 GiB of rabbit storage but max_user_gib
 *          is 2048 GiB (user alice)" ("(bank physics)", "(user alice in bank
 *          physics)")
 *   WAIT  "max_user_gib 2048: user alice holds 1900 GiB in 3 jobs"
 *         "max_bank_jobs 2: bank physics holds 200 GiB in 2 jobs"
 *         "max_user_gib 1024: user alice holds 1000 GiB in 2 jobs in bank physics"
 * A refusal in any scope comes before a wait; the user's scope is weighed
 * first, then the user's within the bank, then the bank's.
 */
enum limits_verdict limits_check (const struct limits_rules *r, const struct limits_held *held,
                                  int64_t want, const struct limits_who *who,
                                  enum limits_scope *scope, char *why, size_t size);

/* The verdict on a job of `who` asking for `want` GiB while its scopes
 * hold `held`: limits_check () with its rules from the normalised limits
 * table (NULL: GO).  listed false: the persistent storage is not listed
 * yet, so a job that would go waits.  The decider's question (decide.c)
 * and the reason a waiting job shows (admit.c).
 */
enum limits_verdict limits_job_verdict (json_t *limits, const struct limits_who *who,
                                        const struct limits_held *held, bool listed,
                                        int64_t want, char *why, size_t size);

/* One waiting job's turn (limits_turns): who, and the GiB it asks for;
 * out: what its scopes hold when its turn comes (the older jobs that go
 * added), how many older waiting jobs that stay hold it back, and whether
 * it goes now.
 */
struct limits_turn {
    struct limits_who who;
    int64_t want;
    struct limits_held held;
    int64_t behind;
    bool go;
};

/* What a scope of `who` holds now, from the caller's table. */
typedef struct limits_use (*limits_use_f) (void *arg, enum limits_scope scope,
                                           const struct limits_who *who);

/* The turns of n waiting jobs, in submission order: each goes while it
 * fits in every scope with what they hold (use_of, then the older jobs
 * that went); one that does not stops the younger jobs of the scope that
 * said no (no job overtakes an older one of the same user, bank or user
 * within a bank), and those stop the younger ones of their scopes in turn.
 */
void limits_turns (json_t *limits, struct limits_turn *turns, size_t n, limits_use_f use_of,
                   void *arg);

/* The GiB a job's directives ask for: each jobdw and create_persistent
 * capacity rounded up to whole GiB, times the job's node count for xfs,
 * gfs2 and raw (their capacity is per compute node), once for lustre (the
 * file system's total).  nnodes < 1 counts one node.  0, or -1 with a
 * parse error.
 */
int limits_job_gib (json_t *directives, int64_t nnodes, int64_t *gib, dws_error_t *err);

/* The same GiB by storage type: {"xfs": G, "lustre": G, ...} (the
 * directive's type; types asking for none left out), or NULL with a parse
 * error. */
json_t *limits_job_gib_by_type (json_t *directives, int64_t nnodes, dws_error_t *err);

/* For Python (cffi): query {"limits": table|null, "uid": N, "name": S|null,
 * "bank": S|null, "use": {"gib", "jobs"}, "bank_use": {"gib", "jobs"},
 * "bank_user_use": {"gib", "jobs"}, "want": [GiB, ...]} (the uses: what the
 * user, the bank and the user within it hold; absent: nothing) answers
 * {"verdict": "go"|"wait"|"never" (for want[0]), "why": S, "admit": N (how
 * many of want, one job of the same user and bank each, go now)}.
 */
char *dws_limits_decide_json (const char *query_json, dws_error_t *err);

#endif /* !DWS_ENGINE_LIMITS_H */
