/* fault.c - timeouts, TransientCondition, failure tolerance, abort.
 *
 * Every timer is a one-shot per job and per kind, started when the engine
 * asks for the state it guards and stopped when that state completes (the
 * reference polls every workflow on one periodic timer instead).  When one
 * fires, the engine reads what it needs to name the culprits (Servers
 * status for Setup, ClientMounts for PreRun and PostRun) and decides from
 * that answer:
 *
 *   setup     slow rabbits -> their computes fail, within the tolerance;
 *             Lustre, no tolerance, or no slow rabbit found: the job fails
 *             ("File system creation took too long")
 *   prerun    computes whose mounts are not ready fail, within the tolerance
 *   postrun   computes still mounted are drained, one drain per rabbit
 *             naming it and the job; the job gets "rabbit-timeout" and its
 *             Workflow goes to Teardown (a PostRun Error or a long
 *             TransientCondition in PostRun drains the same way first)
 *   teardown_after  "teardown-timeout" (severity 1), then Teardown
 *   tc        TransientCondition for tc_timeout seconds: in PreRun the
 *             computes not mounted fail within the tolerance, elsewhere
 *             the job fails with DWS' message
 *
 * Within the tolerance: a severity-1 "dws-node-failure" exception whose
 * note is the failed hosts (the rc1 script of the job's instance drains
 * them), the hosts recorded on the Workflow, dropped from Computes, and
 * spec.forceReady set.  Over it: "dws-timeout".
 *
 * Each state's timer fires once, as flux-coral2's does: once hosts are
 * given up, the job waits for DWS to finish the state without them, with
 * no second timeout (whatever bound flux-dws kept would fire before
 * flux-coral2 had finished the job, where DWS is merely slow to act on
 * forceReady).  What can be seen is acted on instead: a forceReady patch
 * that Kubernetes refuses fails the job at once ("dws-timeout", as
 * flux-coral2's timer, whose patch raises, fails it), and a forceReady
 * that DWS reset at the transition it raced (the Workflow in the state,
 * not ready, spec.forceReady false) is asked for again.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
#include "util/f58.h"
#include "util/hostlist.h"
#include "workflow.h"

void fault_transient_condition (struct dws_engine *e, struct job *job)
{
    const char *s = job->view.status;
    if (s && !strcmp (s, "TransientCondition")) {
        if (job->tc_since < 0) {
            job->tc_since = e->now;
            act_timer_start (e, job, T_TC, e->cfg.tc_timeout);
        }
    }
    else if (job->tc_since >= 0) {
        job->tc_since = -1;
        act_timer_stop (e, job, T_TC);
    }
}

static void list_for (struct dws_engine *e, struct job *job, const char *kind,
                      enum token_kind what)
{
    char sel[128], token[TOKEN_SIZE];
    snprintf (sel, sizeof (sel), WORKFLOW_LABEL "=%s", job->name);
    act_k8s_list (e, kind, sel, token_for (token, sizeof (token), what, job));
}

/* What a timeout of state s says (the reference's words). */
static const char *timeout_why (enum wf_state s)
{
    return s == WF_SETUP ? "File system creation took too long" : "timed out waiting for mounts";
}

/* A timer fired while its state is still not done (the decider says):
 * read what names the culprits.  After a restart with hosts already given
 * up in a state its timer is not armed again (adopt), so it fires once per
 * state.
 */
void fault_read_culprits (struct dws_engine *e, struct job *job, const struct step *st)
{
    switch (st->timer) {
        case T_SETUP:
            list_for (e, job, "Servers", TOK_SETUP_TIMEOUT);
            break;
        case T_PRERUN:
            list_for (e, job, "ClientMount", TOK_PRERUN_TIMEOUT);
            break;
        case T_POSTRUN:
            list_for (e, job, "ClientMount", TOK_POSTRUN_TIMEOUT);
            break;
        case T_TC:
            list_for (e, job, "ClientMount", TOK_TC_PRERUN);
            break;
        default:
            break;
    }
}

