/* rabbits.h - the engine's routing to rabbit health (health.h).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_ENGINE_RABBITS_H
#define DWS_ENGINE_RABBITS_H

#include "state.h"
#include "util/error.h"

void rabbits_configure (struct dws_engine *e);
json_t *rabbits_job_constraint (struct dws_engine *e);
void rabbits_topology (struct dws_engine *e);
/* the job's hosts changed (or became known) / the job is forgotten */
void rabbits_job (struct dws_engine *e, struct job *job);
void rabbits_job_gone (struct dws_engine *e, struct job *job);
/* The job's computes are about to be given back (its epilog ends): it no
 * longer uses its rabbits.  Without Fluxion their alloc_rabbit is taken
 * away at once, in actions that go out before the epilog-remove. */
void rabbits_job_done (struct dws_engine *e, struct job *job);
void rabbits_mount_failed (struct dws_engine *e, json_t *hosts);
/* Hold the job's ssd vertices (job->held) down in Fluxion; whether
 * Fluxion has confirmed every one; end the hold (each comes up where its
 * rabbit is healthy and no other job holds it).
 */
void rabbits_hold (struct dws_engine *e, struct job *job);
bool rabbits_hold_applied (struct dws_engine *e, struct job *job);
/* The ids of the jobs whose hold Fluxion confirmed since the last call. */
json_t *rabbits_holds_applied (struct dws_engine *e);
void rabbits_unhold (struct dws_engine *e, struct job *job);
void rabbits_request (struct dws_engine *e, json_t *msgid);
/* What rabbit health is handed: a wire event (sync/watch of kind Storage,
 * journal, flux-config, graph, fluxion-restart), its flush timer, or the
 * answer to one of its own actions (token kind TOK_HEALTH: engine.c). */
enum health_input {
    HEALTH_STORAGE_SYNC,
    HEALTH_STORAGE_WATCH,
    HEALTH_JOURNAL,
    HEALTH_FLUX_CONFIG,
    HEALTH_GRAPH,
    HEALTH_FLUXION_RESTART,
    HEALTH_FLUSH,
    HEALTH_RESULT,
};
int rabbits_event (struct dws_engine *e, enum health_input in, json_t *event, dws_error_t *err);

/* A spread Lustre job asks Fluxion for gib GiB of ssd: -1 with a message
 * when no set of rabbits could ever give it (more than all the rabbits'
 * Storage capacity, or than max_rabbits of the largest), so the job is
 * refused with that reason instead of Fluxion's "unsatisfiable"; 0 when
 * it may fit or no capacity is known yet.
 */
int rabbits_lustre_fits (struct dws_engine *e, int64_t gib, dws_error_t *err);
/* ssd vertices for a pre-staged job's hold (dws_health_pick), leaving
 * room for the ssd asks in 'leave'. */
json_t *rabbits_pick (struct dws_engine *e, int64_t gib, json_t *avoid, json_t *leave,
                      json_t **reserved, dws_error_t *err);
/* ssd vertices for node-local storage placed before the nodes
 * (dws_health_pick_chassis): *hosts, the chosen chassis' computes. */
json_t *rabbits_pick_chassis (struct dws_engine *e, const struct prestage_split *split,
                              json_t *avoid, json_t *leave, json_t **reserved, json_t **hosts,
                              dws_error_t *err);
/* Whether the graph and the instance's nodes are known (dws_health_known). */
bool rabbits_known (struct dws_engine *e);
/* Changes whenever a rabbit goes up or down (dws_health_updown_gen). */
unsigned long rabbits_updown_gen (struct dws_engine *e);
/* The first of the rabbits ({rabbit: ...}) known to be down, or NULL
 * (dws_health_first_down). */
const char *rabbits_first_down (struct dws_engine *e, json_t *rabbits);
/* How many rabbits could ever hold it (dws_health_chassis_fit). */
int64_t rabbits_chassis_fit (struct dws_engine *e, const struct prestage_split *split);
/* The computes of this instance each rabbit serves (dws_health_chassis_sizes). */
int64_t *rabbits_chassis_sizes (struct dws_engine *e, size_t *n);
/* The GiB of the Fluxion graph's ssd vertices (0: no sizes, or no graph yet). */
int64_t rabbits_graph_gib (struct dws_engine *e);
/* The instance's nodes (its broker ranks), 0 until the resource journal says. */
size_t rabbits_instance_nodes (struct dws_engine *e);

#endif /* !DWS_ENGINE_RABBITS_H */
