/* state.h - the dws engine's state: types only, no functions.
 *
 * The engine is built in one-way layers; a file includes only the headers
 * of the layers below it (t/python/libdws/test_engine_layers.py checks).
 * The files stand in rooms by role, each room a band of the layers, so a
 * room includes only the rooms below it (from another room a header is
 * named by its path, "engine/shapes/act.h"):
 *
 *   engine.c    configuration, create/destroy, event dispatch    (top)
 *   verbtable.c the one table: each step's verb, in the file that owns it
 *   request.c   the dws.* requests, orphan recovery, job-info
 *   views/      what is answered: persistent.c (dws.persistent-*),
 *               jobview.c (dws.jobs, dws.job: a job as its owner sees it),
 *               status.c (dws.status), rabbitdrain.c (dws.drain,
 *               dws.undrain), rabbitdf.c (dws.rabbits {df})
 *   verbs/      what a step does, by concern: progress.c (Workflow watch
 *               events, each state's completion), fault.c (timers,
 *               TransientCondition, tolerance, abort), release.c (computes
 *               back after PostRun), prestage.c (storage set up and filled
 *               before the nodes), admit.c ([rabbit.limits] on the job
 *               table), workflow.c (create, patch state, fail, teardown,
 *               finalizer), datain.c (a pre-staged DataIn and its stall)
 *   advance.c   an input's one way to move a job: decide, then the verb
 *               of the step from the one table (verbtable.c, set at create)
 *   job.c       the job table
 *   rabbits.c   routing to rabbit health (../health/)
 *   decider/    the one decider and its tables: why.c (what moved a job),
 *               decide.c (a job's next step from its phase and facts, and
 *               every change of its phase), phase.c (each job's phase: one
 *               table), sidestate.c (the machines beside it: a table each)
 *   shapes/     what goes out and comes back: act.c (action builders),
 *               pending.c (the requests that wait), psi.c (the
 *               PersistentStorageInstances known), wfview.c (a Workflow
 *               read once), wfstate.c (the Workflow states' names),
 *               token.c (every token and timer key), hosts.c (host lists),
 *               answer.c (reading a Kubernetes answer)
 *   state.h     these types
 *   rules.h     the decider's rules, each named once, in the order tried
 *   limits.c    [rabbit.limits]: the verdict on a job, who goes next (pure)
 *                                                                (bottom)
 *
 * A function's prefix names its file (act_* in act.c, workflow_* in
 * workflow.c); the public API, dws_engine_* (engine.h), is the exception.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_ENGINE_STATE_H
#define DWS_ENGINE_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "engine.h"
#include "health/health.h"
#include "limits.h"
#include "placement/lustre.h"
#include "rules.h"
#include "wire/wire.h" /* NOTE_PREFIX */

/* Workflow states in order; -1 = none. */
enum wf_state {
    WF_NONE = -1,
    WF_PROPOSAL = 0,
    WF_SETUP,
    WF_DATAIN,
    WF_PRERUN,
    WF_POSTRUN,
    WF_DATAOUT,
    WF_TEARDOWN,
    WF_NSTATES,
};

/* A job's phase (phase.c owns it and every change of it): where the job
 * is in its Workflow's life.  Each names the Workflow's desiredState the
 * engine has asked for (or found), the last state whose completion it
 * acted on, and whether a Workflow exists.  A "-done" phase waits for what
 * the engine does between two states (the Computes, the token, the reads
 * before Teardown).
 */
#define JOB_PHASES(X)                                                                          \
    X (NONE, "none", WF_NONE, WF_NONE, false)                 /* no Workflow */               \
    X (LIMITED, "waiting-limit", WF_NONE, WF_NONE, false)    /* held by [rabbit.limits] */    \
    X (CREATING, "creating", WF_PROPOSAL, WF_NONE, false)     /* create sent */               \
    X (PROPOSAL, "proposal", WF_PROPOSAL, WF_NONE, true)                                      \
    X (PROPOSED, "proposed", WF_PROPOSAL, WF_PROPOSAL, true)  /* waits for dws.setup */       \
    X (SETUP, "setup", WF_SETUP, WF_PROPOSAL, true)                                           \
    X (SETUP_DONE, "setup-done", WF_SETUP, WF_SETUP, true)    /* filling the Computes */      \
    X (DATAIN, "datain", WF_DATAIN, WF_SETUP, true)                                           \
    X (DATAIN_DONE, "datain-done", WF_DATAIN, WF_DATAIN, true)                                \
    X (PRERUN, "prerun", WF_PRERUN, WF_DATAIN, true)                                          \
    X (RUNNING, "running", WF_PRERUN, WF_PRERUN, true)        /* PreRun done */               \
    X (POSTRUN, "postrun", WF_POSTRUN, WF_PRERUN, true)                                       \
    X (POSTRUN_DONE, "postrun-done", WF_POSTRUN, WF_POSTRUN, true)                            \
    X (RELEASING, "releasing", WF_POSTRUN, WF_POSTRUN, true)  /* holding ssds (release.c) */  \
    X (DATAOUT, "dataout", WF_DATAOUT, WF_POSTRUN, true)                                      \
    X (DATAOUT_DONE, "dataout-done", WF_DATAOUT, WF_DATAOUT, true)                            \
    X (TEARDOWN, "teardown", WF_TEARDOWN, WF_DATAOUT, true)                                   \
    X (TORN_DOWN, "torn-down", WF_TEARDOWN, WF_TEARDOWN, true) /* waits for the epilog */     \
    X (DELETING, "deleting", WF_TEARDOWN, WF_TEARDOWN, true)

