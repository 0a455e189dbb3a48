/* progress.c - a job's Workflow moved on by its watch events: taken
 * up after a restart, created again when it vanished, and each state's
 * completion acted on (Proposal to PreRun here; the verbs in workflow.c).
 *
 * "Complete" is DWS' word: spec.desiredState == status.state == S and
 * status.ready.  The engine acts once on each state's completion
 * (phase_handled (job)) and only for the state it asked for (phase_desired (job)), so a
 * stale watch event, a repeated one, or a re-list after a 410 changes
 * nothing.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admit.h"
#include "config/rabbitconf.h"
#include "engine/advance.h"
#include "engine/decider/phase.h"
#include "engine/decider/sidestate.h"
#include "engine/job.h"
#include "engine/rabbits.h"
#include "engine/shapes/act.h"
#include "engine/shapes/answer.h"
#include "engine/shapes/hosts.h"
#include "engine/shapes/token.h"
#include "engine/shapes/wfstate.h"
#include "engine/shapes/wfview.h"
#include "fault.h"
#include "parse/breakdown.h"
#include "parse/policy.h"
#include "placement/lustre.h"
#include "placement/nodelocal.h"
#include "placement/rabbitmap.h"
#include "placement/servers.h"
#include "prestage.h"
#include "progress.h"
#include "release.h"
#include "util/hostlist.h"
#include "util/jsonio.h"
#include "wire/action.h"
#include "wire/jobwire.h"
#include "wire/wire.h"
#include "workflow.h"

/* true when every breakdown the Workflow lists has been read; otherwise
 * read the missing ones (once).
 */
static bool breakdowns_ready (struct dws_engine *e, struct job *job)
{
    char token[TOKEN_SIZE];
    json_t *refs = job->view.breakdowns;
    size_t i;
    json_t *ref;
    if (job->breakdowns_wanted > 0)
        return false;
    json_array_foreach (refs, i, ref) {
        const char *name = json_string_value (json_object_get (ref, "name"));
        const char *ns = json_string_value (json_object_get (ref, "namespace"));
        if (!name || json_object_get (job->breakdowns, name))
            continue;
        job->breakdowns_wanted++;
        act_k8s (e, "get", "DirectiveBreakdown", ns ? ns : e->cfg.namespace, name, NULL,
                 token_for (token, sizeof (token), TOK_BREAKDOWN, job));
    }
    return job->breakdowns_wanted == 0;
}

static json_t *breakdown_list (struct job *job)
{
    json_t *list = json_array ();
    const char *k;
    json_t *v;
    json_object_foreach (job->breakdowns, k, v)
        json_array_append (list, v);
    return list;
}

/* The resources of the job's resource-update.  With Fluxion: the submitted
 * ones with the breakdowns' ssd added (dws_lustre_rewrite), so that Fluxion
 * allocates the rabbit storage with the nodes ('spread': a Lustre file
 * system asked for anywhere).  Without (--disable-fluxion, as flux-coral2
 * v0.36.0 defines it) Fluxion's graph has no ssd vertices: the resources
 * stay as submitted (no breakdown is applied) and only the constraint of
 * rabbits_job_constraint (not badrabbit and not alloc_rabbit) keeps the job
 * off rabbits that are down or in use.  NULL with 'err' set when the job
 * cannot have them. */
static json_t *proposal_resources (struct dws_engine *e, struct job *job, json_t *breakdowns,
                                   bool *spread, dws_error_t *err)
{
    bool unchanged = false;
    *spread = false;
    if (!job->resources) {
        snprintf (err->text, sizeof (err->text), "the job's resources are not known");
        return NULL;
    }
    if (!e->cfg.fluxion) {
        json_t *res = json_deep_copy (job->resources);
        if (!res)
            snprintf (err->text, sizeof (err->text), "out of memory");
        return res;
    }
    return dws_lustre_rewrite (job->resources, breakdowns, &e->cfg.lustre,
                               e->cfg.min_allocation_size, &unchanged, spread, err);
}

/* Proposal's outcome for the job manager: the resources the job is to
 * have, or why it cannot.  false when it cannot (the job manager raises
 * the exception).
 */
