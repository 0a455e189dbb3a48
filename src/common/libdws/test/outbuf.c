/* SPDX-License-Identifier: LGPL-3.0-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>

#include <jansson.h>

#include "outbuf.h"
#include "tap.h"

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

static void test_format (void)
{
    FILE *f = tmpfile ();
    struct dws_outbuf *ob = dws_outbuf_create (fileno (f));
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
    struct dws_outbuf *ob = dws_outbuf_create (fileno (f));
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
    int fds[2];
    dws_error_t err;
    struct dws_outbuf *ob;

    if (pipe (fds) < 0) {
        ok (0, "pipe");
        return;
    }
    close (fds[0]);
    ob = dws_outbuf_create (fds[1]);
    for (int i = 0; i < 3; i++)
        dws_outbuf_write (ob, "x", 1);
    ok (dws_outbuf_flush (ob, &err) == -1, "flush to a closed pipe fails");
    ok (strstr (err.text, "write error") != NULL, "with a message: %s", err.text);
    dws_outbuf_puts (ob, "more");
    ok (dws_outbuf_flush (ob, NULL) == -1, "the error is sticky");
    dws_outbuf_destroy (ob);
    close (fds[1]);
}

int main (void)
{
    signal (SIGPIPE, SIG_IGN);
    test_format ();
    test_large ();
    test_write_error ();
    return done_testing ();
}
