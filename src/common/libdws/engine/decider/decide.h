/* decide.h - the engine's one decider: what a job does next.
 *
 * An input records what happened (a fact on the job) and marks it;
 * advance_due () (advance.h) runs the marked jobs, the one caller of
 * decide (); decide.c applies
 * the phase change the fact is (a state done, the Workflow created or
 * gone), chooses
 * the next step from the job's phase and facts (decide_next, the one
 * function that chooses), applies that step's own phase change (a state
 * asked for, the Workflow deleted) and returns the step, which the one
 * table of verbs (verbtable.c) carries out.  No other file
 * changes a job's phase, nor reads a fact that only chooses a transition
 * (t/python/libdws/test_one_decider.py: DECISION_FACTS).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_ENGINE_DECIDE_H
#define DWS_ENGINE_DECIDE_H

#include "engine/rules.h"
#include "engine/state.h"

struct told; /* job.h */

/* The news an input records on a job (job->news, a bit each) before it
 * is advanced: what happened that the job's phase and facts do not say
 * by themselves (a request to answer, a read's outcome, a timer fired).
 * The decider takes them in this order, one per step, until none is
 * left; NEWS_LOOK, which the Workflow's sightings mark on its job (a
 * watch event, the create's answer, its deletion: job->wf_seen), and the
 * passes on many jobs at once (the map, room, the ssd holds confirmed,
 * the limits' counts), comes last, so an input's own news meets its input
 * first.
 * X (NAME, family): the family of the decider that answers it (decide.c's
 * next_<family> (): the requests, failures and timeouts; NEWS_LOOK's is
 * settle (), the job's facts alone).
 */
#define DWS_ENGINE_NEWS(X)                                                                     \
    /* a Workflow is wanted (dws.create, a vanished one, job-info) */                          \
    X (CREATE, request)                                                                        \
    /* the Workflow is in status Error */                                                      \
    X (ERROR, failure)                                                                         \
    /* the job failed (workflow_fail_job; its note in the input) */                            \
    X (FAILED, failure)                                                                        \
    /* the job's epilog began after it ran (dws.post_run, or found in CLEANUP) */              \
    X (POST_RUN, request)                                                                      \
    /* the job's epilog began and it never ran (an exception before its start) */              \
    X (EPILOG_UNRUN, request)                                                                  \
    /* a repeated dws.setup */                                                                 \
    X (SETUP_AGAIN, request)                                                                   \
    /* timer `arg` (enum timer_kind) fired */                                                  \
    X (TIMER, failure)                                                                         \
    /* the job manager lost the resource-update (a repeated dws.create) */                     \
    X (RESEND, request)                                                                        \
    /* a write for its Setup failed, not for a Workflow gone */                                \
    X (WRITE_FAILED, failure)                                                                  \
    /* the create failed */                                                                    \
    X (CREATE_FAILED, failure)                                                                 \
    /* Kubernetes refused the forceReady patch */                                              \
    X (FORCE_REFUSED, failure)                                                                 \
    /* Setup's timeout read the Servers: `arg` hosts would be given up in all (0: no slow      \
     * rabbit, -1: not countable) */                                                           \
    X (SETUP_CULPRITS, failure)                                                                \
    /* PreRun's timeout (or TransientCondition) read the ClientMounts: `arg` as above */       \
    X (MOUNT_CULPRITS, failure)                                                                \
    /* PostRun's timeout read the ClientMounts */                                              \
    X (POSTRUN_CULPRITS, failure)                                                              \
    /* a failed PostRun's ClientMounts were read */                                            \
    X (POSTRUN_FAILED_READ, failure)                                                           \
    /* dws.abort: the job manager ended the epilog itself */                                   \
    X (ABORT, request)                                                                         \
    /* dws.teardown, or a job found ended while away */                                        \
    X (TEARDOWN_REQUEST, request)                                                              \
    /* a dws.create for the job was refused */                                                 \
    X (CREATE_REFUSED, request)                                                                \
    /* a dws.create for a job the engine knows */                                              \
    X (CREATE_AGAIN, request)                                                                  \
    /* dws.setup for a job the engine knows */                                                 \
    X (SETUP_REQUEST, request)                                                                 \
    /* dws.post_run for a job the engine knows */                                              \
    X (POST_RUN_REQUEST, request)                                                              \
    /* the job is not in the job manager's list of active jobs */                              \
    X (INACTIVE, request)                                                                      \
    /* after a restart, the job is in RUN */                                                   \
    X (ORPHAN_RUN, request)                                                                    \
    /* after a restart, the job is in CLEANUP */                                               \
    X (ORPHAN_CLEANUP, request)                                                                \
    /* job-info answered */                                                                    \
    X (JOB_INFO, request)                                                                      \
    /* the job's R was read (a lost dws.setup): hosts known */                                 \
    X (R_READ, request)                                                                        \
    /* the jobspec was read and is good (`arg`: it uses persistent storage) */                 \
    X (JOBSPEC, request)                                                                       \
    /* its Workflow cannot be made again (its job unread, or refused): the exception told */  \
    X (UNMADE, request)                                                                        \
    /* look at the job: a fact it holds changed (the rabbit map came, a write answered:        \
     * job->written, a pre-staging record written, its DataIn's progress read, its            \
     * re-staging moved, its Workflow seen while hosts are given up, its ssd holds confirmed   \
     * by rabbit health or a rabbit of its storage down, it is to be torn down: toredown,      \
     * excepted, the reads before it answered, dws-limit shown held, its user's use counted    \
     * anew, room come for pre-staging); the decider chooses from its phase and facts alone    \
     * (decide.c's settle), again until it chooses nothing */                                  \
    X (LOOK, look)


