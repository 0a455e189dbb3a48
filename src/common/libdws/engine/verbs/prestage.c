/* prestage.c - a rabbit job's storage set up and filled before its nodes
 * are allocated (pre-staging; doc/guide/prestage.rst).
 *
 * A pre-staged job waits in DEPEND on dws-prestage (jobwire.h), which the
 * jobtap plugin adds as it applies the job's resource-update: its
 * Workflow goes through Setup and DataIn with no Computes, then
 * the removal of dws-prestage lets the job go to the scheduler, whose nodes come to
 * dws.setup, the Computes and PreRun.  A Lustre file system needs ssd
 * that no other job takes meanwhile: the vertices are picked here
 * (dws_health_pick), written on the Workflow (ANN_PRESTAGE) and held down
 * in Fluxion as early release holds them (rabbits_hold), until Teardown.
 * Fluxion is then asked whether a job had any of them before the hold
 * applied (find "sched-now=allocated and status=down"); those are picked
 * again.  Node-local storage (xfs, gfs2, raw) is held the same way on
 * chassis chosen first (placement/nodelocal.h, dws_health_pick_chassis):
 * its Servers get the job's nodes per rabbit, and the removal of
 * dws-prestage carries the jobspec that holds the scheduler to those
 * chassis' computes.  The decider (decide.c) chooses each step; this file
 * carries them out.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/rabbitconf.h"
#include "datain.h"
#include "engine/advance.h"
#include "engine/decider/phase.h"
#include "engine/decider/sidestate.h"
#include "engine/job.h"
#include "engine/rabbits.h"
#include "engine/shapes/act.h"
#include "engine/shapes/answer.h"
#include "engine/shapes/token.h"
#include "engine/shapes/wfview.h"
#include "parse/breakdown.h"
#include "parse/directive.h"
#include "placement/lustre.h"
#include "placement/nodelocal.h"
#include "placement/rabbitmap.h"
#include "placement/rssd.h"
#include "prestage.h"
#include "util/hostlist.h"
#include "util/jsonio.h"
#include "wire/jobwire.h"
#include "workflow.h"

/* A Fluxion find for the vertices a job holds that are also down. */
#define FIND_CRITERIA "sched-now=allocated and status=down"

static bool has_command (json_t *directives, const char *cmd)
{
    const char *const cmds[] = {cmd, NULL};
    return dws_dw_any_command (directives, cmds, 0) == 1;
}

/* Node-local storage: the even split of its nodes over chassis that
 * hold them (nodelocal.h), and the GiB it holds.
 */
static bool placeable_local (struct dws_engine *e, struct job *job, json_t *breakdowns,
                             int64_t *gib, struct prestage_split *split, dws_error_t *err)
{
    int64_t nodes = dws_jobspec_node_count (job->resources, err);
    if (nodes < 1)
        return false;
    int64_t node_gib = dws_breakdown_gib_per_node (breakdowns, nodes, e->cfg.min_allocation_size,
                                                   err);
    if (node_gib < 0)
        return false;
    size_t n;
    int64_t *sizes = rabbits_chassis_sizes (e, &n);
    int rc = dws_nodelocal_split (nodes, sizes, n, &split->chassis, &split->per, err);
    free (sizes);
    if (rc < 0)
        return false;
    split->node_gib = node_gib;
    *gib = nodes * node_gib;
    int64_t fit = rabbits_chassis_fit (e, split);
    if (fit < split->chassis) {
        /* a graph without vertex sizes (or not read yet) never holds it */
        dws_errorf (err, "its %lld nodes go %lld on each of %lld rabbits, each with an ssd"
                    " vertex of %lld GiB per node: %lld rabbits of the Fluxion graph could"
                    " hold that (flux dws2jgf writes the vertices' sizes)",
                    (long long)nodes, (long long)split->per, (long long)split->chassis,
                    (long long)node_gib, (long long)fit);
        return false;
    }
    return true;
}

/* Whether the job's storage can be placed before its nodes (1), and the
 * ssd GiB it then holds (*gib: 0 for none: persistentdw, copy_in into it;
 * *split: node-local storage's, chassis 0 for Lustre); 0 with the reason
 * in err; -1 when it has storage to place and rabbit health does not know
 * the graph and the instance's nodes yet (just after a start).
 */
