/* decide.c - the engine's one decider (decide.h): every choice of what a
 * job does next, and every change of its phase (through phase.c's table).
 *
 * decide_next () reads the job alone -- its phase, the facts recorded on
 * it and the first of its news -- and returns one step; decide () takes
 * that news, and advance.c asks again until none is left.  A news is an
 * input that carries what no fact says (a request to answer, a read's
 * outcome, a timer, a failure's note), or NEWS_LOOK, which says only
 * which job to look at: settle () chooses from the phase and facts alone,
 * each of its rules one that holds no more once its step is taken, so a
 * job looked at again with nothing new takes no step (test-engine, the
 * service tests' conftest.py and bench_engine_replay.py's `look` check
 * it after every event).  Nothing else in
 * the engine chooses a transition.  To add a phase or a decision: its row in
 * JOB_PHASES and phase.c's table, its case here, and for a new kind of
 * step its verb in the file that acts and its line in decide.h's
 * DWS_ENGINE_STEPS (which makes verbtable.c's table).
 * The facts that only choose a transition (setup, toredown,
 * the news, ...) are read here alone:
 * t/python/libdws/test_one_decider.py lists them (DECISION_FACTS).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decide.h"
#include "engine/limits.h"
#include "engine/rules.h"
#include "engine/shapes/wfstate.h"
#include "engine/shapes/wfview.h"
#include "health/health.h"
#include "parse/directive.h"
#include "parse/labels.h"
#include "phase.h"
#include "placement/lustre.h"
#include "placement/rabbitmap.h"
#include "sidestate.h"

/* Has the job's write of token kind `kind` been answered (job->written)? */
static bool written (const struct job *job, enum token_kind kind)
{
    return job->written & ((uint64_t)1 << kind);
}

/* Is the job's single request of token kind `kind` out (job->asking)? */
static bool asked (const struct job *job, enum token_kind kind)
{
    return job->asking & ((uint64_t)1 << kind);
}

static struct step make (enum step_kind kind)
{
    struct step st = {kind, WF_NONE, WF_NONE, T_NKINDS, 0, WF_NONE, false, NEWS_COUNT, NULL,
                      RULE_NONE, RULE_NONE, RULE_NONE, false};
    return st;
}

/* Rule r chose a step of this kind. */
static struct step chose (enum rule r, enum step_kind kind)
{
    struct step st = make (kind);
    if (kind != STEP_NOTHING)
        st.rule = r;
    return st;
}

/* Rule r chose st, unless a rule of the family it went through named it. */
static struct step by (enum rule r, struct step st)
{
    if (st.kind != STEP_NOTHING && st.rule == RULE_NONE)
        st.rule = r;
    return st;
}

/* The timers that guard state s: when s is asked for, and again, whole,
 * when a restarted service picks the job up in s (picked_up), so a
 * restart never makes one fire early.  A state whose hosts were given up
 * already had its one timeout (job->forced, as flux-coral2's); the
 * teardown_after timer, started at PostRun, runs on through DataOut, so
 * only a pick-up there starts it.  DataIn is watched for progress
 * (datain.c), from its start or its pick-up, pre-staged or in the prolog.
 */
static unsigned state_timers (enum wf_state forced, enum wf_state s, bool picked_up)
{
    switch (s) {
        case WF_DATAIN:
            return 1u << T_DATAIN;
        case WF_SETUP:
            return forced != WF_SETUP ? 1u << T_SETUP : 0;
        case WF_PRERUN:
            return forced != WF_PRERUN ? 1u << T_PRERUN : 0;
        case WF_POSTRUN:
            return 1u << T_TEARDOWN_AFTER | 1u << T_POSTRUN;
        case WF_DATAOUT:
            return picked_up ? 1u << T_TEARDOWN_AFTER : 0;
        default:
            return 0;
    }
}

/* Ask for state s: nothing goes forward from Teardown (an answer that
 * arrives after Teardown was asked for, a Servers write say).
 */
static struct step ask (const struct job *job, enum wf_state s)
{
    if (phase_desired (job) == WF_TEARDOWN && s != WF_TEARDOWN)
        return make (STEP_NOTHING);
    struct step st = make (STEP_ASK);
    st.state = s;
    st.timers = state_timers (job->forced, s, false);
    return st;
}

/* DataOut, asked with the held ssds on the Workflow (release.c). */
static struct step dataout_held (const struct job *job)
{
    struct step st = ask (job, WF_DATAOUT);
    if (st.kind == STEP_ASK)
        st.kind = STEP_DATAOUT_HELD;
    return st;
}

/* A Workflow of ours seen while the job has none (a restarted service
 * takes it up, or a job about to create its Workflow finds it made): its
 * phase is the state it asks for, and the timers that guard that state
 * start whole; a restart never makes one fire early, and a state whose
 * hosts were given up before (forceReady still set) had its one timeout.
 * One being deleted that holds no finalizer of ours is let go.
 */
static struct step adopt (const struct job *job)
{
    const struct wfview *v = &job->view;
    if (v->deleting && v->finalizer_index < 0)
        return make (STEP_NOTHING);
    struct step st = chose (RULE_TAKEN_UP, STEP_ADOPT);
    st.state = v->desired;
    st.timers = state_timers (v->force_ready_state, v->desired, true);
    return st;
}

/* Teardown is complete: the Workflow is deleted once the job's epilog has
 * begun (until then it tells a restarted service that this job still
 * needs its epilog released), or at once when its pre-staged storage was
 * given up (the job waits for its nodes: it is created again), and
 * dws.abort's reads have answered.
 */
static struct step delete_when_ready (const struct job *job)
{
    if ((!job->epilog && job->ps.restage != RESTAGE_UNPINNED) || job->phase == PHASE_DELETING
        || job->abort_reads > 0)
        return make (STEP_NOTHING);
    return job->epilog ? chose (RULE_TORN_DOWN_DELETE, STEP_DELETE)
                       : chose (RULE_TORN_DOWN_GIVEN_UP, STEP_DELETE_GIVEN_UP);
}

/* Teardown is wanted: after dws.abort's reads; once asked, the epilog
 * marked on the Workflow or, Teardown done, the deletion.
 */
static struct step teardown (const struct job *job)
{
    if (job->abort_reads > 0)
        return make (STEP_NOTHING); /* the last of them asks again */
    if (phase_desired (job) == WF_TEARDOWN) {
        if (phase_handled (job) == WF_TEARDOWN)
            return delete_when_ready (job);
        if (job->teardown_reads == 0 && job->epilog
            && !wfview_annotation (&job->view, ANN_EPILOG)
            && !asked (job, TOK_ANNOTATE))
            return chose (RULE_EPILOG_MARK, STEP_MARK_EPILOG);
        return make (STEP_NOTHING);
    }
    struct step st = make (STEP_TEARDOWN_BEGIN);
    st.was = phase_desired (job);
    return st;
}

/* Are the computes released once PostRun is done (release.c)?  Not
 * without Fluxion: only alloc_rabbit keeps other rabbit jobs off the
 * job's rabbits, and it lasts until Teardown, so the computes do too (as
 * flux-coral2 v0.36.0).
 */
bool decide_release_early (const struct dws_engine *e, const struct job *job)
{
    if (job->excepted || job->toredown || !e->cfg.fluxion)
        return false;
    if (job->release == RELEASE_DEFAULT)
        return e->cfg.release_early;
    return job->release == RELEASE_EARLY;
}

/* A pre-staged job (prestage.c) is set up and filled before it has
 * nodes: Setup and DataIn without Computes, then the job is let go to the
 * scheduler; dws.setup brings the hosts, the Computes, then PreRun.
 */
static bool prestaging (const struct job *job)
{
    return job->ps.staged && !job->hosts;
}

/* Does the Workflow list a breakdown the job has not read? */
static bool breakdowns_missing (const struct job *job)
{
    size_t i;
    json_t *ref;
    json_array_foreach (job->view.breakdowns, i, ref) {
        const char *name = json_string_value (json_object_get (ref, "name"));
        if (name && !json_object_get (job->breakdowns, name))
            return true;
    }
    return false;
}

/* Does a breakdown read for the job ask for Lustre storage? */
static bool asks_lustre (const struct job *job)
{
    const char *name;
    json_t *bd;
    json_object_foreach (job->breakdowns, name, bd) {
        json_t *sets = json_object_get (
            json_object_get (json_object_get (bd, "status"), "storage"), "allocationSets");
        size_t i;
        json_t *set;
        json_array_foreach (sets, i, set)
            if (dws_label_is_lustre (json_string_value (json_object_get (set, "label"))))
                return true;
    }
    return false;
}

static struct step proposal_ready (const struct dws_engine *e, const struct job *job);

/* Proposal is done: every breakdown read first (the last read's answer
 * looks again), then the resources.
 */
