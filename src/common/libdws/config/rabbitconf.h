/* rabbitconf.h - the [rabbit] table of the Flux configuration.
 *
 * The dws service validates [rabbit] when it starts and again on every
 * `flux config reload`; a table that does not pass is refused with the
 * message, and (on reload) the service keeps the configuration it had.
 * doc/man5/flux-config-rabbit.rst is the user's description of every key.
 *
 * dws_rabbitconf_parse() returns a new object with EVERY key present, each
 * holding the configured value or its default (alphabetical order):
 *
 *   key                           type (normalised)         default
 *   datain_stall_timeout          real seconds >= 0         0.0 (off)
 *   drain_compute_nodes           boolean                   true
 *   drain_queues                  non-empty [string] | null null (all queues)
 *   dws_api_version               string | null             null (discover)
 *   kubeconfig                    string | null             null (k8s default)
 *   lustre                        {max_rabbits, mdts,       spread false, mdts 1,
 *                                  min_rabbits, osts_per_mdt, min_rabbits 1, others 0
 *                                  spread, whole_rabbit_gib}
 *                                  (lustre.h)
 *   mapping                       string | null             null
 *   min_allocation_size           integer GiB, >= 1         4
 *   nnf_api_version               string | null             null (discover)
 *   policy                        {"maximums": {T: GiB}}    {"maximums": {}}
 *   postrun_timeout               real seconds >= 0         0.0 (off)
 *   prerun_timeout                real seconds >= 0         0.0 (off)
 *   presets                       {name: string | [string]} {}
 *   prestage                      "never" | "copy-in" |     "never"
 *                                 "always"
 *   prestage_max_gib              integer >= 0              0 (no limit)
 *   prestage_max_jobs             integer >= 0              0 (no limit)
 *   prestage_node_wait            real seconds >= 0         3600.0 (0 = never)
 *   prolog_timeout                real seconds >= 0         1800.0 (0 = none)
 *   release_computes              "after-unmount" |         "after-teardown"
 *                                 "after-teardown"
 *   restrict_persistent_creation  boolean                   true
 *   save_datamovements            integer >= 0              0
 *   setup_timeout                 real seconds >= 0         0.0 (off)
 *   soft_drain                    boolean                   true
 *   tc_timeout                    real seconds >= 0         10.0 (0 = never)
 *   teardown_after                real seconds >= 0         0.0 (off)
 *
 * Input rules:
 * - `rabbit` NULL or JSON null is an empty table; a key whose value is null
 *   is treated as absent (TOML has no null; this makes the normalised
 *   output a valid input: parse (parse (x)) == parse (x)).
 * - Numbers must be JSON numbers (not booleans or strings), finite and
 *   >= 0; counts and sizes must be integers (2.0 is refused).
 * - prolog_timeout also takes a Flux Standard Duration string: a decimal
 *   number with an optional suffix ms, s, m, h or d ("30m", "1.5h", "2d").
 *   "inf" is refused (JSON cannot carry it): use 0 for no timeout.
 * - restrict_persistent (flux-coral2's misspelt key, the one its service
 *   reads) is accepted as an alias of restrict_persistent_creation; giving
 *   both with different values is an error.  The output has only the
 *   canonical key.
 * - policy may hold only `maximums` (checked by dws_policy_check_table).
 * - presets: each value is a string or a non-empty list of strings holding
 *   at least one #DW directive, every directive tokenising (directive.h).
 *   A preset name must be non-empty without leading or trailing white space
 *   (such a name could never match a dw attribute).
 * - dws_api_version / nnf_api_version look like Kubernetes API versions:
 *   "v1", "v1alpha7", "v2beta1".
 * - Unknown keys are errors (flux-coral2 only warned).
 *
 * Messages name the key as a TOML dotted key (rabbit.<key>, quoted when it
 * is not a bare TOML key) and show the offending value as compact JSON,
 * cut at 80 bytes:
 *   "rabbit.setup_timeout: must be a number of seconds >= 0, got \"ten\""
 *   "rabbit.frobnicate: unknown key (valid keys: drain_compute_nodes, ...)"
 *   "rabbit.restrict_persistant: unknown key (did you mean
 *    restrict_persistent_creation?)"
 * policy.maximums keeps policy.h's wording ("rabbit.policy.maximums.xfs
 * must be a non-negative integer (GiB per node)").
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_RABBITCONF_H
#define DWS_RABBITCONF_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "util/error.h"

/* Every [rabbit] key, alphabetical (the order of the normalised table and
 * of messages): X (ID, name, kind, default, least).  The one table of
 * them: dws_rabbitconf_parse checks each key by its kind, and the engine
 * reads its values through it (dws_rabbitconf_seconds, ... below), so a
 * key, its default and its bounds are written here alone.  default is
 * the JSON text of the value an absent (or null) key takes; NULL: what
 * the kind's check makes of an empty table (lustre.h's defaults).
 * least: the smallest integer a COUNT or GIB key takes.  The rules of
 * each kind are listed at the top of this file.
 */