enum job_phase {
#define JOB_PHASE_ENUM(id, name, desired, handled, exists) PHASE_##id,
    JOB_PHASES (JOB_PHASE_ENUM)
#undef JOB_PHASE_ENUM
        PHASE_COUNT
};

#define ANN_RESOURCES "flux-dws.io/resources"
#define ANN_TOLERANCE "flux-dws.io/failure-tolerance"
#define ANN_HOSTS "flux-dws.io/hosts"
#define ANN_RESERVED "flux-dws.io/lustre-rabbits"
#define ANN_FAILED "flux-dws.io/failed"
#define ANN_EPILOG "flux-dws.io/epilog"
/* the job's computes were released after PostRun (release.c): the ssd
 * vertex paths held down in Fluxion until Teardown, as a JSON array */
#define ANN_HELD "flux-dws.io/held-ssds"
/* dw_release_computes as the job asked it ("after-unmount"), when it did */
#define ANN_RELEASE "flux-dws.io/release-computes"
/* dw_prestage as the job asked it ("yes" or "no"), when it did */
#define ANN_PRESTAGE_ASKED "flux-dws.io/dw-prestage"
/* the job's flux-accounting bank and project, when it has them (its
 * [rabbit.limits] by bank, and its usage record, after a restart) */
#define ANN_BANK "flux-dws.io/bank"
#define ANN_PROJECT "flux-dws.io/project"
/* the job is pre-staged (prestage.c): JSON {"since": t, "gib": G}, for
 * node-local storage "split": {"chassis", "per", "node_gib"}, and once its
 * ssd vertices are picked, "held": [path] and "reserved": {rabbit: GiB}
 * (node-local: "counts": {rabbit: nodes}, "hosts": RFC 29 hostlist) */
#define ANN_PRESTAGE "flux-dws.io/prestage"
/* its pre-staging was given up (prestage.c), why: on a Workflow with
 * ANN_PRESTAGE, its storage is to be torn down and set up again the usual
 * way; on one without, it is that Workflow, created again */
#define ANN_GIVEN_UP "flux-dws.io/prestage-given-up"
#define WORKFLOW_FINALIZER "flux-framework.readthedocs.io/workflow"
#define WORKFLOW_LABEL "dataworkflowservices.github.io/workflow.name"
#define WORKFLOW_NS_LABEL "dataworkflowservices.github.io/workflow.namespace"
/* rabbit_container_log: the last lines of the container's log asked for,
 * and the most kept of them (bytes, as flux-coral2 keeps 50,000 characters)
 */
#define CONTAINER_LOG_LINES 5000
#define CONTAINER_LOG_MAX 50000
#define NOTE_PREFIX DWS_WIRE_NOTE_PREFIX /* wire.h */

/* A Workflow as the engine reads it (wfview.c parses it once, where it
 * enters): strings and JSON borrowed from the object.
 */
struct wfview {
    const char *name;          /* metadata */
    const char *uid;           /* metadata.uid: which Workflow of that name */
    bool deleting;             /* metadata.deletionTimestamp is set */
    int finalizer_index;       /* of WORKFLOW_FINALIZER in metadata.finalizers, or -1 */
    json_t *annotations;       /* metadata.annotations (ANN_*), or NULL */
    const char *wlm_id;        /* spec */
    enum wf_state desired;
    enum wf_state force_ready_state; /* desired when spec.forceReady, else WF_NONE */
    json_int_t user_id;
    json_int_t group_id;
    json_t *directives;        /* spec.dwDirectives (array), or NULL */
    enum wf_state state;       /* status */
    bool ready;
    const char *status;
    const char *message;
    const char *elapsed;       /* status.elapsedTimeLastState */
    double created;            /* metadata.creationTimestamp (unix time; 0: none) */
    double ready_change;       /* status.readyChange, when ready last changed (0: none) */
    const char *driver_error;  /* the first status.drivers[].error of the current
                                * state: nnf-sos' debug text, where its message
                                * (user text) may be empty ("Internal error: ") */
    json_t *breakdowns;        /* status.directiveBreakdowns: [{name, namespace}] */
    const char *computes_name; /* status.computes */
    const char *computes_ns;
    json_t *env;               /* status.env (object), or NULL */
    const char *token_secret;  /* status.workflowToken */
    const char *token_ns;
};

