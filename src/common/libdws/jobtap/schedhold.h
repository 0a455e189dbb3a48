/* schedhold.h - rabbit jobs kept from the scheduler until it can judge
 * them, as a pure state machine (no Flux, no I/O).
 *
 * When a Flux instance restarts, its job manager moves every job that was
 * waiting in SCHED back to PRIORITY (flux-restart) and hands it to the
 * scheduler again as soon as the scheduler says hello: before the other
 * brokers have joined and before the dws service has told Fluxion which
 * rabbits are up.  Fluxion (0.54, fcfs) then answers every job that asks
 * for more nodes than are up at that moment "unsatisfiable", and the job
 * manager kills it: the whole queue of a restarted instance is lost
 * (dfu_traverser_t::request_feasible: target nodes > nodes_up, in the
 * satisfiability pass, is ENODEV).  The same happens to a job whose
 * dws-create dependency is removed while brokers are still joining.
 *
 * So the jobtap plugin keeps each rabbit job that enters PRIORITY there
 * (the priority is "unavailable") until
 *   - the dws service has said its rabbit health is known and applied to
 *     Fluxion (dws.ready), and
 *   - Fluxion has at least as many nodes up as the job asks for;
 * then it lets it go on (reprioritize).  Both are asked by polling while a
 * job is held, and not at all otherwise: once the first poll found the
 * service ready, jobs that come later pass without a question, unless too
 * few nodes are up for them.  No job is held longer than the configured
 * timeout: then it goes to the scheduler whatever it may answer.
 *
 * The hold is for our service with Fluxion only.  Where the poll finds a
 * dws service that does not serve dws.ready (flux-coral2's, an older
 * flux-dws, a test's stand-in), or a scheduler that is not Fluxion
 * (sched-simple), every rabbit job goes on at once, as if there were no
 * hold.  Where it finds no dws service or no scheduler registered yet (an
 * instance starting), jobs are held until one is: what it is decides.
 * Until the first poll has answered, a rabbit job is held for that poll.
 *
 * One machine per plugin.  Events in, actions out (a JSON array), as
 * dataout.h; a bad event fails with a message and changes nothing.
 *
 * Events, by "type":
 *   priority {"id":J, "nnodes":N}
 *       J (a rabbit job) enters PRIORITY and asks for N nodes (dws_schedhold_nnodes).
 *       Answered by {"action":"hold"} when J must wait, nothing when it may go.
 *   leave    {"id":J}
 *       J left PRIORITY some other way (canceled): forgotten.
 *   ready    {"service":S, "scheduler":K, "nodes_up":N|null}
 *       A poll's answer.  S, the dws service: "none" (none registered),
 *       "starting" (dws.ready answered false, or failed other than for a
 *       missing method), "ready" (dws.ready answered true), "other" (a
 *       service that does not serve dws.ready).  K, the scheduler: "none"
 *       (none loaded), "fluxion", "other" (not Fluxion).  N, how many
 *       nodes Fluxion has up (null: unknown, e.g. not Fluxion or its find
 *       unanswered; then the node check is skipped).
 *   tick     {"now":T}
 *       The poll timer: with jobs held, asks again ("poll"); each job held
 *       for longer than the timeout is let go with a warning.
 * Actions, by "action":
 *   {"action":"hold"}                 (priority only) keep J in PRIORITY
 *   {"action":"release", "id":J}      reprioritize J: it goes on to SCHED
 *   {"action":"poll"}                 ask the service and the scheduler (ready)
 *   {"action":"arm", "seconds":S}     start the poll timer (tick in S s)
 *   {"action":"log", "level":L, "message":S}
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_SCHEDHOLD_H
#define DWS_SCHEDHOLD_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "util/error.h"

/* Seconds between two polls while a job is held. */
#define DWS_SCHEDHOLD_POLL 1.0
/* Default bound on one job's hold, seconds (jobtap conf sched-hold-timeout). */
#define DWS_SCHEDHOLD_TIMEOUT 1800.0

struct dws_schedhold;

/* timeout: seconds a job may be held at most (> 0). */
struct dws_schedhold *dws_schedhold_create (double timeout);
void dws_schedhold_destroy (struct dws_schedhold *s);

/* Feed one event at time 'now' (seconds, any clock): a new array of
 * actions, or NULL with err set. */
json_t *dws_schedhold_event (struct dws_schedhold *s, json_t *event, double now,
                             dws_error_t *err);

/* cffi entry point: the event and the actions as JSON text. */
char *dws_schedhold_event_json (struct dws_schedhold *s, const char *event, double now,
                                dws_error_t *err);

/* Jobs held now; whether job 'id' is one of them. */
int dws_schedhold_held (const struct dws_schedhold *s);
bool dws_schedhold_is_held (const struct dws_schedhold *s, json_int_t id);

/* Nodes a jobspec's resources array asks for, as Fluxion counts them for
 * its node check: each node vertex times the counts above it (a count
 * range counts its minimum); 0 when no node is named (cores only).  -1
 * with a message when the array is malformed.
 */
int64_t dws_schedhold_nnodes (json_t *resources, dws_error_t *err);

/* How many nodes Fluxion has up, from its answer to
 * sched-fluxion-resource.find {"criteria": "status=up", "format":
 * "rv1_nosched"}: the ranks of its R (null R: none).  -1 with a message
 * when the answer is not of that form.
 */
int64_t dws_schedhold_nodes_up (json_t *answer, dws_error_t *err);

/* Whether a failed RPC's error (errnum, text) says that no service of
 * its topic is registered: the broker's ENOSYS ("No service matching
 * dws.ready is registered"), not the service's own for a method it lacks
 * ("Unknown service method 'dws.ready'", or no text).
 */
bool dws_schedhold_no_service (int errnum, const char *errstr);

/* The ready event's "service" word for the outcome of dws.ready: errnum 0
 * and 'ready' as answered, or the failure's errnum and text.
 */
const char *dws_schedhold_service_word (int errnum, const char *errstr, bool ready);

/* The jobtap conf's sched-hold (a boolean, default true: false turns the
 * hold off, for a site whose Fluxion queue policy defers what it cannot
 * place rather than denying it) and sched-hold-timeout (seconds > 0, or
 * the default), from the conf (an object, or NULL); -1 with a message
 * naming the key when one is not of its kind.
 */
int dws_schedhold_conf (json_t *conf, bool *enabled, double *timeout, dws_error_t *err);

#endif /* !DWS_SCHEDHOLD_H */
