/* hostindex.h - map host names to array positions in O(1).
 *
 * An open-addressing hash table of borrowed name pointers: the caller keeps
 * the strings alive for the table's lifetime.  Used wherever a large host
 * set is searched by name (graph writing, Servers allocation).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_HOSTINDEX_H
#define DWS_HOSTINDEX_H

#include <stddef.h>

struct hostindex;

/* A table sized for about `expected` names (it grows as needed).
 * Returns NULL on ENOMEM.
 */
struct hostindex *dws_hostindex_create (size_t expected);
void dws_hostindex_destroy (struct hostindex *idx);

/* Add name -> value (value <= LONG_MAX).  If name is already present the
 * table is unchanged and its existing value is returned; otherwise returns
 * -1 on success and -2 on ENOMEM.
 */
long dws_hostindex_insert (struct hostindex *idx, const char *name, size_t value);

/* The value stored for name, or -1. */
long dws_hostindex_find (const struct hostindex *idx, const char *name);

size_t dws_hostindex_count (const struct hostindex *idx);

#endif /* !DWS_HOSTINDEX_H */
