/* job.c - the job table: a hash of the jobs the engine tracks.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/decider/phase.h"
#include "engine/shapes/act.h"
#include "engine/shapes/wfview.h"
#include "job.h"
#include "rabbits.h"
#include "wire/action.h"
#include "wire/jobwire.h"

static size_t bucket (struct dws_engine *e, json_int_t id)
{
    uint64_t h = (uint64_t)id * 0x9E3779B97F4A7C15ULL;
    return (size_t)(h >> 20) & (e->nbuckets - 1);
}

struct job *job_lookup (struct dws_engine *e, json_int_t id)
{
    for (struct job *j = e->table[bucket (e, id)]; j; j = j->next)
        if (j->id == id)
            return j;
    return NULL;
}

static void grow (struct dws_engine *e)
{
    size_t old = e->nbuckets;
    struct job **ot = e->table;
    struct job **nt = calloc (old * 2, sizeof (*nt));
    if (!nt)
        return; /* keep the longer chains */
    e->table = nt;
    e->nbuckets = old * 2;
    for (size_t i = 0; i < old; i++) {
        struct job *j = ot[i];
        while (j) {
            struct job *next = j->next;
            size_t b = bucket (e, j->id);
            j->next = nt[b];
            nt[b] = j;
            j = next;
        }
    }
    free (ot);
}

struct job *job_create (struct dws_engine *e, json_int_t id)
{
    struct job *j = calloc (1, sizeof (*j));
    if (!j)
        return NULL;
    j->id = id;
    snprintf (j->name, sizeof (j->name), "fluxjob-%" JSON_INTEGER_FORMAT, id);
    /* j->phase: PHASE_NONE (0, calloc) until decide.c moves it */
    j->forced = WF_NONE;
    j->gib = -1;
    limits_held_uncount (&j->lim.held);
    j->lim.recounted = -1; /* no admit pass counted it yet */
    j->prestage_asked = -1;
    j->tc_since = -1;
    j->breakdowns = json_object ();
    j->create_msgids = json_array ();
    j->view_msgids = json_array ();
    if (!j->breakdowns || !j->create_msgids || !j->view_msgids) {
        json_decref (j->breakdowns);
        json_decref (j->create_msgids);
        json_decref (j->view_msgids);
        free (j);
        return NULL;
    }
    if (e->njobs + 1 > e->nbuckets)
        grow (e);
    e->phase_jobs[PHASE_NONE]++;
    size_t b = bucket (e, id);
    j->next = e->table[b];
    e->table[b] = j;
    e->njobs++;
    return j;
}

static void job_free (struct job *j)
{
    while (j->told) {
        struct told *t = j->told;
        j->told = t->next;
        job_told_free (t);
    }
    json_decref (j->directives);
    json_decref (j->resources);
    free (j->username);
    free (j->bank);
    json_decref (j->gib_types);
    free (j->project);
    free (j->lim.why);
    json_decref (j->wf);
    json_decref (j->create_msgids);
    json_decref (j->view_msgids);
    json_decref (j->dms_kept);
    json_decref (j->record);
    json_decref (j->dw_parsed);
    json_decref (j->dw_parsed_of);
    json_decref (j->why);
    json_decref (j->breakdowns);
    free (j->note);
    free (j->hosts);
    json_decref (j->reserved);
    json_decref (j->ssd_asks);
    json_decref (j->held);
    json_decref (j->ps.avoid);
    json_decref (j->ps.counts);
    free (j->ps.hosts);
    free (j->ps.weighed.unfit);
    free (j->failed);
    free (j->wf_token);
    free (j->postrun_why);
    free (j);
}

void job_told_free (struct told *t)
{
    if (!t)
        return;
    free ((void *)t->type); /* copies (job_tell) */
    free ((void *)t->why);
    free ((void *)t->log);
    json_decref (t->event);
    json_decref (t->items);
    json_decref (t->nodes);
    json_decref (t->msgid);
    free (t->failed);
    free (t->hosts);
    free (t);
}

