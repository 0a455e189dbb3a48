/* token.h - the one namespace of the tokens the engine puts on its
 * actions, "<kind>:..." (the kinds and their shapes: state.h TOKEN_KINDS),
 * and of its timers' keys, "<timer>:<jobid>" (state.h TIMER_KINDS): every
 * one is written here and parsed here, once.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_ENGINE_TOKEN_H
#define DWS_ENGINE_TOKEN_H

#include "engine/state.h"
#include "util/error.h"

/* A token read (token_parse). */
struct token {
    int kind;             /* enum token_kind, or -1: a word no kind has, read as
                           * a job's "<word>:<jobid>" (its answer is logged) */
    char word[64];        /* the kind's word as written */
    json_int_t n;         /* TOKEN_JOB: the job's id; TOKEN_REQUEST, TOKEN_STEP:
                           * the request's sequence; TOKEN_HEALTH: the batch's */
    enum drain_step step; /* TOKEN_STEP: the step; else DRAIN_STEP_COUNT */
    const char *rabbit;   /* TOKEN_STEP: the rabbit (in the text parsed); else NULL */
};

const char *token_kind_name (enum token_kind kind);
enum token_shape token_kind_shape (enum token_kind kind);
/* The kind of the first len bytes of s, or -1 for none. */
int token_kind_parse (const char *s, size_t len);
const char *token_step_name (enum drain_step step);

/* The room a token's text takes, its NUL with it: "<kind>:<seq>:<step>:<rabbit>"
 * at its longest (a rabbit's name, a Kubernetes name, is at most 63). */
#define TOKEN_SIZE 96

/* "<kind>:<jobid>" (a TOKEN_JOB kind) */
const char *token_for (char *buf, size_t len, enum token_kind kind, struct job *job);
/* "<kind>:<seq>" (a TOKEN_REQUEST kind) */
const char *token_for_request (char *buf, size_t len, enum token_kind kind, json_int_t seq);
/* "<kind>:<seq>:<step>:<rabbit>" (a TOKEN_STEP kind) */
const char *token_for_step (char *buf, size_t len, enum token_kind kind, json_int_t seq,
                            enum drain_step step, const char *rabbit);

/* A job's timer key, "<timer>:<jobid>" (state.h TIMER_KINDS): its word,
 * the key, and the key read (-1 when it is none: an unknown word, no ':',
 * a job id that is not a decimal below 2^63). */
const char *token_timer_name (enum timer_kind kind);
const char *token_for_timer (char *buf, size_t len, enum timer_kind kind, json_int_t id);
int token_timer_parse (const char *key, enum timer_kind *kind, json_int_t *id);

/* Read s as its kind's shape says (a word no kind has: as a job's).  -1
 * with "unknown token '<s>'" when it is not one: no ':', a word of 64
 * bytes or more, a number that is not a decimal of at most 20 digits
 * below 2^63, a step no DRAIN_STEPS has, an empty rabbit. */
int token_parse (const char *s, struct token *t, dws_error_t *err);

#endif /* !DWS_ENGINE_TOKEN_H */
