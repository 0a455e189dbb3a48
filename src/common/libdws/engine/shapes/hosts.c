/* hosts.c - the engine's host lists: a job's hosts from R, and
 * one list minus another.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <stdlib.h>

#include "hosts.h"
#include "util/hostlist.h"

char *hosts_of_R (json_t *R, dws_error_t *err)
{
    json_t *nodelist = json_object_get (json_object_get (R, "execution"), "nodelist");
    if (!json_is_array (nodelist) || json_array_size (nodelist) == 0) {
        dws_errorf (err, "R has no execution.nodelist");
        return NULL;
    }
    struct dws_hostlist *hl = dws_hostlist_create ();
    if (!hl) {
        dws_errorf (err, "out of memory");
        return NULL;
    }
    size_t i;
    json_t *v;
    json_array_foreach (nodelist, i, v) {
        if (!json_is_string (v)) {
            dws_errorf (err, "R execution.nodelist[%zu] is not a string", i);
            goto fail;
        }
        if (dws_hostlist_append (hl, json_string_value (v), err) < 0) {
            dws_error_prefix (err, "R execution.nodelist[%zu]: ", i);
            goto fail;
        }
    }
    struct dws_hostlist *u = dws_hostlist_uniq (hl, err);
    if (!u)
        goto fail;
    dws_hostlist_destroy (hl);
    char *s = dws_hostlist_encode (u);
    dws_hostlist_destroy (u);
    if (!s)
        dws_errorf (err, "out of memory");
    return s;
fail:
    dws_hostlist_destroy (hl);
    return NULL;
}

/* The names of `hosts` minus those of `minus` (NULL = none) as an array. */
json_t *hosts_minus (const char *hosts, const char *minus, dws_error_t *err)
{
    struct dws_hostlist *a = dws_hostlist_decode (hosts ? hosts : "", err);
    struct dws_hostlist *b = dws_hostlist_decode (minus ? minus : "", err);
    struct dws_hostlist *d = NULL;
    json_t *out = NULL;
    if (a && b && (d = dws_hostlist_difference (a, b, err))) {
        char *names = dws_hostlist_names_json (d, err);
        if (names) {
            out = json_loads (names, 0, NULL);
            free (names);
        }
    }
    dws_hostlist_destroy (a);
    dws_hostlist_destroy (b);
    dws_hostlist_destroy (d);
    return out;
}
