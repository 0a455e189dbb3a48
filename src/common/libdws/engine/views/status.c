/* status.c - the engine's part of the dws.status answer: its jobs
 * (each one's phase, Workflow state, hosts, timers), the rabbits and computes
 * it knows, the events it has handled.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include "engine/decider/phase.h"
#include "engine/shapes/act.h"
#include "engine/shapes/token.h"
#include "engine/shapes/wfstate.h"
#include "engine/verbs/workflow.h"
#include "status.h"
#include "util/jsonio.h"

json_t *dws_engine_status (struct dws_engine *e)
{
    json_t *jobs = json_array ();
    for (size_t i = 0; i < e->nbuckets; i++) {
        for (struct job *j = e->table[i]; j; j = j->next) {
            const struct wfview *v = &j->view;
            json_t *o = json_pack ("{s:I s:s s:s s:s s:s s:b s:s s:s s:b s:b}",
                                   "id", j->id, "workflow", j->name,
                                   "phase", phase_name (j->phase),
                                   "desired", wfstate_name (phase_desired (j)),
                                   "state", wfstate_name (v->state), "ready", v->ready,
                                   "status", v->status ? v->status : "",
                                   "message", v->message ? v->message : "",
                                   "epilog", j->epilog != EPILOG_NONE, "failed_job", j->excepted);
            if (o && j->hosts)
                json_object_set_new (o, "hosts", json_string (j->hosts));
            if (o && j->failed)
                json_object_set_new (o, "failed", json_string (j->failed));
            if (o && j->released)
                json_object_set_new (o, "released", json_true ());
            if (o && j->held)
                json_object_set_new (o, "held_ssds", json_integer ((json_int_t)json_array_size (j->held)));
            if (o)
                json_object_set_new (o, "phase_seconds", json_real (e->now - j->state_since));
            if (o) {
                json_t *timers = json_array ();
                for (int k = 0; k < T_NKINDS; k++)
                    if (j->timers & (1u << k))
                        json_array_append_new (
                            timers, json_string (token_timer_name ((enum timer_kind)k)));
                json_object_set_new (o, "timers", timers);
            }
            json_array_append_new (jobs, o);
        }
    }
    json_t *phases = json_object ();
    for (int p = 0; p < PHASE_COUNT; p++)
        if (e->phase_jobs[p] > 0)
            json_object_set_new (phases, phase_name ((enum job_phase)p),
                                 json_integer (e->phase_jobs[p]));
    return json_pack ("{s:b s:o s:o s:I s:I s:I}", "synced", e->synced, "jobs", jobs, "phases",
                      phases, "rabbits", (json_int_t)json_object_size (e->rabbits), "computes",
                      (json_int_t)json_object_size (e->compute2rabbit), "events",
                      (json_int_t)e->events);
}

void status_request (struct dws_engine *e, json_t *msgid, json_t *service)
{
    json_t *st = dws_engine_status (e);
    json_t *ids = json_array ();
    size_t i;
    json_t *j;
    json_array_foreach (json_object_get (st, "jobs"), i, j)
        json_array_append (ids, json_object_get (j, "id"));
    json_object_set_new (st, "success", json_true ());
    json_object_set_new (st, "workflows", ids);
    if (json_is_object (service))
        json_object_set (st, "service", service);
    act_respond (e, msgid, st);
}
