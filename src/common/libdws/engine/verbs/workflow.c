/* workflow.c - the verbs on a job's Workflow: create it, move it to a
 * state, fail the job, take it to Teardown (reading first what Teardown
 * deletes), release the epilog, delete it, drop our finalizer, record the
 * states' timing in the KVS; and the answers to those writes.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <ctype.h>
#include <stdarg.h>
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
#include "engine/shapes/wfstate.h"
#include "engine/shapes/wfview.h"
#include "util/f58.h"
#include "util/jsonio.h"
#include "wire/explain.h"
#include "wire/jobwire.h"
#include "wire/wire.h"
#include "workflow.h"

/* --- failing a job ------------------------------------------------------- */
static void tell_failure (struct dws_engine *e, struct job *job, enum news news,
                          const char *type, const char *fmt, va_list ap)
{
    char buf[DWS_ERROR_TEXT_MAX];
    vsnprintf (buf, sizeof (buf), fmt, ap);
    struct told in = {.type = type, .why = buf};
    advance_tell (e, job, news, &in);
}

void workflow_fail_job (struct dws_engine *e, struct job *job, const char *type, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    tell_failure (e, job, NEWS_FAILED, type, fmt, ap);
    va_end (ap);
}

void workflow_unmade (struct dws_engine *e, struct job *job, const char *type, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    tell_failure (e, job, NEWS_UNMADE, type, fmt, ap);
    va_end (ap);
}

/* STEP_FAIL_RECORD: the job is inactive (its computes went back after
 * PostRun): no exception can reach it; its owner learns from the KVS
 * record (flux dws wait) and the log.  Teardown follows.
 */
void workflow_fail_record (struct dws_engine *e, struct job *job, const struct step *st)
{
    const char *why = st->said->why ? st->said->why : "";
    act_log (e, "err", "%s (owner uid %lld, computes released): %s", job->name,
             (long long)job->userid, why);
    free (job->note);
    job->note = strdup (why);
    if (phase_desired (job) <= WF_DATAOUT)
        workflow_kvs_outcome (e, job, DWS_JOBKVS_DATAOUT, "failed", why);
    job->excepted = true;
    advance_mark (e, job, NEWS_LOOK); /* Teardown follows */
}

/* STEP_FAIL_RAISE: the job's exception (its first), then Teardown. */
void workflow_fail_raise (struct dws_engine *e, struct job *job, const struct step *st)
{
    const char *why = st->said->why ? st->said->why : "";
    act_log (e, "err", "%s: %s", job->name, why);
    job->excepted = true;
    act_raise (e, job, st->said->type ? st->said->type : "exception", 0, "%s", why);
    advance_mark (e, job, NEWS_LOOK); /* Teardown follows */
}

/* STEP_FAIL_FORGET: the job was made for a request lost in a restart
 * and its Workflow cannot be made again: its exception (its first: the
 * job is new), and it is forgotten (nothing to tear down).
 */
void workflow_fail_forget (struct dws_engine *e, struct job *job, const struct step *st)
{
    workflow_fail_raise (e, job, st);
    job_forget (e, job);
}

/* STEP_FAIL_AGAIN: a job that has its exception already: logged, and
 * Teardown (asked for already, or now).
 */
void workflow_fail_again (struct dws_engine *e, struct job *job, const struct step *st)
{
    act_log (e, "err", "%s: %s", job->name, st->said->why ? st->said->why : "");
    advance_mark (e, job, NEWS_LOOK); /* Teardown follows, or has begun */
}

void workflow_fail (struct dws_engine *e, struct job *job, const struct step *st)
{
    workflow_fail_job (e, job, st->said->type ? st->said->type : "exception", "%s",
                       st->said->why ? st->said->why : "");
}

/* --- writes ---------------------------------------------------------------- */
static const char *lower_name (enum wf_state s, char *buf, size_t size)
{
    const char *name = wfstate_name (s);
    size_t i;
    for (i = 0; name[i] && i < size - 1; i++)
        buf[i] = (char)tolower ((unsigned char)name[i]);
    buf[i] = '\0';
    return buf;
}

