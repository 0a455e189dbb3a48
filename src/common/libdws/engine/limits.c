/* limits.c - rabbit storage per user and per bank: the decisions (limits.h).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/userlimits.h"
#include "limits.h"
#include "parse/capacity.h"
#include "parse/directive.h"
#include "util/jsonio.h"

/* A table's `gib` and `jobs` keys into r (each one given replaces r's). */
static void take (json_t *table, const char *gib, const char *jobs, struct limits_rule *r)
{
    json_t *v;
    if ((v = json_object_get (table, gib)) && json_is_integer (v))
        r->max_gib = json_integer_value (v);
    if ((v = json_object_get (table, jobs)) && json_is_integer (v))
        r->max_jobs = json_integer_value (v);
}

struct limits_rules limits_rules (json_t *limits, const struct limits_who *who)
{
    struct limits_rules r = {{{0, 0}, {0, 0}, {0, 0}}};
    json_t *users = json_object_get (limits, "users");
    json_t *own = NULL;
    char key[32];

    if (!json_is_object (limits))
        return r;
    take (limits, DWS_USERLIMITS_GIB, DWS_USERLIMITS_JOBS, &r.rule[LIMITS_USER]);
    if (who->name)
        own = json_object_get (users, who->name);
    if (!own) {
        snprintf (key, sizeof (key), "%lld", (long long)who->uid);
        own = json_object_get (users, key);
    }
    take (own, DWS_USERLIMITS_GIB, DWS_USERLIMITS_JOBS, &r.rule[LIMITS_USER]);
    if (who->bank) {
        json_t *bank = json_object_get (json_object_get (limits, "banks"), who->bank);
        take (limits, DWS_USERLIMITS_BANK_GIB, DWS_USERLIMITS_BANK_JOBS, &r.rule[LIMITS_BANK]);
        take (bank, DWS_USERLIMITS_BANK_GIB, DWS_USERLIMITS_BANK_JOBS, &r.rule[LIMITS_BANK]);
        take (bank, DWS_USERLIMITS_GIB, DWS_USERLIMITS_JOBS, &r.rule[LIMITS_BANK_USER]);
    }
    return r;
}

static const char *plural (int64_t n)
{
    return n == 1 ? "" : "s";
}

/* A scope's keys, in the messages. */
static const char *const gib_key[LIMITS_NSCOPES] = {DWS_USERLIMITS_GIB, DWS_USERLIMITS_BANK_GIB,
                                                     DWS_USERLIMITS_GIB};
static const char *const jobs_key[LIMITS_NSCOPES] = {
    DWS_USERLIMITS_JOBS, DWS_USERLIMITS_BANK_JOBS, DWS_USERLIMITS_JOBS};
/* The order the scopes are weighed in. */
static const enum limits_scope weighed[LIMITS_NSCOPES] = {LIMITS_USER, LIMITS_BANK_USER,
                                                          LIMITS_BANK};

/* Who holds in a scope ("user alice", "bank physics") and what follows
 * the count (" in bank physics" for a user within a bank). */
static void subject (const struct limits_who *who, enum limits_scope scope, char *holder,
                     size_t hsize, char *after, size_t asize)
{
    char uid[32];
    const char *name = who->name;
    if (!name) {
        snprintf (uid, sizeof (uid), "%lld", (long long)who->uid);
        name = uid;
    }
    if (scope == LIMITS_BANK)
        snprintf (holder, hsize, "bank %s", who->bank);
    else
        snprintf (holder, hsize, "user %s", name);
    if (scope == LIMITS_BANK_USER)
        snprintf (after, asize, " in bank %s", who->bank);
    else if (asize > 0)
        after[0] = '\0';
}

static bool has_scope (const struct limits_who *who, enum limits_scope scope)
{
    return scope == LIMITS_USER || who->bank != NULL;
}

void limits_held_uncount (struct limits_held *held)
{
    held->use[LIMITS_USER].jobs = -1;
}

