/* jobsm.c - the dws jobtap plugin's job state machine (see jobsm.h).
 *
 * An event is applied to a copy of the machine while its actions are
 * built; the copy replaces the machine only when everything succeeded, so
 * a bad event or a failed allocation leaves the machine as it was.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse/directive.h"
#include "wire/explain.h"
#include "jobsm.h"
#include "jobsm_phase.h"
#include "util/jsonio.h"

#define NOTE DWS_JOBWIRE_NOTE_PREFIX
/* ENOSYS: nothing serves dws.* (the service is not loaded, or is being
 * reloaded); the errno text would leave a user at "Function not implemented". */
#define ENOSYS_TEXT "dws.%s RPC could not be sent. Admins: is the flux-coral2-dws service loaded?"
#define SKEW_HINT "coral2_dws module and dws_jobtap plugin versions may be out of sync"
#define TOLERANCE_TEXT "dw_failure_tolerance must be a positive integer"

/* an action's name, from the one table in jobwire.h */
#define ACT(id) DWS_JOBWIRE_ACTION (id)

/* The note of the plugin's own epilog timeout (the reference's words). */
#define EPILOG_TIMEOUT_NOTE "DWS epilog timed out"

enum tag { TAG_CREATE, TAG_SETUP, TAG_POST_RUN, TAG_TEARDOWN, TAG_ABORT, TAG_COUNT };

static const char *const tag_name[TAG_COUNT] = {
    "create", "setup", "post_run", "teardown", "abort",
};

struct dws_jobsm {
    double epilog_timeout;   /* seconds; <= 0: none */
    enum jobsm_phase phase;  /* jobsm_phase.h; changed only by phase () */
    bool depend_optional;    /* known from a reload in DEPEND: a depend event may
                              * follow (jobtap load) or not (job manager restart) */
    json_int_t id;
    json_int_t userid;
    bool has_dw;             /* the jobspec holds attributes.system.dw */
    bool created;            /* dws.create was sent: there is a workflow to tear down */
    bool create_failed;      /* dws.create failed: no Workflow was made */
    int other_deps;          /* dependencies other than dws-create held now */
    bool create_deferred;    /* dws.create waits for other_deps to reach 0 (the
                              * job uses persistent storage another job makes) */
    bool start_posted;
    bool r_pending;          /* lookup-R issued, no R event yet */
    bool timer_active;
    int pending[TAG_COUNT];  /* outstanding RPCs per tag */
    bool asked_again;        /* the setup/post_run asked again at a reload: a
                              * failure fails nothing (the service may not be
                              * loaded yet: its own recovery finds the job) */
};

/* One event being applied: the next state and the actions so far. */
struct ctx {
    struct dws_jobsm next;
    json_t *acts;
    const char *type;
    dws_error_t *err;
    enum jobsm_phase reloaded; /* JOBSM_EV_RELOADED's phase (jobsm_phase_of_reload) */
};

/* malloc'd printf, NULL when out of memory. */
__attribute__ ((format (printf, 1, 2)))
static char *xasprintf (const char *fmt, ...)
{
    va_list ap;
    int n;
    char *s;

    va_start (ap, fmt);
    n = vsnprintf (NULL, 0, fmt, ap);
    va_end (ap);
    if (n < 0 || !(s = malloc ((size_t)n + 1)))
        return NULL;
    va_start (ap, fmt);
    vsnprintf (s, (size_t)n + 1, fmt, ap);
    va_end (ap);
    return s;
}

static int nomem (struct ctx *c)
{
    return dws_errorf (c->err, "out of memory");
}

/* Append action a (a new reference, or NULL after a failed pack). */
static int push (struct ctx *c, json_t *a)
{
    if (!a || json_array_append_new (c->acts, a) < 0)
        return nomem (c);
    return 0;
}

static int act (struct ctx *c, const char *action)
{
    return push (c, json_pack ("{s:s}", "action", action));
}

static int act_named (struct ctx *c, const char *action, const char *name)
{
    return push (c, json_pack ("{s:s s:s}", "action", action, "name", name));
}

static int act_finish (struct ctx *c, const char *action, const char *name, int status)
{
    return push (c, json_pack ("{s:s s:s s:i}", "action", action, "name", name, "status", status));
}

/* A text action field (note, message, errstr) from printf; the texts put
 * together are JSON strings or ours, so the result is valid UTF-8.
 */
static int act_text (struct ctx *c, json_t *a, const char *key, char *text)
{
    json_t *s = text ? json_string (text) : NULL;
    free (text);
    if (!a || !s || json_object_set_new (a, key, s) < 0) {
        json_decref (a);
        return nomem (c);
    }
    return push (c, a);
}

/* An exception, its note exactly as given (the reference's words: scripts
 * match them whole), then, when explain.h knows the failure, its plain
 * sentence in an eventlog entry of its own (DWS_EXPLAIN_EVENT) posted
 * right after it.  Takes note.
 */
/* The dws-explanation entry for a note of ours (explain.h), when the table
 * has a sentence for it; nothing otherwise. */
static int act_explain (struct ctx *c, const char *type, const char *note)
{
    char sentence[DWS_EXPLAIN_MAX];
    if (!note || !dws_explain (note, sentence, sizeof (sentence)))
        return 0;
    json_t *post = json_pack ("{s:s s:s s:{s:s s:s s:s}}", "action", ACT (POST_EVENT), "name",
                              DWS_EXPLAIN_EVENT, "context", "type", type, "note", note,
                              "explanation", sentence);
    return post ? push (c, post) : nomem (c);
}

/* Raise an exception whose note is the reference's, byte for byte. */
static int act_raise_only (struct ctx *c, const char *type, char *note)
{
    return act_text (c, json_pack ("{s:s s:s s:i}", "action", ACT (RAISE), "type", type,
                                   "severity", 0),
                     "note", note);
}

/* Raise, then post its explanation beside it. */
static int act_raise (struct ctx *c, const char *type, char *note)
{
    char *copy = note ? strdup (note) : NULL;
    if (note && !copy) {
        free (note);
        return nomem (c);
    }
    int rc = act_raise_only (c, type, note);
    if (rc == 0)
        rc = act_explain (c, type, copy);
    free (copy);
    return rc;
}

static int act_log (struct ctx *c, const char *level, char *message)
{
    return act_text (c, json_pack ("{s:s s:s}", "action", ACT (LOG), "level", level), "message",
                     message);
}

static int act_respond (struct ctx *c)
{
    return push (c, json_pack ("{s:s s:{}}", "action", ACT (RESPOND), "payload"));
}

static int act_respond_error (struct ctx *c, int errnum, char *errstr)
{
    return act_text (c, json_pack ("{s:s s:i}", "action", ACT (RESPOND_ERROR), "errnum", errnum),
                     "errstr", errstr);
}

/* rpc action of tag t; steals payload. */
static int act_rpc (struct ctx *c, enum tag t, json_t *payload)
{
    char topic[32];
    snprintf (topic, sizeof (topic), "dws.%s", tag_name[t]);
    if (!payload)
        return nomem (c);
    if (c->next.pending[t] < INT_MAX)
        c->next.pending[t]++;
    return push (c, json_pack ("{s:s s:s s:s s:o}", "action", ACT (RPC), "topic", topic, "tag",
                               tag_name[t], "payload", payload));
}

/* Move the job to the phase `ev` leads to.  A transition the table does
 * not have (a bug: the callers check the phase first) leaves the phase as
 * it was and logs "job N: event 'E' not expected in phase 'P'".
 */
static int phase (struct ctx *c, enum jobsm_phase_event ev)
{
    dws_error_t perr;
    enum jobsm_phase to;
    int rc = ev == JOBSM_EV_RELOADED
                 ? jobsm_phase_reloaded (c->next.phase, c->reloaded, &to, &perr)
                 : jobsm_phase_next (c->next.phase, ev, &to, &perr);
    if (rc < 0)
        return act_log (c, "err", xasprintf ("job %lld: %s", (long long)c->next.id, perr.text));
    c->next.phase = to;
    return 0;
}

static bool in (const struct dws_jobsm *s, enum jobsm_phase p)
{
    return s->phase == p;
}