static int placeable (struct dws_engine *e, struct job *job, json_t *breakdowns, int64_t *gib,
                       struct prestage_split *split, dws_error_t *err)
{
    size_t i, k;
    json_t *bd, *set;
    bool sets = false;
    *gib = 0;
    memset (split, 0, sizeof (*split));
    if (has_command (job->directives, "create_persistent")
        || has_command (job->directives, "destroy_persistent")) {
        dws_errorf (err, "a job that creates or destroys persistent storage is not pre-staged");
        return 0;
    }
    json_array_foreach (breakdowns, i, bd) {
        json_t *all = json_object_get (
            json_object_get (json_object_get (bd, "status"), "storage"), "allocationSets");
        json_array_foreach (all, k, set)
            sets = true;
    }
    if (!sets)
        return 1; /* persistent storage only: nothing to place */
    if (!e->cfg.fluxion) {
        dws_errorf (err, "its storage is held in Fluxion, and the service runs without it");
        return 0;
    }
    if (!rabbits_known (e))
        return -1;
    struct dws_lustre_conf conf = e->cfg.lustre;
    conf.spread = true; /* placed where there is room: it does not follow the nodes */
    if (!dws_lustre_spreads (job->resources, breakdowns, &conf)) {
        dws_error_t why;
        if (dws_nodelocal_placeable (job->resources, breakdowns, &why))
            return placeable_local (e, job, breakdowns, gib, split, err) ? 1 : 0;
        if (strstr (why.text, "no node-local")) /* Lustre, not a plain node request */
            dws_errorf (err, "Lustre is set up before the nodes only for a job asking for"
                             " nodes alone (-N)");
        else
            *err = why;
        return 0;
    }
    bool unchanged = false, spread = false;
    json_t *res = dws_lustre_rewrite (job->resources, breakdowns, &conf,
                                      e->cfg.min_allocation_size, &unchanged, &spread, err);
    if (!res)
        return 0;
    *gib = json_integer_value (json_object_get (json_array_get (res, 1), "count"));
    json_decref (res);
    if (!spread || *gib <= 0) {
        dws_errorf (err, "its Lustre could not be sized");
        return 0;
    }
    if (rabbits_graph_gib (e) < *gib) {
        /* a graph without vertex sizes (or not read yet) could never hold it */
        dws_errorf (err, "the Fluxion graph's ssd vertices hold %lld GiB (flux dws2jgf writes"
                    " their sizes), less than its %lld", (long long)rabbits_graph_gib (e),
                    (long long)*gib);
        return 0;
    }
    return rabbits_lustre_fits (e, *gib, err) == 0 ? 1 : 0;
}

/* The GiB a pre-staged job holds: its vertices' whole size once picked
 * (a vertex is held whole, whatever part of it the Lustre uses), else
 * what its Lustre asks. */
static int64_t held_gib (const struct job *j)
{
    if (!j->reserved || !j->held)
        return j->ps.gib;
    int64_t gib = 0;
    const char *rabbit;
    json_t *v;
    json_object_foreach (j->reserved, rabbit, v)
        gib += json_integer_value (v);
    return gib;
}

/* The jobs holding storage without nodes now, and the GiB they hold. */
static void held_ahead (struct dws_engine *e, int64_t *jobs, int64_t *gib)
{
    *jobs = *gib = 0;
    for (size_t b = 0; b < e->nbuckets; b++)
        for (struct job *j = e->table[b]; j; j = j->next)
            if (j->ps.staged && !j->hosts && !j->excepted && phase_desired (j) < WF_TEARDOWN) {
                (*jobs)++;
                *gib += held_gib (j);
            }
}

void prestage_weigh (struct dws_engine *e, struct job *job, json_t *breakdowns)
{
    struct prestage_facts *w = &job->ps.weighed;
    dws_error_t why;
    free (w->unfit);
    w->unfit = NULL;
    sidestate_prestage_stage (e, job, PRESTAGE_WEIGHED);
    int rc = placeable (e, job, breakdowns, &w->gib, &w->split, &why);
    /* just after a start the graph or the instance's nodes may not be
     * known yet: weighed again once they are (any rabbit health input),
     * or judged without them after PRESTAGE_KNOWN_WAIT */
    if (rc < 0 && (w->unknown_since == 0 || e->now - w->unknown_since < PRESTAGE_KNOWN_WAIT)) {
        if (w->unknown_since == 0)
            w->unknown_since = e->now;
        snprintf (job->ps.wait, sizeof (job->ps.wait),
                  "the Fluxion graph and the instance's nodes are not known yet");
        job->ps.room_tried = e->room_gen;
        e->room_wanted = true;
        act_timer_start (e, job, T_PRESTAGE, PRESTAGE_RETRY);
        return;
    }
    if (w->unknown_since > 0) {
        act_timer_stop (e, job, T_PRESTAGE);
        job->ps.wait[0] = '\0';
    }
    w->unknown_since = 0;
    if (rc < 0)
        snprintf (why.text, sizeof (why.text), "the Fluxion graph and the instance's nodes"
                  " were not known within %g s of its Proposal", PRESTAGE_KNOWN_WAIT);
    if (rc <= 0)
        w->unfit = strdup (why.text);
    w->nodes = dws_jobspec_node_count (job->resources, NULL);
    w->instance_nodes = (int64_t)rabbits_instance_nodes (e);
    held_ahead (e, &w->ahead_jobs, &w->ahead_gib);
}

/* The choice made: its Proposal's outcome follows (the decider looks: a
 * refusal is sent for a dw_prestage=yes it cannot keep). */