int job_tell (struct job *job, enum news news, struct told *what)
{
    struct told *t = calloc (1, sizeof (*t));
    if (!t) {
        /* what is taken goes either way: the caller holds nothing after */
        free (what->failed);
        what->failed = NULL;
        free (what->hosts);
        what->hosts = NULL;
        return -1;
    }
    t->news = news;
    t->type = dws_strdup_null (what->type);
    t->why = dws_strdup_null (what->why);
    t->log = dws_strdup_null (what->log);
    t->event = json_incref (what->event);
    t->items = json_incref (what->items);
    t->nodes = json_incref (what->nodes);
    t->msgid = json_incref (what->msgid);
    t->run_started = what->run_started;
    t->failed = what->failed;
    what->failed = NULL;
    t->hosts = what->hosts;
    what->hosts = NULL;
    struct told **tail = &job->told;
    while (*tail)
        tail = &(*tail)->next;
    *tail = t;
    return 0;
}

struct told *job_told_take (struct job *job, enum news news)
{
    struct told **pp = &job->told;
    while (*pp && (*pp)->news != news)
        pp = &(*pp)->next;
    struct told *t = *pp;
    if (t) {
        *pp = t->next;
        t->next = NULL;
    }
    return t;
}

void job_forget (struct dws_engine *e, struct job *job)
{
    for (int k = 0; k < T_NKINDS; k++)
        act_timer_stop (e, job, (enum timer_kind)k);
    if (e->actions && job->released && !job->dataout_ended)
        act_dataout_end (e, job->id, false, "the Workflow was gone before DataOut ended");
    if (e->actions)
        rabbits_job_gone (e, job);
    if (job->ssd_asks && !job->hosts) /* the room a pick left for it is free */
        e->room_changed = true;
    if (job->ps.counts)
        e->pinned--;
    size_t i;
    json_t *msgid;
    json_array_foreach (job->view_msgids, i, msgid) /* dws.job: its record is in the KVS now */
        act_respond_error (e, msgid, ENOENT,
                           "dws.job: the job's Workflow is gone; its record is in the KVS");
    struct job **pp = &e->table[bucket (e, job->id)];
    while (*pp && *pp != job)
        pp = &(*pp)->next;
    if (*pp) {
        *pp = job->next;
        e->njobs--;
        e->phase_jobs[job->phase]--;
    }
    job_free (job);
}

void job_set_wf (struct job *job, json_t *wf)
{
    json_t *old = job->wf;
    job->wf = json_incref (wf);
    json_decref (old);
    wfview_parse (job->wf, &job->view);
}

static void set_string (char **field, json_t *v)
{
    const char *s = json_string_value (v);
    free (*field);
    *field = s && *s ? strdup (s) : NULL;
}

void job_set_account (struct job *job, json_t *bank, json_t *project)
{
    set_string (&job->bank, bank);
    set_string (&job->project, project);
}

void job_set_reserved (struct job *job, json_t *R)
{
    json_t *r = dws_lustre_reserved_of_R (R, NULL);
    json_decref (job->reserved);
    job->reserved = r && json_object_size (r) ? r : NULL;
    if (!job->reserved)
        json_decref (r);
}

int job_table_init (struct dws_engine *e)
{
    e->nbuckets = 64;
    e->table = calloc (e->nbuckets, sizeof (*e->table));
    return e->table ? 0 : -1;
}

void job_table_destroy (struct dws_engine *e)
{
    for (size_t i = 0; i < e->nbuckets; i++) {
        struct job *j = e->table[i];
        while (j) {
            struct job *next = j->next;
            job_free (j);
            j = next;
        }
    }
    free (e->table);
    e->table = NULL;
    e->nbuckets = 0;
}

bool job_id_from_name (const char *name, json_int_t *id)
{
    if (!name || strncmp (name, "fluxjob-", 8) != 0)
        return false;
    const char *p = name + 8;
    if (*p < '0' || *p > '9')
        return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull (p, &end, 10);
    if (errno || *end || v > (unsigned long long)INT64_MAX)
        return false;
    *id = (json_int_t)v;
    return true;
}