static int timer_start (struct ctx *c)
{
    if (c->next.epilog_timeout <= 0)
        return 0;
    c->next.timer_active = true;
    return push (c, json_pack ("{s:s s:s s:f}", "action", ACT (TIMER_START), "key",
                               DWS_JOBWIRE_TIMER, "after", c->next.epilog_timeout));
}

static int timer_stop (struct ctx *c)
{
    if (!c->next.timer_active)
        return 0;
    c->next.timer_active = false;
    return push (c, json_pack ("{s:s s:s}", "action", ACT (TIMER_STOP), "key", DWS_JOBWIRE_TIMER));
}

static int epilog_start (struct ctx *c, bool run_started)
{
    if (phase (c, JOBSM_EV_EPILOG) < 0)
        return -1;
    if (act_named (c, ACT (EPILOG_START), DWS_JOBWIRE_EPILOG) < 0 || timer_start (c) < 0)
        return -1;
    return act_rpc (c, TAG_POST_RUN, json_pack ("{s:I s:b}", "jobid", c->next.id, "run_started",
                                                run_started));
}

/* Event fields.  Each failure names the event type and the field. */

static int get_int (struct ctx *c, json_t *ev, const char *key, json_int_t *out)
{
    json_t *v = json_object_get (ev, key);
    if (!json_is_integer (v) || json_integer_value (v) < 0)
        return dws_errorf (c->err, "%s event: '%s' must be an integer >= 0", c->type, key);
    *out = json_integer_value (v);
    return 0;
}

static int get_bool (struct ctx *c, json_t *ev, const char *key, bool required, bool *out)
{
    json_t *v = json_object_get (ev, key);
    if (!v && !required) {
        *out = false;
        return 0;
    }
    if (!json_is_boolean (v))
        return dws_errorf (c->err, "%s event: '%s' must be a boolean", c->type, key);
    *out = json_is_true (v);
    return 0;
}

static int get_string (struct ctx *c, json_t *ev, const char *key, const char **out)
{
    json_t *v = json_object_get (ev, key);
    if (!json_is_string (v))
        return dws_errorf (c->err, "%s event: '%s' must be a string", c->type, key);
    *out = json_string_value (v);
    return 0;
}

static int get_object (struct ctx *c, json_t *ev, const char *key, json_t **out)
{
    json_t *v = json_object_get (ev, key);
    if (!json_is_object (v))
        return dws_errorf (c->err, "%s event: '%s' must be an object", c->type, key);
    *out = v;
    return 0;
}

/* jobspec.attributes.system.<key>, or NULL. */
static json_t *sys_attr (json_t *jobspec, const char *key)
{
    return json_object_get (json_object_get (json_object_get (jobspec, "attributes"), "system"),
                            key);
}

int dws_jobsm_validate_jobspec (json_t *jobspec, dws_error_t *err)
{
    json_t *dw, *split;

    if (!json_is_object (jobspec))
        return dws_errorf (err, "jobspec must be an object");
    if (!(dw = sys_attr (jobspec, "dw")))
        return 0;
    if (!(split = dws_dw_split (dw, NULL, err)))
        return -1;
    json_decref (split);
    return 0;
}

int dws_jobsm_check_jobspec (json_t *jobspec, dws_error_t *err)
{
    json_t *tol;

    if (dws_jobsm_validate_jobspec (jobspec, err) < 0)
        return -1;
    if (!sys_attr (jobspec, "dw"))
        return 0;
    tol = sys_attr (jobspec, "dw_failure_tolerance");
    if (tol && (!json_is_integer (tol) || json_integer_value (tol) < 0))
        return dws_errorf (err, TOLERANCE_TEXT);
    return 0;
}

/* Set has_dw from the jobspec (created is cleared).  Returns 1 if the
 * jobspec holds dw and is valid, else 0, with *invalid set and the
 * message in verr when it holds dw but is invalid.  Only dw is looked at:
 * dw_failure_tolerance goes to the service as given, which refuses a bad
 * one as it refuses a bad directive (the reference's order: dependency,
 * dws.create, the service's refusal, the dws-create exception, the
 * epilog).
 */
static int classify (struct ctx *c, json_t *jobspec, dws_error_t *verr, bool *invalid)
{
    *invalid = false;
    c->next.has_dw = sys_attr (jobspec, "dw") != NULL;
    c->next.created = false;
    c->next.create_failed = false;
    if (!c->next.has_dw)
        return 0;
    if (dws_jobsm_validate_jobspec (jobspec, verr) < 0) {
        *invalid = true;
        return 0;
    }
    return 1;
}

static bool live (const struct dws_jobsm *s);

/* Send dws.create for a job whose jobspec holds a valid dw: the directives,
 * dw_failure_tolerance, dw_release_computes and dw_prestage as given (the service
 * checks them; the tolerance defaults to 0, the release to the service's
 * release_computes), and the bank and project where they are strings.
 */
static int send_create (struct ctx *c, json_t *jobspec)
{
    json_t *tol = sys_attr (jobspec, "dw_failure_tolerance");
    json_t *res = json_object_get (jobspec, "resources");

    json_t *release = sys_attr (jobspec, "dw_release_computes");
    json_t *prestage = sys_attr (jobspec, "dw_prestage");
    json_t *payload = json_pack ("{s:I s:I s:O s:O s:o}", "jobid", c->next.id, "userid",
                                 c->next.userid, "dw_directives", sys_attr (jobspec, "dw"),
                                 "resources", res ? res : json_null (), "failure_tolerance",
                                 tol ? json_incref (tol) : json_integer (0));
    /* as given: the service refuses a bad one, as it does a bad tolerance */
    if (payload && release)
        json_object_set (payload, "release_computes", release);
    if (payload && prestage) /* flux-dws' own key, as given */
        json_object_set (payload, "prestage", prestage);
    /* flux-dws' own keys: the job's flux-accounting bank and project (its
     * mf_priority.so sets the default bank at job.new), for [rabbit.limits]
     * by bank and the usage record */
    json_t *bank = sys_attr (jobspec, "bank");
    json_t *project = sys_attr (jobspec, "project");
    if (payload && json_is_string (bank))
        json_object_set (payload, "bank", bank);
    if (payload && json_is_string (project))
        json_object_set (payload, "project", project);
    c->next.created = true;
    return act_rpc (c, TAG_CREATE, payload);
}

/* Whether a job's dws.create must wait: it uses persistent storage that
 * another job makes (or destroys), and it holds other dependencies --
 * typically on that job.  Its Workflow made now could reach Proposal
 * before the creator's ("PersistentStorageInstance ... not found").
 */
static bool waits_for_others (struct ctx *c, json_t *jobspec)
{
    return c->next.other_deps > 0 && dws_dw_uses_persistent (sys_attr (jobspec, "dw")) == 1;
}

static int ev_depend (struct ctx *c, json_t *ev)
{
    json_int_t id = 0, userid = 0;
    json_t *jobspec = NULL;
    dws_error_t verr;
    bool invalid;

    if (!in (&c->next, JOBSM_PHASE_UNKNOWN) && !in (&c->next, JOBSM_PHASE_AWAIT_DEPEND)
        && !c->next.depend_optional)
        return dws_errorf (c->err, "depend event: job %lld has had its depend event",
                           (long long)c->next.id);
    if (get_int (c, ev, "id", &id) < 0 || get_int (c, ev, "userid", &userid) < 0
        || get_object (c, ev, "jobspec", &jobspec) < 0)
        return -1;
    if (!in (&c->next, JOBSM_PHASE_UNKNOWN) && id != c->next.id)
        return dws_errorf (c->err, "depend event: id %lld is not this job's id %lld",
                           (long long)id, (long long)c->next.id);
    if (c->next.depend_optional) {
        c->next.depend_optional = false;
        if (!live (&c->next) || !in (&c->next, JOBSM_PHASE_DEPEND))
            return 0; /* no dw, or the resource-update came first: nothing to hold */
    }
    c->next.id = id;
    c->next.userid = userid;
    if (!classify (c, jobspec, &verr, &invalid)) {
        if (phase (c, JOBSM_EV_NO_DW) < 0)
            return -1;
        return invalid ? act_raise (c, DWS_JOBWIRE_DEPENDENCY, xasprintf (NOTE "%s", verr.text))
                       : 0;
    }
    if (phase (c, JOBSM_EV_HOLD) < 0 || act_named (c, ACT (DEPENDENCY_ADD), DWS_JOBWIRE_DEPENDENCY) < 0 || act (c, ACT (SUBSCRIBE)) < 0)
        return -1;
    if (waits_for_others (c, jobspec)) {
        c->next.create_deferred = true;
        return act_log (c, "info",
                        xasprintf ("job %lld uses persistent storage and waits for %d other"
                                   " dependenc%s: dws.create is sent once %s removed",
                                   (long long)id, c->next.other_deps,
                                   c->next.other_deps == 1 ? "y" : "ies",
                                   c->next.other_deps == 1 ? "it is" : "they are"));
    }
    return send_create (c, jobspec);
}

