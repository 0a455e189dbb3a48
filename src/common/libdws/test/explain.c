/* SPDX-License-Identifier: LGPL-3.0-or-later */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "wire/explain.h"

/* Room for any note and its sentence. */
#define NOTE_MAX 4096

/* The index of the first row whose pattern matches text, or -1. */
static int first_row (const char *text)
{
    for (int i = 0; i < dws_explain_count (); i++)
        if (dws_explain_match (dws_explain_row_pattern (i), text, NULL, 0) == 1)
            return i;
    return -1;
}

static void test_table_shape (void)
{
    int n = dws_explain_count ();
    bool names_ok = true, shape_ok = true;
    ok (n > 40, "the table has %d rows", n);
    for (int i = 0; i < n; i++) {
        const char *s = dws_explain_row_sentence (i);
        const char *p = dws_explain_row_pattern (i);
        const char *hole = strstr (s, "{}");
        size_t len = strlen (s);
        for (int j = 0; j < i; j++)
            if (!strcmp (dws_explain_row_name (i), dws_explain_row_name (j)))
                names_ok = false;
        if (len == 0 || len > 200 || s[len - 1] != '.' || strchr (s, '*')
            || strstr (s, DWS_EXPLAIN_SEPARATOR) || (hole && strstr (hole + 2, "{}"))
            || (hole && !strstr (p, "{}")) || p[0] == '*' || p[0] == '{') {
            shape_ok = false;
            diag ("row %s: bad sentence or pattern", dws_explain_row_name (i));
        }
    }
    ok (names_ok, "row names are unique");
    ok (shape_ok, "sentences end with '.', hold at most one {} (only where the pattern"
                  " captures), no '*' and no separator; patterns start with a literal");
    ok (dws_explain_row_name (-1) == NULL && dws_explain_row_name (n) == NULL
            && dws_explain_row_pattern (n) == NULL && dws_explain_row_sentence (n) == NULL
            && dws_explain_row_example (n) == NULL,
        "rows out of range are NULL");
}

/* Each row's example is explained by that very row, with its capture. */
static void test_each_row (void)
{
    for (int i = 0; i < dws_explain_count (); i++) {
        const char *name = dws_explain_row_name (i);
        const char *ex = dws_explain_row_example (i);
        const char *tmpl = dws_explain_row_sentence (i);
        char buf[DWS_EXPLAIN_MAX], cap[DWS_EXPLAIN_MAX];
        int first = first_row (ex);
        const char *s = dws_explain (ex, buf, sizeof (buf));
        dws_explain_match (dws_explain_row_pattern (i), ex, cap, sizeof (cap));
        bool good = first == i && s == buf && !strstr (s, "{}");
        if (strstr (tmpl, "{}"))
            good = good && cap[0] && strstr (s, cap);
        else
            good = good && !strcmp (s, tmpl);
        if (!ok (good, "row %s explains its example", name))
            diag ("first row %s, sentence '%s'",
                  first >= 0 ? dws_explain_row_name (first) : "(none)", s ? s : "(null)");
    }
}

