/* jobwire.h - every name on the wire between the jobtap plugin's machines
 * and the code that carries out their actions.
 *
 * The plugin's machines, jobsm.h (one per job) and dataout.h (the holds
 * on dependents), return actions ({"action": A, ...}) that dws-jobtap.so
 * (jobctx.c, dataout_hold.c) and flux-dws' job-manager harness
 * (harness/jobmanager.py) carry out, and name the dependencies, prolog,
 * epilog, exception and timer they put on a job.  Each name is listed
 * here once: the C code spells them through these macros and tables
 * (DWS_JOBWIRE_ACTION (RESPOND)), and Python reads them from here
 * (flux_dws.jobsm: ACTIONS, DEPENDENCY, ..., NOTE_PREFIX), so a name
 * cannot be written two ways.  Each is the reference's (users and tests
 * grep for them).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_JOBWIRE_H
#define DWS_JOBWIRE_H

#include <stdbool.h>

/* The dependency a rabbit job holds until its jobspec is rewritten. */
#define DWS_JOBWIRE_DEPENDENCY "dws-create"
/* The dependency a pre-staged job holds, after dws-create, until its
 * storage is set up and its data is in (flux-dws' own: doc/guide/prestage.rst). */
#define DWS_JOBWIRE_PRESTAGE_DEPENDENCY "dws-prestage"
/* The prolog that waits for the file systems to be mounted. */
#define DWS_JOBWIRE_PROLOG "dws-setup"
/* The epilog that waits for them to be torn down. */
#define DWS_JOBWIRE_EPILOG "dws-epilog"
/* The exception type of the plugin's own epilog timeout. */
#define DWS_JOBWIRE_EPILOG_TIMEOUT_EXCEPTION "dws-epilog-timeout"
/* The key of that timeout's timer. */
#define DWS_JOBWIRE_TIMER "epilog-timeout"
/* The prefix of the dependency a dependent held by dataout.h carries
 * ("dws-dataout:<X in f58 plain>"). */
#define DWS_JOBWIRE_DATAOUT_DEPENDENCY "dws-dataout"
/* The job-manager.dws.<method> the dws service asks to add or remove one
 * of flux-dws' own dependencies on a job in NEW or DEPEND:
 * {"id": J, "name": N, "add": true|false}; N must be one of
 * DWS_JOBWIRE_SERVICE_DEPENDENCIES. */
#define DWS_JOBWIRE_DEPENDENCY_METHOD "dependency"
/* The topic of every job-manager.dws.<method> request the dws service
 * sends the plugin (the methods the plugin registers with
 * flux_jobtap_service_register); a topic is DWS_JOBWIRE_TOPIC (method):
 * DWS_JOBWIRE_TOPIC (DWS_JOBWIRE_EPILOG_REMOVE_METHOD). */
#define DWS_JOBWIRE_TOPIC_PREFIX "job-manager.dws."
#define DWS_JOBWIRE_TOPIC(method) DWS_JOBWIRE_TOPIC_PREFIX method
/* The jobspec rewrite after dws.create: {"id", "resources", ...}. */
#define DWS_JOBWIRE_RESOURCE_UPDATE_METHOD "resource-update"
/* The file systems are mounted: end the dws-setup prolog. */
#define DWS_JOBWIRE_PROLOG_REMOVE_METHOD "prolog-remove"
/* They are torn down: end the dws-epilog epilog. */
#define DWS_JOBWIRE_EPILOG_REMOVE_METHOD "epilog-remove"
/* A pre-staged job's storage is ready: remove its dws-prestage dependency. */
#define DWS_JOBWIRE_PRESTAGE_REMOVE_METHOD "prestage-remove"
/* A pre-staged job's node-local storage is given up (its nodes did not
 * come within rabbit.prestage_node_wait): {"id", "resources", "constraint"}
 * asks for the usual resources again and takes the pin's constraint out
 * (flux-dws' own: doc/guide/prestage.rst). */