/* DWS_JOBKVS_TIMELINE <state>: when the state was asked for and found done,
 * for `flux dws job` after the job is gone (a time is left out when this
 * service did not see it: asked before it started, or never done).
 */
static void timeline_put (struct job *job, enum wf_state s, json_t *put)
{
    char key[64], lower[16];
    snprintf (key, sizeof (key), DWS_JOBKVS_TIMELINE "%s", lower_name (s, lower, sizeof (lower)));
    json_t *when = json_object ();
    if (job->asked_at[s] > 0)
        json_object_set_new (when, "asked", json_real (job->asked_at[s]));
    if (job->done_at[s] > 0)
        json_object_set_new (when, "done", json_real (job->done_at[s]));
    json_object_set_new (put, key, when);
}

void workflow_kvs_timing (struct dws_engine *e, struct job *job, enum wf_state s, bool with_wf)
{
    char key[64], link[64], lower[16];
    lower_name (s, lower, sizeof (lower));
    json_t *put = json_object ();
    json_t *links = json_object ();
    const char *elapsed = job->view.elapsed;
    snprintf (key, sizeof (key), DWS_JOBKVS_TIMING "%s", lower);
    snprintf (link, sizeof (link), DWS_JOBKVS_LINK_TIMING_PREFIX "%s" DWS_JOBKVS_LINK_TIMING_SUFFIX,
              lower);
    json_object_set_new (put, key, json_string (elapsed ? elapsed : ""));
    json_object_set_new (links, link, json_string (key));
    timeline_put (job, s, put);
    if (with_wf && job->wf) {
        json_object_set (put, DWS_JOBKVS_WORKFLOW, job->wf);
        json_object_set_new (links, DWS_JOBKVS_MEMO_WORKFLOW, json_string (DWS_JOBKVS_WORKFLOW));
    }
    act_kvs (e, job, put, links);
}

/* What became of the job's data and storage after its run, in the job's
 * KVS directory (RFC 16): key = {"state", "time", "error"?,
 * "explanation"?}, key DWS_JOBKVS_DATAOUT (complete, failed, skipped) or
 * DWS_JOBKVS_TEARDOWN (complete).  flux dws wait reads them: after an
 * early release they are the only record the job keeps.
 */
void workflow_kvs_outcome (struct dws_engine *e, struct job *job, const char *key,
                           const char *state, const char *error)
{
    char sentence[DWS_EXPLAIN_MAX];
    bool dataout = !strcmp (key, DWS_JOBKVS_DATAOUT);
    if (dataout && job->dataout_ended)
        return; /* the first outcome stands */
    json_t *o = json_pack ("{s:s s:f}", "state", state, "time", e->now);
    if (o && error) {
        /* after an early release this record is all the job's owner
         * gets (no exception reaches an inactive job): the error as DWS or
         * the engine words it, and beside it what it means (explain.h) */
        json_object_set_new (o, "error", json_string (error));
        if (dws_explain (error, sentence, sizeof (sentence)))
            json_object_set_new (o, "explanation", json_string (sentence));
    }
    act_kvs (e, job, json_pack ("{s:o}", key, o), NULL);
    if (dataout) {
        job->dataout_ended = true;
        if (job->released) {
            /* the jobtap plugin holds the dependents of a released job
             * (dws-dataout) until now; an afterok one fails on a failure */
            act_dataout_end (e, job->id, !strcmp (state, "complete"), error);
        }
    }
}

void workflow_create (struct dws_engine *e, struct job *job)
{
    advance_mark (e, job, NEWS_CREATE);
}

