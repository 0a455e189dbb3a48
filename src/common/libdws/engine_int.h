/* engine_int.h - what the engine's files share (not a public header).
 *
 * engine.c          create/destroy, config, the job table, event dispatch,
 *                   action builders, SystemConfiguration (compute -> rabbit)
 * engine_request.c  the dws.* requests, and recovery of those a restart lost
 * engine_workflow.c Workflow events: rebuild, state completion, errors
 * engine_fault.c    timeouts, TransientCondition, failure tolerance, abort
 * engine_health.c   routing to rabbit health (health.h): Storage, the resource
 *                   journal, Fluxion, the flush timer, dws.rabbits
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_ENGINE_INT_H
#define DWS_ENGINE_INT_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "action.h"
#include "engine.h"
#include "error.h"
#include "lustre.h"
#include "health.h"

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

#define ANN_RESOURCES "flux-dws.io/resources"
#define ANN_TOLERANCE "flux-dws.io/failure-tolerance"
#define ANN_HOSTS "flux-dws.io/hosts"
#define ANN_RESERVED "flux-dws.io/lustre-rabbits"
#define ANN_FAILED "flux-dws.io/failed"
#define ANN_EPILOG "flux-dws.io/epilog"
#define WORKFLOW_FINALIZER "flux-framework.readthedocs.io/workflow"
#define WORKFLOW_LABEL "dataworkflowservices.github.io/workflow.name"
#define WORKFLOW_NS_LABEL "dataworkflowservices.github.io/workflow.namespace"
/* rabbit_container_log: the last lines of the container's log asked for,
 * and the most kept of them (bytes, as flux-coral2 keeps 50,000 characters)
 */
#define CONTAINER_LOG_LINES 5000
#define CONTAINER_LOG_MAX 50000
#define NOTE_PREFIX "DWS/Rabbit interactions failed: "

struct config {
    double tc_timeout;
    double setup_timeout;
    double prerun_timeout;
    double postrun_timeout;
    double teardown_after;
    bool drain_compute_nodes;
    bool soft_drain;
    bool drain_queues;     /* drains limited to some queues */
    bool fluxion;          /* rabbits are ssd vertices in Fluxion */
    bool restrict_persistent;
    int64_t save_datamovements;
    int64_t min_allocation_gib;
    int64_t owner;
    json_t *presets;   /* object or NULL */
    json_t *maximums;  /* object or NULL */
    struct dws_lustre_conf lustre; /* [rabbit.lustre] */
    char namespace[64];
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
    json_t *wf;         /* latest Workflow object seen, or NULL */

    enum wf_state desired; /* last desiredState we asked for (or saw) */
    enum wf_state handled; /* last state whose completion we acted on */

    json_t *create_msgids; /* requests waiting for the create to answer */
    bool creating;         /* create sent, no answer yet */
    bool exists;           /* the Workflow exists (as far as we know) */
    bool recreate;         /* created again after it vanished (#487) */
    bool resources_sent;   /* resource-update sent to the job manager */
    bool lustre;           /* a breakdown asks for Lustre storage */
    bool info_R;           /* job-info asked for R (a lost dws.setup) */
    bool info_sched;       /* job-info asked for R's graph (spread Lustre) */

    json_t *breakdowns;    /* {name: DirectiveBreakdown} read for this job */
    int breakdowns_wanted; /* breakdown reads outstanding */
    char *hosts;           /* compute hosts (RFC 29), from R */
    json_t *reserved;      /* {rabbit: GiB of ssd} Fluxion gave it, from R */
    char *failed;          /* hosts given up (RFC 29), or NULL */
    int servers_pending;   /* Servers patches outstanding */
    bool setup_pending;    /* dws.setup arrived; Setup not yet asked */
    bool setup_error;

