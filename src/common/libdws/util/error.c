/* SPDX-License-Identifier: LGPL-3.0-or-later */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "error.h"

static void mark_truncated (dws_error_t *err, int n)
{
    if (n >= DWS_ERROR_TEXT_MAX)
        memcpy (err->text + DWS_ERROR_TEXT_MAX - 4, "...", 4);
}

int dws_verrorf (dws_error_t *err, const char *fmt, va_list ap)
{
    if (err) {
        int saved_errno = errno;
        int n = vsnprintf (err->text, sizeof (err->text), fmt, ap);
        mark_truncated (err, n);
        errno = saved_errno;
    }
    return -1;
}

int dws_errorf (dws_error_t *err, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    dws_verrorf (err, fmt, ap);
    va_end (ap);
    return -1;
}

int dws_error_prefix (dws_error_t *err, const char *fmt, ...)
{
    if (err) {
        int saved_errno = errno;
        char prefix[DWS_ERROR_TEXT_MAX];
        char old[DWS_ERROR_TEXT_MAX];
        va_list ap;

        va_start (ap, fmt);
        vsnprintf (prefix, sizeof (prefix), fmt, ap);
        va_end (ap);
        memcpy (old, err->text, sizeof (old));
        int n = snprintf (err->text, sizeof (err->text), "%s%s", prefix, old);
        mark_truncated (err, n);
        errno = saved_errno;
    }
    return -1;
}

void dws_error_clear (dws_error_t *err)
{
    if (err)
        err->text[0] = '\0';
}