/* dependency-add, dependency-remove: the job's dependencies as the job
 * manager posts them.  Ours (dws-create) is followed by resource-update;
 * the others are counted, and the last one removed sends a deferred
 * dws.create.
 */
static int ev_dependency (struct ctx *c, json_t *ev, bool add)
{
    const char *name = NULL;
    json_t *jobspec = NULL;

    if (get_string (c, ev, "name", &name) < 0)
        return -1;
    if (dws_jobwire_own_dependency (name))
        return 0;
    if (add) {
        c->next.other_deps++;
        return 0;
    }
    if (c->next.other_deps > 0)
        c->next.other_deps--;
    if (!c->next.create_deferred || c->next.other_deps > 0)
        return 0;
    if (get_object (c, ev, "jobspec", &jobspec) < 0)
        return -1;
    c->next.create_deferred = false;
    return send_create (c, jobspec);
}

/* create: the job was submitted (job.create, before its dependencies are
 * added): follow its events, so that other plugins' dependency-add and
 * dependency-remove reach the machine.
 */
static int ev_create (struct ctx *c, json_t *ev)
{
    (void)ev;
    if (!in (&c->next, JOBSM_PHASE_UNKNOWN))
        return dws_errorf (c->err, "create event: job %lld is known already",
                           (long long)c->next.id);
    return act (c, ACT (SUBSCRIBE));
}

static int ev_dependency_add (struct ctx *c, json_t *ev)
{
    return ev_dependency (c, ev, true);
}

static int ev_dependency_remove (struct ctx *c, json_t *ev)
{
    return ev_dependency (c, ev, false);
}

static const char *const job_states[] = {
    "NEW", "DEPEND", "PRIORITY", "SCHED", "RUN", "CLEANUP",
};

static int ev_reload (struct ctx *c, json_t *ev)
{
    json_int_t id = 0, userid = 0, others = 0;
    json_t *jobspec = NULL;
    const char *state = NULL;
    bool start = false, finish = false, prolog = false, epilog = false, invalid;
    bool known_state = false;
    dws_error_t verr;

    if (!in (&c->next, JOBSM_PHASE_UNKNOWN))
        return dws_errorf (c->err, "reload event: the machine already holds job %lld"
                           " (a reload needs a new machine)", (long long)c->next.id);
    if (get_int (c, ev, "id", &id) < 0 || get_int (c, ev, "userid", &userid) < 0
        || get_object (c, ev, "jobspec", &jobspec) < 0 || get_string (c, ev, "state", &state) < 0
        || get_bool (c, ev, "start_posted", false, &start) < 0
        || get_bool (c, ev, "finish_posted", false, &finish) < 0
        || get_bool (c, ev, "prolog_active", false, &prolog) < 0
        || get_bool (c, ev, "epilog_active", false, &epilog) < 0
        || (json_object_get (ev, "other_dependencies")
            && get_int (c, ev, "other_dependencies", &others) < 0))
        return -1;
    if (others > INT_MAX)
        return dws_errorf (c->err, "reload event: 'other_dependencies' is too large");
    for (size_t i = 0; i < sizeof (job_states) / sizeof (job_states[0]); i++)
        if (!strcmp (state, job_states[i]))
            known_state = true;
    if (!known_state)
        return dws_errorf (c->err, "reload event: '%s' is not an active job state"
                           " (NEW, DEPEND, PRIORITY, SCHED, RUN, CLEANUP)", state);
    c->next.id = id;
    c->next.userid = userid;
    c->next.start_posted = start;
    if (!strcmp (state, "NEW")) {
        /* job.state.depend is still to come (validate moves the job to
         * DEPEND) and does everything
         */
        return phase (c, JOBSM_EV_RELOADED_NEW);
    }
    if (!strcmp (state, "DEPEND")) {
        /* Whether job.state.depend follows depends on why the plugin sees
         * a job it does not know.  A `flux jobtap load` calls it for every
         * DEPEND job, and depend then holds the dependency again and
         * repeats dws.create, which the service answers by sending its
         * resource-update again (lost if it came while no plugin was
         * loaded).  A job manager restart does not (flux-core replays the
         * job's eventlog, dws-create held, and calls only job.create and
         * job.new): the job must take the resource-update of the dws
         * service, which restarts with the instance and sends it again
         * for a Workflow it picks up in Proposal (or creates the Workflow
         * of a job that has none).  So: held already, ready for either.
         */
        c->next.depend_optional = true;
    }
    if (!classify (c, jobspec, &verr, &invalid)) {
        /* no dw, or invalid dw: depend raised, nothing to undo */
        return phase (c, JOBSM_EV_NO_DW);
    }
    if (!strcmp (state, "DEPEND")) {
        c->next.other_deps = (int)others;
        if (waits_for_others (c, jobspec)) {
            /* the old plugin kept its dws.create back for them: so do we */
            if (phase (c, JOBSM_EV_HOLD) < 0)
                return -1;
            c->next.create_deferred = true;
            return act (c, ACT (SUBSCRIBE));
        }
    }
    c->next.created = true;
    /* In CLEANUP an inactive epilog was started and is done -- unless
     * the job started and has not finished: its processes may still be
     * running, and finish (or a final release, or free) starts it.
     */
    c->reloaded = jobsm_phase_of_reload (state, true, prolog, epilog, start && !finish);
    if (phase (c, JOBSM_EV_RELOADED) < 0)
        return -1;
    if (act (c, ACT (SUBSCRIBE)) < 0)
        return -1;
    if (in (&c->next, JOBSM_PHASE_PROLOG)) {
        /* Ask dws.setup again (R first), for the same reason as the
         * epilog below: the prolog-remove may have come while no plugin
         * was loaded.  The service takes a repeat as such.
         */
        c->next.r_pending = true;
        c->next.asked_again = true;
        return act (c, ACT (LOOKUP_R));
    }
    if (!in (&c->next, JOBSM_PHASE_EPILOG))
        return 0;
    if (timer_start (c) < 0)
        return -1;
    /* Ask again: had the service answered while no plugin was loaded, its
     * epilog-remove was lost with nobody to ask for it again.  A service
     * busy with the job takes the request as a repeat.
     */
    c->next.asked_again = true;
    return act_rpc (c, TAG_POST_RUN, json_pack ("{s:I s:b}", "jobid", id, "run_started", start));
}

/* A job with a Workflow to look after: its phase says it has a dw
 * (jobsm_phase_dw), and its dws.create was sent (not kept back).
 */
static bool live (const struct dws_jobsm *s)
{
    return jobsm_phase_dw (s->phase) && s->created;
}

/* The epilog was started (and may be over). */
static bool epilog_begun (const struct dws_jobsm *s)
{
    return s->phase >= JOBSM_PHASE_EPILOG;
}

static int ev_run (struct ctx *c, json_t *ev)
{
    (void)ev;
    if (!live (&c->next) || c->next.phase >= JOBSM_PHASE_PROLOG)
        return 0;
    c->next.r_pending = true;
    if (phase (c, JOBSM_EV_PROLOG) < 0 || act_named (c, ACT (PROLOG_START), DWS_JOBWIRE_PROLOG) < 0 || act (c, ACT (SUBSCRIBE)) < 0)
        return -1;
    return act (c, ACT (LOOKUP_R));
}

