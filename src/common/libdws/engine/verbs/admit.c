/* admit.c - the user limits applied to the job table (admit.h).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admit.h"
#include "engine/advance.h"
#include "engine/decider/phase.h"
#include "engine/job.h"
#include "engine/limits.h"
#include "engine/shapes/act.h"
#include "engine/shapes/psi.h"
#include "parse/breakdown.h"
#include "wire/jobwire.h"
#include "workflow.h"

/* The GiB the job asks for, read once from its directives (0 when they
 * cannot be read: the create refuses those). */
static int64_t job_gib (struct job *job)
{
    if (job->gib < 0 && job->directives) {
        int64_t nnodes = job->resources ? dws_jobspec_node_count (job->resources, NULL) : 1;
        int64_t gib = 0;
        if (limits_job_gib (job->directives, nnodes, &gib, NULL) < 0)
            gib = 0;
        job->gib = gib;
    }
    return job->gib < 0 ? 0 : job->gib;
}

static bool same_bank (const char *a, const char *b)
{
    return a && b && !strcmp (a, b);
}

/* Does job j count in who's scope? */
static bool in_scope (const struct job *j, enum limits_scope scope,
                      const struct limits_who *who)
{
    switch (scope) {
        case LIMITS_USER:
            return j->userid == who->uid;
        case LIMITS_BANK:
            return same_bank (j->bank, who->bank);
        case LIMITS_BANK_USER:
            return j->userid == who->uid && same_bank (j->bank, who->bank);
        case LIMITS_NSCOPES:
            break;
    }
    return false;
}

/* What who's scope holds now, but job `except`: its jobs with a Workflow
 * (or its create sent), their GiB until Teardown is done, and for a user
 * the persistent storage they own (a PSI has no bank: it counts against
 * its owner alone).
 */
static struct limits_use use_of (struct dws_engine *e, enum limits_scope scope,
                                 const struct limits_who *who, const struct job *except)
{
    struct limits_use u = {0, 0};
    const char *name;
    json_t *psi;
    if (scope == LIMITS_USER)
        json_object_foreach (psi_all (e), name, psi) {
            json_t *owner = json_object_get (psi, "userid");
            /* a PSI a Workflow still owns is counted by that job */
            if (json_is_integer (owner) && json_integer_value (owner) == who->uid
                && !json_is_true (json_object_get (psi, "creating")))
                u.gib += json_integer_value (json_object_get (psi, "gib"));
        }
    for (size_t b = 0; b < e->nbuckets; b++)
        for (struct job *j = e->table[b]; j; j = j->next) {
            if (j == except || !in_scope (j, scope, who) || j->phase == PHASE_NONE
                || j->phase == PHASE_LIMITED)
                continue;
            u.jobs++;
            if (j->phase != PHASE_TORN_DOWN && j->phase != PHASE_DELETING)
                u.gib += job_gib (j);
        }
    return u;
}

/* What each of the job's scopes holds now, but the job. */
static struct limits_held held_by (struct dws_engine *e, const struct job *job)
{
    struct limits_held h;
    struct limits_who who = {job->userid, job->username, job->bank};
    memset (&h, 0, sizeof (h));
    for (int s = 0; s < LIMITS_NSCOPES; s++)
        if (s == LIMITS_USER || job->bank)
            h.use[s] = use_of (e, (enum limits_scope)s, &who, job);
    return h;
}

static void dependency (struct dws_engine *e, struct job *job, bool add)
{
    act_dependency (e, job, DWS_JOBWIRE_LIMIT_DEPENDENCY, add, NULL);
}

int admit_create (struct dws_engine *e, struct job *job, dws_error_t *err)
{
    char why[DWS_ERROR_TEXT_MAX];
    if (!e->cfg.limits || job->phase == PHASE_LIMITED)
        return 0; /* a waiting job is counted by the pass */
    struct limits_held held = held_by (e, job);
    struct limits_who who = {job->userid, job->username, job->bank};
    bool listed = psi_synced (e);
    if (limits_job_verdict (e->cfg.limits, &who, &held, listed, job_gib (job), why, sizeof (why))
        == LIMITS_NEVER)
        return dws_errorf (err, "%s", why);
    job->lim.held = held; /* the decider says whether it goes (NEWS_CREATE) */
    job->lim.behind = listed ? 0 : -1;
    return 0;
}

/* Why the job waits, from what admit.c counted (its verdict the
 * decider's): false when its limits would let it go (it waits behind an
 * older job of its user, whose reason says why).
 */
static bool waits_why (struct dws_engine *e, struct job *job, char *why, size_t size)
{
    struct limits_who who = {job->userid, job->username, job->bank};
    return limits_job_verdict (e->cfg.limits, &who, &job->lim.held, job->lim.behind >= 0,
                               job_gib (job), why, size)
           == LIMITS_WAIT;
}

