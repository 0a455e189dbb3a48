/* release.c - a job's computes back to Flux once PostRun is done, while
 * DataOut and Teardown go on (release_computes = "after-unmount").
 *
 * Once the last ClientMount is unmounted nothing of the job remains on
 * its computes, but its rabbit storage does: DataOut copies out of it and
 * Teardown frees it.  Fluxion frees a job's ssd vertices with its nodes,
 * so before the epilog ends they are marked down (rabbit health's holds,
 * ../health/health.h): a vertex down when its job is freed stays out of every
 * match until it is marked up, after Teardown (health does that when the
 * rabbit is healthy and no other hold remains).  The paths come from the
 * job's R in the KVS (the job manager's copy has no scheduling graph).
 *
 *   postrun-done --release--> releasing: read R, hold its ssds
 *   every hold answered       ask for DataOut, the held paths with it
 *   DataOut written           end the epilog (released)
 *   no answer in time, no R   keep the computes until Teardown (a warning)
 *
 * Without Fluxion (--disable-fluxion) there is no early release: the
 * computes are kept until Teardown (the decider, decide.c, says so).
 *
 * The held paths go on the Workflow with the DataOut patch (ANN_HELD),
 * so a restarted service holds them again, and the epilog ends only once
 * that patch is written: a service restarted in between finds the job in
 * CLEANUP with its Workflow in PostRun (it releases it again) or in DataOut
 * with the paths (it ends the epilog), never a job ended with its DataOut
 * not asked for (which it would tear down, its data not copied out).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/rabbitconf.h"
#include "engine/advance.h"
#include "engine/decider/sidestate.h"
#include "engine/job.h"
#include "engine/rabbits.h"
#include "engine/shapes/act.h"
#include "engine/shapes/answer.h"
#include "engine/shapes/token.h"
#include "placement/rssd.h"
#include "release.h"
#include "wire/jobwire.h"
#include "wire/wire.h"
#include "workflow.h"

/* How long Fluxion has to answer the holds before the job keeps its
 * computes until Teardown instead (seconds).
 */
#define RELEASE_HOLD_TIMEOUT 60.0

static const char *const mode_names[] = {
    [RELEASE_DEFAULT] = "default",
    [RELEASE_EARLY] = DWS_RELEASE_AFTER_UNMOUNT,
    [RELEASE_LATE] = DWS_RELEASE_AFTER_TEARDOWN,
};

int release_mode_parse (json_t *v, enum release_mode *mode, dws_error_t *err)
{
    if (!v || json_is_null (v)) {
        *mode = RELEASE_DEFAULT;
        return 0;
    }
    int early = dws_rabbitconf_release_computes (v, err);
    if (early < 0)
        return -1;
    *mode = early ? RELEASE_EARLY : RELEASE_LATE;
    return 0;
}

const char *release_mode_name (enum release_mode mode)
{
    return mode <= RELEASE_LATE ? mode_names[mode] : "?";
}

/* STEP_RELEASED: the ssds are held: the epilog is releasing; DataOut
 * follows, the held paths with it (STEP_DATAOUT_HELD), and the epilog
 * ends once that is written (STEP_RELEASE_EPILOG). */
void release_released (struct dws_engine *e, struct job *job, const struct step *st)
{
    (void)st;
    act_timer_stop (e, job, T_RELEASE);
    sidestate_epilog (e, job, EPILOG_RELEASING);
    advance_mark (e, job, NEWS_LOOK);
}

/* STEP_DATAOUT_HELD: DataOut, the held ssds on the Workflow (ANN_HELD):
 * a restart takes the job up released. */
void release_dataout_held (struct dws_engine *e, struct job *job, const struct step *st)
{
    json_t *none = job->held ? NULL : json_array ();
    char *held = json_dumps (job->held ? job->held : none, JSON_COMPACT);
    json_decref (none);
    workflow_ask_held (e, job, st, held ? json_pack ("{s:s}", ANN_HELD, held) : NULL);
    free (held);
}

/* Before the epilog ends (the same sender, in order): the jobtap plugin
 * holds the job's dependents until DataOut has ended. */
static void dataout_begin (struct dws_engine *e, struct job *job)
{
    act_rpc (e, DWS_JOBWIRE_TOPIC (DWS_JOBWIRE_DATAOUT_BEGIN_METHOD),
             json_pack ("{s:I}", "id", job->id), NULL);
}

/* STEP_RELEASE_EPILOG: DataOut and the held ssds are on the Workflow:
 * the computes go back. */