static bool send_resources (struct dws_engine *e, struct job *job, json_t *list,
                            const dws_error_t *refused)
{
    dws_error_t err;
    json_t *payload = NULL;
    bool spread = false;
    json_t *res = NULL;
    if (refused)
        err = *refused;
    else if (job->ps.staged)
        res = json_deep_copy (job->resources); /* its storage is not the scheduler's */
    else
        res = proposal_resources (e, job, list, &spread, &err);
    if (res && spread
        && rabbits_lustre_fits (e, json_integer_value (json_object_get (
                                      json_array_get (res, 1), "count")),
                               &err)
               < 0) {
        json_decref (res);
        res = NULL;
    }
    int64_t nnodes = res ? dws_jobspec_node_count (job->resources, NULL) : -1;
    if (res && e->cfg.maximums && nnodes > 0 && nnodes <= INT32_MAX
        && dws_policy_check_maximums (job->directives, (int)nnodes, e->cfg.maximums, &err)
               < 0) {
        json_decref (res);
        res = NULL;
    }
    if (!res) {
        payload = json_pack ("{s:I s:O s:n s:s}", "id", job->id, "resources",
                             job->resources ? job->resources : json_null (), "exclude",
                             "errmsg", err.text);
    }
    else {
        json_t *exclude = rabbits_job_constraint (e);
        json_decref (job->ssd_asks);
        job->ssd_asks = job->ps.staged ? NULL : dws_jobspec_ssd_asks (res);
        payload = json_pack ("{s:I s:o s:o}", "id", job->id, "resources", res, "exclude",
                             exclude);
        if (payload && job->ps.staged) /* flux-dws' own key: dws-prestage is held */
            json_object_set_new (payload, "prestage", json_true ());
    }
    act_rpc (e, DWS_JOBWIRE_TOPIC (DWS_JOBWIRE_RESOURCE_UPDATE_METHOD), payload, NULL);
    return res != NULL;
}

/* STEP_PRESTAGE_UNPIN: a pre-staged job given up asks the jobtap plugin
 * for the resource-update it would have had (its ssd with its nodes, so
 * Fluxion holds it again) without the pin's constraint; the answer:
 * prestage_on_unpin.  Resources it cannot have: it waits for its chassis.
 */
void progress_prestage_unpin (struct dws_engine *e, struct job *job, const struct step *st)
{
    char token[TOKEN_SIZE];
    dws_error_t err;
    bool spread = false;
    (void)st;
    json_t *list = breakdown_list (job);
    json_t *res = proposal_resources (e, job, list, &spread, &err);
    json_decref (list);
    if (!res || !job->ps.hosts) {
        act_log (e, "warning", "%s: cannot let it go of its chassis: %s", job->name,
                 res ? "its chassis are not known" : err.text);
        json_decref (res);
        prestage_kept (e, job);
        advance_mark (e, job, NEWS_LOOK); /* not let go: as a refusal */
        return;
    }
    json_decref (job->ssd_asks);
    job->ssd_asks = dws_jobspec_ssd_asks (res);
    act_unpin (e, job, res, dws_nodelocal_constraint (job->ps.hosts),
               token_for (token, sizeof (token), TOK_UNPIN, job));
    job->asking |= (uint64_t)1 << TOK_UNPIN; /* once, until it is answered */
}

/* Proposal is done and every breakdown read: what the decider says
 * follows (pre-staging weighed and chosen, its record, the resources,
 * the Setup's start).
 */
static void proposal_finish (struct dws_engine *e, struct job *job)
{
    advance_mark (e, job, NEWS_LOOK);
}

/* STEP_PRESTAGE_WEIGH: pre-staging is wanted: what decides it is read
 * from the breakdowns, the rabbits and the jobs pre-staged now.
 */
void progress_prestage_weigh (struct dws_engine *e, struct job *job, const struct step *st)
{
    (void)st;
    json_t *list = breakdown_list (job);
    prestage_weigh (e, job, list);
    json_decref (list);
    advance_mark (e, job, NEWS_LOOK);
}

/* The resource-update, or why the job cannot have its resources
 * (refused): the job manager raises the exception, Teardown follows. */
static void resources (struct dws_engine *e, struct job *job, const dws_error_t *refused)
{
    json_t *list = breakdown_list (job);
    job->resources_sent = true;
    bool sent = send_resources (e, job, list, refused);
    json_decref (list);
    if (!sent) {
        job->excepted = true; /* the job manager raises the exception */
        job->toredown = true; /* without PostRun or DataOut */
    }
    else if (job->ps.staged)
        job->deps |= JOB_DEP_PRESTAGE; /* the plugin adds dws-prestage */
    advance_mark (e, job, NEWS_LOOK);
}

void progress_send_resources (struct dws_engine *e, struct job *job, const struct step *st)
{
    (void)st;
    resources (e, job, NULL);
}

/* STEP_SEND_REFUSAL: it asked to be pre-staged (dw_prestage=yes) and its
 * storage cannot be placed before its nodes (job->ps.weighed). */
void progress_send_refusal (struct dws_engine *e, struct job *job, const struct step *st)
{
    dws_error_t err;
    (void)st;
    dws_errorf (&err, DWS_PRESTAGE_ATTR "=yes: %s",
                job->ps.weighed.unfit ? job->ps.weighed.unfit : "its storage cannot be placed");
    resources (e, job, &err);
}

void progress_resources_resend (struct dws_engine *e, struct job *job)
{
    advance_mark (e, job, NEWS_RESEND);
}