/* STEP_WAIT_LIMIT: it waits, with no Workflow, for its user's use to
 * fall: its dws.create is answered now (its Workflow is created once its
 * user's use allows).
 */
void admit_wait_limit (struct dws_engine *e, struct job *job, const struct step *st)
{
    char why[DWS_ERROR_TEXT_MAX];
    size_t i;
    json_t *msgid;
    (void)st;
    if (!waits_why (e, job, why, sizeof (why)))
        snprintf (why, sizeof (why), "its user's limits");
    free (job->lim.why);
    job->lim.why = strdup (why);
    act_log (e, "info", "%s: waits for its user's rabbit storage: %s", job->name, why);
    if (!(job->deps & JOB_DEP_LIMIT)) /* not held already (found so after a restart) */
        dependency (e, job, true);
    job->deps |= JOB_DEP_LIMIT;
    /* after dws-limit is added: the answer lets the plugin remove dws-create */
    json_array_foreach (job->create_msgids, i, msgid)
        act_respond_ok (e, msgid);
    json_array_clear (job->create_msgids);
    act_record (e, job);
}

/* STEP_STILL_WAITING: it still waits; what its user holds changed. */
void admit_still_waiting (struct dws_engine *e, struct job *job, const struct step *st)
{
    char why[DWS_ERROR_TEXT_MAX];
    (void)st;
    if (!waits_why (e, job, why, sizeof (why)))
        return;
    free (job->lim.why);
    job->lim.why = strdup (why);
    act_record (e, job);
}

/* STEP_ADMIT_GO: its user's use allows it now: its Workflow is created. */
void admit_go (struct dws_engine *e, struct job *job, const struct step *st)
{
    act_log (e, "info", "%s: its user's rabbit storage allows it now; creating its"
             " Workflow", job->name);
    free (job->lim.why);
    job->lim.why = NULL;
    workflow_send_create (e, job, st);
}

static int by_id (const void *a, const void *b)
{
    const struct job *x = *(struct job *const *)a, *y = *(struct job *const *)b;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* limits_turns' count of a scope, from the job table. */
static struct limits_use table_use (void *arg, enum limits_scope scope,
                                    const struct limits_who *who)
{
    return use_of (arg, scope, who, NULL);
}

static bool same_held (const struct limits_held *a, const struct limits_held *b)
{
    for (int s = 0; s < LIMITS_NSCOPES; s++)
        if (a->use[s].gib != b->use[s].gib || a->use[s].jobs != b->use[s].jobs)
            return false;
    return true;
}

void admit_pass (struct dws_engine *e)
{
    if (e->phase_jobs[PHASE_LIMITED] == 0 || !e->synced || e->refused || !psi_synced (e))
        return;
    size_t n = 0, cap = (size_t)e->phase_jobs[PHASE_LIMITED];
    struct job **waiting = calloc (cap, sizeof (*waiting));
    struct limits_turn *turns = calloc (cap, sizeof (*turns));
    if (!waiting || !turns) {
        free (waiting);
        free (turns);
        return;
    }
    for (size_t b = 0; b < e->nbuckets; b++)
        for (struct job *j = e->table[b]; j; j = j->next)
            if (j->phase == PHASE_LIMITED && n < cap)
                waiting[n++] = j;
    qsort (waiting, n, sizeof (*waiting), by_id); /* submission order */
    for (size_t i = 0; i < n; i++) {
        turns[i].who = (struct limits_who){waiting[i]->userid, waiting[i]->username,
                                           waiting[i]->bank};
        turns[i].want = job_gib (waiting[i]);
    }
    limits_turns (e->cfg.limits, turns, n, table_use, e);
    for (size_t i = 0; i < n; i++) {
        struct job *job = waiting[i];
        /* the same count and the same limits: the same answer */
        bool same = !e->limits_changed && same_held (&job->lim.held, &turns[i].held)
                    && job->lim.behind == turns[i].behind;
        job->lim.held = turns[i].held;
        job->lim.behind = turns[i].behind;
        if (!same) {
            job->lim.recounted = e->events;
            advance_mark (e, job, NEWS_LOOK);
        }
    }
    e->limits_changed = false;
    free (turns);
    free (waiting);
}

void admit_shown (struct job *job, enum limit_shown how)
{
    if (how == LIMIT_SHOWN_LISTED || job->lim.shown == LIMIT_SHOWN_NOT)
        job->lim.shown = how;
}

void admit_created (struct dws_engine *e, struct job *job)
{
    /* JOB_DEP_LIMIT stays: a reloaded plugin may have missed the removal */
    job->lim.shown = LIMIT_SHOWN_NOT;
    if (job->deps & JOB_DEP_LIMIT)
        dependency (e, job, false);
}
