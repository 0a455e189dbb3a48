/* health.h - rabbit health in Flux: the decisions, no I/O (the files of health/;
 * health.c says which file holds what).
 *
 * DWS reports each rabbit's health on its Storage object: the rabbit's
 * overall status, spec.state (Enabled/Disabled) and, per attached compute
 * node, the status of its PCIe link.  Flux keeps jobs off broken rabbit
 * storage through Fluxion (the rabbit's ssd vertices up or down; the
 * badrabbit and alloc_rabbit node properties), drains (compute nodes whose
 * link went down), and DWS' SystemStatus (compute nodes Flux has lost or
 * drained after a failed unmount, which nnf-sos then skips).
 *
 * This module holds what is known of both sides and decides what Flux and
 * DWS must be told.  It is fed events (Storage objects, the topology from
 * SystemConfiguration, the Flux resource journal, the Fluxion graph's
 * paths, job allocations, RPC results) and answers with actions appended
 * to an array: "rpc" (Fluxion set_status / set_property / remove_property,
 * resource.drain / resource.undrain), "k8s" (the SystemStatus patch),
 * "timer-start" and "log".  It never sends what the other side already
 * has: every output is a diff between what it wants and what it last
 * applied, batched (one set_property, one remove_property, one drain per
 * reason, one undrain, one SystemStatus patch per flush; set_status is one
 * RPC per ssd vertex because Fluxion has no bulk form), and a flush comes
 * FLUSH_DELAY after the first change so a burst of events is one update.
 *
 * Rules (doc/guide/rabbit-health.rst):
 *   - a rabbit is up when its Storage exists, spec.state is not Disabled
 *     and status.status is Ready, or Degraded without rebootRequired (DWS:
 *     "ready but operating in a degraded state", e.g. a RAID rebuild);
 *     Degraded with rebootRequired (nnf-sos: a rabbit fenced by a STONITH
 *     event needs a reboot) and every other status are down;
 *   - an ssd vertex is wanted up iff its rabbit is up and no job holds it
 *     (dws_health_hold: a job whose computes went back before its
 *     Teardown keeps its ssd vertices out of Fluxion's reach); the
 *     rabbit's health and the holds are kept, the vertex's status is
 *     derived from them, and what Fluxion was last given is kept per
 *     vertex, so only the vertices that differ are sent;
 *   - a compute's link is down when the Storage lists it with a status
 *     other than Ready or Degraded; Fenced (nnf-sos fenced the compute and
 *     fails every Workflow that uses it) is down and fenced;
 *   - drains are edge-triggered: a link going down drains the compute
 *     (drain_compute_nodes, within drain_queues, not excluded) with reason
 *     "rabbit <name> link <status>", or when it is fenced "rabbit <name>"
 *     DWS_HEALTH_FENCED_REASON (overwriting a link drain of ours, never an
 *     admin's); the link coming back undrains it if that drain is still in
 *     place; an admin's undrain of a still-down link stands until the link
 *     goes down again;
 *   - badrabbit (soft_drain, or always without Fluxion) marks computes of a
 *     down rabbit, with a down link, or that failed to mount (until their
 *     rabbit's next Storage change);
 *   - alloc_rabbit (only without Fluxion) marks computes of rabbits that a
 *     job's Workflow uses;
 *   - SystemStatus says which computes cannot take part: Disabled for a
 *     compute of this instance with a broker offline (any of its ranks: a
 *     test instance may give several ranks one hostname), or drained after
 *     a failed unmount (a journal drain event whose reason begins "failed
 *     to unmount rabbit", even if an earlier reason was kept) until it is
 *     undrained; Enabled otherwise.  Other drains (maintenance) leave it
 *     Enabled, so DWS still removes its mounts.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_HEALTH_H
#define DWS_HEALTH_H

#include <stdbool.h>

#include <jansson.h>

#include "util/error.h"
#include "wire/wire.h"

#define DWS_HEALTH_FLUSH_DELAY 0.02 /* seconds from a change to its flush */
#define DWS_HEALTH_RETRY_DELAY 5.0  /* seconds before a failed update is retried */
/* The kind of the tokens of its actions, "health:<n>": one of the engine's
 * token kinds (engine/state.h TOKEN_KINDS), owned here (batch.c writes them). */
#define DWS_HEALTH_TOKEN_KIND "health"
#define DWS_HEALTH_TOKEN DWS_HEALTH_TOKEN_KIND ":" /* prefix of the tokens of its actions */
#define DWS_HEALTH_FLUSH_TIMER DWS_WIRE_HEALTH_FLUSH_TIMER
#define DWS_HEALTH_UNMOUNT_REASON "failed to unmount rabbit"
/* after "rabbit <name>": the reason a fenced compute is drained with */
#define DWS_HEALTH_FENCED_REASON " fenced this node: rabbit jobs fail here until it is unfenced"

struct dws_health;