void progress_resources_again (struct dws_engine *e, struct job *job, const struct step *st)
{
    (void)st;
    job->resources_sent = false;
    if (breakdowns_ready (e, job)) /* else the last breakdown read finishes it */
        proposal_finish (e, job);
}

static void memo_rabbits (struct dws_engine *e, struct job *job)
{
    json_t *counts = dws_rabbitmap_counts (e->map, job->hosts, NULL);
    struct dws_hostlist *hl = dws_hostlist_create ();
    const char *rabbit;
    json_t *v;
    json_object_foreach (counts, rabbit, v)
        dws_hostlist_append_host (hl, rabbit, NULL);
    json_object_foreach (job->reserved, rabbit, v) {
        if (!json_object_get (counts, rabbit))
            dws_hostlist_append_host (hl, rabbit, NULL);
    }
    struct dws_hostlist *u = hl ? dws_hostlist_uniq (hl, NULL) : NULL;
    if (u) {
        dws_hostlist_destroy (hl);
        hl = u;
    }
    char *s = hl ? dws_hostlist_encode (hl) : NULL;
    if (s)
        act_memo (e, job, json_pack ("{s:s}", "rabbits", s));
    free (s);
    dws_hostlist_destroy (hl);
    json_decref (counts);
}

static void setup_servers (struct dws_engine *e, struct job *job)
{
    dws_error_t err;
    char token[TOKEN_SIZE];
    int64_t min_bytes = e->cfg.min_allocation_size * 1024LL * 1024 * 1024;
    json_t *list = breakdown_list (job);
    size_t i;
    json_t *bd;
    if (job->hosts)
        memo_rabbits (e, job); /* a pre-staged job's, once it has them (computes_patch) */
    job->servers_pending = 0;
    /* the same decision as the rewrite at Proposal: the job's Lustre went
     * where Fluxion found room, and R says where (a pre-staged job's: the
     * ssd held for it) */
    bool spread = job->reserved && !job->ps.counts
                  && (job->ps.staged || dws_lustre_spreads (job->resources, list, &e->cfg.lustre));
    json_array_foreach (list, i, bd) {
        json_t *storage = json_object_get (json_object_get (bd, "status"), "storage");
        if (!json_is_object (storage))
            continue;
        json_t *ref = json_object_get (storage, "reference");
        const char *name = json_string_value (json_object_get (ref, "name"));
        const char *ns = json_string_value (json_object_get (ref, "namespace"));
        json_t *sets;
        if (spread) {
            /* Lustre on the rabbits Fluxion chose (lustre.h) */
            sets = dws_lustre_allocation_sets (storage, job->reserved, &e->cfg.lustre,
                                               min_bytes, &err);
        }
        else if (job->ps.counts) {
            /* node-local, before the nodes: the rabbits picked, the job's
             * nodes each will serve (its jobspec is held to them) */
            sets = dws_servers_allocation_sets (storage, job->ps.counts, min_bytes, &err);
        }
        else {
            json_t *counts = dws_rabbitmap_counts (e->map, job->hosts, &err);
            sets = counts ? dws_servers_allocation_sets (storage, counts, min_bytes, &err)
                          : NULL;
            json_decref (counts);
        }
        if (!name || !sets) {
            json_decref (sets);
            json_decref (list);
            workflow_fail_job (e, job, "exception", NOTE_PREFIX "cannot place rabbit storage: %s",
                      name ? err.text : "a DirectiveBreakdown names no Servers object");
            return;
        }
        job->servers_pending++;
        act_k8s (e, "patch", "Servers", ns ? ns : e->cfg.namespace, name,
                 json_pack ("{s:{s:o}}", "spec", "allocationSets", sets),
                 token_for (token, sizeof (token), TOK_SERVERS, job));
    }
    json_decref (list);
    if (job->servers_pending == 0)
        job->written |= (uint64_t)1 << TOK_SERVERS; /* none to fill */
    advance_mark (e, job, NEWS_LOOK);
}

/* STEP_SERVERS (with the hosts' answer's Workflow, if it carried one). */
void progress_servers (struct dws_engine *e, struct job *job, const struct step *st)
{
    (void)st;
    job->written &= ~((uint64_t)1 << TOK_HOSTS);
    setup_servers (e, job);
}

/* dws.setup arrived (or a rebuilt job was on its way to Setup): record the
 * hosts on the Workflow, fill the Servers objects, then ask for Setup.
 */
void progress_setup_start (struct dws_engine *e, struct job *job)
{
    advance_mark (e, job, NEWS_LOOK); /* decide.c's setup_start */
}

/* STEP_WAIT_MAP: the SystemConfiguration list has not come yet: the
 * Setup starts when it does (map_pass looks at every job).
 */
void progress_wait_map (struct dws_engine *e, struct job *job, const struct step *st)
{
    (void)st;
    sidestate_setup (e, job, SETUP_WAITS_MAP);
    act_log (e, "warning", "%s: waiting for SystemConfiguration 'default' to place"
             " the job's rabbit storage", job->name);
}

