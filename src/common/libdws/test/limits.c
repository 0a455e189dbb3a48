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
    table ("{}", "{\"users\":{}}");
    table ("{\"max_user_gib\": 2048, \"max_user_jobs\": 4}",
           "{\"max_user_gib\":2048,\"max_user_jobs\":4,\"users\":{}}");
    table ("{\"users\": {\"alice\": {\"max_user_gib\": 10}, \"1001\": {}}}",
           "{\"users\":{\"1001\":{},\"alice\":{\"max_user_gib\":10}}}");
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
                                " max_user_gib, max_user_jobs and users)");
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
}

static void test_rule (void)
{
    json_t *l = load ("{\"max_user_gib\": 100, \"max_user_jobs\": 2, \"users\":"
                      " {\"alice\": {\"max_user_gib\": 500}, \"1002\": {\"max_user_jobs\": 9}}}");
    struct limits_rule r = limits_rule (l, 1001, "alice");
    ok (r.max_gib == 500 && r.max_jobs == 2, "alice's own gib, the top level's jobs");
    r = limits_rule (l, 1002, "bob");
    ok (r.max_gib == 100 && r.max_jobs == 9, "bob by uid: his own jobs, the top level's gib");
    r = limits_rule (l, 1003, NULL);
    ok (r.max_gib == 100 && r.max_jobs == 2, "a user without a table: the top level");
    r = limits_rule (NULL, 1003, NULL);
    ok (r.max_gib == 0 && r.max_jobs == 0, "no table: no limits");
    json_decref (l);
}

static void test_check (void)
{
    struct limits_rule r = {2048, 3};
    struct limits_use u = {1900, 2};
    char why[256];
    is (limits_check (&r, u, 200, "alice", why, sizeof (why)) == LIMITS_WAIT ? why : "?",
        "max_user_gib 2048: user alice holds 1900 GiB in 2 jobs", "over the GiB with others");
    ok (limits_check (&r, u, 148, "alice", why, sizeof (why)) == LIMITS_GO && !why[0],
        "exactly at the GiB limit goes");
    u.jobs = 3;
    is (limits_check (&r, u, 1, "alice", why, sizeof (why)) == LIMITS_WAIT ? why : "?",
        "max_user_jobs 3: user alice holds 1900 GiB in 3 jobs", "over the job count");
    u = (struct limits_use){0, 0};
    is (limits_check (&r, u, 4096, "alice", why, sizeof (why)) == LIMITS_NEVER ? why : "?",
        "Requested a total of 4096 GiB of rabbit storage but max_user_gib is 2048 GiB (user alice)",
        "alone over the GiB: never");
    r = (struct limits_rule){0, 1};
    u = (struct limits_use){0, 1};
    is (limits_check (&r, u, 1 << 20, "1001", why, sizeof (why)) == LIMITS_WAIT ? why : "?",
        "max_user_jobs 1: user 1001 holds 0 GiB in 1 job", "a job count alone: wait");
    r = (struct limits_rule){0, 0};
    ok (limits_check (&r, u, 1 << 30, "x", why, sizeof (why)) == LIMITS_GO, "no limits: go");
}

static void test_admit (void)
{
    struct limits_rule r = {100, 3};
    struct limits_use u = {20, 1};
    int64_t want[] = {30, 40, 5, 1};
    cmp_ok (limits_admit (&r, u, want, 4), ==, 2, "the first two fit, the third is the jobs'");
    int64_t big[] = {90, 1, 1};
    cmp_ok (limits_admit (&r, u, big, 3), ==, 0, "an older job that does not fit stops the rest");
    cmp_ok (limits_admit (&r, u, want, 0), ==, 0, "none waiting");
    r = (struct limits_rule){0, 0};
    cmp_ok (limits_admit (&r, u, big, 3), ==, 3, "no limits: all go");
}

static void test_job_verdict (void)
{
    json_t *l = json_pack ("{s:I s:{s:{s:I}}}", "max_user_gib", (json_int_t)100, "users",
                           "1001", "max_user_jobs", (json_int_t)1);
    struct limits_use u = {90, 0};
    char why[256];
    is (limits_job_verdict (l, 1000, "alice", u, true, 20, why, sizeof (why)) == LIMITS_WAIT
            ? why : "?",
        "max_user_gib 100: user alice holds 90 GiB in 0 jobs", "named by its name");
    u = (struct limits_use){0, 1};
    is (limits_job_verdict (l, 1001, NULL, u, true, 1, why, sizeof (why)) == LIMITS_WAIT
            ? why : "?",
        "max_user_jobs 1: user 1001 holds 0 GiB in 1 job", "no name: by uid, its own table");
    u = (struct limits_use){0, 0};
    is (limits_job_verdict (l, 1000, "alice", u, false, 10, why, sizeof (why)) == LIMITS_WAIT
            ? why : "?",
        "the persistent storage is not listed yet", "would go, the PSIs unlisted: waits");
    is (limits_job_verdict (l, 1000, "alice", u, false, 200, why, sizeof (why)) == LIMITS_NEVER
            ? why : "?",
        "Requested a total of 200 GiB of rabbit storage but max_user_gib is 100 GiB (user alice)",
        "alone over the limit: never, listed or not");
    u = (struct limits_use){99, 0};
    is (limits_job_verdict (l, 1000, "alice", u, false, 10, why, sizeof (why)) == LIMITS_WAIT
            ? why : "?",
        "max_user_gib 100: user alice holds 99 GiB in 0 jobs", "over what is known: says so");
    ok (limits_job_verdict (NULL, 1000, "alice", u, false, 1 << 30, why, sizeof (why))
            == LIMITS_GO && !why[0],
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

int main (void)
{
    test_table ();
    test_rule ();
    test_check ();
    test_admit ();
    test_job_verdict ();
    test_job_gib ();
    return done_testing ();
}