struct dws_health_config {
    bool fluxion;             /* ssd vertices in Fluxion (false: --disable-fluxion) */
    bool drain_compute_nodes;
    bool soft_drain;
    bool drain_queues;        /* drains are limited to some queues */
    const char *namespace;    /* of SystemStatus "default" (NULL: "default") */
};

struct dws_health *dws_health_create (void);
void dws_health_destroy (struct dws_health *h);
void dws_health_configure (struct dws_health *h, const struct dws_health_config *cfg);

/* Whether Flux has been told all it needs: the Storage list and the
 * resource journal read and, with Fluxion, its graph known, Fluxion's own
 * state read back and no ssd status change waiting or in flight; and no
 * drain in flight (a fenced compute is drained before a rabbit job can be
 * placed on it).  The
 * jobtap plugin keeps rabbit jobs from the scheduler after a restart until
 * then (schedhold.h, through dws.ready).
 */
bool dws_health_ready (const struct dws_health *h);

/* Every function below appends its actions to 'actions' and takes the
 * current time 'now' (seconds since the epoch) where it matters.
 */

/* The computes each rabbit serves ({compute: rabbit}, SystemConfiguration). */
int dws_health_topology (struct dws_health *h, json_t *c2r, json_t *actions, dws_error_t *err);

/* Storage objects: the full list (sync) or one watch event. */
int dws_health_storage_sync (struct dws_health *h, json_t *objects, json_t *actions,
                             dws_error_t *err);
int dws_health_storage (struct dws_health *h, const char *event, json_t *obj, json_t *actions,
                        dws_error_t *err);

/* Events of the Flux resource journal (resource.journal), in order;
 * 'synced' once the backlog has been seen.
 */
int dws_health_journal (struct dws_health *h, json_t *events, bool synced, json_t *actions,
                        dws_error_t *err);

/* Which computes are excluded (resource.exclude: an idset of ranks or a
 * hostlist, NULL for none) and which may be drained (a hostlist, NULL for
 * all): Flux's configuration.
 */
int dws_health_flux_config (struct dws_health *h, const char *exclude, const char *drainable,
                            json_t *actions, dws_error_t *err);

/* The Fluxion graph: {"ssds": {rabbit: [ssd path...]}, "nodes": {host: path}}. */
int dws_health_graph (struct dws_health *h, json_t *graph, json_t *actions, dws_error_t *err);

/* Fluxion restarted (it forgot every status and property set before).
 * No ssd status is sent until it has answered find again.
 */
void dws_health_fluxion_restart (struct dws_health *h, json_t *actions);

/* What Fluxion has: the paths of its down ssd vertices (a JSON array), or
 * NULL/null when unknown (then every ssd's state is sent).  The flush asks
 * Fluxion (find status=down, on the handle set_status goes out on) at start
 * and after each restart, and its answer comes here through
 * dws_health_result (); tests may call it directly.
 */
int dws_health_fluxion_state (struct dws_health *h, json_t *down, json_t *actions,
                              dws_error_t *err);

/* Holds: job 'id' keeps these ssd vertices down in Fluxion (a JSON array
 * of containment paths, dws_rssd_paths; copied) whatever their rabbit's
 * health, from now until dws_health_unhold.  A path the graph does not
 * have (yet) is kept and applied once a graph has it; an empty array is a
 * hold with nothing to wait for.  Holding again replaces the paths.
 * 'since' is when the hold began, for the view (e.g. recorded before a
 * service restart); <= 0: now, or the time already held for this job.
 * The set_status go out at the next flush (armed here); a failed one is
 * sent again after DWS_HEALTH_RETRY_DELAY; a Fluxion restart or a new
 * graph sends them again.  Fails only on paths that are not an array of
 * strings.
 */
int dws_health_hold (struct dws_health *h, json_int_t id, json_t *paths, double since,
                     double now, json_t *actions, dws_error_t *err);

/* Job 'id's hold ends: each of its vertices goes up at the next flush if
 * its rabbit is up and no other job holds it (a vertex of a rabbit the
 * topology does not have stays down).  Unknown ids are ignored.
 */
void dws_health_unhold (struct dws_health *h, json_int_t id, double now, json_t *actions);

/* Whether job 'id' holds vertices (dws_health_hold, not unheld since). */
bool dws_health_holding (struct dws_health *h, json_int_t id);

/* Whether Fluxion has said that every vertex job 'id' holds is down: it
 * answered the set_status down, or its find said so (without Fluxion:
 * always, for a job that holds).  False for a job that holds nothing, and
 * again from a Fluxion restart or a new graph until Fluxion says so again.
 */
bool dws_health_hold_applied (struct dws_health *h, json_int_t id);

/* The jobs whose hold became applied since the last call (a new JSON array
 * of ids, empty when none): call it after feeding any event.  A job is
 * listed each time its hold becomes applied: once, and again after a
 * Fluxion restart or a new graph had made it unapplied.
 */
