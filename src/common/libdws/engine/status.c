/* status.c - the engine's part of the dws.status answer: its jobs
 * (each one's phase, Workflow state, hosts, timers), the rabbits and computes
 * it knows, the events it has handled.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include "act.h"
#include "jsonio.h"
#include "phase.h"
#include "status.h"
#include "wfstate.h"
#include "workflow.h"

json_t *dws_engine_status (struct dws_engine *e)
{
    json_t *jobs = json_array ();
    for (size_t i = 0; i < e->nbuckets; i++) {
        for (struct job *j = e->table[i]; j; j = j->next) {
            json_t *st = json_object_get (j->wf, "status");
            json_t *o = json_pack ("{s:I s:s s:s s:s s:s s:b s:s s:s s:b s:b}",
                                   "id", j->id, "workflow", j->name,
                                   "phase", phase_name (j->phase),
                                   "desired", wfstate_name (phase_desired (j)),
                                   "state", dws_json_str_or (json_object_get (st, "state"), ""),
                                   "ready", json_is_true (json_object_get (st, "ready")),
                                   "status", dws_json_str_or (json_object_get (st, "status"), ""),
                                   "message", dws_json_str_or (json_object_get (st, "message"), ""),
                                   "epilog", j->epilog, "failed_job", j->excepted);
            if (o && j->hosts)
                json_object_set_new (o, "hosts", json_string (j->hosts));
            if (o && j->failed)
                json_object_set_new (o, "failed", json_string (j->failed));
            if (o) {
                json_t *timers = json_array ();
                for (int k = 0; k < T_NKINDS; k++)
                    if (j->timers & (1u << k))
                        json_array_append_new (
                            timers, json_string (act_timer_name ((enum timer_kind)k)));
                json_object_set_new (o, "timers", timers);
            }
            json_array_append_new (jobs, o);
        }
    }
    return json_pack ("{s:b s:o s:I s:I s:I}", "synced", e->synced, "jobs", jobs, "rabbits",
                      (json_int_t)json_object_size (e->rabbits), "computes",
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
