/* f58.h - a job id as Flux's FLUID base58 ("f58" encoding), in plain
 * ASCII: "f" and the base58 digits (flux-core's "f58plain", which writes
 * "f" where its "f58" writes the Unicode script f).  The Workflow's
 * spec.jobID, the dws-dataout:<X> dependency names, and the messages that
 * name a job as a user sees it.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_F58_H
#define DWS_F58_H

/* "f" + the base58 of id, malloc'd; NULL out of memory. */
char *dws_f58_plain (unsigned long long id);

#endif /* !DWS_F58_H */
