/* jgf.h - Fluxion resource graph (JSON Graph Format) for a Rabbit system.
 *
 * Given a resource set R (Flux RFC 20) and a rabbitmapping document, write
 * the JGF that Fluxion schedules rabbit storage from: R with a
 * "scheduling" key added (or, with DWS_JGF_ONLY_SCHED, the scheduling
 * object alone).  The graph:
 *
 *   cluster                                   /<cluster>
 *     chassis<i>  (one per rabbit, in mapping order)
 *                 properties {rabbit: <name>, ssdcount: "<N>"}
 *       ssd<k>    k < N = chunks per rabbit; size capacity/N in GiB
 *                 (floored), unit GiB, status 1 (down until the dws
 *                 service marks the rabbit up)
 *       <host>    each compute of the rabbit that is in R, in mapping order
 *         <child><id>   the host's R_lite children (core, gpu, ...)
 *       <rabbit>  the rabbit itself, as an exclusive storage_node, when it
 *                 is in R
 *     <host>      hosts of R not attached to any rabbit, in rank order
 *
 * Vertex ids are decimal strings numbered in output order; edges carry
 * only source and target (containment).  Fields equal to Fluxion's
 * defaults are omitted.  Hosts excluded by `exclude` (an RFC 22 idset of
 * ranks or an RFC 29 hostlist, like [resource] exclude) are left out.
 *
 * Every input is parsed and checked before the first byte is written, so
 * an error never leaves partial output.  Output is deterministic.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_JGF_H
#define DWS_JGF_H

#include <jansson.h>

#include "util/error.h"
#include "util/outbuf.h"

enum {
    DWS_JGF_NO_VALIDATE = 1, /* skip mapping computes that are not in R */
    DWS_JGF_ONLY_SCHED = 2,  /* write only the scheduling object */
};

struct dws_jgf;

/* Parse and check R and the mapping; nothing is written.
 * R and mapping are borrowed (a reference is taken).  cluster is the
 * cluster vertex name; chunks (>= 1) the ssd vertices per rabbit;
 * exclude may be NULL.
 */
struct dws_jgf *dws_jgf_prepare (json_t *R,
                                 json_t *mapping,
                                 const char *exclude,
                                 const char *cluster,
                                 int chunks,
                                 int flags,
                                 dws_error_t *err);

/* Stream the document through writer(buf, n, arg) (in pieces of up to
 * DWS_OUTBUF_SIZE bytes).  Returns -1 only if writer failed (or on ENOMEM).
 */
int dws_jgf_write (struct dws_jgf *g, dws_write_f writer, void *arg, dws_error_t *err);

void dws_jgf_destroy (struct dws_jgf *g);

/* Number of vertices the graph will have (after prepare). */
size_t dws_jgf_vertex_count (const struct dws_jgf *g);

/* cffi entry point: parse the JSON texts, prepare, and write through
 * writer(buf, n, arg) as dws_jgf_write does.
 */
int dws_jgf_write_json (const char *R_json,
                        const char *mapping_json,
                        const char *exclude,
                        const char *cluster,
                        int chunks,
                        int flags,
                        dws_write_f writer,
                        void *arg,
                        dws_error_t *err);

#endif /* !DWS_JGF_H */
