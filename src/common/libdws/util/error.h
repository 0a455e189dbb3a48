/* error.h - error text carried out of every libdws call.
 *
 * Every fallible libdws function takes a `dws_error_t *err` (which may be
 * NULL), returns -1 or NULL on failure and writes a message that names the
 * offending input into err->text.  libdws never aborts or asserts on input.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_ERROR_H
#define DWS_ERROR_H

#include <stdarg.h>

#define DWS_ERROR_TEXT_MAX 2048

typedef struct {
    char text[DWS_ERROR_TEXT_MAX];
} dws_error_t;

/* Format a message into err (if non-NULL).  Always returns -1 so callers can
 * write `return dws_errorf (err, "...")`.  A message longer than the buffer
 * is cut and ends in "...".  errno is preserved.
 */
int dws_errorf (dws_error_t *err, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

int dws_verrorf (dws_error_t *err, const char *fmt, va_list ap)
    __attribute__ ((format (printf, 2, 0)));

/* Prefix an existing message: "<prefix><old text>". Returns -1. */
int dws_error_prefix (dws_error_t *err, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

/* Clear err (if non-NULL) to the empty string. */
void dws_error_clear (dws_error_t *err);

#endif /* !DWS_ERROR_H */