static struct step proposal (const struct dws_engine *e, const struct job *job)
{
    if (job->breakdowns_wanted > 0)
        return make (STEP_NOTHING);
    return breakdowns_missing (job) ? chose (RULE_BREAKDOWNS_UNREAD, STEP_BREAKDOWNS)
                                    : proposal_ready (e, job);
}

/* Does the job's Lustre go where Fluxion found room (lustre.h)? */
static bool lustre_spreads (const struct dws_engine *e, const struct job *job)
{
    json_t *list = json_array ();
    const char *name;
    json_t *bd;
    json_object_foreach (job->breakdowns, name, bd)
        json_array_append (list, bd);
    bool spread = list && dws_lustre_spreads (job->resources, list, &e->cfg.lustre);
    json_decref (list);
    return spread;
}

/* Are the job's hosts (and the ssd Fluxion reserved it) on the Workflow
 * already (a restarted service, a Workflow created again with them)?
 */
static bool hosts_recorded (const struct job *job)
{
    const char *hosts = wfview_annotation (&job->view, ANN_HOSTS);
    const char *reserved = wfview_annotation (&job->view, ANN_RESERVED);
    if (!hosts || !job->hosts || strcmp (hosts, job->hosts) != 0)
        return false;
    if (!job->reserved)
        return !reserved;
    char *rsv = json_dumps (job->reserved, JSON_COMPACT | JSON_SORT_KEYS);
    bool same = rsv && reserved && !strcmp (reserved, rsv);
    free (rsv);
    return same;
}

/* dws.setup has come and the Setup may start: its breakdowns read, the
 * rabbit map known, a spread Lustre's ssd read from the job's R, the
 * hosts recorded on the Workflow, then the Servers filled.
 */
static struct step setup_start (const struct dws_engine *e, const struct job *job)
{
    if (job->breakdowns_wanted > 0)
        return make (STEP_NOTHING); /* the last read's answer decides again */
    if (breakdowns_missing (job))
        return chose (RULE_BREAKDOWNS_UNREAD, STEP_BREAKDOWNS);
    if (!e->map) /* said once, until it comes */
        return chose (RULE_MAP_UNKNOWN,
                      job->setup == SETUP_WAITS_MAP ? STEP_NOTHING : STEP_WAIT_MAP);
    if (!job->reserved && lustre_spreads (e, job))
        return chose (RULE_LUSTRE_SPREAD,
                      job->info_for == INFO_SCHED ? STEP_NOTHING : STEP_READ_SCHED_R);
    /* its hosts' patch out: its answer goes on (the Workflow may show
     * them before it comes) */
    if (asked (job, TOK_HOSTS))
        return make (STEP_NOTHING);
    /* a pre-staged job was set up before its nodes: they are recorded
     * alone, and the hosts' answer takes it on to its Computes; another
     * past Proposal is on its way out (torn down before its Setup) */
    if (phase_desired (job) > WF_PROPOSAL) {
        if (hosts_recorded (job))
            return chose (RULE_HOSTS_RECORDED, STEP_NOTHING);
        return job->ps.staged ? chose (RULE_HOSTS_UNRECORDED, STEP_HOSTS_PATCH)
                              : make (STEP_NOTHING);
    }
    /* on its way to Setup: the hosts go with its ask (workflow_ask), one
     * Workflow patch fewer */
    return chose (hosts_recorded (job) ? RULE_HOSTS_RECORDED : RULE_HOSTS_WITH_SETUP,
                  STEP_SERVERS);
}

/* PreRun is done: the prolog ends, with the workflow token if DWS made
 * one (read first).
 */
static struct step prolog (const struct job *job)
{
    const char *secret = job->view.token_secret;
    return make (secret && *secret ? STEP_READ_TOKEN : STEP_PROLOG);
}

/* May the Computes be filled: not asked yet (nor filled), nothing
 * failed? */
static bool computes_due (const struct job *job)
{
    return !asked (job, TOK_COMPUTES) && !written (job, TOK_COMPUTES) && !job->excepted
           && !job->toredown;
}

/* Are its hosts on the Workflow: their patch answered (the Workflow seen
 * with them before the answer waits for it, as setup_start does)? */
static bool hosts_written (const struct job *job)
{
    return !asked (job, TOK_HOSTS) && (written (job, TOK_HOSTS) || hosts_recorded (job));
}

/* State s is complete (the phase says so: phase_completed): what
 * follows, each rule one its step ends (a phase moved on, the Computes
 * asked, the prolog ended, ...).
 */
/* A pre-staged job's Setup or DataIn is complete (pre-staging's wing):
 * Setup done, DataIn before its nodes; DataIn done, the job let go to the
 * scheduler, or given up and let go of its chassis, or, its nodes come,
 * its Computes filled.
 */
static struct step prestage_after_done (const struct job *job, enum wf_state s)
{
    if (s == WF_SETUP)
        return by (RULE_SETUP_DONE_PRESTAGED, ask (job, WF_DATAIN));
    if (!job->hosts && job->ps.restage == RESTAGE_UNPINNING)
        return chose (RULE_DATAIN_DONE_UNPIN,
                      asked (job, TOK_UNPIN) ? STEP_NOTHING /* given up before a restart */
                                             : STEP_PRESTAGE_UNPIN);
    if (job->hosts) /* its hosts on the Workflow first */
        return chose (RULE_DATAIN_DONE_NODES_CAME,
                      computes_due (job) && hosts_written (job) ? STEP_COMPUTES : STEP_NOTHING);
    /* let go to the scheduler, once (not given up) */
    return chose (RULE_DATAIN_DONE_PRESTAGED,
                  job->ps.stage < PRESTAGE_READY && job->ps.restage == RESTAGE_NONE
                      ? STEP_PRESTAGE_READY
                      : STEP_NOTHING);
}

static struct step after_done (const struct dws_engine *e, const struct job *job,
                               enum wf_state s)
{
    if (job->ps.staged && (s == WF_SETUP || s == WF_DATAIN))
        return prestage_after_done (job, s);
    switch (s) {
        case WF_PROPOSAL:
            /* a breakdown it lists not read (a Workflow created again):
             * read first; the rest is the rules of settle () */
            return chose (RULE_BREAKDOWNS_UNREAD,
                          job->breakdowns_wanted == 0 && breakdowns_missing (job)
                              ? STEP_BREAKDOWNS
                              : STEP_NOTHING);
        case WF_SETUP:
            return chose (RULE_SETUP_DONE, computes_due (job) ? STEP_COMPUTES : STEP_NOTHING);
        case WF_DATAIN:
            return by (RULE_DATAIN_DONE, ask (job, WF_PRERUN));
        case WF_PRERUN:
            if (job->prolog == PROLOG_ENDED || asked (job, TOK_SECRET) || job->wf_token)
                return make (STEP_NOTHING); /* ended, or its token read first */
            return by (RULE_PRERUN_DONE, prolog (job));
        case WF_POSTRUN:
            return decide_release_early (e, job) ? chose (RULE_POSTRUN_DONE_RELEASE, STEP_RELEASE_START)
                                                 : by (RULE_POSTRUN_DONE, ask (job, WF_DATAOUT));
        case WF_DATAOUT:
            return by (RULE_DATAOUT_DONE, teardown (job));
        case WF_TEARDOWN:
            return delete_when_ready (job);
        default:
            return make (STEP_NOTHING);
    }
}

static struct step read_culprits (enum timer_kind kind)
{
    struct step st = make (STEP_READ_CULPRITS);
    st.timer = kind;
    return st;
}

/* May a pre-staged job's storage be placed: its choice recorded and its
 * resources sent, its Proposal done and nothing asked since, nothing
 * failed.
 */
static bool prestage_may_start (const struct job *job)
{
    return prestaging (job) && job->ps.stage >= PRESTAGE_RECORDED && job->resources_sent && !job->excepted
           && !job->toredown && phase_exists (job) && phase_handled (job) == WF_PROPOSAL
           && phase_desired (job) == WF_PROPOSAL && job->servers_pending == 0;
}

/* Was the job weighed before the rabbits were known (prestage_weigh), and
 * is its choice still to make?
 */
static bool weighed_unknown (const struct job *job)
{
    return job->ps.stage == PRESTAGE_WEIGHED && job->ps.weighed.unknown_since > 0
           && !job->resources_sent && !job->excepted;
}

/* Is the job's DataIn watched for progress now: DataIn asked for and not
 * done (pre-staged, or in its prolog), nothing failed (datain.c).
 */
static bool datain_watched (const struct job *job)
{
    return !job->excepted && !job->toredown && phase_desired (job) == WF_DATAIN
           && phase_handled (job) < WF_DATAIN;
}

