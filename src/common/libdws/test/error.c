/* SPDX-License-Identifier: LGPL-3.0-or-later */
#include <errno.h>
#include <string.h>

#include "tap.h"
#include "util/error.h"
#include "util/memory.h"

static void test_errorf (void)
{
    dws_error_t err;
    errno = ENOENT;
    ok (dws_errorf (&err, "bad %s '%d'", "thing", 42) == -1,
        "dws_errorf returns -1");
    is (err.text, "bad thing '42'", "message is formatted");
    ok (errno == ENOENT, "errno is preserved");
    ok (dws_errorf (NULL, "x") == -1, "dws_errorf accepts a NULL err");
    dws_error_clear (&err);
    is (err.text, "", "dws_error_clear empties the text");
}

static void test_truncation (void)
{
    dws_error_t err;
    char big[DWS_ERROR_TEXT_MAX * 2];
    memset (big, 'x', sizeof (big) - 1);
    big[sizeof (big) - 1] = '\0';
    dws_errorf (&err, "%s", big);
    cmp_ok (strlen (err.text), ==, DWS_ERROR_TEXT_MAX - 1,
            "long message is cut to the buffer");
    is (err.text + DWS_ERROR_TEXT_MAX - 4, "...", "cut message ends in ...");
}

static void test_prefix (void)
{
    dws_error_t err;
    dws_errorf (&err, "invalid directive '%s'", "#DW foo");
    ok (dws_error_prefix (&err, "directive %d: ", 0) == -1,
        "dws_error_prefix returns -1");
    is (err.text, "directive 0: invalid directive '#DW foo'",
        "prefix is prepended");
}

int main (void)
{
    test_errorf ();
    test_truncation ();
    test_prefix ();
    ok (strlen (dws_version ()) > 0, "dws_version is non-empty");
    return done_testing ();
}
