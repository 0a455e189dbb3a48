/* answer.h - reading a Kubernetes answer.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_ENGINE_ANSWER_H
#define DWS_ENGINE_ANSWER_H

#include <stdbool.h>
#include <jansson.h>

/* A Kubernetes answer (a k8s-result event): did it succeed, its HTTP
 * code, the object it carries (or NULL); gone = 404.
 */
struct k8s_answer {
    bool ok;
    int code;
    json_t *obj;
    bool gone;
};
struct k8s_answer answer_of (json_t *event);
/* A Kubernetes answer's message, or "no answer from Kubernetes". */
const char *answer_message (json_t *event);

#endif /* !DWS_ENGINE_ANSWER_H */
