/* outbuf.h - buffered writing of JSON text to a caller's write function.
 *
 * Used by the streaming writers (jgf.c) that emit documents too large to
 * build in memory first.  libdws does no I/O: the caller's dws_write_f
 * puts each full buffer where it belongs (a file, a socket, memory).
 * Write errors are sticky: after the first failure further output is
 * dropped and dws_outbuf_flush() reports it.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_OUTBUF_H
#define DWS_OUTBUF_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define DWS_OUTBUF_SIZE (1 << 20)

/* Write all n bytes of buf; return 0, or -1 with errno set (EIO is
 * assumed if it is not).
 */
typedef int (*dws_write_f) (const char *buf, size_t n, void *arg);

struct dws_outbuf {
    dws_write_f writer;
    void *arg;
    int errnum; /* first write errno, 0 if none */
    size_t len;
    char buf[DWS_OUTBUF_SIZE];
};

/* Allocate a buffer that hands its contents to writer(..., arg) (NULL on
 * ENOMEM).
 */
struct dws_outbuf *dws_outbuf_create (dws_write_f writer, void *arg);
void dws_outbuf_destroy (struct dws_outbuf *ob);

void dws_outbuf_write (struct dws_outbuf *ob, const char *s, size_t n);
void dws_outbuf_puts (struct dws_outbuf *ob, const char *s);
void dws_outbuf_putc (struct dws_outbuf *ob, char c);
void dws_outbuf_int (struct dws_outbuf *ob, int64_t v);

/* Write s as a JSON string literal (quoted, escaped). */
void dws_outbuf_json_string (struct dws_outbuf *ob, const char *s);

/* Write any JSON value compactly (via jansson). */
struct json_t;
void dws_outbuf_json (struct dws_outbuf *ob, struct json_t *o);

/* Write out what is buffered.  Returns -1 with a message if any write
 * failed since the buffer was created.
 */
int dws_outbuf_flush (struct dws_outbuf *ob, dws_error_t *err);

#endif /* !DWS_OUTBUF_H */
