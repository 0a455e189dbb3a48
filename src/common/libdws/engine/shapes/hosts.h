/* hosts.h - the engine's host lists.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_ENGINE_HOSTS_H
#define DWS_ENGINE_HOSTS_H

#include <jansson.h>
#include "util/error.h"

/* The hosts of R's execution.nodelist as one RFC 29 host list. */
char *hosts_of_R (json_t *R, dws_error_t *err);
/* The names of hosts minus those of minus (NULL = none), as an array. */
json_t *hosts_minus (const char *hosts, const char *minus, dws_error_t *err);

#endif /* !DWS_ENGINE_HOSTS_H */
