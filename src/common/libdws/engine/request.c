/* request.c - the dws.* requests: validation and routing.
 *
 * Every request is checked field by field before anything happens; a bad
 * one is answered {"success": false, "errstr": "<topic>: <field> ..."} and
 * changes nothing.  Requests are idempotent: a repeated dws.create adopts
 * the Workflow, a repeated setup/post_run/teardown is answered and
 * ignored.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advance.h"
#include "config/rabbitconf.h"
#include "engine/decider/phase.h"
#include "engine/decider/sidestate.h"
#include "engine/shapes/act.h"
#include "engine/shapes/hosts.h"
#include "engine/shapes/pending.h"
#include "engine/shapes/psi.h"
#include "engine/shapes/token.h"
#include "engine/verbs/admit.h"
#include "engine/verbs/progress.h"
#include "engine/verbs/release.h"
#include "engine/verbs/workflow.h"
#include "engine/views/jobview.h"
#include "engine/views/persistent.h"
#include "engine/views/rabbitdf.h"
#include "engine/views/rabbitdrain.h"
#include "engine/views/status.h"
#include "health/health.h"
#include "job.h"
#include "parse/breakdown.h"
#include "parse/directive.h"
#include "parse/policy.h"
#include "rabbits.h"
#include "request.h"
#include "util/jsonio.h"
#include "wire/jobwire.h"
#include "wire/wire.h"

/* The request's jobid, or false after answering "<topic>: jobid must be a
 * non-negative integer".
 */
static bool get_jobid (struct dws_engine *e, json_t *msgid, json_t *payload, const char *topic,
                       json_int_t *id)
{
    json_t *v = json_object_get (payload, "jobid");
    if (!json_is_integer (v) || json_integer_value (v) < 0) {
        act_respond_fail (e, msgid, "%s: jobid must be a non-negative integer", topic);
        return false;
    }
    *id = json_integer_value (v);
    return true;
}

static bool has_create_persistent (json_t *directives)
{
    static const char *const creators[] = {"create_persistent", NULL};
    return dws_dw_any_command (directives, creators, 0) == 1;
}

/* The checks every Workflow's request passes, however it came: a
 * dws.create, or the job's jobspec and owner read again after a restart
 * lost the create (request_job_info_result).  One function, so that a job whose
 * create was lost never gets a Workflow a fresh submission would not.
 * `what` names where the fields came from, for the messages.  The
 * directives split (presets expanded; new reference), or NULL with the
 * message.
 */
static json_t *request_check (struct dws_engine *e, const char *what, json_t *uid, json_t *tol,
                              json_t *resources, json_t *dw, dws_error_t *err)
{
    if (!json_is_integer (uid) || json_integer_value (uid) < 0) {
        dws_errorf (err, "%s: userid must be a non-negative integer", what);
        return NULL;
    }
    if (tol && (!json_is_integer (tol) || json_integer_value (tol) < 0)) {
        dws_errorf (err, "dw_failure_tolerance must be a positive integer");
        return NULL;
    }
    if (!json_is_array (resources) && !json_is_object (resources)) {
        dws_errorf (err, "%s: resources must be the jobspec resources", what);
        return NULL;
    }
    if (!dw) {
        dws_errorf (err, "%s: dw_directives is missing", what);
        return NULL;
    }
    json_t *directives = dws_dw_split (dw, e->cfg.presets, err);
    if (!directives)
        return NULL;
    if (json_array_size (directives) == 0) {
        json_decref (directives);
        dws_errorf (err, "Malformed #DW directives: no #DW directive found");
        return NULL;
    }
    if (e->cfg.restrict_persistent_creation && json_integer_value (uid) != e->cfg.owner
        && has_create_persistent (directives)) {
        json_decref (directives);
        dws_errorf (err, "only the instance owner may create persistent storage"
                         " (#DW create_persistent)");
        return NULL;
    }
    if (psi_check_destroy (e, directives, json_integer_value (uid), err) < 0) {
        json_decref (directives);
        return NULL;
    }
    if (e->cfg.maximums) {
        int64_t nnodes = dws_jobspec_node_count (resources, NULL);
        if (nnodes > 0 && nnodes <= INT32_MAX
            && dws_policy_check_maximums (directives, (int)nnodes, e->cfg.maximums, err) < 0) {
            json_decref (directives);
            return NULL;
        }
    }
    return directives;
}

/* A request for a job the engine does not know.  Before the first
 * Workflow list that means nothing yet: the request waits for the list
 * (refusing it failed the job: a service reloaded under load refused the
 * epilogs of every job that ended meanwhile); after it, that the job's
 * Workflow is gone (the caller decides).
 */