struct config {
    double tc_timeout;
    double setup_timeout;
    double prerun_timeout;
    double postrun_timeout;
    double teardown_after;
    double datain_stall_timeout; /* a pre-staged DataIn without progress (datain.c) */
    bool drain_compute_nodes;
    bool soft_drain;
    bool drain_queues;     /* drains limited to some queues */
    bool fluxion;          /* rabbits are ssd vertices in Fluxion */
    bool release_early;    /* release_computes = "after-unmount" */
    bool restrict_persistent_creation;
    int64_t save_datamovements;
    int64_t min_allocation_size; /* GiB */
    int prestage;          /* rabbit.prestage: 0 never, 1 copy-in, 2 always */
    int64_t prestage_max_jobs; /* jobs holding storage without nodes; 0: no limit */
    int64_t prestage_max_gib;  /* the GiB they hold; 0: no limit */
    double prestage_node_wait; /* a pre-staged job's wait for its chassis' nodes,
                                * its data in; 0: no bound (prestage.c) */
    int64_t owner;
    json_t *presets;   /* object or NULL */
    json_t *maximums;  /* object or NULL */
    json_t *limits;    /* [rabbit.limits] normalised (userlimits.h), or NULL */
    struct dws_lustre_conf lustre; /* [rabbit.lustre] */
    char namespace[64];
};

/* A pre-staged job's ssd hold (prestage.c), in order; a vertex a job got
 * meanwhile, or a find that failed, sends it back to SSD_UNPICKED.
 */
enum prestage_ssd {
    SSD_UNPICKED = 0, /* nothing picked (or given back to be picked again) */
    SSD_PICKED,       /* picked and recorded on the Workflow: the hold applies */
    SSD_FINDING,      /* applied: Fluxion's find of what a job got meanwhile is out */
    SSD_VERIFIED,     /* Fluxion said no job has any of it: its Servers may follow */
};

/* What a job's job-info read is for (its answer: NEWS_JOB_INFO). */
enum info_for {
    INFO_JOBSPEC = 0, /* the jobspec, to create a vanished Workflow again */
    INFO_R,           /* R, for a lost dws.setup */
    INFO_SCHED,       /* R's graph: where a spread Lustre's ssd went */
    INFO_HOLD,        /* R's graph: the ssds to hold before the computes go back */
};

/* The dependencies a job holds that the engine weighs (job->deps). */
enum job_dep {
    JOB_DEP_LIMIT = 1, /* dws-limit: added here, or found held after a restart;
                        * removed once its Workflow exists, and again at a
                        * reloaded plugin's repeated dws.create */
    JOB_DEP_OTHER = 2, /* another plugin's, found in DEPEND after a restart
                        * beside dws-create (see request_orphans_event) */
    JOB_DEP_PRESTAGE = 4, /* dws-prestage: the plugin holds it from a
                           * resource-update that says prestage, until
                           * the job is let go (prestage_ready) */
};

/* Whether the job manager showed dws-limit still held since the engine
 * last removed it (job->lim.shown): a removal may have been lost with
 * a plugin reloaded, or with the service restarted before its create's
 * answer.
 */
enum limit_shown {
    LIMIT_SHOWN_NOT = 0,
    LIMIT_SHOWN_LISTED, /* its list of jobs after a restart (the removal is logged) */
    LIMIT_SHOWN_ASKED,  /* a reloaded plugin's repeated dws.create */
};

/* A job's epilog, in order. */
enum epilog {
    EPILOG_NONE = 0,  /* not begun (no dws.post_run) */
    EPILOG_ACTIVE,    /* begun: Flux waits for its epilog-remove */
    EPILOG_RELEASING, /* to end once DataOut, with the ssds held, is on the
                       * Workflow (release.c): a restart finds either */
    EPILOG_REMOVED,   /* ended: epilog-remove sent, or dws.abort ended it */
};

/* Where the Setup's start is (dws.setup came, or its hosts were known
 * otherwise, until Setup is asked).
 */
enum setup_start {
    SETUP_NONE = 0,  /* nothing waits to start (not come, or Setup asked) */
    SETUP_PENDING,   /* its hosts known: the Setup starts once it may */
    SETUP_WAITS_MAP, /* and it waits for the SystemConfiguration (logged) */
};

/* A job's prolog, as the engine holds it (the jobtap plugin's
 * dws-prolog): held from its start until PreRun is done, then ended. */
enum prolog {
    PROLOG_HELD = 0, /* held (or not begun) */
    PROLOG_ENDED,    /* the prolog-remove sent */
};

/* How far a job's pre-staging went (prestage.c), in order; `prestage`
 * says whether the choice was to pre-stage it.
 */