#define DWS_RABBITCONF_KEYS(X)                                                                 \
    X (DATAIN_STALL_TIMEOUT, "datain_stall_timeout", SECONDS, "0.0", 0)                        \
    X (DRAIN_COMPUTE_NODES, "drain_compute_nodes", BOOL, "true", 0)                            \
    X (DRAIN_QUEUES, "drain_queues", QUEUES, "null", 0)                                        \
    X (DWS_API_VERSION, "dws_api_version", APIVER, "null", 0)                                  \
    X (KUBECONFIG, "kubeconfig", PATH, "null", 0)                                              \
    X (LUSTRE, "lustre", LUSTRE, NULL, 0)                                                      \
    X (MAPPING, "mapping", PATH, "null", 0)                                                    \
    X (MIN_ALLOCATION_SIZE, "min_allocation_size", GIB, "4", 1)                                \
    X (NNF_API_VERSION, "nnf_api_version", APIVER, "null", 0)                                  \
    X (POLICY, "policy", POLICY, "{\"maximums\": {}}", 0)                                      \
    X (POSTRUN_TIMEOUT, "postrun_timeout", SECONDS, "0.0", 0)                                  \
    X (PRERUN_TIMEOUT, "prerun_timeout", SECONDS, "0.0", 0)                                    \
    X (PRESETS, "presets", PRESETS, "{}", 0)                                                   \
    X (PRESTAGE, "prestage", PRESTAGE, "\"" DWS_PRESTAGE_NEVER "\"", 0)                        \
    X (PRESTAGE_MAX_GIB, "prestage_max_gib", COUNT, "0", 0)                                    \
    X (PRESTAGE_MAX_JOBS, "prestage_max_jobs", COUNT, "0", 0)                                  \
    X (PRESTAGE_NODE_WAIT, "prestage_node_wait", SECONDS, "3600.0", 0)                         \
    X (PROLOG_TIMEOUT, "prolog_timeout", DURATION, "1800.0", 0)                                \
    X (RELEASE_COMPUTES, "release_computes", RELEASE, "\"" DWS_RELEASE_AFTER_TEARDOWN "\"", 0) \
    X (RESTRICT_PERSISTENT_CREATION, DWS_RABBITCONF_RESTRICT, BOOL, "true", 0)                 \
    X (SAVE_DATAMOVEMENTS, "save_datamovements", COUNT, "0", 0)                                \
    X (SETUP_TIMEOUT, "setup_timeout", SECONDS, "0.0", 0)                                      \
    X (SOFT_DRAIN, "soft_drain", BOOL, "true", 0)                                              \
    X (TC_TIMEOUT, "tc_timeout", SECONDS, "10.0", 0)                                           \
    X (TEARDOWN_AFTER, "teardown_after", SECONDS, "0.0", 0)

/* The key flux-coral2 misspells restrict_persistent (an alias of it). */
#define DWS_RABBITCONF_RESTRICT "restrict_persistent_creation"

/* What the dws service adds to the table it gives the engine (not
 * [rabbit] keys: dws_rabbitconf_parse refuses them; the engine's messages
 * name them rabbit.<key> all the same).  Same columns. */