static bool not_yet_synced (struct dws_engine *e, json_t *event)
{
    if (!e->synced) {
        pending_defer (e, event, PENDING_WORKFLOWS);
        return true;
    }
    return false;
}

/* [rabbit.limits] count persistent storage, and a destroy_persistent is
 * judged by its PSI's owner: such a dws.create waits for the PSI list as
 * for the Workflow list (answered when it comes). */
static bool psis_not_yet_listed (struct dws_engine *e, json_t *event)
{
    if (!psi_synced (e)) {
        pending_defer (e, event, PENDING_WORKFLOWS | PENDING_PSIS);
        return true;
    }
    return false;
}

/* A job whose dws.create is refused fails by that answer: it is no orphan
 * of a restart to create again from its jobspec (and fail a second time),
 * whether the job list that shows it waiting for dws-create comes after
 * the refusal (remembered until the list is read) or came before it (its
 * jobspec being read: forgotten, the late answer ignored).
 */
static void refused_create (struct dws_engine *e, json_int_t id)
{
    struct job *job = job_lookup (e, id);
    char key[32];

    if (job) {
        advance_mark (e, job, NEWS_CREATE_REFUSED); /* forgotten, if nothing waits */
        return;
    }
    if (e->refused) {
        snprintf (key, sizeof (key), "%" JSON_INTEGER_FORMAT, id);
        json_object_set_new (e->refused, key, json_true ());
    }
}

/* The owner's name the service looked up ("username"), for [rabbit.limits]. */
/* STEP_JOIN_CREATE: the create is on its way: its answer answers this one. */
void request_join_create (struct dws_engine *e, struct job *job, const struct step *st)
{
    (void)e;
    json_array_append (job->create_msgids, st->said->msgid);
}

/* STEP_CREATE_ANSWER: a repeated dws.create (the Workflow exists, or the
 * job waits for its user's limits): answered, and what a reloaded plugin
 * missed while away is sent again.
 */
void request_create_answer (struct dws_engine *e, struct job *job, const struct step *st)
{
    act_respond_ok (e, st->said->msgid);
    progress_resources_resend (e, job);
    admit_shown (job, LIMIT_SHOWN_ASKED);
    advance_mark (e, job, NEWS_LOOK);
}

/* STEP_LIMIT_REMOVE: its Workflow exists: dws-limit goes. */
void request_limit_remove (struct dws_engine *e, struct job *job, const struct step *st)
{
    (void)st;
    if (job->lim.shown == LIMIT_SHOWN_LISTED)
        act_log (e, "info", "%s: its Workflow exists; removing " DWS_JOBWIRE_LIMIT_DEPENDENCY,
                 job->name);
    admit_created (e, job);
}

static void set_username (struct job *job, json_t *event)
{
    const char *name = json_string_value (json_object_get (event, "username"));
    free (job->username);
    job->username = name ? strdup (name) : NULL;
}

static void create_request (struct dws_engine *e, json_t *msgid, json_t *p, json_t *event)
{
    json_int_t id;
    dws_error_t err;
    if (!get_jobid (e, msgid, p, "dws.create", &id))
        return;
    /* what a user holds is known once the Workflow and PSI lists have come */
    if (e->cfg.limits && !job_lookup (e, id)
        && (not_yet_synced (e, event) || psis_not_yet_listed (e, event)))
        return;
    json_t *uid = json_object_get (p, "userid");
    json_t *tol = json_object_get (p, "failure_tolerance");
    json_t *resources = json_object_get (p, "resources");
    enum release_mode release = RELEASE_DEFAULT;

    json_t *directives = request_check (e, "dws.create", uid, tol, resources,
                                        json_object_get (p, "dw_directives"), &err);
    if (directives
        && release_mode_parse (json_object_get (p, "release_computes"), &release, &err) < 0) {
        json_decref (directives);
        directives = NULL;
    }
    json_t *bank = json_object_get (p, "bank");
    json_t *project = json_object_get (p, "project");
    if (directives && ((bank && !json_is_string (bank)) || (project && !json_is_string (project)))) {
        json_decref (directives);
        directives = NULL;
        dws_errorf (&err, "dws.create: %s must be a string (flux-accounting's name)",
                    bank && !json_is_string (bank) ? "bank" : "project");
    }
    json_t *prestage = json_object_get (p, "prestage");
    int asked = -1;
    if (directives && prestage && (asked = dws_rabbitconf_prestage_attr (prestage, &err)) < 0) {
        json_decref (directives);
        directives = NULL;
    }
    if (!directives) {
        act_respond_fail (e, msgid, "%s", err.text);
        refused_create (e, id);
        return;
    }

    struct job *job = job_lookup (e, id);
    /* a destroy_persistent is judged by its PSI's owner: known once the
     * PSIs are listed (answered when they are) */
    if (!job && psi_destroys (directives) && psis_not_yet_listed (e, event)) {
        json_decref (directives);
        return;
    }
    if (job) {
        json_decref (directives);
        struct told in = {.msgid = msgid};
        advance_tell (e, job, NEWS_CREATE_AGAIN, &in);
        return;
    }
    if (!(job = job_create (e, id))) {
        json_decref (directives);
        act_respond_fail (e, msgid, "dws.create: out of memory");
        return;
    }
    job->userid = json_integer_value (uid);
    json_t *gid = json_object_get (event, "groupid");
    job->groupid = json_is_integer (gid) ? json_integer_value (gid) : job->userid;
    job->tolerance = tol ? json_integer_value (tol) : 0;
    job->release = release;
    job->prestage_asked = asked;
    job->directives = directives;
    job->resources = json_incref (resources);
    job_set_account (job, bank, project);
    set_username (job, event);
    if (admit_create (e, job, &err) < 0) {
        act_respond_fail (e, msgid, "%s", err.text);
        job_forget (e, job);
        refused_create (e, id);
        return;
    }
    /* answered by the create's answer, or at once if it waits for its
     * user's use to fall (admit_wait_limit) */
    json_array_append (job->create_msgids, msgid);
    workflow_create (e, job);
}