enum prestage_stage {
    PRESTAGE_UNCHOSEN = 0, /* not weighed, not chosen */
    PRESTAGE_WEIGHED,      /* what decides it is recorded (job->ps.weighed) */
    PRESTAGE_CHOSEN,       /* the decider chose (pre-staged or not) */
    PRESTAGE_RECORDED,     /* pre-staged, ANN_PRESTAGE is on the Workflow */
    PRESTAGE_READY,        /* its data is in: dws-prestage removed */
};

/* How far a pre-staged job's giving up went (prestage.c), in order: its
 * node-local storage waited longer than rabbit.prestage_node_wait for
 * the nodes of its chassis, so the job is let go of them and its storage
 * is set up again the usual way once its nodes come.
 */
enum prestage_restage {
    RESTAGE_NONE = 0, /* not given up */
    RESTAGE_NOTING,   /* ANN_GIVEN_UP is being written on its Workflow */
    RESTAGE_UNPINNING, /* written: the jobtap plugin is asked to let it go of
                        * its chassis (prestage-unpin) */
    RESTAGE_NODES_CAME, /* not let go: its nodes came first (the unpin lost
                         * with a restarted service may have let it go):
                         * which nodes they are decides, once known */
    RESTAGE_UNPINNED, /* let go: its Workflow is torn down, then created again */
    RESTAGE_AGAIN,    /* its Workflow created again: the usual way from here */
};

/* How a pre-staged job's DataIn moves, as its NnfDataMovements last said
 * (datain.c): the sums that grow while data moves, and when they last
 * grew.  since == 0: not watched. */
struct datain_facts {
    double since;          /* DataIn asked for (or taken up after a restart) */
    double moved_at;       /* the sums last grew (since, at first) */
    int64_t dms;           /* its DataIn NnfDataMovements */
    int64_t finished;      /* those Finished */
    int64_t percent;       /* the sum of their progress (%; Finished: 100) */
    int64_t bytes;         /* the sum of their bytes copied, where nnf-dm gives them */
    char last[160];        /* the last dcp line of the least advanced one */
    char unread[120];      /* why the last list failed, "" when it answered */
};

/* Node-local storage placed before the nodes (placement/nodelocal.h):
 * per nodes on each of chassis rabbits, node_gib each; chassis == 0: none
 * (Lustre, persistent storage, or not pre-staged). */
struct prestage_split {
    int64_t chassis;
    int64_t per;
    int64_t node_gib;
};

/* What decides whether a job is pre-staged, as prestage_weigh () read
 * it when pre-staging was wanted (the decider chooses from it).
 */
struct prestage_facts {
    char *unfit;            /* why its storage cannot be placed before its
                             * nodes (prestage.c), or NULL: it can */
    int64_t gib;            /* the ssd GiB its storage would hold; 0: none */
    struct prestage_split split; /* node-local: how it would be placed */
    int64_t nodes;          /* the nodes it asks for */
    int64_t instance_nodes; /* the nodes the instance has (0: not known) */
    int64_t ahead_jobs;     /* jobs holding storage without nodes now */
    int64_t ahead_gib;      /* and the GiB they hold */
    double unknown_since;   /* rabbit health did not know the graph and the
                             * instance's nodes yet when it was first weighed
                             * (0: it did): weighed again when it does */
};

/* A job's pre-staging: its storage set up and filled before its nodes.
 * Its own wing: written by prestage.c alone (its stage, ssd and restage
 * moved through sidestate.c's setters), read by decide.c's pre-staging
 * rules (t/python/libdws/test_one_decider.py holds both).
 */
struct prestage_state {
    enum prestage_stage stage; /* how far its pre-staging went */
    struct prestage_facts weighed; /* what decides it (PRESTAGE_WEIGHED on) */
    bool staged;           /* pre-staged: Setup and DataIn before dws.setup */
    int64_t gib;           /* the ssd it holds in Fluxion; 0: none */
    struct prestage_split split; /* node-local storage: its even split */
    json_t *counts;        /* node-local, once picked: {rabbit: nodes} its
                            * storage is set up for */
    char *hosts;           /* and those chassis' computes (RFC 29): its nodes
                            * come from them alone */
    enum prestage_ssd ssd; /* where its ssd hold is (Lustre) */
    json_t *avoid;         /* {path: true}: vertices a job had when held */
    double since;          /* when it was pre-staged */
    char wait[160];        /* why it waits for its storage, "" if it does not */
    unsigned long room_tried; /* e->room_gen when its weigh or pick last found no
                            * room (or the rabbits unknown): it tries again once
                            * room may have come since, or at its timer */
    char not[200];         /* why it is not pre-staged though the site's default
                            * wanted it (flux dws job), "" otherwise */
    enum prestage_restage restage; /* its pre-staging given up */
    char restage_why[200]; /* why, "" when it was not */
};

