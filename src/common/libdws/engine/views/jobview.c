/* jobview.c - a rabbit job as its owner sees it: the dws.jobs answer (a
 * line's worth per job), the dws.job answer (one job in full, with its
 * NnfDataMovements listed for the answer, so a long DataIn shows as moving)
 * and the job's record: the same view, written into the job's KVS
 * directory (DWS_ENGINE_RECORD_KEY) each time it changes, so that an ended
 * job reads back what its last answer showed.  This file is the one author
 * of that shape; the readers (flux dws job, flux dws jobs) only say where
 * they read it from.
 *
 * A user sees only their own jobs; the instance owner sees all.  What goes
 * out is what the job's owner may know: no Workflow object, no token or
 * Secret name, nothing of another user's job.  The error is DWS' text (or
 * the note we raised) as it was; the plain sentence is added where it is
 * shown (explain.h), so the engine decides no wording here.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/decider/phase.h"
#include "engine/decider/why.h"
#include "engine/job.h"
#include "engine/limits.h"
#include "engine/shapes/act.h"
#include "engine/shapes/answer.h"
#include "engine/shapes/hosts.h"
#include "engine/shapes/token.h"
#include "engine/shapes/wfstate.h"
#include "engine/verbs/datain.h"
#include "engine/verbs/prestage.h"
#include "jobview.h"
#include "parse/breakdown.h"
#include "parse/directive.h"
#include "util/hostlist.h"

#define LABEL_DIRECTIVE_INDEX "nnf.cray.hpe.com/directive_index"
#define LABEL_INITIATOR "dm.cray.hpe.com/initiator"

static bool may_see (struct dws_engine *e, struct job *job, json_int_t uid)
{
    return uid == e->cfg.owner || uid == job->userid;
}

/* The rabbits of the job's computes (RFC 29), or NULL (no hosts yet, or
 * none mapped).
 */
static char *rabbits_of (struct dws_engine *e, struct job *job)
{
    if (!job->hosts || !e->compute2rabbit)
        return NULL;
    json_t *names = hosts_minus (job->hosts, NULL, NULL);
    struct dws_hostlist *hl = dws_hostlist_create ();
    size_t i;
    json_t *n;
    json_array_foreach (names, i, n) {
        const char *r = json_string_value (json_object_get (e->compute2rabbit,
                                                            json_string_value (n)));
        if (r && hl)
            dws_hostlist_append_host (hl, r, NULL);
    }
    json_decref (names);
    struct dws_hostlist *u = hl ? dws_hostlist_uniq (hl, NULL) : NULL;
    char *s = u && dws_hostlist_count (u) > 0 ? dws_hostlist_encode (u) : NULL;
    dws_hostlist_destroy (hl);
    dws_hostlist_destroy (u);
    return s;
}

/* The error a job's owner should read: the note we raised, else DWS'
 * message while the Workflow is in Error or TransientCondition.
 */
static const char *error_of (struct job *job)
{
    const char *s = job->view.status;
    if (job->note)
        return job->note;
    if (s && (!strcmp (s, "Error") || !strcmp (s, "TransientCondition")))
        return job->view.message ? job->view.message : s;
    return NULL;
}

/* Each directive: command, name, type, capacity and the rest of its
 * arguments, plus (jobdw, persistentdw) the allocation sets DWS asked for
 * it, from its DirectiveBreakdown.
 */
static json_t *breakdown_for (struct job *job, size_t index)
{
    char name[96];
    const char *k;
    json_t *bd;
    snprintf (name, sizeof (name), "%s-%zu", job->name, index); /* as nnf-sos names it */
    if ((bd = json_object_get (job->breakdowns, name)))
        return bd;
    json_object_foreach (job->breakdowns, k, bd) {
        const char *ix = json_string_value (
            json_object_get (json_object_get (json_object_get (bd, "metadata"), "labels"),
                             LABEL_DIRECTIVE_INDEX));
        if (ix && strtol (ix, NULL, 10) == (long)index)
            return bd;
    }
    return NULL;
}

/* The job's directives parsed (dws_dw_parse; null where one does not
 * parse), kept while its directives stay the same: a record is built at
 * each of the job's events.
 */