static void setup_request (struct dws_engine *e, json_t *msgid, json_t *p, json_t *event)
{
    json_int_t id;
    dws_error_t err;
    if (!get_jobid (e, msgid, p, "dws.setup", &id))
        return;
    json_t *R = json_object_get (p, "R");
    if (!json_is_object (R)) {
        act_respond_fail (e, msgid, "dws.setup: R must be an object (RFC 20)");
        return;
    }
    char *hosts = hosts_of_R (R, &err);
    if (!hosts) {
        act_respond_fail (e, msgid, "dws.setup: %s", err.text);
        return;
    }
    struct job *job = job_lookup (e, id);
    if (!job) {
        if (not_yet_synced (e, event)) {
            free (hosts);
            return;
        }
        /* Its Workflow vanished while the job waited (#487): read the
         * job's jobspec and owner, create the Workflow again, and carry
         * on from Proposal with this R.
         */
        if (!(job = job_create (e, id))) {
            free (hosts);
            act_respond_fail (e, msgid, "dws.setup: out of memory");
            return;
        }
        char token[TOKEN_SIZE];
        job->resources_sent = true;
        job->hosts = hosts;
        job_set_reserved (job, R);
        rabbits_job (e, job);
        sidestate_setup (e, job, SETUP_PENDING);
        act (e, json_pack ("{s:s s:I s:s}", "action", DWS_WIRE_ACTION (JOB_INFO), "id", id, "token",
                           token_for (token, sizeof (token), TOK_JOB_INFO, job)));
        act_log (e, "warning", "%s: no Workflow for job %" JSON_INTEGER_FORMAT
                 " at dws.setup; creating it again", job->name, id);
        act_respond_ok (e, msgid);
        return;
    }
    struct told in = {.msgid = msgid, .hosts = hosts, .event = R};
    advance_tell (e, job, NEWS_SETUP_REQUEST, &in);
}

/* STEP_SETUP_ANSWER: a repeated dws.setup: answered; its prolog-remove
 * again if it may have been lost.
 */
void request_setup_answer (struct dws_engine *e, struct job *job, const struct step *st)
{
    act_respond_ok (e, st->said->msgid);
    progress_prolog_remove_again (e, job);
}

/* STEP_RECORD_HOSTS: the job's hosts (st->said->hosts) and its R (st->said->event),
 * from dws.setup (answered here) or a lost one's R: the Setup starts.
 */
void request_record_hosts (struct dws_engine *e, struct job *job, const struct step *st)
{
    free (job->hosts);
    job->hosts = st->said->hosts;
    st->said->hosts = NULL;
    act_timer_stop (e, job, T_NODE_WAIT); /* its nodes came */
    if (job->ssd_asks) /* the room a pick left for it is taken: picks may go */
        e->room_changed = true;
    if (!job->ps.staged) /* a pre-staged job's ssd is the one held for it, not in R */
        job_set_reserved (job, st->said->event);
    rabbits_job (e, job);
    sidestate_setup (e, job, SETUP_PENDING);
    if (st->said->msgid)
        act_respond_ok (e, st->said->msgid);
    progress_setup_start (e, job);
}

/* STEP_END_WAITING: the epilog of a job held by [rabbit.limits] began
 * (it was cancelled while it waited): it never had a Workflow; release
 * its epilog, drop it.
 */
