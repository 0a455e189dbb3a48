/* health.c - rabbit health in Flux: the decisions (see health.h).
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
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "action.h"
#include "health.h"
#include "hostlist.h"
#include "idset.h"
#include "rssd.h"
#include "wire.h"

#define SSD_PROPERTY "badrabbit"
#define ALLOC_PROPERTY "alloc_rabbit"
#define FLUXION "sched-fluxion-resource."

struct rabbit {
    char *name;
    json_t *storage;      /* summary of its Storage object, or NULL */
    int64_t capacity;     /* its total (bytes): the sum of its Storage's
                           * status.devices[].capacity, else status.capacity
                           * (an older DWS); 0 unknown */
    int64_t free_bytes;   /* its Storage's status.capacity: free bytes (DWS
                           * #284); -1 not reported */
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
                             LINK_FENCED */
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
    json_t *holds;         /* {jobid: {"paths", "since", "reported"}} */
    bool holds_dirty;      /* an ssd's state changed since the last holds_applied */
    json_t *node_paths;    /* {host: path} from the graph, or NULL */
    json_t *jobs;          /* {jobid: [rabbit]} */

    bool storage_synced;
    bool journal_synced;
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

/* --- small helpers ------------------------------------------------------ */

static void count_sent (struct dws_health *h, const char *what, json_int_t n)
{
    json_t *v = json_object_get (h->sent, what);
    json_object_set_new (h->sent, what, json_integer (json_integer_value (v) + n));
}

static long index_of (json_t *index, const char *name)
{
    json_t *v = name ? json_object_get (index, name) : NULL;
    return v ? (long)json_integer_value (v) : -1;
}

static struct compute *compute_named (struct dws_health *h, const char *name)
{
    long i = index_of (h->compute_index, name);
    return i < 0 ? NULL : &h->computes[i];
}

static struct rank *rank_of (struct dws_health *h, const struct compute *c)
{
    return c->rank < 0 || (size_t)c->rank >= h->nranks ? NULL : &h->ranks[c->rank];
}

/* Arm the flush timer to fire 'after' seconds from now, unless it fires
 * sooner already.
 */
static void arm (struct dws_health *h, double after, json_t *actions)
{
    double due = h->now + after;
    if (h->timer_due > 0 && h->timer_due <= due)
        return;
    h->timer_due = due;
    json_array_append_new (actions,
                           json_pack ("{s:s s:s s:f}", "action", DWS_WIRE_ACTION (TIMER_START), "key",
                                      DWS_HEALTH_FLUSH_TIMER, "after", after));
}

/* Something changed: flush soon, if a flush could do anything yet (a
 * hold needs no Storage or journal to go out).
 */
static void changed (struct dws_health *h, json_t *actions)
{
    if (h->storage_synced || h->journal_synced || json_object_size (h->holds) > 0)
        arm (h, DWS_HEALTH_FLUSH_DELAY, actions);
}

/* Every hold waits for Fluxion again: listed by holds_applied when it is
 * applied again, even if no one asked in between.
 */
static void unreport_holds (struct dws_health *h)
{
    const char *key;
    json_t *hold;
    json_object_foreach (h->holds, key, hold)
        json_object_set_new (hold, "reported", json_false ());
    h->holds_dirty = true;
}

/* --- create / configure ------------------------------------------------- */

struct dws_health *dws_health_create (void)
{
    struct dws_health *h = calloc (1, sizeof (*h));
    if (!h)
        return NULL;
    h->cfg.fluxion = true;
    h->cfg.drain_compute_nodes = true;
    h->cfg.soft_drain = true;
    snprintf (h->namespace, sizeof (h->namespace), "default");
    h->rabbit_index = json_object ();
    h->compute_index = json_object ();
    h->rank_index = json_object ();
    h->host_ranks = json_object ();
    h->jobs = json_object ();
    h->batches = json_object ();
    h->storages = json_object ();
    h->ssd_index = json_object ();
    h->group_index = json_object ();
    h->holds = json_object ();
    h->sent = json_pack ("{s:i s:i s:i s:i s:i s:i}", "set_status", 0, "set_property", 0,
                         "remove_property", 0, "drain", 0, "undrain", 0, "systemstatus", 0);
    if (!h->rabbit_index || !h->compute_index || !h->rank_index || !h->host_ranks || !h->jobs || !h->batches
        || !h->storages || !h->ssd_index || !h->group_index || !h->holds || !h->sent) {
        dws_health_destroy (h);
        return NULL;
    }
    return h;
}

static void free_tables (struct rabbit *rabbits, size_t nrabbits, struct compute *computes,
                         size_t ncomputes)
{
    for (size_t i = 0; i < nrabbits; i++) {
        free (rabbits[i].name);
        free (rabbits[i].members);
        json_decref (rabbits[i].storage);
    }
    for (size_t i = 0; i < ncomputes; i++) {
        free (computes[i].name);
        free (computes[i].drain_sent);
    }
    free (rabbits);
    free (computes);
}

static void free_ssds (struct dws_health *h)
{
    for (size_t i = 0; i < h->nssd; i++)
        free (h->ssdv[i].path);
    for (size_t g = 0; g < h->ngroups; g++)
        free (h->groups[g].rabbit);
    free (h->ssdv);
    free (h->groups);
    h->ssdv = NULL;
    h->groups = NULL;
    h->nssd = h->ngroups = 0;
    json_object_clear (h->ssd_index);
    json_object_clear (h->group_index);
}

static void free_ranks (struct dws_health *h)
{
    for (size_t i = 0; i < h->nranks; i++) {
        free (h->ranks[i].host);
        free (h->ranks[i].drained);
    }
    free (h->ranks);
    h->ranks = NULL;
    h->nranks = 0;
    json_object_clear (h->rank_index);
    json_object_clear (h->host_ranks);
}

void dws_health_destroy (struct dws_health *h)
{
    if (!h)
        return;
    free_tables (h->rabbits, h->nrabbits, h->computes, h->ncomputes);
    free_ranks (h);
    free (h->exclude);
    json_decref (h->rabbit_index);
    json_decref (h->compute_index);
    json_decref (h->rank_index);
    json_decref (h->host_ranks);
    json_decref (h->drainable);
    json_decref (h->storages);
    free_ssds (h);
    json_decref (h->ssd_index);
    json_decref (h->group_index);
    json_decref (h->holds);
    json_decref (h->node_paths);
    json_decref (h->fluxion_down);
    json_decref (h->jobs);
    json_decref (h->batches);
    json_decref (h->sent);
    free (h);
}

/* A property or SystemStatus value that depends on the configuration is
 * sent again when the configuration changes.
 */
static void forget_applied_properties (struct dws_health *h)
{
    for (size_t i = 0; i < h->ncomputes; i++)
        h->computes[i].bad_applied = h->computes[i].alloc_applied = -1;
}

void dws_health_configure (struct dws_health *h, const struct dws_health_config *cfg)
{
    bool props = h->cfg.fluxion != cfg->fluxion || h->cfg.soft_drain != cfg->soft_drain;
    bool drains = !h->cfg.drain_compute_nodes && cfg->drain_compute_nodes;
    if (h->cfg.fluxion != cfg->fluxion)
        unreport_holds (h); /* without Fluxion a hold has nothing to wait for */
    h->cfg = *cfg;
    snprintf (h->namespace, sizeof (h->namespace), "%s",
              cfg->namespace ? cfg->namespace : "default");
    h->cfg.namespace = h->namespace;
    if (props)
        forget_applied_properties (h);
    if (drains) /* drains turned on: act on links that are down now */
        for (size_t i = 0; i < h->ncomputes; i++)
            h->computes[i].link_seen = -1;
}

/* --- topology ------------------------------------------------------------ */

static void compute_init (struct compute *c, const char *name, int rabbit)
{
    memset (c, 0, sizeof (*c));
    c->name = strdup (name);
    c->rabbit = rabbit;
    c->rank = -1;
    c->link_seen = c->bad_applied = c->alloc_applied = c->ss_applied = -1;
}

static void resolve_ranks (struct dws_health *h)
{
    for (size_t i = 0; i < h->ncomputes; i++)
        h->computes[i].rank = index_of (h->rank_index, h->computes[i].name);
}