/* Its progress was read (no read out, its timer not running): a DataIn
 * that has not moved for rabbit.datain_stall_timeout fails, one that
 * moved is read again later.
 */
static struct step datain_read_answer (const struct dws_engine *e, const struct job *job)
{
    if (!datain_watched (job) || e->cfg.datain_stall_timeout <= 0 || asked (job, TOK_DATAIN)
        || (job->timers & (1u << T_DATAIN)))
        return make (STEP_NOTHING);
    if (e->now - job->datain.moved_at >= e->cfg.datain_stall_timeout)
        return chose (RULE_DATAIN_STALLED, STEP_DATAIN_STALLED);
    return chose (RULE_DATAIN_MOVED, STEP_DATAIN_WATCH);
}

/* A pre-staged job's next step toward Setup: its ssd picked and held
 * (Lustre), Fluxion's word that no job has any of it, then the Servers.
 * Not picked again while its pick's record is out, nor while it waits
 * to be (its timer runs: no room, or Fluxion's find failed; the timer and
 * the room's pass pick again).
 */
static struct step prestage_next (const struct job *job)
{
    if (job->ps.gib > 0 && job->ps.ssd == SSD_UNPICKED)
        return chose (RULE_PRESTAGE_PICK, (job->timers & (1u << T_PRESTAGE))
                                                   || asked (job, TOK_PRESTAGE)
                                               ? STEP_NOTHING
                                               : STEP_PRESTAGE_PICK);
    if (job->ps.gib > 0 && job->ps.ssd != SSD_VERIFIED)
        return make (STEP_NOTHING); /* the hold applies, or the find is out */
    return chose (RULE_PRESTAGE_SERVERS, STEP_SERVERS);
}

/* Does a pre-staged job let go wait for the nodes of its chassis, with
 * nothing given up or failed?
 */
static bool waits_for_chassis (const struct job *job)
{
    return prestaging (job) && job->ps.counts && job->ps.stage == PRESTAGE_READY
           && job->ps.restage == RESTAGE_NONE && !job->excepted && !job->toredown
           && phase_desired (job) == WF_DATAIN && phase_handled (job) == WF_DATAIN;
}

/* A timer fired (it fires once per state: not again for a state whose
 * hosts were given up, job->forced).
 */
static struct step on_timer (const struct job *job, enum timer_kind kind)
{
    enum wf_state desired = phase_desired (job);
    enum wf_state handled = phase_handled (job);
    if (job->excepted && kind != T_TEARDOWN_AFTER)
        return make (STEP_NOTHING);
    switch (kind) {
        case T_SETUP:
            if (desired == WF_SETUP && handled < WF_SETUP && job->forced != WF_SETUP)
                return by (RULE_TIMEOUT, read_culprits (kind));
            break;
        case T_PRERUN:
            if (desired == WF_PRERUN && handled < WF_PRERUN && job->forced != WF_PRERUN)
                return by (RULE_TIMEOUT, read_culprits (kind));
            break;
        case T_POSTRUN:
            if (desired == WF_POSTRUN && handled < WF_POSTRUN)
                return by (RULE_TIMEOUT, read_culprits (kind));
            break;
        case T_TEARDOWN_AFTER:
            if (desired == WF_POSTRUN || desired == WF_DATAOUT)
                return chose (RULE_TEARDOWN_AFTER, STEP_SKIP_DATAOUT);
            break;
        case T_RELEASE:
            if (job->phase == PHASE_RELEASING)
                return chose (RULE_RELEASE_UNCONFIRMED, STEP_KEEP_COMPUTES);
            break;
        case T_PRESTAGE:
            if (weighed_unknown (job))
                return chose (RULE_PRESTAGE_TIMER_WEIGH, STEP_PRESTAGE_WEIGH);
            if (prestage_may_start (job) && job->ps.ssd == SSD_UNPICKED)
                return chose (RULE_PRESTAGE_TIMER_PICK, STEP_PRESTAGE_PICK);
            break;
        case T_DATAIN:
            if (datain_watched (job))
                return chose (RULE_DATAIN_TIMER, STEP_DATAIN_READ);
            break;
        case T_NODE_WAIT:
            if (waits_for_chassis (job))
                return chose (RULE_NODE_WAIT_EXPIRED, STEP_PRESTAGE_GIVE_UP);
            break;
        case T_TC:
            if (job->tc_since < 0 || desired == WF_TEARDOWN)
                break;
            if (desired == WF_PRERUN)
                return by (RULE_TRANSIENT_PRERUN, read_culprits (kind));
            return desired == WF_POSTRUN ? chose (RULE_TRANSIENT_POSTRUN, STEP_POSTRUN_FAILED)
                                         : chose (RULE_TRANSIENT_FAIL, STEP_FAIL);
        default:
            break;
    }
    return make (STEP_NOTHING);
}

/* May the Storage placement start (dws.setup has come, the Workflow
 * exists and its Proposal is done, nothing failed, no Servers being
 * filled)?
 */
static bool setup_may_start (const struct job *job)
{
    return job->setup != SETUP_NONE && job->servers_pending == 0 && !job->excepted
           && !job->toredown
           && phase_exists (job)
           && phase_handled (job) >= WF_PROPOSAL
           && (job->ps.restage == RESTAGE_NONE || job->ps.restage == RESTAGE_AGAIN);
}

/* Its nodes came before it was let go of its chassis (RESTAGE_NODES_CAME):
 * once they and the rabbit map are known, which they are decides whether
 * its storage is kept (nodes_came).
 */
static bool nodes_decide (const struct dws_engine *e, const struct job *job)
{
    return job->ps.restage == RESTAGE_NODES_CAME && job->hosts && e->map && !job->excepted
           && !job->toredown;
}

/* The nodes that came are those its storage was set up for (as many on
 * each rabbit as prestage_counts says): it is kept; else set up again.
 */
static struct step nodes_came (const struct dws_engine *e, const struct job *job)
{
    return dws_rabbitmap_counts_equal (e->map, job->hosts, job->ps.counts)
               ? chose (RULE_NODES_ON_CHASSIS, STEP_PRESTAGE_KEEP)
               : chose (RULE_NODES_ELSEWHERE, STEP_PRESTAGE_REDO);
}

/* Is the job to be pre-staged if it can be: what it asked (dw_prestage),
 * else rabbit.prestage (1: the jobs that copy data in, 2: all)?
 */
static bool prestage_wanted (const struct dws_engine *e, const struct job *job)
{
    const char *const copy_in[] = {"copy_in", NULL};
    if (job->prestage_asked >= 0)
        return job->prestage_asked == 1;
    if (e->cfg.prestage == 1)
        return dws_dw_any_command (job->directives, copy_in, 0) == 1;
    return e->cfg.prestage == 2;
}

/* Pre-staging is wanted and weighed (job->ps.weighed): a job whose storage
 * cannot be placed before its nodes goes the usual way, or is refused if
 * it asked; one that asks for more nodes than the instance has could
 * hold its storage forever; the site bounds what is held ahead of nodes
 * (rabbit.prestage_max_jobs, prestage_max_gib).
 */
static struct step prestage_choice (const struct dws_engine *e, const struct job *job)
{
    const struct prestage_facts *w = &job->ps.weighed;
    if (w->unknown_since > 0)
        return make (STEP_NOTHING); /* weighed again when the rabbits are known */
    if (w->unfit)
        return job->prestage_asked == 1 ? chose (RULE_PRESTAGE_REFUSED, STEP_PRESTAGE_REFUSE)
                                        : chose (RULE_PRESTAGE_UNFIT, STEP_PRESTAGE_UNFIT);
    if (w->instance_nodes > 0 && w->nodes > w->instance_nodes)
        return chose (RULE_PRESTAGE_TOO_BIG, STEP_PRESTAGE_TOO_BIG);
    if ((e->cfg.prestage_max_jobs > 0 && w->ahead_jobs + 1 > e->cfg.prestage_max_jobs)
        || (e->cfg.prestage_max_gib > 0 && w->ahead_gib + w->gib > e->cfg.prestage_max_gib))
        return chose (RULE_PRESTAGE_FULL, STEP_PRESTAGE_FULL);
    return chose (RULE_PRESTAGE_CHOSEN, STEP_PRESTAGE_YES);
}

/* It asked to be pre-staged (dw_prestage=yes), and its storage cannot
 * be placed before its nodes (prestage_choice chose STEP_PRESTAGE_REFUSE):
 * its resource-update says so.
 */
static bool prestage_refused (const struct job *job)
{
    return job->prestage_asked == 1 && !job->ps.staged && job->ps.weighed.unfit
           && job->ps.stage >= PRESTAGE_CHOSEN;
}

/* Is pre-staging still to be chosen at Proposal's end: weighed, chosen,
 * recorded on the Workflow when chosen (pre-staging's wing)?
 */