void fault_skip_dataout (struct dws_engine *e, struct job *job, const struct step *st)
{
    (void)st;
    /* a released job is inactive: no exception can reach it */
    if (job->released)
        act_log (e, "warning", "%s: teardown_after expired: skipping rabbit data"
                 " movement", job->name);
    else
        act_raise (e, job, "teardown-timeout", 1, "skipping rabbit data movement");
    workflow_kvs_outcome (e, job, DWS_JOBKVS_DATAOUT, "skipped",
                          "teardown_after expired: skipping rabbit data movement");
    workflow_teardown (e, job);
}

void fault_timer_event (struct dws_engine *e, const char *key)
{
    enum timer_kind kind;
    json_int_t id;
    if (token_timer_parse (key, &kind, &id) < 0)
        return;
    struct job *job = job_lookup (e, id);
    if (!job || !(job->timers & (1u << kind)))
        return; /* stopped meanwhile */
    job->timers &= ~(1u << kind);
    struct told in = {0};
    char why[DWS_ERROR_TEXT_MAX], said[DWS_ERROR_TEXT_MAX];
    if (kind == T_TC) {
        /* TransientCondition too long: DWS' words for the note */
        const char *m = wfview_dws_text (&job->view, said, sizeof (said));
        snprintf (why, sizeof (why),
                  NOTE_PREFIX "workflow in TransientCondition for more than %g s: %s",
                  e->cfg.tc_timeout, m ? m : "(no message)");
        in.why = why;
    }
    job->fired |= 1u << kind;
    advance_tell (e, job, NEWS_TIMER, &in);
}

/* --- failure tolerance --------------------------------------------------- */
static char *encode_names (json_t *names)
{
    struct dws_hostlist *hl = dws_hostlist_create ();
    size_t i;
    json_t *n;
    json_array_foreach (names, i, n)
        dws_hostlist_append_host (hl, json_string_value (n), NULL);
    struct dws_hostlist *u = dws_hostlist_uniq (hl, NULL);
    char *s = u ? dws_hostlist_encode (u) : NULL;
    dws_hostlist_destroy (hl);
    dws_hostlist_destroy (u);
    return s;
}

/* Ask DWS to finish the current state without the hosts given up
 * (recorded on the Workflow with it).
 */
static void force_ready (struct dws_engine *e, struct job *job)
{
    char token[TOKEN_SIZE];
    job->forced = phase_desired (job);
    job->asking |= (uint64_t)1 << TOK_FORCE_READY;
    act_k8s (e, "patch", "Workflow", e->cfg.namespace, job->name,
             json_pack ("{s:{s:b} s:{s:{s:s}}}", "spec", "forceReady", 1, "metadata",
                        "annotations", ANN_FAILED, job->failed),
             token_for (token, sizeof (token), TOK_FORCE_READY, job));
}

void fault_force_ready_check (struct dws_engine *e, struct job *job)
{
    advance_mark (e, job, NEWS_LOOK); /* the decider compares (decide.c's force_check) */
}

/* STEP_FORCE_READY_AGAIN: DWS reset forceReady at the transition it raced. */
void fault_force_ready_again (struct dws_engine *e, struct job *job, const struct step *st)
{
    (void)st;
    act_log (e, "warning", "%s: DWS reset forceReady on entering %s: asking again", job->name,
             wfstate_name (job->forced));
    force_ready (e, job);
}

void fault_on_force_ready (struct dws_engine *e, enum token_kind kind, struct job *job,
                           json_t *event)
{
    (void)kind;
    struct k8s_answer a = answer_of (event);
    job->asking &= ~((uint64_t)1 << TOK_FORCE_READY);
    if (a.ok || a.code == 404) { /* 404: the Workflow went; vanished() says so */
        fault_force_ready_check (e, job); /* a reset seen before this answer */
        return;
    }
    char why[DWS_ERROR_TEXT_MAX];
    snprintf (why, sizeof (why), "%s: DWS refused forceReady after giving up %s: %s",
              timeout_why (job->forced), job->failed ? job->failed : "hosts",
              answer_message (event));
    struct told in = {.type = "dws-timeout", .why = why};
    advance_tell (e, job, NEWS_FORCE_REFUSED, &in);
}

