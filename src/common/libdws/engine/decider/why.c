/* why.c - what moved a job (why.h).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <stdio.h>
#include <string.h>

#include "engine/engine.h"
#include "engine/shapes/act.h"
#include "engine/shapes/wfstate.h"
#include "why.h"

/* --- the words -------------------------------------------------------------- */


static const struct {
    const char *name;
    const char *why;
} rules[RULE_COUNT] = {
    [RULE_NONE] = {NULL, NULL},
#define RULE_LOOK_ROW(name, guard, why) [RULE_##name] = {#name, why},
    DWS_ENGINE_LOOK_RULES (RULE_LOOK_ROW)
    DWS_ENGINE_PRESTAGE_RULES (RULE_LOOK_ROW)
#undef RULE_LOOK_ROW
#define RULE_ROW(name, why) [RULE_##name] = {#name, why},
    DWS_ENGINE_RULES (RULE_ROW)
#undef RULE_ROW
};

static char rule_words[RULE_COUNT][DECIDE_WORD_MAX];

/* The tables' words, made on first use (the engine runs on one thread;
 * the words are the same whoever makes them). */
static void words_make (void)
{
    static bool made;
    if (made)
        return;
    for (int r = 1; r < RULE_COUNT; r++)
        decide_word (rules[r].name, rule_words[r]);
    made = true;
}

const char *why_rule_name (enum rule r)
{
    if (r <= RULE_NONE || r >= RULE_COUNT)
        return NULL;
    words_make ();
    return rule_words[r];
}

const char *why_rule_text (enum rule r)
{
    return r > RULE_NONE && r < RULE_COUNT ? rules[r].why : NULL;
}

int dws_engine_rule_count (void)
{
    return RULE_COUNT - 1;
}

const char *dws_engine_rule_name (int i)
{
    return i >= 0 && i < RULE_COUNT - 1 ? why_rule_name ((enum rule)(i + 1)) : NULL;
}

const char *dws_engine_rule_why (int i)
{
    return i >= 0 && i < RULE_COUNT - 1 ? why_rule_text ((enum rule)(i + 1)) : NULL;
}

long long dws_engine_rule_fired (struct dws_engine *e, int i)
{
    return e && i >= 0 && i < RULE_COUNT - 1 ? e->rule_fired[i + 1] : -1;
}

void dws_engine_trace (struct dws_engine *e, int on)
{
    if (!e)
        return;
    if (on && !e->trace)
        e->trace = json_array ();
    else if (!on) {
        json_decref (e->trace);
        e->trace = NULL;
    }
}

json_t *dws_engine_take_trace (struct dws_engine *e)
{
    json_t *out = e && e->trace ? e->trace : json_array ();
    if (e && e->trace)
        e->trace = json_array ();
    return out;
}

char *dws_engine_take_trace_json (struct dws_engine *e, dws_error_t *err)
{
    json_t *t = dws_engine_take_trace (e);
    char *s = t ? json_dumps (t, JSON_COMPACT) : NULL;
    json_decref (t);
    if (!s)
        dws_errorf (err, "out of memory");
    return s;
}

/* --- a step recorded ----------------------------------------------------------- */

void why_step (struct dws_engine *e, struct job *job, const struct step *st, enum job_phase was,
               enum wf_state in)
{
    if (!decide_step_name (st))
        return; /* no step */
    words_make ();
    e->rule_fired[st->rule]++;
    if (st->look != RULE_NONE && st->look != st->rule)
        e->rule_fired[st->look]++; /* the look rule held: its family named the step */
    if (st->wing != RULE_NONE && st->wing != st->rule)
        e->rule_fired[st->wing]++; /* and pre-staging's rule under it */
    enum wf_state asks = decide_asks (st);
    if (asks != WF_NONE && st->rule != RULE_NONE)
        job->asked_by[asks] = st->rule;
    if (decide_fails (st) && job->failed_by == RULE_NONE)
        job->failed_by = st->rule; /* the first: what the exception says */
    if (decide_waits (st))
        job->waits_by = st->rule;
    if (decide_side (st) == DECIDE_SIDE_PRESTAGE)
        job->prestaged_by = st->rule;
    else if (decide_side (st) == DECIDE_SIDE_RELEASE)
        job->released_by = st->rule;
    char facts[160];
    decide_facts (job, st, was, facts, sizeof (facts));
    const char *step = decide_step_name (st);
    const char *rule = st->rule != RULE_NONE ? rule_words[st->rule] : "none";
    /* one line a step, "MS RULE STEP IN FACTS" (MS: since its first
     * step; IN: the state it asked for then, "-" for none): the record is
     * built and written at each of the job's events, and a line costs
     * the least to build, compare and write */
    if (!job->why)
        job->why_t0 = e->now; /* its steps' times count from its first */
    char line[320];
    int n = snprintf (line, sizeof (line), "%lld %s %s %s %s",
                      (long long)((e->now - job->why_t0) * 1000.0 + 0.5), rule, step,
                      in != WF_NONE ? wfstate_name (in) : "-", facts);
    /* ASCII of our own words: not checked again */
    json_t *entry = json_stringn_nocheck (line, n < 0 ? 0
                                                : (size_t)n < sizeof (line) ? (size_t)n
                                                                            : sizeof (line) - 1);
    if (e->trace && entry)
        json_array_append_new (e->trace,
                               json_pack ("{s:I s:s s:s s:s}", "id", job->id, "rule", rule, "step",
                                          step, "facts", facts));
    /* a Workflow seen anew is read at each watch event: counted and
     * traced, not kept (it moves nothing by itself; what it shows moves
     * the job by the rule that reads it next) */
    if (st->rule == RULE_SEEN_READ) {
        json_decref (entry);
        return;
    }
    if (!entry || (!job->why && !(job->why = json_array ()))) {
        json_decref (entry);
        return; /* out of memory: the step goes unrecorded, not undone */
    }
    if (json_array_size (job->why) >= WHY_MAX_STEPS) {
        json_array_remove (job->why, 0);
        job->why_dropped++;
    }
    json_array_append_new (job->why, entry);
    /* not act_record (): the input that brought the step marks its job's
     * record (a pass's step is written with its job's next event) */
}

int64_t why_count (const struct job *job)
{
    return job->why_dropped + (int64_t)json_array_size (job->why);
}

json_t *why_view (const struct dws_engine *e, const struct job *job)
{
    (void)e;
    if (!job->why)
        return NULL;
    words_make ();
    json_t *states = json_object ();
    for (int s = WF_PROPOSAL; s < WF_NSTATES; s++)
        if (job->asked_by[s] != RULE_NONE)
            json_object_set_new (states, wfstate_name ((enum wf_state)s),
                                 json_string (rule_words[job->asked_by[s]]));
    /* the steps themselves, not a copy: what is handed out is written
     * before the job's next step (a record compares why_count, not this) */
    json_t *o = json_pack ("{s:f s:O s:I s:o}", "t0", job->why_t0, "steps", job->why, "dropped",
                           (json_int_t)job->why_dropped, "states", states);
    if (o && job->prestaged_by != RULE_NONE)
        json_object_set_new (o, "prestage", json_string (rule_words[job->prestaged_by]));
    if (o && job->released_by != RULE_NONE)
        json_object_set_new (o, "release", json_string (rule_words[job->released_by]));
    if (o && job->failed_by != RULE_NONE)
        json_object_set_new (o, "exception", json_string (rule_words[job->failed_by]));
    if (o && job->waits_by != RULE_NONE && decide_waiting (job))
        json_object_set_new (o, "waiting", json_string (rule_words[job->waits_by]));
    return o;
}
