/* SPDX-License-Identifier: LGPL-3.0-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "config/rconfig.h"
#include "placement/jgf.h"
#include "tap.h"

static const char *R =
    "{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"0-3\","
    "\"children\":{\"core\":\"0-1\"}}],\"nodelist\":[\"n[1-3],r1\"]}}";
static const char *MAP =
    "{\"computes\":{\"n1\":\"r1\",\"n2\":\"r1\"},"
    "\"rabbits\":{\"r1\":{\"capacity\":4294967296,\"hostlist\":\"n[1-2]\"}}}";

static int file_write (const char *buf, size_t n, void *arg)
{
    return fwrite (buf, 1, n, arg) == n ? 0 : -1;
}

static json_t *render (const char *r, const char *map, int chunks, int flags, dws_error_t *err)
{
    FILE *f = tmpfile ();
    json_t *o = NULL;
    if (dws_jgf_write_json (r, map, NULL, "c", chunks, flags, file_write, f, err) == 0) {
        rewind (f);
        o = json_loadf (f, 0, NULL);
    }
    else {
        fseek (f, 0, SEEK_END);
        ok (ftell (f) == 0, "nothing was written on error");
    }
    fclose (f);
    return o;
}

static const char *vtype (json_t *nodes, size_t i)
{
    json_t *v = json_array_get (nodes, i);
    return json_string_value (json_object_get (json_object_get (v, "metadata"), "type"));
}

static void test_graph (void)
{
    dws_error_t err;
    json_t *o = render (R, MAP, 2, 0, &err);
    json_t *nodes, *edges;

    ok (o != NULL, "graph written");
    if (!o) {
        diag ("%s", err.text);
        return;
    }
    nodes = json_object_get (json_object_get (json_object_get (o, "scheduling"), "graph"),
                             "nodes");
    edges = json_object_get (json_object_get (json_object_get (o, "scheduling"), "graph"),
                             "edges");
    /* cluster, chassis, 2 ssd, n1+2 cores, n2+2 cores, r1+2 cores, n3+2 cores */
    cmp_ok (json_array_size (nodes), ==, 16, "16 vertices");
    cmp_ok (json_array_size (edges), ==, 15, "15 edges");
    is (vtype (nodes, 0), "cluster", "vertex 0 is the cluster");
    is (vtype (nodes, 1), "chassis", "vertex 1 is the chassis");
    is (vtype (nodes, 2), "ssd", "then its ssds");
    is (vtype (nodes, 4), "node", "then its computes");
    is (vtype (nodes, 10), "storage_node", "then the rabbit itself");
    is (vtype (nodes, 13), "node", "then hosts without a rabbit");
    ok (json_object_get (o, "execution") != NULL, "R is passed through");
    json_decref (o);

    o = render (R, MAP, 2, DWS_JGF_ONLY_SCHED, &err);
    ok (o && json_object_get (o, "graph") && !json_object_get (o, "execution"),
        "ONLY_SCHED writes just the graph");
    json_decref (o);
}

static void test_errors (void)
{
    dws_error_t err;
    ok (render ("{", MAP, 2, 0, &err) == NULL && strstr (err.text, "R: invalid JSON"),
        "bad R JSON: %s", err.text);
    ok (render (R, "{\"computes\":{},\"rabbits\":{\"r\":{\"capacity\":1,"
                   "\"hostlist\":\"zz\"}}}", 2, 0, &err) == NULL
            && strstr (err.text, "compute node 'zz' of rabbit 'r' is not in R"),
        "unknown compute: %s", err.text);
    json_t *o = render (R, "{\"computes\":{},\"rabbits\":{\"r\":{\"capacity\":1,"
                           "\"hostlist\":\"zz\"}}}", 2, DWS_JGF_NO_VALIDATE, &err);
    ok (o != NULL, "NO_VALIDATE skips it");
    json_decref (o);
    ok (render (R, MAP, 0, 0, &err) == NULL && strstr (err.text, "at least 1"),
        "zero chunks: %s", err.text);
    ok (dws_jgf_prepare (NULL, NULL, NULL, "c", 1, 0, &err) == NULL, "NULL inputs: %s",
        err.text);
}

static void test_rconfig (void)
{
    dws_error_t err;
    char *s = dws_rconfig_to_R_json ("[{\"hosts\":\"n[1-2]\",\"cores\":\"0-3\"}]", &err);
    ok (s && strstr (s, "\"nodelist\":[\"n[1-2]\"]") != NULL, "rconfig: %s", s ? s : err.text);
    free (s);
    ok (dws_rconfig_to_R_json ("[{\"hosts\":\"n1\"}]", &err) == NULL
            && !strcmp (err.text, "resource.config: n1 assigned no resources"),
        "rconfig: %s", err.text);
    ok (dws_rconfig_to_R_json ("[", &err) == NULL, "rconfig bad JSON: %s", err.text);
}

int main (void)
{
    test_graph ();
    test_errors ();
    test_rconfig ();
    return done_testing ();
}