static bool prestage_unchosen (const struct job *job)
{
    return job->ps.stage == PRESTAGE_UNCHOSEN || job->ps.stage == PRESTAGE_WEIGHED
           || (job->ps.staged && job->ps.stage < PRESTAGE_RECORDED);
}

/* Its next step toward that choice: what decides it read, the choice,
 * then, pre-staged, its record on the Workflow.
 */
static struct step prestage_choose (const struct dws_engine *e, const struct job *job)
{
    if (job->ps.stage == PRESTAGE_UNCHOSEN)
        return prestage_wanted (e, job) ? chose (RULE_PRESTAGE_WANTED, STEP_PRESTAGE_WEIGH)
                                        : chose (RULE_PRESTAGE_NOT_WANTED, STEP_PRESTAGE_NO);
    if (job->ps.stage == PRESTAGE_WEIGHED)
        return prestage_choice (e, job);
    return chose (RULE_PRESTAGE_RECORD,
                  asked (job, TOK_PRESTAGE) ? STEP_NOTHING : STEP_PRESTAGE_RECORD);
}

/* Proposal done, its breakdowns read and its resources not sent (the
 * one caller, PROPOSAL_DONE, holds only then): pre-staging chosen first,
 * then the resources, once (the Setup and a pre-staged job's let-go are
 * other look rules').
 */
static struct step proposal_ready (const struct dws_engine *e, const struct job *job)
{
    if (prestage_unchosen (job))
        return prestage_choose (e, job);
    return prestage_refused (job) ? chose (RULE_RESOURCES_REFUSAL, STEP_SEND_REFUSAL)
                                  : chose (RULE_RESOURCES, STEP_SEND_RESOURCES);
}

/* The Workflow is gone and we did not delete it (or we did: DELETING; a
 * given-up pre-staged job's is created again, unless the job ended
 * meanwhile, its epilog released then).
 */
static struct step gone (const struct job *job)
{
    if (job->phase == PHASE_DELETING) {
        if (job->ps.restage == RESTAGE_UNPINNED && !job->epilog && !job->excepted)
            return chose (RULE_GIVEN_UP_DELETED, STEP_PRESTAGE_AGAIN);
        struct step st = chose (RULE_DELETED_FORGET, STEP_FORGET);
        st.end_epilog = job->epilog == EPILOG_ACTIVE || job->epilog == EPILOG_RELEASING;
        return st;
    }
    if (!phase_exists (job))
        return make (STEP_NOTHING); /* an older object of the same name */
    if (phase_desired (job) <= WF_PROPOSAL && !job->epilog && !job->toredown && job->directives)
        return chose (RULE_VANISHED_EARLY, STEP_RECREATE); /* no storage exists yet */
    if (job->epilog)
        return chose (RULE_VANISHED_IN_EPILOG, STEP_END_EPILOG);
    return job->excepted ? chose (RULE_VANISHED_FAILED, STEP_FORGET)
                         : chose (RULE_DELETED_OUTSIDE, STEP_RAISE_GONE);
}

/* Hosts were given up in the state the job still waits for. */
static bool forcing (const struct job *job)
{
    return job->forced != WF_NONE && job->forced == phase_desired (job)
           && phase_handled (job) < job->forced && !job->excepted && !job->toredown;
}

/* DWS resets forceReady at the transition it raced (the Workflow in the
 * state, not ready, spec.forceReady false): ask again.
 */
static struct step force_check (const struct job *job)
{
    const struct wfview *v = &job->view;
    if (!forcing (job) || asked (job, TOK_FORCE_READY)
        || v->state != job->forced
        || v->desired != job->forced || v->force_ready_state == job->forced || v->ready)
        return make (STEP_NOTHING);
    return chose (RULE_FORCE_READY_RESET, STEP_FORCE_READY_AGAIN);
}

/* A timeout's culprits were read while state s still waits: give up
 * `total` hosts in all (within the tolerance), else fail the job.  Lustre
 * cannot lose a rabbit: Setup fails whole.
 */
static struct step culprits (const struct job *job, enum wf_state s, int total)
{
    if (phase_desired (job) != s || phase_handled (job) >= s || job->excepted)
        return make (STEP_NOTHING);
    /* fail: the input's type is "dws-timeout" */
    if (s == WF_SETUP && asks_lustre (job))
        return chose (RULE_LUSTRE_TIMEOUT, STEP_FAIL);
    if (total <= 0 || job->tolerance <= 0 || total > job->tolerance)
        return chose (RULE_OVER_TOLERANCE, STEP_FAIL);
    return chose (RULE_WITHIN_TOLERANCE, STEP_NODE_FAILURE);
}

/* Do [rabbit.limits] hold it, with what admit.c counted (what its user,
 * bank and user within the bank hold, and the older jobs that stay)?
 */
static bool over_limit (const struct dws_engine *e, const struct job *job)
{
    char why[8];
    if (!e->cfg.limits || job->lim.held.use[LIMITS_USER].jobs < 0)
        return false;
    struct limits_who who = {job->userid, job->username, job->bank};
    return job->lim.behind > 0
           || limits_job_verdict (e->cfg.limits, &who, &job->lim.held, job->lim.behind >= 0,
                                  job->gib < 0 ? 0 : job->gib, why, sizeof (why))
                  != LIMITS_GO;
}

/* A waiting job whose scopes' use was counted again: it goes, or its
 * reason is written again when what they hold changed.
 */
static struct step limited (const struct dws_engine *e, const struct job *job)
{
    char why[DWS_ERROR_TEXT_MAX];
    struct limits_who who = {job->userid, job->username, job->bank};
    enum limits_verdict v = limits_job_verdict (e->cfg.limits, &who, &job->lim.held,
                                                job->lim.behind >= 0,
                                                job->gib < 0 ? 0 : job->gib, why, sizeof (why));
    if (v == LIMITS_GO && job->lim.behind <= 0)
        return chose (RULE_LIMIT_ROOM, STEP_ADMIT_GO);
    if (v == LIMITS_WAIT && (!job->lim.why || strcmp (job->lim.why, why) != 0))
        return chose (RULE_LIMIT_STILL, STEP_STILL_WAITING);
    return make (STEP_NOTHING);
}