static void chosen (struct dws_engine *e, struct job *job, bool prestage)
{
    sidestate_prestage_stage (e, job, PRESTAGE_CHOSEN);
    job->ps.staged = prestage;
    if (prestage) {
        job->ps.gib = job->ps.weighed.gib;
        job->ps.split = job->ps.weighed.split;
        job->ps.since = e->now;
    }
    advance_mark (e, job, NEWS_LOOK);
}

void prestage_no (struct dws_engine *e, struct job *job, const struct step *st)
{
    (void)st;
    chosen (e, job, false);
}

void prestage_unfit (struct dws_engine *e, struct job *job, const struct step *st)
{
    (void)st;
    snprintf (job->ps.not, sizeof (job->ps.not), "%s", job->ps.weighed.unfit);
    chosen (e, job, false);
}

void prestage_too_big (struct dws_engine *e, struct job *job, const struct step *st)
{
    (void)st;
    snprintf (job->ps.not, sizeof (job->ps.not),
              "it asks for %lld nodes, the instance has %lld", (long long)job->ps.weighed.nodes,
              (long long)job->ps.weighed.instance_nodes);
    act_log (e, "info", "%s: not pre-staged: %s", job->name, job->ps.not);
    chosen (e, job, false);
}

void prestage_full (struct dws_engine *e, struct job *job, const struct step *st)
{
    (void)st;
    snprintf (job->ps.not, sizeof (job->ps.not),
              "%lld jobs hold %lld GiB ahead of their nodes (rabbit.prestage_max_jobs %lld,"
              " prestage_max_gib %lld)", (long long)job->ps.weighed.ahead_jobs,
              (long long)job->ps.weighed.ahead_gib, (long long)e->cfg.prestage_max_jobs,
              (long long)e->cfg.prestage_max_gib);
    act_log (e, "info", "%s: not pre-staged: %s", job->name, job->ps.not);
    chosen (e, job, false);
}

/* STEP_PRESTAGE_REFUSE: not pre-staged; its resource-update says why
 * (STEP_SEND_REFUSAL). */
void prestage_refuse (struct dws_engine *e, struct job *job, const struct step *st)
{
    (void)st;
    chosen (e, job, false);
}

void prestage_yes (struct dws_engine *e, struct job *job, const struct step *st)
{
    (void)st;
    chosen (e, job, true);
}