struct told; /* advance.h */

/* A job's standing under [rabbit.limits]: admit.c's facts, written there
 * alone (the job table's create and free aside: its first values, its
 * memory); the decider and the job's view read them
 * (t/python/libdws/test_one_decider.py holds it).
 */
struct limit_state {
    char *why;               /* why it waits in PHASE_LIMITED, or NULL */
    enum limit_shown shown;  /* dws-limit shown held since its last removal:
                              * removed again once its Workflow exists */
    struct limits_held held; /* what its scopes (user, bank, user within
                              * the bank) hold as admit.c counted them at its
                              * dws.create, or, while it waits, with the older
                              * waiting jobs let go before it; the user's jobs
                              * -1: not counted (no limits, or its create sent) */
    int64_t recounted;       /* the event (e->events) whose admit pass found its
                              * count changed: decided on that count in it; -1:
                              * none yet */
    int64_t behind;          /* older waiting jobs that stay and hold it back (no
                              * job overtakes an older one of the same user, bank
                              * or user within a bank); -1: its user's persistent
                              * storage not listed yet */
};

struct job {
    json_int_t id;
    char name[64]; /* fluxjob-<id> */
    struct job *next;  /* hash chain */

    int64_t userid;
    int64_t groupid;
    int64_t tolerance;
    json_t *directives; /* array of strings */
    json_t *resources;  /* original jobspec resources */
    json_t *wf;         /* latest Workflow object seen, or NULL (job_set_wf) */
    struct wfview view; /* wf, read (wfview.c) */
    unsigned long wf_seen; /* its sightings, one more each: a watch event, the
                            * create's answer with the object, its deletion */
    unsigned long wf_read; /* wf_seen when it was last read: a sighting not
                            * yet read is the decider's (decide.c, seen ()) */
    unsigned long wf_gone; /* wf_seen of the sighting that found it deleted
                            * (DELETED, or missing from a list), or 0 */

    enum job_phase phase;  /* phase.c: only phase_event () changes it */

    json_t *create_msgids; /* requests waiting for the create to answer */
    bool resources_sent;   /* resource-update sent to the job manager */
    enum info_for info_for; /* what the job-info read out is for */
    unsigned deps;         /* bit per dependency it holds that the engine weighs
                            * (enum job_dep) */

    json_t *breakdowns;    /* {name: DirectiveBreakdown} read for this job */
    int breakdowns_wanted; /* breakdown reads outstanding */
    char *hosts;           /* compute hosts (RFC 29), from R */
    json_t *reserved;      /* {rabbit: GiB of ssd} Fluxion gave it, from R */
    json_t *ssd_asks;      /* [[slots, GiB]]: the ssd its resource-update asked
                            * Fluxion for (dws_jobspec_ssd_asks), or NULL: a
                            * pre-staging pick leaves room for it (prestage.c) */
    char *failed;          /* hosts given up (RFC 29), or NULL */
    char *wf_token;        /* the workflow token read from its Secret, until the
                            * prolog-remove carries it, or NULL */
    enum wf_state forced;  /* the state whose hosts were last given up (its
                            * forceReady asked), or WF_NONE: its timer has
                            * fired, once, as flux-coral2's does (fault.c) */
    int servers_pending;   /* Servers patches outstanding */
    enum setup_start setup; /* dws.setup arrived (or its hosts known); Setup not yet
                            * asked (sidestate.c) */

