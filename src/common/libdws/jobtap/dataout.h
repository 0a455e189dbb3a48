/* dataout.h - the dependents of jobs whose computes went back before
 * their copy_out ended, as a pure state machine (no Flux, no I/O).
 *
 * With release_computes = "after-unmount" a rabbit job X ends (inactive)
 * while DWS still copies its data out.  flux-core's dependency-after
 * releases X's afterok/afterany/afternotok dependents the moment X is
 * inactive, and judges afterok by X's exit alone: a dependent could start
 * before the data it needs has landed, or run although the copy failed.
 * So the jobtap plugin holds each such dependent J with a dependency of its
 * own, "dws-dataout:<X in f58 plain>" (one per X: flux-core never lets a
 * job take a dependency name twice), until X's DataOut ends; then, when the
 * copy_out failed, an afterok dependent gets the exception flux-core gives
 * an afterok dependent whose target failed ("dependency", severity 0).
 * The `after` scheme (J may start once X has started) is not held: X's
 * data plays no part in it.
 *
 * One machine per plugin.  Events in, actions out (a JSON array), as
 * jobsm.h; a bad event fails with a message and leaves the machine as it
 * was.  Job ids are integers (the adapter parses the jobspec's ids).
 *
 * Events, by "type":
 *   depend  {"id":J, "targets":[{"scheme":S, "id":X}...], "reload":B?}
 *       J is in DEPEND (job.state.depend, or a plugin load finding it
 *       there: reload true) with these after* dependencies (other schemes
 *       are ignored).  Each X whose DataOut is pending holds J now
 *       (dependency-add); an afterok on an X whose DataOut already failed
 *       (the last 4096 failures are remembered) raises at once.  With reload, J may already hold some: they are
 *       taken as held, and a later `pending` or `end` removes them.
 *   leave   {"id":J}
 *       J left DEPEND (sched, inactive): forgotten.
 *   begin   {"id":X}
 *       job-manager.dws.dataout-begin: X's computes are being released
 *       and its DataOut is under way.  Every J in DEPEND with X as a
 *       target is held.  Sent before X's epilog ends, on the same
 *       connection, so it is seen before X becomes inactive.
 *   end     {"id":X, "ok":B, "error":S?}
 *       job-manager.dws.dataout-end: X's DataOut ended (ok) or failed (or
 *       its Workflow was lost).  For each J holding on X: afterok and not
 *       ok -> raise; then dependency-remove.
 *   pending {"ids":[X...]}
 *       The service's dws.released answer after a plugin load: the jobs
 *       whose DataOut is still under way.  Holds a reloaded J took on
 *       others are removed; J is held on those (again).
 *
 * Actions, by "action":
 * (their names and the dependency's, DWS_JOBWIRE_DATAOUT_DEPENDENCY, are
 * jobwire.h's):
 *   {"action":"dependency-add"|"dependency-remove", "id":J, "name":N,
 *    "quiet":B}   quiet: a failure (already held / not held) is expected
 *   {"action":"raise", "id":J, "type":"dependency", "severity":0, "note":S}
 *   {"action":"post-event", "id":J, "name":"dws-explanation",
 *    "context":{"type":"dependency", "note":S, "explanation":E}}
 *       right after a raise whose failure explain.h knows (explain.h)
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_DATAOUT_H
#define DWS_DATAOUT_H

#include <jansson.h>

#include "util/error.h"

struct dws_dataout;

struct dws_dataout *dws_dataout_create (void);
void dws_dataout_destroy (struct dws_dataout *d);

/* Feed one event: a new array of actions, or NULL with err set. */
json_t *dws_dataout_event (struct dws_dataout *d, json_t *event, dws_error_t *err);

/* cffi entry point: the event and the actions as JSON text. */
char *dws_dataout_event_json (struct dws_dataout *d, const char *event, dws_error_t *err);

/* How many dependents are tracked and how many jobs' DataOut is pending
 * (for tests and the plugin's stats).
 */
int dws_dataout_tracked (const struct dws_dataout *d);
int dws_dataout_pending (const struct dws_dataout *d);

#endif /* !DWS_DATAOUT_H */