void request_end_waiting (struct dws_engine *e, struct job *job, const struct step *st)
{
    (void)st;
    act_log (e, "info", "%s: job ended while it waited for its user's rabbit storage",
             job->name);
    workflow_epilog_remove (e, job);
    job_forget (e, job);
}

/* STEP_BEGIN_EPILOG: the job's epilog began (dws.post_run, or found in
 * CLEANUP after a restart that lost it).
 */
void request_begin_epilog (struct dws_engine *e, struct job *job, const struct step *st)
{
    if (st->said->log)
        act_log (e, "warning", "%s: %s", job->name, st->said->log);
    sidestate_epilog_begin (e, job);
    /* PostRun, or Teardown (now, or once the create has answered) */
    advance_mark (e, job, st->said->run_started ? NEWS_POST_RUN : NEWS_EPILOG_UNRUN);
}

static void post_run_request (struct dws_engine *e, json_t *msgid, json_t *p,
                              json_t *event)
{
    json_int_t id;
    if (!get_jobid (e, msgid, p, "dws.post_run", &id))
        return;
    json_t *rs = json_object_get (p, "run_started");
    if (!json_is_boolean (rs)) {
        act_respond_fail (e, msgid, "dws.post_run: run_started must be a boolean");
        return;
    }
    struct job *job = job_lookup (e, id);
    if (!job) {
        if (not_yet_synced (e, event))
            return;
        act_respond_ok (e, msgid);
        act_epilog_remove (e, id);
        return;
    }
    act_respond_ok (e, msgid);
    struct told in = {.run_started = json_is_true (rs)};
    advance_tell (e, job, NEWS_POST_RUN_REQUEST, &in);
}

/* STEP_EPILOG_AGAIN: a jobtap plugin reloaded with the epilog held asks
 * again: the epilog-remove it missed while it was away goes again.
 */
void request_epilog_again (struct dws_engine *e, struct job *job, const struct step *st)
{
    (void)st;
    act_epilog_remove (e, job->id);
}

/* The job's epilog has begun (dws.post_run, or found in CLEANUP after a
 * restart that lost the request).
 */
static void teardown_request (struct dws_engine *e, json_t *msgid, json_t *p, bool abort,
                              json_t *event)
{
    json_int_t id;
    const char *topic = abort ? "dws.abort" : "dws.teardown";
    if (!get_jobid (e, msgid, p, topic, &id))
        return;
    struct job *job = job_lookup (e, id);
    if (!job) {
        if (not_yet_synced (e, event))
            return;
        act_respond_ok (e, msgid);
        if (!abort)
            act_epilog_remove (e, id);
        return;
    }
    act_respond_ok (e, msgid);
    sidestate_epilog_begin (e, job);
    advance_mark (e, job, abort ? NEWS_ABORT : NEWS_TEARDOWN_REQUEST);
}

static void teardown_method (struct dws_engine *e, json_t *msgid, json_t *p, json_t *event)
{
    teardown_request (e, msgid, p, false, event);
}

static void abort_method (struct dws_engine *e, json_t *msgid, json_t *p, json_t *event)
{
    teardown_request (e, msgid, p, true, event);
}

/* The whole dws.status answer: the engine's jobs and counts, and what the
 * shell measured of itself (the request event's "service", if any). */
static void status_method (struct dws_engine *e, json_t *msgid, json_t *p, json_t *event)
{
    (void)p;
    status_request (e, msgid, json_object_get (event, "service"));
}

/* The released jobs whose DataOut is under way (for the jobtap plugin). */
static void released_method (struct dws_engine *e, json_t *msgid, json_t *p, json_t *event)
{
    (void)p;
    (void)event;
    act_respond (e, msgid, json_pack ("{s:b s:o}", "success", 1, "jobs",
                                      release_dataout_pending (e)));
}

/* Whether rabbit health is known and applied to the scheduler (for the
 * jobtap plugin, which holds rabbit jobs in PRIORITY until then after a
 * restart: schedhold.h). */
static void ready_method (struct dws_engine *e, json_t *msgid, json_t *p, json_t *event)
{
    (void)p;
    (void)event;
    act_respond (e, msgid, json_pack ("{s:b s:b}", "success", 1, "ready",
                                      dws_health_ready (e->health)));
}

/* A job as its owner sees it: guest methods, each answering only what
 * the requester may see (jobview.c). */
static void jobs_method (struct dws_engine *e, json_t *msgid, json_t *p, json_t *event)
{
    jobview_jobs_request (e, msgid, p, json_integer_value (json_object_get (event, "userid")));
}

static void job_method (struct dws_engine *e, json_t *msgid, json_t *p, json_t *event)
{
    jobview_job_request (e, msgid, p, json_integer_value (json_object_get (event, "userid")));
}

