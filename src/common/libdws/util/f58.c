/* f58.c - a job id in Flux's FLUID base58 (see f58.h).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <stdlib.h>

#include "f58.h"

char *dws_f58_plain (unsigned long long id)
{
    static const char alphabet[] = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
    char tmp[32];
    int n = 0;
    do {
        tmp[n++] = alphabet[id % 58];
        id /= 58;
    } while (id > 0);
    char *out = malloc ((size_t)n + 2);
    if (!out)
        return NULL;
    out[0] = 'f';
    for (int i = 0; i < n; i++)
        out[i + 1] = tmp[n - 1 - i];
    out[n + 1] = '\0';
    return out;
}