static int ev_R (struct ctx *c, json_t *ev)
{
    json_t *R = json_object_get (ev, "R");
    json_t *error = json_object_get (ev, "error");

    if (!c->next.r_pending)
        return dws_errorf (c->err, "R event: no R lookup is outstanding");
    if (R ? (error || !json_is_object (R)) : !json_is_string (error))
        return dws_errorf (c->err, "R event: needs either an 'R' object or an 'error' string");
    c->next.r_pending = false;
    if (!in (&c->next, JOBSM_PHASE_PROLOG))
        return 0; /* cancelled while R was read: no Setup for a dying job */
    if (error) {
        if (phase (c, JOBSM_EV_PROLOG_END) < 0 || act_raise (c, DWS_JOBWIRE_PROLOG,
                       xasprintf (NOTE "could not read R: %s", json_string_value (error)))
            < 0)
            return -1;
        return act_finish (c, ACT (PROLOG_FINISH), DWS_JOBWIRE_PROLOG, 1);
    }
    return act_rpc (c, TAG_SETUP, json_pack ("{s:I s:O}", "jobid", c->next.id, "R", R));
}

static int ev_start (struct ctx *c, json_t *ev)
{
    (void)ev;
    c->next.start_posted = true;
    return 0;
}

static int ev_finish (struct ctx *c, json_t *ev)
{
    (void)ev;
    if (!live (&c->next) || epilog_begun (&c->next))
        return 0;
    return epilog_start (c, true);
}

static int ev_release (struct ctx *c, json_t *ev)
{
    bool final = false;

    if (get_bool (c, ev, "final", true, &final) < 0)
        return -1;
    if (!final || !live (&c->next) || epilog_begun (&c->next))
        return 0;
    return epilog_start (c, c->next.start_posted);
}

static int ev_cleanup (struct ctx *c, json_t *ev)
{
    (void)ev;
    /* A job that started waits for finish: its processes may be running
     * still (a cancel or an exception reaches CLEANUP before them).
     */
    if (!live (&c->next) || epilog_begun (&c->next) || c->next.start_posted)
        return 0;
    return epilog_start (c, false);
}

static int ev_free (struct ctx *c, json_t *ev)
{
    (void)ev;
    if (!live (&c->next) || epilog_begun (&c->next))
        return 0;
    if (act_log (c, "warning",
                 xasprintf ("job %lld: resources freed with no finish or final release"
                            " (the exec service gave the job up?); starting the epilog now",
                            (long long)c->next.id))
        < 0)
        return -1;
    return epilog_start (c, c->next.start_posted);
}

static int ev_exception (struct ctx *c, json_t *ev)
{
    const char *type = NULL;
    json_t *sev = json_object_get (ev, "severity");
    json_t *note = json_object_get (ev, "note");

    if (get_string (c, ev, "exc_type", &type) < 0)
        return -1;
    if (note && !json_is_string (note))
        return dws_errorf (c->err, "exception event: 'note' must be a string");
    if (!json_is_integer (sev))
        return dws_errorf (c->err, "exception event: 'severity' must be an integer");
    if (json_integer_value (sev) != 0)
        return 0;
    c->next.create_deferred = false; /* the job ends: no Workflow for it */
    if (!live (&c->next))
        return 0;
    if (in (&c->next, JOBSM_PHASE_PROLOG)) {
        if (phase (c, JOBSM_EV_PROLOG_END) < 0)
            return -1;
        return act_finish (c, ACT (PROLOG_FINISH), DWS_JOBWIRE_PROLOG, 1);
    }
    if (!in (&c->next, JOBSM_PHASE_EPILOG))
        return 0; /* before the epilog: finish or cleanup starts it */
    if (!strcmp (type, DWS_JOBWIRE_EPILOG_TIMEOUT_EXCEPTION)) {
        /* the epilog's end makes the job inactive at once, before an
         * action queued after the raise could post to it: the explanation
         * of our own timeout goes out here, after the exception */
        if (phase (c, JOBSM_EV_EPILOG_END) < 0 || act_rpc (c, TAG_ABORT, json_pack ("{s:I}", "jobid", c->next.id)) < 0
            || act_explain (c, type, json_string_value (note)) < 0
            || act_finish (c, ACT (EPILOG_FINISH), DWS_JOBWIRE_EPILOG, 1) < 0)
            return -1;
        return timer_stop (c);
    }
    return act_rpc (c, TAG_TEARDOWN, json_pack ("{s:I}", "jobid", c->next.id));
}

static int ev_timer (struct ctx *c, json_t *ev)
{
    const char *key = NULL, *state = NULL;

    if (get_string (c, ev, "key", &key) < 0 || get_string (c, ev, "state", &state) < 0)
        return -1;
    if (strcmp (key, DWS_JOBWIRE_TIMER) != 0)
        return dws_errorf (c->err, "timer event: unknown timer '%s'", key);
    c->next.timer_active = false;
    if (!live (&c->next) || !in (&c->next, JOBSM_PHASE_EPILOG) || strcmp (state, "CLEANUP") != 0)
        return 0;
    /* explained when the exception comes back (ev_exception) */
    return act_raise_only (c, DWS_JOBWIRE_EPILOG_TIMEOUT_EXCEPTION,
                           xasprintf (EPILOG_TIMEOUT_NOTE));
}

/* The message to log when a request failed because no service was there
 * to take it, or NULL when the failure counts.  The service that comes
 * next finds the job without its request and carries it on (its orphan
 * recovery), so the job waits rather than failing:
 * - EHOSTUNREACH, the broker's "module disconnect": the service went away
 *   holding the request (a reload);
 * - ENOSYS: no service was loaded when dws.setup or dws.post_run went out
 *   (a reload's gap).  Not for a job whose dws.create failed: it has no
 *   Workflow for a service to find, so its post_run fails (the "could not
 *   be sent" text) and the job still ends.
 * A teardown or an abort is not carried on: its failure is logged.
 */
static char *service_away (struct ctx *c, enum tag t, json_int_t errnum, const char *text)
{
    if (t == TAG_TEARDOWN || t == TAG_ABORT)
        return NULL;
    if (errnum == EHOSTUNREACH)
        return xasprintf ("job %lld: the dws service went away with its dws.%s request (%s);"
                          " the job waits for the service that replaces it",
                          (long long)c->next.id, tag_name[t], text);
    if (errnum == ENOSYS && (t == TAG_SETUP || t == TAG_POST_RUN) && !c->next.create_failed)
        return xasprintf ("job %lld: no dws service was loaded to take its dws.%s;"
                          " the job waits for the service to be loaded",
                          (long long)c->next.id, tag_name[t]);
    return NULL;
}

