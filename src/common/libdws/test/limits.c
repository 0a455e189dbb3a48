/* SPDX-License-Identifier: LGPL-3.0-or-later
 *
 * [rabbit.limits]: the table's checks (config/userlimits.h) and the
 * decisions (engine/limits.h), fed by hand.
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "config/userlimits.h"
#include "engine/limits.h"
#include "tap.h"

static json_t *load (const char *text)
{
    json_t *v = json_loads (text, JSON_DECODE_ANY, NULL);
    if (!v) {
        printf ("Bail out! bad JSON in the test: %s\n", text);
        exit (1);
    }
    return v;
}

/* the table's message, or its normalised form */
static void table (const char *in, const char *expect)
{
    dws_error_t err;
    json_t *v = load (in);
    json_t *out = dws_userlimits_check_table ("rabbit.limits", v, &err);
    char *s = out ? json_dumps (out, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    is (out ? s : err.text, expect, "limits %s", in);
    free (s);
    json_decref (out);
    json_decref (v);
}

static void test_table (void)
{
    table ("{}", "{\"banks\":{},\"users\":{}}");
    table ("{\"max_user_gib\": 2048, \"max_user_jobs\": 4}",
           "{\"banks\":{},\"max_user_gib\":2048,\"max_user_jobs\":4,\"users\":{}}");
    table ("{\"users\": {\"alice\": {\"max_user_gib\": 10}, \"1001\": {}}}",
           "{\"banks\":{},\"users\":{\"1001\":{},\"alice\":{\"max_user_gib\":10}}}");
    table ("{\"max_user_gib\": -1}", "rabbit.limits.max_user_gib: must be an integer >= 1, got -1");
    table ("{\"max_user_gib\": \"lots\"}",
           "rabbit.limits.max_user_gib: must be an integer >= 1, got \"lots\"");
    table ("{\"max_user_jobs\": 0}", "rabbit.limits.max_user_jobs: must be an integer >= 1, got 0");
    table ("{\"max_user_jobs\": 1.5}",
           "rabbit.limits.max_user_jobs: must be an integer >= 1, got 1.5");
    table ("{\"max_user_jobs\": true}",
           "rabbit.limits.max_user_jobs: must be an integer >= 1, got true");
    table ("{\"max_user_gib\": 9999999999999}",
           "rabbit.limits.max_user_gib: must be at most 8589934591 GiB, got 9999999999999");
    table ("{\"max_gib\": 1}", "rabbit.limits.max_gib: unknown key (rabbit.limits has"
                                " max_user_gib, max_user_jobs, max_bank_gib, max_bank_jobs,"
                                " users and banks)");
    table ("{\"users\": {\"bob\": {\"users\": {}}}}",
           "rabbit.limits.users.bob.users: unknown key (rabbit.limits.users.bob has"
           " max_user_gib and max_user_jobs)");
    table ("{\"users\": {\"bob\": {\"max_user_jobs\": -2}}}",
           "rabbit.limits.users.bob.max_user_jobs: must be an integer >= 1, got -2");
    table ("{\"users\": {\"bob\": 5}}", "rabbit.limits.users.bob: must be a table holding"
                                        " max_user_gib or max_user_jobs, got 5");
    table ("{\"users\": {\"\": {}}}",
           "rabbit.limits.users: a user must be a name or a uid of 1 to 64 characters, got \"\"");
    table ("{\"users\": []}",
           "rabbit.limits.users: must be a table of user names or uids, got []");
    table ("[]", "rabbit.limits: must be a table, got []");
    /* banks */
    table ("{\"max_bank_gib\": 9000, \"banks\": {\"physics\": {\"max_bank_jobs\": 4,"
           " \"max_user_gib\": 100}}}",
           "{\"banks\":{\"physics\":{\"max_bank_jobs\":4,\"max_user_gib\":100}},"
           "\"max_bank_gib\":9000,\"users\":{}}");
    table ("{\"max_bank_jobs\": 0}",
           "rabbit.limits.max_bank_jobs: must be an integer >= 1, got 0");
    table ("{\"banks\": {\"physics\": {\"max_bank_gib\": 9999999999999}}}",
           "rabbit.limits.banks.physics.max_bank_gib: must be at most 8589934591 GiB,"
           " got 9999999999999");
    table ("{\"banks\": {\"physics\": {\"users\": {}}}}",
           "rabbit.limits.banks.physics.users: unknown key (rabbit.limits.banks.physics has"
           " max_bank_gib, max_bank_jobs, max_user_gib and max_user_jobs)");
    table ("{\"banks\": {\"physics\": 5}}",
           "rabbit.limits.banks.physics: must be a table holding max_bank_gib, max_bank_jobs,"
           " max_user_gib or max_user_jobs, got 5");
    table ("{\"banks\": {\"\": {}}}",
           "rabbit.limits.banks: a bank must be a name of 1 to 255 characters, got \"\"");
    table ("{\"banks\": [\"physics\"]}",
           "rabbit.limits.banks: must be a table of bank names, got [\"physics\"]");
    table ("{\"users\": {\"bob\": {\"max_bank_gib\": 5}}}",
           "rabbit.limits.users.bob.max_bank_gib: unknown key (rabbit.limits.users.bob has"
           " max_user_gib and max_user_jobs)");
}

static void test_rule (void)
{
    json_t *l = load ("{\"max_user_gib\": 100, \"max_user_jobs\": 2, \"users\":"
                      " {\"alice\": {\"max_user_gib\": 500}, \"1002\": {\"max_user_jobs\": 9}}}");
    struct limits_who who = {1001, "alice", NULL};
    struct limits_rules r = limits_rules (l, &who);
    ok (r.rule[LIMITS_USER].max_gib == 500 && r.rule[LIMITS_USER].max_jobs == 2,
        "alice's own gib, the top level's jobs");
    who = (struct limits_who){1002, "bob", NULL};
    r = limits_rules (l, &who);
    ok (r.rule[LIMITS_USER].max_gib == 100 && r.rule[LIMITS_USER].max_jobs == 9,
        "bob by uid: his own jobs, the top level's gib");
    who = (struct limits_who){1003, NULL, NULL};
    r = limits_rules (l, &who);
    ok (r.rule[LIMITS_USER].max_gib == 100 && r.rule[LIMITS_USER].max_jobs == 2,
        "a user without a table: the top level");
    r = limits_rules (NULL, &who);
    ok (r.rule[LIMITS_USER].max_gib == 0 && r.rule[LIMITS_USER].max_jobs == 0,
        "no table: no limits");
    json_decref (l);
}

static void test_bank_rule (void)
{
    json_t *l = load ("{\"max_user_gib\": 100, \"max_bank_gib\": 1000, \"max_bank_jobs\": 10,"
                      " \"banks\": {\"physics\": {\"max_bank_gib\": 5000, \"max_user_gib\": 300,"
                      " \"max_user_jobs\": 3}, \"chem\": {\"max_bank_jobs\": 4}}}");
    struct limits_who who = {1001, "alice", "physics"};
    struct limits_rules r = limits_rules (l, &who);
    ok (r.rule[LIMITS_USER].max_gib == 100, "the user's limits stay beside the bank's");
    ok (r.rule[LIMITS_BANK].max_gib == 5000 && r.rule[LIMITS_BANK].max_jobs == 10,
        "physics: its own GiB, the top level's jobs");
    ok (r.rule[LIMITS_BANK_USER].max_gib == 300 && r.rule[LIMITS_BANK_USER].max_jobs == 3,
        "physics: a user within it");
    who.bank = "chem";
    r = limits_rules (l, &who);
    ok (r.rule[LIMITS_BANK].max_gib == 1000 && r.rule[LIMITS_BANK].max_jobs == 4
            && r.rule[LIMITS_BANK_USER].max_gib == 0,
        "chem: the top level's GiB, its own jobs, no limit per user");
    who.bank = "other";
    r = limits_rules (l, &who);
    ok (r.rule[LIMITS_BANK].max_gib == 1000 && r.rule[LIMITS_BANK].max_jobs == 10,
        "a bank without a table: the top level's");
    who.bank = NULL;
    r = limits_rules (l, &who);
    ok (r.rule[LIMITS_BANK].max_gib == 0 && r.rule[LIMITS_BANK].max_jobs == 0,
        "no bank: no bank limits");
    json_decref (l);
}

/* limits_check's message of a verdict v, or "?" */
static const char *check (const struct limits_rules *r, const struct limits_held *h,
                          int64_t want, const struct limits_who *who, enum limits_verdict v,
                          enum limits_scope *scope, char *why, size_t size)
{
    return limits_check (r, h, want, who, scope, why, size) == v ? why : "?";
}

static void test_check (void)
{
    struct limits_rules r = {{{2048, 3}, {0, 0}, {0, 0}}};
    struct limits_held h = {{{1900, 2}, {0, 0}, {0, 0}}};
    struct limits_who alice = {1001, "alice", NULL};
    enum limits_scope scope = LIMITS_NSCOPES;
    char why[256];
    is (check (&r, &h, 200, &alice, LIMITS_WAIT, &scope, why, sizeof (why)),
        "max_user_gib 2048: user alice holds 1900 GiB in 2 jobs", "over the GiB with others");
    ok (scope == LIMITS_USER, "the user's scope says no");
    ok (limits_check (&r, &h, 148, &alice, NULL, why, sizeof (why)) == LIMITS_GO && !why[0],
        "exactly at the GiB limit goes");
    h.use[LIMITS_USER].jobs = 3;
    is (check (&r, &h, 1, &alice, LIMITS_WAIT, NULL, why, sizeof (why)),
        "max_user_jobs 3: user alice holds 1900 GiB in 3 jobs", "over the job count");
    h.use[LIMITS_USER] = (struct limits_use){0, 0};
    is (check (&r, &h, 4096, &alice, LIMITS_NEVER, NULL, why, sizeof (why)),
        "Requested a total of 4096 GiB of rabbit storage but max_user_gib is 2048 GiB (user alice)",
        "alone over the GiB: never");
    r.rule[LIMITS_USER] = (struct limits_rule){0, 1};
    h.use[LIMITS_USER] = (struct limits_use){0, 1};
    struct limits_who uid = {1001, NULL, NULL};
    is (check (&r, &h, 1 << 20, &uid, LIMITS_WAIT, NULL, why, sizeof (why)),
        "max_user_jobs 1: user 1001 holds 0 GiB in 1 job", "a job count alone: wait");
    r.rule[LIMITS_USER] = (struct limits_rule){0, 0};
    ok (limits_check (&r, &h, 1 << 30, &uid, NULL, why, sizeof (why)) == LIMITS_GO,
        "no limits: go");
}

static void test_check_bank (void)
{
    struct limits_rules r = {{{0, 0}, {2048, 2}, {1024, 0}}};
    struct limits_held h = {{{5000, 9}, {1900, 1}, {1000, 1}}};
    struct limits_who alice = {1001, "alice", "physics"};
    enum limits_scope scope = LIMITS_NSCOPES;
    char why[256];
    is (check (&r, &h, 100, &alice, LIMITS_WAIT, &scope, why, sizeof (why)),
        "max_user_gib 1024: user alice holds 1000 GiB in 1 job in bank physics",
        "a user within a bank is weighed before the bank");
    ok (scope == LIMITS_BANK_USER, "the user's scope within the bank says no");
    h.use[LIMITS_BANK_USER] = (struct limits_use){0, 0};
    is (check (&r, &h, 200, &alice, LIMITS_WAIT, &scope, why, sizeof (why)),
        "max_bank_gib 2048: bank physics holds 1900 GiB in 1 job", "the bank's GiB");
    ok (scope == LIMITS_BANK, "the bank's scope says no");
    h.use[LIMITS_BANK].jobs = 2;
    is (check (&r, &h, 1, &alice, LIMITS_WAIT, NULL, why, sizeof (why)),
        "max_bank_jobs 2: bank physics holds 1900 GiB in 2 jobs", "the bank's job count");
    is (check (&r, &h, 2000, &alice, LIMITS_NEVER, &scope, why, sizeof (why)),
        "Requested a total of 2000 GiB of rabbit storage but max_user_gib is 1024 GiB"
        " (user alice in bank physics)",
        "alone over a user's GiB within the bank: never, before any wait");
    is (check (&r, &h, 4096, &alice, LIMITS_NEVER, NULL, why, sizeof (why)),
        "Requested a total of 4096 GiB of rabbit storage but max_user_gib is 1024 GiB"
        " (user alice in bank physics)", "the first scope that refuses says so");
    r.rule[LIMITS_BANK_USER].max_gib = 0;
    is (check (&r, &h, 4096, &alice, LIMITS_NEVER, &scope, why, sizeof (why)),
        "Requested a total of 4096 GiB of rabbit storage but max_bank_gib is 2048 GiB"
        " (bank physics)", "alone over the bank's GiB: never");
    ok (scope == LIMITS_BANK, "the bank refuses");
    struct limits_who nobank = {1001, "alice", NULL};
    ok (limits_check (&r, &h, 4096, &nobank, NULL, why, sizeof (why)) == LIMITS_GO,
        "no bank: the bank's rules are not weighed");
}

/* The uses a test gives limits_turns: arg is {user, bank, user within
 * the bank}'s use, the same whoever asks. */
static struct limits_use fixed_use (void *arg, enum limits_scope scope,
                                    const struct limits_who *who)
{
    (void)who;
    return ((struct limits_use *)arg)[scope];
}

/* How many of n turns of one who go, each asking want[i]. */
static int go_count (json_t *limits, const struct limits_who *who, struct limits_use *use,
                     const int64_t *want, size_t n, struct limits_turn *turns)
{
    int go = 0;
    for (size_t i = 0; i < n; i++)
        turns[i] = (struct limits_turn){.who = *who, .want = want[i]};
    limits_turns (limits, turns, n, fixed_use, use);
    while ((size_t)go < n && turns[go].go)
        go++;
    return go;
}

static void test_turns (void)
{
    json_t *l = load ("{\"max_user_gib\": 100, \"max_user_jobs\": 3}");
    struct limits_use use[LIMITS_NSCOPES] = {{20, 1}, {0, 0}, {0, 0}};
    struct limits_who alice = {1001, "alice", NULL};
    struct limits_turn t[4];
    int64_t want[] = {30, 40, 5, 1};
    cmp_ok (go_count (l, &alice, use, want, 4, t), ==, 2,
            "the first two fit, the third is the jobs'");
    ok (t[1].held.use[LIMITS_USER].gib == 50 && t[1].held.use[LIMITS_USER].jobs == 2,
        "the second's turn counts the first");
    ok (t[2].behind == 0 && t[3].behind == 1, "the third waits on its own, the fourth behind it");
    int64_t big[] = {90, 1, 1};
    cmp_ok (go_count (l, &alice, use, big, 3, t), ==, 0,
            "an older job that does not fit stops the rest");
    cmp_ok (t[2].behind, ==, 2, "behind both");
    cmp_ok (go_count (l, &alice, use, want, 0, t), ==, 0, "none waiting");
    cmp_ok (go_count (NULL, &alice, use, big, 3, t), ==, 3, "no limits: all go");
    json_decref (l);
}

/* Two users' turns in the same bank; one user's in two banks. */
static struct limits_use zero_use (void *arg, enum limits_scope scope,
                                   const struct limits_who *who)
{
    (void)arg;
    (void)scope;
    (void)who;
    return (struct limits_use){0, 0};
}

static void test_turns_bank (void)
{
    json_t *l = load ("{\"max_user_gib\": 100, \"banks\": {\"physics\": {\"max_bank_gib\": 50,"
                      " \"max_user_jobs\": 1}}}");
    struct limits_turn t[5] = {
        {.who = {1001, "alice", "physics"}, .want = 40},
        {.who = {1002, "bob", "physics"}, .want = 20},   /* the bank is full: waits */
        {.who = {1002, "bob", "chem"}, .want = 20},      /* another bank: goes */
        {.who = {1001, "alice", "physics"}, .want = 1},  /* her 1 job in physics */
        {.who = {1003, "carol", "physics"}, .want = 5},  /* fits, but behind bob */
    };
    limits_turns (l, t, 5, zero_use, NULL);
    ok (t[0].go && !t[1].go && t[2].go && !t[3].go && !t[4].go,
        "the bank's first goes, the rest of the bank waits, the other bank goes");
    cmp_ok (t[1].held.use[LIMITS_BANK].gib, ==, 40, "bob's turn counts alice's job in the bank");
    cmp_ok (t[1].behind, ==, 0, "bob waits on the bank's GiB");
    cmp_ok (t[3].behind, ==, 1, "alice's second is behind bob in the bank");
    cmp_ok (t[4].behind, ==, 1,
            "carol is behind bob alone (alice's second waits on her own limit in the bank)");
    cmp_ok (t[2].held.use[LIMITS_USER].gib, ==, 0, "bob's chem job: bob holds nothing yet");
    json_decref (l);
}

static void test_job_verdict (void)
{
    json_t *l = json_pack ("{s:I s:{s:{s:I}}}", "max_user_gib", (json_int_t)100, "users",
                           "1001", "max_user_jobs", (json_int_t)1);
    struct limits_held h = {{{90, 0}, {0, 0}, {0, 0}}};
    struct limits_who alice = {1000, "alice", NULL}, uid = {1001, NULL, NULL};
    char why[256];
    is (limits_job_verdict (l, &alice, &h, true, 20, why, sizeof (why)) == LIMITS_WAIT ? why : "?",
        "max_user_gib 100: user alice holds 90 GiB in 0 jobs", "named by its name");
    h.use[LIMITS_USER] = (struct limits_use){0, 1};
    is (limits_job_verdict (l, &uid, &h, true, 1, why, sizeof (why)) == LIMITS_WAIT ? why : "?",
        "max_user_jobs 1: user 1001 holds 0 GiB in 1 job", "no name: by uid, its own table");
    h.use[LIMITS_USER] = (struct limits_use){0, 0};
    is (limits_job_verdict (l, &alice, &h, false, 10, why, sizeof (why)) == LIMITS_WAIT ? why
                                                                                        : "?",
        "the persistent storage is not listed yet", "would go, the PSIs unlisted: waits");
    is (limits_job_verdict (l, &alice, &h, false, 200, why, sizeof (why)) == LIMITS_NEVER ? why
                                                                                          : "?",
        "Requested a total of 200 GiB of rabbit storage but max_user_gib is 100 GiB (user alice)",
        "alone over the limit: never, listed or not");
    h.use[LIMITS_USER] = (struct limits_use){99, 0};
    is (limits_job_verdict (l, &alice, &h, false, 10, why, sizeof (why)) == LIMITS_WAIT ? why
                                                                                        : "?",
        "max_user_gib 100: user alice holds 99 GiB in 0 jobs", "over what is known: says so");
    ok (limits_job_verdict (NULL, &alice, &h, false, 1 << 30, why, sizeof (why)) == LIMITS_GO
            && !why[0],
        "no limits table: go");
    json_decref (l);
}

static void gib (const char *dirs, int64_t nnodes, const char *expect)
{
    dws_error_t err;
    json_t *d = load (dirs);
    int64_t g = -1;
    char buf[64];
    if (limits_job_gib (d, nnodes, &g, &err) == 0)
        snprintf (buf, sizeof (buf), "%lld", (long long)g);
    is (g >= 0 ? buf : err.text, expect, "%s on %lld nodes", dirs, (long long)nnodes);
    json_decref (d);
}

static void test_job_gib (void)
{
    gib ("[\"#DW jobdw type=xfs capacity=10GiB name=a\"]", 4, "40");
    gib ("[\"#DW jobdw type=gfs2 capacity=1500MiB name=a\"]", 2, "4");
    gib ("[\"#DW jobdw type=lustre capacity=100GiB name=l\"]", 8, "100");
    gib ("[\"#DW jobdw type=raw capacity=1TB name=r\", \"#DW persistentdw name=p\","
         " \"#DW copy_in source=a destination=b\"]", 1, "932");
    gib ("[\"#DW create_persistent type=xfs capacity=10GiB name=p\"]", 4, "10");
    gib ("[\"#DW destroy_persistent name=p\"]", 4, "0");
    gib ("[\"#DW jobdw type=xfs capacity=10GiB name=a\"]", 0, "10");
    gib ("[\"#DW jobdw type=xfs capacity=lots name=a\"]", 1, "invalid capacity string, lots");
}

static void test_gib_by_type (void)
{
    dws_error_t err;
    json_t *d = load ("[\"#DW jobdw type=xfs capacity=10GiB name=a\","
                      " \"#DW jobdw type=lustre capacity=100GiB name=l\","
                      " \"#DW jobdw type=xfs capacity=1GiB name=b\","
                      " \"#DW create_persistent type=lustre capacity=5GiB name=p\","
                      " \"#DW persistentdw name=q\"]");
    json_t *by = limits_job_gib_by_type (d, 4, &err);
    char *s = by ? json_dumps (by, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    is (s ? s : err.text, "{\"lustre\":105,\"xfs\":44}", "GiB by type on 4 nodes");
    free (s);
    json_decref (by);
    json_decref (d);
    d = load ("[\"#DW jobdw type=gfs2 capacity=x name=a\"]");
    ok (limits_job_gib_by_type (d, 1, &err) == NULL && strstr (err.text, "capacity"),
        "a bad capacity: NULL, with the parse error");
    json_decref (d);
}

int main (void)
{
    test_table ();
    test_rule ();
    test_bank_rule ();
    test_check ();
    test_check_bank ();
    test_turns ();
    test_turns_bank ();
    test_job_verdict ();
    test_job_gib ();
    test_gib_by_type ();
    return done_testing ();
}
