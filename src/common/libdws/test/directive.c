/* SPDX-License-Identifier: LGPL-3.0-or-later */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "jsontap.h"
#include "parse/directive.h"


static void split_is (const char *dw, const char *presets, const char *expect)
{
    dws_error_t err;
    char *s = dws_dw_split_json (dw, presets, &err);
    json_is (s ? s : err.text, expect, dw);
    free (s);
}

static void parse_is (const char *d, const char *expect)
{
    dws_error_t err;
    char *s = dws_dw_parse_json (d, &err);
    json_is (s ? s : err.text, expect, d);
    free (s);
}

static int uses (const char *dw)
{
    json_t *v = json_loads (dw, JSON_DECODE_ANY, NULL);
    int rc = dws_dw_uses_persistent (v);
    json_decref (v);
    return rc;
}

static void commands (void)
{
    static const char *const creators[] = {"create_persistent", NULL};
    json_t *d = json_pack ("[s s]", "#DW jobdw a=1", "#DW create_persistent name=p");

    ok (dws_dw_any_command (d, creators, 0) == 1, "any_command: create_persistent found");
    json_array_remove (d, 1);
    ok (dws_dw_any_command (d, creators, 0) == 0, "any_command: not in a jobdw");
    json_array_append_new (d, json_string ("preset"));
    ok (dws_dw_any_command (d, creators, 0) == 0, "any_command: an unparsed one not counted...");
    ok (dws_dw_any_command (d, creators, 1) == 1, "... unless asked");
    ok (dws_dw_any_command (json_object_get (d, "x"), creators, 0) == -1,
        "any_command: not an array");
    json_decref (d);

    ok (uses ("\"#DW persistentdw name=p\"") == 1, "uses_persistent: persistentdw");
    ok (uses ("\"#DW jobdw a=1 #DW destroy_persistent name=p\"") == 1,
        "uses_persistent: destroy_persistent after a jobdw");
    ok (uses ("[\"#DW jobdw a=1\", \"site-preset\"]") == 1,
        "uses_persistent: a preset name may hold one");
    ok (uses ("\"#DW jobdw a=1\"") == 0, "uses_persistent: jobdw alone");
    ok (uses ("\"#DW create_persistent name=p type=xfs\"") == 0,
        "uses_persistent: create_persistent makes it, does not use it");
    ok (uses ("5") == -1, "uses_persistent: a dw that does not split");
}

int main (void)
{
    commands ();
    split_is ("\"#DW jobdw type=xfs capacity=1GiB name=a\"", NULL,
              "[\"#DW jobdw type=xfs capacity=1GiB name=a\"]");
    split_is ("\"#DW jobdw a=1 #DW copy_in b=2\\n  #DW copy_out c=3\"", NULL,
              "[\"#DW jobdw a=1\", \"#DW copy_in b=2\", \"#DW copy_out c=3\"]");
    split_is ("[\"#DW a #DW b\", \"#DW c\"]", NULL, "[\"#DW a\", \"#DW b\", \"#DW c\"]");
    split_is ("\"x#DW a\"", NULL, "[\"x#DW a\"]");
    split_is ("\"junk #DW a\"", NULL, "[\"junk\", \"#DW a\"]");
    split_is ("\"\"", NULL, "[]");
    split_is ("\"  small  \"", "{\"small\": \"#DW jobdw x #DW copy_in y\"}",
              "[\"#DW jobdw x\", \"#DW copy_in y\"]");
    split_is ("[\"big\", \"#DW z\"]", "{\"big\": [\"#DW a\", \"#DW b\"]}",
              "[\"#DW a\", \"#DW b\", \"#DW z\"]");
    split_is ("\"notapreset\"", "{\"small\": \"#DW x\"}", "[\"notapreset\"]");
    split_is ("5", NULL,
              "Malformed #DW directives: dw must be a string or a list of strings");
    split_is ("[\"#DW a\", 5]", NULL,
              "Malformed #DW directives: dw must be a string or a list of strings");
    split_is ("\"#DW a\"", "{\"p\": 3}",
              "rabbit.presets.p must be a string or a list of strings");
    split_is ("\"#DW a\"", "[]", "rabbit.presets must be a table");
    split_is ("{", NULL, "dw: invalid JSON: string or '}' expected near end of file (line 1, column 1)");

    parse_is ("#DW jobdw type=xfs capacity=1GiB name=a",
              "{\"args\": [[\"type\", \"xfs\"], [\"capacity\", \"1GiB\"], [\"name\", \"a\"]], "
              "\"command\": \"jobdw\"}");
    parse_is ("  #DW   copy_in\tsource=a=b  flag",
              "{\"args\": [[\"source\", \"a=b\"], [\"flag\", null]], \"command\": \"copy_in\"}");
    parse_is ("jobdw type=xfs", "missing '#DW' prefix in directive 'jobdw type=xfs'");
    parse_is ("#DWjobdw", "missing '#DW' prefix in directive '#DWjobdw'");
    parse_is ("", "missing '#DW' prefix in directive ''");
    parse_is ("#DW", "invalid directive '#DW'");
    parse_is ("#DW jobdw a=1 a=2", "repeated argument 'a' in directive '#DW jobdw a=1 a=2'");
    parse_is ("#DW jobdw command=x",
              "repeated argument 'command' in directive '#DW jobdw command=x'");
    parse_is ("#DW jobdw k=", "{\"args\": [[\"k\", \"\"]], \"command\": \"jobdw\"}");

    dws_error_t err;
    json_t *p = dws_dw_parse ("#DW jobdw type=xfs bare", &err);
    is (dws_dw_arg (p, "type"), "xfs", "dws_dw_arg finds a value");
    is (dws_dw_arg (p, "bare"), "", "a bare key reads as empty");
    ok (dws_dw_arg (p, "nope") == NULL, "a missing key is NULL");
    json_decref (p);

    ok (dws_dw_is_preset_name ("small"), "preset name 'small'");
    ok (dws_dw_is_preset_name ("my preset"), "preset name with inner space");
    ok (!dws_dw_is_preset_name (""), "empty preset name");
    ok (!dws_dw_is_preset_name (NULL), "NULL preset name");
    ok (!dws_dw_is_preset_name (" small"), "preset name with leading space");
    ok (!dws_dw_is_preset_name ("small\t"), "preset name with trailing tab");
    ok (!dws_dw_is_preset_name ("small\u3000"), "preset name with trailing U+3000");
    ok (!dws_dw_is_preset_name ("\u00a0"), "preset name U+00A0 only");
    return done_testing ();
}
