/* memory.h - ownership rule for the cffi surface.
 *
 * Functions that hand a string to Python return a malloc'd `char *`;
 * Python releases it with dws_free().  JSON crosses the boundary as text
 * (jansson inside, `const char *` outside) so the cffi surface stays small.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_MEMORY_H
#define DWS_MEMORY_H

void dws_free (void *p);

/* Library version string, e.g. "0.1.0" (static storage). */
const char *dws_version (void);

#endif /* !DWS_MEMORY_H */
