/* advance.c - the one call site of the decider (advance.h).  (Not
 * `advance`: the C library has a function of that name, regexp.h's.)
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <stdlib.h>

#include "advance.h"

void advance_job (struct dws_engine *e, struct job *job, enum decide_on on, int arg,
                  struct input *in)
{
    struct input none = {0};
    if (!in)
        in = &none;
    struct step st = decide (e, job, on, arg);
    if (st.done != WF_NONE)
        e->verbs->done (e, job, st.done);
    if (e->verbs->step[st.kind])
        e->verbs->step[st.kind](e, job, &st, in);
    json_decref (in->annotations);
    in->annotations = NULL;
    free (in->failed);
    in->failed = NULL;
    free (in->hosts);
    in->hosts = NULL;
    json_decref (in->directives);
    in->directives = NULL;
}
