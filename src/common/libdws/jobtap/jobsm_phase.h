/* jobsm_phase.h - where a rabbit job is in the jobtap plugin's hands: one
 * named phase per job machine (jobsm.c), changed only through
 * jobsm_phase_next's table.
 *
 * A phase is what the plugin holds the job by: nothing yet, the
 * dws-create dependency, the dws-setup prolog, the dws-epilog epilog.
 * Facts that are not phases (a dws.create sent or kept back, a start
 * posted, an R lookup or RPCs outstanding, a timer running) stay flags of
 * the machine.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_JOBSM_PHASE_H
#define DWS_JOBSM_PHASE_H

#include <stdbool.h>

#include "util/error.h"

/* In the order a job goes through them.  The third column: whether a job
 * in the phase has a dw the plugin acts on (it held, holds or held the
 * job for its rabbit storage); jobsm_phase_dw () reads it.
 */
#define JOBSM_PHASES(X)                                                                       \
    X (UNKNOWN, "unknown", false)           /* no depend or reload event yet */               \
    X (AWAIT_DEPEND, "await-depend", false) /* reloaded in NEW: its depend event is due */    \
    X (INERT, "inert", false)               /* no dw, or a dw job.validate would refuse */    \
    X (DEPEND, "depend", true)              /* dws-create held (dws.create sent or kept back) */ \
    X (SCHED, "sched", true)                /* jobspec updated, dws-create removed */         \
    X (PROLOG, "prolog", true)              /* dws-setup held: file systems being mounted */  \
    X (RUN, "run", true)                    /* the prolog over (or never held), no epilog yet */ \
    X (EPILOG, "epilog", true)              /* dws-epilog held: unmount, data out, teardown */ \
    X (DONE, "done", true)                  /* the epilog over */

enum jobsm_phase {
#define JOBSM_PHASE_ENUM(id, name, dw) JOBSM_PHASE_##id,
    JOBSM_PHASES (JOBSM_PHASE_ENUM)
#undef JOBSM_PHASE_ENUM
        JOBSM_PHASE_COUNT
};

/* What moves a job from one phase to the next. */
enum jobsm_phase_event {
    JOBSM_EV_RELOADED_NEW, /* reload in NEW */
    JOBSM_EV_NO_DW,        /* depend or reload: nothing for the plugin to do */
    JOBSM_EV_HOLD,         /* depend or reload: dws-create is held */
    JOBSM_EV_RESOURCES,    /* resource-update: the jobspec updated, dws-create removed */
    JOBSM_EV_PROLOG,       /* run: dws-setup held */
    JOBSM_EV_PROLOG_END,   /* dws-setup finished (mounted, failed or cancelled) */
    JOBSM_EV_EPILOG,       /* dws-epilog held */
    JOBSM_EV_EPILOG_END,   /* dws-epilog finished */
    JOBSM_EV_RELOADED,     /* reload with a valid dw, past NEW: the phase the job
                            * manager's state says (jobsm_phase_reloaded) */
    JOBSM_EV_COUNT
};

const char *jobsm_phase_name (enum jobsm_phase p);

/* Whether a job in phase p has a valid dw the plugin acts on (the table's
 * third column): false for UNKNOWN, AWAIT_DEPEND and INERT.
 */
bool jobsm_phase_dw (enum jobsm_phase p);
const char *jobsm_phase_event_name (enum jobsm_phase_event ev);

/* The phase `ev` leads to from `from`, or -1 with "event 'E' not expected
 * in phase 'P'" when the table has no such transition.
 */
int jobsm_phase_next (enum jobsm_phase from, enum jobsm_phase_event ev, enum jobsm_phase *to,
                      dws_error_t *err);

/* The phase a job the plugin is loaded over is in, from what the job
 * manager knows of it: its state (DEPEND, PRIORITY, SCHED, RUN, CLEANUP;
 * not NEW), whether it has a valid dw, whether it holds the dws-setup
 * prolog or the dws-epilog epilog, and whether its epilog is still to
 * start (it started and has not finished).
 */
enum jobsm_phase jobsm_phase_of_reload (const char *state, bool valid_dw, bool prolog,
                                        bool epilog, bool epilog_due);

/* JOBSM_EV_RELOADED through the table: `from` must take it, and it leads
 * to `reloaded` (jobsm_phase_of_reload's answer); -1 with the message of
 * jobsm_phase_next otherwise.
 */
int jobsm_phase_reloaded (enum jobsm_phase from, enum jobsm_phase reloaded, enum jobsm_phase *to,
                          dws_error_t *err);

#endif /* !DWS_JOBSM_PHASE_H */
