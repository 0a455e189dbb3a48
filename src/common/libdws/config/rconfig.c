/* rconfig.c - R from a [resource.config] array (see rconfig.h).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "rconfig.h"
#include "util/hostindex.h"
#include "util/hostlist.h"
#include "util/idset.h"
#include "util/jsonio.h"

struct idlist {
    unsigned int *ids; /* sorted, unique */
    size_t n;
};

struct rnode {
    char *name;
    struct idlist cores;
    struct idlist gpus;
    struct idlist props; /* indices into rc->propnames */
};

struct rc {
    struct rnode *nodes; /* rank order */
    size_t nnodes;
    size_t cap;
    struct hostindex *index;
    const char **propnames; /* borrowed from config */
    size_t nprops;
};

static void idlist_free (struct idlist *l)
{
    free (l->ids);
    l->ids = NULL;
    l->n = 0;
}

/* l = l U (ids, n); ids sorted unique. */
static int idlist_union (struct idlist *l, const unsigned int *ids, size_t n)
{
    unsigned int *out = malloc ((l->n + n + 1) * sizeof (*out));
    size_t i = 0, j = 0, k = 0;

    if (!out)
        return -1;
    while (i < l->n || j < n) {
        unsigned int v;
        if (j >= n || (i < l->n && l->ids[i] < ids[j]))
            v = l->ids[i++];
        else if (i >= l->n || ids[j] < l->ids[i])
            v = ids[j++];
        else {
            v = ids[j++];
            i++;
        }
        out[k++] = v;
    }
    free (l->ids);
    l->ids = out;
    l->n = k;
    return 0;
}

static void rc_free (struct rc *rc)
{
    for (size_t i = 0; i < rc->nnodes; i++) {
        free (rc->nodes[i].name);
        idlist_free (&rc->nodes[i].cores);
        idlist_free (&rc->nodes[i].gpus);
        idlist_free (&rc->nodes[i].props);
    }
    free (rc->nodes);
    dws_hostindex_destroy (rc->index);
    free (rc->propnames);
}

static bool property_valid (const char *s)
{
    return *s && strpbrk (s, "!&'\"^`|()") == NULL;
}

static int prop_index (struct rc *rc, const char *name)
{
    for (size_t i = 0; i < rc->nprops; i++)
        if (!strcmp (rc->propnames[i], name))
            return (int)i;
    const char **tmp = realloc (rc->propnames, (rc->nprops + 1) * sizeof (*tmp));
    if (!tmp)
        return -1;
    rc->propnames = tmp;
    rc->propnames[rc->nprops] = name;
    return (int)rc->nprops++;
}

/* The node for host (created with the next rank if new), or NULL. */
static struct rnode *rc_node (struct rc *rc, char *host)
{
    long i = dws_hostindex_find (rc->index, host);
    if (i >= 0) {
        free (host);
        return &rc->nodes[i];
    }
    if (rc->nnodes == rc->cap) {
        size_t cap = rc->cap ? rc->cap * 2 : 64;
        struct rnode *tmp = realloc (rc->nodes, cap * sizeof (*tmp));
        if (!tmp)
            goto nomem;
        rc->nodes = tmp;
        rc->cap = cap;
        /* the index holds pointers to names, not nodes: still valid */
    }
    struct rnode *n = &rc->nodes[rc->nnodes];
    memset (n, 0, sizeof (*n));
    n->name = host;
    if (dws_hostindex_insert (rc->index, host, rc->nnodes) == -2)
        goto nomem;
    rc->nnodes++;
    return n;
nomem:
    free (host);
    return NULL;
}

static int unexpected_keys (json_t *entry, size_t index, dws_error_t *err)
{
    static const char *known[] = {"hosts", "cores", "gpus", "properties"};
    const char *key;
    json_t *val;
    char list[512] = "";
    int count = 0;

    json_object_foreach (entry, key, val) {
        bool ok = false;
        for (size_t i = 0; i < sizeof (known) / sizeof (known[0]); i++)
            ok = ok || !strcmp (key, known[i]);
        if (!ok) {
            size_t len = strlen (list);
            snprintf (list + len, sizeof (list) - len, "%s%s", count ? ", " : "", key);
            count++;
        }
    }
    if (count)
        return dws_errorf (err,
                           "config[%zu]: %d object item(s) left unpacked: %s",
                           index,
                           count,
                           list);
    return 0;
}

static int get_string (json_t *entry,
                       const char *key,
                       bool required,
                       const char **out,
                       size_t index,
                       dws_error_t *err)
{
    json_t *v = json_object_get (entry, key);
    *out = NULL;
    if (!v) {
        if (required)
            return dws_errorf (err, "config[%zu]: Object item not found: %s", index, key);
        return 0;
    }
    if (!(*out = json_string_value (v)))
        return dws_errorf (err, "config[%zu]: %s must be a string", index, key);
    return 0;
}

