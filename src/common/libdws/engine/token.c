/* token.c - the tokens that route a Kubernetes answer (or a
 * job-info read) back to its job and handler: "<kind>:<jobid>".
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <stdio.h>
#include <string.h>

#include "token.h"

static const char *const token_kind_names[TOK_COUNT] = {
#define TOKEN_KIND_NAME(id, name) [TOK_##id] = name,
    TOKEN_KINDS (TOKEN_KIND_NAME)
#undef TOKEN_KIND_NAME
};

const char *token_kind_name (enum token_kind kind)
{
    return kind < TOK_COUNT ? token_kind_names[kind] : "?";
}

int token_kind_parse (const char *s, size_t len)
{
    for (int k = 0; k < TOK_COUNT; k++)
        if (strlen (token_kind_names[k]) == len && !strncmp (s, token_kind_names[k], len))
            return k;
    return -1;
}

const char *token_for (char *buf, size_t len, enum token_kind kind, struct job *job)
{
    snprintf (buf, len, "%s:%" JSON_INTEGER_FORMAT, token_kind_name (kind), job->id);
    return buf;
}