void workflow_send_create (struct dws_engine *e, struct job *job, const struct step *st)
{
    char token[TOKEN_SIZE];
    (void)st;
    char tol[32];
    limits_held_uncount (&job->lim.held); /* counted: a Workflow created again is not held */
    char *jobid = dws_f58_plain ((unsigned long long)job->id);
    char *res = job->resources ? json_dumps (job->resources, JSON_COMPACT) : NULL;
    snprintf (tol, sizeof (tol), "%lld", (long long)job->tolerance);
    json_t *ann = json_pack ("{s:s}", ANN_TOLERANCE, tol);
    if (res)
        json_object_set_new (ann, ANN_RESOURCES, json_string (res));
    if (job->hosts)
        json_object_set_new (ann, ANN_HOSTS, json_string (job->hosts));
    if (job->release != RELEASE_DEFAULT)
        json_object_set_new (ann, ANN_RELEASE,
                             json_string (job->release == RELEASE_EARLY ? DWS_RELEASE_AFTER_UNMOUNT
                                                                        : DWS_RELEASE_AFTER_TEARDOWN));
    if (job->ps.restage == RESTAGE_AGAIN) /* a restarted service takes it up so */
        json_object_set_new (ann, ANN_GIVEN_UP, json_string (job->ps.restage_why));
    if (job->bank)
        json_object_set_new (ann, ANN_BANK, json_string (job->bank));
    if (job->project)
        json_object_set_new (ann, ANN_PROJECT, json_string (job->project));
    if (job->prestage_asked >= 0)
        json_object_set_new (ann, ANN_PRESTAGE_ASKED,
                             json_string (job->prestage_asked ? "yes" : "no"));
    char *rsv = job->reserved ? json_dumps (job->reserved, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    if (rsv)
        json_object_set_new (ann, ANN_RESERVED, json_string (rsv));
    free (rsv);
    json_t *body = json_pack ("{s:{s:s s:s s:[s] s:o}"
                              " s:{s:s s:O s:s s:s s:I s:I}}",
                              "metadata", "name", job->name, "namespace", e->cfg.namespace,
                              "finalizers", WORKFLOW_FINALIZER, "annotations", ann,
                              "spec", "desiredState", wfstate_name (WF_PROPOSAL), "dwDirectives",
                              job->directives, "wlmID", "flux", "jobID", jobid ? jobid : "",
                              "userID", (json_int_t)job->userid, "groupID",
                              (json_int_t)job->groupid);
    free (jobid);
    free (res);
    act_k8s (e, "create", "Workflow", e->cfg.namespace, job->name, body,
             token_for (token, sizeof (token), TOK_CREATE, job));
    job->written &= ~((uint64_t)1 << TOK_CREATE); /* until this one answers */
}

/* The patch of desiredState s (asked for by the decider), and the timers
 * that guard s (the decider's too), on a token of `kind`.
 */
static void patch_state (struct dws_engine *e, struct job *job, enum wf_state s,
                         json_t *annotations, unsigned timers, enum token_kind kind)
{
    char token[TOKEN_SIZE];
    if (s == WF_SETUP) {
        sidestate_setup (e, job, SETUP_NONE);
        job->written &= ~((uint64_t)1 << TOK_SERVERS); /* a later fill is another */
    }
    json_t *body = json_pack ("{s:{s:s}}", "spec", "desiredState", wfstate_name (s));
    if (annotations)
        json_object_set_new (body, "metadata", json_pack ("{s:o}", "annotations", annotations));
    act_k8s (e, "patch", "Workflow", e->cfg.namespace, job->name, body,
             token_for (token, sizeof (token), kind, job));
    workflow_start_timers (e, job, timers);
}

void workflow_start_timers (struct dws_engine *e, struct job *job, unsigned timers)
{
    /* teardown_after before PostRun's own, as they were always started */
    static const enum timer_kind order[] = {T_SETUP, T_PRERUN, T_TEARDOWN_AFTER, T_POSTRUN};
    for (size_t i = 0; i < sizeof (order) / sizeof (order[0]); i++) {
        enum timer_kind k = order[i];
        if (!(timers & (1u << k)))
            continue;
        double after = k == T_SETUP      ? e->cfg.setup_timeout
                       : k == T_PRERUN   ? e->cfg.prerun_timeout
                       : k == T_POSTRUN  ? e->cfg.postrun_timeout
                                         : e->cfg.teardown_after;
        act_timer_start (e, job, k, after);
    }
    if (timers & (1u << T_DATAIN))
        datain_begin (e, job);
}

/* Does the job have a #DW container directive (user containers, whose
 * Pods nnf-sos keeps until Teardown)?
 */
static bool has_container (struct job *job)
{
    size_t i;
    json_t *d;
    json_array_foreach (job->directives, i, d) {
        const char *s = json_string_value (d);
        while (s && isspace ((unsigned char)*s))
            s++;
        if (s && !strncmp (s, "#DW", 3)) {
            s += 3;
            while (isspace ((unsigned char)*s))
                s++;
            if (!strncmp (s, "container", 9) && (s[9] == '\0' || isspace ((unsigned char)s[9])))
                return true;
        }
    }
    return false;
}

void workflow_teardown_patch (struct dws_engine *e, struct job *job, const struct step *st)
{
    (void)st;
    json_t *ann = job->epilog ? json_pack ("{s:s}", ANN_EPILOG, "active") : NULL;
    if (ann) /* the epilog's mark is asked with it */
        job->asking |= (uint64_t)1 << TOK_ANNOTATE;
    job->asking |= (uint64_t)1 << TOK_STATE; /* once for this Workflow */
    patch_state (e, job, WF_TEARDOWN, ann, 0, TOK_STATE);
}

/* Move the job's Workflow to Teardown.  What Teardown deletes and the
 * reference keeps in the job's KVS is read first (as flux-coral2 does
 * before its Teardown patch): the NnfDataMovements (save_datamovements)
 * and the user container's log (#DW container, once PreRun was asked for:
 * nnf-sos deletes the Pods at Teardown).  Meanwhile desired is Teardown
 * already, so nothing else moves the Workflow on; the patch goes out once
 * the last read has answered, whatever the answer.
 */
void workflow_mark_epilog (struct dws_engine *e, struct job *job, const struct step *st)
{
    char token[TOKEN_SIZE];
    (void)st;
    act_k8s (e, "patch", "Workflow", e->cfg.namespace, job->name,
             json_pack ("{s:{s:{s:s}}}", "metadata", "annotations", ANN_EPILOG, "active"),
             token_for (token, sizeof (token), TOK_ANNOTATE, job));
    job->asking |= (uint64_t)1 << TOK_ANNOTATE; /* until the Workflow shows it */
}

/* STEP_TEARDOWN_BEGIN: desiredState is Teardown already (the decider asked for
 * it), st.was the state asked for before.
 */
void workflow_teardown_begin (struct dws_engine *e, struct job *job, const struct step *st)
{
    char token[TOKEN_SIZE];
    for (int k = 0; k < T_NKINDS; k++)
        act_timer_stop (e, job, (enum timer_kind)k);
    if (job->wf) {
        json_t *put = json_pack ("{s:O}", DWS_JOBKVS_WORKFLOW, job->wf);
        /* the state the job leaves unfinished keeps when it was asked for */
        enum wf_state left = st->was;
        if (put && left > WF_NONE && left < WF_TEARDOWN && job->done_at[left] <= 0)
            timeline_put (job, left, put);
        act_kvs (e, job, put, json_pack ("{s:s}", DWS_JOBKVS_MEMO_WORKFLOW, DWS_JOBKVS_WORKFLOW));
    }
    bool prerun = st->was >= WF_PRERUN;
    job->teardown_reads = 0;
    if (e->cfg.save_datamovements > 0) {
        char sel[128];
        snprintf (sel, sizeof (sel), WORKFLOW_LABEL "=%s", job->name);
        act_k8s_list (e, "NnfDataMovement", sel, token_for (token, sizeof (token), TOK_DM, job));
        job->teardown_reads++;
    }
    if (prerun && has_container (job)) {
        char sel[256];
        snprintf (sel, sizeof (sel), WORKFLOW_LABEL "=%s," WORKFLOW_NS_LABEL "=%s", job->name,
                  e->cfg.namespace);
        json_t *a = json_pack ("{s:s s:s s:s s:s s:s s:s}", "action", DWS_WIRE_ACTION (K8S), "op", "list",
                               "kind", "Pod", "namespace", e->cfg.namespace, "label_selector",
                               sel, "token", token_for (token, sizeof (token), TOK_PODS, job));
        act (e, a);
        job->teardown_reads++;
    }
    advance_mark (e, job, NEWS_LOOK);
}

void workflow_teardown (struct dws_engine *e, struct job *job)
{
    job->toredown = true; /* without DataOut (or PostRun) */
    advance_mark (e, job, NEWS_LOOK);
}

/* One read before Teardown has answered. */
static void teardown_read_done (struct dws_engine *e, struct job *job)
{
    if (job->teardown_reads <= 0)
        return; /* a late answer (after a rebuild) */
    job->teardown_reads--;
    advance_mark (e, job, NEWS_LOOK);
}

/* Of a Workflow's Pods, the one whose log is kept: the MPI launcher, else
 * the first by name (a non-MPI container runs one Pod per rabbit, the
 * same program on each).
 */
static json_t *log_pod (json_t *items)
{
    json_t *best = NULL;
    bool best_launcher = false;
    size_t i;
    json_t *pod;
    json_array_foreach (items, i, pod) {
        json_t *md = json_object_get (pod, "metadata");
        const char *name = json_string_value (json_object_get (md, "name"));
        const char *role = json_string_value (
            json_object_get (json_object_get (md, "labels"), "training.kubeflow.org/job-role"));
        bool launcher = role && !strcmp (role, "launcher");
        json_t *containers = json_object_get (json_object_get (pod, "spec"), "containers");
        if (!name || !json_string_value (json_object_get (json_array_get (containers, 0),
                                                          "name")))
            continue;
        if (best) {
            const char *bname = dws_json_str_at (best, "metadata", "name");
            if (best_launcher && !launcher)
                continue;
            if (best_launcher == launcher && strcmp (name, bname) >= 0)
                continue;
        }
        best = pod;
        best_launcher = launcher;
    }
    return best;
}

/* The tail of a text: at most max bytes, cut at a UTF-8 character start. */
static const char *text_tail (const char *s, size_t max)
{
    size_t n = strlen (s);
    if (n <= max)
        return s;
    s += n - max;
    while ((*s & 0xC0) == 0x80)
        s++;
    return s;
}

/* Most recent first (creationTimestamp, then name), for qsort: RFC 3339
 * timestamps of the API server's one format sort as text.
 */
static int dm_newer_first (const void *a, const void *b)
{
    json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
    const char *tx = dws_json_str_at (x, "metadata", "creationTimestamp");
    const char *ty = dws_json_str_at (y, "metadata", "creationTimestamp");
    int c = strcmp (ty ? ty : "", tx ? tx : "");
    if (c == 0) {
        const char *nx = dws_json_str_at (x, "metadata", "name");
        const char *ny = dws_json_str_at (y, "metadata", "name");
        c = strcmp (ny ? ny : "", nx ? nx : "");
    }
    return c;
}

/* The NnfDataMovements to keep: the Failed ones first, each group most
 * recent first, at most save_datamovements.
 */
static json_t *datamovements_kept (struct dws_engine *e, json_t *items)
{
    size_t n = json_array_size (items);
    json_t **v = calloc (n ? n : 1, sizeof (*v));
    json_t *out = json_array ();
    if (!v || !out) {
        free (v);
        return out;
    }
    for (int pass = 0; pass < 2; pass++) {
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            json_t *dm = json_array_get (items, i);
            const char *status = dws_json_str_at (dm, "status", "status");
            bool failed = status && !strcmp (status, "Failed");
            if (failed == (pass == 0))
                v[k++] = dm;
        }
        qsort (v, k, sizeof (*v), dm_newer_first);
        for (size_t i = 0; i < k && json_array_size (out) < (size_t)e->cfg.save_datamovements;
             i++)
            json_array_append (out, v[i]);
    }
    free (v);
    return out;
}

