/* SPDX-License-Identifier: LGPL-3.0-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "tap.h"
#include "util/outbuf.h"

static char *slurp (FILE *f)
{
    long n;
    char *s;
    fflush (f);
    fseek (f, 0, SEEK_END);
    n = ftell (f);
    rewind (f);
    if (!(s = calloc (1, (size_t)n + 1)) || fread (s, 1, (size_t)n, f) != (size_t)n) {
        free (s);
        return NULL;
    }
    return s;
}

/* The writers tests give outbuf: to a stdio FILE, and failing ones. */
static int file_write (const char *buf, size_t n, void *arg)
{
    return fwrite (buf, 1, n, arg) == n ? 0 : -1;
}

static int enospc_write (const char *buf, size_t n, void *arg)
{
    (void)buf;
    (void)n;
    (*(int *)arg)++;
    errno = ENOSPC;
    return -1;
}

static int silent_fail_write (const char *buf, size_t n, void *arg)
{
    (void)buf;
    (void)n;
    (void)arg;
    return -1;
}

static void test_format (void)
{
    FILE *f = tmpfile ();
    struct dws_outbuf *ob = dws_outbuf_create (file_write, f);
    json_t *o = json_pack ("{s:i s:[s]}", "a", 1, "b", "x");
    char *s;

    dws_outbuf_puts (ob, "[");
    dws_outbuf_int (ob, 0);
    dws_outbuf_putc (ob, ',');
    dws_outbuf_int (ob, -42);
    dws_outbuf_putc (ob, ',');
    dws_outbuf_int (ob, 9223372036854775807LL);
    dws_outbuf_putc (ob, ',');
    dws_outbuf_int (ob, (-9223372036854775807LL - 1));
    dws_outbuf_putc (ob, ',');
    dws_outbuf_json_string (ob, "q\"b\\n\nt\t\x01\x1f" "\xc3\xa9");
    dws_outbuf_putc (ob, ',');
    dws_outbuf_json (ob, o);
    dws_outbuf_puts (ob, "]");
    ok (dws_outbuf_flush (ob, NULL) == 0, "flush succeeds");
    s = slurp (f);
    is (s,
        "[0,-42,9223372036854775807,-9223372036854775808,"
        "\"q\\\"b\\\\n\\nt\\t\\u0001\\u001f\xc3\xa9\",{\"a\":1,\"b\":[\"x\"]}]",
        "integers, escaped strings and JSON values are written exactly");
    json_t *parsed = s ? json_loads (s, 0, NULL) : NULL;
    ok (parsed != NULL, "the output is valid JSON");
    json_decref (parsed);
    free (s);
    json_decref (o);
    dws_outbuf_destroy (ob);
    fclose (f);
}

static void test_large (void)
{
    FILE *f = tmpfile ();
    struct dws_outbuf *ob = dws_outbuf_create (file_write, f);
    size_t total = 3 * DWS_OUTBUF_SIZE + 17;
    char *s;
    int bad = 0;

    for (size_t i = 0; i < total; i++)
        dws_outbuf_putc (ob, (char)('a' + i % 26));
    ok (dws_outbuf_flush (ob, NULL) == 0, "flush of %zu bytes succeeds", total);
    s = slurp (f);
    cmp_ok (s ? strlen (s) : 0, ==, total, "every byte was written");
    for (size_t i = 0; s && i < total; i++)
        if (s[i] != (char)('a' + i % 26))
            bad++;
    ok (s && bad == 0, "in order, across buffer boundaries");
    free (s);
    dws_outbuf_destroy (ob);
    fclose (f);
}

static void test_write_error (void)
{
    dws_error_t err;
    int calls = 0;
    struct dws_outbuf *ob = dws_outbuf_create (enospc_write, &calls);

    for (int i = 0; i < 3; i++)
        dws_outbuf_write (ob, "x", 1);
    ok (dws_outbuf_flush (ob, &err) == -1, "flush through a failing writer fails");
    ok (strstr (err.text, "write error") != NULL && strstr (err.text, strerror (ENOSPC)),
        "with the writer's errno in the message: %s", err.text);
    dws_outbuf_puts (ob, "more");
    ok (dws_outbuf_flush (ob, NULL) == -1, "the error is sticky");
    cmp_ok (calls, ==, 1, "the writer is not called again after it failed");
    dws_outbuf_destroy (ob);

    ob = dws_outbuf_create (silent_fail_write, NULL);
    dws_outbuf_puts (ob, "x");
    ok (dws_outbuf_flush (ob, &err) == -1 && strstr (err.text, strerror (EIO)),
        "a writer that fails without errno gives EIO: %s", err.text);
    dws_outbuf_destroy (ob);
}

int main (void)
{
    test_format ();
    test_large ();
    test_write_error ();
    return done_testing ();
}