enum limits_verdict limits_check (const struct limits_rules *r, const struct limits_held *held,
                                  int64_t want, const struct limits_who *who,
                                  enum limits_scope *scope, char *why, size_t size)
{
    char holder[320], after[300];
    for (int i = 0; i < LIMITS_NSCOPES; i++) {
        enum limits_scope s = weighed[i];
        const struct limits_rule *rule = &r->rule[s];
        if (!has_scope (who, s) || rule->max_gib <= 0 || want <= rule->max_gib)
            continue;
        subject (who, s, holder, sizeof (holder), after, sizeof (after));
        snprintf (why, size, "Requested a total of %lld GiB of rabbit storage but %s is %lld"
                  " GiB (%s%s)", (long long)want, gib_key[s], (long long)rule->max_gib, holder,
                  after);
        if (scope)
            *scope = s;
        return LIMITS_NEVER;
    }
    for (int i = 0; i < LIMITS_NSCOPES; i++) {
        enum limits_scope s = weighed[i];
        const struct limits_rule *rule = &r->rule[s];
        const struct limits_use *use = &held->use[s];
        const char *key;
        int64_t max;
        if (!has_scope (who, s))
            continue;
        if (rule->max_jobs > 0 && use->jobs + 1 > rule->max_jobs)
            key = jobs_key[s], max = rule->max_jobs;
        else if (rule->max_gib > 0 && use->gib + want > rule->max_gib)
            key = gib_key[s], max = rule->max_gib;
        else
            continue;
        subject (who, s, holder, sizeof (holder), after, sizeof (after));
        snprintf (why, size, "%s %lld: %s holds %lld GiB in %lld job%s%s", key, (long long)max,
                  holder, (long long)use->gib, (long long)use->jobs, plural (use->jobs), after);
        if (scope)
            *scope = s;
        return LIMITS_WAIT;
    }
    if (size > 0)
        why[0] = '\0';
    return LIMITS_GO;
}

enum limits_verdict limits_job_verdict (json_t *limits, const struct limits_who *who,
                                        const struct limits_held *held, bool listed,
                                        int64_t want, char *why, size_t size)
{
    if (!limits) {
        if (size > 0)
            why[0] = '\0';
        return LIMITS_GO;
    }
    struct limits_rules r = limits_rules (limits, who);
    enum limits_verdict v = limits_check (&r, held, want, who, NULL, why, size);
    if (v == LIMITS_GO && !listed) {
        snprintf (why, size, "the persistent storage is not listed yet");
        return LIMITS_WAIT;
    }
    return v;
}

/* A scope of the waiting jobs' (limits_turns): what it holds, and how many
 * of its waiting jobs stay. */
struct scope_count {
    enum limits_scope scope;
    int64_t uid;      /* LIMITS_USER, LIMITS_BANK_USER */
    const char *bank; /* LIMITS_BANK, LIMITS_BANK_USER */
    struct limits_use use;
    int64_t stayed;
};

static bool same_scope (const struct scope_count *c, enum limits_scope scope,
                        const struct limits_who *who)
{
    return c->scope == scope && (scope == LIMITS_BANK || c->uid == who->uid)
           && (scope == LIMITS_USER || !strcmp (c->bank, who->bank));
}

/* The count of who's scope, added to counts[*n] when new (room for 3 per
 * waiting job was made). */
static struct scope_count *count_of (struct scope_count *counts, size_t *n,
                                     enum limits_scope scope, const struct limits_who *who,
                                     limits_use_f use_of, void *arg)
{
    for (size_t i = 0; i < *n; i++)
        if (same_scope (&counts[i], scope, who))
            return &counts[i];
    struct scope_count *c = &counts[(*n)++];
    c->scope = scope;
    c->uid = who->uid;
    c->bank = who->bank;
    c->use = use_of (arg, scope, who);
    c->stayed = 0;
    return c;
}

void limits_turns (json_t *limits, struct limits_turn *turns, size_t n, limits_use_f use_of,
                   void *arg)
{
    struct scope_count *counts = n ? calloc (n * LIMITS_NSCOPES, sizeof (*counts)) : NULL;
    size_t ncounts = 0;
    char why[8];

    for (size_t i = 0; i < n; i++) {
        struct limits_turn *t = &turns[i];
        struct scope_count *c[LIMITS_NSCOPES] = {NULL, NULL, NULL};
        enum limits_scope no = LIMITS_USER;
        t->behind = 0;
        t->go = false;
        memset (&t->held, 0, sizeof (t->held));
        if (!counts) { /* out of memory: every job waits, counted by nothing */
            t->behind = 1;
            continue;
        }
        for (int s = 0; s < LIMITS_NSCOPES; s++) {
            if (!has_scope (&t->who, (enum limits_scope)s))
                continue;
            c[s] = count_of (counts, &ncounts, (enum limits_scope)s, &t->who, use_of, arg);
            t->held.use[s] = c[s]->use;
            t->behind += c[s]->stayed;
        }
        struct limits_rules r = limits_rules (limits, &t->who);
        enum limits_verdict v = limits_check (&r, &t->held, t->want, &t->who, &no, why,
                                              sizeof (why));
        t->go = t->behind == 0 && v == LIMITS_GO;
        for (int s = 0; s < LIMITS_NSCOPES; s++) {
            if (!c[s])
                continue;
            if (t->go) {
                c[s]->use.gib += t->want;
                c[s]->use.jobs++;
            }
            /* it stays: the younger jobs of the scope that said no (or of
             * those it waits behind in) wait behind it */
            else if (v != LIMITS_GO ? (enum limits_scope)s == no : c[s]->stayed > 0)
                c[s]->stayed++;
        }
    }
    free (counts);
}

static bool per_node (const char *type)
{
    return type && (!strcmp (type, "xfs") || !strcmp (type, "gfs2") || !strcmp (type, "raw"));
}