/* Each rabbit of the graph in the topology's tables. */
static void resolve_groups (struct dws_health *h)
{
    for (size_t g = 0; g < h->ngroups; g++)
        h->groups[g].ri = index_of (h->rabbit_index, h->groups[g].rabbit);
}

static void storage_read (struct dws_health *h, struct rabbit *r, json_t *obj,
                          json_t *actions);

/* Is c2r the topology we have? */
static bool same_topology (struct dws_health *h, json_t *c2r)
{
    if (json_object_size (c2r) != h->ncomputes)
        return false;
    const char *c;
    json_t *r;
    json_object_foreach (c2r, c, r) {
        struct compute *cp = compute_named (h, c);
        if (!cp || strcmp (h->rabbits[cp->rabbit].name, json_string_value (r)) != 0)
            return false;
    }
    return true;
}

int dws_health_topology (struct dws_health *h, json_t *c2r, json_t *actions, dws_error_t *err)
{
    if (!json_is_object (c2r))
        return dws_errorf (err, "topology must be an object {compute: rabbit}");
    const char *c;
    json_t *r;
    json_object_foreach (c2r, c, r) {
        if (!json_is_string (r))
            return dws_errorf (err, "topology: the rabbit of %s is not a string", c);
    }
    if (same_topology (h, c2r))
        return 0;
    /* Build the new tables, moving over what is known of the rabbits and
     * computes that stay (a compute stays if it keeps its rabbit).
     */
    struct dws_health old = *h;
    json_t *old_c2r = json_object (); /* compute -> its old rabbit */
    for (size_t i = 0; i < old.ncomputes; i++)
        json_object_set_new (old_c2r, old.computes[i].name,
                             json_string (old.rabbits[old.computes[i].rabbit].name));
    size_t n = json_object_size (c2r);
    h->computes = calloc (n ? n : 1, sizeof (*h->computes));
    h->rabbits = calloc (n ? n : 1, sizeof (*h->rabbits));
    h->rabbit_index = json_object ();
    h->compute_index = json_object ();
    h->nrabbits = h->ncomputes = 0;
    json_object_foreach (c2r, c, r) {
        const char *rname = json_string_value (r);
        long ri = index_of (h->rabbit_index, rname);
        if (ri < 0) {
            ri = (long)h->nrabbits++;
            struct rabbit *rb = &h->rabbits[ri];
            long oi = index_of (old.rabbit_index, rname);
            if (oi >= 0) {
                *rb = old.rabbits[oi];
                memset (&old.rabbits[oi], 0, sizeof (old.rabbits[oi]));
                rb->members = NULL;
                rb->nmembers = 0;
            }
            else {
                rb->name = strdup (rname);
                rb->free_bytes = -1;
                snprintf (rb->why, sizeof (rb->why), "no Storage object");
            }
            rb->members = calloc (n ? n : 1, sizeof (*rb->members));
            json_object_set_new (h->rabbit_index, rname, json_integer (ri));
        }
        struct compute *cp = &h->computes[h->ncomputes];
        /* a compute keeps its state if it keeps its rabbit */
        long oi = index_of (old.compute_index, c);
        const char *was = json_string_value (json_object_get (old_c2r, c));
        if (oi >= 0 && was && !strcmp (was, rname)) {
            *cp = old.computes[oi];
            memset (&old.computes[oi], 0, sizeof (old.computes[oi]));
            cp->rabbit = (int)ri;
        }
        else
            compute_init (cp, c, (int)ri);
        struct rabbit *rb = &h->rabbits[ri];
        rb->members[rb->nmembers++] = h->ncomputes;
        json_object_set_new (h->compute_index, c, json_integer ((json_int_t)h->ncomputes));
        h->ncomputes++;
    }
    free_tables (old.rabbits, old.nrabbits, old.computes, old.ncomputes);
    json_decref (old_c2r);
    json_decref (old.rabbit_index);
    json_decref (old.compute_index);
    resolve_ranks (h);
    resolve_groups (h);
    /* the Storage objects may have come first (their watch is another) */
    if (h->storage_synced)
        for (size_t i = 0; i < h->nrabbits; i++)
            storage_read (h, &h->rabbits[i], json_object_get (h->storages, h->rabbits[i].name),
                          actions);
    changed (h, actions);
    return 0;
}

/* --- Storage --------------------------------------------------------------- */

static const char *str_at (json_t *o, const char *a, const char *b)
{
    json_t *v = json_object_get (o, a);
    if (b)
        v = json_object_get (v, b);
    return json_string_value (v);
}

/* A Storage's space: 'total' the sum of its status.devices[].capacity (a
 * drive that is not Ready reports 0) or, when no drive reports one (an
 * older DWS), its status.capacity; 'free' its status.capacity, the free
 * bytes (DWS #284), -1 when not reported.  'obj' NULL: 0 and -1.
 */
static void storage_space (json_t *obj, int64_t *total, int64_t *free_bytes)
{
    json_t *status = json_object_get (obj, "status");
    json_t *cap = json_object_get (status, "capacity");
    json_t *dev;
    size_t i;

    *free_bytes = -1;
    if (json_is_integer (cap) && json_integer_value (cap) >= 0)
        *free_bytes = json_integer_value (cap);
    *total = 0;
    json_array_foreach (json_object_get (status, "devices"), i, dev) {
        json_int_t c = json_integer_value (json_object_get (dev, "capacity"));
        if (c > 0)
            *total = c > INT64_MAX - *total ? INT64_MAX : *total + c;
    }
    if (*total == 0 && *free_bytes > 0)
        *total = *free_bytes;
}

/* Whether a rabbit whose Storage says 'status' can be used (health.h):
 * Ready, or Degraded ("ready but operating in a degraded state", DWS'
 * ResourceStatus) unless a reboot is required (nnf-sos' Degraded after a
 * STONITH event, rebootRequired true).
 */
static bool health_status_usable (const char *status, bool reboot)
{
    if (!status)
        return false;
    if (!strcmp (status, "Ready"))
        return true;
    return !strcmp (status, "Degraded") && !reboot;
}

/* Read one Storage object into its rabbit; 'obj' NULL: it was deleted. */
static void storage_read (struct dws_health *h, struct rabbit *r, json_t *obj,
                          json_t *actions)
{
    bool was_up = r->up;
    char was_why[sizeof (r->why)];
    snprintf (was_why, sizeof (was_why), "%s", r->why);

    json_decref (r->storage);
    r->storage = NULL;
    storage_space (obj, &r->capacity, &r->free_bytes);
    if (!obj) {
        r->up = false;
        r->note[0] = '\0';
        snprintf (r->why, sizeof (r->why), "no Storage object");
    }
    else {
        const char *state = str_at (obj, "spec", "state");
        const char *mode = str_at (obj, "spec", "mode");
        const char *status = str_at (obj, "status", "status");
        const char *message = str_at (obj, "status", "message");
        bool reboot = json_is_true (
            json_object_get (json_object_get (obj, "status"), "rebootRequired"));
        json_t *ann = json_object_get (json_object_get (obj, "metadata"), "annotations");
        const char *dreason = json_string_value (json_object_get (ann, "disable_reason"));
        const char *ddate = json_string_value (json_object_get (ann, "disable_date"));
        bool disabled = state && !strcmp (state, "Disabled");
        const char *colon = message && *message ? ": " : "";
        r->storage = json_pack ("{s:s? s:s s:s s:s s:b s:s? s:s?}", "status", status, "state",
                                state ? state : "Enabled", "mode", mode ? mode : "Live",
                                "message", message ? message : "", "reboot_required", reboot,
                                "disable_reason", dreason, "disable_date", ddate);
        r->up = !disabled && health_status_usable (status, reboot);
        r->note[0] = '\0';
        if (disabled)
            snprintf (r->why, sizeof (r->why), "disabled%s%s", dreason ? ": " : "",
                      dreason ? dreason : "");
        else if (!status)
            snprintf (r->why, sizeof (r->why), "Storage has no status yet");
        else if (!r->up && reboot)
            snprintf (r->why, sizeof (r->why), "Storage status %s, reboot required%s%s", status,
                      colon, *colon ? message : "");
        else if (!r->up)
            snprintf (r->why, sizeof (r->why), "Storage status %s%s%s", status, colon,
                      *colon ? message : "");
        else {
            r->why[0] = '\0';
            if (strcmp (status, "Ready") != 0)
                snprintf (r->note, sizeof (r->note), "Storage status %s, still usable%s%s",
                          status, colon, *colon ? message : "");
        }
    }
    if (was_up != r->up || strcmp (was_why, r->why) != 0) {
        if (h->storage_synced)
            dws_act_log (actions, r->up ? "info" : "warning", "rabbit %s is %s%s%s", r->name,
                  r->up ? "up" : "down", r->up ? (r->note[0] ? ": " : "") : ": ",
                  r->up ? r->note : r->why);
    }

    /* the links: every compute of this rabbit, reported or not */
    json_t *listed = json_object ();
    size_t i;
    json_t *ent;
    json_array_foreach (json_object_get (json_object_get (json_object_get (obj, "status"),
                                                          "access"),
                                         "computes"),
                        i, ent) {
        const char *cname = json_string_value (json_object_get (ent, "name"));
        const char *st = json_string_value (json_object_get (ent, "status"));
        if (cname)
            json_object_set_new (listed, cname, json_string (st ? st : "Unknown"));
    }
    for (size_t k = 0; k < r->nmembers; k++) {
        struct compute *c = &h->computes[r->members[k]];
        const char *st = json_string_value (json_object_get (listed, c->name));
        snprintf (c->link, sizeof (c->link), "%s", st ? st : "");
        c->mount_failed = false; /* cleared by the rabbit's next Storage event */
    }
    json_decref (listed);
    changed (h, actions);
}

