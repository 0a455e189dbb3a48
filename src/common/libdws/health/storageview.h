/* storageview.h - a Storage object read once, where it enters rabbit
 * health: the fields health decides on, so no other file of health/ walks
 * the object (as engine/shapes/wfview.h does for Workflows).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_HEALTH_STORAGEVIEW_H
#define DWS_HEALTH_STORAGEVIEW_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

struct storageview {
    json_t *obj;                /* a reference to the object; NULL: none */
    const char *state;          /* spec.state, or NULL */
    const char *mode;           /* spec.mode, or NULL */
    const char *status;         /* status.status, or NULL */
    const char *message;        /* status.message, or NULL */
    bool reboot_required;       /* status.rebootRequired */
    const char *disable_reason; /* metadata.annotations.disable_reason, or NULL */
    const char *disable_date;   /* metadata.annotations.disable_date, or NULL */
    const char *drain_reason;   /* metadata.annotations.drain_reason (the nnf
                                 * CLI's and dws.drain's), or NULL */
    const char *drain_date;     /* metadata.annotations.drain_date, or NULL */
    const char *drained_by;     /* metadata.annotations.flux-dws.io/drained-by:
                                 * the userid whose dws.drain it was, or NULL */
    int64_t total;              /* bytes: the sum of status.devices[].capacity (a
                                 * drive that is not Ready reports 0) or, when no
                                 * drive reports one (an older DWS),
                                 * status.capacity; 0 unknown */
    int64_t free_bytes;         /* status.capacity: free bytes (DWS #284); -1 not
                                 * reported */
    json_t *links;              /* {compute: PCIe link status} from
                                 * status.access.computes ("Unknown" when an entry
                                 * has no status); owned */
};

/* Fill v from the Storage object obj (NULL: none, an empty view: total 0,
 * free_bytes -1).  The strings are borrowed from obj, of which v keeps a
 * reference until storageview_clear.  Nothing fails: a field missing or of
 * the wrong type reads as NULL, false or the "not reported" value.
 */
void storageview_parse (json_t *obj, struct storageview *v);

/* Drop what v holds; v is then an empty view. */
void storageview_clear (struct storageview *v);

/* A Storage object's metadata.name, or NULL. */
const char *storageview_name (json_t *obj);

/* The summary shown by dws.rabbits ("storage"): a new object, or JSON
 * null when v has no object.
 */
json_t *storageview_summary (const struct storageview *v);

#endif /* !DWS_HEALTH_STORAGEVIEW_H */
