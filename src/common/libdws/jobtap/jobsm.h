/* jobsm.h - the job side of the `dws` jobtap plugin as a pure state machine.
 *
 * The jobtap plugin (dws-jobtap.so, inside the job manager) holds rabbit
 * jobs: a `dws-create` dependency until the dws service has rewritten the
 * jobspec, a `dws-setup` prolog until the file systems are mounted, and a
 * `dws-epilog` epilog until they are torn down.  It talks to the service
 * with dws.* RPCs and serves the service's job-manager.dws.* callbacks.
 *
 * Why a state machine: the decisions (which RPC to send, when to start or
 * finish the prolog and epilog, what to answer the service, which
 * exception to raise) are the part that must be right and the part that
 * the reference got wrong in corners (plugin reload, duplicate callbacks,
 * dropped teardown failures).  Keeping them here, without Flux and without
 * I/O, lets one implementation serve both the C plugin (a thin adapter
 * over flux_jobtap_*) and flux-dws' in-process Python job-manager harness,
 * and lets every path be unit tested.
 *
 * One `struct dws_jobsm` per job (the plugin keeps it in the job's aux).
 * The adapter turns what happens to the job into events and carries out
 * the actions returned, in order.  The machine never reads a clock: a
 * timer is an action, its expiry an event.
 *
 * Where the job is in the plugin's hands is one named phase (unknown,
 * await-depend, inert, depend, sched, prolog, run, epilog, done), owned by
 * jobsm_phase.c, whose table lists each transition; a transition it does
 * not list leaves the phase and logs "job N: event 'E' not expected in
 * phase 'P'" at err.  dws_jobsm_state's "phase" names it.
 *
 * Every event and action is a JSON object.  A call either fails (bad
 * event; NULL and a message, the machine unchanged) or succeeds with the
 * complete list of actions and the machine updated -- never half of it.
 * The machine is updated before the actions are returned, so an event fed
 * while those actions are being carried out (flux_jobtap_raise_exception()
 * runs the plugin's exception callback at once) sees the new state.
 *
 * Events (adapter -> machine), by "type":
 *
 *   create   {}                                           job.create
 *       A job with dw just submitted, before other plugins add their
 *       dependencies (flux-core's dependency-after adds them in NEW, from
 *       job.dependency.*): subscribe, so that their dependency-add and
 *       dependency-remove reach the machine.  Only before depend/reload.
 *   dependency-add    {"name":S}                   job.event.dependency-add
 *   dependency-remove {"name":S, "jobspec":{..}}   job.event.dependency-remove
 *       Accepted before depend too.  Ours (dws-create) does nothing (the
 *       resource-update handles it); another's is counted.  The removal
 *       that leaves none of them sends a dws.create kept back at depend
 *       (below), built from its jobspec (required then).
 *   depend   {"id":J, "userid":U, "jobspec":{..}}         job.state.depend
 *       No attributes.system.dw: no actions, and the machine stays inert
 *       (no actions for any later event; service requests are refused).
 *       A dw that is not a string or a list of strings (job.validate
 *       refuses it: only a job from before the plugin was loaded) raises
 *       `dws-create` "DWS workflow interactions failed: <why>" and the job
 *       gets nothing else.  Else: dependency-add dws-create, subscribe,
 *       rpc dws.create {jobid, userid, dw_directives (dw as given),
 *       resources, failure_tolerance (as given: the service refuses a
 *       value that is not an integer >= 0, "dw_failure_tolerance must be
 *       a positive integer", which the create's response raises as
 *       `dws-create`, and the job's epilog then runs as after any failed
 *       create; default 0)} -- the reference's order.  But when dw uses
 *       persistent storage another job makes (dws_dw_uses_persistent:
 *       persistentdw, destroy_persistent, or a preset name) and the job
 *       holds other dependencies, dws.create is kept back, with an info
 *       log, until the last of them is removed: its Workflow must not
 *       reach Proposal before the creator's ("PersistentStorageInstance
 *       ... not found").  dws-create still holds the job until its
 *       resource-update.
 *   run      {}                                           job.state.run
 *       prolog-start dws-setup, subscribe (again: plugin reload), lookup-R.
 *   R        {"R":{..}} or {"error":S}                    R lookup result
 *       rpc dws.setup {jobid, R}; an error raises `dws-setup` and finishes
 *       the prolog (status 1).  Ignored once the prolog is over (the job
 *       was cancelled meanwhile): no Setup for a dying job.
 *   start    {}                   job.event.start, or at reload if posted
 *
 *   When the epilog starts.  The epilog sends dws.post_run, which unmounts
 *   the job's file systems, so it must not start while any of the job's
 *   processes may still run.  In flux-core (0.88, job-manager start.c and
 *   job-exec) a fatal exception moves a running job to CLEANUP at once,
 *   before job-exec has killed its tasks; `finish` is posted when every
 *   job shell has exited, then `release` with final=true when the exec
 *   system no longer uses any resource ("finish" must precede the final
 *   release; "start" and "finish" may be skipped on an exception, the
 *   final release never is).  The job manager posts `free` only after the
 *   final release and with no epilog pending.  Hence:
 *
 *   finish   {}                                           job.event.finish
 *       Start the epilog with run_started true, once (several
 *       subscriptions may deliver finish twice).  The normal trigger for
 *       every job that started, however it ends (normal exit, cancel,
 *       exception, time limit, node failure).
 *   release  {"final":B}                                  job.event.release
 *       final true and the epilog not started: start it (run_started as
 *       start was seen).  An exec service may end a started job with a
 *       final release and no finish; with final true no process is left.
 *       final false: nothing.
 *   cleanup  {}                                           job.state.cleanup
 *       If no start event was seen, start the epilog with run_started
 *       false (the job never ran: the reference's case).  A job that
 *       started waits for finish (or the final release): a cancel or an
 *       exception brings it to CLEANUP while its tasks are still being
 *       killed, and unmounting then would race them.
 *   free     {}                                           job.event.free
 *       The epilog not started yet: start it now (run_started as start was
 *       seen) and log a warning.  Only reached when the exec service gave
 *       the job up with neither finish nor final release (it was unloaded
 *       or died: the job manager then clears its start request); the
 *       resources are already on their way to housekeeping, but a late
 *       epilog beats a Workflow that is never torn down.
 *   exception {"exc_type":S, "severity":N, "note":S?}     job.event.exception
 *       Only severity 0.  A dws.create kept back is dropped (the job ends
 *       with no Workflow, so no epilog).  Prolog active: prolog-finish dws-setup status 1.
 *       Else epilog active: `dws-epilog-timeout` sends dws.abort and
 *       finishes the epilog (status 1); any other type sends dws.teardown
 *       and the epilog stays until epilog-remove.  Else nothing: the
 *       epilog starts later (above).
 *   timer    {"key":"epilog-timeout", "state":S}          timer expiry
 *       Still in CLEANUP with the epilog active: raise `dws-epilog-timeout`
 *       "DWS epilog timed out" (whose exception event then aborts).
 *   rpc-response {"tag":T, "ok":B, "errnum":E, "errstr":S, "payload":P}
 *       The response to an rpc action of tag T (create, setup, post_run,
 *       teardown, abort).  Failed means !ok, or a payload
 *       {"success":false, "errstr":S}.  create: raise `dws-create` (ENOSYS:
 *       the "could not be sent. Admins: ..." text).  setup or post_run
 *       answered ENOSYS (no service: a reload's gap) while the job has a
 *       Workflow: log a warning and wait (the service, once loaded, finds
 *       the job and carries it on); with no Workflow (its create failed)
 *       fail as below with the "could not be sent" text.  setup: raise
 *       `dws-setup` while the prolog is active (its exception event
 *       finishes the prolog), else log.  post_run: raise `dws-epilog` and
 *       finish the epilog (status 1).  teardown, abort: log the failure at
 *       "err" (the reference dropped these responses).  A response to no
 *       outstanding RPC of that tag is a bad event.
 *   resource-update {"payload":P, "state":S, "jobspec":{..current..}}
 *   prolog-remove   {"payload":P}
 *   epilog-remove   {"payload":P, "state":S}
 *       A job-manager.dws.<method> request; the adapter registered the
 *       services, checked the sender is the instance owner, and found the
 *       job by payload id (a request whose id is missing or names no job
 *       it answers itself: there is no machine to ask).  The payload is
 *       checked (id integer; resource-update: errmsg string, or resources
 *       a list and exclude an object or null; prolog-remove: variables an
 *       object of strings).  Malformed: respond-error EPROTO
 *       "received malformed dws.<method> RPC: <what>", raise `dws`, log
 *       the version-skew hint.  The payload id must be this job's (else a
 *       bad event: the adapter routed it wrongly).
 *         resource-update: errmsg -> raise `dws` "DWS workflow interactions
 *           failed: <errmsg>", respond.  After the dependency is gone (a
 *           repeat) -> respond only.  State not DEPEND -> respond-error
 *           EINVAL.  Else jobspec-update {resources, constraints} (see
 *           below), dependency-remove dws-create, respond.
 *         prolog-remove: prolog active -> post-event dws_environment
 *           {variables}, prolog-finish dws-setup status 0, respond; else
 *           (a repeat, or a prolog lost in a plugin reload) respond only.
 *         epilog-remove: state not CLEANUP -> respond-error EINVAL; epilog
 *           active -> epilog-finish dws-epilog status 0, timer-stop (if a
 *           timer runs), respond; else respond only.
 *         prestage-remove: kept for an older flux-dws service (today's
 *           removes dws-prestage with the dependency method below): as
 *           that method's removal of dws-prestage.
 *         prestage-unpin {id, resources, constraint} (flux-dws' own, with
 *           "jobspec": J): a pre-staged job's node-local storage given up.
 *           State RUN or CLEANUP -> respond-error EBUSY (it has its nodes);
 *           not DEPEND, PRIORITY or SCHED -> respond-error EINVAL.  Else
 *           jobspec-update {resources, constraints without the pin} (the
 *           pin: {} where it was all of them, dropped from an "and"),
 *           respond; the pin not found and resources equal (a repeat) ->
 *           respond only.  Malformed (resources not a list, constraint not
 *           an object): as above.
 *       A request for an inert job (no dw) gets respond-error EINVAL.
 *   dependency      {"payload":P, "state":S}
 *       job-manager.dws.dependency (DWS_JOBWIRE_DEPENDENCY_METHOD), flux-dws'
 *       own method, registered apart from the three above (not in
 *       dws_jobsm_service_*): P {id, name, add} adds (add true) or removes
 *       one of flux-dws' own dependencies (DWS_JOBWIRE_SERVICE_DEPENDENCIES:
 *       dws-limit, which the service puts on a job over its user's
 *       [rabbit.limits], and dws-prestage) -> dependency-add|dependency-remove
 *       NAME, respond.  A name not in that list: respond-error EINVAL.
 *       State not NEW or DEPEND: a removal is answered (nothing to remove),
 *       an addition gets respond-error EINVAL.  dws-prestage: a removal
 *       in DEPEND -> dependency-remove dws-prestage, respond; in any other
 *       state respond only; an addition gets respond-error EINVAL
 *       "dws.dependency: dws-prestage is added by the plugin with the
 *       resource-update ('prestage': true), not by this method" (the
 *       plugin adds it before it removes dws-create, so the job never
 *       stands without one of ours).  Malformed (name not a string, add not a
 *       boolean): as above.  These dependencies are not another plugin's:
 *       dependency-add/-remove of them and other_dependencies at reload do
 *       not count them (a persistent job's dws.create is not kept back by
 *       them).
 *   reload {"id":J, "userid":U, "jobspec":{..}, "state":S,
 *           "start_posted":B, "finish_posted":B, "prolog_active":B,
 *           "epilog_active":B, "other_dependencies":N}
 *       The plugin was (re)loaded with the job already active (the flags
 *       default to false, other_dependencies, the dependencies other than
 *       dws-create the job holds in DEPEND, to 0).  A job in DEPEND whose
 *       dws.create the old plugin kept back (as at depend) keeps waiting:
 *       subscribe only, and the removal of the last other dependency
 *       sends it.  Rebuilds the machine from what the job
 *       manager knows; actions: subscribe, plus timer-start when the
 *       epilog is active (the old timer died with the old plugin).  In
 *       NEW nothing is done and depend is still expected.  In DEPEND the
 *       dws-create dependency is taken as held (subscribe), and a depend
 *       event may follow or not: `flux jobtap load` calls job.state.depend
 *       for every DEPEND job, and depend then holds the dependency again
 *       (the job manager ignores a dependency already held) and repeats
 *       dws.create, to which the service answers with its resource-update
 *       again; a job manager restart calls only job.new (the dependency
 *       is replayed from the eventlog), and the job takes the
 *       resource-update the restarted service sends for the Workflow it
 *       picks up.  A depend after that resource-update does nothing.  In
 *       CLEANUP an inactive epilog of a job that started and has not
 *       finished (start_posted, not finish_posted) is not started yet:
 *       finish, the final release or free starts it, as for a running
 *       job.  Any other inactive epilog in CLEANUP is taken as done (it
 *       cannot be told from one never started) and is not started again.
 *
 * Only create, dependency-add/-remove, depend and reload are accepted
 * first (a bad event otherwise); depend and reload only once (depend may
 * follow a reload in NEW or DEPEND).
 *
 * Actions (machine -> adapter), by "action":
 *   {"action":"dependency-add"|"dependency-remove", "name":"dws-create"}
 *   {"action":"subscribe"}                 flux_jobtap_job_subscribe()
 *   {"action":"rpc", "topic":"dws.<tag>", "tag":T, "payload":P}
 *       Feed the response back as rpc-response with the same tag.
 *   {"action":"lookup-R"}                  read R; feed an R event
 *   {"action":"prolog-start", "name":"dws-setup"}
 *   {"action":"prolog-finish", "name":"dws-setup", "status":0|1}
 *   {"action":"epilog-start", "name":"dws-epilog"}
 *   {"action":"epilog-finish", "name":"dws-epilog", "status":0|1}
 *   {"action":"timer-start", "key":"epilog-timeout", "after":SECONDS}
 *   {"action":"timer-stop", "key":"epilog-timeout"}
 *   {"action":"raise", "type":T, "severity":0, "note":N}
 *   {"action":"jobspec-update", "update":{"resources":R,
 *                                         "attributes.system.constraints":C}}
 *       (constraints key only when there is a constraint)
 *   {"action":"post-event", "name":"dws_environment",
 *    "context":{"variables":V}}
 *   {"action":"post-event", "name":"dws-explanation",
 *    "context":{"type":T, "note":N, "explanation":S}}
 *       right after a raise whose note explain.h knows: the note stays
 *       exactly the reference's, its plain sentence goes here
 *   {"action":"respond", "payload":{}}
 *   {"action":"respond-error", "errnum":E, "errstr":S}
 *   {"action":"log", "level":"err"|"warning"|"info", "message":S}
 *
 * Constraints at resource-update: the job's existing
 * attributes.system.constraints and the service's exclude, as
 * {"and":[existing, exclude]} when both exist, else whichever exists.  If
 * attributes.system.allow_rabbits is true the result is wrapped as
 * {"or":[{"properties":["rabbit"]}, result]}; with no constraint at all
 * every node (rabbits too) already matches, so none is set.
 *
 * Exception notes start with "DWS workflow interactions failed: "
 * (DWS_JOBWIRE_NOTE_PREFIX), as the reference's do (users and tests grep
 * for them).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_JOBSM_H
#define DWS_JOBSM_H

#include <stdbool.h>

#include <jansson.h>

#include "util/error.h"
#include "wire/jobwire.h" /* the names of its actions, dependency, prolog, ... */

