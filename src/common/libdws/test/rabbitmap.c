/* SPDX-License-Identifier: LGPL-3.0-or-later */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "jsontap.h"
#include "placement/rabbitmap.h"

/* key order matters here (rabbits in order of first use) */
static void result_is (char *got, const char *expect, dws_error_t *err, const char *what)
{
    json_dump_is (got, expect, err->text, JSON_PRESERVE_ORDER, what);
}

static const char *DOC = "{\"computes\":{\"c1\":\"r1\",\"c2\":\"r1\",\"c3\":\"r2\"},"
                         "\"rabbits\":{\"r1\":{},\"r2\":{},\"r3\":{\"hostlist\":\"\"}}}";

int main (void)
{
    dws_error_t err;
    struct dws_rabbitmap *map = dws_rabbitmap_create_json (DOC, &err);

    ok (map != NULL, "a rabbitmap is built from a rabbitmapping document");
    result_is (dws_rabbitmap_counts_json (map, "c3,c[1-2],r1", &err), "{\"r2\":1,\"r1\":2}", &err,
             "hostlist: rabbits in order of first use; a rabbit used as compute is skipped");
    result_is (dws_rabbitmap_counts_json (map, "r3,c1", &err), "{\"r1\":1}", &err,
             "a rabbit with no computes (only under 'rabbits') is skipped too");
    result_is (dws_rabbitmap_counts_json (map, "c1,c1,c2", &err), "{\"r1\":2}", &err,
             "a repeated host counts once");
    result_is (dws_rabbitmap_counts_json (map, "c9", &err),
             "compute node 'c9' is not attached to any rabbit", &err, "unknown compute");
    result_is (dws_rabbitmap_counts_json (map, "c[1-", &err),
             "job hosts: unbalanced brackets in 'c[1-'", &err, "bad hostlist");
    result_is (dws_rabbitmap_counts_json (map, NULL, &err), "job hosts: no hostlist", &err,
             "NULL hostlist");
    result_is (dws_rabbitmap_counts_json (map, "", &err), "{}", &err, "empty hostlist: no rabbits");

    result_is (dws_rabbitmap_counts_list_json (map, "[\"c3\",\"c1\",\"r2\",\"c2\",\"c3\"]", &err),
             "{\"r2\":1,\"r1\":2}", &err, "JSON list of hosts");
    result_is (dws_rabbitmap_counts_list_json (map, "[\"c1\", 5]", &err),
             "job hosts[1] is not a host name", &err, "non-string host");
    result_is (dws_rabbitmap_counts_list_json (map, "{\"c1\":1}", &err),
             "job hosts must be a list of host names", &err, "hosts not a list");
    result_is (dws_rabbitmap_counts_list_json (map, "[\"c1\",\"x\"]", &err),
             "compute node 'x' is not attached to any rabbit", &err, "unknown host in list");
    result_is (dws_rabbitmap_counts_list_json (map, "[", &err),
             "job hosts: invalid JSON: ']' expected near end of file (line 1, column 1)", &err, "bad JSON list");
    json_t *want = json_pack ("{s:i s:i}", "r1", 2, "r2", 1);
    ok (dws_rabbitmap_counts_equal (map, "c[1-3]", want), "counts equal: c[1-3] is r1 x2, r2 x1");
    ok (!dws_rabbitmap_counts_equal (map, "c[1,3]", want), "... c[1,3] is not");
    ok (!dws_rabbitmap_counts_equal (map, "c9", want), "... nor an unknown compute");
    ok (!dws_rabbitmap_counts_equal (NULL, "c[1-3]", want), "... nor anything without a map");
    json_decref (want);
    dws_rabbitmap_destroy (map);

    result_is (dws_rabbit_counts_json ("[\"a1\",\"a2\",\"a3\",\"ra\"]",
                                     "{\"a1\":\"ra\",\"a2\":\"rb\",\"a3\":\"ra\"}", &err),
             "{\"ra\":2,\"rb\":1}", &err, "one-off counts from a bare {compute: rabbit} object");
    result_is (dws_rabbit_counts_json ("[]", "{}", &err), "{}", &err, "empty mapping, no hosts");
    result_is (dws_rabbit_counts_json ("[\"a1\"]", "[]", &err), "rabbitmapping must be an object",
             &err, "mapping not an object");
    result_is (dws_rabbit_counts_json ("[\"a1\"]", "{\"a1\":5}", &err),
             "rabbitmapping: computes.a1 must name a rabbit", &err, "rabbit not a string");
    result_is (dws_rabbit_counts_json ("[\"a1\"]", "{\"computes\":[]}", &err),
             "rabbitmapping: 'computes' must map compute nodes to rabbits", &err,
             "computes not an object");
    result_is (dws_rabbit_counts_json ("[\"a1\"]", "{\"computes\":{},\"rabbits\":[]}", &err),
             "rabbitmapping: 'rabbits' must be an object", &err, "rabbits not an object");
    result_is (dws_rabbit_counts_json ("[\"a1\"]", "{", &err),
             "rabbitmapping: invalid JSON: string or '}' expected near end of file (line 1, column 1)", &err,
             "bad mapping JSON");
    result_is (dws_rabbit_counts_json ("[\"a1\"]", NULL, &err),
             "rabbitmapping: invalid JSON: unexpected token near end of file (line 1, column 0)", &err,
             "NULL mapping");
    ok (dws_rabbitmap_counts (NULL, "c1", &err) == NULL, "NULL map: %s", err.text);
    ok (dws_rabbitmap_counts_list (NULL, NULL, &err) == NULL, "NULL map (list): %s", err.text);
    dws_rabbitmap_destroy (NULL);
    ok (1, "destroying NULL is a no-op");
    return done_testing ();
}