static json_t *directives_parsed (struct job *job)
{
    if (job->dw_parsed && json_equal (job->dw_parsed_of, job->directives))
        return job->dw_parsed;
    json_decref (job->dw_parsed);
    json_decref (job->dw_parsed_of);
    job->dw_parsed = json_array ();
    job->dw_parsed_of = json_deep_copy (job->directives);
    size_t i;
    json_t *d;
    json_array_foreach (job->directives, i, d) {
        json_t *parsed = dws_dw_parse (json_string_value (d), NULL);
        json_array_append_new (job->dw_parsed, parsed ? parsed : json_null ());
    }
    return job->dw_parsed;
}

static json_t *directives_of (struct job *job, bool full)
{
    json_t *out = json_array ();
    json_t *all = directives_parsed (job);
    size_t i;
    json_t *d;
    json_array_foreach (job->directives, i, d) {
        json_t *parsed = json_array_get (all, i);
        if (json_is_null (parsed))
            parsed = NULL;
        json_t *o = json_object ();
        if (!o)
            break;
        if (parsed) {
            json_object_set (o, "command", json_object_get (parsed, "command"));
            size_t k;
            json_t *kv;
            json_t *args = json_object ();
            json_array_foreach (json_object_get (parsed, "args"), k, kv) {
                json_t *v = json_array_get (kv, 1);
                const char *key = json_string_value (json_array_get (kv, 0));
                if (key) /* a bare key: "" */
                    json_object_set_new (args, key,
                                         json_is_string (v) ? json_incref (v) : json_string (""));
            }
            json_object_set_new (o, "args", args);
        }
        if (full) {
            json_object_set (o, "directive", d);
            json_t *bd = breakdown_for (job, i);
            json_t *sets = json_object_get (
                json_object_get (json_object_get (bd, "status"), "storage"), "allocationSets");
            if (json_is_array (sets)) {
                json_t *mine = json_array ();
                size_t k;
                json_t *s;
                json_array_foreach (sets, k, s)
                    json_array_append_new (
                        mine, json_pack ("{s:O? s:O? s:O?}", "label",
                                         json_object_get (s, "label"), "minimumCapacity",
                                         json_object_get (s, "minimumCapacity"),
                                         "allocationStrategy",
                                         json_object_get (s, "allocationStrategy")));
                json_object_set_new (o, "allocation_sets", mine);
            }
        }
        json_array_append_new (out, o);
    }
    return out;
}

/* What a line of `flux dws jobs` needs (and `flux dws job` starts from),
 * but the time in the phase, which is the answer's (jobview_line).
 */
static json_t *job_summary (struct dws_engine *e, struct job *job, bool full)
{
    const struct wfview *v = &job->view;
    json_t *o = json_pack ("{s:I s:I s:s s:s s:s s:s s:b s:s s:o}", "id", job->id, "userid",
                           (json_int_t)job->userid, "workflow", job->name, "phase",
                           phase_name (job->phase), "desired",
                           wfstate_name (phase_desired (job)), "state", wfstate_name (v->state),
                           "ready", v->ready, "status", v->status ? v->status : "",
                           "directives", directives_of (job, full));
    if (!o)
        return NULL;
    char *rabbits = rabbits_of (e, job);
    if (rabbits)
        json_object_set_new (o, "rabbits", json_string (rabbits));
    free (rabbits);
    const char *err = error_of (job);
    if (err)
        json_object_set_new (o, "error", json_string (err));
    if (job->released)
        json_object_set_new (o, "released", json_true ());
    if (job->bank) /* flux-accounting's (job_set_account) */
        json_object_set_new (o, "bank", json_string (job->bank));
    if (job->project)
        json_object_set_new (o, "project", json_string (job->project));
    if (job->lim.why) /* held by [rabbit.limits] (admit.c) */
        json_object_set_new (o, "waiting", json_string (job->lim.why));
    json_t *prestage = prestage_view (e, job);
    if (prestage)
        json_object_set_new (o, "prestage", prestage);
    json_t *datain = !job->ps.staged && phase_desired (job) == WF_DATAIN
                             && phase_handled (job) < WF_DATAIN
                         ? datain_view (e, job)
                         : NULL;
    if (datain) /* in its prolog: how far its DataIn is (a pre-staged job's is above) */
        json_object_set_new (o, "datain", datain);
    if (job->ps.not[0]) /* the site's default wanted it: why not */
        json_object_set_new (o, "prestage_not", json_string (job->ps.not));
    return o;
}