/* dws.rabbits; with {"df": true}, the rabbits' space instead (rabbitdf.h):
 * one guest method for both views of the rabbits. */
static void rabbits_method (struct dws_engine *e, json_t *msgid, json_t *p, json_t *event)
{
    (void)event;
    if (json_is_true (json_object_get (p, "df")))
        rabbitdf_request (e, msgid);
    else
        rabbits_request (e, msgid);
}

static void drain_method (struct dws_engine *e, json_t *msgid, json_t *p, json_t *event)
{
    rabbitdrain_request (e, msgid, p, event, true);
}

static void undrain_method (struct dws_engine *e, json_t *msgid, json_t *p, json_t *event)
{
    rabbitdrain_request (e, msgid, p, event, false);
}

/* Persistent storage: guest methods that decide who may do what
 * (persistent.c). */
static void persistent_list_method (struct dws_engine *e, json_t *msgid, json_t *p,
                                    json_t *event)
{
    (void)p;
    if (persistent_wait_for_list (e, event))
        return;
    persistent_list_request (e, msgid, json_integer_value (json_object_get (event, "userid")));
}

static void persistent_share_method (struct dws_engine *e, json_t *msgid, json_t *p,
                                     json_t *event)
{
    if (persistent_wait_for_list (e, event))
        return;
    persistent_share_request (e, msgid, p, json_integer_value (json_object_get (event, "userid")),
                              true);
}

static void persistent_unshare_method (struct dws_engine *e, json_t *msgid, json_t *p,
                                       json_t *event)
{
    if (persistent_wait_for_list (e, event))
        return;
    persistent_share_request (e, msgid, p, json_integer_value (json_object_get (event, "userid")),
                              false);
}

/* Every dws.<name> method the engine answers, in one table: the dispatch
 * below and the shells' lists (dws_engine_method_*) are read from it.
 * guest: open to every user (the rest are the instance owner's); any:
 * takes any payload (the others want an object).
 */
static const struct method {
    const char *name;
    bool guest;
    bool any;
    void (*fn) (struct dws_engine *e, json_t *msgid, json_t *p, json_t *event);
} methods[] = {
    {"create", false, false, create_request},
    {"setup", false, false, setup_request},
    {"post_run", false, false, post_run_request},
    {"teardown", false, false, teardown_method},
    {"abort", false, false, abort_method},
    {"status", false, true, status_method},
    {"released", false, true, released_method},
    {"ready", false, true, ready_method},
    {"drain", false, false, drain_method},
    {"undrain", false, false, undrain_method},
    {"rabbits", true, true, rabbits_method},
    {"jobs", true, false, jobs_method},
    {"job", true, false, job_method},
    {"persistent-list", true, true, persistent_list_method},
    {"persistent-share", true, false, persistent_share_method},
    {"persistent-unshare", true, false, persistent_unshare_method},
};
#define NMETHODS ((int)(sizeof (methods) / sizeof (methods[0])))

int dws_engine_method_count (void)
{
    return NMETHODS;
}

const char *dws_engine_method_name (int i)
{
    return i >= 0 && i < NMETHODS ? methods[i].name : NULL;
}

int dws_engine_method_guest (int i)
{
    return i >= 0 && i < NMETHODS && methods[i].guest;
}

void request_event (struct dws_engine *e, json_t *event)
{
    const char *topic = json_string_value (json_object_get (event, "topic"));
    json_t *msgid = json_object_get (event, "msgid");
    json_t *p = json_object_get (event, "payload");
    json_t *uid = json_object_get (event, "userid");
    const struct method *m = NULL;
    if (!strncmp (topic, "dws.", 4))
        for (int i = 0; i < NMETHODS && !m; i++)
            if (!strcmp (topic + 4, methods[i].name))
                m = &methods[i];
    /* The sender's credentials, not the payload (dws.create's "userid" is
     * the job's owner, vouched for by the owner's jobtap plugin): a user
     * other than the instance owner reaches guest methods only, whatever
     * the shell let through, and learns no method names (as the broker
     * answers them). */
    if ((!m || !m->guest) && json_integer_value (uid) != e->cfg.owner) {
        act (e, json_pack ("{s:s s:O s:i s:s}", "action", DWS_WIRE_ACTION (RESPOND_ERROR), "msgid", msgid,
                           "errnum", EPERM, "errstr", "Request requires owner credentials"));
        return;
    }
    if (!m) {
        act (e, json_pack ("{s:s s:O s:i s:s}", "action", DWS_WIRE_ACTION (RESPOND_ERROR), "msgid", msgid,
                           "errnum", ENOSYS, "errstr", "unknown dws method"));
        return;
    }
    if (!m->any && !json_is_object (p)) {
        act_respond_fail (e, msgid, "%s: the payload must be a JSON object", topic);
        return;
    }
    m->fn (e, msgid, p, event);
}

