/* rconfig.h - R (Flux RFC 20) from a [resource.config] array.
 *
 * The same resource set `flux R parse-config` makes from a TOML
 * configuration, for machines without flux-core:
 *
 *   [[resource.config]]
 *   hosts = "elcap[1001-12136]"     # required, RFC 29 hostlist
 *   cores = "0-95"                  # optional, RFC 22 idset
 *   gpus = "0-3"                    # optional
 *   properties = ["pbatch"]         # optional
 *
 * Ranks are assigned in the order hosts are first named; a host named by
 * several entries gets the union of their resources and properties.  Every
 * host must end up with at least one core or gpu.  R_lite groups hosts with
 * identical children, ordered by first rank; nodelist and properties are
 * compressed.  Errors name the entry index and the offending value, in
 * flux-core's words where it has them.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_RCONFIG_H
#define DWS_RCONFIG_H

#include <jansson.h>

#include "util/error.h"

json_t *dws_rconfig_to_R (json_t *config, dws_error_t *err);

/* cffi entry point: config as JSON text, R returned as malloc'd JSON text. */
char *dws_rconfig_to_R_json (const char *config_json, dws_error_t *err);

#endif /* !DWS_RCONFIG_H */
