/* tap.h - a minimal TAP producer for libdws unit tests (meson test
 * protocol 'tap').  Header-only so each test is one file.
 *
 *   ok (cond, fmt, ...)       one test point
 *   is (got, expected, ...)   string equality, prints both on failure
 *   cmp_ok (a, op, b, ...)    integer comparison (op is a C operator)
 *   diag (fmt, ...)           comment line
 *   done_testing ()           prints the plan, returns the exit code
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_TAP_H
#define DWS_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int tap_count;
static int tap_failed;

__attribute__ ((format (printf, 2, 3), unused))
static int ok (int cond, const char *fmt, ...)
{
    va_list ap;
    tap_count++;
    if (!cond)
        tap_failed++;
    printf ("%sok %d - ", cond ? "" : "not ", tap_count);
    va_start (ap, fmt);
    vprintf (fmt, ap);
    va_end (ap);
    printf ("\n");
    fflush (stdout);
    return cond;
}

__attribute__ ((format (printf, 1, 2), unused))
static void diag (const char *fmt, ...)
{
    va_list ap;
    printf ("# ");
    va_start (ap, fmt);
    vprintf (fmt, ap);
    va_end (ap);
    printf ("\n");
}

#define is(got, expected, ...)                                               \
    do {                                                                     \
        const char *tap_g_ = (got);                                          \
        const char *tap_e_ = (expected);                                     \
        int tap_c_ = (tap_g_ && tap_e_ && strcmp (tap_g_, tap_e_) == 0)      \
                     || (!tap_g_ && !tap_e_);                                \
        if (!ok (tap_c_, __VA_ARGS__)) {                                     \
            diag ("     got: '%s'", tap_g_ ? tap_g_ : "(null)");             \
            diag ("expected: '%s'", tap_e_ ? tap_e_ : "(null)");             \
        }                                                                    \
    } while (0)

#define cmp_ok(a, op, b, ...)                                                \
    do {                                                                     \
        long long tap_a_ = (long long)(a);                                   \
        long long tap_b_ = (long long)(b);                                   \
        if (!ok (tap_a_ op tap_b_, __VA_ARGS__))                             \
            diag ("%lld %s %lld is false", tap_a_, #op, tap_b_);             \
    } while (0)

__attribute__ ((unused))
static int done_testing (void)
{
    printf ("1..%d\n", tap_count);
    if (tap_failed)
        diag ("failed %d of %d tests", tap_failed, tap_count);
    return tap_failed ? 1 : 0;
}

#endif /* !DWS_TAP_H */
