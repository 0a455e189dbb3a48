/* why.h - what moved a job: each step the decider chose, with the rule
 * that chose it (rules.h), recorded on the job and counted in the engine.
 *
 * advance.c hands every step it carries out to why_step () before its
 * verb runs.  This file alone writes the job's why fields (job->why and
 * the rules that asked each state, raised its exception, made it wait)
 * and the engine's rule counts; jobview.c shows them in the job's record
 * (why_view) and `flux dws job` reads them in words (rule_why).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_ENGINE_WHY_H
#define DWS_ENGINE_WHY_H

#include "decide.h"

/* The steps a job's record keeps, the latest (older ones are counted as
 * dropped): a job takes 20 to 40 on its way, a restart or a fault a few
 * more each.
 */
#define WHY_MAX_STEPS 64

/* Rule r's word ("teardown-wanted"), NULL for RULE_NONE or out of range,
 * and its words for people (rules.h).
 */
const char *why_rule_name (enum rule r);
const char *why_rule_text (enum rule r);

/* Record step st (chosen by st->rule) on the job; `was` is the job's
 * phase when it was chosen, `in` the state it asked for then.
 */
void why_step (struct dws_engine *e, struct job *job, const struct step *st, enum job_phase was,
               enum wf_state in);

/* The steps recorded on the job so far, dropped ones too: a record is
 * written again when it grew (jobview.c).
 */
int64_t why_count (const struct job *job);

/* The job's why, as its record shows it: {"t0": its first step's time,
 * "steps": ["MS RULE STEP IN FACTS" a step], "dropped": n, "states":
 * {state: rule}, "prestage": rule, "release": rule, "exception": rule,
 * "waiting": rule}, or NULL when it took no step.  Its steps are the
 * job's own array: hand it out, do not keep it.
 */
json_t *why_view (const struct dws_engine *e, const struct job *job);

#endif /* !DWS_ENGINE_WHY_H */
