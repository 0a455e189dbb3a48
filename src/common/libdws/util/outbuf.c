/* SPDX-License-Identifier: LGPL-3.0-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "outbuf.h"

struct dws_outbuf *dws_outbuf_create (dws_write_f writer, void *arg)
{
    struct dws_outbuf *ob = malloc (sizeof (*ob));
    if (!ob)
        return NULL;
    ob->writer = writer;
    ob->arg = arg;
    ob->errnum = 0;
    ob->len = 0;
    return ob;
}

void dws_outbuf_destroy (struct dws_outbuf *ob)
{
    free (ob);
}

static void drain (struct dws_outbuf *ob)
{
    if (ob->len > 0 && ob->errnum == 0) {
        errno = 0;
        if (ob->writer (ob->buf, ob->len, ob->arg) < 0)
            ob->errnum = errno ? errno : EIO;
    }
    ob->len = 0;
}

void dws_outbuf_write (struct dws_outbuf *ob, const char *s, size_t n)
{
    if (ob->errnum)
        return;
    while (n > 0) {
        size_t room = DWS_OUTBUF_SIZE - ob->len;
        size_t chunk = n < room ? n : room;
        memcpy (ob->buf + ob->len, s, chunk);
        ob->len += chunk;
        s += chunk;
        n -= chunk;
        if (ob->len == DWS_OUTBUF_SIZE)
            drain (ob);
    }
}

void dws_outbuf_puts (struct dws_outbuf *ob, const char *s)
{
    dws_outbuf_write (ob, s, strlen (s));
}

void dws_outbuf_putc (struct dws_outbuf *ob, char c)
{
    if (ob->len == DWS_OUTBUF_SIZE)
        drain (ob);
    if (!ob->errnum)
        ob->buf[ob->len++] = c;
}

void dws_outbuf_int (struct dws_outbuf *ob, int64_t v)
{
    char tmp[24];
    char *p = tmp + sizeof (tmp);
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        *--p = '-';
    dws_outbuf_write (ob, p, (size_t)(tmp + sizeof (tmp) - p));
}

void dws_outbuf_json_string (struct dws_outbuf *ob, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    const char *run = s;

    dws_outbuf_putc (ob, '"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        dws_outbuf_write (ob, run, (size_t)(s - run));
        run = s + 1;
        switch (c) {
            case '"':  dws_outbuf_puts (ob, "\\\""); break;
            case '\\': dws_outbuf_puts (ob, "\\\\"); break;
            case '\n': dws_outbuf_puts (ob, "\\n"); break;
            case '\t': dws_outbuf_puts (ob, "\\t"); break;
            default: {
                char esc[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
                dws_outbuf_write (ob, esc, sizeof (esc));
            }
        }
    }
    dws_outbuf_write (ob, run, (size_t)(s - run));
    dws_outbuf_putc (ob, '"');
}

static int dump_cb (const char *buffer, size_t size, void *data)
{
    dws_outbuf_write (data, buffer, size);
    return 0;
}

void dws_outbuf_json (struct dws_outbuf *ob, json_t *o)
{
    (void)json_dump_callback (o,
                              dump_cb,
                              ob,
                              JSON_COMPACT | JSON_ENCODE_ANY | JSON_PRESERVE_ORDER);
}

int dws_outbuf_flush (struct dws_outbuf *ob, dws_error_t *err)
{
    drain (ob);
    if (ob->errnum)
        return dws_errorf (err, "write error: %s", strerror (ob->errnum));
    return 0;
}