/* Whether an active-jobs entry lists dependency name. */
static bool depends_on (json_t *v, const char *name)
{
    size_t i;
    json_t *d;
    json_array_foreach (json_object_get (v, "dependencies"), i, d)
        if (json_is_string (d) && !strcmp (json_string_value (d), name))
            return true;
    return false;
}

static bool held_by_create (json_t *v)
{
    return json_is_integer (v) || depends_on (v, DWS_JOBWIRE_DEPENDENCY);
}

static bool held_by_others (json_t *v)
{
    size_t i;
    json_t *d;
    json_array_foreach (json_object_get (v, "dependencies"), i, d)
        if (!json_is_string (d) || (strcmp (json_string_value (d), DWS_JOBWIRE_DEPENDENCY) != 0
                                    && !dws_jobwire_service_dependency (json_string_value (d))))
            return true;
    return false;
}

/* Held by [rabbit.limits] (dws-limit): a job that never had a Workflow. */
static bool held_by_limit (json_t *v)
{
    return depends_on (v, DWS_JOBWIRE_LIMIT_DEPENDENCY);
}

static void job_info_for (struct dws_engine *e, struct job *job, bool want_R)
{
    job->info_for = want_R ? INFO_R : INFO_JOBSPEC;
    act_job_info (e, job, want_R);
}

/* A Workflow from the first list whose job is not active (and whose
 * computes were not released after PostRun on purpose): the job ended
 * while no service watched (its dws.create answered by a service that
 * went away, or an administrator gave up its epilog, which waits for a
 * service, with dws-epilog-timeout).  Nothing waits
 * for it in Flux: tear it down and delete it, releasing no epilog.
 */
static void ended_while_away (struct dws_engine *e, json_t *active)
{
    json_t *inactive = json_array ();
    size_t i;
    json_t *v;
    for (size_t b = 0; b < e->nbuckets; b++)
        for (struct job *j = e->table[b]; j; j = j->next) {
            char key[32];
            snprintf (key, sizeof (key), "%" JSON_INTEGER_FORMAT, j->id);
            if (!json_object_get (active, key))
                json_array_append_new (inactive, json_integer (j->id));
        }
    json_array_foreach (inactive, i, v) {
        struct job *job = job_lookup (e, json_integer_value (v));
        if (job)
            advance_mark (e, job, NEWS_INACTIVE);
    }
    json_decref (inactive);
}

/* STEP_END_AWAY: the job ended while no service watched. */
void request_end_away (struct dws_engine *e, struct job *job, const struct step *st)
{
    (void)st;
    act_log (e, "warning", "%s: job is no longer active; tearing its Workflow down",
             job->name);
    sidestate_epilog (e, job, EPILOG_REMOVED); /* no job left to release */
    advance_mark (e, job, NEWS_TEARDOWN_REQUEST);
}

/* STEP_READ_R: a job in RUN whose Workflow never went to Setup. */
void request_read_R (struct dws_engine *e, struct job *job, const struct step *st)
{
    (void)st;
    act_log (e, "warning", "%s: job runs its prolog but its Workflow never went to"
             " Setup (dws.setup lost); reading R", job->name);
    job_info_for (e, job, true);
}

/* After a restart, the active jobs ({"id", "state", "dependencies",
 * "rabbit"}; rabbit: it has the rabbit_workflow memo): find what the old
 * service lost with its pending requests.  A job held by dws-create
 * without a Workflow lost its dws.create; a job in RUN whose Workflow
 * never got its hosts lost its dws.setup; a job in CLEANUP whose epilog we
 * never saw lost its dws.post_run; a rabbit job in CLEANUP with no
 * Workflow at all lost the epilog-remove sent when its Workflow was
 * deleted; a job in CLEANUP that holds dws-limit and has no Workflow was
 * cancelled while [rabbit.limits] held it and lost its dws.post_run.  A
 * job in DEPEND that holds dws-limit keeps it until its Workflow exists:
 * weighed again when it has none, let go at once when the old service
 * made it and went away before the create's answer (admit.h).
 * Each is carried on as the lost request would have.  When the
 * list is complete (not an empty one for a failed listing), Workflows
 * of jobs that are no longer active are torn down.  Not lost: the
 * dws.create this service refused before the list (the job fails by that
 * answer, though the list may still show it in DEPEND), and the dws.create
 * of a job that uses persistent storage and holds other dependencies (the
 * jobtap plugin sends it once they are gone: request_job_info_result).
 */