/* The job-manager.dws.<name> services the adapter registers (owner only),
 * i = 0 .. count - 1 (NULL past the end): the request events below that
 * come from the dws service.  One list, read by the plugin and the tests.
 */
int dws_jobsm_service_count (void);
const char *dws_jobsm_service_name (int i);

struct dws_jobsm;

/* A machine for one job.  config is the plugin's jobtap conf: NULL, JSON
 * null or an object; "epilog-timeout" (a number of seconds, <= 0 or
 * absent: no timeout) is read, other keys are ignored.  NULL with a
 * message on a bad config.
 */
struct dws_jobsm *dws_jobsm_create (json_t *config, dws_error_t *err);
void dws_jobsm_destroy (struct dws_jobsm *sm);

/* Feed one event; the actions to carry out, in order, as a JSON array
 * (new reference; may be empty).  NULL with a message naming the problem
 * for a bad event (not an object, unknown type, missing or mistyped
 * field, event out of order), the machine left unchanged.
 */
json_t *dws_jobsm_event (struct dws_jobsm *sm, json_t *event, dws_error_t *err);

/* The machine's state as an object, for debugging and tests (new
 * reference, NULL if out of memory).  Its keys are not an interface.
 */
json_t *dws_jobsm_state (const struct dws_jobsm *sm);

