/* timestamp.h - Kubernetes' times (RFC 3339) as unix time.
 *
 * metav1.Time ("2026-11-27T23:10:00Z") and metav1.MicroTime
 * ("2026-11-27T23:10:00.123456Z"), or with an offset ("+01:00"): what the
 * API server writes in metadata.creationTimestamp and DWS in a Workflow's
 * status.readyChange.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_UTIL_TIMESTAMP_H
#define DWS_UTIL_TIMESTAMP_H

/* The unix time of s, in *t; -1 when s is NULL or not an RFC 3339 time. */
int dws_timestamp_parse (const char *s, double *t);

#endif /* !DWS_UTIL_TIMESTAMP_H */
