/* SPDX-License-Identifier: LGPL-3.0-or-later */
#include <stdlib.h>

#include "memory.h"

#ifndef DWS_VERSION
#define DWS_VERSION "unknown"
#endif

void dws_free (void *p)
{
    free (p);
}

const char *dws_version (void)
{
    return DWS_VERSION;
}
