/* prestage.h - storage set up and filled before a job's nodes
 * (prestage.c; doc/guide/prestage.rst).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_ENGINE_PRESTAGE_H
#define DWS_ENGINE_PRESTAGE_H

#include "engine/advance.h"
#include "engine/state.h"
#include "util/error.h"

/* Seconds before a pre-staged job's ssd is picked again (none was free,
 * or Fluxion could not be asked). */
#define PRESTAGE_RETRY 10.0
/* Seconds a job's choice waits, at most, for the graph and the instance's
 * nodes to be known (after a start), before it is made without them. */
#define PRESTAGE_KNOWN_WAIT 60.0

/* Record what decides whether the job is pre-staged (job->ps.weighed, from
 * its breakdowns, the rabbits and the jobs pre-staged now): the decider
 * chooses from it with what the job asked (dw_prestage) and
 * rabbit.prestage*.  While rabbit health does not know the graph and
 * the instance's nodes (after a start) only that is recorded
 * (weighed.unknown_since), for at most PRESTAGE_KNOWN_WAIT.
 */
void prestage_weigh (struct dws_engine *e, struct job *job, json_t *breakdowns);

/* The decider's choice: not pre-staged (quietly, or saying it asks for
 * more nodes than the instance has, or that the site's bound on what is
 * held ahead of nodes is reached), refused (it asked for it and cannot
 * be: its resource-update says why), or pre-staged; its Proposal's
 * outcome follows.
 */
void prestage_unfit (struct dws_engine *e, struct job *job, const struct step *st);
void prestage_no (struct dws_engine *e, struct job *job, const struct step *st);
void prestage_too_big (struct dws_engine *e, struct job *job, const struct step *st);
void prestage_full (struct dws_engine *e, struct job *job, const struct step *st);
void prestage_refuse (struct dws_engine *e, struct job *job, const struct step *st);
void prestage_yes (struct dws_engine *e, struct job *job, const struct step *st);

/* STEP_PRESTAGE_RECORD: write ANN_PRESTAGE (its answer: prestage_noted). */
void prestage_record (struct dws_engine *e, struct job *job, const struct step *st);

/* STEP_PRESTAGE_PICK: pick the ssd to hold and write it on the Workflow;
 * none free: wait (T_PRESTAGE) with the reason shown.
 */
void prestage_pick (struct dws_engine *e, struct job *job, const struct step *st);

/* Rabbit health had an input (a Storage, the graph, an ssd up again):
 * room may have come (e->room_gen moves), and the jobs waiting for it are
 * looked at (NEWS_LOOK) to pick again at the event's end, in the order
 * they were submitted. */
void prestage_room (struct dws_engine *e);

/* ANN_PRESTAGE was written: record what it says. */
void prestage_noted (struct dws_engine *e, struct job *job);

/* STEP_HOLD of a pre-staged job: hold its ssd down in Fluxion; once
 * applied, STEP_PRESTAGE_VERIFY. */
void prestage_hold (struct dws_engine *e, struct job *job, const struct step *st);

/* STEP_PRESTAGE_VERIFY: ask Fluxion which down vertices a job has. */
void prestage_verify (struct dws_engine *e, struct job *job, const struct step *st);

/* Fluxion's answer to that find (an rpc-result event): the held vertices
 * a job had are to be picked again (their count), 0 when none is, -1 when
 * Fluxion could not say (picked again after PRESTAGE_RETRY).
 */
int prestage_found (struct dws_engine *e, struct job *job, json_t *event);

/* STEP_PRESTAGE_READY: the job may be scheduled (dws-prestage removed; again on a
 * repeat). */
void prestage_ready (struct dws_engine *e, struct job *job, const struct step *st);

/* STEP_PRESTAGE_LOST: a rabbit its node-local storage is on went down
 * before its nodes came: the job fails (Teardown follows). */
void prestage_lost (struct dws_engine *e, struct job *job, const struct step *st);

/* After a rabbit health input: the jobs whose node-local storage waits on
 * a rabbit that is down now are marked (NEWS_RABBIT_LOST). */
void prestage_rabbits (struct dws_engine *e);

/* STEP_PRESTAGE_GIVE_UP: its nodes did not come within
 * rabbit.prestage_node_wait: ANN_GIVEN_UP is written on its Workflow
 * first (a restarted service carries on), its answer is
 * prestage_on_given_up.
 */
void prestage_give_up (struct dws_engine *e, struct job *job, const struct step *st);
void prestage_on_given_up (struct dws_engine *e, enum token_kind kind, struct job *job,
                           json_t *event);

/* Are the job's nodes those its node-local storage was set up for?  No,
 * with the reason in err (NULL: none wanted), when they are not or the
 * rabbit map is not known. */
bool prestage_on_chassis (struct dws_engine *e, struct job *job, dws_error_t *err);

/* The jobtap plugin's answer to prestage-unpin (progress_prestage_unpin asks). */
/* It cannot be let go of its chassis (its unpin not sent): not given up. */
void prestage_kept (struct dws_engine *e, struct job *job);

void prestage_on_unpin (struct dws_engine *e, enum token_kind kind, struct job *job,
                        json_t *event);

/* STEP_PRESTAGE_AGAIN: its given-up Workflow is deleted: it is a job of the usual
 * way from now, its Workflow created again (with its hosts, if they came).
 */
void prestage_keep (struct dws_engine *e, struct job *job, const struct step *st);
void prestage_redo (struct dws_engine *e, struct job *job, const struct step *st);
void prestage_again (struct dws_engine *e, struct job *job, const struct step *st);

/* The job's pre-staging from its Workflow (a service restart). */
void prestage_adopt (struct dws_engine *e, struct job *job);

/* The "prestage" object of the job's view, or NULL when not pre-staged:
 * with "datain" (datain_view) while its data moves in, and for node-local
 * storage "chassis": {"counts": {rabbit: nodes}, "hosts": its nodes'
 * hostlist}. */
json_t *prestage_view (const struct dws_engine *e, const struct job *job);

#endif /* !DWS_ENGINE_PRESTAGE_H */