int dws_health_storage (struct dws_health *h, const char *event, json_t *obj, json_t *actions,
                        dws_error_t *err)
{
    const char *name = str_at (obj, "metadata", "name");
    if (!event || !name)
        return dws_errorf (err, "Storage event needs an event type and metadata.name");
    bool deleted = !strcmp (event, "DELETED");
    if (deleted)
        json_object_del (h->storages, name);
    else
        json_object_set (h->storages, name, obj);
    long ri = index_of (h->rabbit_index, name);
    if (ri < 0)
        return 0; /* not a rabbit of the SystemConfiguration (yet) */
    storage_read (h, &h->rabbits[ri], deleted ? NULL : obj, actions);
    return 0;
}

int dws_health_storage_sync (struct dws_health *h, json_t *objects, json_t *actions,
                             dws_error_t *err)
{
    if (!json_is_array (objects))
        return dws_errorf (err, "Storage sync needs an objects array");
    json_object_clear (h->storages);
    size_t i;
    json_t *obj;
    json_array_foreach (objects, i, obj) {
        const char *name = str_at (obj, "metadata", "name");
        if (name)
            json_object_set (h->storages, name, obj);
    }
    for (size_t k = 0; k < h->nrabbits; k++)
        storage_read (h, &h->rabbits[k], json_object_get (h->storages, h->rabbits[k].name),
                      actions);
    h->storage_synced = true;
    changed (h, actions);
    return 0;
}

/* --- the Flux side ---------------------------------------------------- */

static void apply_exclude (struct dws_health *h)
{
    for (size_t i = 0; i < h->nranks; i++)
        h->ranks[i].excluded = false;
    if (!h->exclude || !*h->exclude || h->nranks == 0)
        return;
    dws_error_t err;
    struct dws_idset *ids = dws_idset_decode (h->exclude, &err);
    if (ids) {
        for (unsigned id = dws_idset_first (ids); id != (unsigned)-1 && id < h->nranks;
             id = dws_idset_next (ids, id))
            h->ranks[id].excluded = true;
        dws_idset_destroy (ids);
        return;
    }
    size_t n = 0;
    char **names = dws_hostlist_expand (h->exclude, &n, &err);
    for (size_t i = 0; names && i < n; i++) {
        long r = index_of (h->rank_index, names[i]);
        if (r >= 0)
            h->ranks[r].excluded = true;
    }
    dws_hostlist_free_names (names);
}

static int journal_restart (struct dws_health *h, json_t *ctx, dws_error_t *err)
{
    const char *nodelist = json_string_value (json_object_get (ctx, "nodelist"));
    const char *online = json_string_value (json_object_get (ctx, "online"));
    size_t n = 0;
    char **names = nodelist ? dws_hostlist_expand (nodelist, &n, err) : NULL;
    if (!names)
        return nodelist ? -1 : dws_errorf (err, "journal restart event has no nodelist");
    free_ranks (h);
    h->ranks = calloc (n ? n : 1, sizeof (*h->ranks));
    h->nranks = n;
    for (size_t i = 0; i < n; i++) {
        h->ranks[i].host = strdup (names[i]);
        json_t *list = json_object_get (h->host_ranks, names[i]);
        if (!list) {
            json_object_set_new (h->rank_index, names[i], json_integer ((json_int_t)i));
            json_object_set_new (h->host_ranks, names[i], (list = json_array ()));
        }
        json_array_append_new (list, json_integer ((json_int_t)i));
    }
    dws_hostlist_free_names (names);
    resolve_ranks (h);
    struct dws_idset *ids = online ? dws_idset_decode (online, err) : NULL;
    for (unsigned id = ids ? dws_idset_first (ids) : (unsigned)-1;
         id != (unsigned)-1 && id < h->nranks; id = dws_idset_next (ids, id))
        h->ranks[id].online = true;
    dws_idset_destroy (ids);
    apply_exclude (h);
    return 0;
}

/* The ranks of an event's idset, each in range; calls fn on each. */
static int journal_ranks (struct dws_health *h, json_t *ctx, const char *name, json_t *entry,
                          void (*fn) (struct dws_health *, struct rank *, json_t *),
                          dws_error_t *err)
{
    const char *s = json_string_value (json_object_get (ctx, "idset"));
    if (!s)
        return dws_errorf (err, "journal %s event has no idset", name);
    struct dws_idset *ids = dws_idset_decode (s, err);
    if (!ids)
        return -1;
    for (unsigned id = dws_idset_first (ids); id != (unsigned)-1; id = dws_idset_next (ids, id))
        if (id < h->nranks)
            fn (h, &h->ranks[id], entry);
    dws_idset_destroy (ids);
    return 0;
}

static void rank_online (struct dws_health *h, struct rank *r, json_t *e)
{
    (void)h, (void)e;
    r->online = true;
}

static void rank_offline (struct dws_health *h, struct rank *r, json_t *e)
{
    (void)h, (void)e;
    r->online = false;
}

static void rank_drain (struct dws_health *h, struct rank *r, json_t *ctx)
{
    const char *reason = json_string_value (json_object_get (ctx, "reason"));
    bool overwrite = json_integer_value (json_object_get (ctx, "overwrite")) != 0;
    if (!r->drained || overwrite) { /* resource.drain mode=update keeps a reason */
        free (r->drained);
        r->drained = strdup (reason ? reason : "");
    }
    /* The event's reason, not the one kept: the service's drain after a
     * failed unmount (mode=update) leaves an admin's earlier reason in
     * place, and the node must still be Disabled for DWS.  Another drain
     * on top (even one overwriting the reason) does not end that: only an
     * undrain does, as in flux-coral2.
     */
    if (reason && !strncmp (reason, DWS_HEALTH_UNMOUNT_REASON, strlen (DWS_HEALTH_UNMOUNT_REASON)))
        r->unmount = true;
    struct compute *c = compute_named (h, r->host);
    if (c) {
        free (c->drain_sent);
        c->drain_sent = NULL;
    }
}

static void rank_undrain (struct dws_health *h, struct rank *r, json_t *e)
{
    (void)h, (void)e;
    free (r->drained);
    r->drained = NULL;
    r->unmount = false;
}

int dws_health_journal (struct dws_health *h, json_t *events, bool synced, json_t *actions,
                        dws_error_t *err)
{
    if (!json_is_array (events))
        return dws_errorf (err, "journal events must be an array");
    size_t i;
    json_t *ev;
    json_array_foreach (events, i, ev) {
        const char *name = json_string_value (json_object_get (ev, "name"));
        json_t *ctx = json_object_get (ev, "context");
        int rc = 0;
        if (!name)
            return dws_errorf (err, "journal event %zu has no name", i);
        if (!strcmp (name, "restart"))
            rc = journal_restart (h, ctx, err);
        else if (!strcmp (name, "online"))
            rc = journal_ranks (h, ctx, name, ctx, rank_online, err);
        else if (!strcmp (name, "offline"))
            rc = journal_ranks (h, ctx, name, ctx, rank_offline, err);
        else if (!strcmp (name, "drain"))
            rc = journal_ranks (h, ctx, name, ctx, rank_drain, err);
        else if (!strcmp (name, "undrain"))
            rc = journal_ranks (h, ctx, name, ctx, rank_undrain, err);
        if (rc < 0)
            return -1;
    }
    if (synced)
        h->journal_synced = true;
    changed (h, actions);
    return 0;
}

