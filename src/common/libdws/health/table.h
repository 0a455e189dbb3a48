/* table.h - rabbit health's tables (state.h): lookups by name, freeing,
 * and resolving one table's indexes into another's.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_HEALTH_TABLE_H
#define DWS_HEALTH_TABLE_H

#include "state.h"

/* The index 'name' has in 'index' ({name: index}), or -1. */
long table_index (json_t *index, const char *name);

/* The compute called 'name', or NULL. */
struct compute *table_compute (struct dws_health *h, const char *name);

/* The broker rank of compute c, or NULL when it is not in this instance. */
struct rank *table_rank (struct dws_health *h, const struct compute *c);

/* Free the rabbit and compute tables (the arrays and what they own). */
void table_free (struct rabbit *rabbits, size_t nrabbits, struct compute *computes,
                 size_t ncomputes);

/* Empty the ssd vertices and their groups. */
void table_free_ssds (struct dws_health *h);

/* Empty the broker ranks. */
void table_free_ranks (struct dws_health *h);

/* Each compute's rank, from the ranks' hostnames. */
void table_resolve_ranks (struct dws_health *h);

/* Each rabbit of the graph in the topology's tables. */
void table_resolve_groups (struct dws_health *h);

#endif /* !DWS_HEALTH_TABLE_H */