void request_orphans_event (struct dws_engine *e, json_t *jobs, bool complete)
{
    size_t i;
    json_t *v;
    json_t *active = json_object ();
    json_array_foreach (jobs, i, v) {
        json_t *idv0 = json_is_integer (v) ? v : json_object_get (v, "id");
        if (json_is_integer (idv0)) {
            char key[32];
            snprintf (key, sizeof (key), "%" JSON_INTEGER_FORMAT, json_integer_value (idv0));
            json_object_set_new (active, key, json_true ());
        }
    }
    if (complete)
        ended_while_away (e, active);
    json_decref (active);
    json_array_foreach (jobs, i, v) {
        json_t *idv = json_is_integer (v) ? v : json_object_get (v, "id");
        const char *state = json_is_integer (v) ? "DEPEND"
                                                : json_string_value (json_object_get (v, "state"));
        if (!json_is_integer (idv) || json_integer_value (idv) < 0 || !state)
            continue;
        struct job *job = job_lookup (e, json_integer_value (idv));
        if (!strcmp (state, "DEPEND")) {
            char key[32];
            snprintf (key, sizeof (key), "%" JSON_INTEGER_FORMAT, json_integer_value (idv));
            if (job && held_by_limit (v)) {
                job->deps |= JOB_DEP_LIMIT;
                admit_shown (job, LIMIT_SHOWN_LISTED);
                advance_mark (e, job, NEWS_LOOK);
            }
            if (job || !held_by_create (v) || json_object_get (e->refused, key)
                || !(job = job_create (e, json_integer_value (idv))))
                continue;
            act_log (e, "info", "%s: job waits for dws-create and has no Workflow yet;"
                     " creating it from its jobspec", job->name);
            job->deps = (held_by_others (v) ? JOB_DEP_OTHER : 0)
                        | (held_by_limit (v) ? JOB_DEP_LIMIT : 0); /* dws-limit: removed
                                                                    * once its create answers */
            job_info_for (e, job, false);
        }
        else if (!strcmp (state, "RUN")) {
            if (job)
                advance_mark (e, job, NEWS_ORPHAN_RUN);
        }
        else if (!strcmp (state, "CLEANUP")) {
            /* no Workflow: it lost it, or (cancelled while [rabbit.limits]
             * held it, its dws.post_run lost) it never had one */
            bool lost = json_is_true (json_object_get (v, "rabbit"));
            if (!job && (lost || held_by_limit (v))) {
                act_log (e, lost ? "warning" : "info",
                         "job %" JSON_INTEGER_FORMAT " %s; releasing its epilog",
                         json_integer_value (idv),
                         lost ? "is in CLEANUP and its Workflow is gone"
                              : "ended while it waited for its user's rabbit storage");
                act_epilog_remove (e, json_integer_value (idv));
                continue;
            }
            if (!job)
                continue;
            struct told in = {.run_started = phase_handled (job) >= WF_PRERUN,
                               .log = "job is in CLEANUP but no dws.post_run came;"
                                      " starting its epilog"};
            advance_tell (e, job, NEWS_ORPHAN_CLEANUP, &in);
        }
    }
    json_decref (e->refused); /* the one job list is read */
    e->refused = NULL;
}

/* A job-info answer (event): the decider says what it was for. */
void request_job_info_result (struct dws_engine *e, struct job *job, json_t *event)
{
    struct told in = {.event = event};
    advance_tell (e, job, NEWS_JOB_INFO, &in);
}

/* STEP_PLACE_LUSTRE: the R of the job-manager (dws.setup) has no
 * scheduling graph: the KVS copy (st->said->event) says where Fluxion put the
 * job's Lustre ssd.
 */
void request_place_lustre (struct dws_engine *e, struct job *job, const struct step *st)
{
    json_t *R = json_object_get (st->said->event, "R");
    job->info_for = INFO_JOBSPEC;
    bool ok = json_is_true (json_object_get (st->said->event, "ok"));
    if (ok && json_is_object (R)) {
        job_set_reserved (job, R);
        rabbits_job (e, job);
    }
    if (!job->reserved) {
        workflow_fail_job (e, job, "exception", NOTE_PREFIX "cannot place Lustre: the job's R holds"
                  " no rabbit ssd (%s)",
                  !ok ? "job-info failed" : "no scheduling graph with ssd vertices");
        return;
    }
    progress_setup_start (e, job);
}

/* STEP_SETUP_FROM_R: a known job whose dws.setup was lost: its R
 * (st->said->event) is all we need.  Its Workflow exists: on failure it is torn
 * down, not forgotten.
 */