    enum prolog prolog;    /* the job's prolog: held, or ended (sidestate.c) */
    enum epilog epilog;    /* the job's epilog: not begun, active, ended
                            * (epilog-remove sent, or dws.abort ended it) */
    bool toredown;         /* the Workflow is to go to Teardown without PostRun
                            * or DataOut: a failure, an exception (dws.teardown),
                            * an epilog before the create answered, or found in
                            * Teardown after a restart.  Sent once the Workflow
                            * exists; later state completions are ignored. */
    int abort_reads;       /* dws.abort's ClientMount and Servers lists outstanding:
                            * Teardown (or the Workflow's deletion) waits for them,
                            * else it could delete what they must read */
    bool excepted;         /* a fatal exception was raised by us */
    int release;           /* RELEASE_DEFAULT (the config's), RELEASE_EARLY or
                            * RELEASE_LATE: dw_release_computes */
    json_t *held;          /* ssd vertex paths held down until Teardown, or NULL */
    bool released;         /* the epilog ended after PostRun: the computes are
                            * back in Flux while DataOut and Teardown go on */
    bool dataout_ended;    /* DataOut's outcome is recorded (data.dws.dataout) */
    char *postrun_why;     /* PostRun failed for this reason: its ClientMounts
                            * are being read to drain who did not unmount */
    bool listed_at_start;  /* in the first Workflow list: its job may have ended
                            * while no service watched (see request_orphans_event) */
    double tc_since;       /* when its TransientCondition began (its timer was
                            * started), -1: not in one */
    int teardown_reads;    /* reads before Teardown outstanding (data movements, pod log) */
    unsigned timers;       /* bit per timer kind running */
    uint64_t news;         /* bit per news (decide.h) recorded, not yet taken
                            * by the decider */
    unsigned fired;        /* bit per timer kind fired, not yet decided */
    json_t *why;           /* the steps it took, each with its rule, the latest
                            * WHY_MAX_STEPS (why.c alone writes these) */
    int64_t why_dropped;   /* older steps no longer in `why` */
    double why_t0;         /* when it took its first step: `why`'s times count
                            * from it, in ms */
    enum rule asked_by[WF_NSTATES]; /* the rule that asked for each state */
    enum rule failed_by;   /* the rule that decided it fails (the first) */
    enum rule waits_by;    /* the rule that made it wait last */
    enum rule prestaged_by; /* the last that chose its pre-staging's course */
    enum rule released_by; /* the last that moved its computes' early release */
    struct told *told;     /* what inputs told beside their news, in order, each
                            * kept until the step answering its news (advance.h) */
    int culprits;          /* hosts a timeout's read would give up, in all */
    uint64_t refused;      /* bit per token kind of a single write refused (409,
                            * 422): asked again once its Workflow changed
                            * (TOK_FINALIZER: progress.c) */
    uint64_t written;      /* bit per token kind (TOK_*) of a write to this Workflow
                            * answered, that a step waits for: TOK_HOSTS (the hosts
                            * recorded, until the Servers or Computes are asked),
                            * TOK_SERVERS (every
                            * Servers filled, until Setup is asked), TOK_COMPUTES,
                            * TOK_DATAOUT_HELD (DataOut with the held ssds),
                            * TOK_CREATE (the create answered: Proposal) */
    uint64_t asking;       /* bit per token kind (TOK_*) of a single request out:
                            * the forceReady patch, the workflow token read,
                            * the finalizer's removal, the hosts' patch, the
                            * Computes' patch, the
                            * unpin, the epilog's mark (TOK_ANNOTATE: kept
                            * until a failure; the Workflow shows it after),
                            * the Teardown patch (TOK_STATE: once for the
                            * Workflow); all cleared when it is created again */
    double state_since;    /* when a desiredState was last asked for */
    double asked_at[WF_NSTATES]; /* when each state was asked for (phase.c; 0: not */
    double done_at[WF_NSTATES];  /* by this service) and found done */
    char *note;            /* the last exception note raised (act_raise), or the
                            * DataOut failure of a released job, as written
                            * before any plain sentence is added */
    json_t *view_msgids;   /* dws.job requests waiting for the job's
                            * NnfDataMovement list (jobview.c) */
    json_t *dms_kept;      /* the NnfDataMovements saved before Teardown
                            * (data.dws.datamovements), for the job's record */
    json_t *dw_parsed;     /* its directives parsed, for its view (jobview.c) */
    json_t *dw_parsed_of;  /* the directives they were parsed from */
    json_t *record;        /* the job's view last handed out for its KVS
                            * record (DWS_ENGINE_RECORD_KEY), but its why, or NULL */
    int64_t record_steps;  /* and the steps it had taken then (why_count) */
    int64_t gib;           /* rabbit GiB its directives ask for (limits.h); -1: not read */
    json_t *gib_types;     /* the same by storage type (its usage record), or NULL:
                            * not read */
    char *username;        /* its owner's name as the service looked it up, or NULL */
    char *bank;            /* its flux-accounting bank (attributes.system.bank, as
                            * its dws.create or its Workflow carries it), or NULL */
    char *project;         /* and its project, or NULL */
    struct limit_state lim; /* its standing under [rabbit.limits] (admit.c's) */

    int prestage_asked;    /* dw_prestage: -1 not given, 0 "no", 1 "yes" */
    struct prestage_state ps; /* its pre-staging (prestage.c's wing) */
    struct datain_facts datain; /* its DataIn's progress while pre-staged (datain.c) */
};

/* A job's timers, X (ID, word): T_ID, and its key "<word>:<jobid>", written
 * and read by token.c alone. */
#define TIMER_KINDS(X)                                                                        \
    X (SETUP, "setup")                                                                        \
    X (PRERUN, "prerun")                                                                      \
    X (POSTRUN, "postrun")                                                                    \
    X (TEARDOWN_AFTER, "teardown_after")                                                      \
    X (TC, "tc")                                                                              \
    /* Fluxion's answers to the ssd holds (release.c) */                                      \
    X (RELEASE, "release")                                                                    \
    /* pick a pre-staged job's ssd again (prestage.c) */                                      \
    X (PRESTAGE, "prestage")                                                                  \
    /* read a pre-staged job's DataIn progress again (datain.c) */                            \
    X (DATAIN, "datain")                                                                      \
    /* a pre-staged job let go waits no longer for its chassis */                             \
    X (NODE_WAIT, "node_wait")

