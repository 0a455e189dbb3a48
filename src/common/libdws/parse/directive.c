/* directive.c - splitting and tokenising #DW directives (see directive.h).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "directive.h"
#include "util/jsonio.h"

#define MALFORMED "Malformed #DW directives: dw must be a string or a list of strings"

/* Length of the Unicode white space (UTF-8) at p, 0 if none: the set Go's
 * unicode.IsSpace uses, as DWS splits directives with strings.Fields.
 */
static size_t space_len (const char *p)
{
    const unsigned char *u = (const unsigned char *)p;
    if (*u == ' ' || (*u >= '\t' && *u <= '\r'))
        return 1;
    if (u[0] == 0xc2 && (u[1] == 0x85 || u[1] == 0xa0))
        return 2;
    if (u[0] == 0xe1 && u[1] == 0x9a && u[2] == 0x80) /* U+1680 */
        return 3;
    if (u[0] == 0xe2 && u[1] == 0x80
        && ((u[2] >= 0x80 && u[2] <= 0x8a) || u[2] == 0xa8 || u[2] == 0xa9 || u[2] == 0xaf))
        return 3; /* U+2000-200A, U+2028, U+2029, U+202F */
    if (u[0] == 0xe2 && u[1] == 0x81 && u[2] == 0x9f) /* U+205F */
        return 3;
    if (u[0] == 0xe3 && u[1] == 0x80 && u[2] == 0x80) /* U+3000 */
        return 3;
    return 0;
}

/* Is there white space ending just before p (within s)? */
static size_t space_before (const char *s, const char *p)
{
    for (size_t n = 1; n <= 3 && p - n >= s; n++)
        if (space_len (p - n) == n)
            return n;
    return 0;
}

/* Append the stripped text [start, end) to out if it is not blank. */
static void strip (const char **startp, const char **endp)
{
    const char *start = *startp, *end = *endp;
    size_t n;
    while (start < end && (n = space_len (start)) > 0)
        start += n;
    while (end > start && (n = space_before (start, end)) > 0)
        end -= n;
    *startp = start;
    *endp = end;
}

static int append_stripped (json_t *out, const char *start, const char *end)
{
    strip (&start, &end);
    if (start == end)
        return 0;
    return json_array_append_new (out, json_stringn (start, (size_t)(end - start)));
}

/* Does a directive start at p (a "#DW" word: followed by space or end)? */
static bool dw_at (const char *s, const char *p)
{
    return strncmp (p, "#DW", 3) == 0 && (p == s || space_before (s, p) > 0)
           && (p[3] == '\0' || space_len (p + 3) > 0);
}

static int split_string (json_t *out, const char *s)
{
    const char *start = s;
    for (const char *p = s; *p; p++) {
        if (p != s && dw_at (s, p)) {
            if (append_stripped (out, start, p) < 0)
                return -1;
            start = p;
        }
    }
    return append_stripped (out, start, s + strlen (s));
}

/* The preset named by the whole stripped text of s, or NULL. */
static json_t *preset_for (json_t *presets, const char *s)
{
    const char *end = s + strlen (s);
    char *name;
    json_t *val;

    if (!presets)
        return NULL;
    strip (&s, &end);
    if (!(name = strndup (s, (size_t)(end - s))))
        return NULL;
    val = json_object_get (presets, name);
    free (name);
    return val;
}

static int split_value (json_t *out, json_t *v, json_t *presets, dws_error_t *err)
{
    size_t i;
    json_t *e;

    if (json_is_string (v)) {
        if (split_string (out, json_string_value (v)) < 0)
            return dws_errorf (err, "out of memory");
        return 0;
    }
    if (!json_is_array (v))
        return dws_errorf (err, MALFORMED);
    json_array_foreach (v, i, e) {
        if (!json_is_string (e))
            return dws_errorf (err, MALFORMED);
        json_t *preset = preset_for (presets, json_string_value (e));
        if (preset) {
            if (split_value (out, preset, NULL, err) < 0)
                return -1;
        }
        else if (split_string (out, json_string_value (e)) < 0)
            return dws_errorf (err, "out of memory");
    }
    return 0;
}

static int check_presets (json_t *presets, dws_error_t *err)
{
    const char *name;
    json_t *val;

    if (!presets)
        return 0;
    if (!json_is_object (presets))
        return dws_errorf (err, "rabbit.presets must be a table");
    json_object_foreach (presets, name, val) {
        bool ok = json_is_string (val) || json_is_array (val);
        size_t i;
        json_t *e;
        if (json_is_array (val))
            json_array_foreach (val, i, e) ok = ok && json_is_string (e);
        if (!ok)
            return dws_errorf (err,
                               "rabbit.presets.%s must be a string or a list of strings",
                               name);
    }
    return 0;
}

