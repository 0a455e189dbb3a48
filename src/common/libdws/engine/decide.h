/* decide.h - the engine's one decider: what a job does next.
 *
 * An input records what happened (a fact on the job) and calls
 * advance_job () (advance.h), the one caller of decide (); decide.c applies
 * the phase change the fact is (a state done, the Workflow seen), chooses
 * the next step from the job's phase and facts (decide_next, the one
 * function that chooses), applies that step's own phase change (a state
 * asked for, the Workflow deleted) and returns the step, which the one
 * table of verbs (verbs.c) carries out.  No other file
 * changes a job's phase, nor reads a fact that only chooses a transition
 * (t/python/libdws/test_one_decider.py: DECISION_FACTS).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_ENGINE_DECIDE_H
#define DWS_ENGINE_DECIDE_H

#include "state.h"

/* The news an input records on a job (job->news, a bit each) before it
 * is advanced: what happened that the job's phase and facts do not say
 * by themselves (a request to answer, a read's outcome, a timer fired).
 * The decider takes them in this order, one per step, until none is
 * left; those a pass marks on many jobs at once (NEWS_HOLDS_APPLIED,
 * NEWS_ROOM) come last, so an input's own news meets its input first.
 */
enum news {
    NEWS_CREATE,         /* a Workflow is wanted (dws.create, a vanished one, job-info) */
    NEWS_CREATED,        /* the create answered: the Workflow exists */
    NEWS_WORKFLOW,       /* the Workflow was seen (a watch event, the create's answer) */
    NEWS_ERROR,          /* the Workflow is in status Error */
    NEWS_FAILED,         /* the job failed (workflow_fail_job; its note in the input) */
    NEWS_TEARDOWN,       /* Teardown is wanted (dws.teardown, DataOut skipped, ...) */
    NEWS_TEARDOWN_READ,  /* a read before Teardown answered */
    NEWS_ABORT_READ,     /* one of dws.abort's reads answered */
    NEWS_POST_RUN,       /* the job's epilog began after it ran (dws.post_run, or found
                          * in CLEANUP) */
    NEWS_EPILOG_UNRUN,   /* the job's epilog began and it never ran (an exception
                          * before its start) */
    NEWS_SERVERS,        /* a Servers fill answered, or all were sent */
    NEWS_COMPUTES,       /* the Computes fill answered */
    NEWS_TOKEN,          /* the workflow token Secret was read */
    NEWS_SETUP_AGAIN,    /* a repeated dws.setup */
    NEWS_RELEASED,       /* the ssds are held (or the computes kept): DataOut */
    NEWS_TIMER,          /* timer `arg` (enum timer_kind) fired */
    NEWS_BREAKDOWN,      /* a DirectiveBreakdown read answered (recorded) */
    NEWS_PROPOSAL_READY, /* Proposal done and every breakdown read */
    NEWS_REFUSED,        /* the job cannot have its resources (excepted recorded) */
    NEWS_RESEND,         /* the job manager lost the resource-update (a repeated dws.create) */
    NEWS_SETUP,          /* dws.setup arrived, or what its start waited for came */
    NEWS_HOSTS,          /* the hosts' annotation patch answered */
    NEWS_WRITE_FAILED,   /* a write for its Setup failed, not for a Workflow gone */
    NEWS_SEEN,           /* a watch event of the job's Workflow (recorded on it) */
    NEWS_GONE,           /* the Workflow is gone (DELETED, or missing from the list) */
    NEWS_CREATE_FAILED,  /* the create failed */
    NEWS_FORCE_CHECK,    /* the Workflow seen while hosts are given up */
    NEWS_FORCE_REFUSED,  /* Kubernetes refused the forceReady patch */
    NEWS_SETUP_CULPRITS, /* Setup's timeout read the Servers: `arg` hosts would be
                               * given up in all (0: no slow rabbit, -1: not countable) */
    NEWS_MOUNT_CULPRITS, /* PreRun's timeout (or TransientCondition) read the
                               * ClientMounts: `arg` as above */
    NEWS_POSTRUN_CULPRITS, /* PostRun's timeout read the ClientMounts */
    NEWS_POSTRUN_FAILED_READ, /* a failed PostRun's ClientMounts were read */
    NEWS_ABORT,          /* dws.abort: the job manager ended the epilog itself */
    NEWS_TEARDOWN_REQUEST, /* dws.teardown, or a job found ended while away */
    NEWS_CREATE_REFUSED, /* a dws.create for the job was refused */
    NEWS_CREATE_AGAIN,   /* a dws.create for a job the engine knows */
    NEWS_SETUP_REQUEST,  /* dws.setup for a job the engine knows */
    NEWS_POST_RUN_REQUEST, /* dws.post_run for a job the engine knows */
    NEWS_INACTIVE,       /* the job is not in the job manager's list of active jobs */
    NEWS_ORPHAN_RUN,     /* after a restart, the job is in RUN */
    NEWS_ORPHAN_CLEANUP, /* after a restart, the job is in CLEANUP */
    NEWS_JOB_INFO,       /* job-info answered */
    NEWS_R_READ,         /* the job's R was read (a lost dws.setup): hosts known */
    NEWS_JOBSPEC,        /* the jobspec was read and is good (`arg`: it uses
                               * persistent storage) */
    NEWS_HOLD_R,         /* the job's R was read to hold its ssds */
    NEWS_MAP,            /* the SystemConfiguration came: rabbits can be placed */
    NEWS_LIMIT_FOUND,    /* it may hold dws-limit still: the job manager's list after a
                               * restart shows it (recorded: limit_dep), or its plugin was
                               * reloaded (a repeated dws.create) */
    NEWS_PRESTAGE_RECORDED, /* ANN_PRESTAGE was written (the choice, or the ssd picked) */
    NEWS_PRESTAGE_FOUND, /* Fluxion said which held ssd a job has (the picked
                               * ones are verified, or to be picked again) */
    NEWS_HOLDS_APPLIED,  /* Fluxion holds every ssd of the job down */
    NEWS_ROOM,           /* a Storage or the graph changed, or its user's use was
                          * counted again (admit.c): there may be room now */
    NEWS_DATAIN_READ,    /* its DataIn's NnfDataMovements were read (job->datain) */
    NEWS_RABBIT_LOST,    /* a rabbit its node-local storage waits on went down */
    NEWS_GIVEN_UP,       /* the ANN_GIVEN_UP patch answered (job->restage says how:
                          * UNPINNING written, NONE not) */
    NEWS_UNPINNED,       /* the jobtap plugin answered prestage-unpin (job->restage
                          * says how) */
    NEWS_COUNT,
};
_Static_assert (NEWS_COUNT <= 64, "job->news has a bit per news");