/* STEP_READ_SCHED_R: the job manager's R is redacted (no scheduling
 * graph): read the job's R from the KVS, to place its Lustre where
 * Fluxion put its ssd (its answer: STEP_PLACE_LUSTRE).
 */
void progress_read_sched_R (struct dws_engine *e, struct job *job, const struct step *st)
{
    (void)st;
    job->info_for = INFO_SCHED;
    act_job_info (e, job, true);
}

/* STEP_HOSTS_PATCH: the hosts of a job whose Setup was asked before its
 * nodes came (pre-staged), and the ssd reserved for it, on the Workflow
 * (its answer: job->written's TOK_HOSTS, the Workflow it carries kept
 * when it is the one seen); a job on its way to Setup records them with
 * its ask (workflow_ask).
 */
void progress_hosts_patch (struct dws_engine *e, struct job *job, const struct step *st)
{
    char token[TOKEN_SIZE];
    (void)st;
    act_k8s (e, "patch", "Workflow", e->cfg.namespace, job->name,
             json_pack ("{s:{s:o}}", "metadata", "annotations", workflow_hosts_annotations (job)),
             token_for (token, sizeof (token), TOK_HOSTS, job));
    job->asking |= (uint64_t)1 << TOK_HOSTS; /* once, until it is answered */
}

/* --- the states' completions ----------------------------------------------- */

void progress_computes (struct dws_engine *e, struct job *job, const struct step *st)
{
    dws_error_t err;
    char token[TOKEN_SIZE];
    (void)st;
    job->written &= ~((uint64_t)1 << TOK_HOSTS);
    if (job->ps.staged)
        memo_rabbits (e, job); /* its computes are known only now */
    if (job->ps.counts && !prestage_on_chassis (e, job, &err)) {
        workflow_fail_job (e, job, "exception", NOTE_PREFIX "%s", err.text);
        return;
    }
    json_t *names = hosts_minus (job->hosts, job->failed, &err);
    if (!names) {
        workflow_fail_job (e, job, "exception", NOTE_PREFIX "bad host list: %s", err.text);
        return;
    }
    json_t *data = json_array ();
    size_t i;
    json_t *h;
    json_array_foreach (names, i, h) {
        if (json_object_get (e->rabbits, json_string_value (h)))
            continue; /* rabbits used as compute nodes mount nothing */
        json_array_append_new (data, json_pack ("{s:O}", "name", h));
    }
    json_decref (names);
    const char *name = job->view.computes_name;
    const char *ns = job->view.computes_ns;
    act_k8s (e, "patch", "Computes", ns ? ns : e->cfg.namespace, name ? name : job->name,
             json_pack ("{s:o}", "data", data),
             token_for (token, sizeof (token), TOK_COMPUTES, job));
    job->asking |= (uint64_t)1 << TOK_COMPUTES; /* once, until it is answered */
}

static int b64val (int c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+' || c == '-')
        return 62;
    if (c == '/' || c == '_')
        return 63;
    return -1;
}

/* Decode base64 text (Secret data); NULL when it is not base64 or not text. */
static char *b64decode (const char *s)
{
    size_t n = strlen (s);
    char *out = malloc (n / 4 * 3 + 4);
    size_t o = 0;
    unsigned acc = 0;
    int bits = 0;
    if (!out)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '=' || s[i] == '\n' || s[i] == '\r')
            continue;
        int v = b64val ((unsigned char)s[i]);
        if (v < 0) {
            free (out);
            return NULL;
        }
        acc = (acc << 6) | (unsigned)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (char)((acc >> bits) & 0xff);
        }
    }
    out[o] = '\0';
    if (strlen (out) != o) {
        free (out);
        return NULL;
    }
    return out;
}

void progress_prolog_remove (struct dws_engine *e, struct job *job, const struct step *st)
{
    (void)st;
    json_t *vars = job->view.env ? json_deep_copy (job->view.env) : json_object ();
    if (job->wf_token)
        json_object_set_new (vars, "DW_WORKFLOW_TOKEN", json_string (job->wf_token));
    act_rpc (e, DWS_JOBWIRE_TOPIC (DWS_JOBWIRE_PROLOG_REMOVE_METHOD),
             json_pack ("{s:I s:o}", "id", job->id, "variables", vars), NULL);
    free (job->wf_token); /* carried: read again for a repeated dws.setup */
    job->wf_token = NULL;
    sidestate_prolog (e, job, PROLOG_ENDED);
}

/* STEP_PROLOG: PreRun is done and DWS made no workflow token. */
void progress_prolog (struct dws_engine *e, struct job *job, const struct step *st)
{
    act_timer_stop (e, job, T_PRERUN);
    progress_prolog_remove (e, job, st);
}

