/* release.h - a job's computes back to Flux once PostRun is done, while
 * DataOut and Teardown go on (release_computes = "after-unmount").
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_ENGINE_RELEASE_H
#define DWS_ENGINE_RELEASE_H

#include "engine/advance.h"
#include "engine/state.h"
#include "util/error.h"

/* dw_release_computes / release_computes: "after-unmount" or
 * "after-teardown" (NULL: RELEASE_DEFAULT); anything else fails with
 * rabbitconf's words (dws_rabbitconf_release_computes).
 */
int release_mode_parse (json_t *v, enum release_mode *mode, dws_error_t *err);
const char *release_mode_name (enum release_mode mode);

/* PostRun is done and the decider releases the computes (the job is in
 * phase releasing): hold the job's ssds down in Fluxion (their paths
 * from the job's R), and once Fluxion has answered every hold end the
 * job's epilog, then ask for DataOut.  Without Fluxion nothing is held.
 */
void release_start (struct dws_engine *e, struct job *job, const struct step *st);
/* The answer to the DataOut patch that carries the held ssds
 * (TOK_DATAOUT_HELD): written, the epilog may end (the decider looks);
 * failed, as any
 * desiredState patch's (workflow_on_state). */
void release_on_held_written (struct dws_engine *e, enum token_kind kind, struct job *job,
                              json_t *event);
void release_hold (struct dws_engine *e, struct job *job, const struct step *st);
void release_epilog (struct dws_engine *e, struct job *job, const struct step *st);
void release_epilog_again (struct dws_engine *e, struct job *job, const struct step *st);
void release_released (struct dws_engine *e, struct job *job, const struct step *st);
void release_dataout_held (struct dws_engine *e, struct job *job, const struct step *st);
/* After rabbit health moved: the jobs whose holds Fluxion has confirmed
 * are looked at (NEWS_LOOK), to be released at the event's end.
 */
void release_check (struct dws_engine *e);
/* The release timer fired and Fluxion has not confirmed the holds: the
 * computes are kept until Teardown, DataOut goes on.
 */
void release_keep_computes (struct dws_engine *e, struct job *job, const struct step *st);
/* The ids of released jobs whose DataOut has not ended (dws.released:
 * the jobtap plugin, loaded again, holds their dependents).
 */
json_t *release_dataout_pending (struct dws_engine *e);
/* A Workflow adopted after a restart with its ssds held: hold them again. */
void release_adopt (struct dws_engine *e, struct job *job, const char *held);

#endif /* !DWS_ENGINE_RELEASE_H */