int dws_health_flux_config (struct dws_health *h, const char *exclude, const char *drainable,
                            json_t *actions, dws_error_t *err)
{
    json_t *set = NULL;
    if (drainable) {
        size_t n = 0;
        char **names = dws_hostlist_expand (drainable, &n, err);
        if (!names)
            return -1;
        set = json_object ();
        for (size_t i = 0; i < n; i++)
            json_object_set_new (set, names[i], json_true ());
        dws_hostlist_free_names (names);
    }
    if (exclude && *exclude) {
        dws_error_t e2;
        struct dws_idset *ids = dws_idset_decode (exclude, &e2);
        struct dws_hostlist *hl = ids ? NULL : dws_hostlist_decode (exclude, &e2);
        dws_idset_destroy (ids);
        dws_hostlist_destroy (hl);
        if (!ids && !hl) {
            json_decref (set);
            return dws_errorf (err, "resource.exclude '%s' is neither an idset nor a hostlist",
                               exclude);
        }
    }
    free (h->exclude);
    h->exclude = dws_strdup_null (exclude);
    json_decref (h->drainable);
    h->drainable = set;
    apply_exclude (h);
    changed (h, actions);
    return 0;
}

static void count_holds (struct dws_health *h);

/* The graph's ssd vertices, grouped by rabbit, each unknown to Fluxion. */
static int build_ssds (struct dws_health *h, json_t *ssds, dws_error_t *err)
{
    const char *rabbit;
    json_t *paths;
    size_t n = 0, k;
    json_t *p;
    json_object_foreach (ssds, rabbit, paths) {
        if (!json_is_array (paths))
            return dws_errorf (err, "graph: ssds.%s must be an array of paths", rabbit);
        json_array_foreach (paths, k, p) {
            if (!json_is_string (p))
                return dws_errorf (err, "graph: ssds.%s[%zu] is not a path string", rabbit, k);
        }
        n += json_array_size (paths);
    }
    free_ssds (h);
    h->ssdv = calloc (n ? n : 1, sizeof (*h->ssdv));
    h->groups = calloc (json_object_size (ssds) ? json_object_size (ssds) : 1,
                        sizeof (*h->groups));
    if (!h->ssdv || !h->groups) {
        free_ssds (h);
        return dws_errorf (err, "out of memory");
    }
    json_object_foreach (ssds, rabbit, paths) {
        struct ssd_group *g = &h->groups[h->ngroups];
        g->rabbit = strdup (rabbit);
        g->first = h->nssd;
        g->n = json_array_size (paths);
        json_object_set_new (h->group_index, rabbit, json_integer ((json_int_t)h->ngroups));
        json_array_foreach (paths, k, p) {
            struct ssd *s = &h->ssdv[h->nssd];
            s->path = strdup (json_string_value (p));
            s->group = h->ngroups;
            s->applied = -1;
            json_object_set_new (h->ssd_index, s->path, json_integer ((json_int_t)h->nssd));
            h->nssd++;
        }
        h->ngroups++;
    }
    h->graph_gen++;
    resolve_groups (h);
    count_holds (h);
    unreport_holds (h);
    return 0;
}

int dws_health_graph (struct dws_health *h, json_t *graph, json_t *actions, dws_error_t *err)
{
    json_t *ssds = json_object_get (graph, "ssds");
    json_t *nodes = json_object_get (graph, "nodes");
    if (!json_is_object (graph) || (ssds && !json_is_object (ssds))
        || (nodes && !json_is_object (nodes)))
        return dws_errorf (err, "graph must be {\"ssds\": {rabbit: [path]}, \"nodes\": "
                                "{host: path}}");
    /* a new graph knows nothing we set; what Fluxion says it has (now or
     * when it answers) still seeds the ssds at the next flush */
    if (build_ssds (h, ssds, err) < 0)
        return -1;
    json_decref (h->node_paths);
    h->node_paths = json_object_size (nodes) ? json_incref (nodes) : NULL;
    h->graph_known = true;
    h->holds_dirty = true;
    forget_applied_properties (h);
    changed (h, actions);
    return 0;
}

/* Every ssd vertex unknown to Fluxion: sent again at the next flush. */
static void forget_applied_ssds (struct dws_health *h)
{
    for (size_t i = 0; i < h->nssd; i++) {
        h->ssdv[i].applied = -1;
        h->ssdv[i].batch = 0;
    }
    unreport_holds (h);
}

void dws_health_fluxion_restart (struct dws_health *h, json_t *actions)
{
    forget_applied_ssds (h);
    forget_applied_properties (h);
    /* no ssd is sent until Fluxion says what it has; a find in flight may
     * have been answered by the Fluxion that went away: asked again */
    h->fluxion_known = false;
    json_decref (h->fluxion_down);
    h->fluxion_down = NULL;
    if (h->find_token[0])
        json_object_del (h->batches, h->find_token);
    h->find_token[0] = '\0';
    changed (h, actions);
}

int dws_health_fluxion_state (struct dws_health *h, json_t *down, json_t *actions,
                              dws_error_t *err)
{
    json_t *set = NULL;
    if (down && !json_is_null (down)) {
        size_t i;
        json_t *p;
        if (!json_is_array (down))
            return dws_errorf (err, "fluxion-state 'down' must be an array of paths or null");
        if (!(set = json_object ()))
            return dws_errorf (err, "out of memory");
        json_array_foreach (down, i, p) {
            if (!json_is_string (p)) {
                json_decref (set);
                return dws_errorf (err, "fluxion-state 'down'[%zu] is not a path string", i);
            }
            json_object_set (set, json_string_value (p), json_true ());
        }
    }
    forget_applied_ssds (h);
    json_decref (h->fluxion_down);
    h->fluxion_down = set; /* NULL: not known, so every ssd is sent */
    h->fluxion_known = true;
    changed (h, actions);
    return 0;
}

/* Start each ssd vertex from what Fluxion said it has, so only those that
 * differ from what they should be are sent.  Done at the first ssd flush
 * after the answer, when the graph is whatever it turned out to be, so
 * their arriving in either order loses nothing.
 */
static void seed_from_fluxion (struct dws_health *h, json_t *actions)
{
    if (!h->fluxion_down)
        return;
    const char *key;
    json_t *v;
    const char *unknown = NULL;
    size_t nunknown = 0;
    json_object_foreach (h->fluxion_down, key, v) {
        if (index_of (h->ssd_index, key) < 0 && nunknown++ == 0)
            unknown = key;
    }
    if (nunknown > 0) {
        /* a down ssd vertex that is not in the graph flux-dws read: the two
         * graphs differ, so "not down" proves nothing; say it and send all */
        dws_act_log (actions, "warning",
             "Fluxion has ssd vertices down that are not in R's graph (%zu, e.g. %s):"
             " giving it every rabbit's state",
             nunknown, unknown);
    }
    else
        for (size_t i = 0; i < h->nssd; i++) {
            struct ssd *s = &h->ssdv[i];
            s->applied = json_object_get (h->fluxion_down, s->path) ? 0 : 1;
            s->batch = 0;
        }
    json_decref (h->fluxion_down);
    h->fluxion_down = NULL;
}

/* --- holds ---------------------------------------------------------------- */

static void hold_key (char *key, size_t len, json_int_t id)
{
    snprintf (key, len, "%lld", (long long)id);
}

/* A hold on these paths begins (delta 1) or ends (-1). */
static void adjust_holds (struct dws_health *h, json_t *paths, int delta)
{
    size_t k;
    json_t *p;
    json_array_foreach (paths, k, p) {
        long i = index_of (h->ssd_index, json_string_value (p));
        if (i >= 0)
            h->ssdv[i].holds += delta;
    }
}

