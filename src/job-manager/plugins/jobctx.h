/* jobctx.h - one rabbit job as dws-jobtap.so sees it: its libdws job
 * machine (jobsm.h) and the Flux things the machine's actions create
 * (outstanding RPCs, the epilog timer).
 *
 * The context lives in the job's jobtap aux, so the job manager destroys
 * it when the job becomes inactive or the plugin is removed; destroying
 * it stops the timer and drops the RPCs still outstanding (their answers
 * can no longer reach anyone).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_JOBTAP_JOBCTX_H
#define DWS_JOBTAP_JOBCTX_H

#include <flux/core.h>
#include <flux/jobtap.h>
#include <jansson.h>

#define JOBCTX_AUX "dws::job"

struct jobctx;

/* Create the context of job `id`, with the plugin's jobtap conf (an
 * object, or NULL), and attach it to the job.  NULL on error (logged).
 */
struct jobctx *jobctx_attach (flux_plugin_t *p, flux_jobid_t id, json_t *conf);

/* The context attached to job `id`, or NULL. */
struct jobctx *jobctx_get (flux_plugin_t *p, flux_jobid_t id);

/* Feed one event (stolen) to the job's machine and carry out the actions.
 * `msg` is the job-manager.dws.* request being handled, if any: respond
 * actions answer it.  A bad event is logged (and a request answered with
 * EPROTO and the machine's message).  Returns -1 on a bad event.
 */
int jobctx_feed (struct jobctx *job, json_t *event, const flux_msg_t *msg);

/* Carry out the actions of dws_jobsm_unrouted (respond-error, log) for a
 * job-manager.dws.* request `msg` that reaches no job's machine.
 */
void jobctx_answer_unrouted (flux_t *h, json_t *acts, const flux_msg_t *msg);

#endif /* !DWS_JOBTAP_JOBCTX_H */