/* The check of the plugin's job.validate: only what no dws.create can be
 * built without.  When attributes.system.dw is present it must be a
 * string or a list of strings ("Malformed #DW directives: dw must be a
 * string or a list of strings").  A jobspec without dw passes whatever it
 * holds: the plugin must not reject jobs that are none of its business.
 * 0, or -1 with the message.
 */
int dws_jobsm_validate_jobspec (json_t *jobspec, dws_error_t *err);

/* dws_jobsm_validate_jobspec, and when dw is present
 * attributes.system.dw_failure_tolerance, if present, an integer >= 0
 * ("dw_failure_tolerance must be a positive integer", the reference's
 * text).  What the optional `rabbit` job-ingest validator plugin refuses
 * at submission.  The plugin itself does not: it sends the tolerance with
 * dws.create and the service refuses it (the reference's order).  0, or
 * -1 with the message.
 */
int dws_jobsm_check_jobspec (json_t *jobspec, dws_error_t *err);

/* A job-manager.dws.<method> request that reaches no job's machine: the
 * payload is not an object or has no integer id, the id names no active
 * job (active false), or the job has no dw attribute (has_dw false; the
 * plugin keeps machines for rabbit jobs only).  The actions that answer
 * it, as a machine's would be: respond-error EPROTO "received malformed
 * dws.<method> RPC: <what>" and a log line with the version-skew hint,
 * ENOENT "dws.<method>: job <id> is not active", or EINVAL
 * "dws.<method>: job <id> has no #DW directives" (the text a machine gives
 * an inert job).  Any payload is taken (NULL: none could be decoded).
 */