json_t *dws_dw_split (json_t *dw, json_t *presets, dws_error_t *err)
{
    json_t *out;

    if (check_presets (presets, err) < 0)
        return NULL;
    if (!(out = json_array ())) {
        dws_errorf (err, "out of memory");
        return NULL;
    }
    if (json_is_string (dw)) {
        json_t *preset = preset_for (presets, json_string_value (dw));
        if (preset)
            dw = preset;
        presets = NULL;
    }
    if (split_value (out, dw, presets, err) < 0) {
        json_decref (out);
        return NULL;
    }
    return out;
}

json_t *dws_dw_parse (const char *directive, dws_error_t *err)
{
    json_t *out = NULL, *args = NULL;
    const char *p = directive;
    int word = 0;

    if (!directive) {
        dws_errorf (err, "missing '#DW' prefix in directive ''");
        return NULL;
    }
    if (!(out = json_object ()) || !(args = json_array ())
        || json_object_set_new (out, "args", args) < 0) {
        json_decref (args);
        goto nomem;
    }
    for (;;) {
        size_t n;
        while (*p && (n = space_len (p)) > 0)
            p += n;
        if (!*p)
            break;
        const char *start = p;
        while (*p && space_len (p) == 0)
            p++;
        size_t len = (size_t)(p - start);
        if (word == 0) {
            if (len != 3 || strncmp (start, "#DW", 3) != 0) {
                dws_errorf (err, "missing '#DW' prefix in directive '%s'", directive);
                goto error;
            }
        }
        else if (word == 1) {
            if (json_object_set_new (out, "command", json_stringn (start, len)) < 0)
                goto nomem;
        }
        else {
            const char *eq = memchr (start, '=', len);
            size_t klen = eq ? (size_t)(eq - start) : len;
            json_t *pair = json_array ();
            size_t i;
            json_t *prev;
            if (!pair)
                goto nomem;
            if (json_array_append_new (pair, json_stringn (start, klen)) < 0
                || json_array_append_new (pair, eq ? json_stringn (eq + 1, len - klen - 1)
                                                   : json_null ())
                       < 0) {
                json_decref (pair);
                goto nomem;
            }
            const char *key = json_string_value (json_array_get (pair, 0));
            bool repeated = strcmp (key, "command") == 0;
            json_array_foreach (args, i, prev) {
                if (!strcmp (json_string_value (json_array_get (prev, 0)), key))
                    repeated = true;
            }
            if (repeated) {
                dws_errorf (err, "repeated argument '%s' in directive '%s'", key, directive);
                json_decref (pair);
                goto error;
            }
            if (json_array_append_new (args, pair) < 0)
                goto nomem;
        }
        word++;
    }
    if (word == 0) {
        dws_errorf (err, "missing '#DW' prefix in directive '%s'", directive);
        goto error;
    }
    if (word == 1) {
        dws_errorf (err, "invalid directive '%s'", directive);
        goto error;
    }
    return out;
nomem:
    dws_errorf (err, "out of memory");
error:
    json_decref (out);
    return NULL;
}

const char *dws_dw_arg (json_t *parsed, const char *key)
{
    size_t i;
    json_t *pair;
    json_array_foreach (json_object_get (parsed, "args"), i, pair) {
        if (!strcmp (json_string_value (json_array_get (pair, 0)), key)) {
            const char *v = json_string_value (json_array_get (pair, 1));
            return v ? v : "";
        }
    }
    return NULL;
}

int dws_dw_is_preset_name (const char *s)
{
    const char *start = s, *end;

    if (!s || !*s)
        return 0;
    end = s + strlen (s);
    strip (&start, &end);
    return start == s && end == s + strlen (s);
}

int dws_dw_any_command (json_t *directives, const char *const commands[], int unparsed)
{
    size_t i;
    json_t *d;
    int found = 0;

    if (!json_is_array (directives))
        return -1;
    json_array_foreach (directives, i, d) {
        json_t *parsed = dws_dw_parse (json_string_value (d), NULL);
        const char *cmd = json_string_value (json_object_get (parsed, "command"));
        if (!cmd)
            found = unparsed != 0;
        for (size_t k = 0; cmd && commands[k] && !found; k++)
            found = !strcmp (cmd, commands[k]);
        json_decref (parsed);
        if (found)
            break;
    }
    return found;
}

int dws_dw_uses_persistent (json_t *dw)
{
    static const char *const users[] = {"persistentdw", "destroy_persistent", NULL};
    json_t *split = dws_dw_split (dw, NULL, NULL);
    int rc = split ? dws_dw_any_command (split, users, 1) : -1;

    json_decref (split);
    return rc;
}

char *dws_dw_split_json (const char *dw_json, const char *presets_json, dws_error_t *err)
{
    json_t *dw = dws_json_load ("dw", dw_json, 0, err);
    json_t *presets = NULL;
    char *s = NULL;

    if (dw && (!presets_json || (presets = dws_json_load ("presets", presets_json, 0, err))))
        s = dws_json_dump_take (dws_dw_split (dw, json_is_null (presets) ? NULL : presets, err),
                                err);
    json_decref (dw);
    json_decref (presets);
    return s;
}

char *dws_dw_parse_json (const char *directive, dws_error_t *err)
{
    return dws_json_dump_take (dws_dw_parse (directive, err), err);
}