enum timer_kind {
#define TIMER_KIND(id, word) T_##id,
    TIMER_KINDS (TIMER_KIND)
#undef TIMER_KIND
    T_NKINDS,
};

/* dw_release_computes: when a job's computes go back to Flux */
enum release_mode {
    RELEASE_DEFAULT = 0, /* as [rabbit] release_computes says */
    RELEASE_EARLY,       /* "after-unmount": once PostRun is done */
    RELEASE_LATE,        /* "after-teardown": once Teardown is done */
};

struct verbs; /* advance.h */

struct dws_engine {
    struct config cfg;
    const struct verbs *verbs; /* the one table of step verbs (verbtable.c) */
    struct job **table;
    size_t nbuckets;
    size_t njobs;
    bool synced;           /* the first Workflow list has been seen */
    json_t *deferred;      /* [{"waits": enum pending_wait bits, "event"}]: the
                            * requests that came before a list they need (the
                            * Workflow list, the PSIs'), fed again once it has
                            * come (pending.c) */
    json_t *refused;       /* {id: true}: jobs whose dws.create was refused before
                            * the orphans event (still in DEPEND in the job list,
                            * they are no orphans); NULL after it */
    json_t *compute2rabbit; /* {compute: rabbit} from SystemConfiguration */
    json_t *rabbits;        /* {rabbit: true} */
    struct dws_rabbitmap *map;
    double now;
    json_t *actions; /* actions of the event being handled */
    int64_t events;
    int64_t phase_jobs[PHASE_COUNT]; /* how many jobs are in each phase */
    struct dws_health *health; /* rabbit health (rabbits.h) */
    json_t *record_due;   /* {"<jobid>": true}: jobs whose view may have changed
                           * in this event (act_record); engine.c builds
                           * their records after it */
    long long rule_fired[RULE_COUNT]; /* steps each rule chose (why.c) */
    json_t *trace;        /* the steps taken, kept while tracing (why.c), or NULL */
    json_int_t running;   /* the job advance.c runs now (-1: none): news marked on
                           * it is taken in its run, not marked due again */
    json_int_t *due;      /* ids of the jobs news was marked on without an
                           * advance (advance_mark): advance_due () runs them
                           * at the event's end */
    size_t ndue, due_cap;
    json_t *records;      /* {"<jobid>": view}: records not yet taken by the
                           * service (dws_engine_take_records) */
    bool map_changed;     /* the SystemConfiguration came in this event: the
                           * jobs that reached dws.setup before it look again,
                           * with the event's passes (NEWS_LOOK) */
    bool room_changed;    /* rabbit health had an input in this event (a
                           * Storage, the graph, an ssd up again): pre-staged
                           * jobs waiting for room look again */
    bool limits_changed;  /* reconfigured since admit_pass last counted: every
                           * waiting job is weighed again, not only those whose
                           * count changed */
    bool room_wanted;     /* a pre-staged job found no room (prestage.c): only
                           * then does room_changed send anyone to pick */
    unsigned long room_gen; /* rabbit health's inputs that may have made room,
                           * counted by prestage_room (job->ps.room_tried) */
    int64_t pinned;       /* jobs whose node-local storage waits on its rabbits
                           * for their nodes (prestage_counts set): only then,
                           * and when a rabbit went up or down since
                           * (updown_seen), is a rabbit gone down looked for */
    unsigned long updown_seen; /* rabbits_updown_gen () when last looked */
    json_t *psis;         /* {name: view}: the PersistentStorageInstances
                           * (psi.c); NULL before their first list */
    json_t *pending;      /* {"<seq>": {"kind": token kind, ...}}: every request
                           * the engine made that waits for an answer and is
                           * not a job's (persistent-share and -unshare,
                           * dws.drain and -undrain, dws.rabbits {df}),
                           * keyed by its tokens' sequence (pending.c) */
    json_int_t pending_seq; /* the last such request's number */
};

/* What an answer (a Kubernetes call's, an RPC's, a job-info read's) is
 * for: the first word of its token.  Every token the engine puts on an
 * action is of one namespace, one of these kinds: token.c writes it from
 * the enum, so a token cannot be mistyped, and parses it once (the kind,
 * then what its shape says follows); engine.c hands the answer to the
 * one handler its table gives the kind.  A kind's shape says what follows
 * "<kind>:" and where the answer's request waits:
 */
enum token_shape {
    TOKEN_JOB,     /* "<kind>:<jobid>": a job's (the job table holds it) */
    TOKEN_REQUEST, /* "<kind>:<seq>": a request's, in the pending table (e->pending) */
    TOKEN_STEP,    /* "<kind>:<seq>:<step>:<rabbit>": one rabbit's step (enum drain_step)
                    * of a request in the pending table */
    TOKEN_HEALTH,  /* "<kind>:<n>": a batch of rabbit health's, a kind it owns (its
                    * word is health.h's; health/batch.c writes it, keeps the batch) */
};