    bool epilog;           /* post_run arrived: the job's epilog is active */
    bool epilog_removed;   /* epilog-remove sent, or abort ended the epilog */
    bool run_started;
    bool toredown;         /* the Workflow is to go to Teardown without PostRun
                            * or DataOut: a failure, an exception (dws.teardown),
                            * an epilog before the create answered, or found in
                            * Teardown after a restart.  Sent once the Workflow
                            * exists; later state completions are ignored. */
    int abort_reads;       /* dws.abort's ClientMount and Servers lists outstanding:
                            * Teardown (or the Workflow's deletion) waits for them,
                            * else it could delete what they must read */
    bool excepted;         /* a fatal exception was raised by us */
    bool deleting;         /* we deleted the Workflow */
    bool listed_at_start;  /* in the first Workflow list: its job may have ended
                            * while no service watched (see orphans_event) */
    bool token_pending;    /* PreRun: reading the workflow token Secret */
    bool tc;               /* in TransientCondition, timer running */
    int teardown_reads;    /* reads before Teardown outstanding (data movements, pod log) */
    unsigned timers;       /* bit per timer kind running */
    double state_since;    /* when desired last changed */
};

enum timer_kind {
    T_SETUP = 0,
    T_PRERUN,
    T_POSTRUN,
    T_TEARDOWN_AFTER,
    T_TC,
    T_NKINDS,
};

struct dws_engine {
    struct config cfg;
    struct job **table;
    size_t nbuckets;
    size_t njobs;
    bool synced;           /* the first Workflow list has been seen */
    json_t *deferred;      /* requests for unknown jobs before that list, answered
                            * once it has come (engine.c) */
    json_t *compute2rabbit; /* {compute: rabbit} from SystemConfiguration */
    json_t *rabbits;        /* {rabbit: true} */
    struct dws_rabbitmap *map;
    double now;
    json_t *actions; /* actions of the event being handled */
    int64_t events;
    struct dws_health *health; /* rabbit health (engine_health.c) */
};

/* engine.c: jobs */
struct job *job_lookup (struct dws_engine *e, json_int_t id);
struct job *job_create (struct dws_engine *e, json_int_t id);
void job_forget (struct dws_engine *e, struct job *job);
bool job_id_from_name (const char *name, json_int_t *id);

/* engine.c: actions */
void act (struct dws_engine *e, json_t *action);
void act_respond (struct dws_engine *e, json_t *msgid, json_t *payload);
void act_respond_ok (struct dws_engine *e, json_t *msgid);
void act_respond_fail (struct dws_engine *e, json_t *msgid, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));
void act_log (struct dws_engine *e, const char *level, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));
void act_raise (struct dws_engine *e, struct job *job, const char *type, int severity,
                const char *fmt, ...) __attribute__ ((format (printf, 5, 6)));
void act_k8s (struct dws_engine *e, const char *op, const char *kind, const char *ns,
              const char *name, json_t *body, const char *token);
void act_k8s_list (struct dws_engine *e, const char *kind, const char *selector,
                   const char *token);
void act_rpc (struct dws_engine *e, const char *topic, json_t *payload, const char *token);
void act_memo (struct dws_engine *e, struct job *job, json_t *memo);
void act_kvs (struct dws_engine *e, struct job *job, json_t *put, json_t *link);
void act_timer_start (struct dws_engine *e, struct job *job, enum timer_kind kind, double after);
void act_timer_stop (struct dws_engine *e, struct job *job, enum timer_kind kind);
void act_drain (struct dws_engine *e, const char *targets, const char *reason);
/* What a Kubernetes answer (or a job-info read) is for: the first word of
 * its token "<kind>:<jobid>".  token_for writes it from the enum, so a
 * token cannot be mistyped; the engine parses it once (token_kind_parse)
 * and hands the answer to the one handler of its kind.
 */
#define TOKEN_KINDS(X)                                                                         \
    X (CREATE, "create")                                                                       \
    X (STATE, "state")                                                                         \
    X (ANNOTATE, "annotate")                                                                   \
    X (FINALIZER, "finalizer")                                                                 \
    X (DELETE, "delete")                                                                       \
    X (BREAKDOWN, "breakdown")                                                                 \
    X (HOSTS, "hosts")                                                                         \
    X (SERVERS, "servers")                                                                     \
    X (COMPUTES, "computes")                                                                   \
    X (SECRET, "secret")                                                                       \
    X (DM, "dm")                                                                               \
    X (PODS, "pods")                                                                           \
    X (PODLOG, "podlog")                                                                       \
    X (JOB_INFO, "job-info")                                                                   \
    X (SETUP_TIMEOUT, "setup-timeout")                                                         \
    X (PRERUN_TIMEOUT, "prerun-timeout")                                                       \
    X (TC_PRERUN, "tc-prerun")                                                                 \
    X (POSTRUN_TIMEOUT, "postrun-timeout")                                                     \
    X (ABORT_MOUNTS, "abort-mounts")                                                           \
    X (ABORT_SERVERS, "abort-servers")