/* The hosts given up so far with `nodes` added (RFC 29), and how many
 * that is (-1: they cannot be counted); NULL when none are new.
 */
static char *failed_with (struct job *job, json_t *nodes, int *count)
{
    *count = 0;
    if (json_array_size (nodes) == 0)
        return NULL;
    json_t *all = json_array ();
    if (job->failed) {
        json_t *old = hosts_minus (job->failed, NULL, NULL);
        json_array_extend (all, old);
        json_decref (old);
    }
    json_array_extend (all, nodes);
    char *failed = encode_names (all);
    struct dws_hostlist *hl = failed ? dws_hostlist_decode (failed, NULL) : NULL;
    size_t n = hl ? dws_hostlist_count (hl) : 0;
    dws_hostlist_destroy (hl);
    json_decref (all);
    *count = !failed ? -1 : n > INT32_MAX ? INT32_MAX : (int)n;
    return failed;
}

/* STEP_NODE_FAILURE: give st->said->nodes up (the decider found them within
 * the tolerance); st->said->failed is every host given up so far with them
 * (failed_with).
 */
void fault_node_failure (struct dws_engine *e, struct job *job, const struct step *st)
{
    char token[TOKEN_SIZE];
    json_t *nodes = st->said->nodes;
    free (job->failed);
    job->failed = st->said->failed;
    st->said->failed = NULL;
    if (phase_desired (job) == WF_PRERUN)
        rabbits_mount_failed (e, nodes); /* keep other jobs off them: badrabbit */
    act_raise_verbatim (e, job, "dws-node-failure", 1, job->failed); /* a host list, for rc1 */
    force_ready (e, job);
    if (phase_desired (job) == WF_PRERUN) {
        json_t *names = hosts_minus (job->hosts, job->failed, NULL);
        json_t *data = json_array ();
        size_t i;
        json_t *h;
        json_array_foreach (names, i, h)
            if (!json_object_get (e->rabbits, json_string_value (h)))
                json_array_append_new (data, json_pack ("{s:O}", "name", h));
        json_decref (names);
        const char *cname = job->view.computes_name;
        act_k8s (e, "patch", "Computes", e->cfg.namespace, cname ? cname : job->name,
                 json_pack ("{s:o}", "data", data), token_for (token, sizeof (token),
                                                                TOK_COMPUTES_DROP, job));
    }
}

/* A timeout's culprits are read: the decider gives them up, or fails the
 * job with `why`.
 */
static void give_up (struct dws_engine *e, struct job *job, enum news on, json_t *nodes,
                     const char *why)
{
    struct told in = {.type = "dws-timeout", .why = why, .nodes = nodes};
    int count;
    in.failed = failed_with (job, nodes, &count);
    job->culprits = count;
    advance_tell (e, job, on, &in);
}

/* --- reading the culprits ------------------------------------------------ */
static const char *cm_compute (json_t *cm)
{
    const char *node = json_string_value (json_object_get (json_object_get (cm, "spec"), "node"));
    if (!node)
        node = json_string_value (json_object_get (json_object_get (cm, "metadata"),
                                                   "namespace"));
    return node;
}

static bool cm_in_state (json_t *cm, const char *state)
{
    json_t *st = json_object_get (cm, "status");
    json_t *mounts = json_object_get (st, "mounts");
    size_t i;
    json_t *m;
    if (!json_is_true (json_object_get (st, "allReady")) && !strcmp (state, "mounted"))
        return false;
    if (json_array_size (mounts) == 0)
        return !strcmp (state, "unmounted");
    json_array_foreach (mounts, i, m) {
        const char *s = json_string_value (json_object_get (m, "state"));
        if (!s || strcmp (s, state) != 0)
            return false;
    }
    return true;
}