static void test_sentences (void)
{
    char buf[DWS_EXPLAIN_MAX];
    is (dws_explain ("DWS/Rabbit interactions failed: workflow hit an error: DW Directive 0: User"
                     " error: PersistentStorageInstance 'scratch' not found",
                     buf, sizeof (buf)),
        "No persistent storage named 'scratch' exists. Check the name, or create it first with a"
        " #DW create_persistent job.",
        "a missing PersistentStorageInstance names it");
    is (dws_explain ("File system creation took too long", buf, sizeof (buf)),
        "The rabbits did not create the job's file system in time (they may be busy or short of"
        " space). Resubmit the job; if it fails again, tell your administrator.",
        "the setup timeout");
    is (dws_explain ("DWS workflow interactions failed: admission webhook \"vworkflow.kb.io\""
                     " denied the request: argument 'type' invalid string 'zfs'",
                     buf, sizeof (buf)),
        "'zfs' is not a rabbit file system type. Use type=xfs, gfs2, lustre or raw in the #DW"
        " directive.",
        "a refused type names the value given");
    ok (strstr (dws_explain ("user ID does not match existing persistent storage", buf,
                             sizeof (buf)),
                "belongs to another user")
            != NULL,
        "both spellings of the persistent storage owner check");
    ok (strstr (dws_explain ("DW Directive 0: User error: User ID does not match existing"
                             " persistent storage",
                             buf, sizeof (buf)),
                "belongs to another user, who created it. Its owner or an admin can share it:"
                " kubectl annotate persistentstorageinstance NAME"
                " dataworkflowservices.github.io/ignore-uid=true.")
            != NULL,
        "persistentdw refused: the owner or an admin can share it by the ignore-uid annotation");
    ok (strstr (dws_explain ("user ID does not match existing persistent storage", buf,
                             sizeof (buf)),
                "ignore-uid")
            == NULL,
        "destroy_persistent refused: no annotation is offered (it does not apply)");
    ok (strstr (dws_explain ("DW Directive 1: Internal error: data movement operation failed"
                             " during 'DataIn', message: ",
                             buf, sizeof (buf)),
                "copy_in")
            != NULL,
        "a copy_in failure with an empty message is still a copy_in failure");
    ok (strstr (dws_explain ("DWS/Rabbit interactions failed: workflow in TransientCondition for"
                             " more than 10 s: DW Directive 0: Internal error: data movement"
                             " operation failed during 'DataOut', message: EIO",
                             buf, sizeof (buf)),
                "copy_out")
            != NULL,
        "DWS' message inside a TransientCondition note decides the row");
    is (dws_explain ("DWS/Rabbit interactions failed: workflow in TransientCondition for more"
                     " than 0.3 s: DW Directive 0: Internal error: ",
                     buf, sizeof (buf)),
        "The rabbit storage service reported a problem that did not clear within 0.3 seconds."
        " Resubmit the job; if it fails again, tell your administrator.",
        "the TransientCondition timeout names its seconds");
}

static void test_unknown (void)
{
    char buf[DWS_EXPLAIN_MAX] = "untouched";
    char out[256];
    const char *unknown = "DWS/Rabbit interactions failed: bad host list: compute[";
    ok (dws_explain (unknown, buf, sizeof (buf)) == NULL, "an unknown text: no sentence");
    ok (dws_explain ("compute-[01-04]", buf, sizeof (buf)) == NULL,
        "a host list (the dws-node-failure note): no sentence");
    ok (dws_explain ("", buf, sizeof (buf)) == NULL, "an empty text: no sentence");
    cmp_ok (dws_explain_note (unknown, out, sizeof (out)), ==, 0, "an unknown note: 0");
    is (out, unknown, "an unknown note is copied unchanged");
    cmp_ok (dws_explain_note ("", out, sizeof (out)), ==, 0, "an empty note: 0");
    is (out, "", "an empty note stays empty");
}

static void test_note (void)
{
    char out[NOTE_MAX];
    const char *note = "DWS/Rabbit interactions failed: workflow hit an error: DW Directive 0:"
                       " User error: persistent storage instance 'scratch' not found";
    size_t n = strlen (note);
    char sentence[DWS_EXPLAIN_MAX];
    dws_explain (note, sentence, sizeof (sentence));
    cmp_ok (dws_explain_note (note, out, sizeof (out)), ==, 1, "a known note: 1");
    ok (!strncmp (out, note, n), "the note comes first, byte for byte");
    ok (!strncmp (out + n, DWS_EXPLAIN_SEPARATOR, strlen (DWS_EXPLAIN_SEPARATOR))
            && !strcmp (out + n + strlen (DWS_EXPLAIN_SEPARATOR), sentence),
        "then the separator and the sentence");

    char again[NOTE_MAX * 2];
    cmp_ok (dws_explain_note (out, again, sizeof (again)), ==, 0, "explained again: 0");
    is (again, out, "explained again: nothing appended");

    /* a wrapper around an explained note (the jobtap plugin's prefix) */
    char wrapped[NOTE_MAX * 2];
    snprintf (wrapped, sizeof (wrapped), "DWS workflow interactions failed: %s", out);
    cmp_ok (dws_explain_note (wrapped, again, sizeof (again)), ==, 0,
            "a prefixed explained note: 0");
    is (again, wrapped, "a prefixed explained note: nothing appended");

    /* in place */
    char inplace[NOTE_MAX];
    snprintf (inplace, sizeof (inplace), "%s", note);
    cmp_ok (dws_explain_note (inplace, inplace, sizeof (inplace)), ==, 1, "buf may be the note");
    is (inplace, out, "in place gives the same");
}

