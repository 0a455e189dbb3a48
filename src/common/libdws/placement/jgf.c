/* jgf.c - stream Fluxion's resource graph for a Rabbit system (see jgf.h).
 *
 * dws_jgf_prepare() turns R and the rabbitmapping into flat arrays (hosts
 * in rank order, rabbits in mapping order, each R_lite entry's children
 * decoded once) and checks everything.  dws_jgf_write() then walks that
 * structure twice - once for vertices, once for edges - numbering vertices
 * the same way both times, so nothing of the graph is held in memory.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "jgf.h"
#include "util/hostindex.h"
#include "util/hostlist.h"
#include "util/idset.h"
#include "util/jsonio.h"
#include "util/outbuf.h"

#define GiB (1024LL * 1024 * 1024)

struct child {            /* one child type of an R_lite entry */
    const char *type;     /* borrowed from R */
    unsigned int *ids;
    size_t count;
};

struct rentry {           /* one R_lite entry */
    struct child *children;
    size_t nchildren;
};

struct host {
    const char *name;     /* owned by jgf->names */
    unsigned int rank;
    size_t entry;         /* index into jgf->entries */
    int rabbit;           /* rabbit whose chassis holds this host, or -1 */
    bool storage_node;    /* the host is that rabbit itself */
    bool excluded;
};

struct rabbit {
    const char *name;     /* borrowed from the mapping */
    json_int_t capacity;
    size_t *hosts;        /* computes in R, mapping order */
    size_t nhosts;
    long self;            /* host index of the rabbit itself, or -1 */
};

struct property {
    const char *name;     /* borrowed from R */
    unsigned char *member; /* member[host index] */
};

struct dws_jgf {
    json_t *R;
    json_t *mapping;
    char **names;
    struct host *hosts;
    size_t nhosts;
    struct hostindex *index;
    struct rentry *entries;
    size_t nentries;
    struct rabbit *rabbits;
    size_t nrabbits;
    struct property *props;
    size_t nprops;
    char *cluster;
    int chunks;
    int flags;
};

/* Output state of one walk. */
struct walk {
    struct dws_jgf *g;
    struct dws_outbuf *ob;
    bool edges;           /* false: write vertices; true: write edges */
    bool first;
    size_t next_id;
    char *path;           /* containment path being built */
    size_t pathlen;
    size_t pathcap;
};

static void free_entries (struct dws_jgf *g)
{
    for (size_t i = 0; i < g->nentries; i++) {
        for (size_t j = 0; j < g->entries[i].nchildren; j++)
            free (g->entries[i].children[j].ids);
        free (g->entries[i].children);
    }
    free (g->entries);
}

void dws_jgf_destroy (struct dws_jgf *g)
{
    if (!g)
        return;
    int saved_errno = errno;
    free_entries (g);
    if (g->names) {
        for (size_t i = 0; i < g->nhosts; i++)
            free (g->names[i]);
        free (g->names);
    }
    free (g->hosts);
    dws_hostindex_destroy (g->index);
    for (size_t i = 0; i < g->nrabbits; i++)
        free (g->rabbits[i].hosts);
    free (g->rabbits);
    for (size_t i = 0; i < g->nprops; i++)
        free (g->props[i].member);
    free (g->props);
    free (g->cluster);
    json_decref (g->R);
    json_decref (g->mapping);
    free (g);
    errno = saved_errno;
}

/* --- R ------------------------------------------------------------------ */

struct rankref {
    unsigned int rank;
    size_t entry;
};

