/* wire.h - every name on the wire between the dws engine and its shell.
 *
 * The dws service's Python shell feeds the engine events ({"type": T,
 * ...}) and carries out the actions it returns ({"action": A, ...}); rabbit
 * health (health.h) returns actions of the same kinds.  Each name is
 * listed here once: the C code spells them through these tables
 * (dws_wire_action_name (DWS_WIRE_ACT_RESPOND)), and Python reads them
 * from here (flux_dws.engine.EVENTS, ACTIONS, HEALTH_FLUSH_TIMER,
 * NOTE_PREFIX), so a
 * name cannot be written two ways.  What each carries is described in
 * doc/guide/service.rst; a test holds that guide, the Python handlers and
 * this list to one another.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_WIRE_H
#define DWS_WIRE_H

/* Events the engine takes, by their "type". */
#define DWS_WIRE_EVENTS(X)                                                                     \
    X (REQUEST, "request")                                                                     \
    X (SYNC, "sync")                                                                           \
    X (WATCH, "watch")                                                                         \
    X (K8S_RESULT, "k8s-result")                                                               \
    X (RPC_RESULT, "rpc-result")                                                               \
    X (JOB_INFO, "job-info")                                                                   \
    X (ORPHANS, "orphans")                                                                     \
    X (TIMER, "timer")                                                                         \
    X (JOURNAL, "journal")                                                                     \
    X (FLUX_CONFIG, "flux-config")                                                             \
    X (GRAPH, "graph")                                                                         \
    X (FLUXION_RESTART, "fluxion-restart")

/* Actions the engine and rabbit health return, by their "action". */
#define DWS_WIRE_ACTIONS(X)                                                                    \
    X (RESPOND, "respond")                                                                     \
    X (RESPOND_ERROR, "respond-error")                                                         \
    X (RAISE, "raise")                                                                         \
    X (POST_EVENT, "post-event")                                                               \
    X (K8S, "k8s")                                                                             \
    X (RPC, "rpc")                                                                             \
    X (MEMO, "memo")                                                                           \
    X (KVS, "kvs")                                                                             \
    X (JOB_INFO, "job-info")                                                                   \
    X (ACTIVE_JOBS, "active-jobs")                                                             \
    X (TIMER_START, "timer-start")                                                             \
    X (TIMER_STOP, "timer-stop")                                                               \
    X (DRAIN, "drain")                                                                         \
    X (LOG, "log")

enum dws_wire_event {
#define DWS_WIRE_EVENT_ENUM(id, name) DWS_WIRE_EV_##id,
    DWS_WIRE_EVENTS (DWS_WIRE_EVENT_ENUM)
#undef DWS_WIRE_EVENT_ENUM
        DWS_WIRE_EV_COUNT
};

enum dws_wire_action {
#define DWS_WIRE_ACTION_ENUM(id, name) DWS_WIRE_ACT_##id,
    DWS_WIRE_ACTIONS (DWS_WIRE_ACTION_ENUM)
#undef DWS_WIRE_ACTION_ENUM
        DWS_WIRE_ACT_COUNT
};

/* An action's or event type's name by its id: DWS_WIRE_ACTION (RESPOND). */
#define DWS_WIRE_ACTION(id) dws_wire_action_name (DWS_WIRE_ACT_##id)
#define DWS_WIRE_EVENT(id) dws_wire_event_name (DWS_WIRE_EV_##id)

/* The timer key of rabbit health's batched flush, the one timer the shell
 * fires itself (dws.watch_test flushes health at once). */
#define DWS_WIRE_HEALTH_FLUSH_TIMER "health-flush"

/* What the note of every exception the engine raises (its "raise"
 * actions) starts with, the reference's words (users and tests grep for
 * them); jobwire.h has the jobtap plugin's. */
#define DWS_WIRE_NOTE_PREFIX "DWS/Rabbit interactions failed: "

/* An event type's or action's name, or NULL out of range. */
const char *dws_wire_event_name (int event);
const char *dws_wire_action_name (int action);

/* The event type or action a name stands for, or -1 for none. */
int dws_wire_event_parse (const char *name);
int dws_wire_action_parse (const char *name);

int dws_wire_event_count (void);
int dws_wire_action_count (void);

/* DWS_WIRE_HEALTH_FLUSH_TIMER, for Python. */
const char *dws_wire_health_flush_timer (void);

#endif /* !DWS_WIRE_H */
