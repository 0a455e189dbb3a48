/* action.h - what every decision module that emits actions shares.
 *
 * The engine and rabbit health both return JSON action lists; a log line
 * is the same action from either, built here once.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_ACTION_H
#define DWS_ACTION_H

#include <stdarg.h>

#include <jansson.h>

/* Append {"action":"log","level":level,"message":<printf>} to actions
 * (a message longer than DWS_ERROR_TEXT_MAX is cut).
 */
void dws_act_log (json_t *actions, const char *level, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));
void dws_act_vlog (json_t *actions, const char *level, const char *fmt, va_list ap)
    __attribute__ ((format (printf, 3, 0)));

/* strdup that takes NULL (and gives NULL, as it does when out of memory). */
char *dws_strdup_null (const char *s);

#endif /* !DWS_ACTION_H */
