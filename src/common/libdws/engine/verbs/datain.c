/* datain.c - a pre-staged job's DataIn bounded by its progress.
 *
 * A copy-in before the nodes may take hours and that is fine while it
 * moves; a fixed bound would kill a large copy that advances, and no
 * bound would keep a stuck one's storage forever (flux-coral2 #440:
 * "extend if it's making progress").  So while a pre-staged job is in
 * DataIn and rabbit.datain_stall_timeout is set, its NnfDataMovements
 * are read every quarter of that bound (at most 30 s): nnf-dm writes
 * each one's dcp progress in status.commandStatus (progress %, and the
 * bytes copied where it counts them).  The sums of those, of the
 * movements Finished and of the movements themselves are facts on the
 * job; when one grows the job has moved.  The decider fails the job when
 * it has not moved for the bound, and has its progress read again
 * otherwise.  A read that fails records nothing: the job has not been
 * seen to move, so a list that keeps failing ends it too.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <stdio.h>
#include <string.h>

#include "datain.h"
#include "engine/advance.h"
#include "engine/shapes/act.h"
#include "engine/shapes/answer.h"
#include "engine/shapes/token.h"
#include "util/jsonio.h"

/* The label nnf-sos puts on a data movement: the state that made it. */
#define LABEL_STATE "nnf.cray.hpe.com/teardown_state"

double datain_read_every (double stall)
{
    double every = stall / 4;
    return every < 0.1 ? 0.1 : every > 30 ? 30 : every;
}

void datain_begin (struct dws_engine *e, struct job *job)
{
    memset (&job->datain, 0, sizeof (job->datain));
    job->datain.since = e->now;
    job->datain.moved_at = e->now;
    if (e->cfg.datain_stall_timeout > 0)
        act_timer_start (e, job, T_DATAIN, datain_read_every (e->cfg.datain_stall_timeout));
}

void datain_read (struct dws_engine *e, struct job *job, const struct step *st)
{
    char sel[160], token[TOKEN_SIZE];
    (void)st;
    snprintf (sel, sizeof (sel), WORKFLOW_LABEL "=%s," LABEL_STATE "=DataIn", job->name);
    act_k8s_list (e, "NnfDataMovement", sel, token_for (token, sizeof (token), TOK_DATAIN, job));
    job->asking |= (uint64_t)1 << TOK_DATAIN; /* until it is answered */
}

static int64_t int_of (json_t *v)
{
    if (json_is_integer (v))
        return json_integer_value (v);
    if (json_is_real (v))
        return (int64_t)json_real_value (v);
    return 0;
}

void datain_on_list (struct dws_engine *e, enum token_kind kind, struct job *job, json_t *event)
{
    (void)kind;
    struct k8s_answer a = answer_of (event);
    job->asking &= ~((uint64_t)1 << TOK_DATAIN);
    if (a.ok) {
        struct datain_facts now = job->datain;
        json_t *items = json_object_get (a.obj, "items");
        int64_t least = 101;
        size_t i;
        json_t *dm;
        now.dms = now.finished = now.percent = now.bytes = 0;
        json_array_foreach (items, i, dm) {
            json_t *st = json_object_get (dm, "status");
            json_t *cs = json_object_get (st, "commandStatus");
            const char *state = json_string_value (json_object_get (st, "state"));
            bool done = state && !strcmp (state, "Finished");
            int64_t pct = done ? 100 : int_of (json_object_get (cs, "progress"));
            now.dms++;
            now.finished += done;
            now.percent += pct;
            now.bytes += int_of (json_object_get (cs, "bytes"));
            const char *msg = json_string_value (json_object_get (cs, "lastMessage"));
            if (!done && pct < least) {
                least = pct;
                snprintf (now.last, sizeof (now.last), "%s", msg ? msg : "");
            }
        }
        if (now.dms > job->datain.dms || now.finished > job->datain.finished
            || now.percent > job->datain.percent || now.bytes > job->datain.bytes)
            now.moved_at = e->now;
        now.unread[0] = '\0';
        job->datain = now;
        act_record (e, job);
    }
    else /* nothing is recorded as moved: a list that keeps failing ends it too */
        snprintf (job->datain.unread, sizeof (job->datain.unread), "%s", answer_message (event));
    advance_mark (e, job, NEWS_LOOK); /* judged: stalled, or read again later */
}

void datain_watch (struct dws_engine *e, struct job *job, const struct step *st)
{
    (void)st;
    act_timer_start (e, job, T_DATAIN, datain_read_every (e->cfg.datain_stall_timeout));
}

void datain_stalled (struct dws_engine *e, struct job *job, const struct step *st)
{
    (void)st;
    const struct datain_facts *d = &job->datain;
    char why[DWS_ERROR_TEXT_MAX];
    snprintf (why, sizeof (why),
              NOTE_PREFIX "DataIn made no progress for %.1f s (rabbit.datain_stall_timeout"
              " %g s; %lld of %lld data movements finished)%s%.150s%s%.100s",
              e->now - d->moved_at, e->cfg.datain_stall_timeout, (long long)d->finished,
              (long long)d->dms, d->last[0] ? ": " : "", d->last,
              d->unread[0] ? "; its NnfDataMovements could not be listed: " : "", d->unread);
    struct told failed = {.type = "dws-timeout", .why = why};
    advance_tell (e, job, NEWS_FAILED, &failed); /* as workflow_fail_job, a layer up */
}

json_t *datain_view (const struct dws_engine *e, const struct job *job)
{
    const struct datain_facts *d = &job->datain;
    if (d->since <= 0)
        return NULL;
    double percent = d->dms > 0 ? (double)d->percent / (double)d->dms : 0;
    json_t *o = json_pack ("{s:f s:f s:I s:I}", "percent", percent, "moved", e->now - d->moved_at,
                           "dms", (json_int_t)d->dms, "finished", (json_int_t)d->finished);
    /* as fast as so far: the time taken for what moved, for what is left */
    if (o && percent > 0 && percent < 100)
        json_object_set_new (o, "left", json_real ((e->now - d->since) * (100 - percent) / percent));
    if (o && d->last[0])
        json_object_set_new (o, "last", json_string (d->last));
    if (o && d->unread[0])
        json_object_set_new (o, "unread", json_string (d->unread));
    return o;
}