static int ev_rpc_response (struct ctx *c, json_t *ev)
{
    const char *tagstr = NULL, *errstr = NULL, *text;
    json_t *payload = json_object_get (ev, "payload");
    json_t *errnum = json_object_get (ev, "errnum");
    json_t *estr = json_object_get (ev, "errstr");
    bool ok = false, failed, again;
    char enosys[128];
    char *away;
    int t;

    if (get_string (c, ev, "tag", &tagstr) < 0 || get_bool (c, ev, "ok", true, &ok) < 0)
        return -1;
    for (t = 0; t < TAG_COUNT; t++)
        if (!strcmp (tagstr, tag_name[t]))
            break;
    if (t == TAG_COUNT)
        return dws_errorf (c->err, "rpc-response event: unknown tag '%s'", tagstr);
    if (errnum && !json_is_integer (errnum))
        return dws_errorf (c->err, "rpc-response event: 'errnum' must be an integer");
    if (estr && !json_is_string (estr))
        return dws_errorf (c->err, "rpc-response event: 'errstr' must be a string");
    if (c->next.pending[t] == 0)
        return dws_errorf (c->err, "rpc-response event: no dws.%s RPC is outstanding",
                           tag_name[t]);
    c->next.pending[t]--;
    errstr = json_string_value (estr);
    failed = !ok || (json_is_object (payload) && json_is_false (json_object_get (payload,
                                                                                  "success")));
    again = (t == TAG_SETUP || t == TAG_POST_RUN) && c->next.asked_again;
    if (again)
        c->next.asked_again = false;
    if (!failed)
        return 0;
    if (ok)
        errstr = json_string_value (json_object_get (payload, "errstr"));
    text = errstr ? errstr : "unknown error";
    if (again) {
        /* At a job manager restart the plugin asks before the service is
         * loaded; the service, once up, finds the job by itself.  */
        return act_log (c, "info",
                        xasprintf ("job %lld: dws.%s asked again after a reload failed (%s);"
                                   " the dws service finds the job when it starts",
                                   (long long)c->next.id, tag_name[t], text));
    }
    if (!ok && (away = service_away (c, (enum tag)t, json_integer_value (errnum), text)))
        return act_log (c, "warning", away);
    if (!ok && json_integer_value (errnum) == ENOSYS) {
        snprintf (enosys, sizeof (enosys), ENOSYS_TEXT, tag_name[t]);
        text = enosys;
    }
    switch ((enum tag)t) {
        case TAG_CREATE:
            c->next.create_failed = true; /* (not for one service_away took) */
            return act_raise (c, DWS_JOBWIRE_DEPENDENCY, xasprintf (NOTE "%s", text));
        case TAG_SETUP:
            if (in (&c->next, JOBSM_PHASE_PROLOG)) /* its exception event finishes the prolog */
                return act_raise (c, DWS_JOBWIRE_PROLOG, xasprintf (NOTE "%s", text));
            return act_log (c, "info",
                            xasprintf ("dws.setup failed for job %lld after its prolog ended: %s",
                                       (long long)c->next.id, text));
        case TAG_POST_RUN:
            if (!in (&c->next, JOBSM_PHASE_EPILOG))
                return act_log (c, "err",
                                xasprintf ("dws.post_run failed for job %lld after its epilog"
                                           " ended: %s",
                                           (long long)c->next.id, text));
            /* Raise first so the exception lands while the job still holds
             * its epilog; the machine already has the epilog finished, so
             * the exception event this raise triggers does nothing.
             */
            if (phase (c, JOBSM_EV_EPILOG_END) < 0
                || act_raise (c, DWS_JOBWIRE_EPILOG, xasprintf (NOTE "%s", text)) < 0
                || act_finish (c, ACT (EPILOG_FINISH), DWS_JOBWIRE_EPILOG, 1) < 0)
                return -1;
            return timer_stop (c);
        case TAG_TEARDOWN:
        case TAG_ABORT:
        case TAG_COUNT:
            break;
    }
    return act_log (c, "err", xasprintf ("dws.%s failed for job %lld: %s", tag_name[t],
                                         (long long)c->next.id, text));
}

/* A malformed job-manager.dws.<method> request. */
static int malformed (struct ctx *c, const char *method, const char *what)
{
    if (act_respond_error (c, EPROTO, xasprintf ("received malformed dws.%s RPC: %s", method,
                                                 what))
            < 0
        || act_raise (c, "dws", xasprintf (NOTE "received malformed dws.%s RPC", method)) < 0)
        return -1;
    return act_log (c, "err",
                    xasprintf ("job %lld: received malformed dws.%s RPC (%s): " SKEW_HINT,
                               (long long)c->next.id, method, what));
}

/* Checks common to the service requests.  Returns 1 to go on with the
 * payload in *payload, 0 when the request was answered, -1 on a bad event.
 */
static int request_begin (struct ctx *c, json_t *ev, const char *method, json_t **payload)
{
    json_t *id;

    *payload = json_object_get (ev, "payload");
    if (!c->next.has_dw)
        return act_respond_error (c, EINVAL,
                                  xasprintf ("dws.%s: job %lld has no #DW directives", method,
                                             (long long)c->next.id))
               < 0 ? -1 : 0;
    if (!json_is_object (*payload))
        return malformed (c, method, "the payload is not an object") < 0 ? -1 : 0;
    id = json_object_get (*payload, "id");
    if (!json_is_integer (id))
        return malformed (c, method, "'id' must be an integer") < 0 ? -1 : 0;
    if (json_integer_value (id) != c->next.id)
        return dws_errorf (c->err, "%s event: payload id %lld is not this job's id %lld",
                           c->type, (long long)json_integer_value (id), (long long)c->next.id);
    return 1;
}

static int wrong_state (struct ctx *c, const char *method, const char *state, const char *want)
{
    return act_respond_error (c, EINVAL, xasprintf ("dws.%s: job %lld is in state %s, not %s",
                                                    method, (long long)c->next.id, state, want));
}

/* The constraints for a resource-update (new reference, or NULL when there
 * are none).  *fail is set on allocation failure.
 */
static json_t *constraints (json_t *jobspec, json_t *exclude, bool *fail)
{
    json_t *existing = sys_attr (jobspec, "constraints");
    json_t *out = NULL;

    if (json_is_null (existing))
        existing = NULL;
    if (json_is_null (exclude))
        exclude = NULL;
    if (existing && exclude)
        out = json_pack ("{s:[O O]}", "and", existing, exclude);
    else if (existing || exclude)
        out = json_incref (existing ? existing : exclude);
    else
        return NULL;
    if (out && json_is_true (sys_attr (jobspec, "allow_rabbits"))) {
        json_t *wrapped = json_pack ("{s:[{s:[s]} O]}", "or", "properties", "rabbit", out);
        json_decref (out);
        out = wrapped;
    }
    *fail = out == NULL;
    return out;
}

static int ev_resource_update (struct ctx *c, json_t *ev)
{
    const char *m = DWS_JOBWIRE_RESOURCE_UPDATE_METHOD, *state = NULL;
    json_t *jobspec = NULL, *payload, *errmsg, *resources, *exclude, *prestage, *cons, *update;
    bool fail = false;
    int rc;

    if (get_string (c, ev, "state", &state) < 0 || get_object (c, ev, "jobspec", &jobspec) < 0)
        return -1;
    if ((rc = request_begin (c, ev, m, &payload)) <= 0)
        return rc;
    errmsg = json_object_get (payload, "errmsg");
    if (errmsg && !json_is_string (errmsg))
        return malformed (c, m, "'errmsg' must be a string");
    if (errmsg) {
        if (act_raise (c, "dws", xasprintf (NOTE "%s", json_string_value (errmsg))) < 0)
            return -1;
        return act_respond (c);
    }
    resources = json_object_get (payload, "resources");
    exclude = json_object_get (payload, "exclude");
    prestage = json_object_get (payload, "prestage");
    if (!json_is_array (resources))
        return malformed (c, m, "'resources' must be a list");
    if (exclude && !json_is_object (exclude) && !json_is_null (exclude))
        return malformed (c, m, "'exclude' must be an object or null");
    if (prestage && !json_is_boolean (prestage))
        return malformed (c, m, "'prestage' must be a boolean");
    if (!in (&c->next, JOBSM_PHASE_DEPEND))
        return act_respond (c); /* a repeat: the jobspec was updated already */
    if (strcmp (state, "DEPEND") != 0)
        return wrong_state (c, m, state, "DEPEND");
    cons = constraints (jobspec, exclude, &fail);
    if (fail)
        return nomem (c);
    update = json_pack ("{s:O}", "resources", resources);
    if (update && cons && json_object_set (update, "attributes.system.constraints", cons) < 0) {
        json_decref (update);
        update = NULL;
    }
    json_decref (cons);
    if (!update)
        return nomem (c);
    if (phase (c, JOBSM_EV_RESOURCES) < 0) {
        json_decref (update);
        return -1;
    }
    /* a pre-staged job takes dws-prestage before it gives dws-create up:
     * it never stands without a dependency of ours until its storage is in */
    if (push (c, json_pack ("{s:s s:o}", "action", ACT (JOBSPEC_UPDATE), "update", update)) < 0
        || (json_is_true (prestage)
            && act_named (c, ACT (DEPENDENCY_ADD), DWS_JOBWIRE_PRESTAGE_DEPENDENCY) < 0)
        || act_named (c, ACT (DEPENDENCY_REMOVE), DWS_JOBWIRE_DEPENDENCY) < 0)
        return -1;
    return act_respond (c);
}

/* dws-prestage removed: the job's storage is set up and its data in (or
 * the service gave pre-staging up): it may be scheduled.  A repeat, or a
 * job not in DEPEND, is answered and changes nothing.  The service asks
 * with the dependency method; an older flux-dws service with
 * prestage-remove, which the plugin still serves.  `update`, when not
 * NULL, is applied to the jobspec first (node-local storage set up on
 * chassis the job's nodes must come from).
 */