/* A line of the dws.jobs answer. */
static json_t *jobview_line (struct dws_engine *e, struct job *job)
{
    json_t *o = job_summary (e, job, false);
    if (o)
        json_object_set_new (o, "phase_seconds", json_real (e->now - job->state_since));
    return o;
}

/* The Workflow's env as the job sees it: the DW_* and NNF_* variables
 * only (nothing else DWS might put there).
 */
static json_t *env_of (struct job *job)
{
    json_t *out = json_object ();
    const char *k;
    json_t *v;
    json_object_foreach (job->view.env, k, v)
        if (json_is_string (v) && (!strncmp (k, "DW_", 3) || !strncmp (k, "NNF_", 4)))
            json_object_set (out, k, v);
    return out;
}

/* When each Workflow state was asked for and found done (unix time; 0:
 * not seen by this service, e.g. before a restart), and DWS' own figure.
 */
static json_t *timeline_of (struct job *job)
{
    json_t *out = json_object ();
    for (int s = WF_PROPOSAL; s < WF_NSTATES; s++) {
        if (job->asked_at[s] <= 0 && job->done_at[s] <= 0)
            continue;
        json_t *o = json_object ();
        if (job->asked_at[s] > 0)
            json_object_set_new (o, "asked", json_real (job->asked_at[s]));
        if (job->done_at[s] > 0)
            json_object_set_new (o, "done", json_real (job->done_at[s]));
        json_object_set_new (out, wfstate_name ((enum wf_state)s), o);
    }
    return out;
}

/* One NnfDataMovement as its owner reads it: direction, paths, state,
 * and nnf-dm's commandStatus (progress, elapsed time, last dcp line, and
 * the counts where DWS gives them).
 */
static json_t *datamovement_of (json_t *dm)
{
    json_t *meta = json_object_get (dm, "metadata");
    json_t *labels = json_object_get (meta, "labels");
    json_t *spec = json_object_get (dm, "spec");
    json_t *st = json_object_get (dm, "status");
    json_t *o = json_pack ("{s:O? s:O? s:O? s:O? s:O?}", "name", json_object_get (meta, "name"),
                           "initiator", json_object_get (labels, LABEL_INITIATOR), "directive",
                           json_object_get (labels, LABEL_DIRECTIVE_INDEX), "source",
                           json_object_get (json_object_get (spec, "source"), "path"),
                           "destination",
                           json_object_get (json_object_get (spec, "destination"), "path"));
    static const char *const fields[] = {"state",     "status",  "message", "startTime",
                                         "endTime",   "restarts", NULL};
    for (int i = 0; o && fields[i]; i++) {
        json_t *v = json_object_get (st, fields[i]);
        if (v)
            json_object_set (o, fields[i], v);
    }
    json_t *cs = json_object_get (st, "commandStatus");
    if (o && json_is_object (cs)) {
        static const char *const cfields[] = {"progress",    "elapsedTime", "lastMessage",
                                              "lastMessageTime", "items",   "directories",
                                              "files",       "symlinks",    "bytes",
                                              "seconds",     NULL};
        json_t *c = json_object ();
        for (int i = 0; cfields[i]; i++) {
            json_t *v = json_object_get (cs, cfields[i]);
            if (v)
                json_object_set (c, cfields[i], v);
        }
        json_object_set_new (o, "commandStatus", c);
    }
    return o;
}

/* What the job's storage held, for `flux dws usage`: from its Workflow's
 * creation ("since", the API server's time) until its Teardown was done
 * ("until", DWS' readyChange; the service's own time where DWS gave
 * none), the GiB its directives ask for by storage type (as
 * [rabbit.limits] counts them) and, once it is torn down, the
 * GiB-seconds of each.  NULL before its Workflow exists.
 */
static json_t *usage_of (struct job *job)
{
    const struct wfview *v = &job->view;
    if (!job->wf || v->created <= 0)
        return NULL;
    if (!job->gib_types) {
        int64_t nnodes = job->resources ? dws_jobspec_node_count (job->resources, NULL) : 1;
        job->gib_types = limits_job_gib_by_type (job->directives, nnodes, NULL);
        if (!job->gib_types) /* directives the create refused: none held */
            job->gib_types = json_object ();
    }
    double until = 0;
    if (v->state == WF_TEARDOWN && v->ready)
        until = v->ready_change > 0 ? v->ready_change : job->done_at[WF_TEARDOWN];
    json_t *o = json_pack ("{s:f s:O}", "since", v->created, "gib", job->gib_types);
    if (o && until > 0) {
        double held = until > v->created ? until - v->created : 0;
        json_t *gs = json_object ();
        const char *type;
        json_t *g;
        json_object_foreach (job->gib_types, type, g)
            json_object_set_new (gs, type, json_real ((double)json_integer_value (g) * held));
        json_object_set_new (o, "until", json_real (until));
        json_object_set_new (o, "gib_seconds", gs);
    }
    return o;
}