/* {compute: true} of the computes with a ClientMount in `items` that is
 * not (yet) in `state`; `seen` (if given) gets every compute with one.  A
 * compute with several directives is in a state only if all its mounts
 * are.
 */
static json_t *lagging (json_t *items, const char *state, json_t *seen)
{
    json_t *out = json_object ();
    size_t i;
    json_t *cm;
    json_array_foreach (items, i, cm) {
        const char *c = cm_compute (cm);
        if (!c)
            continue;
        if (seen)
            json_object_set_new (seen, c, json_true ());
        if (!cm_in_state (cm, state))
            json_object_set_new (out, c, json_true ());
    }
    return out;
}

/* The job's computes (minus rabbits and hosts already given up) that are
 * not mounted: no ClientMount at all, or one that is not mounted.
 */
static json_t *unmounted_computes (struct dws_engine *e, struct job *job, json_t *items)
{
    json_t *seen = json_object ();
    json_t *late = lagging (items, "mounted", seen);
    json_t *names = hosts_minus (job->hosts, job->failed, NULL);
    json_t *out = json_array ();
    size_t i;
    json_t *h;
    json_array_foreach (names, i, h) {
        const char *n = json_string_value (h);
        if (!json_object_get (e->rabbits, n)
            && (!json_object_get (seen, n) || json_object_get (late, n)))
            json_array_append (out, h);
    }
    json_decref (names);
    json_decref (late);
    json_decref (seen);
    return out;
}

/* Drain exactly the computes whose ClientMounts are not all unmounted,
 * one drain per rabbit, the reason naming it and the job (flux-core
 * #7786: one hung unmount must not cost the job's other nodes).  The
 * reason begins with flux-coral2's words, which tools and rabbit health
 * (DWS_HEALTH_UNMOUNT_REASON) look for.
 */
static void drain_still_mounted (struct dws_engine *e, struct job *job, json_t *items)
{
    json_t *mounted = lagging (items, "unmounted", NULL);
    json_t *by_rabbit = json_object (); /* {rabbit: [compute...]} */
    const char *c;
    json_t *v;
    json_object_foreach (mounted, c, v) {
        const char *rabbit = json_string_value (json_object_get (e->compute2rabbit, c));
        if (!rabbit)
            rabbit = "?";
        json_t *list = json_object_get (by_rabbit, rabbit);
        if (!list) {
            list = json_array ();
            json_object_set_new (by_rabbit, rabbit, list);
        }
        json_array_append_new (list, json_string (c));
    }
    char *f58 = dws_f58_plain ((unsigned long long)job->id);
    json_t *names;
    const char *rabbit;
    json_object_foreach (by_rabbit, rabbit, names) {
        char reason[160];
        char *targets = encode_names (names);
        snprintf (reason, sizeof (reason), DWS_HEALTH_UNMOUNT_REASON " %s (job %s)", rabbit,
                  f58 ? f58 : "?");
        if (targets)
            act_drain (e, targets, reason);
        free (targets);
    }
    free (f58);
    json_decref (by_rabbit);
    json_decref (mounted);
}

/* Rabbits of the job's Servers whose storage is not allocated yet. */
static json_t *slow_rabbits (json_t *servers)
{
    json_t *slow = json_object ();
    size_t i;
    json_t *sv;
    json_array_foreach (servers, i, sv) {
        json_t *spec_sets = json_object_get (json_object_get (sv, "spec"), "allocationSets");
        json_t *stat_sets = json_object_get (json_object_get (sv, "status"), "allocationSets");
        size_t k;
        json_t *set;
        json_array_foreach (spec_sets, k, set) {
            json_t *st = json_object_get (json_array_get (stat_sets, k), "storage");
            size_t r;
            json_t *ent;
            json_array_foreach (json_object_get (set, "storage"), r, ent) {
                const char *rabbit = json_string_value (json_object_get (ent, "name"));
                json_t *got = json_object_get (st, rabbit ? rabbit : "");
                if (rabbit
                    && (!got || json_integer_value (json_object_get (got, "allocationSize")) <= 0
                        || json_is_false (json_object_get (got, "ready"))))
                    json_object_set_new (slow, rabbit, json_true ());
            }
        }
    }
    return slow;
}