static int prestage_let_go (struct ctx *c, const char *state, json_t *update)
{
    if (!strcmp (state, "DEPEND") && update
        && push (c, json_pack ("{s:s s:O}", "action", ACT (JOBSPEC_UPDATE), "update", update)) < 0)
        return -1;
    /* a repeat finds it gone (ENOENT, which the adapter lets pass) */
    if (!strcmp (state, "DEPEND")
        && act_named (c, ACT (DEPENDENCY_REMOVE), DWS_JOBWIRE_PRESTAGE_DEPENDENCY) < 0)
        return -1;
    return act_respond (c);
}

/* The jobspec-update that holds a pre-staged job to the chassis its
 * node-local storage is on: the dependency removal's "resources" and
 * "constraint" (flux-dws' own keys; none: NULL, *update too), the
 * constraint and-ed with the job's own, as a resource-update's exclude
 * is.  0, 1 when the request was answered (malformed), -1 on error.
 */
static int prestage_pin (struct ctx *c, const char *m, json_t *payload, json_t *jobspec,
                         json_t **update)
{
    json_t *res = json_object_get (payload, "resources");
    json_t *pin = json_object_get (payload, "constraint");
    bool fail = false;
    *update = NULL;
    if (!res && !pin)
        return 0;
    if (!json_is_array (res) || !json_is_object (pin))
        return malformed (c, m, "'resources' (a list) and 'constraint' (an object) come"
                                " together") < 0 ? -1 : 1;
    json_t *now = json_object_get (jobspec, "resources");
    if (now && json_equal (now, res))
        return 0; /* a repeat: applied already */
    json_t *cons = constraints (jobspec, pin, &fail);
    if (!fail)
        *update = json_pack ("{s:O s:O}", "resources", res, "attributes.system.constraints",
                             cons);
    json_decref (cons);
    return *update ? 0 : nomem (c);
}

/* The constraint c with the pin taken out (a new reference): {} (RFC 31:
 * matches all) where c is the pin, the pin dropped from an "and" (the one
 * operand left stands alone), "or" and "not" taken apart the same way
 * (allow_rabbits wraps it).  *found says whether the pin was in it.
 */
static json_t *unpinned (json_t *c, json_t *pin, bool *found)
{
    const char *op;
    json_t *list, *v, *out;
    size_t i;
    if (json_equal (c, pin)) {
        *found = true;
        return json_object ();
    }
    if (json_object_size (c) != 1 || !(op = json_object_iter_key (json_object_iter (c)))
        || (strcmp (op, "and") && strcmp (op, "or") && strcmp (op, "not"))
        || !json_is_array ((list = json_object_get (c, op))))
        return json_incref (c);
    if (!(out = json_array ()))
        return NULL;
    json_array_foreach (list, i, v) {
        if (!strcmp (op, "and") && json_equal (v, pin)) {
            *found = true;
            continue;
        }
        if (json_array_append_new (out, unpinned (v, pin, found)) < 0) {
            json_decref (out);
            return NULL;
        }
    }
    if (!strcmp (op, "and") && json_array_size (out) == 1) {
        json_t *one = json_incref (json_array_get (out, 0));
        json_decref (out);
        return one;
    }
    if (!strcmp (op, "and") && json_array_size (out) == 0) {
        json_decref (out);
        return json_object ();
    }
    return json_pack ("{s:o}", op, out);
}

/* prestage-unpin {id, resources, constraint}: the service gave a
 * pre-staged job's node-local storage up (its nodes did not come within
 * rabbit.prestage_node_wait): the jobspec asks for `resources` again (the
 * usual ones, ssd with the nodes) and the pin's `constraint` (as the
 * dependency's removal carried it) leaves the job's constraints.  flux-core
 * moves a job in SCHED back to PRIORITY on a jobspec-update: it is
 * scheduled anew.  A repeat changes nothing; a job that has its nodes
 * already is answered EBUSY (the storage set up for them is used).
 */
static int ev_prestage_unpin (struct ctx *c, json_t *ev)
{
    const char *m = DWS_JOBWIRE_PRESTAGE_UNPIN_METHOD, *state = NULL;
    json_t *payload, *res, *pin, *jobspec, *now, *cons, *update;
    bool found = false;
    int rc;

    if (get_string (c, ev, "state", &state) < 0)
        return -1;
    if ((rc = request_begin (c, ev, m, &payload)) <= 0)
        return rc;
    res = json_object_get (payload, "resources");
    pin = json_object_get (payload, "constraint");
    if (!json_is_array (res))
        return malformed (c, m, "'resources' must be a list");
    if (!json_is_object (pin))
        return malformed (c, m, "'constraint' must be an object");
    if (!strcmp (state, "RUN") || !strcmp (state, "CLEANUP"))
        return act_respond_error (c, EBUSY, xasprintf ("dws.%s: job %lld is in state %s: it"
                                                       " has its nodes", m,
                                                       (long long)c->next.id, state));
    if (strcmp (state, "DEPEND") && strcmp (state, "PRIORITY") && strcmp (state, "SCHED"))
        return wrong_state (c, m, state, "DEPEND, PRIORITY or SCHED");
    jobspec = json_object_get (ev, "jobspec");
    now = sys_attr (jobspec, "constraints");
    cons = now ? unpinned (now, pin, &found) : NULL;
    if (now && !cons)
        return nomem (c);
    json_t *had = json_object_get (jobspec, "resources");
    if (!found && had && json_equal (had, res)) {
        json_decref (cons);
        return act_respond (c); /* a repeat: unpinned already */
    }
    update = json_pack ("{s:O}", "resources", res);
    if (update && found && json_object_set (update, "attributes.system.constraints", cons) < 0) {
        json_decref (update);
        update = NULL;
    }
    json_decref (cons);
    if (!update)
        return nomem (c);
    if (push (c, json_pack ("{s:s s:o}", "action", ACT (JOBSPEC_UPDATE), "update", update)) < 0)
        return -1;
    return act_respond (c);
}

/* prestage-remove {id}: an older flux-dws service's dws-prestage removal. */
static int ev_prestage_remove (struct ctx *c, json_t *ev)
{
    const char *m = DWS_JOBWIRE_PRESTAGE_REMOVE_METHOD, *state = NULL;
    json_t *payload;
    int rc;

    if (get_string (c, ev, "state", &state) < 0)
        return -1;
    if ((rc = request_begin (c, ev, m, &payload)) <= 0)
        return rc;
    return prestage_let_go (c, state, NULL);
}

static int ev_prolog_remove (struct ctx *c, json_t *ev)
{
    const char *m = DWS_JOBWIRE_PROLOG_REMOVE_METHOD, *name;
    json_t *payload, *vars, *v;
    int rc;

    if ((rc = request_begin (c, ev, m, &payload)) <= 0)
        return rc;
    vars = json_object_get (payload, "variables");
    if (!json_is_object (vars))
        return malformed (c, m, "'variables' must be an object");
    json_object_foreach (vars, name, v) {
        if (!json_is_string (v)) {
            char *what = xasprintf ("variable '%s' must be a string", name);
            rc = what ? malformed (c, m, what) : nomem (c);
            free (what);
            return rc;
        }
    }
    if (in (&c->next, JOBSM_PHASE_PROLOG)) {
        if (phase (c, JOBSM_EV_PROLOG_END) < 0
            || push (c, json_pack ("{s:s s:s s:{s:O}}", "action", ACT (POST_EVENT), "name",
                                "dws_environment", "context", "variables", vars))
                < 0
            || act_finish (c, ACT (PROLOG_FINISH), DWS_JOBWIRE_PROLOG, 0) < 0)
            return -1;
    }
    return act_respond (c);
}

static int ev_epilog_remove (struct ctx *c, json_t *ev)
{
    const char *m = DWS_JOBWIRE_EPILOG_REMOVE_METHOD, *state = NULL;
    json_t *payload;
    int rc;

    if (get_string (c, ev, "state", &state) < 0)
        return -1;
    if ((rc = request_begin (c, ev, m, &payload)) <= 0)
        return rc;
    if (strcmp (state, "CLEANUP") != 0)
        return wrong_state (c, m, state, "CLEANUP");
    if (in (&c->next, JOBSM_PHASE_EPILOG)) {
        if (phase (c, JOBSM_EV_EPILOG_END) < 0
            || act_finish (c, ACT (EPILOG_FINISH), DWS_JOBWIRE_EPILOG, 0) < 0 || timer_stop (c) < 0)
            return -1;
    }
    return act_respond (c);
}