static void test_truncation (void)
{
    const char *note = "File system creation took too long";
    size_t n = strlen (note);
    char out[NOTE_MAX];

    cmp_ok (dws_explain_note (note, out, n + 5), ==, 0, "no room for the sentence: 0");
    is (out, note, "no room for the sentence: the note whole, no sentence");
    cmp_ok (dws_explain_note (note, out, n + 1), ==, 0, "just room for the note: 0");
    is (out, note, "just room for the note: the note");
    cmp_ok (dws_explain_note (note, out, 5), ==, 0, "no room for the note: 0");
    is (out, "File", "no room for the note: what fits");

    /* a cut never splits a UTF-8 character */
    const char *utf8 = "caf\xc3\xa9 timed out waiting for mounts";
    cmp_ok (dws_explain_note (utf8, out, 5), ==, 0, "a cut note: 0");
    is (out, "caf", "the cut falls before the two-byte character");

    char small[40];
    const char *s = dws_explain (note, small, sizeof (small));
    ok (s == small && strlen (s) < sizeof (small) && !strncmp (s, "The rabbits did not", 19),
        "dws_explain cuts a sentence to a small buffer");
}

static void test_long_capture (void)
{
    /* a capture longer than DWS_EXPLAIN_CAPTURE_MAX is cut, "..." added,
     * at a character start */
    char text[1024], buf[DWS_EXPLAIN_MAX];
    size_t n = (size_t)snprintf (text, sizeof (text), "unsupported container filesystem: ");
    while (n < 600) {
        memcpy (text + n, "\xc3\xa9", 2); /* é */
        n += 2;
    }
    text[n] = '\0';
    const char *s = dws_explain (text, buf, sizeof (buf));
    const char *dots = s ? strstr (s, "... storage") : NULL;
    ok (s && dots, "a long capture ends in '...'");
    ok (dots && dots - strstr (s, "\xc3\xa9") <= DWS_EXPLAIN_CAPTURE_MAX
            && (dots - strstr (s, "\xc3\xa9")) % 2 == 0,
        "it is cut to DWS_EXPLAIN_CAPTURE_MAX bytes, between characters");
}