enum news {
#define NEWS_KIND(name, family) NEWS_##name,
    DWS_ENGINE_NEWS (NEWS_KIND)
#undef NEWS_KIND
    NEWS_COUNT,
};
_Static_assert (NEWS_COUNT <= 64, "job->news has a bit per news");

/* The step kinds, each with its verb, in one list: X (NAME, verb) makes
 * STEP_NAME and its row of verbtable.c's table.  A verb is a function of the
 * file its prefix names, and its name is that prefix and its step's name
 * (t/python/libdws/test_one_decider.py holds both).  Grouped by the file
 * that carries them out.
 */
#define DWS_ENGINE_STEPS(X)                                                                    \
    /* --- request.c --- */                                                                    \
    /* the create is on its way: its answer answers this request */                            \
    X (JOIN_CREATE, request_join_create)                                                       \
    /* a repeated dws.post_run: send the epilog-remove again */                                \
    X (EPILOG_AGAIN, request_epilog_again)                                                     \
    /* the job ended while no service watched: Teardown, no epilog */                          \
    X (END_AWAY, request_end_away)                                                             \
    /* read the job's R (its dws.setup was lost) */                                            \
    X (READ_R, request_read_R)                                                                 \
    /* the job's R, to place its Lustre on the rabbits Fluxion chose */                        \
    X (PLACE_LUSTRE, request_place_lustre)                                                     \
    /* the job's R, for its lost dws.setup */                                                  \
    X (SETUP_FROM_R, request_setup_from_R)                                                     \
    /* the jobspec, to create the Workflow again */                                            \
    X (FROM_JOBSPEC, request_from_jobspec)                                                     \
    /* its epilog began while it waited: release it, forget the job */                         \
    X (END_WAITING, request_end_waiting)                                                       \
    /* its Workflow exists: remove dws-limit (admit.c) */                                      \
    X (LIMIT_REMOVE, request_limit_remove)                                                     \
    /* a repeated dws.create: answer it, send what was lost again */                           \
    X (CREATE_ANSWER, request_create_answer)                                                   \
    /* the hosts from R (dws.setup, or a lost one's R): Setup */                               \
    X (RECORD_HOSTS, request_record_hosts)                                                     \
    /* a repeated dws.setup: answer it, the prolog-remove again */                             \
    X (SETUP_ANSWER, request_setup_answer)                                                     \
    /* the job's epilog began (dws.post_run, or a lost one) */                                 \
    X (BEGIN_EPILOG, request_begin_epilog)                                                     \
    /* its dws.create is still to come: forget the job */                                      \
    X (CREATE_LATER, request_create_later)                                                     \
    /* create its Workflow from its jobspec */                                                 \
    X (CREATE_FROM_JOBSPEC, request_create_from_jobspec)                                       \
    /* --- admit.c --- */                                                                      \
    /* wait, with no Workflow, for its user's use to fall (admit.c) */                         \
    X (WAIT_LIMIT, admit_wait_limit)                                                           \
    /* it still waits: its reason says what its user holds now */                              \
    X (STILL_WAITING, admit_still_waiting)                                                     \
    /* its user's use allows it now: create its Workflow */                                    \
    X (ADMIT_GO, admit_go)                                                                     \
    /* --- workflow.c --- */                                                                   \
    /* send the Workflow's create */                                                           \
    X (SEND_CREATE, workflow_send_create)                                                      \
    /* patch desiredState to `state` (and start its timers) */                                 \
    X (ASK, workflow_ask)                                                                      \
    /* to Teardown: the reads first (`was`: desired before) */                                 \
    X (TEARDOWN_BEGIN, workflow_teardown_begin)                                                \
    /* the reads done: the Teardown patch */                                                   \
    X (TEARDOWN_PATCH, workflow_teardown_patch)                                                \
    /* in Teardown already: mark the epilog on the Workflow */                                 \
    X (MARK_EPILOG, workflow_mark_epilog)                                                      \
    /* Teardown done: release the epilog, delete the Workflow */                               \
    X (DELETE, workflow_delete)                                                                \
    /* given up before its nodes (its epilog not begun): delete the Workflow */                \
    X (DELETE_GIVEN_UP, workflow_delete_given_up)                                              \
    /* fail the job (an Error, a TransientCondition) */                                        \
    X (FAIL, workflow_fail)                                                                    \
    /* its exception, then forget it: it has no Workflow (created for a lost request) */       \
    X (FAIL_FORGET, workflow_fail_forget)                                                      \
    /* failed, its computes released: record it (no exception reaches an inactive job),        \
     * then Teardown */                                                                        \
    X (FAIL_RECORD, workflow_fail_record)                                                      \
    /* failed: raise its exception, then Teardown */                                           \
    X (FAIL_RAISE, workflow_fail_raise)                                                        \
    /* failed, excepted already: log it, then Teardown */                                      \
    X (FAIL_AGAIN, workflow_fail_again)                                                        \
    /* the Workflow is being deleted by us: remove our finalizer */                            \
    X (FINALIZER, workflow_finalizer)                                                          \
    /* --- progress.c --- */                                                                   \
    /* the Workflow seen: its status read (an Error, a TransientCondition), then the job      \
     * looked at (NEWS_LOOK) */                                                                \
    X (WORKFLOW_SEEN, progress_workflow_seen)                                                  \
    /* take up a Workflow of ours in `state` (a restart): its facts read from it, `timers`     \
     * started whole */                                                                        \
    X (ADOPT, progress_adopt)                                                                  \
    /* Setup done: fill the Computes */                                                        \
    X (COMPUTES, progress_computes)                                                            \
    /* PreRun done: end the prolog (no workflow token) */                                      \
    X (PROLOG, progress_prolog)                                                                \
    /* PreRun done: read the workflow token Secret first */                                    \
    X (READ_TOKEN, progress_read_token)                                                        \
    /* the token read: end the prolog with it */                                               \
    X (PROLOG_REMOVE, progress_prolog_remove)                                                  \
    /* read the breakdowns the Workflow lists and we lack */                                   \
    X (BREAKDOWNS, progress_breakdowns)                                                        \
    /* send the resource-update (Proposal's outcome) */                                        \
    X (SEND_RESOURCES, progress_send_resources)                                                \
    /* send it with why the job cannot have them: dw_prestage=yes refused */                   \
    X (SEND_REFUSAL, progress_send_refusal)                                                    \
    /* send it again: read the breakdowns anew first */                                        \
    X (RESOURCES_AGAIN, progress_resources_again)                                              \
    /* the Setup waits for the SystemConfiguration (logged) */                                 \
    X (WAIT_MAP, progress_wait_map)                                                            \
    /* the job's R with its graph: where its Lustre ssd went */                                \
    X (READ_SCHED_R, progress_read_sched_R)                                                    \
    /* record the hosts (and ssd reserved) on the Workflow */                                  \
    X (HOSTS_PATCH, progress_hosts_patch)                                                      \
    /* fill the Servers objects (the hosts' answer kept) */                                    \
    X (SERVERS, progress_servers)                                                              \
    /* deleted outside Flux: fail the job, then look */                                        \
    X (FAIL_OUTSIDE, progress_fail_outside)                                                    \
    /* it vanished while the job waited: create it again */                                    \
    X (RECREATE, progress_recreate)                                                            \
    /* it vanished in the epilog: release the epilog, forget */                                \
    X (END_EPILOG, progress_end_epilog)                                                        \
    /* raise on the job, then forget it */                                                     \
    X (RAISE, progress_raise)                                                                  \
    /* deleted outside Flux while in use: raise on the job, forget it */                       \
    X (RAISE_GONE, progress_raise_gone)                                                        \
    /* forget the job (end_epilog: release its epilog first) */                                \
    X (FORGET, progress_forget)                                                                \
    /* pre-staging wanted: read what decides it (prestage.c) */                                \
    X (PRESTAGE_WEIGH, progress_prestage_weigh)                                                \
    /* ask the jobtap plugin to let it go of its chassis */                                    \
    X (PRESTAGE_UNPIN, progress_prestage_unpin)                                                \
    /* --- fault.c --- */                                                                      \
    /* PostRun failed: read who still mounts, then fail */                                     \
    X (POSTRUN_FAILED, fault_postrun_failed)                                                   \
    /* timer `timer` fired: read who is late */                                                \
    X (READ_CULPRITS, fault_read_culprits)                                                     \
    /* teardown_after expired: skip DataOut, then Teardown */                                  \
    X (SKIP_DATAOUT, fault_skip_dataout)                                                       \
    /* DWS reset forceReady: ask for it again */                                               \
    X (FORCE_READY_AGAIN, fault_force_ready_again)                                             \
    /* give the culprits up (within the tolerance): forceReady */                              \
    X (NODE_FAILURE, fault_node_failure)                                                       \
    /* drain the computes still mounted, then fail the job */                                  \
    X (DRAIN_FAIL, fault_drain_fail)                                                           \
    /* read the ClientMounts and Servers (drain, disable) first */                             \
    X (ABORT_READS, fault_abort_reads)                                                         \
    /* dws.abort before the Workflow exists: the epilog is ended */                            \
    X (ABORT_NOTED, fault_abort_noted)                                                         \
    /* --- release.c --- */                                                                    \
    /* PostRun done: hold the ssds, release the computes */                                    \
    X (RELEASE_START, release_start)                                                           \
    /* Fluxion did not confirm the ssd holds: DataOut without */                               \
    X (KEEP_COMPUTES, release_keep_computes)                                                   \
    /* job-info answered with its R: hold the ssds it names */                                \
    X (HOLD, release_hold)                                                                     \
    /* the ssds are held: the epilog is releasing, DataOut follows */                          \
    X (RELEASED, release_released)                                                             \
    /* DataOut, the held ssds on the Workflow */                                               \
    X (DATAOUT_HELD, release_dataout_held)                                                     \
    /* DataOut and the held ssds written: end the epilog, the computes go back */              \
    X (RELEASE_EPILOG, release_epilog)                                                         \
    /* taken up released with its epilog active still (a restart between): end it */          \
    X (RELEASE_EPILOG_AGAIN, release_epilog_again)                                             \
    /* --- prestage.c --- */                                                                   \
    /* not pre-staged: not wanted, or it cannot be (the site's default) */                     \
    X (PRESTAGE_NO, prestage_no)                                                               \
    /* wanted, but it cannot be: the usual way (prestage_not says why) */                      \
    X (PRESTAGE_UNFIT, prestage_unfit)                                                         \
    /* not pre-staged: more nodes than the instance has */                                     \
    X (PRESTAGE_TOO_BIG, prestage_too_big)                                                     \
    /* not pre-staged: the site's bound on what is held ahead */                               \
    X (PRESTAGE_FULL, prestage_full)                                                           \
    /* it asked for it (dw_prestage=yes) and cannot be: refused */                             \
    X (PRESTAGE_REFUSE, prestage_refuse)                                                       \
    /* pre-staged: Setup and DataIn before its nodes */                                        \
    X (PRESTAGE_YES, prestage_yes)                                                             \
    /* pre-staged: record it on the Workflow first */                                          \
    X (PRESTAGE_RECORD, prestage_record)                                                       \
    /* pick the ssd it holds (again, or once some are free) */                                 \
    X (PRESTAGE_PICK, prestage_pick)                                                           \
    /* its hold applied: ask Fluxion whether a job has any of it */                            \
    X (PRESTAGE_VERIFY, prestage_verify)                                                       \
    /* its data is in: let the job be scheduled (dws-prestage goes) */                         \
    X (PRESTAGE_READY, prestage_ready)                                                         \
    /* hold a pre-staged job's ssd down in Fluxion (prestage.c) */                             \
    X (PRESTAGE_HOLD, prestage_hold)                                                           \
    /* its storage's rabbit went down before its nodes came: fail */                           \
    X (PRESTAGE_LOST, prestage_lost)                                                           \
    /* its nodes did not come within rabbit.prestage_node_wait: write ANN_GIVEN_UP first */    \
    X (PRESTAGE_GIVE_UP, prestage_give_up)                                                     \
    /* its nodes came as it was let go, on its chassis: its storage kept */                     \
    X (PRESTAGE_KEEP, prestage_keep)                                                           \
    /* its nodes came as it was let go, elsewhere: torn down, set up again for them */         \
    X (PRESTAGE_REDO, prestage_redo)                                                           \
    /* its given-up Workflow is deleted: create it again, the usual way */                     \
    X (PRESTAGE_AGAIN, prestage_again)                                                         \
    /* --- datain.c --- */                                                                     \
    /* read a pre-staged DataIn's progress (datain.c) */                                       \
    X (DATAIN_READ, datain_read)                                                               \
    /* it moved lately: read it again later */                                                 \
    X (DATAIN_WATCH, datain_watch)                                                             \
    /* it did not move for rabbit.datain_stall_timeout: fail */                                \
    X (DATAIN_STALLED, datain_stalled)

