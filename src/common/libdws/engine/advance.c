/* advance.c - the one call site of the decider (advance.h).  (Not
 * `advance`: the C library has a function of that name, regexp.h's.)
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <stdlib.h>

#include "act.h"
#include "advance.h"
#include "job.h"

/* Steps one input may lead to before the job is left where it is: far
 * more than any chain of the decider's (a news is taken per step and a
 * verb records few), so reaching it means a verb that keeps recording
 * news, a bug: logged rather than looped on.
 */
#define ADVANCE_MAX_STEPS 256

/* Rounds of advance_due (): a round's steps mark jobs only through the
 * passes, which run before it, so one round is the rule.
 */
#define ADVANCE_MAX_ROUNDS 16

static void input_release (struct input *in)
{
    json_decref (in->annotations);
    in->annotations = NULL;
    free (in->failed);
    in->failed = NULL;
    free (in->hosts);
    in->hosts = NULL;
}

static void record (struct job *job, enum news news)
{
    if (news < NEWS_COUNT)
        job->news |= (uint64_t)1 << news;
}

void advance_job (struct dws_engine *e, struct job *job, enum news news, struct input *in)
{
    struct input none = {0};
    json_int_t id = job->id;
    record (job, news);
    for (int n = 0; job && decide_pending (job); n++) {
        if (n == ADVANCE_MAX_STEPS) {
            act_log (e, "err", "%s: still news after %d steps; left for the next input",
                     job->name, ADVANCE_MAX_STEPS);
            break;
        }
        struct step st = decide (e, job);
        struct input *with = in && st.news == news ? in : &none;
        if (with == in)
            in = NULL; /* its news is taken: one step has it */
        if (st.done != WF_NONE)
            e->verbs->done (e, job, st.done);
        if (e->verbs->step[st.kind])
            e->verbs->step[st.kind](e, job, &st, with);
        input_release (with);
        job = job_lookup (e, id); /* a verb may have forgotten it */
    }
    if (in)
        input_release (in);
}

void advance_mark (struct dws_engine *e, struct job *job, enum news news)
{
    record (job, news);
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

static int by_id (const void *a, const void *b)
{
    json_int_t x = *(const json_int_t *)a, y = *(const json_int_t *)b;
    return x < y ? -1 : x > y;
}

void advance_due (struct dws_engine *e)
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
        qsort (due, n, sizeof (*due), by_id);
        for (size_t i = 0; i < n; i++) {
            if (i > 0 && due[i] == due[i - 1])
                continue;
            struct job *job = job_lookup (e, due[i]);
            if (job && decide_pending (job))
                advance_job (e, job, NEWS_COUNT, NULL);
        }
        free (due);
    }
}
