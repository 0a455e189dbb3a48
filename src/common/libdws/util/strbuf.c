/* strbuf.c - growable JSON text buffer (see strbuf.h).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

void dws_strbuf_init (struct dws_strbuf *sb)
{
    memset (sb, 0, sizeof (*sb));
}

static bool grow (struct dws_strbuf *sb, size_t n)
{
    if (sb->nomem)
        return false;
    if (sb->len + n + 1 <= sb->cap)
        return true;
    size_t cap = sb->cap ? sb->cap : 256;
    while (cap < sb->len + n + 1) {
        if (cap > SIZE_MAX / 2) {
            sb->nomem = true;
            return false;
        }
        cap *= 2;
    }
    char *s = realloc (sb->s, cap);
    if (!s) {
        sb->nomem = true;
        return false;
    }
    sb->s = s;
    sb->cap = cap;
    return true;
}

void dws_strbuf_write (struct dws_strbuf *sb, const char *s, size_t n)
{
    if (!grow (sb, n))
        return;
    memcpy (sb->s + sb->len, s, n);
    sb->len += n;
}

void dws_strbuf_puts (struct dws_strbuf *sb, const char *s)
{
    dws_strbuf_write (sb, s, strlen (s));
}

void dws_strbuf_int (struct dws_strbuf *sb, int64_t v)
{
    char tmp[32];
    int n = snprintf (tmp, sizeof (tmp), "%" PRId64, v);
    dws_strbuf_write (sb, tmp, (size_t)n);
}

void dws_strbuf_json_string (struct dws_strbuf *sb, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    const char *run = s;

    dws_strbuf_write (sb, "\"", 1);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        dws_strbuf_write (sb, run, (size_t)(s - run));
        run = s + 1;
        switch (c) {
            case '"': dws_strbuf_write (sb, "\\\"", 2); break;
            case '\\': dws_strbuf_write (sb, "\\\\", 2); break;
            case '\n': dws_strbuf_write (sb, "\\n", 2); break;
            case '\t': dws_strbuf_write (sb, "\\t", 2); break;
            case '\r': dws_strbuf_write (sb, "\\r", 2); break;
            default: {
                char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
                dws_strbuf_write (sb, u, 6);
            }
        }
    }
    dws_strbuf_write (sb, run, (size_t)(s - run));
    dws_strbuf_write (sb, "\"", 1);
}

char *dws_strbuf_finish (struct dws_strbuf *sb)
{
    char *s = NULL;
    if (grow (sb, 0)) {
        sb->s[sb->len] = '\0';
        s = sb->s;
        sb->s = NULL;
    }
    dws_strbuf_release (sb);
    return s;
}

void dws_strbuf_release (struct dws_strbuf *sb)
{
    free (sb->s);
    dws_strbuf_init (sb);
}
