/* datain.h - a pre-staged job's DataIn bounded by its progress, not by
 * a clock (datain.c; doc/guide/prestage.rst, "Data movement that is
 * watched").
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_ENGINE_DATAIN_H
#define DWS_ENGINE_DATAIN_H

#include "engine/advance.h"
#include "engine/state.h"

/* Seconds between two reads of a DataIn's progress for a stall bound of
 * `stall` seconds: a quarter of it, between 0.1 and 30. */
double datain_read_every (double stall);

/* DataIn is asked for a pre-staged job (or taken up after a restart):
 * its facts start from now, and its progress is read every
 * datain_read_every () while rabbit.datain_stall_timeout is set. */
void datain_begin (struct dws_engine *e, struct job *job);

/* STEP_DATAIN_READ: list the job's NnfDataMovements (its answer:
 * datain_on_list, NEWS_DATAIN_READ). */
void datain_read (struct dws_engine *e, struct job *job, const struct step *st);

/* The list answered: the progress facts recorded on the job. */
void datain_on_list (struct dws_engine *e, enum token_kind kind, struct job *job,
                     json_t *event);

/* STEP_DATAIN_WATCH: it moved, or not for long yet: read again later. */
void datain_watch (struct dws_engine *e, struct job *job, const struct step *st);

/* STEP_DATAIN_STALLED: nothing moved for rabbit.datain_stall_timeout:
 * the job fails ("dws-timeout"), before any node is spent. */
void datain_stalled (struct dws_engine *e, struct job *job, const struct step *st);

/* What `flux dws job` shows of it: {"percent", "moved", "left", "last"}
 * (percent over its data movements, seconds since it last moved, an
 * estimate of the seconds left or absent, the slowest one's dcp line),
 * or NULL when it is not watched. */
json_t *datain_view (const struct dws_engine *e, const struct job *job);

#endif /* !DWS_ENGINE_DATAIN_H */