void workflow_epilog_remove (struct dws_engine *e, struct job *job)
{
    if (!sidestate_epilog_end (e, job))
        return;
    act_record (e, job); /* the job ends: its record is written before */
    rabbits_job_done (e, job);
    act_epilog_remove (e, job->id);
}

void workflow_remove_finalizer (struct dws_engine *e, struct job *job)
{
    char token[TOKEN_SIZE], path[64];
    if (job->view.finalizer_index < 0)
        return;
    snprintf (path, sizeof (path), "/metadata/finalizers/%d", job->view.finalizer_index);
    json_t *ops = json_pack ("[{s:s s:s s:s} {s:s s:s}]", "op", "test", "path", path, "value",
                             WORKFLOW_FINALIZER, "op", "remove", "path", path);
    act_k8s (e, "json-patch", "Workflow", e->cfg.namespace, job->name, ops,
             token_for (token, sizeof (token), TOK_FINALIZER, job));
    job->asking |= (uint64_t)1 << TOK_FINALIZER; /* once, until it is answered */
    job->refused &= ~((uint64_t)1 << TOK_FINALIZER);
}

static void delete (struct dws_engine *e, struct job *job)
{
    char token[TOKEN_SIZE];
    act_k8s (e, "delete", "Workflow", e->cfg.namespace, job->name, NULL,
             token_for (token, sizeof (token), TOK_DELETE, job));
    workflow_remove_finalizer (e, job);
}

