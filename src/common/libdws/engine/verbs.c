/* verbs.c - the one table that carries out the decider's steps.
 *
 * Each step kind (decide.h) has one verb, a function of the file that
 * owns what it does; advance_job () (advance.c) is the only caller.  Nothing
 * else in the engine tests a step's kind: a new step is a case of
 * decide.c and a row here.  A step without a verb changes only what
 * decide () records (STEP_TEARDOWN_LATER: toredown).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include "admit.h"
#include "datain.h"
#include "fault.h"
#include "prestage.h"
#include "progress.h"
#include "release.h"
#include "request.h"
#include "verbs.h"
#include "workflow.h"

static const struct verbs table = {
    .done = progress_completed,
    .step = {
        [STEP_CREATE] = workflow_send_create,
        [STEP_LOOK] = progress_look,
        [STEP_ADOPT] = progress_adopt,
        [STEP_PROPOSAL] = progress_proposal,
        [STEP_ASK] = workflow_ask,
        [STEP_COMPUTES] = progress_computes,
        [STEP_PROLOG] = progress_prolog,
        [STEP_READ_TOKEN] = progress_read_token,
        [STEP_PROLOG_REMOVE] = progress_prolog_remove,
        [STEP_RELEASE] = release_start,
        [STEP_TEARDOWN] = workflow_teardown_begin,
        [STEP_TEARDOWN_PATCH] = workflow_teardown_patch,
        [STEP_MARK_EPILOG] = workflow_mark_epilog,
        [STEP_DELETE] = workflow_delete,
        [STEP_FAIL] = workflow_fail,
        [STEP_FAIL_RECORD] = workflow_fail_record,
        [STEP_FAIL_RAISE] = workflow_fail_raise,
        [STEP_FAIL_AGAIN] = workflow_fail_again,
        [STEP_POSTRUN_FAILED] = fault_postrun_failed,
        [STEP_READ_CULPRITS] = fault_read_culprits,
        [STEP_SKIP_DATAOUT] = fault_skip_dataout,
        [STEP_KEEP_COMPUTES] = release_timeout,
        [STEP_BREAKDOWNS] = progress_breakdowns,
        [STEP_RESOURCES] = progress_send_resources,
        [STEP_RESOURCES_AGAIN] = progress_resources_again,
        [STEP_WAIT_MAP] = progress_wait_map,
        [STEP_READ_SCHED_R] = progress_read_sched_R,
        [STEP_HOSTS_PATCH] = progress_hosts_patch,
        [STEP_SERVERS] = progress_servers,
        [STEP_RECORD] = progress_record,
        [STEP_FINALIZER] = workflow_finalizer,
        [STEP_FAIL_OUTSIDE] = progress_fail_outside,
        [STEP_RECREATE] = progress_recreate,
        [STEP_END_EPILOG] = progress_end_epilog,
        [STEP_RAISE] = progress_raise,
        [STEP_FORGET] = progress_forget,
        [STEP_FORCE_READY] = fault_force_ready_again,
        [STEP_NODE_FAILURE] = fault_node_failure,
        [STEP_TIMEOUT] = workflow_fail,
        [STEP_DRAIN_FAIL] = fault_drain_fail,
        [STEP_ABORT_READS] = fault_abort_reads,
        [STEP_HOLD] = release_hold,
        [STEP_RELEASED] = release_released,
        [STEP_END_WAITING] = request_end_waiting,
        [STEP_WAIT_LIMIT] = admit_wait,
        [STEP_LIMIT_REMOVE] = request_limit_remove,
        [STEP_LIMIT_WHY] = admit_still_waiting,
        [STEP_ADMIT] = admit_go,
        [STEP_JOIN_CREATE] = request_join_create,
        [STEP_CREATE_ANSWER] = request_create_answer,
        [STEP_SETUP_ANSWER] = request_setup_answer,
        [STEP_RECORD_HOSTS] = request_record_hosts,
        [STEP_BEGIN_EPILOG] = request_begin_epilog,
        [STEP_EPILOG_AGAIN] = request_epilog_again,
        [STEP_END_AWAY] = request_end_away,
        [STEP_READ_R] = request_read_R,
        [STEP_HOLD_ANSWER] = request_hold_answer,
        [STEP_PLACE_LUSTRE] = request_place_lustre,
        [STEP_SETUP_FROM_R] = request_setup_from_R,
        [STEP_FROM_JOBSPEC] = request_from_jobspec,
        [STEP_CREATE_LATER] = request_create_later,
        [STEP_CREATE_FROM_JOBSPEC] = request_create_from_jobspec,
        [STEP_ABORT_NOTED] = fault_abort_noted,
        [STEP_PRESTAGE_WEIGH] = progress_prestage_weigh,
        [STEP_DATAIN_READ] = datain_read,
        [STEP_DATAIN_WATCH] = datain_watch,
        [STEP_DATAIN_STALLED] = datain_stalled,
        [STEP_PRESTAGE_LOST] = prestage_lost,
        [STEP_PRESTAGE_NO] = prestage_no,
        [STEP_PRESTAGE_TOO_BIG] = prestage_too_big,
        [STEP_PRESTAGE_FULL] = prestage_full,
        [STEP_PRESTAGE_REFUSE] = prestage_refuse,
        [STEP_PRESTAGE_YES] = prestage_yes,
        [STEP_PRESTAGE_RECORD] = prestage_record,
        [STEP_PRESTAGE_PICK] = prestage_pick,
        [STEP_PRESTAGE_HOLD] = prestage_hold,
        [STEP_PRESTAGE_VERIFY] = prestage_verify,
        [STEP_PRESTAGED] = prestage_ready,
        [STEP_PRESTAGE_GIVE_UP] = prestage_give_up,
        [STEP_PRESTAGE_UNPIN] = progress_unpin,
        [STEP_RESTAGE] = prestage_again,
    },
};

const struct verbs *verbs_table (void)
{
    return &table;
}