json_t *dws_jobsm_unrouted (const char *method, json_t *payload, bool active, bool has_dw,
                            dws_error_t *err);

/* What a reload event needs, from a job's eventlog (RFC 18: one JSON
 * event per line), for a job the job manager replayed from the KVS at a
 * restart: flux-core then knows the job's events but
 * flux_jobtap_job_event_posted() says none was posted, so the plugin
 * reads the eventlog itself.  start, finish: those events; prolog: a
 * prolog-start dws-setup not followed by its prolog-finish; epilog: the
 * same for dws-epilog (another plugin's prolog or epilog is not taken for
 * ours).  0, or -1 with a message (and the flags untouched) when a line
 * is not an event.
 */
int dws_jobsm_eventlog_flags (const char *eventlog, bool *start, bool *finish, bool *prolog,
                              bool *epilog, dws_error_t *err);

/* The number of dependencies other than dws-create a job holds, from its
 * eventlog: the descriptions of its dependency-add events not followed by
 * a dependency-remove of the same description (the reload event's
 * other_dependencies, for a job in DEPEND).  0, or -1 with a message when
 * a line is not an event.
 */
int dws_jobsm_eventlog_other_deps (const char *eventlog, int *count, dws_error_t *err);

/* cffi entry points: JSON text in, malloc'd JSON text out (dws_free). */
struct dws_jobsm *dws_jobsm_create_json (const char *config_json, dws_error_t *err);
char *dws_jobsm_event_json (struct dws_jobsm *sm, const char *event_json, dws_error_t *err);
char *dws_jobsm_state_json (const struct dws_jobsm *sm);
int dws_jobsm_validate_jobspec_json (const char *jobspec_json, dws_error_t *err);
char *dws_jobsm_unrouted_json (const char *method, const char *payload_json, int active,
                               int has_dw, dws_error_t *err);
int dws_jobsm_check_jobspec_json (const char *jobspec_json, dws_error_t *err);

#endif /* !DWS_JOBSM_H */
