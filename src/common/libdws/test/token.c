/* token.c - the engine's one token namespace (engine/shapes/token.h): every kind
 * written then parsed back, the wire texts each writes, and the tokens
 * that are none of them refused with their text.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "engine/shapes/token.h"
#include "health/health.h"
#include "tap.h"

/* Write a token of kind k as its shape says (health's as health/batch.c
 * does), parse it back: the same kind, number, step and rabbit. */
static void round_trip (enum token_kind k, json_int_t n, enum drain_step step)
{
    char buf[320];
    struct token t;
    dws_error_t err;
    struct job job = {.id = n};
    switch (token_kind_shape (k)) {
    case TOKEN_JOB:
        token_for (buf, sizeof (buf), k, &job);
        break;
    case TOKEN_REQUEST:
        token_for_request (buf, sizeof (buf), k, n);
        break;
    case TOKEN_STEP:
        token_for_step (buf, sizeof (buf), k, n, step, "rabbit-1:x");
        break;
    case TOKEN_HEALTH:
        snprintf (buf, sizeof (buf), DWS_HEALTH_TOKEN "%lu", (unsigned long)n);
        break;
    }
    int rc = token_parse (buf, &t, &err);
    bool same = rc == 0 && t.kind == (int)k && t.n == n && !strcmp (t.word, token_kind_name (k));
    if (token_kind_shape (k) == TOKEN_STEP)
        same = same && t.step == step && t.rabbit && !strcmp (t.rabbit, "rabbit-1:x");
    else
        same = same && t.step == DRAIN_STEP_COUNT && !t.rabbit;
    ok (same, "%s: written '%s', parsed back", token_kind_name (k), buf);
    if (rc < 0)
        diag ("%s", err.text);
}

static void test_round_trip (void)
{
    int steps = 0;
    for (int k = 0; k < TOK_COUNT; k++) {
        round_trip ((enum token_kind)k, 1, DRAIN_STEP_STORAGE);
        round_trip ((enum token_kind)k, INT64_MAX, DRAIN_STEP_STORAGE);
        if (token_kind_shape ((enum token_kind)k) == TOKEN_STEP)
            for (int s = 0; s < DRAIN_STEP_COUNT; s++, steps++)
                round_trip ((enum token_kind)k, 42, (enum drain_step)s);
    }
    ok (steps == DRAIN_STEP_COUNT, "every drain step written and read (%d)", steps);
}

static void test_one_table (void)
{
    bool unique = true, plain = true;
    for (int k = 0; k < TOK_COUNT; k++) {
        const char *name = token_kind_name ((enum token_kind)k);
        plain = plain && *name && !strchr (name, ':');
        unique = unique && token_kind_parse (name, strlen (name)) == k;
    }
    ok (plain, "no kind's word is empty or holds a ':' (the first ':' ends it)");
    ok (unique, "each kind's word is its own (token_kind_parse finds that kind)");
    is (token_kind_name (TOK_HEALTH), DWS_HEALTH_TOKEN_KIND,
        "rabbit health's kind is the word health.h owns");
    is (token_kind_name (TOK_COUNT), "?", "no kind: '?'");
    is (token_step_name (DRAIN_STEP_COUNT), "?", "no step: '?'");
}

/* The wire texts: what each kind's token looks like on an action. */
static void test_wire (void)
{
    char buf[320];
    struct job job = {.id = 900};
    is (token_for (buf, sizeof (buf), TOK_CREATE, &job), "create:900", "a job's: <kind>:<jobid>");
    is (token_for (buf, sizeof (buf), TOK_JOB_INFO, &job), "job-info:900", "job-info's");
    is (token_for (buf, sizeof (buf), TOK_PRESTAGE_FIND, &job), "prestage-find:900",
        "an RPC's (prestage-find)");
    is (token_for_request (buf, sizeof (buf), TOK_PERSISTENT, 3), "persistent-share:3",
        "a persistent share or unshare: persistent-share:<seq>");
    is (token_for_request (buf, sizeof (buf), TOK_DF, 4), "df:4", "dws.rabbits {df}: df:<seq>");
    is (token_for_step (buf, sizeof (buf), TOK_DRAIN, 5, DRAIN_STEP_ROLLBACK, "rabbit1"),
        "drain:5:rollback:rabbit1", "a drain's step: drain:<seq>:<step>:<rabbit>");
    const char *words[] = {"storage", "node", "taint", "unannotate", "rollback"};
    bool all = true;
    for (int s = 0; s < DRAIN_STEP_COUNT; s++)
        all = all && !strcmp (token_step_name ((enum drain_step)s), words[s]);
    ok (all, "the drain steps' words: storage, node, taint, unannotate, rollback");
}