/* STEP_DELETE: Teardown is complete and the job in its epilog: release
 * the epilog, delete the Workflow.
 */
void workflow_delete (struct dws_engine *e, struct job *job, const struct step *st)
{
    (void)st;
    workflow_epilog_remove (e, job);
    delete (e, job);
}

/* STEP_DELETE_GIVEN_UP: Teardown is complete for a job whose pre-staging
 * was given up before its nodes: the job waits (its epilog not begun),
 * its rabbits are free; the Workflow is deleted, then created again.
 */
void workflow_delete_given_up (struct dws_engine *e, struct job *job, const struct step *st)
{
    (void)st;
    rabbits_job_done (e, job);
    delete (e, job);
}

json_t *workflow_hosts_annotations (const struct job *job)
{
    json_t *ann = json_pack ("{s:s}", ANN_HOSTS, job->hosts);
    char *rsv = job->reserved ? json_dumps (job->reserved, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    if (ann && rsv)
        json_object_set_new (ann, ANN_RESERVED, json_string (rsv));
    free (rsv);
    return ann;
}

/* STEP_ASK: desiredState st->state (the decider asked for it); Setup
 * records the job's hosts (they ride on it: decide.c's setup_start),
 * PostRun says the epilog is active.
 */
void workflow_ask (struct dws_engine *e, struct job *job, const struct step *st)
{
    json_t *annotations = NULL;
    if (st->state == WF_SETUP && job->hosts)
        annotations = workflow_hosts_annotations (job);
    else if (st->state == WF_POSTRUN)
        annotations = json_pack ("{s:s}", ANN_EPILOG, "active");
    patch_state (e, job, st->state, annotations, st->timers, TOK_STATE);
}

void workflow_ask_held (struct dws_engine *e, struct job *job, const struct step *st,
                        json_t *annotations)
{
    patch_state (e, job, st->state, annotations, st->timers, TOK_DATAOUT_HELD);
}

/* STEP_FINALIZER: the Workflow we delete, seen, still has our finalizer;
 * the sighting is read (a failed removal is asked again once the
 * Workflow is seen after it: decide.c, seen ()).
 */
void workflow_finalizer (struct dws_engine *e, struct job *job, const struct step *st)
{
    (void)st;
    job->wf_read = job->wf_seen;
    workflow_remove_finalizer (e, job);
}

void workflow_on_write (struct dws_engine *e, enum token_kind kind, struct job *job,
                        json_t *event)
{
    struct k8s_answer a = answer_of (event);
    /* a finalizer patch that failed on its way is asked again by the next
     * look once the Workflow is seen after it; one whose test failed (409,
     * 422: our finalizer is not where the Workflow seen said) is marked
     * refused and waits for the Workflow to change (progress.c); one done
     * is never asked again */
    if (kind == TOK_FINALIZER && !a.ok && a.code != 409 && a.code != 422)
        job->asking &= ~((uint64_t)1 << TOK_FINALIZER);
    if (kind == TOK_FINALIZER && !a.ok && (a.code == 409 || a.code == 422))
        job->refused |= (uint64_t)1 << TOK_FINALIZER;
    /* the epilog's mark failed: asked again while the Workflow does not
     * show it */
    if (kind == TOK_ANNOTATE && !a.ok && a.code != 404)
        job->asking &= ~((uint64_t)1 << TOK_ANNOTATE);
    if (!a.ok && a.code != 404 && a.code != 409 && a.code != 422)
        act_log (e, "err", "%s: %s failed: %s", job->name, token_kind_name (kind),
                 answer_message (event));
}

void workflow_on_state (struct dws_engine *e, enum token_kind kind, struct job *job,
                        json_t *event)
{
    (void)kind;
    struct k8s_answer a = answer_of (event);
    if (!a.ok && a.code != 404)
        workflow_fail_job (e, job, "exception", NOTE_PREFIX "cannot move workflow %s to %s: %s",
                  job->name, wfstate_name (phase_desired (job)), answer_message (event));
}

void workflow_on_datamovements (struct dws_engine *e, enum token_kind kind, struct job *job,
                                json_t *event)
{
    (void)kind;
    struct k8s_answer a = answer_of (event);
    if (a.ok) {
        json_decref (job->dms_kept);
        job->dms_kept = datamovements_kept (e, json_object_get (a.obj, "items"));
        act_kvs (e, job, json_pack ("{s:O}", DWS_JOBKVS_DATAMOVEMENTS, job->dms_kept),
                 json_pack ("{s:s}", "rabbit_datamovements", DWS_JOBKVS_DATAMOVEMENTS));
        act_record (e, job); /* the record shows them too */
    }
    else
        act_log (e, "warning", "%s: cannot list its NnfDataMovements: %s", job->name,
                 answer_message (event));
    teardown_read_done (e, job);
}

void workflow_on_pods (struct dws_engine *e, enum token_kind kind, struct job *job,
                       json_t *event)
{
    (void)kind;
    struct k8s_answer a = answer_of (event);
    json_t *pod = a.ok ? log_pod (json_object_get (a.obj, "items")) : NULL;
    if (!a.ok)
        act_log (e, "warning", "%s: cannot list its container Pods: %s", job->name,
                 answer_message (event));
    if (!pod) {
        teardown_read_done (e, job);
        return;
    }
    json_t *md = json_object_get (pod, "metadata");
    json_t *c0 = json_array_get (json_object_get (json_object_get (pod, "spec"),
                                                  "containers"), 0);
    const char *ns = json_string_value (json_object_get (md, "namespace"));
    char token[TOKEN_SIZE];
    act (e, json_pack ("{s:s s:s s:s s:s s:O s:O s:I s:s}", "action", DWS_WIRE_ACTION (K8S), "op", "log",
                       "kind", "Pod", "namespace", ns ? ns : e->cfg.namespace, "name",
                       json_object_get (md, "name"), "container",
                       json_object_get (c0, "name"), "tail_lines",
                       (json_int_t)CONTAINER_LOG_LINES, "token",
                       token_for (token, sizeof (token), TOK_PODLOG, job)));
    return; /* the read goes on: podlog ends it */
}

void workflow_on_podlog (struct dws_engine *e, enum token_kind kind, struct job *job,
                         json_t *event)
{
    (void)kind;
    struct k8s_answer a = answer_of (event);
    const char *text = json_string_value (json_object_get (a.obj, "log"));
    if (a.ok && text)
        act_kvs (e, job,
                 json_pack ("{s:s}", DWS_JOBKVS_CONTAINER_LOG,
                            text_tail (text, CONTAINER_LOG_MAX)),
                 json_pack ("{s:s}", "rabbit_container_log", DWS_JOBKVS_CONTAINER_LOG));
    else
        act_log (e, "warning", "%s: cannot read its container log: %s", job->name,
                 a.ok ? "no log in the answer" : answer_message (event));
    teardown_read_done (e, job);
}
