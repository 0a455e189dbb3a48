/* sidestate.c - the job's machines beside its phase, their transitions
 * as data (sidestate.h).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <stdbool.h>

#include "engine/shapes/act.h"
#include "sidestate.h"

#define B(v) (1u << (v))

/* One machine: its name, its values' names, and per value the values it
 * may go to (a bit each). */
struct machine {
    const char *name;
    const char *const *names;
    int count;
    const unsigned *to;
};

static const char *const stage_names[] = {"unchosen", "weighed", "chosen", "recorded", "ready"};
static const unsigned stage_to[] = {
    /* weighed; chosen with nothing to weigh (not wanted); recorded at once
     * (an adopted pre-staged Workflow) */
    [PRESTAGE_UNCHOSEN] = B (PRESTAGE_WEIGHED) | B (PRESTAGE_CHOSEN) | B (PRESTAGE_RECORDED),
    /* weighed again (the rabbits known now), or chosen */
    [PRESTAGE_WEIGHED] = B (PRESTAGE_CHOSEN),
    [PRESTAGE_CHOSEN] = B (PRESTAGE_RECORDED),
    /* its data in; or given up and created again the usual way */
    [PRESTAGE_RECORDED] = B (PRESTAGE_READY) | B (PRESTAGE_CHOSEN),
    [PRESTAGE_READY] = B (PRESTAGE_CHOSEN),
};

static const char *const ssd_names[] = {"unpicked", "picked", "finding", "verified"};
static const unsigned ssd_to[] = {
    /* picked (and recorded), or found so on the Workflow after a restart */
    [SSD_UNPICKED] = B (SSD_PICKED) | B (SSD_VERIFIED),
    /* its hold applied: Fluxion asked; or picked again */
    [SSD_PICKED] = B (SSD_FINDING) | B (SSD_UNPICKED) | B (SSD_VERIFIED),
    /* Fluxion's answer: free, a job got some (again), or the find failed */
    [SSD_FINDING] = B (SSD_VERIFIED) | B (SSD_PICKED) | B (SSD_UNPICKED),
    /* created again the usual way, or picked again */
    [SSD_VERIFIED] = B (SSD_UNPICKED),
};

static const char *const restage_names[] = {"none", "noting", "unpinning", "nodes-came",
                                            "unpinned", "again"};
static const unsigned restage_to[] = {
    /* given up: ANN_GIVEN_UP written first; or found given up after a
     * restart (being let go, torn down, or created again) */
    [RESTAGE_NONE] = B (RESTAGE_NOTING) | B (RESTAGE_UNPINNING) | B (RESTAGE_UNPINNED)
                     | B (RESTAGE_AGAIN),
    /* written (unpin it), or not (it waits for its chassis) */
    [RESTAGE_NOTING] = B (RESTAGE_UNPINNING) | B (RESTAGE_NONE),
    /* let go, or not (an older plugin), or its nodes came meanwhile */
    [RESTAGE_UNPINNING] = B (RESTAGE_UNPINNED) | B (RESTAGE_NONE) | B (RESTAGE_NODES_CAME),
    /* they are not on its chassis (torn down), or they are (kept) */
    [RESTAGE_NODES_CAME] = B (RESTAGE_UNPINNED) | B (RESTAGE_NONE),
    /* its Workflow created again */
    [RESTAGE_UNPINNED] = B (RESTAGE_AGAIN),
    [RESTAGE_AGAIN] = 0,
};

static const char *const setup_names[] = {"none", "pending", "waits-map"};
static const unsigned setup_to[] = {
    /* dws.setup came (or its hosts are known: a lost one's R, a Workflow
     * taken up or created again with them) */
    [SETUP_NONE] = B (SETUP_PENDING),
    /* Setup asked; or the map is not known yet (said once); or given up
     * before its nodes (created again the usual way) */
    [SETUP_PENDING] = B (SETUP_NONE) | B (SETUP_WAITS_MAP),
    /* Setup asked once the map came; or its Workflow created again */
    [SETUP_WAITS_MAP] = B (SETUP_NONE) | B (SETUP_PENDING),
};

static const char *const prolog_names[] = {"held", "ended"};
static const unsigned prolog_to[] = {
    /* PreRun done: the prolog-remove (again for a repeated dws.setup) */
    [PROLOG_HELD] = B (PROLOG_ENDED),
    [PROLOG_ENDED] = 0,
};

