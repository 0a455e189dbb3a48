/* SPDX-License-Identifier: LGPL-3.0-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "jsontap.h"
#include "placement/rssd.h"

/* A fixture of t/data/rssd: the R Fluxion 0.54 (match-format rv1) wrote
 * for a job of the kind system, from flux job info JOBID R. */
static json_t *fixture (const char *name)
{
    const char *dir = getenv ("DWS_TEST_DATA");
    char path[4096];
    json_error_t e;
    snprintf (path, sizeof (path), "%s/rssd/%s", dir ? dir : "t/data", name);
    json_t *o = json_load_file (path, 0, &e);
    if (!o)
        diag ("cannot read %s: %s", path, e.text);
    return o;
}

static void paths_is (json_t *R, const char *expect, const char *what)
{
    dws_error_t err;
    json_t *got = dws_rssd_paths (R, &err);
    char *s = got ? json_dumps (got, JSON_COMPACT) : NULL;
    json_dump_is (s, expect, err.text, 0, what);
    json_decref (got);
}

static void R_is (const char *R_text, const char *expect, const char *what)
{
    dws_error_t err;
    json_dump_is (dws_rssd_paths_json (R_text, &err), expect, err.text, 0, what);
}

static void test_real_R (void)
{
    json_t *R = fixture ("R-xfs-4nodes.json");
    ok (R != NULL, "the fixture of a 4-node xfs job reads");
    paths_is (R,
              "[\"/kind/chassis0/ssd33\",\"/kind/chassis0/ssd34\",\"/kind/chassis0/ssd35\","
              "\"/kind/chassis1/ssd35\"]",
              "a 4-node xfs job: its 4 ssd vertices on 2 rabbits, in R's order");
    json_t *copy = json_deep_copy (R);
    json_object_del (copy, "scheduling");
    paths_is (copy, "R has no scheduling graph: is Fluxion's match-format rv1?",
              "R without its scheduling key (the job manager's copy): refused");
    json_object_set_new (copy, "scheduling", json_null ());
    paths_is (copy, "R has no scheduling graph: is Fluxion's match-format rv1?",
              "scheduling null: the same");
    json_decref (copy);
    json_decref (R);

    R = fixture ("R-no-dw.json");
    paths_is (R, "[]", "a job without #DW: no ssd vertex");
    json_decref (R);
}

static void test_malformed (void)
{
    R_is ("[1]", "R must be an object", "R not an object");
    R_is ("{\"scheduling\":{}}",
          "R scheduling.graph is not a JGF graph (no nodes list)", "scheduling without a graph");
    R_is ("{\"scheduling\":{\"graph\":{\"nodes\":{}}}}",
          "R scheduling.graph is not a JGF graph (no nodes list)", "nodes not a list");
    R_is ("{\"scheduling\":{\"graph\":{\"nodes\":[],\"edges\":[]}}}", "[]", "an empty graph");
    R_is ("{\"scheduling\":{\"graph\":{\"nodes\":[{\"id\":\"1\"}]}}}",
          "R scheduling.graph.nodes[0]: a vertex needs metadata with a type",
          "a vertex without metadata");
    R_is ("{\"scheduling\":{\"graph\":{\"nodes\":[{\"metadata\":{\"type\":\"core\"}},"
          "{\"metadata\":{\"type\":\"ssd\",\"paths\":{}}}]}}}",
          "R scheduling.graph.nodes[1]: ssd vertex without a containment path",
          "an ssd vertex without a path");
    R_is ("{\"scheduling\":{\"graph\":{\"nodes\":[{\"metadata\":{\"type\":\"ssd\","
          "\"paths\":{\"containment\":7}}}]}}}",
          "R scheduling.graph.nodes[0]: ssd vertex without a containment path",
          "a path that is not a string");
    R_is ("{\"scheduling\":{\"graph\":{\"nodes\":[{\"metadata\":{\"type\":\"ssd\","
          "\"paths\":{\"containment\":\"kind/chassis0/ssd0\"}}}]}}}",
          "R scheduling.graph.nodes[0]: ssd vertex without a containment path",
          "a path that is not absolute");
    R_is ("{\"scheduling\":", "R: invalid JSON: unexpected token near end of file (line 1, column 14)",
          "not JSON");
}

static void test_graph (void)
{
    dws_error_t err;
    json_t *g = json_pack ("{s:[{s:{s:s s:{s:s}}} {s:{s:s s:{s:s}}}]}", "nodes", "metadata",
                           "type", "chassis", "paths", "containment", "/c/chassis0", "metadata",
                           "type", "ssd", "paths", "containment", "/c/chassis0/ssd1");
    json_t *p = dws_rssd_graph_paths (g, "its find answer's R.graph", &err);
    char *s = p ? json_dumps (p, JSON_COMPACT) : NULL;
    json_dump_is (s, "[\"/c/chassis0/ssd1\"]", err.text, 0, "a find answer: its ssd paths");
    json_decref (p);
    json_decref (g);
    ok (dws_rssd_graph_paths (NULL, "its find answer's R.graph", &err) == NULL,
        "no graph: refused");
    is (err.text, "its find answer's R.graph is not a JGF graph (no nodes list)",
        "... naming it as the caller does");
}

int main (void)
{
    test_real_R ();
    test_malformed ();
    test_graph ();
    return done_testing ();
}