/* How many jobs hold each ssd vertex of the graph. */
static void count_holds (struct dws_health *h)
{
    for (size_t i = 0; i < h->nssd; i++)
        h->ssdv[i].holds = 0;
    const char *key;
    json_t *hold;
    json_object_foreach (h->holds, key, hold)
        adjust_holds (h, json_object_get (hold, "paths"), 1);
}

/* Fluxion has said that every vertex of the hold is down (no Fluxion:
 * nothing to wait for). */
static bool hold_is_applied (struct dws_health *h, json_t *hold)
{
    if (!h->cfg.fluxion)
        return true;
    size_t k;
    json_t *p;
    json_array_foreach (json_object_get (hold, "paths"), k, p) {
        long i = index_of (h->ssd_index, json_string_value (p));
        if (i < 0 || h->ssdv[i].applied != 0 || h->ssdv[i].batch != 0)
            return false;
    }
    return true;
}

int dws_health_hold (struct dws_health *h, json_int_t id, json_t *paths, double since,
                     double now, json_t *actions, dws_error_t *err)
{
    size_t k;
    json_t *p;
    if (!json_is_array (paths))
        return dws_errorf (err, "hold of job %lld: paths must be an array of ssd vertex paths",
                           (long long)id);
    json_array_foreach (paths, k, p) {
        if (!json_is_string (p))
            return dws_errorf (err, "hold of job %lld: paths[%zu] is not a path string",
                               (long long)id, k);
    }
    char key[32];
    hold_key (key, sizeof (key), id);
    json_t *old = json_object_get (h->holds, key);
    if (since <= 0)
        since = old ? json_real_value (json_object_get (old, "since")) : now;
    json_t *copy = json_deep_copy (paths);
    json_t *hold = copy ? json_pack ("{s:o s:f s:b}", "paths", copy, "since", since,
                                     "reported", 0)
                        : NULL;
    if (!hold)
        return dws_errorf (err, "out of memory");
    if (old)
        adjust_holds (h, json_object_get (old, "paths"), -1);
    adjust_holds (h, copy, 1);
    json_object_set_new (h->holds, key, hold); /* releases old */
    h->now = now;
    h->holds_dirty = true;
    changed (h, actions);
    return 0;
}

void dws_health_unhold (struct dws_health *h, json_int_t id, double now, json_t *actions)
{
    char key[32];
    hold_key (key, sizeof (key), id);
    json_t *hold = json_object_get (h->holds, key);
    if (!hold)
        return;
    adjust_holds (h, json_object_get (hold, "paths"), -1);
    json_object_del (h->holds, key);
    h->now = now;
    /* the flush is armed even when no hold is left: what it freed goes up */
    arm (h, DWS_HEALTH_FLUSH_DELAY, actions);
}

bool dws_health_hold_applied (struct dws_health *h, json_int_t id)
{
    char key[32];
    hold_key (key, sizeof (key), id);
    json_t *hold = json_object_get (h->holds, key);
    return hold && hold_is_applied (h, hold);
}

json_t *dws_health_holds_applied (struct dws_health *h)
{
    json_t *out = json_array ();
    if (!out || !h->holds_dirty)
        return out;
    h->holds_dirty = false;
    const char *key;
    json_t *hold;
    json_object_foreach (h->holds, key, hold) {
        bool applied = hold_is_applied (h, hold);
        if (applied == json_is_true (json_object_get (hold, "reported")))
            continue;
        json_object_set_new (hold, "reported", json_boolean (applied));
        if (applied)
            json_array_append_new (out, json_integer (strtoll (key, NULL, 10)));
    }
    return out;
}

void dws_health_allocation (struct dws_health *h, json_int_t id, json_t *rabbits,
                            json_t *actions)
{
    char key[32];
    snprintf (key, sizeof (key), "%lld", (long long)id);
    json_t *had = json_object_get (h->jobs, key);
    if (!had && json_array_size (rabbits) == 0)
        return;
    if (had && json_equal (had, rabbits))
        return;
    size_t i;
    json_t *v;
    json_array_foreach (had, i, v) {
        long ri = index_of (h->rabbit_index, json_string_value (v));
        if (ri >= 0)
            h->rabbits[ri].allocs--;
    }
    json_object_del (h->jobs, key);
    if (json_array_size (rabbits) > 0) {
        json_t *kept = json_array ();
        json_array_foreach (rabbits, i, v) {
            long ri = index_of (h->rabbit_index, json_string_value (v));
            if (ri >= 0) {
                h->rabbits[ri].allocs++;
                json_array_append (kept, v);
            }
        }
        json_object_set_new (h->jobs, key, kept);
    }
    if (!h->cfg.fluxion)
        changed (h, actions); /* alloc_rabbit */
}

void dws_health_mount_failed (struct dws_health *h, json_t *hosts, json_t *actions)
{
    size_t i;
    json_t *v;
    json_array_foreach (hosts, i, v) {
        struct compute *c = compute_named (h, json_string_value (v));
        if (c)
            c->mount_failed = true;
    }
    changed (h, actions);
}

/* --- the flush: what each side should have ----------------------------- */

/* A compute's link as the drains see it (link_seen). */
enum { LINK_UP = 0, LINK_DOWN = 1, LINK_FENCED = 2 };

/* Down: reported and neither Ready nor Degraded (DWS: "ready but operating
 * in a degraded state").
 */
static bool link_down (const struct compute *c)
{
    return c->link[0] && strcmp (c->link, "Ready") != 0 && strcmp (c->link, "Degraded") != 0;
}

/* nnf-sos fenced the compute (DWS #266): it fails every Workflow using it. */
static bool link_fenced (const struct compute *c)
{
    return !strcmp (c->link, "Fenced");
}

static int link_state (const struct compute *c)
{
    return link_fenced (c) ? LINK_FENCED : link_down (c) ? LINK_DOWN : LINK_UP;
}

static bool want_bad (struct dws_health *h, const struct compute *c)
{
    if (!h->cfg.soft_drain && h->cfg.fluxion)
        return false;
    return !h->rabbits[c->rabbit].up || link_down (c) || c->mount_failed;
}

static bool want_alloc (struct dws_health *h, const struct compute *c)
{
    return !h->cfg.fluxion && h->rabbits[c->rabbit].allocs > 0;
}

/* Our drains: "rabbit <name> link <status>", "rabbit <name> fenced ...". */
static bool is_link_drain (const char *reason)
{
    return reason && !strncmp (reason, "rabbit ", 7)
           && (strstr (reason, " link ") != NULL
               || strstr (reason, DWS_HEALTH_FENCED_REASON) != NULL);
}

/* The path of a compute in Fluxion's graph, or NULL: not in it. */
static const char *node_path (struct dws_health *h, const struct compute *c, char *buf,
                              size_t len)
{
    if (h->node_paths)
        return json_string_value (json_object_get (h->node_paths, c->name));
    snprintf (buf, len, "/cluster0/%s", c->name); /* Fluxion's rv1 graph */
    return buf;
}

static const char *new_batch (struct dws_health *h, const char *kind, json_t *names, int n,
                              char *tok, size_t len)
{
    snprintf (tok, len, DWS_HEALTH_TOKEN "%lu", ++h->next_token);
    json_object_set_new (h->batches, tok,
                         json_pack ("{s:s s:O s:i}", "kind", kind, "names", names, "n", n));
    return tok;
}

static void send_rpc (json_t *actions, const char *topic, json_t *payload, const char *tok)
{
    json_array_append_new (actions, json_pack ("{s:s s:s s:o s:i s:s}", "action", DWS_WIRE_ACTION (RPC),
                                               "topic", topic, "payload", payload, "nodeid", 0,
                                               "token", tok));
}

static char *encode (json_t *names)
{
    size_t n = json_array_size (names);
    const char **v = calloc (n ? n : 1, sizeof (*v));
    for (size_t i = 0; i < n; i++)
        v[i] = json_string_value (json_array_get (names, i));
    dws_error_t err;
    char *s = dws_hostlist_compress (v, n, &err);
    free (v);
    return s;
}

/* Ask Fluxion which vertices it has down, on the handle the set_status go
 * out on: its answer then reflects every one sent before, and none is sent
 * until it comes (flush_ssds).
 */