/* dependency: the service adds or removes one of flux-dws' own
 * dependencies (DWS_JOBWIRE_SERVICE_DEPENDENCIES) on a job in NEW or
 * DEPEND.  A removal once the job has left DEPEND has nothing to remove
 * and is answered; the job manager ignores a dependency already held.
 * dws-prestage is only removed through it (prestage_let_go).
 */
static int ev_service_dependency (struct ctx *c, json_t *ev)
{
    const char *m = DWS_JOBWIRE_DEPENDENCY_METHOD, *state = NULL, *name;
    json_t *payload, *add;
    int rc;

    if (get_string (c, ev, "state", &state) < 0)
        return -1;
    if ((rc = request_begin (c, ev, m, &payload)) <= 0)
        return rc;
    name = json_string_value (json_object_get (payload, "name"));
    add = json_object_get (payload, "add");
    if (!name)
        return malformed (c, m, "'name' must be a string");
    if (!json_is_boolean (add))
        return malformed (c, m, "'add' must be a boolean");
    if (!dws_jobwire_service_dependency (name))
        return act_respond_error (c, EINVAL, xasprintf ("dws.%s: '%s' is not a flux-dws"
                                                        " dependency", m, name));
    if (!strcmp (name, DWS_JOBWIRE_PRESTAGE_DEPENDENCY)) {
        /* the plugin adds it with the resource-update, before dws-create
         * goes: the job never stands without one of ours meanwhile */
        if (json_is_true (add))
            return act_respond_error (c, EINVAL,
                                      xasprintf ("dws.%s: %s is added by the plugin with the"
                                                 " resource-update ('prestage': true), not by"
                                                 " this method", m, name));
        json_t *update = NULL;
        if ((rc = prestage_pin (c, m, payload, json_object_get (ev, "jobspec"), &update)) != 0)
            return rc < 0 ? -1 : 0;
        rc = prestage_let_go (c, state, update);
        json_decref (update);
        return rc;
    }
    if (strcmp (state, "DEPEND") != 0 && strcmp (state, "NEW") != 0) {
        if (!json_is_true (add))
            return act_respond (c);
        return wrong_state (c, m, state, "DEPEND");
    }
    if (act_named (c, json_is_true (add) ? ACT (DEPENDENCY_ADD) : ACT (DEPENDENCY_REMOVE),
                   name) < 0)
        return -1;
    return act_respond (c);
}

/* service: a job-manager.dws.<type> request the adapter registers */
struct handler {
    const char *type;
    int (*fn) (struct ctx *c, json_t *ev);
    bool service;
};

static const struct handler handlers[] = {
    {"depend", ev_depend, false},
    {"reload", ev_reload, false},
    {"create", ev_create, false},
    {"dependency-add", ev_dependency_add, false},
    {"dependency-remove", ev_dependency_remove, false},
    {"run", ev_run, false},
    {"R", ev_R, false},
    {"start", ev_start, false},
    {"finish", ev_finish, false},
    {"release", ev_release, false},
    {"cleanup", ev_cleanup, false},
    {"free", ev_free, false},
    {"exception", ev_exception, false},
    {"timer", ev_timer, false},
    {"rpc-response", ev_rpc_response, false},
    {DWS_JOBWIRE_RESOURCE_UPDATE_METHOD, ev_resource_update, true},
    {DWS_JOBWIRE_PROLOG_REMOVE_METHOD, ev_prolog_remove, true},
    {DWS_JOBWIRE_EPILOG_REMOVE_METHOD, ev_epilog_remove, true},
    /* flux-dws' own method, registered apart from the reference's three
     * (dws_jobsm_service_*): the adapter feeds it as this event type */
    {DWS_JOBWIRE_DEPENDENCY_METHOD, ev_service_dependency, false},
    {DWS_JOBWIRE_PRESTAGE_REMOVE_METHOD, ev_prestage_remove, true},
    {DWS_JOBWIRE_PRESTAGE_UNPIN_METHOD, ev_prestage_unpin, true},
};
#define NHANDLERS (sizeof (handlers) / sizeof (handlers[0]))

int dws_jobsm_service_count (void)
{
    int n = 0;
    for (size_t i = 0; i < NHANDLERS; i++)
        n += handlers[i].service;
    return n;
}

const char *dws_jobsm_service_name (int i)
{
    for (size_t k = 0; k < NHANDLERS && i >= 0; k++)
        if (handlers[k].service && i-- == 0)
            return handlers[k].type;
    return NULL;
}

json_t *dws_jobsm_event (struct dws_jobsm *sm, json_t *event, dws_error_t *err)
{
    const struct handler *h = NULL;
    struct ctx c;
    const char *type;

    if (!sm) {
        dws_errorf (err, "no job state machine");
        return NULL;
    }
    if (!json_is_object (event)) {
        dws_errorf (err, "an event must be an object");
        return NULL;
    }
    if (!(type = json_string_value (json_object_get (event, "type")))) {
        dws_errorf (err, "an event needs a 'type' string");
        return NULL;
    }
    for (size_t i = 0; i < NHANDLERS; i++)
        if (!strcmp (type, handlers[i].type))
            h = &handlers[i];
    if (!h) {
        dws_errorf (err, "unknown event type '%s'", type);
        return NULL;
    }
    /* the job manager posts other plugins' dependencies before DEPEND */
    bool early = h->fn == ev_create || h->fn == ev_dependency_add
                 || h->fn == ev_dependency_remove;
    if (sm->phase == JOBSM_PHASE_UNKNOWN && !early && h->fn != ev_depend && h->fn != ev_reload) {
        dws_errorf (err, "%s event: the job is not known yet (no depend or reload event)", type);
        return NULL;
    }
    if (sm->phase == JOBSM_PHASE_AWAIT_DEPEND && !early && h->fn != ev_depend) {
        dws_errorf (err, "%s event: job %lld was reloaded in NEW; its depend event comes first",
                    type, (long long)sm->id);
        return NULL;
    }
    c.next = *sm;
    c.type = type;
    c.err = err;
    if (!(c.acts = json_array ())) {
        dws_errorf (err, "out of memory");
        return NULL;
    }
    if (h->fn (&c, event) < 0) {
        json_decref (c.acts);
        return NULL;
    }
    *sm = c.next;
    return c.acts;
}

struct dws_jobsm *dws_jobsm_create (json_t *config, dws_error_t *err)
{
    struct dws_jobsm *sm;
    json_t *t = NULL;

    if (config && !json_is_null (config)) {
        if (!json_is_object (config)) {
            dws_errorf (err, "dws jobtap config must be an object");
            return NULL;
        }
        t = json_object_get (config, "epilog-timeout");
        if (t && !json_is_number (t)) {
            dws_errorf (err, "dws jobtap config: epilog-timeout must be a number of seconds");
            return NULL;
        }
    }
    if (!(sm = calloc (1, sizeof (*sm)))) {
        dws_errorf (err, "out of memory");
        return NULL;
    }
    sm->epilog_timeout = t ? json_number_value (t) : 0.;
    if (sm->epilog_timeout < 0)
        sm->epilog_timeout = 0;
    return sm;
}

void dws_jobsm_destroy (struct dws_jobsm *sm)
{
    free (sm);
}