static void test_match (void)
{
    char cap[64];
    cmp_ok (dws_explain_match ("b{}d", "abcde", cap, sizeof (cap)), ==, 1, "b{}d matches abcde");
    is (cap, "c", "and captures c");
    cmp_ok (dws_explain_match ("b{}d", "abde", cap, sizeof (cap)), ==, 0,
            "{} needs at least one character");
    cmp_ok (dws_explain_match ("b*d", "abde", cap, sizeof (cap)), ==, 1, "* takes none");
    is (cap, "", "no {}: an empty capture");
    cmp_ok (dws_explain_match ("'{}'", "x 'one' and 'two'", cap, sizeof (cap)), ==, 1,
            "quoted capture");
    is (cap, "one", "the first, shortest one");
    cmp_ok (dws_explain_match ("is: {}", "name is: tail end", cap, sizeof (cap)), ==, 1,
            "trailing capture");
    is (cap, "tail end", "takes the rest of the text");
    cmp_ok (dws_explain_match ("{} is", "this is it", cap, sizeof (cap)), ==, 1,
            "leading capture");
    is (cap, "this", "takes the text up to the first literal");
    cmp_ok (dws_explain_match ("A*B*C", "xxAyyByyC", NULL, 0), ==, 1, "stars in between");
    cmp_ok (dws_explain_match ("A*C*B", "xxAyyByyC", NULL, 0), ==, 0, "order matters");
    cmp_ok (dws_explain_match ("abc", "ABC", NULL, 0), ==, 0, "case-sensitive");
    cmp_ok (dws_explain_match ("", "anything", NULL, 0), ==, 1, "the empty pattern matches");
    cmp_ok (dws_explain_match ("{}", "", NULL, 0), ==, 0, "{} needs a character");
    cmp_ok (dws_explain_match ("x{}{}", "xab", cap, sizeof (cap)), ==, 1, "two {} need two");
    cmp_ok (dws_explain_match ("x{}{}", "xa", NULL, 0), ==, 0, "and fail with one");
    cmp_ok (dws_explain_match ("{", "a{b", NULL, 0), ==, 1, "a lone { is literal");
    cmp_ok (dws_explain_match ("b{}", "abcdef", cap, 3), ==, 1, "a small capture buffer");
    is (cap, "cd", "cuts the capture");
    cmp_ok (dws_explain_match (NULL, "x", NULL, 0), ==, -1, "NULL pattern: -1");
    cmp_ok (dws_explain_match ("x", NULL, NULL, 0), ==, -1, "NULL text: -1");
}

static void test_bad_args (void)
{
    char buf[16];
    ok (dws_explain (NULL, buf, sizeof (buf)) == NULL, "dws_explain: NULL text");
    ok (dws_explain ("DWS epilog timed out", NULL, 10) == NULL, "dws_explain: NULL buf");
    ok (dws_explain ("DWS epilog timed out", buf, 0) == NULL, "dws_explain: zero size");
    cmp_ok (dws_explain_note (NULL, buf, sizeof (buf)), ==, -1, "dws_explain_note: NULL note");
    cmp_ok (dws_explain_note ("x", NULL, 10), ==, -1, "dws_explain_note: NULL buf");
    cmp_ok (dws_explain_note ("x", buf, 0), ==, -1, "dws_explain_note: zero size");
}

/* Long texts made of the patterns' own pieces: every row must still
 * answer quickly (the matcher never goes back).
 */
static void test_pathological (void)
{
    size_t n = 1 << 20;
    char *text = malloc (n + 1);
    char *out = malloc (n + 1024);
    const char *pieces[] = {"{}", "*", "'", " -- ", "DW Directive ", "argument '", "a"};
    bool all = true;
    if (!ok (text && out, "allocated 1 MiB texts")) {
        free (text);
        free (out);
        return;
    }
    for (size_t k = 0; k < sizeof (pieces) / sizeof (pieces[0]); k++) {
        size_t len = strlen (pieces[k]);
        for (size_t i = 0; i < n; i++)
            text[i] = pieces[k][i % len];
        text[n] = '\0';
        if (dws_explain_note (text, out, n + 1024) < 0 || strncmp (out, text, n) != 0)
            all = false;
    }
    ok (all, "1 MiB of repeated pattern pieces: the note comes back first");
    /* the separator followed by a sentence's start, many times */
    size_t m = 0;
    while (m + 64 < n) {
        memcpy (text + m, " -- The rabbits did not create ", 31);
        m += 31;
    }
    text[m] = '\0';
    ok (dws_explain_note (text, out, n + 1024) == 0 && !strcmp (out, text),
        "a text of sentence starts: unchanged");
    free (text);
    free (out);
}

int main (void)
{
    test_table_shape ();
    test_each_row ();
    test_sentences ();
    test_unknown ();
    test_note ();
    test_truncation ();
    test_long_capture ();
    test_match ();
    test_bad_args ();
    test_pathological ();
    return done_testing ();
}
