/* advance.h - a job moved on by an input: the decider asked (decide.h),
 * its steps carried out by the one table of verbs (verbs.c).
 *
 * An input (a request, a watch event, a timer, an answer) records its
 * facts on the job and its news (advance_job, or advance_mark for a pass
 * over many jobs); the job is then run to a fixed point: decide () takes
 * one news at a time and each step goes to its verb, until no news is
 * left.  No other file calls decide () or tests a step's kind: a new
 * step is a line of decide.h's DWS_ENGINE_STEPS and a case of decide.c.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_ENGINE_ADVANCE_H
#define DWS_ENGINE_ADVANCE_H

#include "decide.h"
#include "util/error.h"

/* What an input knows that is not the job's and that the verb of its
 * step needs: an answer's text, what a read found.  Borrowed unless
 * said; a verb that takes an owned field sets it to NULL.
 */
struct input {
    const char *type;        /* a failure's exception type ("exception" if NULL) */
    const char *why;         /* a failure's note, or a log line of the step */
    const dws_error_t *err;  /* STEP_SEND_RESOURCES: why the job cannot have them */
    json_t *obj;             /* the Workflow an answer carries */
    json_t *event;           /* the answer itself (job-info: the R) */
    json_t *items;           /* what a read listed (ClientMounts) */
    json_t *nodes;           /* the culprits a timeout's read found */
    char *failed;            /* owned: every host given up, with them */
    json_t *annotations;     /* owned: written with the state asked for */
    const char *token;       /* the workflow token read */
    json_t *msgid;           /* the request the step answers */
    char *hosts;             /* owned: the job's hosts (RFC 29), from R */
    bool run_started;        /* STEP_BEGIN_EPILOG: the job ran */
    const char *log;         /* a line the step logs first (its verb's level) */
};

typedef void (*advance_verb_f) (struct dws_engine *e, struct job *job, const struct step *st,
                                struct input *in);
typedef void (*advance_done_f) (struct dws_engine *e, struct job *job, enum wf_state s);

/* The one table (verbs.c): what each step does, and what a state's
 * completion records before the step that follows it.
 */
struct verbs {
    advance_done_f done;
    advance_verb_f step[STEP_COUNT];
};

/* Record `news` on the job and run it to its fixed point: `in` (may be
 * NULL) goes with the step that answers `news`; its owned fields left by
 * the verb are freed.  The job may be gone when it returns.
 */
void advance_job (struct dws_engine *e, struct job *job, enum news news, struct input *in);

/* Record `news` on the job, to be taken at the event's end
 * (advance_due): a pass that finds many jobs concerned marks them.
 */
void advance_mark (struct dws_engine *e, struct job *job, enum news news);

/* Run every job marked in this event to its fixed point, oldest first
 * (a Flux job ID grows with its submission time).
 */
void advance_due (struct dws_engine *e);

#endif /* !DWS_ENGINE_ADVANCE_H */
