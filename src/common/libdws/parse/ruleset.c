/* ruleset.c - DWDirectiveRule validation (see ruleset.h).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <errno.h>
#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "directive.h"
#include "ruleset.h"
#include "util/jsonio.h"

enum ruletype { T_STRING, T_INTEGER, T_BOOL, T_LIST, T_UNSUPPORTED };

struct ruledef {
    const char *key;         /* borrowed from the rules JSON */
    regex_t key_re;
    enum ruletype type;
    const char *type_name;
    const char *pattern;     /* NULL if none */
    regex_t pattern_re;
    regex_t *patterns;       /* list-of-string */
    size_t npatterns;
    long long min, max;      /* 0 = unset */
    bool required;
    bool value_required;
    const char *unique_within;
};

struct rule {
    const char *command;
    const char *driver_label;
    const char *watch_states;
    struct ruledef *defs;
    size_t ndefs;
};

struct dws_ruleset {
    json_t *json;
    char *ns;
    struct rule *rules;
    size_t nrules;
};

/* RE2 -> POSIX ERE: translate the classes \d \D \w \W \s \S and
 * backslash-escaped punctuation; refuse other RE2-only constructs.  Inside
 * a bracket expression an escaped '-' moves to the end of the expression,
 * where POSIX reads it literally.
 */
static const char *class_for (char c, bool in_class)
{
    switch (c) {
        case 'd': return in_class ? "0-9" : "[0-9]";
        case 'w': return in_class ? "A-Za-z0-9_" : "[A-Za-z0-9_]";
        case 's': return in_class ? "[:space:]" : "[[:space:]]";
        case 'D': return in_class ? NULL : "[^0-9]";
        case 'W': return in_class ? NULL : "[^A-Za-z0-9_]";
        case 'S': return in_class ? NULL : "[^[:space:]]";
    }
    return NULL;
}

static char *translate (const char *re, dws_error_t *err)
{
    char *out = malloc (strlen (re) * 16 + 1);
    char *o = out;
    bool in_class = false, class_dash = false;

    if (!out) {
        dws_errorf (err, "out of memory");
        return NULL;
    }
    for (const char *p = re; *p; p++) {
        if (*p == '(' && p[1] == '?')
            goto unsupported;
        if (*p == '[' && !in_class) {
            in_class = true;
            class_dash = false;
            *o++ = *p;
            if (p[1] == '^')
                *o++ = *++p;
            if (p[1] == ']')
                *o++ = *++p;
            continue;
        }
        if (*p == ']' && in_class) {
            if (class_dash)
                *o++ = '-';
            in_class = false;
            *o++ = ']';
            continue;
        }
        if (*p != '\\') {
            *o++ = *p;
            continue;
        }
        char c = *++p;
        const char *cls = class_for (c, in_class);
        if (cls) {
            size_t n = strlen (cls);
            memcpy (o, cls, n);
            o += n;
        }
        else if (c && strchr ("dwsDWS", c))
            goto unsupported; /* negated class inside [...] */
        else if (in_class && c == '-')
            class_dash = true;
        else if (in_class && c && strchr ("._/^$|?*+(){}", c))
            *o++ = c;
        else if (!in_class && c && strchr (".^$|?*+()[]{}\\", c)) {
            *o++ = '\\';
            *o++ = c;
        }
        else if (!in_class && (c == '-' || c == '/' || c == '_'))
            *o++ = c;
        else
            goto unsupported;
    }
    *o = '\0';
    return out;
unsupported:
    dws_errorf (err, "unsupported regular expression '%s'", re);
    free (out);
    return NULL;
}

static int compile (regex_t *re, const char *src, const char *what, dws_error_t *err)
{
    char *ere = translate (src, err);
    int rc;
    if (!ere)
        return -1;
    rc = regcomp (re, ere, REG_EXTENDED | REG_NOSUB);
    free (ere);
    if (rc != 0)
        return dws_errorf (err, "invalid %s '%s'", what, src);
    return 0;
}

static bool matches (const regex_t *re, const char *s)
{
    return regexec (re, s, 0, NULL, 0) == 0;
}

static void free_def (struct ruledef *d, bool key_ok, bool pattern_ok, size_t npatterns)
{
    if (key_ok)
        regfree (&d->key_re);
    if (pattern_ok)
        regfree (&d->pattern_re);
    for (size_t i = 0; i < npatterns; i++)
        regfree (&d->patterns[i]);
    free (d->patterns);
}