/* The job's view as of now, all but what only an answer has (success,
 * the time in the phase, data movements listed for it): datamovements are
 * those given (NnfDataMovement objects, NULL: none), shown as datamovement_of
 * reads each.  The record is this with the NnfDataMovements saved before
 * Teardown; the dws.job answer adds its own list and the rest to it.
 */
static json_t *job_view (struct dws_engine *e, struct job *job, json_t *datamovements)
{
    json_t *o = job_summary (e, job, true);
    if (!o)
        return NULL;
    const struct wfview *v = &job->view;
    json_object_set_new (o, "message", json_string (v->message ? v->message : ""));
    if (job->hosts)
        json_object_set_new (o, "hosts", json_string (job->hosts));
    if (job->failed)
        json_object_set_new (o, "failed_hosts", json_string (job->failed));
    if (job->reserved)
        json_object_set (o, "lustre_rabbits", job->reserved);
    if (job->held)
        json_object_set_new (o, "held_ssds", json_integer ((json_int_t)json_array_size (job->held)));
    json_object_set_new (o, "env", env_of (job));
    json_object_set_new (o, "timeline", timeline_of (job));
    json_t *usage = usage_of (job);
    if (usage)
        json_object_set_new (o, "usage", usage);
    json_object_set_new (o, "tolerance", json_integer (job->tolerance));
    json_t *dms = json_array ();
    size_t i;
    json_t *dm;
    json_array_foreach (datamovements, i, dm)
        json_array_append_new (dms, datamovement_of (dm));
    json_object_set_new (o, "datamovements", dms);
    return o;
}

/* What moved it, each step with its rule (why.c), added to a view. */
static json_t *with_why (struct dws_engine *e, struct job *job, json_t *o)
{
    json_t *why = o ? why_view (e, job) : NULL;
    if (why)
        json_object_set_new (o, "why", why);
    return o;
}

/* The whole dws.job answer; datamovements: the listed NnfDataMovements
 * (NULL: none listed, with `dm_error` saying why if a list failed).
 */
static json_t *job_full (struct dws_engine *e, struct job *job, json_t *datamovements,
                         const char *dm_error)
{
    json_t *o = with_why (e, job, job_view (e, job, datamovements));
    if (!o)
        return NULL;
    json_object_set_new (o, "success", json_true ());
    json_object_set_new (o, "phase_seconds", json_real (e->now - job->state_since));
    if (dm_error)
        json_object_set_new (o, "datamovements_error", json_string (dm_error));
    return o;
}

void jobview_jobs_request (struct dws_engine *e, json_t *msgid, json_t *p, json_int_t uid)
{
    json_t *all = json_object_get (p, "all_users");
    json_t *ids = json_object_get (p, "ids");
    if (all && !json_is_boolean (all)) {
        act_respond_fail (e, msgid, "dws.jobs: all_users must be a boolean");
        return;
    }
    if (ids && !json_is_array (ids)) {
        act_respond_fail (e, msgid, "dws.jobs: ids must be a list of job ids");
        return;
    }
    size_t i;
    json_t *v;
    json_array_foreach (ids, i, v)
        if (!json_is_integer (v) || json_integer_value (v) < 0) {
            act_respond_fail (e, msgid, "dws.jobs: ids[%zu] must be a non-negative integer", i);
            return;
        }
    if (json_is_true (all) && uid != e->cfg.owner) {
        act_respond_error (e, msgid, EPERM,
                           "dws.jobs: only the instance owner may list all users' jobs");
        return;
    }
    json_t *jobs = json_array ();
    for (size_t b = 0; b < e->nbuckets; b++)
        for (struct job *j = e->table[b]; j; j = j->next) {
            if (!json_is_true (all) && j->userid != uid)
                continue; /* the owner too sees their own unless all_users */
            if (ids) {
                bool wanted = false;
                json_array_foreach (ids, i, v)
                    wanted = wanted || json_integer_value (v) == j->id;
                if (!wanted)
                    continue;
            }
            json_array_append_new (jobs, jobview_line (e, j));
        }
    act_respond (e, msgid, json_pack ("{s:b s:o}", "success", 1, "jobs", jobs));
}

