/* psi.h - the PersistentStorageInstances the engine knows (their watch).
 *
 * The service watches the PersistentStorageInstances (PSIs) of its
 * namespace as it watches Workflows; the engine keeps, per PSI, what
 * `flux dws persistent` shows and what sharing needs (psi_view), never
 * the object whole.  Nothing here decides: persistent.c answers the
 * requests, act.c explains a refused persistentdw with the owner.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_ENGINE_PSI_H
#define DWS_ENGINE_PSI_H

#include <stddef.h>

#include "engine/state.h"

/* The annotation that lets other users' persistentdw use a PSI (nnf-sos
 * #616: its value "true", any case). */
#define PSI_IGNORE_UID "dataworkflowservices.github.io/ignore-uid"

/* The whole list (a sync event's objects): replaces what was known.
 * owners: {"<uid>": user name} the shell found in passwd for the objects'
 * spec.userID (the event's "owners"; NULL or missing uids: no name). */
void psi_sync (struct dws_engine *e, json_t *objects, json_t *owners);
/* One watch event ("ADDED", "MODIFIED", "DELETED"), its object, owners. */
void psi_watch (struct dws_engine *e, const char *what, json_t *obj, json_t *owners);
/* Whether the first list has come. */
bool psi_synced (struct dws_engine *e);
/* The view of the PSI `name` (borrowed), or NULL:
 *   {"name", "type", "capacity": "<as the directive says>" | null,
 *    "userid": uid | null, "owner": user name | null, "state": status.state ("Creating", "Active",
 *    "Degraded", "Destroying", or "" before nnf-sos set it), "deleting":
 *    b (a deletionTimestamp, or spec.state Destroying), "shared": b (the
 *    ignore-uid annotation), "consumers": [Workflow reference names],
 *    "created": creationTimestamp | null, "resourceVersion"}
 */
json_t *psi_lookup (struct dws_engine *e, const char *name);
/* Every view, by name (borrowed); NULL before the first list. */
json_t *psi_all (struct dws_engine *e);

/* A destroy_persistent of persistent storage another user owns: DWS
 * refuses it only at Teardown (it checks the Workflow's userID against
 * the PSI's, whatever the ignore-uid annotation says: the instance
 * owner's job too), after the job ran and its epilog waited out its
 * timeout.  -1 with "only its owner may destroy persistent storage (#DW
 * destroy_persistent): 'NAME' belongs to USER (uid N)" ("belongs to the
 * user with uid N" without a name) when a destroy_persistent of
 * `directives` names a PSI the engine knows another uid owns; 0 when not,
 * for a PSI it does not know (DWS takes a missing one as destroyed) and
 * before the first list (the caller waits for it where it can).
 */
int psi_check_destroy (struct dws_engine *e, json_t *directives, json_int_t uid,
                       dws_error_t *err);
/* Whether `directives` hold a destroy_persistent (judged by
 * psi_check_destroy once the PSIs are listed). */
bool psi_destroys (json_t *directives);

/* The line that says who owns the storage a refused persistentdw named
 * (explain.h, dws_explain_persistent_owner), written into buf: only for a
 * note the persistent-not-shared row explains, whose "DW Directive N"
 * names a persistentdw of `directives` (the job's) that names a PSI the
 * engine knows the owner of.  NULL otherwise.
 */
const char *psi_owner_line (struct dws_engine *e, json_t *directives, const char *note,
                            char *buf, size_t size);

#endif /* !DWS_ENGINE_PSI_H */
