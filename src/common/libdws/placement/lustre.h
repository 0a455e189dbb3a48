/* lustre.h - Lustre on the rabbits Fluxion chooses for capacity (issue 27).
 *
 * With [rabbit.lustre] spread = true, a job whose rabbit storage is all
 * Lustre (ost, mdt, mgt, mgtmdt allocation sets: `#DW jobdw type=lustre`,
 * `#DW create_persistent type=lustre`) no longer gets its storage only on
 * the rabbits of its own compute nodes:
 *
 * 1. The jobspec rewrite (dws_lustre_rewrite) keeps the job's `node` entry
 *    as the user wrote it and asks Fluxion for the file system's capacity
 *    beside it, anywhere in the cluster:
 *
 *      node(N){..}  ->  node(N){..}, ssd(K, exclusive)
 *
 *    K = the sum over the Lustre allocation sets of ceil(capacity / GiB),
 *    each raised to the minimum allocation size, plus 1/32 of it
 *    (DWS_LUSTRE_HEADROOM): Fluxion packs the request (whole rabbits
 *    first, the rest on the next) and the OSTs must fit in what it
 *    reserved on each rabbit, in equal-size allocations.
 *
 *    With whole_rabbit_gib = W > 0 (the GiB of ssd vertices one rabbit has
 *    in the graph) a file system takes whole rabbits instead: j =
 *    max(ceil(K / W), min_rabbits) rabbits (K with its headroom) and
 *    K = j * W, so Fluxion's
 *    packing hands it j whole rabbits whenever whole rabbits are free and
 *    the OSTs are equal per rabbit.  j above max_rabbits is refused at
 *    the rewrite, with the numbers.  This is the only form
 *    with compute nodes and rabbit storage off the nodes' chassis that
 *    Fluxion 0.54 matches on the flux-dws2jgf graph (see
 *    doc/guide/lustre-placement.rst for the forms tried).  Jobs whose
 *    resources are a slot or chassis form, that also hold per-compute sets
 *    (xfs, gfs2, raw), or that already hold an ssd, get today's rewrite
 *    (breakdown.h): their Lustre stays on their own chassis.
 *
 * 2. At Setup the Servers allocation sets are built from the ssd vertices
 *    Fluxion allocated, read from the job's R (dws_lustre_reserved_of_R:
 *    {rabbit: GiB}; the rabbit is the `rabbit` property of the ssd's
 *    chassis).  DWS never uses more of a rabbit than Fluxion reserved on
 *    it.  dws_lustre_allocation_sets places the file system on them:
 *
 *    - rabbits are ordered by reserved GiB (most first), then by name;
 *    - OSTs, equal per rabbit: the largest j in [min_rabbits, max_rabbits]
 *      (bounded by the rabbits R holds) such that the first j rabbits can
 *      each hold c = ceil(C / j) rounded up to a whole GiB (and at least
 *      the minimum allocation size) plus the MDT/MGT share placed on them;
 *      one OST of c bytes on each of those j rabbits;
 *    - if no j fits (Fluxion packed the reservation unevenly), every
 *      rabbit of R holds OSTs of one size u = the gcd of what each rabbit
 *      has left (in GiB), as many as fit: equal-size OSTs, unequal per
 *      rabbit, still within Fluxion's reservation;
 *    - MDTs (mdt, mgtmdt): D = constraints.count of the set if given, else
 *      ceil(j / osts_per_mdt) if osts_per_mdt > 0, else mdts; one each on
 *      the first D rabbits (round-robin beyond j), size ceil(cap / D);
 *    - the MGT (AllocateSingleServer): on the first rabbit.
 *
 *    A reservation that cannot hold the file system at all is an error
 *    naming what R holds and what is needed.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_LUSTRE_H
#define DWS_LUSTRE_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "util/error.h"

/* The rewrite asks for 1/DWS_LUSTRE_HEADROOM more than the file system. */
#define DWS_LUSTRE_HEADROOM 32

struct dws_lustre_conf {
    bool spread;          /* Lustre may leave the job's chassis (default false) */
    int64_t min_rabbits;  /* OST rabbits at least (default 1) */
    int64_t max_rabbits;  /* OST rabbits at most, 0 = no limit (default 0) */
    int64_t mdts;         /* MDTs per file system (default 1) */
    int64_t osts_per_mdt; /* > 0: one MDT per this many OST rabbits (default 0) */
    int64_t whole_rabbit_gib; /* > 0: file systems take whole rabbits of this
                               * many GiB of ssd each (default 0: packed) */
};

/* The defaults above. */
void dws_lustre_conf_default (struct dws_lustre_conf *c);

/* Validate and normalise the [rabbit.lustre] table (`path` names it in
 * messages, e.g. "rabbit.lustre"); NULL or null = {}.  New reference with
 * every key, or NULL with a message naming the key.
 */
json_t *dws_lustre_check_table (const char *path, json_t *val, dws_error_t *err);

/* Fill *c from a normalised table (NULL = defaults). */
int dws_lustre_conf_parse (json_t *table, struct dws_lustre_conf *c, dws_error_t *err);

/* true when the rewrite spreads this job's Lustre (rules above). */
bool dws_lustre_spreads (json_t *resources, json_t *breakdowns, const struct dws_lustre_conf *c);

/* The rewritten resources (new reference) or NULL with a message; like
 * dws_breakdown_rewrite, whose result it returns when the job does not
 * spread.  *spread says which.
 */
json_t *dws_lustre_rewrite (json_t *resources,
                            json_t *breakdowns,
                            const struct dws_lustre_conf *c,
                            int64_t min_gib,
                            bool *unchanged,
                            bool *spread,
                            dws_error_t *err);

/* {rabbit: GiB of ssd Fluxion allocated on it} from R's scheduling graph
 * (new reference; {} when R has no ssd), or NULL with a message.
 */
json_t *dws_lustre_reserved_of_R (json_t *R, dws_error_t *err);

/* spec.allocationSets for one breakdown's status.storage (or the
 * breakdown, or its status) over the rabbits of `reserved`.
 */
json_t *dws_lustre_allocation_sets (json_t *storage,
                                    json_t *reserved,
                                    const struct dws_lustre_conf *c,
                                    int64_t min_bytes,
                                    dws_error_t *err);

/* cffi entry points (JSON text; results free with dws_free).  conf_json is
 * a [rabbit.lustre] table (validated) or NULL for the defaults.
 */
char *dws_lustre_rewrite_json (const char *resources_json,
                               const char *breakdowns_json,
                               const char *conf_json,
                               int64_t min_gib,
                               dws_error_t *err);
char *dws_lustre_reserved_of_R_json (const char *R_json, dws_error_t *err);
char *dws_lustre_allocation_sets_json (const char *storage_json,
                                       const char *reserved_json,
                                       const char *conf_json,
                                       int64_t min_bytes,
                                       dws_error_t *err);

#endif /* !DWS_LUSTRE_H */