enum token_kind {
#define TOKEN_KIND_ENUM(id, name) TOK_##id,
    TOKEN_KINDS (TOKEN_KIND_ENUM)
#undef TOKEN_KIND_ENUM
        TOK_COUNT
};

const char *token_kind_name (enum token_kind kind);
/* The kind of the first len bytes of s, or -1 for none. */
int token_kind_parse (const char *s, size_t len);
/* "<kind>:<jobid>" */
const char *token_for (char *buf, size_t len, enum token_kind kind, struct job *job);

/* engine_workflow.c */
const char *wf_state_name (enum wf_state s);
enum wf_state wf_state_parse (const char *s);
void workflow_event (struct dws_engine *e, const char *type, json_t *wf);
void workflow_sync (struct dws_engine *e, json_t *objects);
void workflow_create (struct dws_engine *e, struct job *job);
void workflow_patch_state (struct dws_engine *e, struct job *job, enum wf_state s,
                           json_t *annotations);
void workflow_teardown (struct dws_engine *e, struct job *job);
void workflow_progress (struct dws_engine *e, struct job *job);
void workflow_k8s_result (struct dws_engine *e, enum token_kind kind, struct job *job,
                          json_t *event);
void setup_start (struct dws_engine *e, struct job *job);
void prolog_remove_again (struct dws_engine *e, struct job *job);
/* A repeated dws.create while the job waits for its resources: the
 * jobtap plugin was reloaded and may have missed the resource-update
 * (sent while no plugin was loaded), so send it again.  Nothing when
 * Proposal is not complete yet (it is sent then) or the job moved on.
 */
void resources_resend (struct dws_engine *e, struct job *job);
void job_fail (struct dws_engine *e, struct job *job, const char *type, const char *fmt, ...)
    __attribute__ ((format (printf, 4, 5)));
void epilog_remove (struct dws_engine *e, struct job *job);

/* engine_request.c */
void request_event (struct dws_engine *e, json_t *event);
void orphans_event (struct dws_engine *e, json_t *jobs, bool complete);
void post_run_begin (struct dws_engine *e, struct job *job, bool run_started);
void job_info_result (struct dws_engine *e, struct job *job, json_t *event);

/* engine_fault.c */
void timer_event (struct dws_engine *e, const char *key);
void fault_k8s_result (struct dws_engine *e, enum token_kind kind, struct job *job,
                       json_t *event);
void transient_condition (struct dws_engine *e, struct job *job, json_t *status);
void abort_job (struct dws_engine *e, struct job *job);
const char *timer_kind_name (enum timer_kind kind);

/* engine_health.c */
void health_configure (struct dws_engine *e);
json_t *health_job_constraint (struct dws_engine *e);
void health_topology (struct dws_engine *e);
/* the job's hosts changed (or became known) / the job is forgotten */
void health_job (struct dws_engine *e, struct job *job);
void health_job_gone (struct dws_engine *e, struct job *job);
void health_mount_failed (struct dws_engine *e, json_t *hosts);
void health_rabbits_request (struct dws_engine *e, json_t *msgid);
/* does the result event carry a token of the health module? */
bool health_token (json_t *event);
/* type: sync/watch (kind Storage), journal, flux-config, graph,
 * fluxion-restart, health-flush, result */
int health_event (struct dws_engine *e, const char *type, json_t *event, dws_error_t *err);

/* engine.c: helpers */
char *hostlist_of_R (json_t *R, dws_error_t *err);
/* Record the ssd Fluxion gave the job, per rabbit, from its R (none: NULL). */
void job_set_reserved (struct job *job, json_t *R);
json_t *hosts_minus (const char *hosts, const char *minus, dws_error_t *err);

#endif /* !DWS_ENGINE_INT_H */