json_t *dws_health_holds_applied (struct dws_health *h);

/* ssd vertices for a hold of the service's own (pick.c): at least 'gib'
 * GiB of free vertices (no hold, not down, not in 'avoid', a set {path:
 * true} or NULL) of rabbits that are up, within what each one's Storage
 * says is free, the rabbits with the most room first, leaving free the
 * vertices the ssd asks in 'leave' ([[slots, GiB]] or NULL: the jobs
 * ahead of this one) may take.  A new JSON array of paths, with
 * *reserved a new {rabbit: GiB taken}; NULL with 'err' saying how much is
 * free, or kept, when not enough is.  Needs the graph's vertex sizes
 * (dws_health_graph's "ssd_gib").
 */
json_t *dws_health_pick (struct dws_health *h, int64_t gib, json_t *avoid, json_t *leave,
                         json_t **reserved, dws_error_t *err);

/* ssd vertices for node-local storage placed before the nodes (pick.c):
 * `chassis` rabbits, each up, with `per` computes of this instance online
 * and not drained, and room for `per` allocations of `node_gib` (one
 * exclusive ssd request per node, in whole vertices); the rabbits least
 * used by rabbit jobs first, then those with the most room.  The same
 * vertices are left out, and kept free, as by dws_health_pick.  A new
 * array of paths, *reserved a new {rabbit: GiB taken} and *hosts a new
 * array of the chosen rabbits' computes that may run it; NULL with 'err'
 * saying what is missing.
 */
json_t *dws_health_pick_chassis (struct dws_health *h, int64_t chassis, int64_t per,
                                 int64_t node_gib, json_t *avoid, json_t *leave,
                                 json_t **reserved, json_t **hosts, dws_error_t *err);

/* Whether what a pick needs is known: the Fluxion graph and the
 * instance's nodes (the resource journal). */
bool dws_health_known (struct dws_health *h);

/* A number that changes whenever a rabbit goes up or down (or the reason
 * it is down changes): whoever watches for that compares it. */
unsigned long dws_health_updown_gen (struct dws_health *h);

/* Whether the rabbit is known to be down: its Storage was seen and says
 * so (false while nothing is known of it, as after a restart). */
bool dws_health_rabbit_down (struct dws_health *h, const char *rabbit);

/* The first of the rabbits (the keys of an object: {rabbit: ...}) known
 * to be down, or NULL. */
const char *dws_health_first_down (struct dws_health *h, json_t *rabbits);

/* How many rabbits could hold node-local storage for `per` nodes of
 * `node_gib` each, all their vertices free: those with `per` computes in
 * this instance and `per` vertices of that size (one per node).
 */
int64_t dws_health_chassis_fit (struct dws_health *h, int64_t per, int64_t node_gib);

/* How many computes of this instance each rabbit serves: a new array
 * of h's rabbits' counts (*n of them; NULL and 0 when none is known).
 */
int64_t *dws_health_chassis_sizes (struct dws_health *h, size_t *n);

/* The GiB of all the graph's ssd vertices (0 when it gives no sizes). */
int64_t dws_health_graph_gib (struct dws_health *h);

/* The instance's nodes (broker ranks) as the resource journal gave them. */
size_t dws_health_nodes (struct dws_health *h);

/* Job 'id' uses these rabbits (a JSON array of names; NULL or empty: none). */
void dws_health_allocation (struct dws_health *h, json_int_t id, json_t *rabbits,
                            json_t *actions);

/* Computes that failed to mount (a JSON array of names): badrabbit. */
void dws_health_mount_failed (struct dws_health *h, json_t *hosts, json_t *actions);

/* The flush timer fired. */
void dws_health_flush (struct dws_health *h, double now, json_t *actions);

/* The answer to an action whose token began with DWS_HEALTH_TOKEN:
 * event {"token", "ok", "errstr"|"message", "status"?}.
 */
int dws_health_result (struct dws_health *h, json_t *event, double now, json_t *actions,
                       dws_error_t *err);

/* The dws.rabbits view (doc/man1/flux-dws-rabbits.rst); jobs come from
 * the allocations, "holds" and each rabbit's "held" from the holds.
 */
json_t *dws_health_view (struct dws_health *h);

/* What the rabbits' ssds hold, from their Storage objects (bytes; a
 * rabbit's total is the sum of status.devices[].capacity, else its
 * status.capacity, which is free space): the sum, the largest, and how many rabbits
 * report one (all 0 until the Storage list has come).  Up or down: a rabbit
 * that is down may come back, so this bounds what can ever be asked.
 */
void dws_health_capacity (struct dws_health *h, int64_t *total, int64_t *largest,
                          int64_t *count);

/* Whether computes can get the badrabbit/alloc_rabbit properties, for the
 * constraint a rabbit job gets at Proposal.
 */
json_t *dws_health_job_constraint (const struct dws_health_config *cfg);

#endif /* !DWS_HEALTH_H */