/* The job's computes on rabbits whose storage is not allocated yet. */
static json_t *setup_culprits (struct dws_engine *e, struct job *job, json_t *items)
{
    json_t *slow = slow_rabbits (items);
    json_t *names = hosts_minus (job->hosts, job->failed, NULL);
    json_t *nodes = json_array ();
    size_t i;
    json_t *h;
    json_array_foreach (names, i, h) {
        const char *r = json_string_value (json_object_get (e->compute2rabbit,
                                                           json_string_value (h)));
        if (r && json_object_get (slow, r))
            json_array_append (nodes, h);
    }
    json_decref (names);
    json_decref (slow);
    return nodes;
}

static void disable_rabbits (struct dws_engine *e, struct job *job, json_t *servers)
{
    char date[32];
    time_t t = (time_t)e->now;
    struct tm tm;
    json_t *seen = json_object ();
    gmtime_r (&t, &tm);
    strftime (date, sizeof (date), "%Y-%m-%dT%H:%M:%SZ", &tm);
    size_t i;
    json_t *sv;
    json_array_foreach (servers, i, sv) {
        json_t *sets = json_object_get (json_object_get (sv, "status"), "allocationSets");
        size_t k;
        json_t *set;
        json_array_foreach (sets, k, set) {
            const char *rabbit;
            json_t *got;
            json_object_foreach (json_object_get (set, "storage"), rabbit, got) {
                if (json_integer_value (json_object_get (got, "allocationSize")) <= 0
                    || json_object_get (seen, rabbit))
                    continue;
                json_object_set_new (seen, rabbit, json_true ());
                char reason[160];
                snprintf (reason, sizeof (reason), "flux job %s epilog timed out (dws.abort)",
                          job->name);
                act_k8s (e, "patch", "Storage", DWS_SYSTEM_NAMESPACE, rabbit,
                         json_pack ("{s:{s:s} s:{s:{s:s s:s}}}", "spec", "state", "Disabled",
                                    "metadata", "annotations", "disable_reason", reason,
                                    "disable_date", date),
                         NULL);
                act_log (e, "warning", "%s: rabbit %s disabled: %s", job->name, rabbit, reason);
            }
        }
    }
    json_decref (seen);
}

/* dws.abort: drain the computes still mounted, disable the rabbits that
 * hold the job's storage, tear the Workflow down.  What to drain and
 * disable is read from the ClientMounts and the Servers, and Teardown
 * deletes the ClientMounts (and, once done, the Workflow and with it the
 * Servers): sent in the same batch, a fast Teardown could win the race
 * and leave the reads empty.  So Teardown, or the deletion when Teardown
 * was asked for already, waits until both reads have answered.
 */
void fault_abort_reads (struct dws_engine *e, struct job *job, const struct step *st)
{
    fault_abort_noted (e, job, st);
    job->abort_reads += 2;
    list_for (e, job, "ClientMount", TOK_ABORT_MOUNTS);
    list_for (e, job, "Servers", TOK_ABORT_SERVERS);
}

/* STEP_ABORT_NOTED: the job manager ended the epilog itself. */
void fault_abort_noted (struct dws_engine *e, struct job *job, const struct step *st)
{
    (void)e;
    (void)st;
    sidestate_epilog (e, job, EPILOG_REMOVED);
}

static void abort_read_done (struct dws_engine *e, struct job *job)
{
    if (job->abort_reads <= 0)
        return; /* a late answer */
    job->abort_reads--;
    advance_mark (e, job, NEWS_LOOK); /* Teardown waits for the last */
}

/* The items a read for a timer or an abort got; on a failed read, none
 * (decide from nothing: every node counts as failed).
 */
static json_t *read_items (struct dws_engine *e, enum token_kind kind, struct job *job,
                           json_t *event)
{
    struct k8s_answer a = answer_of (event);
    if (!a.ok) {
        const char *msg = json_string_value (json_object_get (event, "message"));
        act_log (e, "err", "%s: reading for %s failed: %s", job->name, token_kind_name (kind),
                 msg ? msg : "no answer");
        return NULL;
    }
    return json_object_get (a.obj, "items");
}