/* The step for news `on` of a request, or what a restart found of one. */
static struct step next_request (const struct dws_engine *e, const struct job *job,
                                 enum news on, int arg)
{
    enum wf_state desired = phase_desired (job);
    enum wf_state handled = phase_handled (job);
    switch (on) {
        case NEWS_CREATE:
            /* a waiting job goes when its turn comes (admit.c's count) */
            if (job->phase != PHASE_NONE)
                return make (STEP_NOTHING);
            return !job->epilog && over_limit (e, job) ? chose (RULE_OVER_LIMIT, STEP_WAIT_LIMIT)
                                                       : chose (RULE_CREATE, STEP_SEND_CREATE);
        case NEWS_TEARDOWN_REQUEST:
            if (job->phase == PHASE_LIMITED)
                return chose (RULE_ENDED_WAITING, STEP_END_WAITING);
            return phase_exists (job) ? by (RULE_TEARDOWN_ASKED, teardown (job))
                                      : make (STEP_NOTHING);
        case NEWS_POST_RUN:
        case NEWS_EPILOG_UNRUN:
            if (job->phase == PHASE_LIMITED) /* no Workflow comes: nothing to tear down */
                return chose (RULE_ENDED_WAITING, STEP_END_WAITING);
            if (!phase_exists (job)) /* the create has not answered */
                return chose (RULE_EPILOG_BEFORE_CREATED, STEP_TEARDOWN_LATER);
            if (on == NEWS_EPILOG_UNRUN || desired < WF_PRERUN || job->toredown)
                return by (RULE_EPILOG_BEFORE_RUN, teardown (job));
            return by (RULE_EPILOG_BEGAN, ask (job, WF_POSTRUN));
        case NEWS_SETUP_AGAIN:
            /* its prolog-remove may have been lost with a reloaded plugin */
            if (!job->hosts && (desired <= WF_PROPOSAL || job->ps.staged))
                return make (STEP_NOTHING); /* the first: not a repeated one */
            if (handled >= WF_PRERUN && desired == WF_PRERUN
                && !asked (job, TOK_SECRET)
                && !job->epilog)
                return by (RULE_SETUP_REPEATED, prolog (job));
            return make (STEP_NOTHING);
        case NEWS_RESEND:
            /* a pre-staged job waits in DEPEND past Proposal */
            if (job->resources_sent
                && ((handled == WF_PROPOSAL && desired == WF_PROPOSAL) || job->ps.staged)
                && !job->hosts && !job->excepted && !job->toredown && desired < WF_TEARDOWN)
                return chose (RULE_RESOURCES_LOST, STEP_RESOURCES_AGAIN);
            return make (STEP_NOTHING);
        case NEWS_ABORT:
            if (job->phase == PHASE_LIMITED) /* no Workflow to read or tear down */
                return chose (RULE_ENDED_WAITING, STEP_END_WAITING);
            return phase_exists (job) ? chose (RULE_ABORTED, STEP_ABORT_READS)
                                      : chose (RULE_ABORTED_EARLY, STEP_ABORT_NOTED);
        case NEWS_CREATE_REFUSED:
            /* no Workflow, nothing else waits (no directives of an
             * earlier create, no dws.setup's hosts for a Workflow to
             * create again): it fails by this answer */
            if (job->phase == PHASE_NONE && !job->hosts && !job->directives
                && json_array_size (job->create_msgids) == 0)
                return chose (RULE_CREATE_REFUSED, STEP_FORGET);
            return make (STEP_NOTHING);
        case NEWS_CREATE_AGAIN:
            /* a LIMITED job waits, created later: answered, as a repeated one */
            if (!phase_exists (job) && job->phase != PHASE_LIMITED)
                return chose (RULE_CREATE_JOINED, STEP_JOIN_CREATE);
            return chose (RULE_CREATE_ANSWERED, STEP_CREATE_ANSWER);
        case NEWS_SETUP_REQUEST:
            if (!job->hosts && (desired <= WF_PROPOSAL || job->ps.staged))
                return chose (RULE_SETUP_CAME, STEP_RECORD_HOSTS); /* the first: record them */
            return chose (RULE_SETUP_ANSWERED, STEP_SETUP_ANSWER);
        case NEWS_POST_RUN_REQUEST:
            if (!job->epilog)
                return chose (RULE_POST_RUN_CAME, STEP_BEGIN_EPILOG);
            return chose (RULE_POST_RUN_REPEATED,
                          job->epilog == EPILOG_REMOVED ? STEP_EPILOG_AGAIN : STEP_NOTHING);
        case NEWS_INACTIVE:
            /* its computes released after PostRun on purpose: not ended */
            if (job->listed_at_start && phase_exists (job) && job->phase != PHASE_DELETING
                && !job->released)
                return chose (RULE_ENDED_AWAY, STEP_END_AWAY);
            return make (STEP_NOTHING);
        case NEWS_ORPHAN_RUN:
            /* a given-up job's nodes may have come before the restart:
             * its Workflow is created again with them */
            if (phase_exists (job) && !job->hosts && !job->excepted
                && (desired == WF_PROPOSAL || (job->ps.staged && handled == WF_DATAIN)
                    || (job->ps.staged && job->ps.restage == RESTAGE_UNPINNED)))
                return chose (RULE_RUNNING_UNREAD, STEP_READ_R);
            return make (STEP_NOTHING);
        case NEWS_ORPHAN_CLEANUP:
            if (!job->epilog && phase_exists (job)) /* its dws.post_run was lost */
                return chose (RULE_EPILOG_FOUND, STEP_BEGIN_EPILOG);
            if (job->released && job->epilog == EPILOG_REMOVED && phase_exists (job))
                return chose (RULE_RELEASED_FOUND, STEP_RELEASE_EPILOG_AGAIN); /* stopped before
                                                                             * its epilog ended */
            return make (STEP_NOTHING);
        case NEWS_JOB_INFO:
            if (job->info_for == INFO_HOLD) /* nothing if given up meanwhile */
                return chose (RULE_R_FOR_HOLD,
                              job->phase == PHASE_RELEASING ? STEP_HOLD : STEP_NOTHING);
            if (job->info_for == INFO_SCHED && job->phase != PHASE_NONE)
                return chose (RULE_R_FOR_LUSTRE, STEP_PLACE_LUSTRE);
            if (job->phase != PHASE_NONE)
                return chose (RULE_R_FOR_SETUP,
                              job->info_for == INFO_R ? STEP_SETUP_FROM_R : STEP_NOTHING);
            return chose (RULE_JOBSPEC_READ, STEP_FROM_JOBSPEC);
        case NEWS_R_READ:
            if (job->hosts || (desired != WF_PROPOSAL && !job->ps.staged))
                return make (STEP_NOTHING); /* dws.setup came meanwhile */
            return chose (RULE_R_HOSTS, STEP_RECORD_HOSTS);
        case NEWS_JOBSPEC:
            /* the jobtap plugin keeps the dws.create of a job that uses
             * persistent storage until its other dependencies are gone:
             * not lost, still to come */
            if ((job->deps & JOB_DEP_OTHER) && json_array_size (job->create_msgids) == 0 && arg)
                return chose (RULE_CREATE_TO_COME, STEP_CREATE_LATER);
            return chose (RULE_CREATE_FROM_JOBSPEC, STEP_CREATE_FROM_JOBSPEC);
        case NEWS_UNMADE:
            return chose (RULE_UNMADE, STEP_FAIL_FORGET);
        default:
            break;
    }
    return make (STEP_NOTHING);
}

/* The step for news `on` of failures, timeouts and teardown. */
static struct step next_failure (const struct dws_engine *e, const struct job *job,
                                 enum news on, int arg)
{
    (void)e;
    enum wf_state desired = phase_desired (job);
    enum wf_state handled = phase_handled (job);
    switch (on) {
        case NEWS_ERROR:
            /* DataOut failed before its held ssds' patch answered, which
             * the Workflow in DataOut with them shows written: the
             * computes go back first (a step that comes first: the news
             * stays), then the failure is the released job's */
            if (desired == WF_DATAOUT && job->epilog == EPILOG_RELEASING
                && (written (job, TOK_DATAOUT_HELD) || wfview_annotation (&job->view, ANN_HELD))) {
                struct step st = chose (RULE_ERROR_RELEASED_FIRST, STEP_RELEASE_EPILOG);
                st.first = true;
                return st;
            }
            if (desired == WF_POSTRUN && handled < WF_POSTRUN) /* drain who did not unmount */
                return chose (RULE_POSTRUN_ERROR, STEP_POSTRUN_FAILED);
            return chose (RULE_WORKFLOW_ERROR, desired != WF_TEARDOWN ? STEP_FAIL : STEP_NOTHING);
        case NEWS_FAILED:
            /* how its owner learns it; Teardown follows (a look: excepted) */
            if (job->released)
                return chose (RULE_FAILED_RELEASED, STEP_FAIL_RECORD);
            return job->excepted ? chose (RULE_FAILED_AGAIN, STEP_FAIL_AGAIN)
                                 : chose (RULE_FAILED, STEP_FAIL_RAISE);
        case NEWS_TIMER:
            return on_timer (job, (enum timer_kind)arg);
        case NEWS_WRITE_FAILED:
            return chose (RULE_WRITE_FAILED, STEP_FAIL); /* "cannot WHAT: ..." */
        case NEWS_CREATE_FAILED: {
            struct step st = json_array_size (job->create_msgids) == 0 && !job->excepted
                                 ? chose (RULE_CREATE_FAILED, STEP_RAISE)
                                 : chose (RULE_CREATE_FAILED_FORGET, STEP_FORGET);
            st.end_epilog = job->epilog != EPILOG_NONE;
            return st;
        }
        case NEWS_FORCE_REFUSED:
            return chose (RULE_FORCE_REFUSED, /* a dws-timeout */
                          forcing (job) ? STEP_FAIL : STEP_NOTHING);
        case NEWS_SETUP_CULPRITS:
            return culprits (job, WF_SETUP, arg);
        case NEWS_MOUNT_CULPRITS:
            return culprits (job, WF_PRERUN, arg);
        case NEWS_POSTRUN_CULPRITS:
            if (desired == WF_POSTRUN && handled < WF_POSTRUN)
                return chose (RULE_POSTRUN_TIMEOUT_DRAIN, STEP_DRAIN_FAIL);
            return make (STEP_NOTHING);
        case NEWS_POSTRUN_FAILED_READ:
            if (desired == WF_POSTRUN && handled < WF_POSTRUN)
                return chose (RULE_POSTRUN_ERROR_DRAIN, STEP_DRAIN_FAIL);
            return chose (RULE_POSTRUN_ERROR_LATE, STEP_FAIL);
        default:
            break;
    }
    return make (STEP_NOTHING);
}

/* The Workflow was seen since it was last read: a watch event, its
 * create's answer or its deletion (each counted in wf_seen); the step
 * that reads it catches wf_read up (STEP_WORKFLOW_SEEN, STEP_FINALIZER;
 * a deletion: take ()).
 */
static bool seen_unread (const struct job *job)
{
    return job->wf_seen != job->wf_read;
}

/* The last sighting found it deleted. */
static bool seen_gone (const struct job *job)
{
    return job->wf_gone != 0 && job->wf_gone == job->wf_seen;
}

