/* state.h - what rabbit health keeps (health.h), shared by health/'s files.
 *
 * State is kept per rabbit, per compute and per broker rank.  Inputs only
 * change state and arm the flush timer; the flush compares what each side
 * should have with what it was last given and sends the difference.
 * "Applied" values are -1 while unknown (start-up, after a failed update,
 * after a Fluxion restart), which makes the next flush send them.
 *
 * Fluxion's ssd vertices are kept one by one: what each should be is
 * derived from the truth (its rabbit is up, and no job holds it), and
 * what it was last given is known down to the batch that gave it, so a
 * hold knows when Fluxion has answered for every vertex it holds.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_HEALTH_STATE_H
#define DWS_HEALTH_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "health.h"
#include "storageview.h"

#define SSD_PROPERTY "badrabbit"
#define ALLOC_PROPERTY "alloc_rabbit"
#define FLUXION "sched-fluxion-resource."

struct rabbit {
    char *name;
    struct storageview sv; /* its Storage object, parsed (sv.obj NULL: none) */
    bool up;
    char why[256];        /* why it is down */
    char note[256];       /* why it is up though not Ready (Degraded), "" if Ready */
    int allocs;           /* jobs using it */
    size_t *members;      /* its computes (indexes) */
    size_t nmembers;
};

struct compute {
    char *name;
    int rabbit;           /* index into rabbits */
    long rank;            /* broker rank, -1 if not in this instance */
    char link[32];        /* PCIe link status, "" when not reported */
    bool mount_failed;
    int link_seen;        /* the last edge acted on: -1 unknown, LINK_UP, LINK_DOWN,
                             LINK_FENCED (link.h) */
    int bad_applied;      /* badrabbit: -1 unknown, 0 unset, 1 set */
    int alloc_applied;    /* alloc_rabbit: the same */
    int ss_applied;       /* SystemStatus: -1 unknown, 0 Enabled, 1 Disabled */
    char *drain_sent;     /* a drain sent, not yet seen in the journal */
};

/* One ssd vertex of the graph, and what Fluxion was last given for it. */
struct ssd {
    char *path;
    size_t group;         /* its rabbit's group */
    int applied;          /* -1 unknown, 0 down, 1 up */
    unsigned long batch;  /* the batch that sent 'applied'; 0 once Fluxion has it */
    int holds;            /* jobs holding it down */
};

/* The ssd vertices of one rabbit of the graph: ssdv[first .. first + n). */
struct ssd_group {
    char *rabbit;
    long ri;              /* index into rabbits, -1 if not in the topology */
    size_t first, n;
    int64_t gib;          /* the size of its vertices (the smallest), 0 unknown */
};

struct rank {
    char *host;
    bool online;
    bool excluded;
    char *drained;        /* drain reason ("" for none given), NULL if not drained */
    bool unmount;         /* drained for a failed unmount, not undrained since */
};

struct dws_health {
    struct dws_health_config cfg;
    char namespace[64];

    struct rabbit *rabbits;
    size_t nrabbits;
    json_t *rabbit_index;  /* name -> index */
    struct compute *computes;
    size_t ncomputes;
    json_t *compute_index; /* name -> index */

    struct rank *ranks;
    size_t nranks;
    json_t *rank_index;    /* host -> its first rank */
    json_t *host_ranks;    /* host -> [rank]: a test instance may give ranks one host */
    char *exclude;         /* resource.exclude as given */
    json_t *drainable;     /* {host: true}, or NULL for all */

    json_t *storages;      /* {name: Storage object}: the last seen, rabbit or not */
    struct ssd *ssdv;      /* the graph's ssd vertices, by rabbit */
    size_t nssd;
    struct ssd_group *groups;
    size_t ngroups;
    json_t *ssd_index;     /* path -> index into ssdv */
    json_t *group_index;   /* rabbit -> index into groups */
    unsigned long graph_gen; /* bumped by each graph: older batches' ranges are stale */
    unsigned long updown_gen; /* bumped when a rabbit goes up or down, or why changes */
    json_t *holds;         /* {jobid: {"paths", "since", "reported"}} */
    bool holds_dirty;      /* an ssd's state changed since the last holds_applied */
    json_t *node_paths;    /* {host: path} from the graph, or NULL */
    json_t *jobs;          /* {jobid: [rabbit]} */

    bool storage_synced;
    bool journal_synced;
    bool topology_known;   /* which computes each rabbit serves (the map) */
    bool graph_known;
    bool fluxion_known;    /* Fluxion answered find since it (re)started */
    json_t *fluxion_down;  /* {path: true}: its down vertices, until the next ssd flush */
    char find_token[48];   /* the find in flight, "" if none */

    json_t *batches;       /* token -> {"kind", "names", "n"} */
    unsigned long next_token;
    double timer_due;      /* when the armed flush fires; 0 = not armed */
    double now;
    json_t *sent;          /* counters */
};

#endif /* !DWS_HEALTH_STATE_H */