static int add_entry (struct rc *rc, json_t *entry, size_t index, dws_error_t *err)
{
    const char *hosts, *cores, *gpus;
    json_t *props;
    char **names = NULL;
    size_t nnames = 0;
    unsigned int *coreids = NULL, *gpuids = NULL;
    size_t ncores = 0, ngpus = 0;
    int *propidx = NULL;
    size_t nprop = 0;
    dws_error_t e2;
    int rc_ = -1;

    if (!json_is_object (entry))
        return dws_errorf (err, "config[%zu]: must be a table (object)", index);
    if (unexpected_keys (entry, index, err) < 0
        || get_string (entry, "hosts", true, &hosts, index, err) < 0
        || get_string (entry, "cores", false, &cores, index, err) < 0
        || get_string (entry, "gpus", false, &gpus, index, err) < 0)
        return -1;
    props = json_object_get (entry, "properties");
    if (props && !json_is_array (props))
        return dws_errorf (err, "config[%zu]: properties must be an array", index);
    if (!(names = dws_hostlist_expand (hosts, &nnames, &e2)))
        return dws_errorf (err, "config[%zu]: invalid hostlist '%s'", index, hosts);
    if (nnames == 0) {
        dws_errorf (err, "config[%zu]: empty hostlist specified", index);
        goto done;
    }
    if (cores && !(coreids = dws_idset_expand (cores, &ncores, &e2))) {
        dws_errorf (err, "config[%zu]: invalid idset cores='%s'", index, cores);
        goto done;
    }
    if (gpus && !(gpuids = dws_idset_expand (gpus, &ngpus, &e2))) {
        dws_errorf (err, "config[%zu]: invalid idset gpus='%s'", index, gpus);
        goto done;
    }
    if (props) {
        size_t i;
        json_t *p;
        if (!(propidx = calloc (json_array_size (props) + 1, sizeof (int))))
            goto nomem;
        json_array_foreach (props, i, p) {
            const char *s = json_string_value (p);
            if (!s || !property_valid (s)) {
                char *txt = json_dumps (p, JSON_ENCODE_ANY | JSON_COMPACT);
                dws_errorf (err,
                            "config[%zu]: invalid property %s",
                            index,
                            txt ? txt : "(unprintable)");
                free (txt);
                goto done;
            }
            if ((propidx[nprop++] = prop_index (rc, s)) < 0)
                goto nomem;
        }
    }
    for (size_t i = 0; i < nnames; i++) {
        struct rnode *n = rc_node (rc, names[i]);
        names[i] = NULL; /* rc_node took it */
        if (!n || idlist_union (&n->cores, coreids, ncores) < 0
            || idlist_union (&n->gpus, gpuids, ngpus) < 0)
            goto nomem;
        for (size_t k = 0; k < nprop; k++) {
            unsigned int id = (unsigned int)propidx[k];
            if (idlist_union (&n->props, &id, 1) < 0)
                goto nomem;
        }
    }
    rc_ = 0;
    goto done;
nomem:
    dws_errorf (err, "out of memory");
done:
    for (size_t i = 0; i < nnames; i++)
        free (names[i]);
    free (names);
    free (coreids);
    free (gpuids);
    free (propidx);
    return rc_;
}

static int check_resources (struct rc *rc, dws_error_t *err)
{
    char **empty = NULL;
    size_t nempty = 0;
    int ret = 0;

    if (rc->nnodes == 0)
        return dws_errorf (err, "no hosts configured");
    for (size_t i = 0; i < rc->nnodes; i++) {
        if (rc->nodes[i].cores.n + rc->nodes[i].gpus.n > 0)
            continue;
        char **tmp = realloc (empty, (nempty + 1) * sizeof (*tmp));
        if (!tmp) {
            free (empty);
            return dws_errorf (err, "out of memory");
        }
        empty = tmp;
        empty[nempty++] = rc->nodes[i].name;
    }
    if (nempty) {
        char *s = dws_hostlist_compress ((const char **)empty, nempty, NULL);
        ret = dws_errorf (err, "resource.config: %s assigned no resources", s ? s : "hosts");
        free (s);
    }
    free (empty);
    return ret;
}

static bool same_children (const struct rnode *a, const struct rnode *b)
{
    return a->cores.n == b->cores.n && a->gpus.n == b->gpus.n
           && !memcmp (a->cores.ids, b->cores.ids, a->cores.n * sizeof (unsigned int))
           && !memcmp (a->gpus.ids, b->gpus.ids, a->gpus.n * sizeof (unsigned int));
}

static int set_idset (json_t *o, const char *key, const unsigned int *ids, size_t n)
{
    char *s = dws_idset_compress (ids, n);
    int rc = s ? json_object_set_new (o, key, json_string (s)) : -1;
    free (s);
    return rc;
}

