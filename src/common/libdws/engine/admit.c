/* admit.c - the user limits applied to the job table (admit.h).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "act.h"
#include "admit.h"
#include "advance.h"
#include "job.h"
#include "limits.h"
#include "parse/breakdown.h"
#include "phase.h"
#include "psi.h"
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

/* What user uid holds now, but job `except`. */
static struct limits_use use_of (struct dws_engine *e, int64_t uid, const struct job *except)
{
    struct limits_use u = {0, 0};
    const char *name;
    json_t *psi;
    json_object_foreach (psi_all (e), name, psi) {
        json_t *owner = json_object_get (psi, "userid");
        /* a PSI a Workflow still owns is counted by that job */
        if (json_is_integer (owner) && json_integer_value (owner) == uid
            && !json_is_true (json_object_get (psi, "creating")))
            u.gib += json_integer_value (json_object_get (psi, "gib"));
    }
    for (size_t b = 0; b < e->nbuckets; b++)
        for (struct job *j = e->table[b]; j; j = j->next) {
            if (j == except || j->userid != uid || j->phase == PHASE_NONE
                || j->phase == PHASE_LIMITED)
                continue;
            u.jobs++;
            if (j->phase != PHASE_TORN_DOWN && j->phase != PHASE_DELETING)
                u.gib += job_gib (j);
        }
    return u;
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
    struct limits_use use = use_of (e, job->userid, job);
    bool listed = psi_synced (e);
    if (limits_job_verdict (e->cfg.limits, job->userid, job->username, use, listed,
                            job_gib (job), why, sizeof (why))
        == LIMITS_NEVER)
        return dws_errorf (err, "%s", why);
    job->limit_use = use; /* the decider says whether it goes (NEWS_CREATE) */
    job->limit_behind = listed ? 0 : -1;
    return 0;
}

/* Why the job waits, from what admit.c counted (its verdict the
 * decider's): false when its limits would let it go (it waits behind an
 * older job of its user, whose reason says why).
 */
static bool waits_why (struct dws_engine *e, struct job *job, char *why, size_t size)
{
    return limits_job_verdict (e->cfg.limits, job->userid, job->username, job->limit_use,
                               job->limit_behind >= 0, job_gib (job), why, size)
           == LIMITS_WAIT;
}

/* STEP_WAIT_LIMIT: it waits, with no Workflow, for its user's use to
 * fall: its dws.create is answered now (its Workflow is created once its
 * user's use allows).
 */
void admit_wait (struct dws_engine *e, struct job *job, const struct step *st,
                 struct input *in)
{
    char why[DWS_ERROR_TEXT_MAX];
    size_t i;
    json_t *msgid;
    (void)st;
    (void)in;
    if (!waits_why (e, job, why, sizeof (why)))
        snprintf (why, sizeof (why), "its user's limits");
    free (job->limit_why);
    job->limit_why = strdup (why);
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

/* STEP_LIMIT_WHY: it still waits; what its user holds changed. */
void admit_still_waiting (struct dws_engine *e, struct job *job, const struct step *st,
                          struct input *in)
{
    char why[DWS_ERROR_TEXT_MAX];
    (void)st;
    (void)in;
    if (!waits_why (e, job, why, sizeof (why)))
        return;
    free (job->limit_why);
    job->limit_why = strdup (why);
    act_record (e, job);
}

/* STEP_ADMIT: its user's use allows it now: its Workflow is created. */
void admit_go (struct dws_engine *e, struct job *job, const struct step *st, struct input *in)
{
    act_log (e, "info", "%s: its user's rabbit storage allows it now; creating its"
             " Workflow", job->name);
    free (job->limit_why);
    job->limit_why = NULL;
    workflow_send_create (e, job, st, in);
}

static int by_id (const void *a, const void *b)
{
    const struct job *x = *(struct job *const *)a, *y = *(struct job *const *)b;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* The waiting jobs of one user, from waiting[from] on (sorted by user,
 * then id): record on each what its user holds when its turn comes (with
 * the older ones that fit, limits_admit) and how many older ones stay,
 * and mark it for the decider; returns where the next user's begin.
 */
static size_t pass_user (struct dws_engine *e, struct job **waiting, size_t from, size_t n)
{
    size_t to = from;
    int64_t uid = waiting[from]->userid;
    while (to < n && waiting[to]->userid == uid)
        to++;
    int64_t *want = calloc (to - from, sizeof (*want));
    if (!want)
        return to;
    for (size_t i = from; i < to; i++)
        want[i - from] = job_gib (waiting[i]);
    struct limits_rule r = limits_rule (e->cfg.limits, uid, waiting[from]->username);
    struct limits_use use = use_of (e, uid, NULL);
    int go = limits_admit (&r, use, want, (int)(to - from));
    for (size_t i = from; i < to; i++) {
        struct job *job = waiting[i];
        int64_t behind = i - from > (size_t)go ? (int64_t)(i - from) - go : 0;
        /* the same count and the same limits: the same answer */
        bool same = !e->limits_changed && job->limit_use.gib == use.gib
                    && job->limit_use.jobs == use.jobs && job->limit_behind == behind;
        job->limit_use = use;
        job->limit_behind = behind;
        if (i - from < (size_t)go) {
            use.gib += want[i - from];
            use.jobs++;
        }
        if (!same)
            advance_mark (e, job, NEWS_ROOM);
    }
    free (want);
    return to;
}

static int by_user_id (const void *a, const void *b)
{
    const struct job *x = *(struct job *const *)a, *y = *(struct job *const *)b;
    if (x->userid != y->userid)
        return x->userid < y->userid ? -1 : 1;
    return by_id (a, b);
}

void admit_pass (struct dws_engine *e)
{
    if (e->phase_jobs[PHASE_LIMITED] == 0 || !e->synced || e->refused || !psi_synced (e))
        return;
    size_t n = 0, cap = (size_t)e->phase_jobs[PHASE_LIMITED];
    struct job **waiting = calloc (cap, sizeof (*waiting));
    if (!waiting)
        return;
    for (size_t b = 0; b < e->nbuckets; b++)
        for (struct job *j = e->table[b]; j; j = j->next)
            if (j->phase == PHASE_LIMITED && n < cap)
                waiting[n++] = j;
    qsort (waiting, n, sizeof (*waiting), by_user_id);
    for (size_t i = 0; i < n;)
        i = pass_user (e, waiting, i, n);
    e->limits_changed = false;
    free (waiting);
}

void admit_created (struct dws_engine *e, struct job *job)
{
    /* JOB_DEP_LIMIT stays: a reloaded plugin may have missed the removal */
    if (job->deps & JOB_DEP_LIMIT)
        dependency (e, job, false);
}
