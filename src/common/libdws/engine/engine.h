/* engine.h - the dws service's decisions: one state machine per job.
 *
 * The dws service drives one DWS Workflow per Flux job through Proposal,
 * Setup, DataIn, PreRun, PostRun, DataOut and Teardown.  This engine makes
 * every decision of it and does no I/O: the service shell feeds it events
 * (dws.* requests, Kubernetes watch events and call results, Flux RPC
 * results, timer expiries) and carries out the actions it returns
 * (Kubernetes writes and reads, responses, job-manager RPCs, memos,
 * exceptions, KVS writes, timers, drains).  The wire of both is described
 * in doc/guide/service.rst; every event and action is a JSON object.
 *
 * Why the engine keeps so little: everything it must know after a restart
 * of the service is written on the Workflow (annotations, see below) before
 * the action that depends on it, and a restarted engine rebuilds each job
 * from the Workflow list (a "sync" event).  Repeating any action it takes
 * after a rebuild is harmless on the other side.
 *
 * Annotations flux-dws writes on its Workflows:
 *   flux-dws.io/resources          the job's original jobspec resources (JSON)
 *   flux-dws.io/failure-tolerance  dw_failure_tolerance (decimal)
 *   flux-dws.io/hosts              the job's compute hosts (RFC 29), before Setup
 *   flux-dws.io/lustre-rabbits     {rabbit: GiB} of ssd Fluxion gave a spread
 *                                  Lustre job (lustre.h), with the hosts
 *   flux-dws.io/failed             hosts given up under the failure tolerance
 *   flux-dws.io/epilog             "active" once the job's epilog has begun
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_ENGINE_H
#define DWS_ENGINE_H

/* Where DWS keeps SystemConfiguration, Storage and SystemStatus; only
 * Workflows (and what DWS makes for them) follow the engine's "namespace".
 */
#define DWS_SYSTEM_NAMESPACE "default"

#include <jansson.h>

#include "util/error.h"
#include "wire/jobkvs.h"

struct dws_engine;

/* config: the normalised [rabbit] table (rabbitconf.h; missing keys take
 * their defaults) plus "owner" (the instance owner's uid) and optionally
 * "namespace" (where Workflows live, default "default": the service's
 * --namespace; DWS keeps its system objects, SystemConfiguration, Storage
 * and SystemStatus, in DWS_SYSTEM_NAMESPACE whatever it is).  NULL = defaults.
 */
struct dws_engine *dws_engine_create (json_t *config, dws_error_t *err);
void dws_engine_destroy (struct dws_engine *e);

/* Replace the configuration (flux config reload); jobs keep running and
 * timers already started keep their length.  -1 with a message on bad
 * values (the old configuration stays).
 */
int dws_engine_reconfig (struct dws_engine *e, json_t *config, dws_error_t *err);

/* Feed one event; returns the actions (a new JSON array, possibly empty),
 * or NULL with a message naming what is wrong with the event.  A bad
 * event changes nothing.
 */
json_t *dws_engine_event (struct dws_engine *e, json_t *event, dws_error_t *err);

/* The engine's view: {"synced": b, "jobs": [{id, workflow, desired, state,
 * ready, status, message, ...}], "rabbits": N, "computes": N}.
 */
json_t *dws_engine_status (struct dws_engine *e);

/* cffi entry points: JSON text in and out (free results with dws_free). */
struct dws_engine *dws_engine_create_json (const char *config_json, dws_error_t *err);
int dws_engine_reconfig_json (struct dws_engine *e, const char *config_json, dws_error_t *err);
char *dws_engine_event_json (struct dws_engine *e, const char *event_json, dws_error_t *err);
char *dws_engine_status_json (struct dws_engine *e, dws_error_t *err);

/* The dws.<name> methods the engine answers, i = 0 .. count - 1 (NULL
 * past the end), and whether each is open to every user (guest: 1) or
 * the instance owner's alone (0).  A request event carries its sender's
 * "userid"; the engine answers EPERM to a user other than the configured
 * "owner" for a method that is not a guest's (and for an unknown one).
 */
int dws_engine_method_count (void);
const char *dws_engine_method_name (int i);
int dws_engine_method_guest (int i);

/* The states of a DWS Workflow as DWS spells them ("Proposal" ...
 * "Teardown"), in their order, i = 0 .. count - 1 (NULL past the end):
 * the one list, which flux_dws.wfstates reads for the emulator and the
 * tools.
 */
int dws_wfstate_count (void);
const char *dws_wfstate_name (int i);
/* The decider's rules (engine/rules.h), i = 0 .. count - 1: the word a
 * step's rule is recorded by ("teardown-wanted") and its words for people.
 */
int dws_engine_rule_count (void);
const char *dws_engine_rule_name (int i);
const char *dws_engine_rule_why (int i);
/* How many steps rule i chose in this engine (-1: no such rule). */
long long dws_engine_rule_fired (struct dws_engine *e, int i);
/* With trace on, each step taken is kept until taken: [{"id", "rule",
 * "step", "facts"}] in the order taken (the service's debug log names each
 * step's rule); off (the default) keeps none.
 */
void dws_engine_trace (struct dws_engine *e, int on);
json_t *dws_engine_take_trace (struct dws_engine *e);
char *dws_engine_take_trace_json (struct dws_engine *e, dws_error_t *err);

/* A job's record: the engine's view of the job (the dws.job answer but
 * what only an answer has: success, phase_seconds, the data movements
 * listed for it, datamovements_error), written into the job's KVS
 * directory (RFC 16) under this key each time it changes (each phase,
 * each exception note raised, the data movements saved before Teardown,
 * the epilog's end) so that an ended job reads back what its last answer
 * showed.  dws_engine_take_records hands out {"<jobid>": view} for the
 * records changed since the last call (an empty object: none); the
 * service writes them before it carries out the actions of the same
 * event, so the record is in place before the epilog-remove that ends
 * the job.
 */
#define DWS_ENGINE_RECORD_KEY DWS_JOBKVS_JOB
const char *dws_engine_record_key (void);
json_t *dws_engine_take_records (struct dws_engine *e);
char *dws_engine_take_records_json (struct dws_engine *e, dws_error_t *err);

/* The phase words `flux dws job` and `flux dws jobs` print, one list: the
 * engine's job phases (JOB_PHASES, engine/state.h), then those a reader of
 * a job's record says in place of the recorded phase.  i = 0 .. count - 1
 * (NULL past the end); the id is the word's name in C ("DATAIN",
 * "INACTIVE").
 */
#define DWS_VIEW_PHASES(X)                                                                     \
    X (INACTIVE, "inactive")       /* the job has ended: read from its record */            \
    X (UNKNOWN, "unknown")         /* active, but no dws service is loaded */               \
    X (NO_WORKFLOW, "no Workflow yet") /* active, the service has no Workflow for it */
int dws_engine_phase_count (void);
const char *dws_engine_phase_name (int i);
const char *dws_engine_phase_id (int i);

#endif /* !DWS_ENGINE_H */
