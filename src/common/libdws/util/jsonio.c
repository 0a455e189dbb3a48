/* SPDX-License-Identifier: LGPL-3.0-or-later */
#include "jsonio.h"

json_t *dws_json_load (const char *what, const char *text, size_t flags, dws_error_t *err)
{
    json_error_t jerr;
    json_t *o = json_loads (text ? text : "", JSON_DECODE_ANY | flags, &jerr);
    if (!o)
        dws_errorf (err,
                    "%s: invalid JSON: %s (line %d, column %d)",
                    what,
                    jerr.text,
                    jerr.line,
                    jerr.column);
    return o;
}

char *dws_json_dump_take (json_t *o, dws_error_t *err)
{
    char *s = NULL;
    if (o && !(s = json_dumps (o, JSON_COMPACT | JSON_ENCODE_ANY)))
        dws_errorf (err, "out of memory");
    json_decref (o);
    return s;
}

const char *dws_json_str_or (json_t *v, const char *def)
{
    return json_is_string (v) ? json_string_value (v) : def;
}

const char *dws_json_str_at (json_t *o, const char *a, const char *b)
{
    return json_string_value (json_object_get (json_object_get (o, a), b));
}