/* The next step: what the caller does. */
enum step_kind {
    STEP_NOTHING,
#define STEP_KIND(name, verb) STEP_##name,
    DWS_ENGINE_STEPS (STEP_KIND)
#undef STEP_KIND
    STEP_TEARDOWN_LATER, /* Teardown once the create has answered (decide records it) */
    STEP_COUNT,
};

struct step {
    enum step_kind kind;
    enum wf_state state;    /* STEP_ASK, STEP_ADOPT */
    enum wf_state was;      /* STEP_TEARDOWN_BEGIN: the state asked for before */
    enum timer_kind timer;  /* STEP_READ_CULPRITS */
    unsigned timers;        /* STEP_ASK, STEP_ADOPT: bit per timer kind that guards
                             * the state */
    enum wf_state done;     /* the state whose completion decide () recorded, or WF_NONE */
    bool end_epilog;        /* STEP_RAISE, STEP_FORGET: release the job's epilog first */
    enum news news;         /* the news it answers, NEWS_COUNT: none was left */
    struct told *said;      /* what the input of that news told beside it (job.h),
                             * set by advance.c for the verb: never NULL there */
    enum rule rule;         /* the rule that chose it (rules.h), RULE_NONE for none */
    enum rule look;         /* a look: the look rule that held (`rule` may be one of
                             * the family it went through), else RULE_NONE */
    enum rule wing;         /* and the pre-staging rule that held under it (look:
                             * RULE_PRESTAGE), else RULE_NONE */
    bool first;             /* it comes before its news' answer: the news stays for
                             * the next step */
};