#define TOKEN_KINDS(X)                                                                         \
    X (CREATE, "create", TOKEN_JOB)                                                            \
    X (STATE, "state", TOKEN_JOB)                                                              \
    X (DATAOUT_HELD, "dataout-held", TOKEN_JOB) /* DataOut with the held ssds (release.c) */    \
    X (ANNOTATE, "annotate", TOKEN_JOB)                                                        \
    X (FINALIZER, "finalizer", TOKEN_JOB)                                                      \
    X (DELETE, "delete", TOKEN_JOB)                                                            \
    X (BREAKDOWN, "breakdown", TOKEN_JOB)                                                      \
    X (HOSTS, "hosts", TOKEN_JOB)                                                              \
    X (SERVERS, "servers", TOKEN_JOB)                                                          \
    X (COMPUTES, "computes", TOKEN_JOB)                                                        \
    X (COMPUTES_DROP, "computes-drop", TOKEN_JOB) /* hosts given up in PreRun (fault.c) */     \
    X (SECRET, "secret", TOKEN_JOB)                                                            \
    X (DM, "dm", TOKEN_JOB)                                                                    \
    X (PODS, "pods", TOKEN_JOB)                                                                \
    X (PODLOG, "podlog", TOKEN_JOB)                                                            \
    X (JOB_INFO, "job-info", TOKEN_JOB)                                                        \
    X (SETUP_TIMEOUT, "setup-timeout", TOKEN_JOB)                                              \
    X (PRERUN_TIMEOUT, "prerun-timeout", TOKEN_JOB)                                            \
    X (TC_PRERUN, "tc-prerun", TOKEN_JOB)                                                      \
    X (POSTRUN_TIMEOUT, "postrun-timeout", TOKEN_JOB)                                          \
    X (POSTRUN_FAILED, "postrun-failed", TOKEN_JOB)                                            \
    X (ABORT_MOUNTS, "abort-mounts", TOKEN_JOB)                                                \
    X (ABORT_SERVERS, "abort-servers", TOKEN_JOB)                                              \
    X (FORCE_READY, "force-ready", TOKEN_JOB)                                                  \
    X (JOBVIEW, "jobview", TOKEN_JOB)                                                          \
    X (PRESTAGE, "prestage", TOKEN_JOB)                                                        \
    X (PRESTAGE_FIND, "prestage-find", TOKEN_JOB)                                              \
    X (DATAIN, "datain", TOKEN_JOB)                                                            \
    X (GIVE_UP, "prestage-give-up", TOKEN_JOB)                                                 \
    X (UNPIN, "prestage-unpin", TOKEN_JOB)                                                     \
    X (PERSISTENT, "persistent-share", TOKEN_REQUEST) /* share and unshare (persistent.c) */   \
    X (DF, "df", TOKEN_REQUEST)                       /* dws.rabbits {df} (rabbitdf.c) */      \
    X (DRAIN, "drain", TOKEN_STEP)                    /* dws.drain, -undrain (rabbitdrain.c) */\
    X (HEALTH, DWS_HEALTH_TOKEN_KIND, TOKEN_HEALTH)

enum token_kind {
#define TOKEN_KIND_ENUM(id, name, shape) TOK_##id,
    TOKEN_KINDS (TOKEN_KIND_ENUM)
#undef TOKEN_KIND_ENUM
        TOK_COUNT
};

/* The steps of one rabbit's chain of writes in a dws.drain or -undrain
 * (rabbitdrain.c's table says what each does and which comes next): the
 * word each is written as in its token.
 */
#define DRAIN_STEPS(X)                                                                         \
    X (STORAGE, "storage")       /* drain: annotate the Storage */                             \
    X (NODE, "node")             /* read the Node (its taints) */                              \
    X (TAINT, "taint")           /* patch the Node's taints */                                 \
    X (UNANNOTATE, "unannotate") /* undrain: take the Storage's annotations away */            \
    X (ROLLBACK, "rollback")     /* a failed drain: take them back */

enum drain_step {
#define DRAIN_STEP_ENUM(id, name) DRAIN_STEP_##id,
    DRAIN_STEPS (DRAIN_STEP_ENUM)
#undef DRAIN_STEP_ENUM
        DRAIN_STEP_COUNT /* none: the chain has ended */
};

/* What a deferred request waits for (pending.c): the lists it needs,
 * a bit each. */
enum pending_wait {
    PENDING_WORKFLOWS = 1, /* the first Workflow list (e->synced) */
    PENDING_PSIS = 2,      /* the PSIs' first list (psi_synced) */
};

#endif /* !DWS_ENGINE_STATE_H */
