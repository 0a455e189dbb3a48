/* verbtable.c - the one table that carries out the decider's steps.
 *
 * Each step kind has one verb, a function of the file that owns what it
 * does, named for that file and the step; both come from one list,
 * DWS_ENGINE_STEPS (decide.h), which makes this table.  advance.c's run ()
 * is the only caller; a verb records facts and news and marks jobs, never
 * runs one.  Nothing else in the engine tests a
 * step's kind: a new step is a case of decide.c and a line of the list.  A step without a verb changes only what
 * decide () records (STEP_TEARDOWN_LATER: toredown).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include "engine/verbs/admit.h"
#include "engine/verbs/datain.h"
#include "engine/verbs/fault.h"
#include "engine/verbs/prestage.h"
#include "engine/verbs/progress.h"
#include "engine/verbs/release.h"
#include "engine/verbs/workflow.h"
#include "request.h"
#include "verbtable.h"

static const struct verbs table = {
    .done = progress_completed,
    .step = {
#define STEP_ROW(name, verb) [STEP_##name] = verb,
        DWS_ENGINE_STEPS (STEP_ROW)
#undef STEP_ROW
    },
};

const struct verbs *verbtable_get (void)
{
    return &table;
}