/* The next step: what the caller does. */
enum step_kind {
    STEP_NOTHING,
    STEP_CREATE,         /* send the Workflow's create */
    STEP_LOOK,           /* look at the Workflow last seen (NEWS_WORKFLOW) */
    STEP_ADOPT,          /* take up a Workflow of ours in `state` (a restart):
                          * its facts read from it, `timers` started whole */
    STEP_PROPOSAL,       /* Proposal done: the resources for the job manager */
    STEP_ASK,            /* patch desiredState to `state` (and start its timers) */
    STEP_COMPUTES,       /* Setup done: fill the Computes */
    STEP_PROLOG,         /* PreRun done: end the prolog (no workflow token) */
    STEP_READ_TOKEN,     /* PreRun done: read the workflow token Secret first */
    STEP_PROLOG_REMOVE,  /* the token read: end the prolog with it */
    STEP_RELEASE,        /* PostRun done: hold the ssds, release the computes */
    STEP_TEARDOWN,       /* to Teardown: the reads first (`was`: desired before) */
    STEP_TEARDOWN_PATCH, /* the reads done: the Teardown patch */
    STEP_MARK_EPILOG,    /* in Teardown already: mark the epilog on the Workflow */
    STEP_DELETE,         /* Teardown done: release the epilog, delete the Workflow */
    STEP_FAIL,           /* fail the job (an Error, a TransientCondition) */
    STEP_FAIL_RECORD,    /* failed, its computes released: record it (no exception
                          * reaches an inactive job), then Teardown */
    STEP_FAIL_RAISE,     /* failed: raise its exception, then Teardown */
    STEP_FAIL_AGAIN,     /* failed, excepted already: log it, then Teardown */
    STEP_POSTRUN_FAILED, /* PostRun failed: read who still mounts, then fail */
    STEP_READ_CULPRITS,  /* timer `timer` fired: read who is late */
    STEP_SKIP_DATAOUT,   /* teardown_after expired: skip DataOut, then Teardown */
    STEP_KEEP_COMPUTES,  /* Fluxion did not confirm the ssd holds: DataOut without */
    STEP_TEARDOWN_LATER, /* Teardown once the create has answered (decide records it) */
    STEP_BREAKDOWNS,     /* read the breakdowns the Workflow lists and we lack */
    STEP_RESOURCES,      /* send the resource-update (Proposal's outcome) */
    STEP_RESOURCES_AGAIN, /* send it again: read the breakdowns anew first */
    STEP_WAIT_MAP,       /* the Setup waits for the SystemConfiguration (logged) */
    STEP_READ_SCHED_R,   /* the job's R with its graph: where its Lustre ssd went */
    STEP_HOSTS_PATCH,    /* record the hosts (and ssd reserved) on the Workflow */
    STEP_SERVERS,        /* fill the Servers objects (the hosts' answer kept) */
    STEP_RECORD,         /* keep the answer's Workflow; nothing follows */
    STEP_FINALIZER,      /* the Workflow is being deleted by us: remove our finalizer */
    STEP_FAIL_OUTSIDE,   /* deleted outside Flux: fail the job, then look */
    STEP_RECREATE,       /* it vanished while the job waited: create it again */
    STEP_END_EPILOG,     /* it vanished in the epilog: release the epilog, forget */
    STEP_RAISE,          /* raise on the job, then forget it */
    STEP_FORGET,         /* forget the job (end_epilog: release its epilog first) */
    STEP_FORCE_READY,    /* DWS reset forceReady: ask for it again */
    STEP_NODE_FAILURE,   /* give the culprits up (within the tolerance): forceReady */
    STEP_TIMEOUT,        /* fail the job: "dws-timeout" (over the tolerance) */
    STEP_DRAIN_FAIL,     /* drain the computes still mounted, then fail the job */
    STEP_ABORT_READS,    /* read the ClientMounts and Servers (drain, disable) first */
    STEP_JOIN_CREATE,    /* the create is on its way: its answer answers this request */
    STEP_EPILOG_AGAIN,   /* a repeated dws.post_run: send the epilog-remove again */
    STEP_END_AWAY,       /* the job ended while no service watched: Teardown, no epilog */
    STEP_READ_R,         /* read the job's R (its dws.setup was lost) */
    STEP_HOLD,           /* hold the job's ssds, from its R (release.c) */
    STEP_PLACE_LUSTRE,   /* the job's R, to place its Lustre on the rabbits Fluxion chose */
    STEP_SETUP_FROM_R,   /* the job's R, for its lost dws.setup */
    STEP_FROM_JOBSPEC,   /* the jobspec, to create the Workflow again */
    STEP_RELEASED,       /* the ssds are held: end the epilog, DataOut */
    STEP_WAIT_LIMIT,     /* wait, with no Workflow, for its user's use to fall (admit.c) */
    STEP_END_WAITING,    /* its epilog began while it waited: release it, forget the job */
    STEP_LIMIT_REMOVE,   /* its Workflow exists: remove dws-limit (admit.c) */
    STEP_LIMIT_WHY,      /* it still waits: its reason says what its user holds now */
    STEP_ADMIT,          /* its user's use allows it now: create its Workflow */
    STEP_PRESTAGE_WEIGH, /* pre-staging wanted: read what decides it (prestage.c) */
    STEP_PRESTAGE_NO,    /* not pre-staged: not wanted, or it cannot be (the site's
                          * default) */
    STEP_PRESTAGE_TOO_BIG, /* not pre-staged: more nodes than the instance has */
    STEP_PRESTAGE_FULL,  /* not pre-staged: the site's bound on what is held ahead */
    STEP_PRESTAGE_REFUSE, /* it asked for it (dw_prestage=yes) and cannot be: refused */
    STEP_PRESTAGE_YES,   /* pre-staged: Setup and DataIn before its nodes */
    STEP_PRESTAGE_RECORD, /* pre-staged: record it on the Workflow first */
    STEP_PRESTAGE_PICK,  /* pick the ssd it holds (again, or once some are free) */
    STEP_PRESTAGE_VERIFY, /* its hold applied: ask Fluxion whether a job has any of it */
    STEP_PRESTAGED,      /* its data is in: let the job be scheduled (dws-prestage goes) */
    STEP_PRESTAGE_HOLD,  /* hold a pre-staged job's ssd down in Fluxion (prestage.c) */
    STEP_HOLD_ANSWER,    /* job-info answered with the R of the ssds to hold */
    STEP_CREATE_ANSWER,  /* a repeated dws.create: answer it, send what was lost again */
    STEP_RECORD_HOSTS,   /* the hosts from R (dws.setup, or a lost one's R): Setup */
    STEP_SETUP_ANSWER,   /* a repeated dws.setup: answer it, the prolog-remove again */
    STEP_BEGIN_EPILOG,   /* the job's epilog began (dws.post_run, or a lost one) */
    STEP_ABORT_NOTED,    /* dws.abort before the Workflow exists: the epilog is ended */
    STEP_CREATE_LATER,   /* its dws.create is still to come: forget the job */
    STEP_CREATE_FROM_JOBSPEC, /* create its Workflow from its jobspec */
    STEP_DATAIN_READ,    /* read a pre-staged DataIn's progress (datain.c) */
    STEP_DATAIN_WATCH,   /* it moved lately: read it again later */
    STEP_DATAIN_STALLED, /* it did not move for rabbit.datain_stall_timeout: fail */
    STEP_PRESTAGE_LOST,  /* its storage's rabbit went down before its nodes came: fail */
    STEP_PRESTAGE_GIVE_UP, /* its nodes did not come within rabbit.prestage_node_wait:
                            * write ANN_GIVEN_UP first */
    STEP_PRESTAGE_UNPIN, /* ask the jobtap plugin to let it go of its chassis */
    STEP_RESTAGE,        /* its given-up Workflow is deleted: create it again, the
                          * usual way */
    STEP_COUNT,
};

struct step {
    enum step_kind kind;
    enum wf_state state;    /* STEP_ASK, STEP_ADOPT */
    enum wf_state was;      /* STEP_TEARDOWN: the state asked for before */
    enum timer_kind timer;  /* STEP_READ_CULPRITS */
    unsigned timers;        /* STEP_ASK, STEP_ADOPT: bit per timer kind that guards
                             * the state */
    enum wf_state done;     /* the state whose completion decide () recorded, or WF_NONE */
    bool end_epilog;        /* STEP_RAISE, STEP_FORGET: release the job's epilog first */
    enum news news;         /* the news it answers, NEWS_COUNT: none was left */
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

#endif /* !DWS_ENGINE_DECIDE_H */