/* STEP_READ_TOKEN: PreRun is done: the workflow token Secret is read
 * before the prolog ends (its answer: job->wf_token).
 */
void progress_read_token (struct dws_engine *e, struct job *job, const struct step *st)
{
    char token[TOKEN_SIZE];
    const char *ns = job->view.token_ns;
    (void)st;
    act_timer_stop (e, job, T_PRERUN);
    job->asking |= (uint64_t)1 << TOK_SECRET;
    act_k8s (e, "get", "Secret", ns && *ns ? ns : e->cfg.namespace, job->view.token_secret,
             NULL, token_for (token, sizeof (token), TOK_SECRET, job));
}

/* A repeated dws.setup (a jobtap plugin reloaded while it held the
 * prolog): once PreRun is done its prolog-remove went out and may have
 * been lost with the plugin, so it goes out again (with the token read
 * again).
 */
void progress_prolog_remove_again (struct dws_engine *e, struct job *job)
{
    advance_mark (e, job, NEWS_SETUP_AGAIN);
}

/* What a state's completion records (the decider chose what follows). */
void progress_completed (struct dws_engine *e, struct job *job, enum wf_state s)
{
    workflow_kvs_timing (e, job, s, s == WF_PROPOSAL);
    switch (s) {
        case WF_SETUP:
            act_timer_stop (e, job, T_SETUP);
            break;
        case WF_DATAIN:
            act_timer_stop (e, job, T_DATAIN);
            break;
        case WF_POSTRUN:
            act_timer_stop (e, job, T_POSTRUN);
            break;
        case WF_DATAOUT:
            workflow_kvs_outcome (e, job, DWS_JOBKVS_DATAOUT, "complete", NULL);
            break;
        case WF_TEARDOWN:
            for (int k = 0; k < T_NKINDS; k++)
                act_timer_stop (e, job, (enum timer_kind)k);
            rabbits_unhold (e, job); /* its ssds up again, where the rabbit is healthy */
            workflow_kvs_outcome (e, job, DWS_JOBKVS_TEARDOWN, "complete", NULL);
            break;
        default:
            break;
    }
}

/* STEP_WORKFLOW_SEEN: the Workflow seen: its status read, then the job
 * looked at. */
void progress_workflow_seen (struct dws_engine *e, struct job *job, const struct step *st)
{
    (void)st;
    progress_workflow (e, job);
}

/* STEP_BREAKDOWNS: read those the Workflow lists and we lack. */
void progress_breakdowns (struct dws_engine *e, struct job *job, const struct step *st)
{
    (void)st;
    breakdowns_ready (e, job);
}

void progress_workflow (struct dws_engine *e, struct job *job)
{
    job->wf_read = job->wf_seen;
    enum wf_state state = job->view.state;
    const char *status = job->view.status;
    if (state == WF_NONE)
        return;
    if (status && !strcmp (status, "Error")) {
        char why[DWS_ERROR_TEXT_MAX], said[DWS_ERROR_TEXT_MAX];
        const char *text = wfview_dws_text (&job->view, said, sizeof (said));
        snprintf (why, sizeof (why), NOTE_PREFIX "workflow hit an error: %s",
                  text ? text : "(no message)");
        struct told in = {.why = why};
        advance_tell (e, job, NEWS_ERROR, &in);
        return;
    }
    fault_transient_condition (e, job);
    fault_force_ready_check (e, job); /* a look: a completion, forceReady reset */
}

/* --- watch events ------------------------------------------------------------ */
static json_t *annotation_json (struct job *job, const char *key)
{
    const char *s = wfview_annotation (&job->view, key);
    return s ? json_loads (s, JSON_DECODE_ANY, NULL) : NULL;
}

/* Take a job's state from its Workflow: a Workflow of ours that this
 * engine does not know (the service was restarted: everything needed is
 * on the Workflow), or the Workflow of a job that waited to create it
 * (job-info) and found it after all.  What the job knows already (its
 * hosts from dws.setup, its epilog begun) is kept.
 */
/* STEP_ADOPT: a Workflow of ours taken up in st->state (its phase the
 * decider's): what the job is and was given is read from it, the timers
 * that guard the state start whole, then the Workflow is looked at.
 */