void request_setup_from_R (struct dws_engine *e, struct job *job, const struct step *st)
{
    dws_error_t err;
    json_t *event = st->said->event;
    json_t *R = json_object_get (event, "R");
    job->info_for = INFO_JOBSPEC;
    bool ok = json_is_true (json_object_get (event, "ok"));
    const char *errstr = json_string_value (json_object_get (event, "errstr"));
    char *hosts = ok && json_is_object (R) ? hosts_of_R (R, &err) : NULL;
    if (!hosts) {
        workflow_fail_job (e, job, "exception", NOTE_PREFIX "cannot read the job's R: %s",
                  !ok ? (errstr ? errstr : "job-info failed")
                      : json_is_object (R) ? err.text : "none");
        return;
    }
    struct told rin = {.hosts = hosts, .event = R};
    advance_tell (e, job, NEWS_R_READ, &rin); /* nothing if dws.setup came meanwhile */
}

/* STEP_FROM_JOBSPEC: the job's jobspec and owner (st->said->event), read to
 * create a vanished Workflow again.
 */
void request_from_jobspec (struct dws_engine *e, struct job *job, const struct step *st)
{
    dws_error_t err;
    json_t *event = st->said->event;
    json_t *jobspec = json_object_get (event, "jobspec");
    json_t *uid = json_object_get (event, "userid");
    json_t *system = json_object_get (json_object_get (jobspec, "attributes"), "system");
    json_t *dw = json_object_get (system, "dw");
    json_t *tol = json_object_get (system, "dw_failure_tolerance");
    json_t *directives = NULL;
    if (!json_is_true (json_object_get (event, "ok")) || !json_is_integer (uid)) {
        workflow_unmade (e, job, "exception",
                         NOTE_PREFIX "cannot read the job to create its Workflow again: %s",
                         dws_json_str_or (json_object_get (event, "errstr"), "no jobspec"));
        return;
    }
    if (!dw || !(directives = request_check (e, "jobspec", uid, tol,
                                             json_object_get (jobspec, "resources"), dw,
                                             &err))) {
        /* dws-create, as the jobtap plugin names a refused dws.create: a
         * job submitted as the service starts can be both refused and
         * found without a Workflow, and gets the same exception type from
         * either */
        workflow_unmade (e, job, DWS_JOBWIRE_DEPENDENCY,
                         NOTE_PREFIX "cannot create the Workflow again: %s",
                         dw ? err.text : "the jobspec has no dw attribute");
        return;
    }
    json_decref (job->directives);
    job->directives = directives;
    struct told jin = {.event = event};
    advance_tell (e, job, NEWS_JOBSPEC, &jin);
}

/* STEP_CREATE_LATER: the jobtap plugin keeps the dws.create of a job
 * that uses persistent storage until its other dependencies are gone
 * (the job that makes the storage first): it was not lost, it is still
 * to come.
 */
void request_create_later (struct dws_engine *e, struct job *job, const struct step *st)
{
    (void)st;
    act_log (e, "info", "%s: job uses persistent storage and waits for its other"
             " dependencies; its dws.create comes once they are gone", job->name);
    job_forget (e, job);
}

/* STEP_CREATE_FROM_JOBSPEC: the job as its jobspec (st->said->event) and its
 * checked directives (recorded on it) say: its Workflow is created (once
 * its user's limits allow).
 */
void request_create_from_jobspec (struct dws_engine *e, struct job *job,
                                  const struct step *st)
{
    dws_error_t err;
    json_t *event = st->said->event;
    json_t *jobspec = json_object_get (event, "jobspec");
    json_t *uid = json_object_get (event, "userid");
    json_t *system = json_object_get (json_object_get (jobspec, "attributes"), "system");
    json_t *tol = json_object_get (system, "dw_failure_tolerance");
    job->userid = json_integer_value (uid);
    json_t *gid = json_object_get (event, "groupid");
    job->groupid = json_is_integer (gid) ? json_integer_value (gid) : job->userid;
    job->tolerance = json_is_integer (tol) ? json_integer_value (tol) : 0;
    enum release_mode release = RELEASE_DEFAULT;
    if (release_mode_parse (json_object_get (system, "dw_release_computes"), &release, NULL)
        == 0)
        job->release = release; /* a bad one was refused by its dws.create */
    json_t *prestage = json_object_get (system, DWS_PRESTAGE_ATTR);
    if (prestage)
        job->prestage_asked = dws_rabbitconf_prestage_attr (prestage, NULL);
    json_decref (job->resources);
    job->resources = json_incref (json_object_get (jobspec, "resources"));
    job_set_account (job, json_object_get (system, "bank"), json_object_get (system, "project"));
    set_username (job, event);
    if (admit_create (e, job, &err) < 0) {
        workflow_unmade (e, job, DWS_JOBWIRE_DEPENDENCY,
                         NOTE_PREFIX "cannot create the Workflow again: %s", err.text);
        return;
    }
    workflow_create (e, job);
}