/* The job's next step, from its phase, the facts recorded on it and the
 * first of its news (the step's `news`: NEWS_COUNT when it has none).
 * Pure: it changes nothing.
 */
struct step decide_next (const struct dws_engine *e, const struct job *job);

/* Take the job's first news: record the phase change it is (the Workflow
 * seen, a state done), decide the next step and apply its phase change.
 * A transition the phase table refuses (logged) gives STEP_NOTHING.
 */
struct step decide (struct dws_engine *e, struct job *job);

/* Has the job news the decider has not taken? */
bool decide_pending (const struct job *job);

/* Whether the job's computes go back once PostRun is done (release.c):
 * the decider's answer to PostRun's completion, asked alone.
 */
bool decide_release_early (const struct dws_engine *e, const struct job *job);

/* What a step is, for the record of why it was taken (why.c): its word
 * ("teardown-begin"; NULL: no step), the state it asks for (WF_NONE:
 * none), whether it decides that the job fails, or makes it wait for
 * something other than DWS ([rabbit.limits], the rabbit map).
 */
const char *decide_step_name (const struct step *st);

/* A list's NAME as the word the record and the log say: lower case, '-'
 * for '_' ("TEARDOWN_BEGIN" -> "teardown-begin"), written into out.
 */
#define DECIDE_WORD_MAX 40
const char *decide_word (const char *name, char out[DECIDE_WORD_MAX]);

/* What else a step decides about the job, beside its Workflow's states:
 * its pre-staging (chosen or not, given up, kept, set up again), or its
 * computes' early release (begun, done, or the computes kept).
 */
enum decide_side {
    DECIDE_SIDE_NONE,
    DECIDE_SIDE_PRESTAGE,
    DECIDE_SIDE_RELEASE,
};
enum decide_side decide_side (const struct step *st);
enum wf_state decide_asks (const struct step *st);
bool decide_fails (const struct step *st);
bool decide_waits (const struct step *st);

/* Does the job wait now for what decide_waits () steps wait for? */
bool decide_waiting (const struct job *job);

/* The decision facts not at rest, as a line into out ("phase=datain
 * news=post-run toredown epilog=active"): what the rule that chose st
 * read, as they stood when it chose (`was`: its phase then, before the
 * step's own phase change).
 */
void decide_facts (const struct job *job, const struct step *st, enum job_phase was, char *out,
                   size_t size);

#endif /* !DWS_ENGINE_DECIDE_H */