void dws_ruleset_destroy (struct dws_ruleset *rs)
{
    if (!rs)
        return;
    for (size_t i = 0; i < rs->nrules; i++) {
        for (size_t j = 0; j < rs->rules[i].ndefs; j++) {
            struct ruledef *d = &rs->rules[i].defs[j];
            free_def (d, true, d->pattern != NULL, d->npatterns);
        }
        free (rs->rules[i].defs);
    }
    free (rs->rules);
    free (rs->ns);
    json_decref (rs->json);
    free (rs);
}

static enum ruletype parse_type (const char *t)
{
    if (!strcmp (t, "string"))
        return T_STRING;
    if (!strcmp (t, "integer"))
        return T_INTEGER;
    if (!strcmp (t, "bool"))
        return T_BOOL;
    if (!strcmp (t, "list-of-string"))
        return T_LIST;
    return T_UNSUPPORTED;
}

static int load_def (struct ruledef *d, json_t *o, const char *where, dws_error_t *err)
{
    json_t *patterns = NULL;
    json_int_t min = 0, max = 0;
    int req = 0, valreq = 0;

    memset (d, 0, sizeof (*d));
    if (json_unpack (o,
                     "{s:s s:s s?s s?o s?I s?I s?b s?b s?s}",
                     "key", &d->key,
                     "type", &d->type_name,
                     "pattern", &d->pattern,
                     "patterns", &patterns,
                     "min", &min,
                     "max", &max,
                     "isRequired", &req,
                     "isValueRequired", &valreq,
                     "uniqueWithin", &d->unique_within)
        < 0)
        return dws_errorf (err, "%s: a ruleDef needs string key and type", where);
    d->type = parse_type (d->type_name);
    d->min = min;
    d->max = max;
    d->required = req;
    d->value_required = valreq;
    if (d->pattern && !*d->pattern)
        d->pattern = NULL;
    if (compile (&d->key_re, d->key, "rule regular expression", err) < 0)
        return -1;
    if (d->pattern && compile (&d->pattern_re, d->pattern, "regular expression", err) < 0) {
        free_def (d, true, false, 0);
        return -1;
    }
    if (patterns) {
        size_t i;
        json_t *p;
        if (!json_is_array (patterns)
            || !(d->patterns = calloc (json_array_size (patterns) + 1, sizeof (regex_t)))) {
            free_def (d, true, d->pattern != NULL, 0);
            return dws_errorf (err, "%s: patterns must be a list of strings", where);
        }
        json_array_foreach (patterns, i, p) {
            if (!json_is_string (p)
                || compile (&d->patterns[i], json_string_value (p), "regular expression", err)
                       < 0) {
                if (!json_is_string (p))
                    dws_errorf (err, "%s: patterns must be a list of strings", where);
                free_def (d, true, d->pattern != NULL, d->npatterns);
                return -1;
            }
            d->npatterns++;
        }
    }
    return 0;
}

static int load_spec (struct dws_ruleset *rs, json_t *spec, const char *label, dws_error_t *err)
{
    struct rule *r = &rs->rules[rs->nrules];
    json_t *defs;
    size_t i;
    json_t *d;
    char where[128];

    memset (r, 0, sizeof (*r));
    if (json_unpack (spec,
                     "{s:s s?s s?s s:o}",
                     "command", &r->command,
                     "driverLabel", &r->driver_label,
                     "watchStates", &r->watch_states,
                     "ruleDefs", &defs)
            < 0
        || !json_is_array (defs))
        return dws_errorf (err, "rule %zu: needs a command and a ruleDefs list", rs->nrules);
    if (!r->driver_label || !*r->driver_label)
        r->driver_label = label;
    if (!(r->defs = calloc (json_array_size (defs) + 1, sizeof (*r->defs))))
        return dws_errorf (err, "out of memory");
    rs->nrules++;
    snprintf (where, sizeof (where), "rule '%s'", r->command);
    json_array_foreach (defs, i, d) {
        if (load_def (&r->defs[i], d, where, err) < 0)
            return -1;
        r->ndefs++;
    }
    return 0;
}

static size_t count_specs (json_t *rules)
{
    size_t n = 0, i;
    json_t *e;
    if (json_is_object (rules))
        return json_array_size (json_object_get (rules, "spec"));
    json_array_foreach (rules, i, e) {
        json_t *spec = json_object_get (e, "spec");
        n += spec ? json_array_size (spec) : 1;
    }
    return n;
}

static int load_rule_object (struct dws_ruleset *rs, json_t *o, dws_error_t *err)
{
    json_t *spec = json_object_get (o, "spec");
    const char *label = "";
    size_t i;
    json_t *e;

    if (!spec)
        return load_spec (rs, o, "", err);
    if (!json_is_array (spec))
        return dws_errorf (err, "DWDirectiveRule spec must be a list");
    (void)json_unpack (o, "{s:{s:s}}", "metadata", "name", &label);
    json_array_foreach (spec, i, e) {
        if (load_spec (rs, e, label, err) < 0)
            return -1;
    }
    return 0;
}