json_t *dws_jobsm_state (const struct dws_jobsm *sm)
{
    json_t *o, *pending;

    if (!sm || !(pending = json_object ()))
        return NULL;
    for (int t = 0; t < TAG_COUNT; t++) {
        if (json_object_set_new (pending, tag_name[t], json_integer (sm->pending[t])) < 0) {
            json_decref (pending);
            return NULL;
        }
    }
    /* the phase, and (for the tests and fuzz invariants) what it says in
     * the flags the machine had before it had phases */
    enum jobsm_phase p = sm->phase;
    o = json_pack ("{s:s s:b s:I s:I s:b s:b s:b s:b s:b s:b s:i s:b s:b s:b s:b s:b s:b s:b"
                   " s:f s:o}",
                   "phase", jobsm_phase_name (p), "known", p != JOBSM_PHASE_UNKNOWN, "id",
                   sm->id, "userid", sm->userid, "await_depend", p == JOBSM_PHASE_AWAIT_DEPEND,
                   "depend_optional", sm->depend_optional, "has_dw", sm->has_dw, "created",
                   sm->created, "create_failed", sm->create_failed, "dependency",
                   p == JOBSM_PHASE_DEPEND, "other_deps", sm->other_deps, "create_deferred",
                   sm->create_deferred, "start_posted", sm->start_posted, "prolog_active", p == JOBSM_PHASE_PROLOG,
                   "r_pending", sm->r_pending, "epilog_started", p >= JOBSM_PHASE_EPILOG,
                   "epilog_active", p == JOBSM_PHASE_EPILOG, "timer_active", sm->timer_active,
                   "epilog_timeout", sm->epilog_timeout, "pending", pending);
    return o;
}

json_t *dws_jobsm_unrouted (const char *method, json_t *payload, bool active, bool has_dw,
                            dws_error_t *err)
{
    json_t *id = json_object_get (payload, "id");
    struct ctx c;
    int rc;

    memset (&c, 0, sizeof (c));
    c.type = "unrouted";
    c.err = err;
    if (!method)
        return dws_errorf (err, "unrouted request: no method"), NULL;
    if (!(c.acts = json_array ()))
        return dws_errorf (err, "out of memory"), NULL;
    if (!json_is_object (payload) || !json_is_integer (id) || json_integer_value (id) < 0) {
        const char *what = !json_is_object (payload) ? "the payload is not an object"
                                                     : "'id' must be a job id (an integer >= 0)";
        rc = act_respond_error (&c, EPROTO,
                                xasprintf ("received malformed dws.%s RPC: %s", method, what));
        if (rc == 0)
            rc = act_log (&c, "err", xasprintf ("received malformed dws.%s RPC (%s): " SKEW_HINT,
                                                method, what));
    }
    else if (!active)
        rc = act_respond_error (&c, ENOENT, xasprintf ("dws.%s: job %lld is not active", method,
                                                       (long long)json_integer_value (id)));
    else if (!has_dw)
        rc = act_respond_error (&c, EINVAL, xasprintf ("dws.%s: job %lld has no #DW directives",
                                                       method,
                                                       (long long)json_integer_value (id)));
    else
        rc = dws_errorf (err, "unrouted request: job %lld has dw and is active: its machine"
                         " answers", (long long)json_integer_value (id));
    if (rc < 0) {
        json_decref (c.acts);
        return NULL;
    }
    return c.acts;
}

char *dws_jobsm_unrouted_json (const char *method, const char *payload_json, int active,
                               int has_dw, dws_error_t *err)
{
    /* a payload that is not JSON is one more malformed request */
    json_t *payload = payload_json ? json_loads (payload_json, JSON_DECODE_ANY, NULL) : NULL;
    json_t *acts = dws_jobsm_unrouted (method, payload, active != 0, has_dw != 0, err);
    json_decref (payload);
    return dws_json_dump_take (acts, err);
}

struct dws_jobsm *dws_jobsm_create_json (const char *config_json, dws_error_t *err)
{
    json_t *config = NULL;
    struct dws_jobsm *sm;

    if (config_json && !(config = dws_json_load ("dws jobtap config", config_json, 0, err)))
        return NULL;
    sm = dws_jobsm_create (config, err);
    json_decref (config);
    return sm;
}

char *dws_jobsm_event_json (struct dws_jobsm *sm, const char *event_json, dws_error_t *err)
{
    json_t *ev, *acts;

    if (!(ev = dws_json_load ("event", event_json, 0, err)))
        return NULL;
    acts = dws_jobsm_event (sm, ev, err);
    json_decref (ev);
    return dws_json_dump_take (acts, err);
}

char *dws_jobsm_state_json (const struct dws_jobsm *sm)
{
    return dws_json_dump_take (dws_jobsm_state (sm), NULL);
}

int dws_jobsm_validate_jobspec_json (const char *jobspec_json, dws_error_t *err)
{
    json_t *jobspec = dws_json_load ("jobspec", jobspec_json, 0, err);
    int rc;

    if (!jobspec)
        return -1;
    rc = dws_jobsm_validate_jobspec (jobspec, err);
    json_decref (jobspec);
    return rc;
}

int dws_jobsm_check_jobspec_json (const char *jobspec_json, dws_error_t *err)
{
    json_t *jobspec = dws_json_load ("jobspec", jobspec_json, 0, err);
    int rc;

    if (!jobspec)
        return -1;
    rc = dws_jobsm_check_jobspec (jobspec, err);
    json_decref (jobspec);
    return rc;
}

/* --- a replayed job's eventlog ------------------------------------------------ */

static bool described (json_t *ctx, const char *what)
{
    const char *d = json_string_value (json_object_get (ctx, "description"));
    return d && !strcmp (d, what);
}

/* Call fn for each event of an RFC 18 eventlog (name, context) until it
 * returns < 0; -1 with a message for a line that is not an event.
 */
static int eventlog_foreach (const char *eventlog,
                             int (*fn) (const char *name, json_t *ctx, void *arg), void *arg,
                             dws_error_t *err)
{
    const char *p = eventlog;
    int line = 0;

    if (!eventlog)
        return dws_errorf (err, "no eventlog");
    while (*p) {
        const char *nl = strchr (p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen (p);
        json_error_t jerr;
        json_t *e;
        const char *name;
        int rc;

        line++;
        if (len == 0) {
            p += nl ? 1 : 0;
            continue;
        }
        if (!(e = json_loadb (p, len, 0, &jerr)) || !json_is_object (e)
            || !(name = json_string_value (json_object_get (e, "name")))) {
            json_decref (e);
            return dws_errorf (err, "eventlog line %d is not an RFC 18 event", line);
        }
        rc = fn (name, json_object_get (e, "context"), arg);
        json_decref (e);
        if (rc < 0)
            return dws_errorf (err, "out of memory");
        p += len + (nl ? 1 : 0);
    }
    return 0;
}

struct flags {
    bool start, finish, prolog, epilog;
};

static int flag_event (const char *name, json_t *ctx, void *arg)
{
    struct flags *f = arg;

    if (!strcmp (name, "start"))
        f->start = true;
    else if (!strcmp (name, "finish"))
        f->finish = true;
    else if (!strcmp (name, "prolog-start") && described (ctx, DWS_JOBWIRE_PROLOG))
        f->prolog = true;
    else if (!strcmp (name, "prolog-finish") && described (ctx, DWS_JOBWIRE_PROLOG))
        f->prolog = false;
    else if (!strcmp (name, "epilog-start") && described (ctx, DWS_JOBWIRE_EPILOG))
        f->epilog = true;
    else if (!strcmp (name, "epilog-finish") && described (ctx, DWS_JOBWIRE_EPILOG))
        f->epilog = false;
    return 0;
}

int dws_jobsm_eventlog_flags (const char *eventlog, bool *start, bool *finish, bool *prolog,
                              bool *epilog, dws_error_t *err)
{
    struct flags f = {false, false, false, false};

    if (eventlog_foreach (eventlog, flag_event, &f, err) < 0)
        return -1;
    *start = f.start;
    *finish = f.finish;
    *prolog = f.prolog;
    *epilog = f.epilog;
    return 0;
}

/* the descriptions of the dependencies held, as a set (object) */
static int dependency_event (const char *name, json_t *ctx, void *arg)
{
    json_t *held = arg;
    const char *d = json_string_value (json_object_get (ctx, "description"));

    if (!d || dws_jobwire_own_dependency (d))
        return 0;
    if (!strcmp (name, "dependency-add"))
        return json_object_set_new (held, d, json_true ());
    if (!strcmp (name, "dependency-remove"))
        (void)json_object_del (held, d);
    return 0;
}

int dws_jobsm_eventlog_other_deps (const char *eventlog, int *count, dws_error_t *err)
{
    json_t *held = json_object ();
    int rc = -1;

    if (!held)
        return dws_errorf (err, "out of memory");
    if (eventlog_foreach (eventlog, dependency_event, held, err) == 0) {
        *count = (int)json_object_size (held);
        rc = 0;
    }
    json_decref (held);
    return rc;
}