/* What a Workflow seen anew asks: its deletion, what gone () says; one of
 * ours taken up (the job has no phase: a restart), our finalizer removed
 * while we delete it, the job failed when it is deleted outside Flux,
 * else its status read (an Error, a TransientCondition).  While its
 * create is out it waits: the create's answer moves the job to Proposal
 * (take ()), where it is read.
 */
static struct step seen (const struct job *job)
{
    if (seen_gone (job))
        return gone (job);
    if (job->phase == PHASE_CREATING)
        return make (STEP_NOTHING);
    if (job->phase == PHASE_NONE)
        return adopt (job);
    if (job->phase == PHASE_DELETING) /* if it still has ours, not asked yet */
        return chose (RULE_FINALIZER_REMOVE,
                      asked (job, TOK_FINALIZER) ? STEP_NOTHING : STEP_FINALIZER);
    if (job->view.deleting && !job->toredown)
        return chose (RULE_DELETING_OUTSIDE, STEP_FAIL_OUTSIDE);
    return chose (RULE_SEEN_READ, STEP_WORKFLOW_SEEN);
}

/* Does Fluxion hold every ssd the job holds down (rabbit health)? */
static bool holds_applied (const struct dws_engine *e, const struct job *job)
{
    return job->held && dws_health_hold_applied (e->health, job->id);
}

/* Did a rule choose a step? */
static bool taken (struct step st)
{
    return st.kind != STEP_NOTHING;
}

/* --- the look rules (rules.h's DWS_ENGINE_LOOK_RULES, in that order) ---
 * Each guard reads the job's phase and facts alone and returns the step
 * it takes, or STEP_NOTHING when it does not hold; each is one that holds
 * no more once its step is taken, so a job looked at again with nothing
 * new takes none.
 */

/* the Workflow seen anew: what it shows is read first */
static struct step look_seen (const struct dws_engine *e, const struct job *job)
{
    (void)e;
    return seen_unread (job) ? seen (job) : make (STEP_NOTHING);
}

/* a state complete: what follows it (after_done; Proposal's, but for its
 * breakdowns, are the rules below: they hold again for a pre-staged job) */
static struct step look_state_done (const struct dws_engine *e, const struct job *job)
{
    enum wf_state done = phase_completed (job);
    return done != WF_NONE ? after_done (e, job, done) : make (STEP_NOTHING);
}

/* the workflow token read while PreRun is done: the prolog ends with it */
static struct step look_token_read (const struct dws_engine *e, const struct job *job)
{
    (void)e;
    return make (job->wf_token && phase_desired (job) == WF_PRERUN && !job->excepted
                     ? STEP_PROLOG_REMOVE
                     : STEP_NOTHING);
}

/* the reads before Teardown answered: its patch, once (the Workflow taken
 * up in Teardown says it already) */
static struct step look_teardown_reads_done (const struct dws_engine *e, const struct job *job)
{
    (void)e;
    return make (job->teardown_reads == 0 && phase_desired (job) == WF_TEARDOWN
                         && phase_exists (job) && job->view.desired != WF_TEARDOWN
                         && !asked (job, TOK_STATE)
                     ? STEP_TEARDOWN_PATCH
                     : STEP_NOTHING);
}

/* to Teardown without PostRun or DataOut (a failure, dws.teardown,
 * dws.abort once its reads answer, DataOut skipped), or on its way there
 * (its epilog marked, its deletion) */
static struct step look_teardown_wanted (const struct dws_engine *e, const struct job *job)
{
    (void)e;
    return phase_exists (job)
                   && (job->toredown || job->excepted || phase_desired (job) == WF_TEARDOWN)
               ? teardown (job)
               : make (STEP_NOTHING);
}

/* its hosts recorded on the Workflow (the patch answered): the Servers
 * while the Setup waits for them (set up and filled before its nodes, the
 * Computes: after_done) */
static struct step look_hosts_written (const struct dws_engine *e, const struct job *job)
{
    (void)e;
    return make (written (job, TOK_HOSTS) && !job->excepted && !job->toredown && !job->ps.staged
                         && job->setup != SETUP_NONE && phase_desired (job) <= WF_PROPOSAL
                         && phase_handled (job) >= WF_PROPOSAL
                     ? STEP_SERVERS
                     : STEP_NOTHING);
}

/* every Servers filled: Setup */
static struct step look_servers_written (const struct dws_engine *e, const struct job *job)
{
    (void)e;
    return written (job, TOK_SERVERS) && !job->excepted && !job->toredown ? ask (job, WF_SETUP)
                                                                         : make (STEP_NOTHING);
}

/* the Computes filled: DataIn */
static struct step look_computes_written (const struct dws_engine *e, const struct job *job)
{
    (void)e;
    return written (job, TOK_COMPUTES) && !job->excepted && phase_desired (job) == WF_SETUP
               ? ask (job, WF_DATAIN)
               : make (STEP_NOTHING);
}

/* pre-staged, the Computes filled: its data is in already: PreRun */
static struct step look_prestaged_computes_written (const struct dws_engine *e,
                                                    const struct job *job)
{
    (void)e;
    return written (job, TOK_COMPUTES) && !job->excepted && job->ps.staged
                   && phase_desired (job) == WF_DATAIN && phase_handled (job) == WF_DATAIN
               ? ask (job, WF_PRERUN)
               : make (STEP_NOTHING);
}

/* DataOut with the held ssds is on the Workflow: a restart now takes it
 * up released (release.c); one torn down meanwhile ends its epilog with
 * the deletion */
static struct step look_dataout_held_written (const struct dws_engine *e, const struct job *job)
{
    (void)e;
    return make (written (job, TOK_DATAOUT_HELD) && job->epilog == EPILOG_RELEASING
                         && phase_desired (job) == WF_DATAOUT
                     ? STEP_RELEASE_EPILOG
                     : STEP_NOTHING);
}

/* Proposal done: its breakdowns read, then pre-staging weighed and
 * chosen, its resources sent (again: a pre-staged job's resend) */
static struct step look_proposal_done (const struct dws_engine *e, const struct job *job)
{
    return !job->excepted && !job->resources_sent && phase_exists (job)
                   && ((phase_handled (job) == WF_PROPOSAL && phase_desired (job) == WF_PROPOSAL)
                       || job->ps.staged)
               ? proposal (e, job)
               : make (STEP_NOTHING);
}

/* a pre-staged job's resources sent again: let go again */
static struct step look_resent_let_go (const struct dws_engine *e, const struct job *job)
{
    (void)e;
    return make (job->resources_sent && prestaging (job)
                         && job->ps.stage == PRESTAGE_READY
                         && (job->deps & JOB_DEP_PRESTAGE)
                     ? STEP_PRESTAGE_READY
                     : STEP_NOTHING);
}

/* a pre-staged job's storage placed before its nodes: its ssd picked (and
 * recorded), held down in Fluxion, which is asked then whether it is
 * free, then the Servers */
static struct step look_prestage_hold_due (const struct dws_engine *e, const struct job *job)
{
    return make (prestage_may_start (job) && (job->ps.ssd == SSD_PICKED || job->ps.ssd == SSD_FINDING)
                         && !dws_health_holding (e->health, job->id)
                     ? STEP_PRESTAGE_HOLD
                     : STEP_NOTHING);
}

static struct step look_prestage_verify_due (const struct dws_engine *e, const struct job *job)
{
    return make (prestage_may_start (job) && job->ps.ssd == SSD_PICKED && holds_applied (e, job)
                     ? STEP_PRESTAGE_VERIFY
                     : STEP_NOTHING);
}

static struct step look_prestage_start (const struct dws_engine *e, const struct job *job)
{
    (void)e;
    return prestage_may_start (job) ? prestage_next (job) : make (STEP_NOTHING);
}

/* a rabbit its node-local storage waits on went down: that storage serves
 * its own chassis alone, and with no node yet nothing can be given up
 * within a tolerance */
static struct step look_prestage_lost (const struct dws_engine *e, const struct job *job)
{
    return make (job->ps.counts && !job->hosts && !job->excepted && !job->toredown
                         && phase_desired (job) < WF_TEARDOWN
                         && dws_health_first_down (e->health, job->ps.counts)
                     ? STEP_PRESTAGE_LOST
                     : STEP_NOTHING);
}

/* its computes to go back, its R read, and Fluxion holds its ssds down
 * (rabbit health says so; the release timer runs: undecided) */
static struct step look_release_held (const struct dws_engine *e, const struct job *job)
{
    return make (job->phase == PHASE_RELEASING && job->info_for != INFO_HOLD
                         && (job->timers & (1u << T_RELEASE)) && holds_applied (e, job)
                     ? STEP_RELEASED
                     : STEP_NOTHING);
}

