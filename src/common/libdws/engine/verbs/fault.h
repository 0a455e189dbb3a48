/* fault.h - timers, TransientCondition, failure tolerance, abort.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_ENGINE_FAULT_H
#define DWS_ENGINE_FAULT_H

#include "engine/advance.h"
#include "engine/state.h"

/* a timer-start key came due */
void fault_timer_event (struct dws_engine *e, const char *key);
/* the Workflow's status: start or stop the TransientCondition timer */
void fault_transient_condition (struct dws_engine *e, struct job *job);
/* hosts were given up in the Workflow's current state: if DWS lost the
 * forceReady (reset at the transition it raced), ask for it again */
void fault_force_ready_check (struct dws_engine *e, struct job *job);
/* the answer to the forceReady patch: refused, the job fails */
void fault_on_force_ready (struct dws_engine *e, enum token_kind kind, struct job *job,
                           json_t *event);
/* dws.abort: read what to blame, then Teardown */

/* Answers to the reads a timer or an abort made: Servers for a Setup
 * timeout, ClientMounts for PreRun (its timeout and its
 * TransientCondition) and PostRun, both for an abort.
 */
void fault_on_setup_reads (struct dws_engine *e, enum token_kind kind, struct job *job,
                           json_t *event);
void fault_on_prerun_reads (struct dws_engine *e, enum token_kind kind, struct job *job,
                            json_t *event);
/* PostRun failed: drain exactly the computes still mounted, then fail the
 * job with why (its ClientMounts are read first).
 */
/* The verbs of the fault steps (verbtable.c's table). */
void fault_postrun_failed (struct dws_engine *e, struct job *job, const struct step *st);
void fault_read_culprits (struct dws_engine *e, struct job *job, const struct step *st);
void fault_skip_dataout (struct dws_engine *e, struct job *job, const struct step *st);
void fault_force_ready_again (struct dws_engine *e, struct job *job, const struct step *st);
void fault_node_failure (struct dws_engine *e, struct job *job, const struct step *st);
void fault_abort_reads (struct dws_engine *e, struct job *job, const struct step *st);
void fault_abort_noted (struct dws_engine *e, struct job *job, const struct step *st);
void fault_drain_fail (struct dws_engine *e, struct job *job, const struct step *st);
void fault_on_postrun_failed_reads (struct dws_engine *e, enum token_kind kind,
                                    struct job *job, json_t *event);
void fault_on_postrun_reads (struct dws_engine *e, enum token_kind kind, struct job *job,
                             json_t *event);
void fault_on_abort_mounts (struct dws_engine *e, enum token_kind kind, struct job *job,
                            json_t *event);
void fault_on_abort_servers (struct dws_engine *e, enum token_kind kind, struct job *job,
                             json_t *event);

#endif /* !DWS_ENGINE_FAULT_H */