struct dws_ruleset *dws_ruleset_create (json_t *rules, const char *ns, dws_error_t *err)
{
    struct dws_ruleset *rs;
    size_t i;
    json_t *e;

    if (!json_is_object (rules) && !json_is_array (rules)) {
        dws_errorf (err, "rules must be a DWDirectiveRule or a list");
        return NULL;
    }
    if (!(rs = calloc (1, sizeof (*rs))) || !(rs->ns = strdup (ns ? ns : ""))
        || !(rs->rules = calloc (count_specs (rules) + 1, sizeof (struct rule)))) {
        dws_ruleset_destroy (rs);
        dws_errorf (err, "out of memory");
        return NULL;
    }
    rs->json = json_incref (rules);
    if (json_is_object (rules)) {
        if (load_rule_object (rs, rules, err) < 0)
            goto error;
    }
    else {
        json_array_foreach (rules, i, e) {
            if (!json_is_object (e)) {
                dws_errorf (err, "rules[%zu] is not an object", i);
                goto error;
            }
            if (load_rule_object (rs, e, err) < 0)
                goto error;
        }
    }
    return rs;
error:
    dws_ruleset_destroy (rs);
    return NULL;
}

/* --- validation --------------------------------------------------------- */

static bool parse_go_int (const char *s, long long *v)
{
    char *end;
    if (!*s || (!((*s >= '0' && *s <= '9') || *s == '-' || *s == '+')))
        return false;
    errno = 0;
    *v = strtoll (s, &end, 10);
    return errno == 0 && *end == '\0' && end != s
           && !((s[0] == '-' || s[0] == '+') && s[1] == '\0');
}

static bool bool_word (const char *v)
{
    return !strcasecmp (v, "true") || !strcasecmp (v, "false");
}

static int check_list (const struct ruledef *d, const char *k, const char *v, dws_error_t *err)
{
    char *copy = strdup (v);
    char **words = NULL;
    size_t n = 0;
    int rc = -1;

    if (!copy || !(words = calloc (strlen (v) + 2, sizeof (char *)))) {
        dws_errorf (err, "out of memory");
        goto done;
    }
    for (char *p = copy, *w = copy;; p++) {
        if (*p == ',' || *p == '\0') {
            bool last = *p == '\0';
            *p = '\0';
            words[n++] = w;
            if (last)
                break;
            w = p + 1;
        }
    }
    for (size_t i = 0; d->npatterns && i < n; i++) {
        bool ok = false;
        for (size_t j = 0; j < d->npatterns && !ok; j++)
            ok = matches (&d->patterns[j], words[i]);
        if (!ok) {
            dws_errorf (err, "argument '%s' invalid string '%s' in list '%s'", k, words[i], v);
            goto done;
        }
    }
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < i; j++)
            if (!strcmp (words[i], words[j])) {
                dws_errorf (err, "argument '%s' word '%s' repeated in list '%s'", k, words[i],
                            v);
                goto done;
            }
    rc = 0;
done:
    free (words);
    free (copy);
    return rc;
}

static int check_value (const struct ruledef *d, const char *k, const char *v, dws_error_t *err)
{
    long long i;
    switch (d->type) {
        case T_INTEGER:
            if (!parse_go_int (v, &i))
                return dws_errorf (err, "argument '%s' invalid integer '%s'", k, v);
            if (d->max != 0 && i > d->max)
                return dws_errorf (err,
                                   "argument '%s' specified integer value %lld is greather"
                                   " than maximum value %lld",
                                   k, i, d->max);
            if (d->min != 0 && i < d->min)
                return dws_errorf (err,
                                   "argument '%s' specified integer value %lld is less than"
                                   " minimum value %lld",
                                   k, i, d->min);
            return 0;
        case T_BOOL:
            if (d->pattern && !bool_word (v))
                return dws_errorf (err, "argument '%s' invalid boolean '%s'", k, v);
            return 0;
        case T_STRING:
            if (d->pattern && !matches (&d->pattern_re, v))
                return dws_errorf (err, "argument '%s' invalid string '%s'", k, v);
            return 0;
        case T_LIST:
            return check_list (d, k, v, err);
        default:
            return dws_errorf (err, "unsupported rule type '%s'", d->type_name);
    }
}