void fault_on_setup_reads (struct dws_engine *e, enum token_kind kind, struct job *job,
                           json_t *event)
{
    json_t *nodes = setup_culprits (e, job, read_items (e, kind, job, event));
    give_up (e, job, NEWS_SETUP_CULPRITS, nodes, "File system creation took too long");
    json_decref (nodes);
}

/* PreRun's timeout and its TransientCondition timeout read the same */
void fault_on_prerun_reads (struct dws_engine *e, enum token_kind kind, struct job *job,
                            json_t *event)
{
    json_t *items = read_items (e, kind, job, event);
    json_t *bad = unmounted_computes (e, job, items);
    char why[DWS_ERROR_TEXT_MAX], said[DWS_ERROR_TEXT_MAX];
    /* a TransientCondition has DWS' words for what failed (a timeout
     * keeps the reference's note as it is) */
    const char *dws = kind == TOK_TC_PRERUN ? wfview_dws_text (&job->view, said, sizeof (said))
                                            : NULL;
    snprintf (why, sizeof (why), "%s%s%s",
              kind == TOK_TC_PRERUN ? NOTE_PREFIX "workflow in TransientCondition too long in PreRun"
                                    : "timed out waiting for mounts",
              dws ? ": " : "", dws ? dws : "");
    give_up (e, job, NEWS_MOUNT_CULPRITS, bad, why);
    json_decref (bad);
}

void fault_on_postrun_reads (struct dws_engine *e, enum token_kind kind, struct job *job,
                             json_t *event)
{
    struct told in = {.type = "rabbit-timeout",
                       .why = "unmounts timed out, skipping data movement",
                       .items = read_items (e, kind, job, event)};
    advance_tell (e, job, NEWS_POSTRUN_CULPRITS, &in);
}

/* STEP_DRAIN_FAIL: drain the computes st->said->items shows still mounted, then
 * fail the job (st->said->type, st->said->why).
 */
void fault_drain_fail (struct dws_engine *e, struct job *job, const struct step *st)
{
    drain_still_mounted (e, job, st->said->items);
    workflow_fail_job (e, job, st->said->type ? st->said->type : "exception", "%s",
                       st->said->why ? st->said->why : "");
}

/* PostRun failed (DWS' Error, or TransientCondition too long): which
 * computes still hold a mount is read first, to drain exactly those;
 * then the job fails with `why` and goes to Teardown.
 */
void fault_postrun_failed (struct dws_engine *e, struct job *job, const struct step *st)
{
    const char *why = st->said->why ? st->said->why : "";
    if (job->postrun_why)
        return; /* the ClientMounts are being read */
    job->postrun_why = strdup (why);
    if (!job->postrun_why) {
        workflow_fail_job (e, job, "exception", "%s", why);
        return;
    }
    list_for (e, job, "ClientMount", TOK_POSTRUN_FAILED);
}

void fault_on_postrun_failed_reads (struct dws_engine *e, enum token_kind kind,
                                    struct job *job, json_t *event)
{
    json_t *items = read_items (e, kind, job, event);
    char *why = job->postrun_why;
    job->postrun_why = NULL;
    if (!why)
        return; /* a late answer */
    struct told in = {.why = why, .items = items};
    advance_tell (e, job, NEWS_POSTRUN_FAILED_READ, &in);
    free (why);
}

void fault_on_abort_mounts (struct dws_engine *e, enum token_kind kind, struct job *job,
                            json_t *event)
{
    drain_still_mounted (e, job, read_items (e, kind, job, event));
    abort_read_done (e, job);
}

void fault_on_abort_servers (struct dws_engine *e, enum token_kind kind, struct job *job,
                             json_t *event)
{
    disable_rabbits (e, job, read_items (e, kind, job, event));
    abort_read_done (e, job);
}
