/* jobkvs.h - the keys of a rabbit job's record in its KVS directory.
 *
 * The engine writes what a job did with its rabbits under the job's KVS
 * directory (RFC 16), so that `flux dws job` and `flux dws wait` read it
 * after the job and the service are gone.  Each key is listed here once:
 * the engine spells them through these macros, and Python reads them
 * from here (flux_dws.jobrecord: KVS_WORKFLOW, ...), so a key cannot be
 * written two ways.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_JOBKVS_H
#define DWS_JOBKVS_H

/* Every key starts so (the job's own data, RFC 16's data.<name>). */
#define DWS_JOBKVS_PREFIX "data.dws."
/* The job as `flux dws job` showed it last (the engine's view). */
#define DWS_JOBKVS_JOB DWS_JOBKVS_PREFIX "job"
/* The Workflow as it last was (directives, state, env). */
#define DWS_JOBKVS_WORKFLOW DWS_JOBKVS_PREFIX "workflow"
/* data.dws.timing.<state>, the state's name in lower case: DWS' own
 * time in the state (its elapsedTimeLastState). */
#define DWS_JOBKVS_TIMING DWS_JOBKVS_PREFIX "timing."
/* data.dws.timeline.<state>: when the state was asked for and found done
 * ({"asked", "done"}, seconds since the epoch). */
#define DWS_JOBKVS_TIMELINE DWS_JOBKVS_PREFIX "timeline."
/* What became of copy_out: {"state": complete, failed or skipped, "time",
 * "error"?, "explanation"?}. */
#define DWS_JOBKVS_DATAOUT DWS_JOBKVS_PREFIX "dataout"
/* When the storage was torn down: {"state": "complete", "time"}. */
#define DWS_JOBKVS_TEARDOWN DWS_JOBKVS_PREFIX "teardown"
/* The data movements, as DWS last showed them. */
#define DWS_JOBKVS_DATAMOVEMENTS DWS_JOBKVS_PREFIX "datamovements"
/* The user container's log. */
#define DWS_JOBKVS_CONTAINER_LOG DWS_JOBKVS_PREFIX "container_log"
/* The exception's note and what it means, in plain words (explain.h). */
#define DWS_JOBKVS_EXPLANATION DWS_JOBKVS_PREFIX "explanation"

/* The reference's names for a rabbit job beside its keys: the memo that
 * gives its Workflow's name (job-list shows it: a job with it has had a
 * Workflow), and the KVS links, the Workflow's key as rabbit_workflow
 * and each state's timing key as rabbit_<state>_timing (the state's name
 * in lower case between the two). */
#define DWS_JOBKVS_MEMO_WORKFLOW "rabbit_workflow"
#define DWS_JOBKVS_LINK_TIMING_PREFIX "rabbit_"
#define DWS_JOBKVS_LINK_TIMING_SUFFIX "_timing"

#endif /* !DWS_JOBKVS_H */
