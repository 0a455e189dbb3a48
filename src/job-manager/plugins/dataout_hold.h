/* dataout_hold.h - dws-jobtap.so's hold on the dependents of jobs whose
 * computes went back before their copy_out ended (libdws dataout.h
 * decides; this carries it out with flux_jobtap_*).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_JOBTAP_DATAOUT_HOLD_H
#define DWS_JOBTAP_DATAOUT_HOLD_H

#include <stdbool.h>

#include <flux/core.h>
#include <flux/jobtap.h>
#include <jansson.h>

/* Make the machine, register job-manager.dws.dataout-begin and
 * dataout-end (owner only), and ask the service which jobs' DataOut is
 * under way (dws.released: a plugin loaded again; no service is no error).
 */
int dataout_hold_init (flux_plugin_t *p);

/* Job `id` is in DEPEND (reload: found there at a plugin load) with this
 * jobspec: its afterok/afterany/afternotok targets whose DataOut is under
 * way hold it.
 */
void dataout_hold_depend (flux_plugin_t *p, flux_jobid_t id, json_t *jobspec, bool reload);

/* Job `id` left DEPEND. */
void dataout_hold_leave (flux_plugin_t *p, flux_jobid_t id);

#endif /* !DWS_JOBTAP_DATAOUT_HOLD_H */