void progress_adopt (struct dws_engine *e, struct job *job, const struct step *st)
{
    const struct wfview *v = &job->view;
    job->userid = v->user_id;
    job->groupid = v->group_id;
    json_decref (job->directives);
    job->directives = json_incref (v->directives);
    json_decref (job->resources);
    job->resources = annotation_json (job, ANN_RESOURCES);
    const char *tol = wfview_annotation (v, ANN_TOLERANCE);
    job->tolerance = tol ? strtoll (tol, NULL, 10) : 0;
    json_t *bank = json_string (wfview_annotation (v, ANN_BANK));
    json_t *project = json_string (wfview_annotation (v, ANN_PROJECT));
    job_set_account (job, bank, project);
    json_decref (bank);
    json_decref (project);
    if (wfview_annotation (v, ANN_HOSTS) || !job->hosts) {
        free (job->hosts);
        job->hosts = dws_strdup_null (wfview_annotation (v, ANN_HOSTS));
        json_decref (job->reserved);
        job->reserved = annotation_json (job, ANN_RESERVED);
        if (!json_is_object (job->reserved)) {
            json_decref (job->reserved);
            job->reserved = NULL;
        }
        rabbits_job (e, job);
    }
    free (job->failed);
    job->failed = dws_strdup_null (wfview_annotation (v, ANN_FAILED));
    /* DWS resets forceReady at the next transition: still set, it is this
     * state's, whose hosts were given up before the restart */
    job->forced = v->force_ready_state;
    if (wfview_annotation (v, ANN_EPILOG))
        sidestate_epilog_begin (e, job);
    json_t *mode = json_string (wfview_annotation (v, ANN_RELEASE));
    enum release_mode release = RELEASE_DEFAULT;
    if (release_mode_parse (mode, &release, NULL) == 0)
        job->release = release;
    json_decref (mode);
    enum wf_state desired = st->state;
    if (desired > WF_PROPOSAL)
        job->resources_sent = true;
    else /* the old service may have gone before its create's answer wrote it */
        act_memo (e, job, json_pack ("{s:s}", DWS_JOBKVS_MEMO_WORKFLOW, job->name));
    sidestate_setup (e, job, job->hosts && desired == WF_PROPOSAL ? SETUP_PENDING : SETUP_NONE);
    if (desired == WF_TEARDOWN)
        job->toredown = true;
    workflow_start_timers (e, job, st->timers);
    prestage_adopt (e, job);
    if (wfview_annotation (v, ANN_HELD))
        release_adopt (e, job, wfview_annotation (v, ANN_HELD));
    act_log (e, "info", "%s: picked up in %s", job->name, wfstate_name (desired));
    /* the look goes on: the Workflow seen, not yet read, in its phase */
}

/* STEP_RECREATE: the job still waits for its resources, or dws.setup
 * came but Setup was not asked yet (no storage exists): give it its
 * Workflow back, with the hosts when they are known, and start the Setup
 * over once Proposal completes again.
 */
void progress_recreate (struct dws_engine *e, struct job *job, const struct step *st)
{
    (void)st;
    act_log (e, "warning", "%s: Workflow deleted outside Flux while the job waited;"
             " creating it again", job->name);
    json_decref (job->breakdowns);
    job->breakdowns = json_object ();
    job->breakdowns_wanted = 0;
    if (job->hosts) {
        sidestate_setup (e, job, SETUP_PENDING);
        job->servers_pending = 0;
    }
    job->written = 0; /* nothing written to the new one yet */
    job->asking = 0; /* nor asked (a hosts' patch that met a 404, ...) */
    job_set_wf (job, NULL);
    workflow_create (e, job); /* with the hosts, if dws.setup came: Setup follows */
}

/* STEP_END_EPILOG: it vanished in the epilog: release it, forget the job. */
void progress_end_epilog (struct dws_engine *e, struct job *job, const struct step *st)
{
    (void)st;
    act_log (e, "warning", "%s: Workflow deleted outside Flux during the epilog", job->name);
    workflow_epilog_remove (e, job);
    job_forget (e, job);
}

/* STEP_RAISE: raise st->said->why on the job (its epilog released first when
 * the step says), then forget it.
 */
void progress_raise (struct dws_engine *e, struct job *job, const struct step *st)
{
    job->excepted = true;
    act_raise (e, job, "exception", 0, "%s", st->said->why ? st->said->why : "");
    if (st->end_epilog)
        workflow_epilog_remove (e, job);
    job_forget (e, job);
}

/* STEP_RAISE_GONE: deleted outside Flux while in use: its exception,
 * then it is forgotten. */
void progress_raise_gone (struct dws_engine *e, struct job *job, const struct step *st)
{
    (void)st;
    job->excepted = true;
    act_raise (e, job, "exception", 0, NOTE_PREFIX "workflow %s was deleted outside of Flux",
               job->name);
    job_forget (e, job);
}

/* STEP_FORGET: forget the job (its epilog released first when the step
 * says).
 */
void progress_forget (struct dws_engine *e, struct job *job, const struct step *st)
{
    if (st->end_epilog)
        workflow_epilog_remove (e, job);
    job_forget (e, job);
}

/* The Workflow is gone: a sighting of its own, read once (decide.c,
 * take ()). */
static void vanished (struct dws_engine *e, struct job *job)
{
    job->wf_gone = ++job->wf_seen;
    advance_mark (e, job, NEWS_LOOK);
}

/* STEP_FAIL_OUTSIDE: deleted outside Flux while in use: fail the job, then
 * look at the Workflow.
 */