static int cmp_rankref (const void *a, const void *b)
{
    const struct rankref *x = a;
    const struct rankref *y = b;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

static int parse_children (struct rentry *e,
                           json_t *children,
                           size_t index,
                           dws_error_t *err)
{
    const char *type;
    json_t *val;

    if (!json_is_object (children))
        return dws_errorf (err,
                           "R: execution.R_lite[%zu].children must be an object",
                           index);
    e->children = calloc (json_object_size (children) + 1, sizeof (struct child));
    if (!e->children)
        return dws_errorf (err, "out of memory");
    json_object_foreach (children, type, val) {
        struct child *c = &e->children[e->nchildren];
        const char *s = json_string_value (val);
        dws_error_t e2;
        if (!s)
            return dws_errorf (err,
                               "R: execution.R_lite[%zu].children.%s must be an idset string",
                               index,
                               type);
        if (strspn (type, "abcdefghijklmnopqrstuvwxyz0123456789_") != strlen (type)
            || !*type)
            return dws_errorf (err,
                               "R: execution.R_lite[%zu].children: invalid resource type '%s'",
                               index,
                               type);
        c->type = type;
        if (!(c->ids = dws_idset_expand (s, &c->count, &e2)))
            return dws_errorf (err,
                               "R: execution.R_lite[%zu].children.%s: %s",
                               index,
                               type,
                               e2.text);
        e->nchildren++;
    }
    return 0;
}

static int parse_rlite (struct dws_jgf *g,
                        json_t *rlite,
                        struct rankref **refsp,
                        size_t *nrefsp,
                        dws_error_t *err)
{
    struct rankref *refs = NULL;
    size_t nrefs = 0;
    size_t i;
    json_t *entry;

    if (!json_is_array (rlite))
        return dws_errorf (err, "R: execution.R_lite must be an array");
    if (!(g->entries = calloc (json_array_size (rlite) + 1, sizeof (struct rentry))))
        return dws_errorf (err, "out of memory");
    json_array_foreach (rlite, i, entry) {
        const char *rank;
        json_t *children;
        unsigned int *ranks;
        size_t count;
        dws_error_t e2;

        if (json_unpack (entry, "{s:s s:o}", "rank", &rank, "children", &children) < 0) {
            dws_errorf (err,
                        "R: execution.R_lite[%zu] must be an object with"
                        " a rank string and a children object",
                        i);
            goto error;
        }
        g->nentries++;
        if (parse_children (&g->entries[i], children, i, err) < 0)
            goto error;
        if (!(ranks = dws_idset_expand (rank, &count, &e2))) {
            dws_errorf (err, "R: execution.R_lite[%zu].rank: %s", i, e2.text);
            goto error;
        }
        struct rankref *tmp = realloc (refs, (nrefs + count + 1) * sizeof (*refs));
        if (!tmp) {
            free (ranks);
            dws_errorf (err, "out of memory");
            goto error;
        }
        refs = tmp;
        for (size_t k = 0; k < count; k++) {
            refs[nrefs].rank = ranks[k];
            refs[nrefs].entry = i;
            nrefs++;
        }
        free (ranks);
    }
    qsort (refs, nrefs, sizeof (*refs), cmp_rankref);
    for (i = 1; i < nrefs; i++) {
        if (refs[i].rank == refs[i - 1].rank) {
            dws_errorf (err,
                        "R: rank %u appears in R_lite entries %zu and %zu",
                        refs[i].rank,
                        refs[i - 1].entry,
                        refs[i].entry);
            goto error;
        }
    }
    *refsp = refs;
    *nrefsp = nrefs;
    return 0;
error:
    free (refs);
    return -1;
}

static int parse_nodelist (struct dws_jgf *g,
                           json_t *nodelist,
                           size_t nranks,
                           dws_error_t *err)
{
    size_t i;
    json_t *val;
    size_t total = 0;

    if (!json_is_array (nodelist))
        return dws_errorf (err,
                           "R: execution.nodelist (an array of hostlists) is required"
                           " to name the hosts");
    if (!(g->names = calloc (nranks + 1, sizeof (char *))))
        return dws_errorf (err, "out of memory");
    json_array_foreach (nodelist, i, val) {
        const char *s = json_string_value (val);
        char **names;
        size_t count;
        dws_error_t e2;

        if (!s)
            return dws_errorf (err, "R: execution.nodelist[%zu] must be a string", i);
        if (!(names = dws_hostlist_expand (s, &count, &e2)))
            return dws_errorf (err, "R: execution.nodelist[%zu]: %s", i, e2.text);
        for (size_t k = 0; k < count; k++) {
            if (total < nranks)
                g->names[total] = names[k];
            else
                free (names[k]);
            total++;
        }
        free (names);
    }
    if (total != nranks)
        return dws_errorf (err,
                           "R: execution.nodelist names %zu hosts but R_lite has %zu ranks",
                           total,
                           nranks);
    return 0;
}

static int host_lookup_rank (struct dws_jgf *g, unsigned int rank)
{
    size_t lo = 0, hi = g->nhosts;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (g->hosts[mid].rank == rank)
            return (int)mid;
        if (g->hosts[mid].rank < rank)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

static int property_valid (const char *name)
{
    return *name && strpbrk (name, "!&'\"^`|()") == NULL;
}

static int parse_properties (struct dws_jgf *g, json_t *props, dws_error_t *err)
{
    const char *name;
    json_t *val;

    if (!props)
        return 0;
    if (!json_is_object (props))
        return dws_errorf (err, "R: execution.properties must be an object");
    if (!(g->props = calloc (json_object_size (props) + 1, sizeof (*g->props))))
        return dws_errorf (err, "out of memory");
    json_object_foreach (props, name, val) {
        struct property *p = &g->props[g->nprops];
        const char *s = json_string_value (val);
        unsigned int *ranks;
        size_t count;
        dws_error_t e2;

        if (!property_valid (name))
            return dws_errorf (err, "R: invalid property name '%s'", name);
        if (!s)
            return dws_errorf (err,
                               "R: execution.properties.%s must be an idset string",
                               name);
        p->name = name;
        if (!(p->member = calloc (g->nhosts + 1, 1)))
            return dws_errorf (err, "out of memory");
        g->nprops++;
        if (!(ranks = dws_idset_expand (s, &count, &e2)))
            return dws_errorf (err, "R: execution.properties.%s: %s", name, e2.text);
        for (size_t k = 0; k < count; k++) {
            int h = host_lookup_rank (g, ranks[k]);
            if (h < 0) {
                dws_errorf (err,
                            "R: execution.properties.%s names rank %u, which is not in R_lite",
                            name,
                            ranks[k]);
                free (ranks);
                return -1;
            }
            p->member[h] = 1;
        }
        free (ranks);
    }
    return 0;
}

static int parse_R (struct dws_jgf *g, dws_error_t *err)
{
    json_t *execution = json_object_get (g->R, "execution");
    struct rankref *refs = NULL;
    size_t nrefs = 0;

    if (!json_is_object (g->R))
        return dws_errorf (err, "R: must be a JSON object");
    if (!json_is_object (execution))
        return dws_errorf (err, "R: execution must be an object");
    if (parse_rlite (g, json_object_get (execution, "R_lite"), &refs, &nrefs, err) < 0)
        return -1;
    if (parse_nodelist (g, json_object_get (execution, "nodelist"), nrefs, err) < 0)
        goto error;
    if (!(g->hosts = calloc (nrefs + 1, sizeof (*g->hosts)))
        || !(g->index = dws_hostindex_create (nrefs))) {
        dws_errorf (err, "out of memory");
        goto error;
    }
    for (size_t i = 0; i < nrefs; i++) {
        struct host *h = &g->hosts[i];
        long prev;
        h->name = g->names[i];
        h->rank = refs[i].rank;
        h->entry = refs[i].entry;
        h->rabbit = -1;
        g->nhosts++;
        if ((prev = dws_hostindex_insert (g->index, h->name, i)) == -2) {
            dws_errorf (err, "out of memory");
            goto error;
        }
        if (prev >= 0) {
            dws_errorf (err,
                        "R: host '%s' appears twice in execution.nodelist"
                        " (ranks %u and %u)",
                        h->name,
                        g->hosts[prev].rank,
                        h->rank);
            goto error;
        }
    }
    free (refs);
    return parse_properties (g, json_object_get (execution, "properties"), err);
error:
    free (refs);
    return -1;
}

/* --- exclude ------------------------------------------------------------ */

static bool looks_like_idset (const char *s)
{
    return s[strspn (s, "0123456789,-[] ")] == '\0';
}

static int parse_exclude (struct dws_jgf *g, const char *exclude, dws_error_t *err)
{
    dws_error_t e2;

    if (!exclude || !*exclude)
        return 0;
    if (looks_like_idset (exclude)) {
        size_t count;
        unsigned int *ranks = dws_idset_expand (exclude, &count, &e2);
        if (!ranks)
            return dws_errorf (err, "exclude: %s", e2.text);
        for (size_t k = 0; k < count; k++) {
            int h = host_lookup_rank (g, ranks[k]);
            if (h < 0) {
                dws_errorf (err, "exclude: rank %u is not in R", ranks[k]);
                free (ranks);
                return -1;
            }
            g->hosts[h].excluded = true;
        }
        free (ranks);
        return 0;
    }
    size_t count;
    char **names = dws_hostlist_expand (exclude, &count, &e2);
    int rc = 0;
    if (!names)
        return dws_errorf (err, "exclude: %s", e2.text);
    for (size_t k = 0; k < count; k++) {
        long h = dws_hostindex_find (g->index, names[k]);
        if (h < 0 && rc == 0)
            rc = dws_errorf (err, "exclude: host '%s' is not in R", names[k]);
        else if (h >= 0)
            g->hosts[h].excluded = true;
        free (names[k]);
    }
    free (names);
    return rc;
}

/* --- rabbitmapping ------------------------------------------------------ */

static int parse_rabbit (struct dws_jgf *g,
                         struct rabbit *r,
                         json_t *entry,
                         dws_error_t *err)
{
    const char *hostlist;
    char **names = NULL;
    size_t count = 0;
    dws_error_t e2;
    int rc = -1;

    if (json_unpack (entry, "{s:I s:s}", "capacity", &r->capacity, "hostlist", &hostlist) < 0
        || r->capacity < 0)
        return dws_errorf (err,
                           "rabbitmapping: rabbits.%s must have an integer capacity >= 0"
                           " and a hostlist string",
                           r->name);
    r->self = dws_hostindex_find (g->index, r->name);
    if (*hostlist && !(names = dws_hostlist_expand (hostlist, &count, &e2)))
        return dws_errorf (err, "rabbitmapping: rabbits.%s.hostlist: %s", r->name, e2.text);
    if (!(r->hosts = calloc (count + 1, sizeof (size_t)))) {
        dws_errorf (err, "out of memory");
        goto done;
    }
    for (size_t k = 0; k < count; k++) {
        long h = dws_hostindex_find (g->index, names[k]);
        if (h < 0) {
            if (!(g->flags & DWS_JGF_NO_VALIDATE)) {
                dws_errorf (err,
                            "rabbitmapping: compute node '%s' of rabbit '%s' is not in R"
                            " (use --no-validate to skip it)",
                            names[k],
                            r->name);
                goto done;
            }
            continue;
        }
        struct host *host = &g->hosts[h];
        if (host->rabbit >= 0 || host->storage_node) {
            dws_errorf (err,
                        "rabbitmapping: compute node '%s' is listed under two rabbits:"
                        " '%s' and '%s'",
                        names[k],
                        host->storage_node ? names[k] : g->rabbits[host->rabbit].name,
                        r->name);
            goto done;
        }
        host->rabbit = (int)(r - g->rabbits);
        r->hosts[r->nhosts++] = (size_t)h;
    }
    rc = 0;
done:
    for (size_t k = 0; k < count; k++)
        free (names[k]);
    free (names);
    return rc;
}

static int check_computes (struct dws_jgf *g, json_t *computes, dws_error_t *err)
{
    const char *host;
    json_t *val;

    json_object_foreach (computes, host, val) {
        const char *rabbit = json_string_value (val);
        long h = dws_hostindex_find (g->index, host);
        if (!rabbit)
            return dws_errorf (err, "rabbitmapping: computes.%s must be a string", host);
        if (h < 0)
            return dws_errorf (err,
                               "rabbitmapping: compute node '%s' is not in R"
                               " (use --no-validate to skip it)",
                               host);
        if (g->hosts[h].rabbit < 0
            || strcmp (g->rabbits[g->hosts[h].rabbit].name, rabbit) != 0)
            return dws_errorf (err,
                               "rabbitmapping: computes.%s says rabbit '%s' but that"
                               " rabbit's hostlist does not include it",
                               host,
                               rabbit);
    }
    return 0;
}

static int parse_mapping (struct dws_jgf *g, dws_error_t *err)
{
    json_t *computes, *rabbits, *entry;
    const char *name;

    if (json_unpack (g->mapping, "{s:o s:o}", "computes", &computes, "rabbits", &rabbits) < 0
        || !json_is_object (computes) || !json_is_object (rabbits))
        return dws_errorf (err,
                           "rabbitmapping: must be an object with 'computes' and"
                           " 'rabbits' objects");
    if (!(g->rabbits = calloc (json_object_size (rabbits) + 1, sizeof (*g->rabbits))))
        return dws_errorf (err, "out of memory");
    json_object_foreach (rabbits, name, entry) {
        struct rabbit *r = &g->rabbits[g->nrabbits++];
        r->name = name;
        if (parse_rabbit (g, r, entry, err) < 0)
            return -1;
    }
    for (size_t i = 0; i < g->nrabbits; i++) {
        struct rabbit *r = &g->rabbits[i];
        if (r->self < 0)
            continue;
        if (g->hosts[r->self].rabbit >= 0)
            return dws_errorf (err,
                               "rabbitmapping: '%s' is both a rabbit and a compute node"
                               " of rabbit '%s'",
                               r->name,
                               g->rabbits[g->hosts[r->self].rabbit].name);
        g->hosts[r->self].storage_node = true;
        g->hosts[r->self].rabbit = (int)i;
    }
    if (!(g->flags & DWS_JGF_NO_VALIDATE))
        return check_computes (g, computes, err);
    return 0;
}

struct dws_jgf *dws_jgf_prepare (json_t *R,
                                 json_t *mapping,
                                 const char *exclude,
                                 const char *cluster,
                                 int chunks,
                                 int flags,
                                 dws_error_t *err)
{
    struct dws_jgf *g;

    if (!R || !mapping || !cluster) {
        dws_errorf (err, "R, rabbitmapping and cluster name are required");
        return NULL;
    }
    if (chunks < 1) {
        dws_errorf (err, "chunks per rabbit must be at least 1 (got %d)", chunks);
        return NULL;
    }
    if (!*cluster || strchr (cluster, '/')) {
        dws_errorf (err, "invalid cluster name '%s'", cluster);
        return NULL;
    }
    if (!(g = calloc (1, sizeof (*g))) || !(g->cluster = strdup (cluster))) {
        free (g);
        dws_errorf (err, "out of memory");
        return NULL;
    }
    g->R = json_incref (R);
    g->mapping = json_incref (mapping);
    g->chunks = chunks;
    g->flags = flags;
    if (parse_R (g, err) < 0
        || parse_exclude (g, exclude, err) < 0
        || parse_mapping (g, err) < 0) {
        dws_jgf_destroy (g);
        return NULL;
    }
    return g;
}

/* --- output ------------------------------------------------------------- */

static int64_t ssd_size_gib (const struct dws_jgf *g, const struct rabbit *r)
{
    return (int64_t)(r->capacity / g->chunks / GiB);
}

static int ssd_count (const struct dws_jgf *g, const struct rabbit *r)
{
    return ssd_size_gib (g, r) > 0 ? g->chunks : 0;
}

static size_t host_vertex_count (const struct dws_jgf *g, const struct host *h)
{
    size_t n = 1;
    const struct rentry *e = &g->entries[h->entry];
    for (size_t i = 0; i < e->nchildren; i++)
        n += e->children[i].count;
    return n;
}

size_t dws_jgf_vertex_count (const struct dws_jgf *g)
{
    size_t n = 1;
    for (size_t i = 0; i < g->nrabbits; i++)
        n += 1 + (size_t)ssd_count (g, &g->rabbits[i]);
    for (size_t i = 0; i < g->nhosts; i++)
        if (!g->hosts[i].excluded)
            n += host_vertex_count (g, &g->hosts[i]);
    return n;
}

static int path_push (struct walk *w, const char *name, int64_t suffix, size_t *mark)
{
    char num[24] = "";
    size_t nlen = strlen (name);
    size_t slen = 0;

    if (suffix >= 0) {
        char *p = num + sizeof (num) - 1;
        int64_t v = suffix;
        *p = '\0';
        do {
            *--p = (char)('0' + v % 10);
            v /= 10;
        } while (v);
        slen = (size_t)(num + sizeof (num) - 1 - p);
        memmove (num, p, slen + 1);
    }
    size_t need = w->pathlen + 1 + nlen + slen + 1;
    if (need > w->pathcap) {
        size_t cap = need * 2;
        char *tmp = realloc (w->path, cap);
        if (!tmp)
            return -1;
        w->path = tmp;
        w->pathcap = cap;
    }
    *mark = w->pathlen;
    w->path[w->pathlen++] = '/';
    memcpy (w->path + w->pathlen, name, nlen);
    w->pathlen += nlen;
    memcpy (w->path + w->pathlen, num, slen);
    w->pathlen += slen;
    w->path[w->pathlen] = '\0';
    return 0;
}

static void path_pop (struct walk *w, size_t mark)
{
    w->pathlen = mark;
    w->path[mark] = '\0';
}

static void sep (struct walk *w)
{
    if (!w->first)
        dws_outbuf_putc (w->ob, ',');
    w->first = false;
}

/* Begin a vertex: allocate its id; in edge mode write the edge from its
 * parent.  Returns the id.  In vertex mode the caller writes the metadata
 * between vertex_open() and vertex_close().
 */
static size_t vertex_open (struct walk *w, size_t parent, bool root, const char *type)
{
    size_t id = w->next_id++;
    if (w->edges) {
        if (!root) {
            sep (w);
            dws_outbuf_puts (w->ob, "{\"source\":\"");
            dws_outbuf_int (w->ob, (int64_t)parent);
            dws_outbuf_puts (w->ob, "\",\"target\":\"");
            dws_outbuf_int (w->ob, (int64_t)id);
            dws_outbuf_puts (w->ob, "\"}");
        }
        return id;
    }
    sep (w);
    dws_outbuf_puts (w->ob, "{\"id\":\"");
    dws_outbuf_int (w->ob, (int64_t)id);
    dws_outbuf_puts (w->ob, "\",\"metadata\":{\"type\":");
    dws_outbuf_json_string (w->ob, type);
    return id;
}

static void vertex_close (struct walk *w)
{
    if (w->edges)
        return;
    dws_outbuf_puts (w->ob, ",\"paths\":{\"containment\":");
    dws_outbuf_json_string (w->ob, w->path);
    dws_outbuf_puts (w->ob, "}}}");
}

static void put_key_int (struct walk *w, const char *key, int64_t v)
{
    dws_outbuf_puts (w->ob, key);
    dws_outbuf_int (w->ob, v);
}

static int walk_host (struct walk *w, size_t hi, size_t parent)
{
    struct dws_jgf *g = w->g;
    const struct host *h = &g->hosts[hi];
    const struct rentry *e = &g->entries[h->entry];
    size_t mark, cmark;

    if (path_push (w, h->name, -1, &mark) < 0)
        return -1;
    size_t id = vertex_open (w, parent, false, h->storage_node ? "storage_node" : "node");
    if (!w->edges) {
        bool any = false;
        dws_outbuf_puts (w->ob, ",\"name\":");
        dws_outbuf_json_string (w->ob, h->name);
        put_key_int (w, ",\"rank\":", h->rank);
        if (h->storage_node)
            dws_outbuf_puts (w->ob, ",\"exclusive\":true");
        for (size_t p = 0; p < g->nprops; p++) {
            if (!g->props[p].member[hi])
                continue;
            dws_outbuf_puts (w->ob, any ? "," : ",\"properties\":{");
            dws_outbuf_json_string (w->ob, g->props[p].name);
            dws_outbuf_puts (w->ob, ":\"\"");
            any = true;
        }
        if (any)
            dws_outbuf_putc (w->ob, '}');
    }
    vertex_close (w);
    for (size_t c = 0; c < e->nchildren; c++) {
        const struct child *ch = &e->children[c];
        for (size_t k = 0; k < ch->count; k++) {
            if (path_push (w, ch->type, ch->ids[k], &cmark) < 0)
                return -1;
            vertex_open (w, id, false, ch->type);
            if (!w->edges) {
                put_key_int (w, ",\"id\":", ch->ids[k]);
                put_key_int (w, ",\"rank\":", h->rank);
            }
            vertex_close (w);
            path_pop (w, cmark);
        }
    }
    path_pop (w, mark);
    return 0;
}

static int walk_rabbit (struct walk *w, size_t ri, size_t cluster)
{
    struct dws_jgf *g = w->g;
    const struct rabbit *r = &g->rabbits[ri];
    int nssd = ssd_count (g, r);
    size_t mark, smark;

    if (path_push (w, "chassis", (int64_t)ri, &mark) < 0)
        return -1;
    size_t chassis = vertex_open (w, cluster, false, "chassis");
    if (!w->edges) {
        put_key_int (w, ",\"id\":", (int64_t)ri);
        dws_outbuf_puts (w->ob, ",\"properties\":{\"rabbit\":");
        dws_outbuf_json_string (w->ob, r->name);
        dws_outbuf_puts (w->ob, ",\"ssdcount\":\"");
        dws_outbuf_int (w->ob, nssd);
        dws_outbuf_puts (w->ob, "\"}");
    }
    vertex_close (w);
    for (int k = 0; k < nssd; k++) {
        if (path_push (w, "ssd", k, &smark) < 0)
            return -1;
        vertex_open (w, chassis, false, "ssd");
        if (!w->edges) {
            dws_outbuf_puts (w->ob, ",\"unit\":\"GiB\"");
            put_key_int (w, ",\"size\":", ssd_size_gib (g, r));
            dws_outbuf_puts (w->ob, ",\"status\":1");
        }
        vertex_close (w);
        path_pop (w, smark);
    }
    for (size_t k = 0; k < r->nhosts; k++) {
        if (!g->hosts[r->hosts[k]].excluded && walk_host (w, r->hosts[k], chassis) < 0)
            return -1;
    }
    if (r->self >= 0 && !g->hosts[r->self].excluded
        && walk_host (w, (size_t)r->self, chassis) < 0)
        return -1;
    path_pop (w, mark);
    return 0;
}

static int walk_graph (struct walk *w)
{
    struct dws_jgf *g = w->g;
    size_t mark;

    w->next_id = 0;
    w->first = true;
    w->pathlen = 0;
    if (path_push (w, g->cluster, -1, &mark) < 0)
        return -1;
    size_t cluster = vertex_open (w, 0, true, "cluster");
    if (!w->edges) {
        dws_outbuf_puts (w->ob, ",\"name\":");
        dws_outbuf_json_string (w->ob, g->cluster);
    }
    vertex_close (w);
    for (size_t i = 0; i < g->nrabbits; i++)
        if (walk_rabbit (w, i, cluster) < 0)
            return -1;
    for (size_t i = 0; i < g->nhosts; i++) {
        const struct host *h = &g->hosts[i];
        if (h->rabbit < 0 && !h->excluded && walk_host (w, i, cluster) < 0)
            return -1;
    }
    return 0;
}

static void write_R_prefix (struct dws_jgf *g, struct dws_outbuf *ob)
{
    const char *key;
    json_t *val;

    dws_outbuf_putc (ob, '{');
    json_object_foreach (g->R, key, val) {
        if (!strcmp (key, "scheduling"))
            continue;
        dws_outbuf_json_string (ob, key);
        dws_outbuf_putc (ob, ':');
        dws_outbuf_json (ob, val);
        dws_outbuf_putc (ob, ',');
    }
    dws_outbuf_puts (ob, "\"scheduling\":");
}

int dws_jgf_write (struct dws_jgf *g, dws_write_f writer, void *arg, dws_error_t *err)
{
    struct walk w = {.g = g};
    int rc = -1;

    if (!(w.ob = dws_outbuf_create (writer, arg)))
        return dws_errorf (err, "out of memory");
    if (!(g->flags & DWS_JGF_ONLY_SCHED))
        write_R_prefix (g, w.ob);
    dws_outbuf_puts (w.ob, "{\"graph\":{\"nodes\":[");
    if (walk_graph (&w) < 0)
        goto nomem;
    dws_outbuf_puts (w.ob, "],\"edges\":[");
    w.edges = true;
    if (walk_graph (&w) < 0)
        goto nomem;
    dws_outbuf_puts (w.ob, "]}}");
    if (!(g->flags & DWS_JGF_ONLY_SCHED))
        dws_outbuf_putc (w.ob, '}');
    dws_outbuf_putc (w.ob, '\n');
    rc = dws_outbuf_flush (w.ob, err);
    goto done;
nomem:
    dws_errorf (err, "out of memory");
done:
    dws_outbuf_destroy (w.ob);
    free (w.path);
    return rc;
}

int dws_jgf_write_json (const char *R_json,
                        const char *mapping_json,
                        const char *exclude,
                        const char *cluster,
                        int chunks,
                        int flags,
                        dws_write_f writer,
                        void *arg,
                        dws_error_t *err)
{
    json_t *R = NULL, *mapping = NULL;
    struct dws_jgf *g = NULL;
    int rc = -1;

    if (!(R = dws_json_load ("R", R_json, JSON_REJECT_DUPLICATES, err))
        || !(mapping = dws_json_load ("rabbitmapping", mapping_json, JSON_REJECT_DUPLICATES,
                                      err))
        || !(g = dws_jgf_prepare (R, mapping, exclude, cluster, chunks, flags, err)))
        goto done;
    rc = dws_jgf_write (g, writer, arg, err);
done:
    dws_jgf_destroy (g);
    json_decref (R);
    json_decref (mapping);
    return rc;
}