void jobview_job_request (struct dws_engine *e, json_t *msgid, json_t *p, json_int_t uid)
{
    json_t *idv = json_object_get (p, "jobid");
    if (!json_is_integer (idv) || json_integer_value (idv) < 0) {
        act_respond_fail (e, msgid, "dws.job: jobid must be a non-negative integer");
        return;
    }
    struct job *job = job_lookup (e, json_integer_value (idv));
    if (!job || job->phase == PHASE_NONE) {
        act_respond_error (e, msgid, ENOENT, "dws.job: job %" JSON_INTEGER_FORMAT
                           " has no Workflow in the dws service", json_integer_value (idv));
        return;
    }
    if (!may_see (e, job, uid)) {
        act_respond_error (e, msgid, EPERM,
                           "dws.job: job %" JSON_INTEGER_FORMAT " belongs to another user",
                           job->id);
        return;
    }
    if (!phase_exists (job)) {
        act_respond (e, msgid, job_full (e, job, NULL, NULL));
        return;
    }
    json_array_append (job->view_msgids, msgid);
    if (json_array_size (job->view_msgids) == 1) { /* else a list is on its way */
        char sel[128], token[TOKEN_SIZE];
        snprintf (sel, sizeof (sel), WORKFLOW_LABEL "=%s", job->name);
        act_k8s_list (e, "NnfDataMovement", sel,
                      token_for (token, sizeof (token), TOK_JOBVIEW, job));
    }
}

void jobview_on_datamovements (struct dws_engine *e, enum token_kind kind, struct job *job,
                               json_t *event)
{
    (void)kind;
    struct k8s_answer a = answer_of (event);
    json_t *items = a.ok ? json_object_get (a.obj, "items") : NULL;
    const char *error = a.ok ? NULL : answer_message (event);
    size_t i;
    json_t *msgid;
    json_array_foreach (job->view_msgids, i, msgid)
        act_respond (e, msgid, job_full (e, job, items, error));
    json_array_clear (job->view_msgids);
}

void jobview_records (struct dws_engine *e)
{
    const char *key;
    json_t *v;
    json_object_foreach (e->record_due, key, v) {
        json_int_t id = (json_int_t)strtoll (key, NULL, 10);
        struct job *job = job_lookup (e, id);
        if (!job || job->phase == PHASE_NONE)
            continue; /* gone, or no Workflow (dws.job answers ENOENT) */
        /* written when its view changed or it took a step: the view is
         * compared without its why, which only grows (why_count) */
        json_t *rec = job_view (e, job, job->dms_kept);
        if (!rec
            || (job->record && job->record_steps == why_count (job)
                && json_equal (rec, job->record))) {
            json_decref (rec);
            continue;
        }
        json_decref (job->record);
        job->record = rec;
        job->record_steps = why_count (job);
        json_object_set_new (e->records, key, with_why (e, job, json_copy (rec)));
    }
    json_object_clear (e->record_due);
}

/* --- the phase words ------------------------------------------------------- */
static const struct {
    const char *id;
    const char *name;
} phase_words[] = {
#define JOBVIEW_ENGINE_WORD(id, name, desired, handled, exists) {#id, name},
    JOB_PHASES (JOBVIEW_ENGINE_WORD)
#undef JOBVIEW_ENGINE_WORD
#define JOBVIEW_READER_WORD(id, name) {#id, name},
    DWS_VIEW_PHASES (JOBVIEW_READER_WORD)
#undef JOBVIEW_READER_WORD
};
#define NWORDS ((int)(sizeof (phase_words) / sizeof (phase_words[0])))

int dws_engine_phase_count (void)
{
    return NWORDS;
}

const char *dws_engine_phase_name (int i)
{
    return i >= 0 && i < NWORDS ? phase_words[i].name : NULL;
}

const char *dws_engine_phase_id (int i)
{
    return i >= 0 && i < NWORDS ? phase_words[i].id : NULL;
}

const char *dws_engine_record_key (void)
{
    return DWS_ENGINE_RECORD_KEY;
}
