/* admit.h - the user and bank limits applied to the job table (limits.h
 * decides).
 *
 * A job about to get its Workflow (dws.create, or its jobspec read again
 * after a restart) passes admit_create: alone over max_user_gib it is
 * refused; else what its user holds is recorded on it, and the decider
 * (decide.c, limits_job_verdict) says whether it goes on or waits in phase
 * "waiting-limit" with no Workflow, the jobtap plugin asked to hold it
 * with the dws-limit dependency (job-manager.dws.dependency, jobwire.h).
 * After every event admit_pass records on each waiting job what its
 * scopes (its user, its bank, its user within the bank) hold when its turn
 * comes (in submission order: the older ones that fit go first, and one
 * that stays holds back the younger ones of the scope that holds it:
 * limits_turns) and marks it; the decider lets it go, or writes its reason
 * again with what they hold now.  Their
 * Workflows are created, and dws-limit is removed once the create has
 * answered (admit_created), so that a restart before that finds the job
 * still held and weighs it again.  The job manager's list read after a
 * restart says which jobs hold dws-limit (request.c records it: limit_dep):
 * one that goes at once (its user's use fell while no service watched, or
 * the limits were raised) has it removed once its create answers, one whose
 * Workflow the old service made (and went away before the answer) at once;
 * one that still waits is not held a second time.  The removal is sent
 * again when a reloaded jobtap plugin asks for the job's create again
 * (it may have reached no plugin).
 *
 * What a scope holds is read from the job table each time: its jobs with
 * a Workflow (or its create sent), their GiB until Teardown is done, plus,
 * for a user, the persistent storage the user owns (psi.c's views: a PSI whose Workflow
 * still owns it is counted by that Workflow's create_persistent).  A
 * restarted service rebuilds it from the Workflow and PSI lists before any
 * job is let go: waiting jobs come back through the orphans (request.c),
 * after the Workflow list, and none goes before the PSI list has come.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_ENGINE_ADMIT_H
#define DWS_ENGINE_ADMIT_H

#include "engine/advance.h"
#include "engine/state.h"

/* A dws.create (or a job's Workflow to be created again after a
 * restart): record what its user holds (the decider says whether it goes
 * or waits, NEWS_CREATE); -1 when it asks alone for more than its user
 * may hold, the message in err (the caller answers or fails the job as
 * for a per-job maximum).
 */
int admit_create (struct dws_engine *e, struct job *job, dws_error_t *err);

/* After an event: record on each waiting job what its user holds when its
 * turn comes, and, when that changed, look at it (NEWS_LOOK: the decider
 * goes by that count in this event alone, job->lim.recounted).
 */
void admit_pass (struct dws_engine *e);

/* The Workflow's create answered (or its Workflow was found after a
 * restart, or a reloaded plugin asked for the create again): release the
 * dws-limit dependency if the job held it (a repeat is harmless: the
 * plugin answers a removal of what the job no longer holds). */
void admit_created (struct dws_engine *e, struct job *job);
/* What the job's dws-limit dependency was seen to show (request.c): held
 * in the job manager's list after a restart (LIMIT_SHOWN_LISTED), or
 * asked by a reloaded plugin's repeated dws.create (LIMIT_SHOWN_ASKED,
 * unless shown already): its removal, once its Workflow exists, is
 * logged or sent again. */
void admit_shown (struct job *job, enum limit_shown how);

/* STEP_WAIT_LIMIT, STEP_STILL_WAITING, STEP_ADMIT_GO (verbtable.c's table). */
void admit_wait_limit (struct dws_engine *e, struct job *job, const struct step *st);
void admit_still_waiting (struct dws_engine *e, struct job *job, const struct step *st);
void admit_go (struct dws_engine *e, struct job *job, const struct step *st);

#endif /* !DWS_ENGINE_ADMIT_H */