/* its computes' release decided (the release timer stopped): the ssds
 * held, DataOut with them on the Workflow; or the computes kept */
static struct step look_release_decided (const struct dws_engine *e, const struct job *job)
{
    (void)e;
    if (job->phase != PHASE_RELEASING || (job->timers & (1u << T_RELEASE)))
        return make (STEP_NOTHING);
    return job->epilog == EPILOG_RELEASING ? dataout_held (job) : ask (job, WF_DATAOUT);
}

/* its DataIn's progress read: stalled, or read again later */
static struct step look_datain_progress (const struct dws_engine *e, const struct job *job)
{
    return datain_read_answer (e, job);
}

/* hosts given up, and DWS reset forceReady at the transition it raced */
static struct step look_force_ready_reset (const struct dws_engine *e, const struct job *job)
{
    (void)e;
    return force_check (job);
}

/* its nodes came as it was let go of its chassis, and can be weighed */
static struct step look_nodes_came (const struct dws_engine *e, const struct job *job)
{
    return nodes_decide (e, job) ? nodes_came (e, job) : make (STEP_NOTHING);
}

/* dws.setup came (or its hosts are known): the Setup starts (it waits
 * for the map, its breakdowns, its give-up written or refused) */
static struct step look_setup_may_start (const struct dws_engine *e, const struct job *job)
{
    return setup_may_start (job) ? setup_start (e, job) : make (STEP_NOTHING);
}

/* dws-limit shown held and its Workflow exists: the old service went away
 * before the create's answer removed it, or the removal reached no plugin
 * (a reload); without one, the create's answer removes it (or admit.c's
 * pass lets the job go first) */
static struct step look_limit_shown (const struct dws_engine *e, const struct job *job)
{
    (void)e;
    return make (job->lim.shown && (job->deps & JOB_DEP_LIMIT) && phase_exists (job)
                     ? STEP_LIMIT_REMOVE
                     : STEP_NOTHING);
}

/* a waiting job's use counted anew in this event (admit.c): it goes, or
 * its reason is written again when what they hold changed; the count
 * holds only in the event that made it */
static struct step look_limit_recounted (const struct dws_engine *e, const struct job *job)
{
    return job->phase == PHASE_LIMITED && job->lim.recounted == e->events ? limited (e, job)
                                                                            : make (STEP_NOTHING);
}

/* room may have come since it found none: the rabbits may be known now,
 * or it picks before its timer */
static struct step look_room_came (const struct dws_engine *e, const struct job *job)
{
    if (!job->ps.wait[0] || job->ps.room_tried == e->room_gen)
        return make (STEP_NOTHING);
    if (weighed_unknown (job))
        return chose (RULE_ROOM_REWEIGH, STEP_PRESTAGE_WEIGH);
    if (prestage_may_start (job) && job->ps.ssd == SSD_UNPICKED)
        return chose (RULE_ROOM_PICK, STEP_PRESTAGE_PICK);
    return make (STEP_NOTHING);
}

typedef struct step (*look_f) (const struct dws_engine *e, const struct job *job);

struct look_rule {
    enum rule rule;
    look_f guard;
};

#define LOOK_RULE_ROW(name, guard, why) {RULE_##name, guard},

/* Pre-staging's wing, in the order its rules are tried. */
static const struct look_rule prestage_rules[] = {DWS_ENGINE_PRESTAGE_RULES (LOOK_RULE_ROW)};

/* The first of `n` rules that holds chooses the step, named by it unless
 * a rule of the family it went through named it; *held: that rule.
 */
static struct step first_holding (const struct look_rule *rules, size_t n,
                                  const struct dws_engine *e, const struct job *job,
                                  enum rule *held)
{
    for (size_t i = 0; i < n; i++) {
        struct step st = rules[i].guard (e, job);
        if (taken (st)) {
            *held = rules[i].rule;
            return by (rules[i].rule, st);
        }
    }
    return make (STEP_NOTHING);
}

/* Is the job in pre-staging: pre-staged, holding a pre-staged chassis'
 * storage, given up, or waiting for room?  Each of the wing's rules holds
 * only then.
 */
static bool in_prestaging (const struct job *job)
{
    return job->ps.staged || job->ps.counts || job->ps.restage != RESTAGE_NONE
           || job->ps.wait[0];
}

/* pre-staging: its wing's rules, for a job in pre-staging alone; the
 * first that holds chooses (struct step's wing), named by it unless a
 * rule of the family it went through named it */
static struct step look_prestage (const struct dws_engine *e, const struct job *job)
{
    if (!in_prestaging (job))
        return make (STEP_NOTHING);
    enum rule held = RULE_NONE;
    struct step st = first_holding (prestage_rules,
                                    sizeof (prestage_rules) / sizeof (prestage_rules[0]), e, job,
                                    &held);
    st.wing = held;
    return st;
}

/* The look rules in the order they are tried. */
static const struct look_rule look_rules[] = {DWS_ENGINE_LOOK_RULES (LOOK_RULE_ROW)};

#undef LOOK_RULE_ROW

/* The job is looked at: the first look rule that holds chooses its step
 * (struct step's look), named by it unless a rule of the family or wing
 * it went through named it.
 */
static struct step settle (const struct dws_engine *e, const struct job *job)
{
    enum rule held = RULE_NONE;
    struct step st = first_holding (look_rules, sizeof (look_rules) / sizeof (look_rules[0]), e,
                                    job, &held);
    st.look = held;
    return st;
}

/* The step for NEWS_LOOK: what the job's facts say. */
static struct step next_look (const struct dws_engine *e, const struct job *job,
                              enum news on, int arg)
{
    (void)on;
    (void)arg;
    return settle (e, job);
}

typedef struct step (*next_f) (const struct dws_engine *e, const struct job *job,
                               enum news on, int arg);

/* The decider of each news' family (decide.h's list). */
static const next_f next_of[NEWS_COUNT] = {
#define NEWS_NEXT(name, family) [NEWS_##name] = next_##family,
    DWS_ENGINE_NEWS (NEWS_NEXT)
#undef NEWS_NEXT
};

/* The step for news `on` (`arg`: what the news says beside it, read from
 * the job by news_arg ()): its family's answer.
 */
static struct step next (const struct dws_engine *e, const struct job *job, enum news on,
                         int arg)
{
    return on < NEWS_COUNT ? next_of[on](e, job, on, arg) : make (STEP_NOTHING);
}

/* "Complete" is DWS' word: spec.desiredState == status.state == S and
 * status.ready.  The engine acts once on each state's completion, and
 * only for the state it asked for, so a stale watch event, a repeated
 * one, or a re-list after a 410 changes nothing.  Not while the create
 * has not answered, nor in status Error (NEWS_ERROR says what follows).
 */
static bool completes (const struct job *job)
{
    const struct wfview *v = &job->view;
    return phase_exists (job) && v->state != WF_NONE && v->ready && v->state == v->desired
           && v->state == phase_desired (job) && v->state > phase_handled (job)
           && !(v->status && !strcmp (v->status, "Error"));
}

/* The job's first news, NEWS_COUNT when it has none. */
static enum news first_news (const struct job *job)
{
    return job->news ? (enum news)__builtin_ctzll (job->news) : NEWS_COUNT;
}

/* The first timer kind fired and not yet decided, T_NKINDS if none. */
static enum timer_kind first_fired (const struct job *job)
{
    for (int k = 0; k < T_NKINDS; k++)
        if (job->fired & (1u << k))
            return (enum timer_kind)k;
    return T_NKINDS;
}

/* What news `on` says beside itself, as the job's facts record it. */
static int news_arg (const struct job *job, enum news on)
{
    switch (on) {
        case NEWS_TIMER:
            return first_fired (job);
        case NEWS_SETUP_CULPRITS:
        case NEWS_MOUNT_CULPRITS:
            return job->culprits;
        case NEWS_JOBSPEC:
            return dws_dw_uses_persistent (job->directives) == 1;
        default:
            return 0;
    }
}

struct step decide_next (const struct dws_engine *e, const struct job *job)
{
    enum news on = first_news (job);
    struct step st = on == NEWS_COUNT ? make (STEP_NOTHING) : next (e, job, on, news_arg (job, on));
    st.news = on;
    return st;
}

bool decide_pending (const struct job *job)
{
    return job->news != 0;
}

/* The phase change news `on` is, the step decide_next () gives for it
 * (the news still on the job), and the step's own phase change.
 */
