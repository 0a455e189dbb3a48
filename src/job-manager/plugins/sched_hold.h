/* sched_hold.h - dws-jobtap.so keeps rabbit jobs in PRIORITY until the
 * scheduler can judge them (libdws schedhold.h decides; this carries it
 * out: the priority left unavailable, the job reprioritized, the polls of
 * dws.ready and of Fluxion's up nodes, the timer).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_JOBTAP_SCHED_HOLD_H
#define DWS_JOBTAP_SCHED_HOLD_H

#include <flux/core.h>
#include <flux/jobtap.h>
#include <jansson.h>

/* Make the machine with the plugin's conf (sched-hold-timeout; NULL for
 * none) and ask once whether the service is ready.  -1 (logged) on a bad
 * conf or out of memory.
 */
int sched_hold_init (flux_plugin_t *p, json_t *conf);

/* job.state.priority of a rabbit job (args: the callback's, whose priority
 * is set unavailable when the job must wait).  'loaded': the job was
 * found in PRIORITY at a plugin load (a plugin before this one may have
 * held it): it is let go if it may.
 */
void sched_hold_priority (flux_plugin_t *p, flux_jobid_t id, json_t *jobspec,
                          flux_plugin_arg_t *args, bool loaded);

/* job.priority.get: a held job's priority stays unavailable. */
void sched_hold_priority_get (flux_plugin_t *p, flux_jobid_t id, flux_plugin_arg_t *args);

/* Job `id` left PRIORITY (sched, inactive). */
void sched_hold_leave (flux_plugin_t *p, flux_jobid_t id);

#endif /* !DWS_JOBTAP_SCHED_HOLD_H */
