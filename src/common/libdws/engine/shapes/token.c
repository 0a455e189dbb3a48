/* token.c - every token the engine puts on an action, written and parsed
 * (token.h; the kinds: state.h TOKEN_KINDS).
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "token.h"

static const struct {
    const char *name;
    enum token_shape shape;
} token_kinds[TOK_COUNT] = {
#define TOKEN_KIND_ROW(id, name, shape) [TOK_##id] = {name, shape},
    TOKEN_KINDS (TOKEN_KIND_ROW)
#undef TOKEN_KIND_ROW
};

static const char *const token_step_names[DRAIN_STEP_COUNT] = {
#define DRAIN_STEP_NAME(id, name) [DRAIN_STEP_##id] = name,
    DRAIN_STEPS (DRAIN_STEP_NAME)
#undef DRAIN_STEP_NAME
};

static const char *const token_timer_names[T_NKINDS] = {
#define TIMER_NAME(id, word) [T_##id] = word,
    TIMER_KINDS (TIMER_NAME)
#undef TIMER_NAME
};

const char *token_kind_name (enum token_kind kind)
{
    return kind < TOK_COUNT ? token_kinds[kind].name : "?";
}

enum token_shape token_kind_shape (enum token_kind kind)
{
    return kind < TOK_COUNT ? token_kinds[kind].shape : TOKEN_JOB;
}

int token_kind_parse (const char *s, size_t len)
{
    for (int k = 0; k < TOK_COUNT; k++)
        if (strlen (token_kinds[k].name) == len && !strncmp (s, token_kinds[k].name, len))
            return k;
    return -1;
}

const char *token_step_name (enum drain_step step)
{
    return step < DRAIN_STEP_COUNT ? token_step_names[step] : "?";
}

const char *token_for (char *buf, size_t len, enum token_kind kind, struct job *job)
{
    snprintf (buf, len, "%s:%" JSON_INTEGER_FORMAT, token_kind_name (kind), job->id);
    return buf;
}

const char *token_for_request (char *buf, size_t len, enum token_kind kind, json_int_t seq)
{
    snprintf (buf, len, "%s:%" JSON_INTEGER_FORMAT, token_kind_name (kind), seq);
    return buf;
}

const char *token_for_step (char *buf, size_t len, enum token_kind kind, json_int_t seq,
                            enum drain_step step, const char *rabbit)
{
    snprintf (buf, len, "%s:%" JSON_INTEGER_FORMAT ":%s:%s", token_kind_name (kind), seq,
              token_step_name (step), rabbit);
    return buf;
}

/* The decimal of s[0..len) (no sign, at most 20 digits, below 2^63). */
static bool number (const char *s, size_t len, json_int_t *n)
{
    char buf[24];
    if (len == 0 || len > 20)
        return false;
    for (size_t i = 0; i < len; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    memcpy (buf, s, len);
    buf[len] = '\0';
    errno = 0;
    unsigned long long v = strtoull (buf, NULL, 10);
    if (errno || v > (unsigned long long)INT64_MAX)
        return false;
    *n = (json_int_t)v;
    return true;
}

/* "<seq>:<step>:<rabbit>" */
static bool step_parse (const char *s, struct token *t)
{
    const char *c1 = strchr (s, ':');
    const char *c2 = c1 ? strchr (c1 + 1, ':') : NULL;
    if (!c2 || !number (s, (size_t)(c1 - s), &t->n) || !c2[1])
        return false;
    for (int k = 0; k < DRAIN_STEP_COUNT; k++)
        if (strlen (token_step_names[k]) == (size_t)(c2 - c1 - 1)
            && !strncmp (c1 + 1, token_step_names[k], (size_t)(c2 - c1 - 1))) {
            t->step = (enum drain_step)k;
            t->rabbit = c2 + 1;
            return true;
        }
    return false;
}

const char *token_timer_name (enum timer_kind kind)
{
    return kind < T_NKINDS ? token_timer_names[kind] : "?";
}

const char *token_for_timer (char *buf, size_t len, enum timer_kind kind, json_int_t id)
{
    snprintf (buf, len, "%s:%" JSON_INTEGER_FORMAT, token_timer_name (kind), id);
    return buf;
}

int token_timer_parse (const char *key, enum timer_kind *kind, json_int_t *id)
{
    const char *colon = key ? strchr (key, ':') : NULL;
    if (!colon || !number (colon + 1, strlen (colon + 1), id))
        return -1;
    for (int k = 0; k < T_NKINDS; k++)
        if (strlen (token_timer_names[k]) == (size_t)(colon - key)
            && !strncmp (key, token_timer_names[k], (size_t)(colon - key))) {
            *kind = (enum timer_kind)k;
            return 0;
        }
    return -1;
}

int token_parse (const char *s, struct token *t, dws_error_t *err)
{
    const char *colon = s ? strchr (s, ':') : NULL;
    memset (t, 0, sizeof (*t));
    t->step = DRAIN_STEP_COUNT;
    if (!colon || colon == s || (size_t)(colon - s) >= sizeof (t->word))
        goto bad;
    memcpy (t->word, s, (size_t)(colon - s));
    t->word[colon - s] = '\0';
    t->kind = token_kind_parse (s, (size_t)(colon - s));
    const char *rest = colon + 1;
    switch (t->kind < 0 ? TOKEN_JOB : token_kinds[t->kind].shape) {
    case TOKEN_JOB:
    case TOKEN_REQUEST:
    case TOKEN_HEALTH:
        if (!number (rest, strlen (rest), &t->n))
            goto bad;
        return 0;
    case TOKEN_STEP:
        if (!step_parse (rest, t))
            goto bad;
        return 0;
    }
bad:
    return dws_errorf (err, "unknown token '%s'", s ? s : "");
}