static void ask_fluxion (struct dws_health *h, json_t *actions)
{
    if (h->find_token[0])
        return;
    json_t *none = json_array ();
    new_batch (h, "find", none, 1, h->find_token, sizeof (h->find_token));
    json_decref (none);
    send_rpc (actions, FLUXION "find",
              json_pack ("{s:s s:s}", "criteria", "status=down", "format", "jgf"),
              h->find_token);
}

/* What an ssd vertex should be: 0 down (held, or its rabbit is down), 1
 * up, -1 leave it as it is (its rabbit's health is not known: before the
 * Storage list, or a rabbit the topology does not have).
 */
static int want_ssd (struct dws_health *h, const struct ssd *s)
{
    const struct ssd_group *g = &h->groups[s->group];
    if (s->holds > 0)
        return 0;
    if (g->ri < 0 || !h->storage_synced)
        return -1;
    return h->rabbits[g->ri].up ? 1 : 0;
}

/* One batch per rabbit for its vertices that differ from what they should
 * be; the batch knows its range of vertices, so its answer can tell each
 * one that Fluxion has it.
 */
static void flush_group (struct dws_health *h, const struct ssd_group *g, json_t *actions)
{
    char tok[48] = "";
    unsigned long id = 0;
    json_int_t n = 0;
    for (size_t i = g->first; i < g->first + g->n; i++) {
        struct ssd *s = &h->ssdv[i];
        int want = want_ssd (h, s);
        if (want < 0 || s->applied == want)
            continue;
        if (!tok[0]) {
            json_t *names = json_pack ("[s]", g->rabbit);
            new_batch (h, "ssd", names, 0, tok, sizeof (tok));
            json_decref (names);
            id = h->next_token;
        }
        send_rpc (actions, FLUXION "set_status",
                  json_pack ("{s:s s:s}", "resource_path", s->path, "status",
                             want ? "up" : "down"),
                  tok);
        s->applied = want;
        s->batch = id;
        n++;
    }
    if (n == 0)
        return;
    json_t *b = json_object_get (h->batches, tok);
    json_object_set_new (b, "n", json_integer (n));
    json_object_set_new (b, "id", json_integer ((json_int_t)id));
    json_object_set_new (b, "gen", json_integer ((json_int_t)h->graph_gen));
    json_object_set_new (b, "first", json_integer ((json_int_t)g->first));
    json_object_set_new (b, "end", json_integer ((json_int_t)(g->first + g->n)));
    count_sent (h, "set_status", n);
}

static void flush_ssds (struct dws_health *h, json_t *actions)
{
    if (!h->cfg.fluxion || !h->graph_known)
        return;
    if (!h->fluxion_known) {
        ask_fluxion (h, actions);
        return;
    }
    seed_from_fluxion (h, actions);
    for (size_t g = 0; g < h->ngroups; g++)
        flush_group (h, &h->groups[g], actions);
    h->holds_dirty = true;
}

/* One set_property and one remove_property for a node property. */
static void flush_property (struct dws_health *h, const char *prop, bool alloc,
                            json_t *actions)
{
    if (!h->storage_synced || (h->cfg.fluxion && !h->graph_known))
        return;
    if (alloc ? h->cfg.fluxion : (h->cfg.fluxion && !h->cfg.soft_drain))
        return; /* a property flux-dws does not manage in this mode */
    json_t *add = json_array (), *add_n = json_array ();
    json_t *del = json_array (), *del_n = json_array ();
    for (size_t i = 0; i < h->ncomputes; i++) {
        struct compute *c = &h->computes[i];
        struct rank *rk = rank_of (h, c);
        char buf[256];
        const char *path;
        if (!rk || rk->excluded || !(path = node_path (h, c, buf, sizeof (buf))))
            continue; /* not a node of this instance's graph */
        int want = (alloc ? want_alloc (h, c) : want_bad (h, c)) ? 1 : 0;
        int *applied = alloc ? &c->alloc_applied : &c->bad_applied;
        if (*applied == want)
            continue;
        json_array_append_new (want ? add : del, json_string (path));
        json_array_append_new (want ? add_n : del_n, json_string (c->name));
        *applied = want;
    }
    char tok[48], kv[64];
    if (json_array_size (add) > 0) {
        snprintf (kv, sizeof (kv), "%s=%s", prop, alloc ? "yes" : "bad");
        send_rpc (actions, FLUXION "set_property",
                  json_pack ("{s:O s:s}", "sp_resource_path", add, "sp_keyval", kv),
                  new_batch (h, alloc ? "alloc" : "bad", add_n, 1, tok, sizeof (tok)));
        count_sent (h, "set_property", 1);
    }
    if (json_array_size (del) > 0) {
        send_rpc (actions, FLUXION "remove_property",
                  json_pack ("{s:O s:s}", "resource_path", del, "key", prop),
                  new_batch (h, alloc ? "alloc" : "bad", del_n, 1, tok, sizeof (tok)));
        count_sent (h, "remove_property", 1);
    }
    json_decref (add);
    json_decref (add_n);
    json_decref (del);
    json_decref (del_n);
}

static void flush_drains (struct dws_health *h, json_t *actions)
{
    if (!h->journal_synced || !h->storage_synced)
        return;
    json_t *drains = json_object (); /* reason -> [compute] */
    json_t *undrain = json_array ();
    for (size_t i = 0; i < h->ncomputes; i++) {
        struct compute *c = &h->computes[i];
        struct rank *rk = rank_of (h, c);
        if (!c->link[0] || !rk || rk->excluded)
            continue; /* link not reported, or not a node of ours */
        int state = link_state (c);
        if (state == c->link_seen)
            continue;
        int was = c->link_seen;
        c->link_seen = state;
        bool drainable = h->cfg.drain_compute_nodes
                         && (!h->drainable || json_object_get (h->drainable, c->name));
        char reason[160];
        if (state == LINK_FENCED)
            snprintf (reason, sizeof (reason), "rabbit %s" DWS_HEALTH_FENCED_REASON,
                      h->rabbits[c->rabbit].name);
        else
            snprintf (reason, sizeof (reason), "rabbit %s link %s", h->rabbits[c->rabbit].name,
                      c->link);
        /* A drain of ours with a link reason (done or in flight) is
         * overwritten when the compute is fenced: the reason must say that
         * DWS fails jobs there.  Never an admin's.  A fenced compute whose
         * link is then merely down keeps its reason until the link is Ready.
         */
        bool redrain = state == LINK_FENCED && was != LINK_FENCED
                       && ((rk->drained && is_link_drain (rk->drained)
                            && strcmp (rk->drained, reason) != 0)
                           || (c->drain_sent && strcmp (c->drain_sent, reason) != 0));
        if (state != LINK_UP && drainable && (redrain || (!rk->drained && !c->drain_sent))) {
            char key[sizeof (reason) + 2];
            snprintf (key, sizeof (key), "%c%s", redrain ? 'o' : 'u', reason);
            json_t *list = json_object_get (drains, key);
            if (!list)
                json_object_set_new (drains, key, (list = json_array ()));
            json_array_append_new (list, json_string (c->name));
            free (c->drain_sent);
            c->drain_sent = strdup (reason);
        }
        else if (state == LINK_UP && is_link_drain (rk->drained))
            json_array_append_new (undrain, json_string (c->name));
    }
    const char *key;
    json_t *list;
    json_object_foreach (drains, key, list) {
        char tok[48];
        char *targets = encode (list);
        const char *reason = key + 1; /* after the mode: o overwrite, u update */
        send_rpc (actions, "resource.drain",
                  json_pack ("{s:s s:s s:s}", "targets", targets ? targets : "", "mode",
                             key[0] == 'o' ? "overwrite" : "update", "reason", reason),
                  new_batch (h, "drain", list, 1, tok, sizeof (tok)));
        dws_act_log (actions, "warning", "draining %s: %s", targets ? targets : "?", reason);
        free (targets);
        count_sent (h, "drain", 1);
    }
    if (json_array_size (undrain) > 0) {
        char tok[48];
        char *targets = encode (undrain);
        send_rpc (actions, "resource.undrain",
                  json_pack ("{s:s}", "targets", targets ? targets : ""),
                  new_batch (h, "undrain", undrain, 1, tok, sizeof (tok)));
        dws_act_log (actions, "info", "undraining %s: their rabbit links are up again",
              targets ? targets : "?");
        free (targets);
        count_sent (h, "undrain", 1);
    }
    json_decref (drains);
    json_decref (undrain);
}

