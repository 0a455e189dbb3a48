/* sidestate.h - the job's machines beside its phase (phase.c): how far
 * its pre-staging went (enum prestage_stage), its pre-staged ssd hold
 * (enum prestage_ssd), its pre-staging given up (enum prestage_restage),
 * its Setup's start (enum setup_start), its prolog (enum prolog) and its
 * epilog (enum epilog), each with its transitions in a table.
 *
 * Every change of one of them goes through its setter here: a transition
 * its table does not list is refused and logged, and the value stays, as
 * phase_event () does for the phase; setting the value it has already is
 * no transition and always allowed.  No other file assigns the six
 * fields (t/python/libdws/test_one_decider.py holds it).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_ENGINE_SIDESTATE_H
#define DWS_ENGINE_SIDESTATE_H

#include "engine/state.h"

void sidestate_prestage_stage (struct dws_engine *e, struct job *job, enum prestage_stage to);
void sidestate_ssd (struct dws_engine *e, struct job *job, enum prestage_ssd to);
void sidestate_restage (struct dws_engine *e, struct job *job, enum prestage_restage to);
void sidestate_epilog (struct dws_engine *e, struct job *job, enum epilog to);
void sidestate_prolog (struct dws_engine *e, struct job *job, enum prolog to);
void sidestate_setup (struct dws_engine *e, struct job *job, enum setup_start to);

/* Moves that depend on where the machine is, so that no verb reads it to
 * choose: pre-staging moved on to `to` unless it is there or past it
 * (true when it moved); the epilog begun unless it has (active, or
 * removed); the epilog removed unless it was (true when it was not). */
bool sidestate_prestage_reach (struct dws_engine *e, struct job *job, enum prestage_stage to);
void sidestate_epilog_begin (struct dws_engine *e, struct job *job);

/* The words of a job's re-staging and epilog, as the log says them. */
const char *sidestate_restage_name (enum prestage_restage r);
const char *sidestate_epilog_name (enum epilog p);
bool sidestate_epilog_end (struct dws_engine *e, struct job *job);

#endif /* !DWS_ENGINE_SIDESTATE_H */
