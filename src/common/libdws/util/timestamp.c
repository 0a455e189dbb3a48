/* timestamp.c - Kubernetes' times (RFC 3339) as unix time (timestamp.h).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <ctype.h>
#include <string.h>
#include <time.h>

#include "timestamp.h"

/* n digits at s into *v */
static int digits (const char *s, int n, int *v)
{
    *v = 0;
    for (int i = 0; i < n; i++) {
        if (!isdigit ((unsigned char)s[i]))
            return -1;
        *v = *v * 10 + (s[i] - '0');
    }
    return 0;
}

int dws_timestamp_parse (const char *s, double *t)
{
    struct tm tm;
    int year, mon, day, hour, min, sec, oh, om;
    double frac = 0, scale = 0.1;

    if (!s || strlen (s) < 20 || digits (s, 4, &year) < 0 || s[4] != '-'
        || digits (s + 5, 2, &mon) < 0 || s[7] != '-' || digits (s + 8, 2, &day) < 0
        || (s[10] != 'T' && s[10] != 't') || digits (s + 11, 2, &hour) < 0 || s[13] != ':'
        || digits (s + 14, 2, &min) < 0 || s[16] != ':' || digits (s + 17, 2, &sec) < 0)
        return -1;
    if (mon < 1 || mon > 12 || day < 1 || day > 31 || hour > 23 || min > 59 || sec > 60)
        return -1;
    s += 19;
    if (*s == '.') {
        if (!isdigit ((unsigned char)*++s))
            return -1;
        for (; isdigit ((unsigned char)*s); s++, scale /= 10)
            frac += (*s - '0') * scale;
    }
    int offset = 0;
    if ((*s == 'Z' || *s == 'z') && s[1] == '\0')
        offset = 0;
    else if ((*s == '+' || *s == '-') && strlen (s) == 6 && digits (s + 1, 2, &oh) == 0
             && s[3] == ':' && digits (s + 4, 2, &om) == 0 && oh <= 23 && om <= 59)
        offset = (*s == '-' ? -1 : 1) * (oh * 3600 + om * 60);
    else
        return -1;
    memset (&tm, 0, sizeof (tm));
    tm.tm_year = year - 1900;
    tm.tm_mon = mon - 1;
    tm.tm_mday = day;
    tm.tm_hour = hour;
    tm.tm_min = min;
    tm.tm_sec = sec;
    *t = (double)timegm (&tm) - offset + frac;
    return 0;
}