#define DWS_RABBITCONF_SERVICE_KEYS(X)                                                         \
    X (FLUXION, "fluxion", BOOL, "true", 0)                                                    \
    X (OWNER, "owner", COUNT, "0", 0)

/* [rabbit.limits] (userlimits.h): in the normalised table only when
 * configured. */
#define DWS_RABBITCONF_LIMITS "limits"

/* The kinds of value, by the check a value of the kind passes. */
enum dws_rabbitconf_kind {
    DWS_RABBITCONF_BOOL,     /* true or false */
    DWS_RABBITCONF_SECONDS,  /* a number >= 0 */
    DWS_RABBITCONF_DURATION, /* a number >= 0 or a Flux Standard Duration */
    DWS_RABBITCONF_COUNT,    /* an integer >= least */
    DWS_RABBITCONF_GIB,      /* an integer >= least, its bytes in 64 bits */
    DWS_RABBITCONF_PATH,     /* a non-empty string */
    DWS_RABBITCONF_APIVER,   /* "v1", "v1alpha7", ... */
    DWS_RABBITCONF_QUEUES,   /* a non-empty list of names */
    DWS_RABBITCONF_LUSTRE,   /* lustre.h's table */
    DWS_RABBITCONF_POLICY,   /* {"maximums": ...} (policy.h) */
    DWS_RABBITCONF_PRESETS,  /* {name: #DW directive(s)} */
    DWS_RABBITCONF_PRESTAGE, /* DWS_PRESTAGE_VALUES */
    DWS_RABBITCONF_RELEASE,  /* DWS_RELEASE_AFTER_UNMOUNT or _TEARDOWN */
};

/* The keys by id: DWS_RABBIT_TC_TIMEOUT, ...; the [rabbit] keys are
 * 0 .. DWS_RABBIT_NKEYS - 1, the service's follow. */
enum dws_rabbitconf_key {
#define DWS_RABBITCONF_KEY_ENUM(id, name, kind, dflt, least) DWS_RABBIT_##id,
    DWS_RABBITCONF_KEYS (DWS_RABBITCONF_KEY_ENUM)
    DWS_RABBIT_NKEYS,
    DWS_RABBIT_SERVICE_BEFORE_ = DWS_RABBIT_NKEYS - 1,
    DWS_RABBITCONF_SERVICE_KEYS (DWS_RABBITCONF_KEY_ENUM)
#undef DWS_RABBITCONF_KEY_ENUM
        DWS_RABBIT_ALLKEYS
};

/* rabbit.release_computes and the job attribute dw_release_computes
 * (attributes.system.dw_release_computes, which overrides it for one
 * job): when a rabbit job's computes go back to the queue, once its file
 * systems are unmounted (PostRun done) or after its Teardown.
 */
#define DWS_RELEASE_AFTER_UNMOUNT "after-unmount"
#define DWS_RELEASE_AFTER_TEARDOWN "after-teardown"
#define DWS_RELEASE_ATTR "dw_release_computes"

/* A dw_release_computes value: 1 for "after-unmount", 0 for
 * "after-teardown", or -1 with "dw_release_computes must be
 * \"after-unmount\" or \"after-teardown\", got <value>" (the value as
 * compact JSON, cut at 80 bytes; "nothing" for NULL) for anything else.  The configuration's
 * normalised release_computes is always one of the two strings.
 */
int dws_rabbitconf_release_computes (json_t *value, dws_error_t *err);

/* rabbit.prestage and the job attribute dw_prestage
 * (attributes.system.dw_prestage, "yes" or "no", which overrides it for
 * one job): whether a rabbit job's storage is set up and filled before its
 * nodes are allocated (doc/guide/prestage.rst).  "copy-in": the jobs with
 * a #DW copy_in.
 */
