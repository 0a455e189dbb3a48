/* envwait.h - when a job shell has its rabbit environment.
 *
 * The dws_environment shell plugin reads the job's eventlog (RFC 18, one
 * JSON entry a line) from the start and asks, for each entry, whether the
 * wait is over.  It ends with the variables when the jobtap plugin's
 * `dws_environment` event comes, and with an error when an entry shows the
 * event will never come:
 *
 *   - an `exception` of severity 0: the job is dying;
 *   - a `start` event: the job started without it (dws-jobtap.so was not
 *     loaded when the job ran, or the event was lost);
 *   - the `dws-setup` prolog finishing first: the rabbit setup was
 *     abandoned (status != 0) or finished without an environment.
 *
 * The reference waited for those too, save the last, so a shell whose
 * dws-setup prolog was abandoned waited until the job was killed.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_ENVWAIT_H
#define DWS_ENVWAIT_H

#include <jansson.h>

#include "util/error.h"

#define DWS_ENVWAIT_EVENT "dws_environment"

enum dws_envwait {
    DWS_ENVWAIT_FAIL = -1, /* the event will not come; err says why */
    DWS_ENVWAIT_MORE = 0,  /* keep reading */
    DWS_ENVWAIT_FOUND = 1, /* *vars is {NAME: value} (new reference) */
};

/* Look at one eventlog entry (its JSON text).  A line that is not an
 * eventlog entry, or a dws_environment event whose context is not
 * {"variables":{NAME: string, ...}} with names fit for the environment,
 * is an error naming the problem.
 */
enum dws_envwait dws_envwait_entry (const char *line, json_t **vars, dws_error_t *err);

#endif /* !DWS_ENVWAIT_H */