void progress_fail_outside (struct dws_engine *e, struct job *job, const struct step *st)
{
    (void)st;
    workflow_fail_job (e, job, "exception",
                       NOTE_PREFIX "workflow %s is being deleted outside of Flux", job->name);
    progress_workflow (e, job);
}

void progress_event (struct dws_engine *e, const char *type, json_t *wf)
{
    json_int_t id;
    struct wfview v;
    wfview_parse (wf, &v);
    if (!job_id_from_name (v.name, &id) || !v.wlm_id || strcmp (v.wlm_id, "flux") != 0)
        return;
    struct job *job = job_lookup (e, id);
    if (!strcmp (type, "DELETED")) {
        if (job)
            vanished (e, job);
        return;
    }
    if (!job) {
        /* unknown (a restart): taken up (STEP_ADOPT), unless it is on its
         * way out and nothing of ours holds it */
        if (v.deleting && v.finalizer_index < 0)
            return;
        if (!(job = job_create (e, id)))
            return;
    }
    /* a finalizer removal refused (our finalizer was not where the
     * Workflow seen said): asked again once the Workflow changed; one on
     * its way, or done, is not (an event older than its answer still shows
     * our finalizer: asking again would be refused) */
    if ((job->refused & ((uint64_t)1 << TOK_FINALIZER)) && !json_equal (job->wf, wf)) {
        job->asking &= ~((uint64_t)1 << TOK_FINALIZER);
        job->refused &= ~((uint64_t)1 << TOK_FINALIZER);
    }
    job_set_wf (job, wf);
    job->wf_seen++; /* to be read (decide.c, seen ()) */
    advance_mark (e, job, NEWS_LOOK);
}

void progress_sync (struct dws_engine *e, json_t *objects)
{
    size_t i;
    json_t *o;
    json_array_foreach (objects, i, o) {
        const char *name = dws_json_str_at (o, "metadata", "name");
        progress_event (e, "MODIFIED", o);
        json_int_t id;
        struct job *j;
        if (!e->synced && name && job_id_from_name (name, &id) && (j = job_lookup (e, id)))
            j->listed_at_start = true;
    }
}

void progress_sync_missing (struct dws_engine *e, json_t *objects)
{
    json_t *seen = json_object ();
    size_t i;
    json_t *o;
    json_array_foreach (objects, i, o) {
        const char *name = dws_json_str_at (o, "metadata", "name");
        if (name)
            json_object_set_new (seen, name, json_true ());
    }
    /* jobs whose Workflow the list lacks: deleted while we did not watch */
    json_t *gone = json_array ();
    for (size_t b = 0; b < e->nbuckets; b++)
        for (struct job *j = e->table[b]; j; j = j->next)
            if (phase_exists (j) && !json_object_get (seen, j->name))
                json_array_append_new (gone, json_integer (j->id));
    json_array_foreach (gone, i, o) {
        struct job *j = job_lookup (e, json_integer_value (o));
        if (j)
            vanished (e, j);
    }
    json_decref (gone);
    json_decref (seen);
    if (!e->synced) {
        /* the first list: which active rabbit jobs lost a request in the
         * restart?  The answer comes back as an orphans event. */
        act (e, json_pack ("{s:s}", "action", DWS_WIRE_ACTION (ACTIVE_JOBS)));
    }
    e->synced = true;
}

/* The answer to a write for the job's Setup (its hosts, Servers,
 * Computes) ends its handler: a 404 says the Workflow (and its children)
 * is gone, and its DELETED event, seen or still to come, brings the
 * news; another failure is news of its own, with "cannot WHAT:
 * <Kubernetes' message>" for the decider to fail the job with.
 */
static bool write_ended (struct dws_engine *e, struct job *job, struct k8s_answer a,
                         json_t *event, const char *what)
{
    if (a.gone)
        return true;
    if (!a.ok) {
        char why[DWS_ERROR_TEXT_MAX];
        snprintf (why, sizeof (why), NOTE_PREFIX "cannot %s: %s", what, answer_message (event));
        struct told in = {.why = why};
        advance_tell (e, job, NEWS_WRITE_FAILED, &in);
        return true;
    }
    return false;
}

void progress_on_create (struct dws_engine *e, enum token_kind kind, struct job *job,
                         json_t *event)
{
    struct k8s_answer a = answer_of (event);
    (void)kind;
    size_t i;
    json_t *msgid;
    if (a.ok || a.code == 409) {
        json_array_foreach (job->create_msgids, i, msgid)
            act_respond_ok (e, msgid);
        json_array_clear (job->create_msgids);
        act_memo (e, job, json_pack ("{s:s}", DWS_JOBKVS_MEMO_WORKFLOW, job->name));
        admit_created (e, job); /* dws-limit, once the Workflow exists */
        if (a.ok && json_is_object (json_object_get (event, "object")) && !job->wf) {
            job_set_wf (job, json_object_get (event, "object"));
            job->wf_seen++; /* seen as it was made (decide.c, seen ()) */
        }
        job->written |= (uint64_t)1 << TOK_CREATE; /* it exists: Proposal */
        advance_mark (e, job, NEWS_LOOK);
        return;
    }
    json_array_foreach (job->create_msgids, i, msgid)
        act_respond_fail (e, msgid, "%s", answer_message (event));
    char why[DWS_ERROR_TEXT_MAX];
    snprintf (why, sizeof (why), NOTE_PREFIX "cannot create workflow %s: %s", job->name,
              answer_message (event));
    struct told in = {.why = why};
    advance_tell (e, job, NEWS_CREATE_FAILED, &in);
}