static const char *const epilog_names[] = {"none", "active", "releasing", "removed"};
static const unsigned epilog_to[] = {
    /* begun; or ended with none begun (dws.abort, a job ended while away) */
    [EPILOG_NONE] = B (EPILOG_ACTIVE) | B (EPILOG_REMOVED),
    /* its computes to go back after PostRun; or ended */
    [EPILOG_ACTIVE] = B (EPILOG_RELEASING) | B (EPILOG_REMOVED),
    /* DataOut written: ended (or, failing, ended at Teardown) */
    [EPILOG_RELEASING] = B (EPILOG_REMOVED),
    [EPILOG_REMOVED] = 0,
};

#define MACHINE(name, names, to) {name, names, (int)(sizeof (names) / sizeof (names[0])), to}
static const struct machine prestage_stage_machine = MACHINE ("pre-staging", stage_names,
                                                              stage_to);
static const struct machine ssd_machine = MACHINE ("ssd hold", ssd_names, ssd_to);
static const struct machine restage_machine = MACHINE ("re-staging", restage_names,
                                                       restage_to);
static const struct machine setup_machine = MACHINE ("setup start", setup_names, setup_to);
static const struct machine prolog_machine = MACHINE ("prolog", prolog_names, prolog_to);
static const struct machine epilog_machine = MACHINE ("epilog", epilog_names, epilog_to);

/* May the machine go from `from` to `to`?  Logged when it may not. */
static bool allowed (struct dws_engine *e, struct job *job, const struct machine *m, int from,
                     int to)
{
    if (from == to)
        return true;
    if (from >= 0 && from < m->count && to >= 0 && to < m->count && (m->to[from] & B (to)))
        return true;
    act_log (e, "err", "%s: %s %s -> %s refused (not in its table)", job->name, m->name,
             from >= 0 && from < m->count ? m->names[from] : "?",
             to >= 0 && to < m->count ? m->names[to] : "?");
    return false;
}

void sidestate_prestage_stage (struct dws_engine *e, struct job *job, enum prestage_stage to)
{
    if (allowed (e, job, &prestage_stage_machine, (int)job->ps.stage, (int)to))
        job->ps.stage = to;
}

void sidestate_ssd (struct dws_engine *e, struct job *job, enum prestage_ssd to)
{
    if (allowed (e, job, &ssd_machine, (int)job->ps.ssd, (int)to))
        job->ps.ssd = to;
}

void sidestate_restage (struct dws_engine *e, struct job *job, enum prestage_restage to)
{
    if (allowed (e, job, &restage_machine, (int)job->ps.restage, (int)to))
        job->ps.restage = to;
}

void sidestate_setup (struct dws_engine *e, struct job *job, enum setup_start to)
{
    if (allowed (e, job, &setup_machine, (int)job->setup, (int)to))
        job->setup = to;
}

void sidestate_prolog (struct dws_engine *e, struct job *job, enum prolog to)
{
    if (allowed (e, job, &prolog_machine, (int)job->prolog, (int)to))
        job->prolog = to;
}

void sidestate_epilog (struct dws_engine *e, struct job *job, enum epilog to)
{
    if (allowed (e, job, &epilog_machine, (int)job->epilog, (int)to))
        job->epilog = to;
}

bool sidestate_prestage_reach (struct dws_engine *e, struct job *job, enum prestage_stage to)
{
    if (job->ps.stage >= to)
        return false;
    sidestate_prestage_stage (e, job, to);
    return true;
}

void sidestate_epilog_begin (struct dws_engine *e, struct job *job)
{
    if (job->epilog == EPILOG_NONE) /* what it knows is kept */
        sidestate_epilog (e, job, EPILOG_ACTIVE);
}

bool sidestate_epilog_end (struct dws_engine *e, struct job *job)
{
    if (job->epilog == EPILOG_REMOVED)
        return false;
    sidestate_epilog (e, job, EPILOG_REMOVED);
    return true;
}

const char *sidestate_restage_name (enum prestage_restage r)
{
    return (size_t)r < sizeof (restage_names) / sizeof (restage_names[0]) ? restage_names[r] : "?";
}

const char *sidestate_epilog_name (enum epilog p)
{
    return (size_t)p < sizeof (epilog_names) / sizeof (epilog_names[0]) ? epilog_names[p] : "?";
}