#define DWS_JOBWIRE_PRESTAGE_UNPIN_METHOD "prestage-unpin"
/* A released job's DataOut begins / ends: hold its dependents, then let
 * them go (dataout.h). */
#define DWS_JOBWIRE_DATAOUT_BEGIN_METHOD "dataout-begin"
#define DWS_JOBWIRE_DATAOUT_END_METHOD "dataout-end"
/* The dependency a job over its user's [rabbit.limits] waits on. */
#define DWS_JOBWIRE_LIMIT_DEPENDENCY "dws-limit"
/* The dependencies of the waits the service owns, which it adds or
 * removes through that method (flux-dws' own: the plugin does not count
 * them as another plugin's).  dws-prestage is only removed through it
 * (the plugin adds it with the resource-update); an older flux-dws
 * service removes it with job-manager.dws.prestage-remove {id}, which the
 * plugin still serves. */
#define DWS_JOBWIRE_SERVICE_DEPENDENCIES(X)                                                    \
    X (LIMIT, DWS_JOBWIRE_LIMIT_DEPENDENCY)                                                    \
    X (PRESTAGE, DWS_JOBWIRE_PRESTAGE_DEPENDENCY)
/* What the exception notes the plugin raises start with. */
#define DWS_JOBWIRE_NOTE_PREFIX "DWS workflow interactions failed: "

/* The actions, by their "action": jobsm.h returns all of them, dataout.h
 * dependency-add, dependency-remove, raise and post-event. */
#define DWS_JOBWIRE_ACTIONS(X)                                                                 \
    X (DEPENDENCY_ADD, "dependency-add")                                                       \
    X (DEPENDENCY_REMOVE, "dependency-remove")                                                 \
    X (SUBSCRIBE, "subscribe")                                                                 \
    X (RPC, "rpc")                                                                             \
    X (LOOKUP_R, "lookup-R")                                                                   \
    X (PROLOG_START, "prolog-start")                                                           \
    X (PROLOG_FINISH, "prolog-finish")                                                         \
    X (EPILOG_START, "epilog-start")                                                           \
    X (EPILOG_FINISH, "epilog-finish")                                                         \
    X (TIMER_START, "timer-start")                                                             \
    X (TIMER_STOP, "timer-stop")                                                               \
    X (RAISE, "raise")                                                                         \
    X (JOBSPEC_UPDATE, "jobspec-update")                                                       \
    X (POST_EVENT, "post-event")                                                               \
    X (RESPOND, "respond")                                                                     \
    X (RESPOND_ERROR, "respond-error")                                                         \
    X (LOG, "log")

enum dws_jobwire_action {
#define DWS_JOBWIRE_ACTION_ENUM(id, name) DWS_JOBWIRE_ACT_##id,
    DWS_JOBWIRE_ACTIONS (DWS_JOBWIRE_ACTION_ENUM)
#undef DWS_JOBWIRE_ACTION_ENUM
        DWS_JOBWIRE_ACT_COUNT
};

/* An action's name by its id: DWS_JOBWIRE_ACTION (RESPOND). */
#define DWS_JOBWIRE_ACTION(id) dws_jobwire_action_name (DWS_JOBWIRE_ACT_##id)

/* Whether a dependency is one the plugin holds for the dws service itself
 * (dws-create, and the service's own, dws-limit and dws-prestage), not one
 * of another plugin's that keeps a job's dws.create back. */
bool dws_jobwire_own_dependency (const char *name);

/* An action's name ("respond-error"), or NULL out of range. */
const char *dws_jobwire_action_name (int action);

/* The action a name stands for, or -1 for a name that is none. */
int dws_jobwire_action_parse (const char *name);

int dws_jobwire_action_count (void);

/* Whether name is one of DWS_JOBWIRE_SERVICE_DEPENDENCIES (1) or not (0). */
int dws_jobwire_service_dependency (const char *name);

#endif /* !DWS_JOBWIRE_H */