/* Validate one parsed directive against one rule (same command). */
static int validate_args (const struct rule *r, json_t *parsed, json_t *unique, dws_error_t *err)
{
    bool *used = calloc (r->ndefs + 1, sizeof (bool));
    size_t i;
    json_t *pair;
    int rc = -1;

    if (!used)
        return dws_errorf (err, "out of memory");
    json_array_foreach (json_object_get (parsed, "args"), i, pair) {
        const char *k = json_string_value (json_array_get (pair, 0));
        const char *v = json_string_value (json_array_get (pair, 1));
        const struct ruledef *d = NULL;
        size_t di;
        for (di = 0; di < r->ndefs; di++)
            if (matches (&r->defs[di].key_re, k)) {
                d = &r->defs[di];
                break;
            }
        if (!d) {
            dws_errorf (err, "unsupported argument '%s'", k);
            goto done;
        }
        if (!v) { /* a bare key */
            if (d->type == T_BOOL && !d->value_required)
                v = "true";
            else if (d->value_required) {
                dws_errorf (err, "argument '%s' requires value", k);
                goto done;
            }
            else
                v = "";
        }
        if (check_value (d, k, v, err) < 0)
            goto done;
        if (d->unique_within && *d->unique_within) {
            char *key;
            if (asprintf (&key, "%s/%s", d->unique_within, v) < 0) {
                dws_errorf (err, "out of memory");
                goto done;
            }
            bool dup = json_object_get (unique, key) != NULL;
            if (!dup)
                json_object_set_new (unique, key, json_true ());
            free (key);
            if (dup) {
                dws_errorf (err, "value '%s' must be unique within '%s'", v, d->unique_within);
                goto done;
            }
        }
        used[di] = true;
    }
    for (size_t di = 0; di < r->ndefs; di++)
        if (r->defs[di].required && !used[di]) {
            dws_errorf (err, "missing required argument '%s'", r->defs[di].key);
            goto done;
        }
    rc = 0;
done:
    free (used);
    return rc;
}

static json_t *states_list (const char *s)
{
    json_t *a = json_array ();
    const char *p = s ? s : "";
    while (a && *p) {
        const char *comma = strchr (p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen (p);
        if (n)
            json_array_append_new (a, json_stringn (p, n));
        p += n + (comma ? 1 : 0);
    }
    return a;
}

json_t *dws_ruleset_validate (struct dws_ruleset *rs, json_t *directives, dws_error_t *err)
{
    json_t *unique = json_object ();
    json_t *out = json_array ();
    size_t i;
    json_t *dwd;

    if (!unique || !out) {
        dws_errorf (err, "out of memory");
        goto error;
    }
    if (!json_is_array (directives)) {
        dws_errorf (err, "directives must be a list of strings");
        goto error;
    }
    if (rs->nrules == 0) {
        dws_errorf (err, "unable to find ruleset in namespace: %s", rs->ns);
        goto error;
    }
    json_array_foreach (directives, i, dwd) {
        const char *text = json_string_value (dwd);
        bool valid = false;
        json_t *parsed;
        if (!text) {
            dws_errorf (err, "directives must be a list of strings");
            goto error;
        }
        if (!(parsed = dws_dw_parse (text, err)))
            goto error;
        const char *command = json_string_value (json_object_get (parsed, "command"));
        for (size_t r = 0; r < rs->nrules; r++) {
            const struct rule *rule = &rs->rules[r];
            if (strcmp (rule->command, command) != 0)
                continue;
            if (validate_args (rule, parsed, unique, err) < 0) {
                json_decref (parsed);
                goto error;
            }
            valid = true;
            json_array_append_new (out,
                                   json_pack ("{s:I s:s s:s s:o}",
                                              "index", (json_int_t)i,
                                              "command", rule->command,
                                              "driverLabel", rule->driver_label,
                                              "watchStates", states_list (rule->watch_states)));
        }
        json_decref (parsed);
        if (!valid) {
            dws_errorf (err, "invalid directive '%s'", text);
            goto error;
        }
    }
    json_decref (unique);
    return out;
error:
    json_decref (unique);
    json_decref (out);
    return NULL;
}

struct dws_ruleset *dws_ruleset_create_json (const char *rules_json,
                                             const char *ns,
                                             dws_error_t *err)
{
    json_t *rules = dws_json_load ("rules", rules_json, 0, err);
    struct dws_ruleset *rs;
    if (!rules)
        return NULL;
    rs = dws_ruleset_create (rules, ns, err);
    json_decref (rules);
    return rs;
}

char *dws_ruleset_validate_json (struct dws_ruleset *rs,
                                 const char *directives_json,
                                 dws_error_t *err)
{
    json_t *dirs = dws_json_load ("directives", directives_json, 0, err);
    char *s;

    if (!dirs)
        return NULL;
    s = dws_json_dump_take (dws_ruleset_validate (rs, dirs, err), err);
    json_decref (dirs);
    return s;
}
