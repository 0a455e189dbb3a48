/* jobsm_phase.c - the jobtap plugin's job phases and their transitions,
 * as data (jobsm_phase.h).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <stdbool.h>
#include <string.h>

#include "jobsm_phase.h"

static const char *const names[JOBSM_PHASE_COUNT] = {
#define JOBSM_PHASE_NAME(id, name, dw) [JOBSM_PHASE_##id] = name,
    JOBSM_PHASES (JOBSM_PHASE_NAME)
#undef JOBSM_PHASE_NAME
};

static const bool dw_phases[JOBSM_PHASE_COUNT] = {
#define JOBSM_PHASE_DW(id, name, dw) [JOBSM_PHASE_##id] = dw,
    JOBSM_PHASES (JOBSM_PHASE_DW)
#undef JOBSM_PHASE_DW
};

bool jobsm_phase_dw (enum jobsm_phase p)
{
    return p >= 0 && p < JOBSM_PHASE_COUNT && dw_phases[p];
}

static const char *const event_names[JOBSM_EV_COUNT] = {
    [JOBSM_EV_RELOADED_NEW] = "reloaded in NEW", [JOBSM_EV_NO_DW] = "no dw",
    [JOBSM_EV_HOLD] = "hold dws-create",         [JOBSM_EV_RESOURCES] = "resources",
    [JOBSM_EV_PROLOG] = "prolog-start",          [JOBSM_EV_PROLOG_END] = "prolog-finish",
    [JOBSM_EV_EPILOG] = "epilog-start",          [JOBSM_EV_EPILOG_END] = "epilog-finish",
    [JOBSM_EV_RELOADED] = "reloaded",
};

#define P(id) (1u << JOBSM_PHASE_##id)

/* Each event: the phases it may come in, and where it leads. */
static const struct transition {
    unsigned from;
    enum jobsm_phase to;
} table[JOBSM_EV_COUNT] = {
    [JOBSM_EV_RELOADED_NEW] = {P (UNKNOWN), JOBSM_PHASE_AWAIT_DEPEND},
    /* a depend after a reload in DEPEND looks at the jobspec again */
    [JOBSM_EV_NO_DW] = {P (UNKNOWN) | P (AWAIT_DEPEND) | P (DEPEND), JOBSM_PHASE_INERT},
    [JOBSM_EV_HOLD] = {P (UNKNOWN) | P (AWAIT_DEPEND) | P (DEPEND), JOBSM_PHASE_DEPEND},
    [JOBSM_EV_RESOURCES] = {P (DEPEND), JOBSM_PHASE_SCHED},
    [JOBSM_EV_PROLOG] = {P (DEPEND) | P (SCHED), JOBSM_PHASE_PROLOG},
    [JOBSM_EV_PROLOG_END] = {P (PROLOG), JOBSM_PHASE_RUN},
    /* a job that never ran (cancelled in DEPEND or SCHED) has its epilog too */
    [JOBSM_EV_EPILOG] = {P (DEPEND) | P (SCHED) | P (PROLOG) | P (RUN), JOBSM_PHASE_EPILOG},
    [JOBSM_EV_EPILOG_END] = {P (EPILOG), JOBSM_PHASE_DONE},
    /* to: where the job manager's state puts it (jobsm_phase_reloaded) */
    [JOBSM_EV_RELOADED] = {P (UNKNOWN), JOBSM_PHASE_COUNT},
};

#undef P

const char *jobsm_phase_name (enum jobsm_phase p)
{
    return p >= 0 && p < JOBSM_PHASE_COUNT ? names[p] : "?";
}

const char *jobsm_phase_event_name (enum jobsm_phase_event ev)
{
    return ev >= 0 && ev < JOBSM_EV_COUNT ? event_names[ev] : "?";
}

int jobsm_phase_next (enum jobsm_phase from, enum jobsm_phase_event ev, enum jobsm_phase *to,
                      dws_error_t *err)
{
    if (ev < 0 || ev >= JOBSM_EV_COUNT || from < 0 || from >= JOBSM_PHASE_COUNT
        || !(table[ev].from & (1u << from)))
        return dws_errorf (err, "event '%s' not expected in phase '%s'",
                           jobsm_phase_event_name (ev), jobsm_phase_name (from));
    *to = table[ev].to;
    return 0;
}

enum jobsm_phase jobsm_phase_of_reload (const char *state, bool valid_dw, bool prolog,
                                        bool epilog, bool epilog_due)
{
    if (!valid_dw)
        return JOBSM_PHASE_INERT;
    if (!strcmp (state, "DEPEND"))
        return JOBSM_PHASE_DEPEND;
    if (!strcmp (state, "RUN"))
        return prolog ? JOBSM_PHASE_PROLOG : JOBSM_PHASE_RUN;
    if (!strcmp (state, "CLEANUP")) {
        /* an inactive epilog is done unless the job has yet to finish */
        if (epilog)
            return JOBSM_PHASE_EPILOG;
        return epilog_due ? JOBSM_PHASE_RUN : JOBSM_PHASE_DONE;
    }
    return JOBSM_PHASE_SCHED; /* PRIORITY, SCHED */
}

int jobsm_phase_reloaded (enum jobsm_phase from, enum jobsm_phase reloaded, enum jobsm_phase *to,
                          dws_error_t *err)
{
    enum jobsm_phase any;
    if (jobsm_phase_next (from, JOBSM_EV_RELOADED, &any, err) < 0)
        return -1;
    if (reloaded < 0 || reloaded >= JOBSM_PHASE_COUNT)
        return dws_errorf (err, "event 'reloaded' leads to no phase");
    *to = reloaded;
    return 0;
}
