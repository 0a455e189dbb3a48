/* advance.c - the one call site of the decider (advance.h).  (Not
 * `advance`: the C library has a function of that name, regexp.h's.)
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <stdlib.h>

#include "advance.h"
#include "engine/decider/phase.h"
#include "engine/decider/why.h"
#include "engine/shapes/act.h"
#include "job.h"

/* Steps one job may take in a run before it is left where it is: far
 * more than any chain of the decider's (a news is taken per step and a
 * verb records few), so reaching it means a verb that keeps recording
 * news, a bug: logged rather than looped on.
 */
#define ADVANCE_MAX_STEPS 256

/* Rounds of advance_due (): a round's steps mark other jobs (a verb that
 * ends one job's wait lets another go), which the next round runs; more
 * than this is a cycle, a bug.
 */
#define ADVANCE_MAX_ROUNDS 16

static void record (struct job *job, enum news news)
{
    if (news < NEWS_COUNT)
        job->news |= (uint64_t)1 << news;
}

void advance_mark (struct dws_engine *e, struct job *job, enum news news)
{
    record (job, news);
    if (job->id == e->running)
        return; /* its run takes it (and a run cut short is not run again) */
    if (e->ndue == e->due_cap) {
        size_t want = e->due_cap ? 2 * e->due_cap : 16;
        json_int_t *more = realloc (e->due, want * sizeof (*more));
        if (!more) {
            /* out of memory: its next input takes the news */
            act_log (e, "err", "%s: out of memory marking it due", job->name);
            return;
        }
        e->due = more;
        e->due_cap = want;
    }
    e->due[e->ndue++] = job->id;
}

void advance_tell (struct dws_engine *e, struct job *job, enum news news, struct told *what)
{
    if (job_tell (job, news, what) < 0) {
        act_log (e, "err", "%s: out of memory recording its news", job->name);
        return;
    }
    advance_mark (e, job, news);
}

/* The first thing told for `news`, taken off the job; the news is
 * recorded again while more was told for it (each is answered).
 */
static struct told *take_told (struct job *job, enum news news)
{
    struct told *t = job_told_take (job, news);
    for (struct told *o = job->told; t && o; o = o->next)
        if (o->news == news)
            record (job, news);
    return t;
}

/* Run the job to its fixed point.  The job may be gone when it returns. */
static void run (struct dws_engine *e, struct job *job)
{
    json_int_t id = job->id;
    e->running = id;
    for (int n = 0; job && decide_pending (job); n++) {
        if (n == ADVANCE_MAX_STEPS) {
            act_log (e, "err", "%s: still news after %d steps; left for the next input",
                     job->name, ADVANCE_MAX_STEPS);
            break;
        }
        enum job_phase was = job->phase;
        enum wf_state in = phase_desired (job);
        struct step st = decide (e, job);
        why_step (e, job, &st, was, in);
        struct told none = {0};
        struct told *said = take_told (job, st.news);
        st.said = said ? said : &none;
        if (st.done != WF_NONE)
            e->verbs->done (e, job, st.done);
        if (e->verbs->step[st.kind])
            e->verbs->step[st.kind](e, job, &st);
        job_told_free (said);
        job = job_lookup (e, id); /* a verb may have forgotten it */
    }
    e->running = -1;
}

static int by_id (const void *a, const void *b)
{
    json_int_t x = *(const json_int_t *)a, y = *(const json_int_t *)b;
    return x < y ? -1 : x > y;
}

void advance_due (struct dws_engine *e, enum advance_order order)
{
    /* a job's steps may mark others: take the list as it stands, again
     * until it stays empty */
    for (int round = 0; e->ndue > 0; round++) {
        if (round == ADVANCE_MAX_ROUNDS) {
            act_log (e, "err", "%zu jobs still marked after %d rounds; left for their next input",
                     e->ndue, ADVANCE_MAX_ROUNDS);
            e->ndue = 0;
            break;
        }
        json_int_t *due = e->due;
        size_t n = e->ndue;
        e->due = NULL;
        e->ndue = e->due_cap = 0;
        if (order == ADVANCE_OLDEST_FIRST)
            qsort (due, n, sizeof (*due), by_id);
        for (size_t i = 0; i < n; i++) {
            if (order == ADVANCE_OLDEST_FIRST && i > 0 && due[i] == due[i - 1])
                continue;
            struct job *job = job_lookup (e, due[i]);
            if (job && decide_pending (job))
                run (e, job);
        }
        free (due);
    }
}