void progress_on_breakdown (struct dws_engine *e, enum token_kind kind, struct job *job,
                            json_t *event)
{
    (void)kind;
    struct k8s_answer a = answer_of (event);
    if (job->breakdowns_wanted <= 0)
        return; /* a late answer: for a Workflow that was since created again */
    job->breakdowns_wanted--;
    if (!a.ok || !json_is_object (a.obj)) {
        workflow_fail_job (e, job, "exception", NOTE_PREFIX "cannot read a DirectiveBreakdown: %s",
                  answer_message (event));
        return;
    }
    const char *name = dws_json_str_at (a.obj, "metadata", "name");
    if (name)
        json_object_set (job->breakdowns, name, a.obj);
    advance_mark (e, job, NEWS_LOOK);
}

void progress_on_hosts (struct dws_engine *e, enum token_kind kind, struct job *job,
                        json_t *event)
{
    (void)kind;
    struct k8s_answer a = answer_of (event);
    /* written to a Workflow since created again: nothing (the new one's
     * own patch may be out) */
    if (a.ok && (!job->wf || (json_is_object (a.obj) && !wfview_same (&job->view, a.obj))))
        return;
    if (a.code != 404) /* gone: the watch says what follows, not a Workflow seen again */
        job->asking &= ~((uint64_t)1 << TOK_HOSTS);
    if (write_ended (e, job, a, event, "record the job's hosts"))
        return;
    if (json_is_object (a.obj))
        job_set_wf (job, a.obj);
    job->written |= (uint64_t)1 << TOK_HOSTS;
    advance_mark (e, job, NEWS_LOOK);
}

void progress_on_servers (struct dws_engine *e, enum token_kind kind, struct job *job,
                          json_t *event)
{
    (void)kind;
    struct k8s_answer a = answer_of (event);
    if (!a.gone && job->servers_pending <= 0)
        return; /* a late answer: for a Workflow that was since created again */
    if (write_ended (e, job, a, event, "fill the Servers"))
        return;
    if (--job->servers_pending == 0)
        job->written |= (uint64_t)1 << TOK_SERVERS;
    advance_mark (e, job, NEWS_LOOK);
}

void progress_on_computes (struct dws_engine *e, enum token_kind kind, struct job *job,
                           json_t *event)
{
    (void)kind;
    struct k8s_answer a = answer_of (event);
    job->asking &= ~((uint64_t)1 << TOK_COMPUTES);
    if (write_ended (e, job, a, event, "fill the Computes"))
        return;
    job->written |= (uint64_t)1 << TOK_COMPUTES;
    advance_mark (e, job, NEWS_LOOK);
}

void progress_on_secret (struct dws_engine *e, enum token_kind kind, struct job *job,
                         json_t *event)
{
    (void)kind;
    struct k8s_answer a = answer_of (event);
    job->asking &= ~((uint64_t)1 << TOK_SECRET);
    json_t *data = json_object_get (a.obj, "data");
    const char *b64 = json_string_value (json_object_get (data, "token"));
    char *token = a.ok && b64 ? b64decode (b64) : NULL;
    if (!token) {
        workflow_fail_job (e, job, "exception", NOTE_PREFIX "cannot read the workflow token: %s",
                  a.ok ? "the Secret has no usable data.token" : answer_message (event));
        return;
    }
    free (job->wf_token);
    job->wf_token = token;
    advance_mark (e, job, NEWS_LOOK);
}

void progress_on_prestage (struct dws_engine *e, enum token_kind kind, struct job *job,
                           json_t *event)
{
    (void)kind;
    struct k8s_answer a = answer_of (event);
    job->asking &= ~((uint64_t)1 << TOK_PRESTAGE);
    if (write_ended (e, job, a, event, "record the job's pre-staging"))
        return;
    if (json_is_object (a.obj))
        job_set_wf (job, a.obj);
    prestage_noted (e, job);
    advance_mark (e, job, NEWS_LOOK);
}

void progress_on_prestage_find (struct dws_engine *e, struct job *job, json_t *event)
{
    if (prestage_found (e, job, event) < 0)
        return; /* picked again when its timer fires */
    advance_mark (e, job, NEWS_LOOK);
}