/* A compute's host as SystemStatus sees it, over every rank of that host
 * that is not excluded: a test instance (flux start --test-hosts) may give
 * several ranks one hostname, and DWS knows only hostnames.
 */
struct host_state {
    bool ours;    /* a rank of this instance, not excluded, has this host */
    bool offline; /* one of them is offline */
    bool unmount; /* one of them is drained for a failed unmount */
};

static struct host_state host_state (struct dws_health *h, const struct compute *c)
{
    struct host_state st = {false, false, false};
    size_t i;
    json_t *v;
    json_array_foreach (json_object_get (h->host_ranks, c->name), i, v) {
        json_int_t r = json_integer_value (v);
        if (r < 0 || (size_t)r >= h->nranks || h->ranks[r].excluded)
            continue;
        st.ours = true;
        st.offline |= !h->ranks[r].online;
        st.unmount |= h->ranks[r].unmount;
    }
    return st;
}

/* SystemStatus: Disabled for the computes DWS must leave out (the
 * reference's meaning): a host with a broker offline, or drained after a
 * failed unmount until an undrain.  Other drains (maintenance) leave it
 * Enabled: its mounts must still be removed normally.
 */
static void flush_systemstatus (struct dws_health *h, json_t *actions)
{
    if (!h->journal_synced || h->nranks == 0)
        return;
    json_t *nodes = json_object ();
    json_t *names = json_array ();
    for (size_t i = 0; i < h->ncomputes; i++) {
        struct compute *c = &h->computes[i];
        struct host_state st = host_state (h, c);
        if (!st.ours)
            continue;
        int want = st.offline || st.unmount;
        if (c->ss_applied == want)
            continue;
        c->ss_applied = want;
        json_object_set_new (nodes, c->name, json_string (want ? "Disabled" : "Enabled"));
        json_array_append_new (names, json_string (c->name));
    }
    if (json_object_size (nodes) > 0) {
        char tok[48];
        json_t *a = json_pack ("{s:s s:s s:s s:s s:s s:{s:{s:O}} s:s}", "action", DWS_WIRE_ACTION (K8S), "op",
                               "patch", "kind", "SystemStatus", "namespace", h->namespace,
                               "name", "default", "body", "data", "nodes", nodes, "token",
                               new_batch (h, "ss", names, 1, tok, sizeof (tok)));
        json_array_append_new (actions, a);
        count_sent (h, "systemstatus", 1);
    }
    json_decref (nodes);
    json_decref (names);
}

void dws_health_flush (struct dws_health *h, double now, json_t *actions)
{
    h->now = now;
    h->timer_due = 0;
    flush_ssds (h, actions);
    flush_property (h, SSD_PROPERTY, false, actions);
    flush_property (h, ALLOC_PROPERTY, true, actions);
    flush_drains (h, actions);
    flush_systemstatus (h, actions);
}

/* --- answers ------------------------------------------------------------- */

/* The paths of the ssd vertices in Fluxion's find answer (JGF: the matching
 * vertices and their ancestors; R null when none matches), or NULL with
 * why it cannot be read.
 */
static json_t *down_ssd_paths (json_t *answer, dws_error_t *why)
{
    json_t *R = json_object_get (answer, "R");
    if (!json_is_object (answer) || !R) {
        dws_errorf (why, "its find answer has no R");
        return NULL;
    }
    if (json_is_null (R))
        return json_array (); /* nothing down */
    return dws_rssd_graph_paths (json_object_get (R, "graph"), "its find answer's R.graph", why);
}

static int find_result (struct dws_health *h, const char *tok, json_t *answer,
                        const char *errstr, json_t *actions, dws_error_t *err)
{
    /* the one find in flight (a restart forgets its batch, so an answer
     * from a Fluxion since gone never gets here) */
    json_object_del (h->batches, tok);
    h->find_token[0] = '\0';
    dws_error_t why;
    json_t *down = answer ? down_ssd_paths (answer, &why) : NULL;
    if (!down)
        dws_act_log (actions, "warning", "Fluxion's ssd statuses are unknown (%s): giving it every"
             " rabbit's state", answer ? why.text : errstr);
    int rc = dws_health_fluxion_state (h, down, actions, err);
    json_decref (down);
    return rc;
}

/* An ssd batch answered in full (ok) or failed: its vertices that it was
 * the last to set are now known to Fluxion, or unknown (sent again after
 * DWS_HEALTH_RETRY_DELAY).  A batch of an older graph touches nothing.
 */
static void ssd_batch_done (struct dws_health *h, json_t *b, bool ok)
{
    unsigned long id = (unsigned long)json_integer_value (json_object_get (b, "id"));
    size_t first = (size_t)json_integer_value (json_object_get (b, "first"));
    size_t end = (size_t)json_integer_value (json_object_get (b, "end"));
    if ((unsigned long)json_integer_value (json_object_get (b, "gen")) != h->graph_gen
        || end > h->nssd)
        return;
    for (size_t i = first; i < end; i++) {
        struct ssd *s = &h->ssdv[i];
        if (s->batch != id)
            continue;
        s->batch = 0;
        if (!ok)
            s->applied = -1;
    }
    h->holds_dirty = true;
}

int dws_health_result (struct dws_health *h, json_t *event, double now, json_t *actions,
                       dws_error_t *err)
{
    const char *tok = json_string_value (json_object_get (event, "token"));
    json_t *b = tok ? json_object_get (h->batches, tok) : NULL;
    h->now = now;
    if (!tok)
        return dws_errorf (err, "result has no token");
    if (!b)
        return 0; /* a batch already failed and forgotten */
    bool ok = json_is_true (json_object_get (event, "ok"));
    const char *kind = json_string_value (json_object_get (b, "kind"));
    json_t *names = json_object_get (b, "names");
    json_int_t n = json_integer_value (json_object_get (b, "n"));
    const char *msg = json_string_value (json_object_get (event, "errstr"));
    if (!msg)
        msg = json_string_value (json_object_get (event, "message"));
    if (!strcmp (kind, "find"))
        return find_result (h, tok, ok ? json_object_get (event, "payload") : NULL,
                            msg ? msg : "no answer", actions, err);
    if (!ok && !strcmp (kind, "ss")
        && json_integer_value (json_object_get (event, "code")) == 404) {
        dws_act_log (actions, "debug", "SystemStatus %s/default not found: not updated", h->namespace);
        ok = true; /* as DWS says: the WLM only patches it when it exists */
    }
    if (ok) {
        if (n > 1) {
            json_object_set_new (b, "n", json_integer (n - 1));
            return 0;
        }
        if (!strcmp (kind, "ssd"))
            ssd_batch_done (h, b, true);
        json_object_del (h->batches, tok);
        return 0;
    }
    if (!strcmp (kind, "ssd"))
        ssd_batch_done (h, b, false);
    char *what = encode (names);
    dws_act_log (actions, "err", "%s update for %s failed (retrying in %gs): %s", kind,
          what ? what : "?", DWS_HEALTH_RETRY_DELAY, msg ? msg : "no answer");
    free (what);
    size_t i;
    json_t *v;
    json_array_foreach (names, i, v) {
        const char *name = json_string_value (v);
        struct compute *c = compute_named (h, name);
        if (!c)
            continue;
        if (!strcmp (kind, "bad"))
            c->bad_applied = -1;
        else if (!strcmp (kind, "alloc"))
            c->alloc_applied = -1;
        else if (!strcmp (kind, "ss"))
            c->ss_applied = -1;
        else { /* drain, undrain: decide those edges again */
            c->link_seen = -1;
            free (c->drain_sent);
            c->drain_sent = NULL;
        }
    }
    json_object_del (h->batches, tok);
    arm (h, DWS_HEALTH_RETRY_DELAY, actions);
    return 0;
}

/* --- views --------------------------------------------------------------- */