static json_t *rlite (struct rc *rc)
{
    json_t *a = json_array ();
    size_t *group = calloc (rc->nnodes + 1, sizeof (size_t)); /* node -> leader */
    unsigned int *ranks = malloc ((rc->nnodes + 1) * sizeof (unsigned int));

    if (!a || !group || !ranks)
        goto error;
    /* Group every node with the first node that has the same children.
     * Leaders are visited in rank order, so entries come out sorted by
     * their first rank.  Nodes are few distinct shapes: compare against
     * the leaders seen so far.
     */
    size_t *leaders = malloc ((rc->nnodes + 1) * sizeof (size_t));
    size_t nleaders = 0;
    if (!leaders)
        goto error;
    for (size_t i = 0; i < rc->nnodes; i++) {
        size_t l;
        for (l = 0; l < nleaders; l++)
            if (same_children (&rc->nodes[leaders[l]], &rc->nodes[i]))
                break;
        if (l == nleaders)
            leaders[nleaders++] = i;
        group[i] = leaders[l];
    }
    for (size_t l = 0; l < nleaders; l++) {
        const struct rnode *lead = &rc->nodes[leaders[l]];
        size_t n = 0;
        json_t *children = json_object ();
        json_t *entry = json_object ();
        for (size_t i = leaders[l]; i < rc->nnodes; i++)
            if (group[i] == leaders[l])
                ranks[n++] = (unsigned int)i;
        if (!children || !entry || set_idset (entry, "rank", ranks, n) < 0
            || (lead->cores.n && set_idset (children, "core", lead->cores.ids, lead->cores.n) < 0)
            || (lead->gpus.n && set_idset (children, "gpu", lead->gpus.ids, lead->gpus.n) < 0)
            || json_object_set_new (entry, "children", children) < 0
            || json_array_append_new (a, entry) < 0) {
            json_decref (entry);
            free (leaders);
            goto error;
        }
    }
    free (leaders);
    free (group);
    free (ranks);
    return a;
error:
    json_decref (a);
    free (group);
    free (ranks);
    return NULL;
}

static json_t *properties (struct rc *rc)
{
    json_t *o = json_object ();
    unsigned int *ranks = malloc ((rc->nnodes + 1) * sizeof (unsigned int));

    if (!o || !ranks)
        goto error;
    for (size_t p = 0; p < rc->nprops; p++) {
        size_t n = 0;
        for (size_t i = 0; i < rc->nnodes; i++) {
            const struct idlist *l = &rc->nodes[i].props;
            for (size_t k = 0; k < l->n; k++)
                if (l->ids[k] == p)
                    ranks[n++] = (unsigned int)i;
        }
        if (set_idset (o, rc->propnames[p], ranks, n) < 0)
            goto error;
    }
    free (ranks);
    return o;
error:
    free (ranks);
    json_decref (o);
    return NULL;
}

json_t *dws_rconfig_to_R (json_t *config, dws_error_t *err)
{
    struct rc rc = {0};
    json_t *R = NULL;
    json_t *lite = NULL, *props = NULL;
    char **names = NULL;
    char *nodelist = NULL;
    size_t i;
    json_t *entry;

    if (!json_is_array (config)) {
        dws_errorf (err, "resource config must be an array");
        return NULL;
    }
    if (!(rc.index = dws_hostindex_create (64))) {
        dws_errorf (err, "out of memory");
        return NULL;
    }
    json_array_foreach (config, i, entry) {
        if (add_entry (&rc, entry, i, err) < 0)
            goto done;
    }
    if (check_resources (&rc, err) < 0)
        goto done;
    if (!(names = malloc ((rc.nnodes + 1) * sizeof (char *))))
        goto nomem;
    for (i = 0; i < rc.nnodes; i++)
        names[i] = rc.nodes[i].name;
    if (!(nodelist = dws_hostlist_compress ((const char **)names, rc.nnodes, err))
        || !(lite = rlite (&rc))
        || !(props = properties (&rc)))
        goto nomem;
    R = json_pack ("{s:i s:{s:O s:f s:f s:[s]}}",
                   "version", 1,
                   "execution",
                   "R_lite", lite,
                   "starttime", 0.0,
                   "expiration", 0.0,
                   "nodelist", nodelist);
    if (!R)
        goto nomem;
    if (rc.nprops
        && json_object_set (json_object_get (R, "execution"), "properties", props) < 0) {
        json_decref (R);
        R = NULL;
        goto nomem;
    }
    goto done;
nomem:
    dws_errorf (err, "out of memory");
done:
    json_decref (lite);
    json_decref (props);
    free (names);
    free (nodelist);
    rc_free (&rc);
    return R;
}

char *dws_rconfig_to_R_json (const char *config_json, dws_error_t *err)
{
    json_t *config = dws_json_load ("resource.config", config_json, 0, err);
    char *s;

    if (!config)
        return NULL;
    s = dws_json_dump_take (dws_rconfig_to_R (config, err), err);
    json_decref (config);
    return s;
}