/* ANN_PRESTAGE as it now stands: the choice, and the ssd once picked. */
static json_t *note (struct job *job)
{
    json_t *o = json_pack ("{s:f s:I}", "since", job->ps.since, "gib",
                           (json_int_t)job->ps.gib);
    if (o && job->held)
        json_object_set (o, "held", job->held);
    if (o && job->reserved)
        json_object_set (o, "reserved", job->reserved);
    if (o && job->ps.split.chassis > 0)
        json_object_set_new (o, "split", json_pack ("{s:I s:I s:I}", "chassis",
                                                    (json_int_t)job->ps.split.chassis, "per",
                                                    (json_int_t)job->ps.split.per, "node_gib",
                                                    (json_int_t)job->ps.split.node_gib));
    if (o && job->ps.counts && job->ps.hosts) {
        json_object_set (o, "counts", job->ps.counts);
        json_object_set_new (o, "hosts", json_string (job->ps.hosts));
    }
    char *s = o ? json_dumps (o, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref (o);
    json_t *ann = s ? json_pack ("{s:s}", ANN_PRESTAGE, s) : NULL;
    free (s);
    return ann;
}

static void write_note (struct dws_engine *e, struct job *job)
{
    char token[TOKEN_SIZE];
    act_k8s (e, "patch", "Workflow", e->cfg.namespace, job->name,
             json_pack ("{s:{s:o}}", "metadata", "annotations", note (job)),
             token_for (token, sizeof (token), TOK_PRESTAGE, job));
    job->asking |= (uint64_t)1 << TOK_PRESTAGE; /* until it is answered */
}

void prestage_record (struct dws_engine *e, struct job *job, const struct step *st)
{
    (void)st;
    act_log (e, "info", "%s: pre-staged: Setup and DataIn before its nodes%s", job->name,
             job->ps.split.chassis > 0 ? " (its node-local storage held in Fluxion)"
             : job->ps.gib > 0 ? " (its Lustre held in Fluxion)"
                                     : "");
    write_note (e, job);
}

/* The vertices a pick must leave out, as a set {path: true}: those a job
 * had when they were held for this one (job->ps.avoid), and those
 * picked for another job whose hold is not applied yet -- rabbit health
 * counts a vertex as held only from the hold, which follows the record
 * on the Workflow, and two jobs picked in between must not share one.
 */
static json_t *pick_avoid (struct dws_engine *e, struct job *job)
{
    json_t *avoid = job->ps.avoid ? json_copy (job->ps.avoid) : json_object ();
    size_t i;
    json_t *p;
    for (size_t b = 0; avoid && b < e->nbuckets; b++)
        for (struct job *j = e->table[b]; j; j = j->next)
            if (j != job)
                json_array_foreach (j->held, i, p)
                    json_object_set_new (avoid, json_string_value (p), json_true ());
    return avoid;
}

/* The ssd asks ([[slots, GiB]]) of the jobs ahead of this one that get
 * their ssd with their nodes and have none yet: submitted before it
 * (Fluxion's first-come queue orders jobs of one priority by submission,
 * and a Flux job ID grows with it), not pre-staged, not allocated.  Were
 * the pick to take the room they need, such a job could fit nowhere, a
 * first-come queue would wait on it, and this job, behind it, would hold
 * its storage without ever getting its nodes.
 */
static json_t *pick_leave (struct dws_engine *e, struct job *job)
{
    json_t *leave = json_array ();
    for (size_t b = 0; leave && b < e->nbuckets; b++)
        for (struct job *j = e->table[b]; j; j = j->next)
            if (j->id < job->id && j->ssd_asks && !j->ps.staged && !j->hosts && !j->excepted
                && phase_desired (j) < WF_TEARDOWN)
                json_array_extend (leave, j->ssd_asks);
    return leave;
}

/* Node-local storage picked: the rabbits it is set up on, with the job's
 * nodes each serves, and their computes, which its nodes come from.
 */
static bool pinned_to (struct dws_engine *e, struct job *job, json_t *hosts)
{
    json_t *counts = json_object ();
    struct dws_hostlist *hl = dws_hostlist_create ();
    const char *rabbit;
    json_t *v;
    size_t i;
    json_object_foreach (job->reserved, rabbit, v)
        json_object_set_new (counts, rabbit, json_integer (job->ps.split.per));
    json_array_foreach (hosts, i, v)
        dws_hostlist_append_host (hl, json_string_value (v), NULL);
    char *s = hl ? dws_hostlist_encode (hl) : NULL;
    dws_hostlist_destroy (hl);
    if (!counts || !s) {
        json_decref (counts);
        free (s);
        return false;
    }
    if (!job->ps.counts)
        e->pinned++;
    json_decref (job->ps.counts);
    job->ps.counts = counts;
    free (job->ps.hosts);
    job->ps.hosts = s;
    return true;
}

void prestage_pick (struct dws_engine *e, struct job *job, const struct step *st)
{
    dws_error_t err;
    (void)st;
    json_t *reserved = NULL;
    rabbits_unhold (e, job); /* a pick again starts from nothing held */
    sidestate_ssd (e, job, SSD_UNPICKED);
    json_t *avoid = pick_avoid (e, job);
    json_t *leave = pick_leave (e, job);
    json_t *hosts = NULL;
    json_t *paths = NULL;
    if (avoid && leave && job->ps.split.chassis > 0)
        paths = rabbits_pick_chassis (e, &job->ps.split, avoid, leave, &reserved, &hosts, &err);
    else if (avoid && leave)
        paths = rabbits_pick (e, job->ps.gib, avoid, leave, &reserved, &err);
    if (!avoid || !leave)
        snprintf (err.text, sizeof (err.text), "out of memory");
    json_decref (avoid);
    json_decref (leave);
    if (!paths) {
        if (!job->ps.wait[0])
            act_log (e, "info", "%s: waits for its rabbit storage: %s", job->name, err.text);
        snprintf (job->ps.wait, sizeof (job->ps.wait), "%.150s", err.text);
        job->ps.room_tried = e->room_gen;
        e->room_wanted = true;
        act_timer_start (e, job, T_PRESTAGE, PRESTAGE_RETRY);
        act_record (e, job);
        return;
    }
    job->ps.wait[0] = '\0';
    act_timer_stop (e, job, T_PRESTAGE);
    json_decref (job->reserved);
    job->reserved = reserved;
    job->held = paths;
    if (hosts && !pinned_to (e, job, hosts)) {
        json_decref (hosts);
        act_log (e, "err", "%s: out of memory", job->name);
        return;
    }
    json_decref (hosts);
    rabbits_job (e, job); /* its rabbits are in use from now */
    write_note (e, job);
}

void prestage_noted (struct dws_engine *e, struct job *job)
{
    sidestate_prestage_reach (e, job, PRESTAGE_RECORDED);
    if (job->held && job->ps.ssd == SSD_UNPICKED) {
        sidestate_ssd (e, job, SSD_PICKED);
        act_record (e, job);
    }
}

void prestage_hold (struct dws_engine *e, struct job *job, const struct step *st)
{
    (void)st;
    rabbits_hold (e, job);
    if (rabbits_hold_applied (e, job))
        advance_mark (e, job, NEWS_LOOK);
}

void prestage_verify (struct dws_engine *e, struct job *job, const struct step *st)
{
    char token[TOKEN_SIZE];
    (void)st;
    sidestate_ssd (e, job, SSD_FINDING);
    act_rpc (e, "sched-fluxion-resource.find",
             json_pack ("{s:s s:s}", "criteria", FIND_CRITERIA, "format", "jgf"),
             token_for (token, sizeof (token), TOK_PRESTAGE_FIND, job));
}

/* The ssd paths of a find's JGF answer ({"R": {"graph": ...}}, "R" null
 * when nothing matches), as a set {path: true}, or NULL with the reason.
 */
static json_t *found_ssds (json_t *payload, dws_error_t *err)
{
    json_t *R = json_object_get (payload, "R");
    json_t *paths = R && !json_is_null (R)
                        ? dws_rssd_graph_paths (json_object_get (R, "graph"),
                                                "Fluxion's find answer", err)
                        : json_array ();
    json_t *set = paths ? json_object () : NULL;
    size_t i;
    json_t *p;
    json_array_foreach (paths, i, p)
        json_object_set_new (set, json_string_value (p), json_true ());
    json_decref (paths);
    return set;
}

int prestage_found (struct dws_engine *e, struct job *job, json_t *event)
{
    if (job->ps.ssd != SSD_FINDING)
        return 0;
    sidestate_ssd (e, job, SSD_PICKED);
    if (!job->held)
        return 0; /* given up meanwhile */
    dws_error_t err;
    json_t *taken = NULL;
    if (json_is_true (json_object_get (event, "ok")))
        taken = found_ssds (json_object_get (event, "payload"), &err);
    else
        snprintf (err.text, sizeof (err.text), "%s",
                  dws_json_str_or (json_object_get (event, "errstr"), "no answer"));
    if (!taken) {
        act_log (e, "warning", "%s: cannot ask Fluxion whether its ssd is free (%s):"
                 " picking it again in %g s", job->name, err.text, PRESTAGE_RETRY);
        sidestate_ssd (e, job, SSD_UNPICKED);
        rabbits_unhold (e, job);
        act_timer_start (e, job, T_PRESTAGE, PRESTAGE_RETRY);
        return -1;
    }
    size_t i;
    json_t *p;
    int conflicts = 0;
    json_array_foreach (job->held, i, p) {
        if (!json_object_get (taken, json_string_value (p)))
            continue;
        if (!job->ps.avoid)
            job->ps.avoid = json_object ();
        json_object_set_new (job->ps.avoid, json_string_value (p), json_true ());
        conflicts++;
    }
    json_decref (taken);
    if (conflicts > 0) {
        act_log (e, "info", "%s: %d of the ssd vertices held for it were a job's: picking"
                 " others", job->name, conflicts);
        sidestate_ssd (e, job, SSD_UNPICKED);
    }
    else {
        sidestate_ssd (e, job, SSD_VERIFIED);
        if (job->ps.split.chassis > 0)
            act_log (e, "info", "%s: holds %lld GiB of rabbit ssd for %lld nodes on each of"
                     " %lld rabbits; its nodes will be those rabbits' computes (%s)", job->name,
                     (long long)job->ps.gib, (long long)job->ps.split.per,
                     (long long)job->ps.split.chassis, job->ps.hosts ? job->ps.hosts : "?");
        else
            act_log (e, "info", "%s: holds %lld GiB of rabbit ssd for its Lustre", job->name,
                     (long long)job->ps.gib);
    }
    return conflicts;
}

/* What holds node-local storage's job to the chassis it is set up on, for
 * the dependency's removal (flux-dws' own keys, which the jobtap plugin
 * applies as a jobspec-update first): "resources" chassis(c){node(k)} and
 * "constraint" {"hostlist": [those chassis' computes]}; NULL for any
 * other job.
 */
static json_t *pin (struct dws_engine *e, struct job *job)
{
    dws_error_t err;
    if (job->ps.split.chassis <= 0 || !job->ps.hosts)
        return NULL;
    json_t *res = dws_nodelocal_pin (job->resources, job->ps.split.chassis, job->ps.split.per, &err);
    if (!res) {
        act_log (e, "err", "%s: cannot hold it to its chassis: %s", job->name, err.text);
        return NULL;
    }
    return json_pack ("{s:o s:o}", "resources", res, "constraint",
                      dws_nodelocal_constraint (job->ps.hosts));
}

void prestage_ready (struct dws_engine *e, struct job *job, const struct step *st)
{
    (void)st;
    if (sidestate_prestage_reach (e, job, PRESTAGE_READY))
        act_log (e, "info", "%s: set up and filled: let go to the scheduler", job->name);
    act_dependency (e, job, DWS_JOBWIRE_PRESTAGE_DEPENDENCY, false, pin (e, job));
    job->deps &= ~JOB_DEP_PRESTAGE;
    if (job->ps.counts && e->cfg.prestage_node_wait > 0) /* held to its chassis */
        act_timer_start (e, job, T_NODE_WAIT, e->cfg.prestage_node_wait);
    act_record (e, job);
}

/* The job as one of the usual way, its pre-staging given up (why): its
 * resources sent already (the unpin's), nothing to weigh again.
 */
static void again (struct dws_engine *e, struct job *job, const char *why)
{
    sidestate_restage (e, job, RESTAGE_AGAIN);
    job->resources_sent = true;
    sidestate_prestage_stage (e, job, PRESTAGE_CHOSEN);
    if (why != job->ps.restage_why)
        snprintf (job->ps.restage_why, sizeof (job->ps.restage_why), "%s", why);
    snprintf (job->ps.not, sizeof (job->ps.not), "given up: %.180s",
              job->ps.restage_why);
}

void prestage_adopt (struct dws_engine *e, struct job *job)
{
    const char *asked = wfview_annotation (&job->view, ANN_PRESTAGE_ASKED);
    if (asked) {
        json_t *v = json_string (asked);
        job->prestage_asked = dws_rabbitconf_prestage_attr (v, NULL);
        json_decref (v);
    }
    const char *s = wfview_annotation (&job->view, ANN_PRESTAGE);
    const char *given_up = wfview_annotation (&job->view, ANN_GIVEN_UP);
    json_t *o = s ? json_loads (s, 0, NULL) : NULL;
    if (!json_is_object (o)) {
        json_decref (o);
        if (given_up) /* created again after its pre-staging was given up */
            again (e, job, given_up);
        return;
    }
    job->ps.staged = true;
    sidestate_prestage_stage (e, job, PRESTAGE_RECORDED);
    job->ps.since = json_number_value (json_object_get (o, "since"));
    job->ps.gib = json_integer_value (json_object_get (o, "gib"));
    json_t *split = json_object_get (o, "split");
    job->ps.split.chassis = json_integer_value (json_object_get (split, "chassis"));
    job->ps.split.per = json_integer_value (json_object_get (split, "per"));
    job->ps.split.node_gib = json_integer_value (json_object_get (split, "node_gib"));
    json_t *counts = json_object_get (o, "counts");
    const char *hosts = json_string_value (json_object_get (o, "hosts"));
    if (json_is_object (counts) && hosts) {
        if (!job->ps.counts)
            e->pinned++;
        json_decref (job->ps.counts);
        job->ps.counts = json_incref (counts);
        free (job->ps.hosts);
        job->ps.hosts = strdup (hosts);
    }
    /* to be torn down, then set up again the usual way; not when its
     * nodes came first (its hosts recorded): it kept its storage */
    if (given_up && !job->hosts) {
        snprintf (job->ps.restage_why, sizeof (job->ps.restage_why), "%s", given_up);
        sidestate_restage (e, job, job->view.desired == WF_TEARDOWN ? RESTAGE_UNPINNED
                                                                    : RESTAGE_UNPINNING);
    }
    json_t *held = json_object_get (o, "held");
    json_t *reserved = json_object_get (o, "reserved");
    if (json_is_array (held) && json_is_object (reserved) && !job->hosts) {
        json_decref (job->held);
        job->held = json_incref (held);
        json_decref (job->reserved);
        job->reserved = json_incref (reserved);
        /* Setup was asked only once Fluxion had said the ssd was free */
        sidestate_ssd (e, job, job->view.desired > WF_PROPOSAL ? SSD_VERIFIED : SSD_PICKED);
        rabbits_hold (e, job);
        rabbits_job (e, job);
    }
    else if (json_is_array (held) && job->hosts) {
        json_decref (job->held);
        job->held = json_incref (held);
        sidestate_ssd (e, job, SSD_VERIFIED);
        rabbits_hold (e, job);
    }
    json_decref (o);
}

json_t *prestage_view (const struct dws_engine *e, const struct job *job)
{
    if (!job->ps.staged)
        return NULL;
    json_t *v = json_pack ("{s:f s:I s:b s:b}", "since", job->ps.since, "gib",
                           (json_int_t)job->ps.gib, "ready", job->ps.stage == PRESTAGE_READY,
                           "nodes", job->hosts != NULL);
    if (v && job->ps.wait[0])
        json_object_set_new (v, "waiting", json_string (job->ps.wait));
    json_t *datain = v && !job->hosts && job->ps.stage < PRESTAGE_READY
                         ? datain_view (e, job)
                         : NULL;
    if (datain)
        json_object_set_new (v, "datain", datain);
    if (v && job->ps.counts && job->ps.hosts) /* node-local: its chassis */
        json_object_set_new (v, "chassis", json_pack ("{s:O s:s}", "counts",
                                                      job->ps.counts, "hosts",
                                                      job->ps.hosts));
    if (v && job->ps.restage != RESTAGE_NONE)
        json_object_set_new (v, "given_up", json_string (job->ps.restage_why));
    if (v && !job->hosts && job->ps.stage == PRESTAGE_READY
        && job->ps.restage == RESTAGE_NONE && job->ps.counts && e->cfg.prestage_node_wait > 0)
        json_object_set_new (v, "node_wait", json_real (e->cfg.prestage_node_wait));
    return v;
}

void prestage_lost (struct dws_engine *e, struct job *job, const struct step *st)
{
    (void)st;
    const char *rabbit = rabbits_first_down (e, job->ps.counts);
    workflow_fail_job (e, job, "exception",
                       NOTE_PREFIX "rabbit %s went down while the job's node-local storage,"
                       " set up on it before the job's nodes, waited for them",
                       rabbit ? rabbit : "?");
}

void prestage_rabbits (struct dws_engine *e)
{
    unsigned long gen = rabbits_updown_gen (e);
    if (e->pinned <= 0 || gen == e->updown_seen)
        return; /* no job waits on its rabbits, or none went down: no walk */
    e->updown_seen = gen;
    for (size_t b = 0; b < e->nbuckets; b++)
        for (struct job *j = e->table[b]; j; j = j->next)
            if (j->ps.counts && !j->hosts && !j->excepted
                && rabbits_first_down (e, j->ps.counts))
                advance_mark (e, j, NEWS_LOOK);
}

void prestage_room (struct dws_engine *e)
{
    e->room_gen++; /* who found none tries again (decide.c) */
    if (!e->room_wanted)
        return; /* no job waits for room: the job table is not walked */
    /* first come, first served: advance_due () takes them in the order
     * of their IDs (a Flux job ID grows with its submission time, and a
     * job in DEPEND has no priority yet).  A job too large for the room
     * there is does not stop a later one that fits (the decider says
     * which may pick now).  Room stays wanted while one waited: the next
     * change's walk finds whether any still does. */
    bool wanted = false;
    for (size_t b = 0; b < e->nbuckets; b++)
        for (struct job *j = e->table[b]; j; j = j->next)
            if (j->ps.wait[0]) {
                advance_mark (e, j, NEWS_LOOK);
                wanted = true;
            }
    e->room_wanted = wanted;
}

/* --- giving pre-staged node-local storage up (rabbit.prestage_node_wait) --- */

/* Node-local storage set up before the nodes serves the nodes of the
 * rabbits picked, as many on each as it was set up for; the jobspec held
 * the scheduler to them, but a jobtap plugin that does not know the pin
 * (older than the service) lets the job go anywhere: said here, not
 * found out by failed mounts.
 */
bool prestage_on_chassis (struct dws_engine *e, struct job *job, dws_error_t *err)
{
    if (dws_rabbitmap_counts_equal (e->map, job->hosts, job->ps.counts))
        return true;
    json_t *counts = dws_rabbitmap_counts (e->map, job->hosts, err);
    if (!counts)
        return false;
    char *got = json_dumps (counts, JSON_COMPACT | JSON_SORT_KEYS);
    char *want = json_dumps (job->ps.counts, JSON_COMPACT | JSON_SORT_KEYS);
    dws_errorf (err, "its nodes %s are not those its storage was set up for before them"
                " (nodes per rabbit: %s, not %s); is the dws jobtap plugin older than the"
                " dws service?", job->hosts, got ? got : "?", want ? want : "?");
    free (got);
    free (want);
    json_decref (counts);
    return false;
}


void prestage_give_up (struct dws_engine *e, struct job *job, const struct step *st)
{
    char token[TOKEN_SIZE];
    (void)st;
    snprintf (job->ps.restage_why, sizeof (job->ps.restage_why),
              "its nodes did not come within %g s of its data being in on %s"
              " (rabbit.prestage_node_wait)", e->cfg.prestage_node_wait,
              job->ps.hosts ? job->ps.hosts : "its chassis");
    act_log (e, "info", "%s: %s: letting it go of its chassis; its storage is set up again"
             " the usual way when its nodes come", job->name, job->ps.restage_why);
    sidestate_restage (e, job, RESTAGE_NOTING);
    act_k8s (e, "patch", "Workflow", e->cfg.namespace, job->name,
             json_pack ("{s:{s:{s:s}}}", "metadata", "annotations", ANN_GIVEN_UP,
                        job->ps.restage_why),
             token_for (token, sizeof (token), TOK_GIVE_UP, job));
    act_record (e, job);
}

void prestage_on_given_up (struct dws_engine *e, enum token_kind kind, struct job *job,
                           json_t *event)
{
    (void)kind;
    if (job->ps.restage != RESTAGE_NOTING)
        return; /* a late answer */
    struct k8s_answer a = answer_of (event);
    if (!a.ok) {
        act_log (e, "warning", "%s: cannot record that its pre-staging is given up (%s):"
                 " it waits for its chassis", job->name, answer_message (event));
        sidestate_restage (e, job, RESTAGE_NONE);
        job->ps.restage_why[0] = '\0';
        act_record (e, job);
    }
    else
        sidestate_restage (e, job, RESTAGE_UNPINNING);
    advance_mark (e, job, NEWS_LOOK);
}

void prestage_kept (struct dws_engine *e, struct job *job)
{
    sidestate_restage (e, job, RESTAGE_NONE);
    job->ps.restage_why[0] = '\0';
}

void prestage_on_unpin (struct dws_engine *e, enum token_kind kind, struct job *job,
                        json_t *event)
{
    (void)kind;
    if (job->ps.restage != RESTAGE_UNPINNING)
        return; /* a late answer */
    const char *errstr = dws_json_str_or (json_object_get (event, "errstr"), "no answer");
    job->asking &= ~((uint64_t)1 << TOK_UNPIN);
    if (json_is_true (json_object_get (event, "ok"))) {
        sidestate_restage (e, job, RESTAGE_UNPINNED);
        job->toredown = true; /* without PostRun or DataOut */
        act_log (e, "info", "%s: let go of its chassis: its pre-staged storage is torn down",
                 job->name);
    }
    else if (job->hosts || json_integer_value (json_object_get (event, "errnum")) == EBUSY) {
        /* its nodes came (the plugin's EBUSY: the job runs), perhaps
         * by an unpin that the plugin applied but whose answer was lost
         * with a restarted service: which nodes decides (decide.c: STEP_PRESTAGE_KEEP or _REDO),
         * once they are known (dws.setup, or its R read) */
        sidestate_restage (e, job, RESTAGE_NODES_CAME);
        act_log (e, "info", "%s: not let go of its chassis (%s): its storage is kept if its"
                 " nodes are there", job->name, errstr);
    }
    else {
        /* an older jobtap plugin (no such method), or another refusal:
         * the storage set up on its chassis is kept, the job waits for it */
        act_log (e, "warning", "%s: cannot let it go of its chassis (%s): its pre-staged"
                 " storage is kept", job->name, errstr);
        sidestate_restage (e, job, RESTAGE_NONE);
        job->ps.restage_why[0] = '\0';
    }
    act_record (e, job);
    advance_mark (e, job, NEWS_LOOK);
}

/* Its nodes came before it was let go of its chassis (RESTAGE_NODES_CAME)
 * and the decider compared them: the re-staging moves `to`, said, and the
 * job is looked at again. */
static void nodes_weighed (struct dws_engine *e, struct job *job, enum prestage_restage to,
                           const char *said)
{
    sidestate_restage (e, job, to);
    act_log (e, "info", "%s: its nodes %s are %s", job->name, job->hosts, said);
    act_record (e, job);
    advance_mark (e, job, NEWS_LOOK);
}

/* STEP_PRESTAGE_KEEP: they are those of its chassis: its storage serves
 * them. */
void prestage_keep (struct dws_engine *e, struct job *job, const struct step *st)
{
    (void)st;
    job->ps.restage_why[0] = '\0';
    nodes_weighed (e, job, RESTAGE_NONE,
                   "those of its chassis: its pre-staged storage is kept");
}

/* STEP_PRESTAGE_REDO: they are others (the plugin let it go before a
 * restart): the storage set up on its own chassis cannot serve them:
 * torn down, set up again for them. */
void prestage_redo (struct dws_engine *e, struct job *job, const struct step *st)
{
    (void)st;
    job->toredown = true; /* without PostRun or DataOut */
    nodes_weighed (e, job, RESTAGE_UNPINNED,
                   "not those of its chassis: its pre-staged storage is torn down");
}

void prestage_again (struct dws_engine *e, struct job *job, const struct step *st)
{
    (void)st;
    act_log (e, "info", "%s: its pre-staged storage is gone: creating its Workflow again,%s",
             job->name, job->hosts ? " for its nodes" : " to wait for its nodes");
    job->ps.staged = false;
    job->ps.gib = 0;
    memset (&job->ps.split, 0, sizeof (job->ps.split));
    if (job->ps.counts)
        e->pinned--;
    json_decref (job->ps.counts);
    job->ps.counts = NULL;
    free (job->ps.hosts);
    job->ps.hosts = NULL;
    sidestate_ssd (e, job, SSD_UNPICKED);
    rabbits_unhold (e, job); /* at Teardown already */
    json_decref (job->reserved);
    job->reserved = NULL;
    json_decref (job->ps.avoid);
    job->ps.avoid = NULL;
    job->ps.wait[0] = '\0';
    memset (&job->datain, 0, sizeof (job->datain));
    again (e, job, job->ps.restage_why);
    job->toredown = false;
    job->teardown_reads = 0;
    job->forced = WF_NONE;
    json_decref (job->breakdowns);
    job->breakdowns = json_object ();
    job->breakdowns_wanted = 0;
    sidestate_setup (e, job, job->hosts ? SETUP_PENDING : SETUP_NONE);
    job->servers_pending = 0;
    job->written = 0; /* nothing written to the new one yet */
    job->asking = 0; /* nor asked (its Teardown patch, ...) */
    if (job->hosts)
        rabbits_job (e, job); /* its rabbits, from its nodes */
    job_set_wf (job, NULL);
    workflow_create (e, job); /* with its hosts, if they came: Setup follows */
}
