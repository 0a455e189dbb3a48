/* advance.h - a job moved on by an input: the decider asked (decide.h),
 * its steps carried out by the one table of verbs (verbtable.c).
 *
 * An input (a request, a watch event, a timer, an answer) records its
 * facts on the job and its news, and marks it (advance_mark, advance_tell);
 * at the end of the input each marked job is run to a fixed point
 * (advance_due): decide () takes one news at a time and each step goes to
 * its verb, until no news is left.  A verb only records and marks too.
 * No other file calls decide () or tests a step's kind: a new step is a
 * line of decide.h's DWS_ENGINE_STEPS and a case of decide.c.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_ENGINE_ADVANCE_H
#define DWS_ENGINE_ADVANCE_H

#include "engine/decider/decide.h"
#include "job.h"

typedef void (*advance_verb_f) (struct dws_engine *e, struct job *job, const struct step *st);
typedef void (*advance_done_f) (struct dws_engine *e, struct job *job, enum wf_state s);

/* The one table (verbtable.c): what each step does, and what a state's
 * completion records before the step that follows it.
 */
struct verbs {
    advance_done_f done;
    advance_verb_f step[STEP_COUNT];
};

/* Record `news` on the job and mark it due: advance_due () runs it.  An
 * input calls it, and so does a verb, whose own job's loop takes the
 * news next.
 */
void advance_mark (struct dws_engine *e, struct job *job, enum news news);

/* advance_mark () with what the input told (`what`, the caller's: its
 * strings and JSON are copied; `failed`, `hosts` and `annotations` are
 * taken and set to NULL there), kept on the job for the step that
 * answers `news`.
 */
void advance_tell (struct dws_engine *e, struct job *job, enum news news, struct told *what);

/* The order advance_due () runs the marked jobs in. */
enum advance_order {
    ADVANCE_AS_MARKED,    /* an input's: the order it came to them (a list's) */
    ADVANCE_OLDEST_FIRST, /* a pass over the job table's: by ID (a Flux job ID
                           * grows with its submission time) */
};

/* Run every job marked since the last call to its fixed point, in
 * `order`: the one place the decider is asked and the verbs are carried
 * out.  Called at the end of each input and after the event's passes,
 * never by a verb: the jobs a verb marks are run after its own, in the
 * next round.
 */
void advance_due (struct dws_engine *e, enum advance_order order);

#endif /* !DWS_ENGINE_ADVANCE_H */