#define DWS_PRESTAGE_NEVER "never"
#define DWS_PRESTAGE_COPY_IN "copy-in"
#define DWS_PRESTAGE_ALWAYS "always"
#define DWS_PRESTAGE_ATTR "dw_prestage"
/* rabbit.prestage's values, as its messages name them. */
#define DWS_PRESTAGE_VALUES                                                                    \
    "\"" DWS_PRESTAGE_NEVER "\", \"" DWS_PRESTAGE_COPY_IN "\" or \"" DWS_PRESTAGE_ALWAYS "\""

/* rabbit.prestage's value: 0 never, 1 copy-in, 2 always, -1 none of them. */
int dws_rabbitconf_prestage_mode (json_t *value);

/* A dw_prestage value: 1 for "yes" (or true), 0 for "no" (or false), or -1
 * with "dw_prestage must be \"yes\" or \"no\", got <value>".
 */
int dws_rabbitconf_prestage_attr (json_t *value, dws_error_t *err);

/* Validate and normalise [rabbit] (NULL = absent = {}); the input is not
 * modified or kept.  New reference, or NULL with err set.
 */
json_t *dws_rabbitconf_parse (json_t *rabbit, dws_error_t *err);

/* The keys of a normalised table, in its (alphabetical) order, i = 0 ..
 * count - 1 (NULL past the end): the one list, which flux_dws.rabbitconf
 * reads.  The alias restrict_persistent is not one of them.
 */
int dws_rabbitconf_key_count (void);
const char *dws_rabbitconf_key_name (int i);

/* A key's name, or NULL for an id that is none. */
const char *dws_rabbitconf_key (enum dws_rabbitconf_key id);

/* An engine configuration's value of a key (cfg: the normalised table,
 * with the service's keys, or any object; NULL: {}): absent or null, the
 * key's default.  A value of the wrong type fails with the engine's
 * short message (no "got"): "rabbit.<key>: must be a number of seconds
 * >= 0", "rabbit.<key>: must be true or false", "rabbit.<key>: must be an
 * integer >= <least>".  Each takes a key of its kind only (SECONDS;
 * BOOL; COUNT or GIB); another is a programming error, refused so.
 */
int dws_rabbitconf_seconds (json_t *cfg, enum dws_rabbitconf_key id, double *out,
                            dws_error_t *err);
int dws_rabbitconf_bool (json_t *cfg, enum dws_rabbitconf_key id, bool *out, dws_error_t *err);
int dws_rabbitconf_int (json_t *cfg, enum dws_rabbitconf_key id, int64_t *out,
                        dws_error_t *err);

/* cfg's value of a key (a new reference), or its default when absent or
 * null (NULL for a key whose default is NULL, and out of memory). */
json_t *dws_rabbitconf_value (json_t *cfg, enum dws_rabbitconf_key id);

/* cffi entry point: the table as JSON text (NULL = {}; duplicate keys are
 * refused), the normalised table returned as malloc'd JSON text.
 */
char *dws_rabbitconf_parse_json (const char *rabbit_json, dws_error_t *err);

/* rabbit.drain_queues (normalised: null or a list of names) names node
 * properties, as the reference's --drain-queues does: the computes that
 * rabbit faults may drain are those whose properties include any of them
 * (flux-core's resource-set constraint {"properties": [Q]} for each Q),
 * whether or not [queues] defines a queue of that name.  'properties' is
 * R's execution.properties ({name: idset of ranks}; NULL or null: no node
 * has any).  Returns a new array of the names no node has (empty when
 * every one is on some node, and when drain_queues is NULL or null), or
 * NULL with a message naming them and the properties the nodes do have
 * when NO node has any of them: then nothing could ever be drained, and
 * the service refuses the configuration.  'where' names the setting in
 * the message (NULL: "rabbit.drain_queues"; the service says
 * "--drain-queues" for its option).
 */
json_t *dws_rabbitconf_drain_properties (json_t *drain_queues, json_t *properties,
                                         const char *where, dws_error_t *err);

/* cffi entry point: both as JSON text (NULL: absent); the array as text. */
char *dws_rabbitconf_drain_properties_json (const char *drain_queues_json,
                                            const char *properties_json, const char *where,
                                            dws_error_t *err);

#endif /* !DWS_RABBITCONF_H */