void release_epilog (struct dws_engine *e, struct job *job, const struct step *st)
{
    (void)st;
    dataout_begin (e, job);
    workflow_epilog_remove (e, job);
    job->released = true;
    act_log (e, "info", "%s: computes released after PostRun (%zu ssd held until Teardown)",
             job->name, json_array_size (job->held));
}

/* STEP_RELEASE_EPILOG_AGAIN: a restarted service took up a released
 * job's Workflow (DataOut, the held paths), and the job is in CLEANUP
 * still: the service before it stopped between the two. */
void release_epilog_again (struct dws_engine *e, struct job *job, const struct step *st)
{
    (void)st;
    act_log (e, "warning", "%s: released, but its epilog is active: ending it", job->name);
    dataout_begin (e, job);
    act_epilog_remove (e, job->id);
}

/* Release without waiting any longer, or not at all: DataOut goes on. */
static void keep_computes (struct dws_engine *e, struct job *job, const char *why)
{
    act_timer_stop (e, job, T_RELEASE);
    act_log (e, "warning", "%s: computes kept until Teardown: %s", job->name, why);
    if (!job->ps.staged)
        rabbits_unhold (e, job); /* a pre-staged job's ssd stays held until Teardown */
    advance_mark (e, job, NEWS_LOOK); /* DataOut */
}

void release_start (struct dws_engine *e, struct job *job, const struct step *st)
{
    (void)st;
    job->info_for = INFO_HOLD;
    act_job_info (e, job, true);
    act_timer_start (e, job, T_RELEASE, RELEASE_HOLD_TIMEOUT);
}

void release_on_held_written (struct dws_engine *e, enum token_kind kind, struct job *job,
                              json_t *event)
{
    if (answer_of (event).ok) {
        job->written |= (uint64_t)1 << TOK_DATAOUT_HELD;
        advance_mark (e, job, NEWS_LOOK);
    }
    else
        workflow_on_state (e, kind, job, event);
}

/* STEP_HOLD: hold the ssds the job's R (job-info's answer,
 * st->said->event) names. */
void release_hold (struct dws_engine *e, struct job *job, const struct step *st)
{
    dws_error_t err;
    json_t *event = st->said->event;
    json_t *R = json_object_get (event, "R");
    job->info_for = INFO_JOBSPEC;
    if (!json_is_true (json_object_get (event, "ok")) || !json_is_object (R)) {
        const char *errstr = json_string_value (json_object_get (event, "errstr"));
        keep_computes (e, job, errstr ? errstr : "the job's R could not be read");
        return;
    }
    json_t *paths = dws_rssd_paths (R, &err);
    if (!paths) {
        keep_computes (e, job, err.text);
        return;
    }
    if (json_array_size (paths) == 0) {
        json_decref (paths); /* no ssd of Fluxion's: nothing it could hand out */
        release_released (e, job, st);
        return;
    }
    json_decref (job->held);
    job->held = paths;
    rabbits_hold (e, job);
    if (rabbits_hold_applied (e, job))
        advance_mark (e, job, NEWS_LOOK);
}

void release_check (struct dws_engine *e)
{
    json_t *ready = rabbits_holds_applied (e);
    size_t i;
    json_t *v;
    json_array_foreach (ready, i, v) {
        struct job *job = job_lookup (e, json_integer_value (v));
        if (job) /* its computes released, or a pre-staged job's ssd verified */
            advance_mark (e, job, NEWS_LOOK);
    }
    json_decref (ready);
}

void release_keep_computes (struct dws_engine *e, struct job *job, const struct step *st)
{
    (void)st;
    char why[128];
    snprintf (why, sizeof (why), "Fluxion did not confirm the ssd holds within %g s",
              RELEASE_HOLD_TIMEOUT);
    keep_computes (e, job, why);
}

void release_adopt (struct dws_engine *e, struct job *job, const char *held)
{
    json_t *paths = held ? json_loads (held, 0, NULL) : NULL;
    if (!json_is_array (paths)) {
        json_decref (paths);
        return;
    }
    json_decref (job->held);
    job->held = paths;
    job->released = true;
    sidestate_epilog (e, job, EPILOG_REMOVED); /* ended when the computes went back */
    rabbits_hold (e, job);
}

json_t *release_dataout_pending (struct dws_engine *e)
{
    json_t *ids = json_array ();
    for (size_t b = 0; b < e->nbuckets; b++)
        for (struct job *j = e->table[b]; j; j = j->next)
            if (j->released && !j->dataout_ended)
                json_array_append_new (ids, json_integer (j->id));
    return ids;
}