static void refused (const char *text)
{
    struct token t;
    dws_error_t err = {0};
    char want[512];
    snprintf (want, sizeof (want), "unknown token '%s'", text);
    ok (token_parse (text, &t, &err) < 0 && !strcmp (err.text, want), "refused: %s", want);
}

static void test_malformed (void)
{
    refused ("");
    refused ("nocolon");
    refused (":900");
    refused ("state:");
    refused ("state:abc");
    refused ("state:-900");
    refused ("state:+900");
    refused ("state:900 ");
    refused ("state:9223372036854775808"); /* 2^63 */
    refused ("state:000000000000000000000900"); /* more than 20 digits */
    refused ("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx:900");
    refused ("df:");
    refused ("df:1x");
    refused ("df:1:node:rabbit1"); /* a request's token has no step */
    refused ("persistent-share:abc");
    refused ("health:abc");
    refused ("health:");
    refused ("drain:1");
    refused ("drain:1:storage");
    refused ("drain:1:storage:");
    refused ("drain:1:bogus:rabbit1");
    refused ("drain:x:storage:rabbit1");
    refused ("drain::storage:rabbit1");
    struct token t;
    dws_error_t err;
    ok (token_parse (NULL, &t, &err) < 0 && !strcmp (err.text, "unknown token ''"),
        "no text: refused");

    ok (token_parse ("bogus:900", &t, &err) == 0 && t.kind == -1 && !strcmp (t.word, "bogus")
            && t.n == 900,
        "a word no kind has is read as a job's: its handler logs it with the job's name");
    ok (token_parse ("state:0900", &t, &err) == 0 && t.kind == TOK_STATE && t.n == 900,
        "a leading zero is a number still (as before)");
    ok (token_parse ("state:9223372036854775807", &t, &err) == 0 && t.n == INT64_MAX,
        "2^63-1 is a job id");
}

static void test_timer_keys (void)
{
    char buf[64];
    enum timer_kind kind = T_NKINDS;
    json_int_t id = 0;
    for (int k = 0; k < T_NKINDS; k++) {
        token_for_timer (buf, sizeof (buf), (enum timer_kind)k, 9223372036854775807LL);
        ok (token_timer_parse (buf, &kind, &id) == 0 && kind == (enum timer_kind)k
                && id == 9223372036854775807LL,
            "timer key %s reads back", buf);
    }
    is (token_for_timer (buf, sizeof (buf), T_TEARDOWN_AFTER, 42), "teardown_after:42",
        "a timer key as the service sees it");
    ok (token_timer_parse ("teardown_after:42", &kind, &id) == 0 && kind == T_TEARDOWN_AFTER
            && id == 42, "teardown_after:42");
    static const char *const bad[] = {"", "setup", "setup:", "setup:x", "setup:-1",
                                      "nosuch:1", ":1", "setup:1:2",
                                      "setup:99999999999999999999", NULL};
    for (int i = 0; bad[i]; i++)
        ok (token_timer_parse (bad[i], &kind, &id) < 0, "'%s' is no timer key", bad[i]);
    ok (token_timer_parse (NULL, &kind, &id) < 0, "NULL is no timer key");
}

int main (void)
{
    test_round_trip ();
    test_one_table ();
    test_wire ();
    test_malformed ();
    test_timer_keys ();
    return done_testing ();
}