static json_t *compute_view (struct dws_health *h, const struct compute *c)
{
    struct rank *rk = rank_of (h, c);
    struct host_state st = host_state (h, c);
    return json_pack ("{s:s s:s? s:b s:o s:b s:s? s:b s:b s:b s:s?}", "name", c->name, "link",
                      c->link[0] ? c->link : NULL, "fenced", link_fenced (c), "online",
                      rk ? json_boolean (st.ours ? !st.offline : rk->online) : json_null (),
                      "excluded", rk ? rk->excluded : false, "drained",
                      rk ? rk->drained : NULL, "unmount_drained", st.unmount,
                      "badrabbit", c->bad_applied == 1, "alloc_rabbit", c->alloc_applied == 1,
                      "systemstatus",
                      c->ss_applied < 0 ? NULL : c->ss_applied ? "Disabled" : "Enabled");
}

void dws_health_capacity (struct dws_health *h, int64_t *total, int64_t *largest,
                          int64_t *count)
{
    *total = *largest = *count = 0;
    if (!h || !h->storage_synced)
        return; /* part of the Storage list: the total would be short */
    for (size_t i = 0; i < h->nrabbits; i++) {
        int64_t c = h->rabbits[i].capacity;
        if (c <= 0)
            continue;
        (*count)++;
        *total = c > INT64_MAX - *total ? INT64_MAX : *total + c;
        if (c > *largest)
            *largest = c;
    }
}

/* What Fluxion has for a rabbit's ssd vertices that no job holds (all of
 * them when every one is held): "pending" while one is unknown, "up",
 * "down", or "mixed".
 */
static json_t *group_state (struct dws_health *h, const struct ssd_group *g)
{
    bool any_free = false;
    size_t up = 0, down = 0, unknown = 0;
    for (size_t i = g->first; i < g->first + g->n; i++)
        any_free |= h->ssdv[i].holds == 0;
    for (size_t i = g->first; i < g->first + g->n; i++) {
        const struct ssd *s = &h->ssdv[i];
        if (any_free && s->holds > 0)
            continue;
        if (s->applied < 0)
            unknown++;
        else if (s->applied)
            up++;
        else
            down++;
    }
    return json_string (unknown ? "pending" : !down ? "up" : !up ? "down" : "mixed");
}

/* Every hold ([{"job", "since", "paths", "applied"}]), and in 'per' each
 * rabbit's share under "held" ({job: {"job", "since", "ssds", "down"}}:
 * "down" once Fluxion has them all down).
 */
static json_t *holds_view (struct dws_health *h, json_t *per)
{
    json_t *out = json_array ();
    const char *key;
    json_t *hold;
    json_object_foreach (h->holds, key, hold) {
        json_int_t id = strtoll (key, NULL, 10);
        json_t *since = json_object_get (hold, "since");
        json_t *paths = json_object_get (hold, "paths");
        json_array_append_new (out, json_pack ("{s:I s:O s:O s:b}", "job", id, "since", since,
                                               "paths", paths, "applied",
                                               hold_is_applied (h, hold)));
        size_t k;
        json_t *p;
        json_array_foreach (paths, k, p) {
            long i = index_of (h->ssd_index, json_string_value (p));
            json_t *rv = i < 0 ? NULL
                               : json_object_get (per, h->groups[h->ssdv[i].group].rabbit);
            if (!rv)
                continue; /* not in the graph, or its rabbit not in the topology */
            json_t *held = json_object_get (rv, "held");
            if (!held)
                json_object_set_new (rv, "held", (held = json_object ()));
            json_t *e = json_object_get (held, key);
            if (!e) {
                e = json_pack ("{s:I s:O s:[] s:b}", "job", id, "since", since, "ssds", "down",
                               1);
                json_object_set_new (held, key, e);
            }
            json_array_append (json_object_get (e, "ssds"), p);
            if (h->cfg.fluxion && (h->ssdv[i].applied != 0 || h->ssdv[i].batch != 0))
                json_object_set_new (e, "down", json_false ());
        }
    }
    return out;
}

bool dws_health_ready (const struct dws_health *h)
{
    if (!h || !h->storage_synced || !h->journal_synced)
        return false;
    const char *tok;
    json_t *b;
    json_object_foreach (h->batches, tok, b) {
        const char *kind = json_string_value (json_object_get (b, "kind"));
        if (kind && !strcmp (kind, "drain"))
            return false; /* e.g. a fenced compute: drained before rabbit jobs go */
    }
    if (!h->cfg.fluxion)
        return true;
    if (!h->graph_known || !h->fluxion_known || h->timer_due > 0 || h->find_token[0])
        return false;
    json_object_foreach (h->batches, tok, b) {
        const char *kind = json_string_value (json_object_get (b, "kind"));
        if (kind && !strcmp (kind, "ssd"))
            return false;
    }
    return true;
}

json_t *dws_health_view (struct dws_health *h)
{
    json_t *rabbits = json_array ();
    json_t *per = json_object (); /* rabbit -> {computes, jobs} */
    for (size_t i = 0; i < h->nrabbits; i++)
        json_object_set_new (per, h->rabbits[i].name,
                             json_pack ("{s:[] s:[]}", "computes", "jobs"));
    for (size_t i = 0; i < h->ncomputes; i++)
        json_array_append_new (json_object_get (json_object_get (per,
                                                                 h->rabbits[h->computes[i]
                                                                                .rabbit]
                                                                     .name),
                                                "computes"),
                               compute_view (h, &h->computes[i]));
    const char *key;
    json_t *list;
    json_object_foreach (h->jobs, key, list) {
        size_t i;
        json_t *v;
        json_array_foreach (list, i, v)
            json_array_append_new (json_object_get (json_object_get (per,
                                                                     json_string_value (v)),
                                                    "jobs"),
                                   json_integer (strtoll (key, NULL, 10)));
    }
    json_t *holds = holds_view (h, per);
    for (size_t i = 0; i < h->nrabbits; i++) {
        struct rabbit *r = &h->rabbits[i];
        long gi = index_of (h->group_index, r->name);
        const struct ssd_group *g = gi >= 0 ? &h->groups[gi] : NULL;
        json_t *fl = h->cfg.fluxion && g && g->n > 0 ? group_state (h, g) : json_null ();
        json_t *p = json_object_get (per, r->name);
        json_t *held = json_array ();
        const char *key;
        json_t *entry;
        json_object_foreach (json_object_get (p, "held"), key, entry)
            json_array_append (held, entry);
        /* free and used: null until the Storage reports them */
        json_t *free_j = r->free_bytes < 0 ? json_null () : json_integer (r->free_bytes);
        json_t *used_j = r->free_bytes < 0 || r->capacity == 0
                             ? json_null ()
                             : json_integer (r->free_bytes >= r->capacity
                                                 ? 0
                                                 : r->capacity - r->free_bytes);
        json_array_append_new (rabbits,
                               json_pack ("{s:s s:O s:b s:s s:s s:o s:i s:O s:O s:I s:o s:o s:o}",
                                          "name", r->name, "storage",
                                          r->storage ? r->storage : json_null (), "up", r->up,
                                          "why", r->why, "note", r->note, "fluxion", fl, "ssds",
                                          g ? (int)g->n : 0, "jobs",
                                          json_object_get (p, "jobs"), "computes",
                                          json_object_get (p, "computes"), "capacity",
                                          (json_int_t)r->capacity, "free", free_j, "used",
                                          used_j, "held", held));
    }
    json_decref (per);
    bool ready = h->storage_synced && h->journal_synced
                 && (!h->cfg.fluxion || (h->graph_known && h->fluxion_known));
    return json_pack ("{s:b s:b s:b s:b s:O s:o s:o}", "fluxion", h->cfg.fluxion,
                      "drain_compute_nodes", h->cfg.drain_compute_nodes, "soft_drain",
                      h->cfg.soft_drain, "ready", ready, "sent", h->sent, "rabbits", rabbits,
                      "holds", holds);
}

json_t *dws_health_job_constraint (const struct dws_health_config *cfg)
{
    if (!cfg->fluxion)
        return json_pack ("{s:[{s:[{s:[s]}]} {s:[{s:[s]}]}]}", "and", "not", "properties",
                          SSD_PROPERTY, "not", "properties", ALLOC_PROPERTY);
    if (!cfg->drain_compute_nodes || (cfg->drain_queues && cfg->soft_drain))
        return json_pack ("{s:[{s:[s]}]}", "not", "properties", SSD_PROPERTY);
    return json_null ();
}
