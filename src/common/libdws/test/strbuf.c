/* SPDX-License-Identifier: LGPL-3.0-or-later */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "tap.h"
#include "util/strbuf.h"

int main (void)
{
    struct dws_strbuf sb;
    char *s;

    dws_strbuf_init (&sb);
    s = dws_strbuf_finish (&sb);
    is (s, "", "an empty buffer gives the empty string");
    free (s);

    dws_strbuf_init (&sb);
    dws_strbuf_puts (&sb, "[");
    dws_strbuf_int (&sb, INT64_MIN);
    dws_strbuf_puts (&sb, ",");
    dws_strbuf_int (&sb, INT64_MAX);
    dws_strbuf_puts (&sb, ",");
    dws_strbuf_json_string (&sb, "a\"b\\c\n\t\r\x01\x1f é");
    dws_strbuf_puts (&sb, "]");
    s = dws_strbuf_finish (&sb);
    is (s, "[-9223372036854775808,9223372036854775807,\"a\\\"b\\\\c\\n\\t\\r\\u0001\\u001f é\"]",
        "integers and escaped strings");
    json_t *o = json_loads (s, 0, NULL);
    ok (o && !strcmp (json_string_value (json_array_get (o, 2)), "a\"b\\c\n\t\r\x01\x1f é"),
        "jansson reads back the same string");
    json_decref (o);
    free (s);

    dws_strbuf_init (&sb);
    for (int i = 0; i < 100000; i++)
        dws_strbuf_puts (&sb, "0123456789");
    s = dws_strbuf_finish (&sb);
    ok (s && strlen (s) == 1000000, "it grows to a megabyte");
    free (s);

    dws_strbuf_init (&sb);
    dws_strbuf_puts (&sb, "x");
    dws_strbuf_release (&sb);
    ok (sb.s == NULL && sb.len == 0, "release empties the buffer");
    sb.nomem = true;
    dws_strbuf_puts (&sb, "x");
    ok (dws_strbuf_finish (&sb) == NULL, "after running out of memory, finish gives NULL");
    return done_testing ();
}
