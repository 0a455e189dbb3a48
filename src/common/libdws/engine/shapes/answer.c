/* answer.c - reading a Kubernetes answer (a k8s-result event).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include "answer.h"

struct k8s_answer answer_of (json_t *event)
{
    struct k8s_answer a = {
        .ok = json_is_true (json_object_get (event, "ok")),
        .code = (int)json_integer_value (json_object_get (event, "code")),
        .obj = json_object_get (event, "object"),
    };
    a.gone = !a.ok && a.code == 404;
    return a;
}

const char *answer_message (json_t *event)
{
    const char *m = json_string_value (json_object_get (event, "message"));
    return m && *m ? m : "no answer from Kubernetes";
}
