/* strbuf.h - a growable string for writing JSON text in memory.
 *
 * For results that are emitted many thousands of entries at a time (the
 * Servers allocation sets of a whole-machine job), where building jansson
 * objects and dumping them costs more than the decision itself.  Allocation
 * failure is sticky: after it further output is dropped and
 * dws_strbuf_finish() returns NULL.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_STRBUF_H
#define DWS_STRBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dws_strbuf {
    char *s;
    size_t len;
    size_t cap;
    bool nomem;
};

void dws_strbuf_init (struct dws_strbuf *sb);
void dws_strbuf_write (struct dws_strbuf *sb, const char *s, size_t n);
void dws_strbuf_puts (struct dws_strbuf *sb, const char *s);
void dws_strbuf_int (struct dws_strbuf *sb, int64_t v);

/* s (valid UTF-8) as a JSON string literal: quoted, with '"', '\\' and
 * control characters escaped.
 */
void dws_strbuf_json_string (struct dws_strbuf *sb, const char *s);

/* The NUL-terminated text (caller frees), or NULL if memory ran out (the
 * buffer is released either way).
 */
char *dws_strbuf_finish (struct dws_strbuf *sb);

/* Release the buffer without taking its text. */
void dws_strbuf_release (struct dws_strbuf *sb);

#endif /* !DWS_STRBUF_H */