/* Each jobdw and create_persistent directive's GiB, added to its type's
 * in by_type. */
static int gib_by_type (json_t *directives, int64_t nnodes, json_t *by_type, dws_error_t *err)
{
    size_t i;
    json_t *d;

    if (nnodes < 1)
        nnodes = 1;
    json_array_foreach (directives, i, d) {
        json_t *parsed = dws_dw_parse (json_string_value (d), err);
        int64_t bytes;
        if (!parsed)
            return -1;
        const char *cmd = json_string_value (json_object_get (parsed, "command"));
        const char *type = dws_dw_arg (parsed, "type");
        if (cmd && (!strcmp (cmd, "jobdw") || !strcmp (cmd, "create_persistent"))
            && (per_node (type) || (type && !strcmp (type, "lustre")))) {
            if (dws_capacity_parse (dws_dw_arg (parsed, "capacity"), &bytes, err) < 0) {
                json_decref (parsed);
                return -1;
            }
            int64_t g = dws_gib_ceil (bytes);
            /* create_persistent's storage is the same whatever the node count */
            g = per_node (type) && !strcmp (cmd, "jobdw") ? g * nnodes : g;
            json_int_t had = json_integer_value (json_object_get (by_type, type));
            if (json_object_set_new (by_type, type, json_integer (had + g)) < 0) {
                json_decref (parsed);
                return dws_errorf (err, "out of memory");
            }
        }
        json_decref (parsed);
    }
    return 0;
}

json_t *limits_job_gib_by_type (json_t *directives, int64_t nnodes, dws_error_t *err)
{
    json_t *by_type = json_object ();
    if (!by_type) {
        dws_errorf (err, "out of memory");
        return NULL;
    }
    if (gib_by_type (directives, nnodes, by_type, err) < 0) {
        json_decref (by_type);
        return NULL;
    }
    return by_type;
}

int limits_job_gib (json_t *directives, int64_t nnodes, int64_t *gib, dws_error_t *err)
{
    json_t *by_type = limits_job_gib_by_type (directives, nnodes, err);
    const char *type;
    json_t *g;
    int64_t total = 0;
    if (!by_type)
        return -1;
    json_object_foreach (by_type, type, g)
        total += json_integer_value (g);
    json_decref (by_type);
    *gib = total;
    return 0;
}

static const char *const verdict_names[] = {"go", "wait", "never"};

/* A query's {"gib", "jobs"} (absent: nothing held). */
static struct limits_use use_in (json_t *q, const char *key)
{
    json_t *use = json_object_get (q, key);
    return (struct limits_use){json_integer_value (json_object_get (use, "gib")),
                               json_integer_value (json_object_get (use, "jobs"))};
}

/* The uses the query gives, for limits_turns. */
static struct limits_use query_use (void *arg, enum limits_scope scope,
                                    const struct limits_who *who)
{
    static const char *const keys[LIMITS_NSCOPES] = {"use", "bank_use", "bank_user_use"};
    (void)who;
    return use_in (arg, keys[scope]);
}

char *dws_limits_decide_json (const char *query_json, dws_error_t *err)
{
    json_t *q = dws_json_load ("query", query_json, 0, err);
    json_t *want, *v, *out;
    char why[DWS_ERROR_TEXT_MAX] = "";
    struct limits_turn *turns = NULL;
    size_t i, n;
    int admit = 0;
    enum limits_verdict verdict = LIMITS_GO;

    if (!q)
        return NULL;
    want = json_object_get (q, "want");
    if (!json_is_object (q) || !json_is_array (want) || !json_is_integer (json_object_get (q, "uid"))) {
        json_decref (q);
        dws_errorf (err, "query: needs uid (integer) and want (list of GiB)");
        return NULL;
    }
    struct limits_who who = {json_integer_value (json_object_get (q, "uid")),
                             json_string_value (json_object_get (q, "name")),
                             json_string_value (json_object_get (q, "bank"))};
    json_t *limits = json_object_get (q, "limits");
    n = json_array_size (want);
    if (n > 0 && !(turns = calloc (n, sizeof (*turns)))) {
        json_decref (q);
        dws_errorf (err, "out of memory");
        return NULL;
    }
    json_array_foreach (want, i, v) {
        turns[i].who = who;
        turns[i].want = json_integer_value (v);
    }
    limits_turns (limits, turns, n, query_use, q);
    while ((size_t)admit < n && turns[admit].go)
        admit++;
    if (n > 0) {
        struct limits_rules r = limits_rules (limits, &who);
        verdict = limits_check (&r, &turns[0].held, turns[0].want, &who, NULL, why,
                                sizeof (why));
    }
    out = json_pack ("{s:s s:s s:i}", "verdict", verdict_names[verdict], "why", why, "admit",
                     admit);
    free (turns);
    json_decref (q);
    return dws_json_dump_take (out, err);
}