static struct step take (struct dws_engine *e, struct job *job, enum news on)
{
    enum wf_state done = WF_NONE;
    /* its create answered: the Workflow exists (Proposal); torn down
     * meanwhile, what it was made with is not read (Teardown follows) */
    if (on == NEWS_LOOK && job->phase == PHASE_CREATING && written (job, TOK_CREATE)
        && phase_event (e, job, PHASE_EV_SEEN, WF_NONE) == 0 && job->toredown)
        job->wf_read = job->wf_seen;
    /* what a sighting not yet read asks comes first (settle ()'s first
     * rule) */
    struct step sighting = on == NEWS_LOOK && seen_unread (job) ? seen (job) : make (STEP_NOTHING);
    /* its deletion seen: what follows is chosen from the phase it had,
     * and it is read once, whatever that was (a later phase must not take
     * it for its own) */
    if (on == NEWS_LOOK && seen_unread (job) && seen_gone (job)) {
        job->wf_read = job->wf_seen;
        if (taken (sighting)) {
            if (job->phase != PHASE_DELETING || sighting.kind == STEP_PRESTAGE_AGAIN)
                phase_event (e, job, PHASE_EV_VANISH, WF_NONE);
            return sighting;
        }
    }
    if (on == NEWS_ABORT || on == NEWS_TEARDOWN_REQUEST || on == NEWS_FAILED)
        job->toredown = true; /* without PostRun or DataOut */
    /* a look records the completion the Workflow shows (settle () acts on
     * it first: phase_completed), once what it was seen with is read */
    if (on == NEWS_LOOK && !taken (sighting) && completes (job)
        && phase_event (e, job, PHASE_EV_DONE, job->view.state) == 0)
        done = job->view.state;
    struct step st = decide_next (e, job);
    int rc = 0;
    switch (st.kind) {
        case STEP_SEND_CREATE:
        case STEP_ADMIT_GO:
            rc = phase_event (e, job, PHASE_EV_CREATE, WF_NONE);
            break;
        case STEP_ADOPT:
            rc = phase_event (e, job, PHASE_EV_ADOPT, st.state);
            break;
        case STEP_WAIT_LIMIT:
            rc = phase_event (e, job, PHASE_EV_WAIT, WF_NONE);
            break;
        case STEP_ASK:
        case STEP_DATAOUT_HELD:
            rc = phase_event (e, job, PHASE_EV_ASK, st.state);
            break;
        case STEP_TEARDOWN_BEGIN:
        case STEP_TEARDOWN_PATCH:
            rc = phase_event (e, job, PHASE_EV_ASK, WF_TEARDOWN);
            break;
        case STEP_RELEASE_START:
            rc = phase_event (e, job, PHASE_EV_RELEASE, WF_NONE);
            break;
        case STEP_DELETE:
        case STEP_DELETE_GIVEN_UP:
            rc = phase_event (e, job, PHASE_EV_DELETE, WF_NONE);
            break;
        case STEP_TEARDOWN_LATER:
            job->toredown = true;
            break;
        default:
            break;
    }
    if (rc < 0)
        st = make (STEP_NOTHING);
    st.done = done;
    return st;
}

struct step decide (struct dws_engine *e, struct job *job)
{
    enum news on = first_news (job);
    if (on == NEWS_COUNT)
        return make (STEP_NOTHING);
    enum timer_kind fired = on == NEWS_TIMER ? first_fired (job) : T_NKINDS;
    struct step st = take (e, job, on);
    /* the news is taken; a timer's only with the last of those fired, a
     * look only once it chooses nothing (the job settles to its fixed
     * point: a rule's step may let another rule hold), and none by a step
     * that comes before its answer (st.first) */
    if (fired != T_NKINDS)
        job->fired &= ~(1u << fired);
    if ((on != NEWS_TIMER || job->fired == 0) && (on != NEWS_LOOK || st.kind == STEP_NOTHING)
        && !st.first)
        job->news &= ~((uint64_t)1 << on);
    st.news = on;
    return st;
}

/* --- what a step is, for the record of why (why.c) -------------------------- */

static const char *const step_names[STEP_COUNT] = {
    [STEP_NOTHING] = "NOTHING",
#define STEP_NAME_ROW(name, verb) [STEP_##name] = #name,
    DWS_ENGINE_STEPS (STEP_NAME_ROW)
#undef STEP_NAME_ROW
    [STEP_TEARDOWN_LATER] = "TEARDOWN_LATER",
};

static const char *const news_names[NEWS_COUNT] = {
#define NEWS_NAME_ROW(name, family) [NEWS_##name] = #name,
    DWS_ENGINE_NEWS (NEWS_NAME_ROW)
#undef NEWS_NAME_ROW
};

const char *decide_word (const char *name, char out[DECIDE_WORD_MAX])
{
    size_t i = 0;
    for (; name[i] && i + 1 < DECIDE_WORD_MAX; i++)
        out[i] = name[i] == '_' ? '-' : (char)tolower ((unsigned char)name[i]);
    out[i] = '\0';
    return out;
}

const char *decide_step_name (const struct step *st)
{
    static char words[STEP_COUNT][DECIDE_WORD_MAX];
    if (st->kind <= STEP_NOTHING || st->kind >= STEP_COUNT)
        return NULL;
    return words[st->kind][0] ? words[st->kind] : decide_word (step_names[st->kind], words[st->kind]);
}

enum wf_state decide_asks (const struct step *st)
{
    switch (st->kind) {
        case STEP_ASK:
        case STEP_DATAOUT_HELD:
        case STEP_ADOPT:
            return st->state;
        case STEP_TEARDOWN_BEGIN: /* (its patch follows the reads: the same ask) */
            return WF_TEARDOWN;
        default:
            return WF_NONE;
    }
}

bool decide_fails (const struct step *st)
{
    switch (st->kind) {
        case STEP_FAIL:
        case STEP_FAIL_OUTSIDE:
        case STEP_FAIL_FORGET:
        case STEP_RAISE:
        case STEP_RAISE_GONE:
        case STEP_DRAIN_FAIL:
        case STEP_POSTRUN_FAILED:
        case STEP_PRESTAGE_LOST:
        case STEP_PRESTAGE_REFUSE:
        case STEP_DATAIN_STALLED:
        case STEP_FAIL_RAISE:
        case STEP_FAIL_RECORD:
            return true;
        default:
            return false;
    }
}

enum decide_side decide_side (const struct step *st)
{
    switch (st->kind) {
        case STEP_PRESTAGE_YES:
        case STEP_PRESTAGE_UNFIT:
        case STEP_PRESTAGE_TOO_BIG:
        case STEP_PRESTAGE_FULL:
        case STEP_PRESTAGE_REFUSE:
        case STEP_PRESTAGE_GIVE_UP:
        case STEP_PRESTAGE_KEEP:
        case STEP_PRESTAGE_REDO:
        case STEP_PRESTAGE_AGAIN:
            return DECIDE_SIDE_PRESTAGE;
        case STEP_RELEASE_START:
        case STEP_RELEASED:
        case STEP_KEEP_COMPUTES:
            return DECIDE_SIDE_RELEASE;
        default:
            return DECIDE_SIDE_NONE;
    }
}

bool decide_waits (const struct step *st)
{
    return st->kind == STEP_WAIT_LIMIT || st->kind == STEP_STILL_WAITING
           || st->kind == STEP_WAIT_MAP;
}

bool decide_waiting (const struct job *job)
{
    return job->phase == PHASE_LIMITED || job->setup == SETUP_WAITS_MAP;
}

void decide_facts (const struct job *job, const struct step *st, enum job_phase was, char *out,
                   size_t size)
{
    static char news_words[NEWS_COUNT][DECIDE_WORD_MAX];
    size_t n = 0;
    if (size == 0)
        return;
    out[0] = '\0';
#define FACT(...)                                                                              \
    do {                                                                                       \
        if (n < size)                                                                          \
            n += (size_t)snprintf (out + n, size - n, __VA_ARGS__);                            \
    } while (0)
    FACT ("phase=%s", phase_name (was));
    if (st->news < NEWS_COUNT && st->news != NEWS_LOOK)
        FACT (" news=%s", news_words[st->news][0] ? news_words[st->news]
                                                   : decide_word (news_names[st->news],
                                                              news_words[st->news]));
    if (job->toredown)
        FACT (" toredown");
    if (job->excepted)
        FACT (" excepted");
    if (job->epilog != EPILOG_NONE)
        FACT (" epilog=%s", sidestate_epilog_name (job->epilog));
    if (job->ps.staged)
        FACT (" prestage");
    if (job->ps.restage != RESTAGE_NONE)
        FACT (" restage=%s", sidestate_restage_name (job->ps.restage));
    if (job->released)
        FACT (" released");
    if (job->hosts)
        FACT (" hosts");
    if (job->forced != WF_NONE)
        FACT (" forced=%s", wfstate_name (job->forced));
    if (job->view.status && strcmp (job->view.status, "Completed") != 0)
        FACT (" status=%s", job->view.status);
#undef FACT
}
