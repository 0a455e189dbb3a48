/* explain.h - a plain sentence for the DWS and nnf-sos failures a job's
 * owner meets.
 *
 * DWS words its failures for its developers ("DW Directive 0: User error:
 * PersistentStorageInstance 'scratch' not found"), and flux-dws adds its
 * own ("File system creation took too long").  A job-script author needs
 * to know what happened and what to do.  One table maps each known
 * failure text to such a sentence.
 *
 * An exception note stays the reference's, byte for byte (scripts wait for
 * "note=skipping rabbit data movement"), so the sentence travels beside
 * it: the engine and the jobtap plugin post a DWS_EXPLAIN_EVENT entry
 * {"type": T, "note": N, "explanation": S} to the job's eventlog right
 * after the exception, and the engine keeps the same object (with its
 * "time") under the job's KVS key DWS_EXPLAIN_KVS_KEY.  Messages that are
 * no exception note (flux dws check's verdict, an ingest error) still get
 * the sentence appended (dws_explain_note):
 *
 *   DWS workflow interactions failed: admission webhook "vworkflow.kb.io"
 *   denied the request: argument 'type' invalid string 'zfs' -- 'zfs' is
 *   not a rabbit file system type. Use type=xfs, gfs2, lustre or raw.
 *
 * A text no row knows passes through unchanged.
 *
 * Patterns (tiny on purpose):
 *   - literal text is matched case-sensitively anywhere in the text;
 *   - `*` matches any run of characters, the empty one too;
 *   - `{}` matches a non-empty run and captures it (the first `{}` only).
 * Of all matches the leftmost is taken, each literal at its first place
 * after what precedes it: so a `{}` between two literals captures up to
 * the first occurrence of the next one, a `{}` that ends the pattern takes
 * the rest of the text (one that starts it, the text up to the first
 * literal), and a `*` next to a `{}` is captured with it.  A pattern cannot
 * match a literal `*` or `{}`.  Matching never goes back: it costs at
 * most O(length of text * length of pattern).
 *
 * Sentences: one or two short sentences saying what happened and what to
 * do; `{}` (at most once) is replaced by the capture, cut to
 * DWS_EXPLAIN_CAPTURE_MAX bytes (at a UTF-8 character start, "..." added).
 * The first row that matches wins: rows run from specific to general.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_EXPLAIN_H
#define DWS_EXPLAIN_H

#include <stddef.h>
#include "jobkvs.h"

/* The longest sentence, with its NUL (a buffer this size never cuts one). */
#define DWS_EXPLAIN_MAX 512

/* The most bytes of a capture a sentence shows. */
#define DWS_EXPLAIN_CAPTURE_MAX 200

/* What joins a message and its sentence (dws_explain_note). */
#define DWS_EXPLAIN_SEPARATOR " -- "

/* The job eventlog entry that carries an exception note's sentence: a name
 * of flux-dws' own, none of the reference's (wire-compatible means its
 * events keep their meaning; ours travel beside them).
 */
#define DWS_EXPLAIN_EVENT "dws-explanation"

/* The job's KVS key (RFC 16 data.*) that keeps the sentence of the
 * exception the engine raised, for `flux dws job` after the job is gone.
 */
#define DWS_EXPLAIN_KVS_KEY DWS_JOBKVS_EXPLANATION

/* DWS_EXPLAIN_EVENT and DWS_EXPLAIN_KVS_KEY, for Python (one spelling). */
const char *dws_explain_event (void);
const char *dws_explain_kvs_key (void);

/* The sentence for a failure text, written into buf (cut to fit size, at
 * a UTF-8 character start) and returned; NULL when no row matches, or on
 * a NULL text or buf or a zero size.
 */
const char *dws_explain (const char *text, char *buf, size_t size);

/* Write "<note> -- <sentence>" into buf and return 1 when a row matches
 * the note (for messages a person reads whole, never an exception note); else copy the note unchanged and return 0.  A note that
 * already carries a sentence of the table after " -- " is copied
 * unchanged (explaining twice appends nothing).  When buf cannot hold the
 * note and its sentence, the note alone is copied (cut, at a UTF-8
 * character start, only when buf cannot hold even that) and 0 returned.
 * -1 on a NULL note or buf or a zero size.
 */
int dws_explain_note (const char *note, char *buf, size_t size);

/* The table, for tests and documentation: its row count, and row i's
 * short name, pattern, sentence (with its `{}`) and an example failure
 * text the row matches.  NULL for i out of range.
 */
int dws_explain_count (void);
const char *dws_explain_row_name (int i);
const char *dws_explain_row_pattern (int i);
const char *dws_explain_row_sentence (int i);
const char *dws_explain_row_example (int i);

/* The name of the row for a persistentdw refused because the storage is
 * another user's and not shared (nnf-sos #609, #616).
 */
#define DWS_EXPLAIN_ROW_PERSISTENT_NOT_SHARED "persistent-not-shared"

/* 1 when the first row that matches text is the row named `name`, else 0
 * (also on NULL arguments).
 */
int dws_explain_is (const char *text, const char *name);

/* The line the engine adds under the persistent-not-shared sentence when
 * it knows the storage: who owns the persistent storage `name` (user
 * name `user` and uid; user may be NULL) and how that owner shares it
 * (`flux dws persistent share NAME`), written into buf (cut to fit, at a
 * UTF-8 character start) and returned; NULL on a NULL name or buf, a zero
 * size, or a negative uid.  The row's own sentence is left as it is
 * (scripts match it whole), so this travels as a line of its own after
 * it:
 *   'proj' belongs to alice (uid 1001). That user (or the instance owner)
 *   can share it with: flux dws persistent share proj
 */
const char *dws_explain_persistent_owner (const char *name, long long uid, const char *user,
                                          char *buf, size_t size);

/* Match one pattern (the language above) against text: 1 and the first
 * capture (cut to fit capsize, NUL-terminated; empty without a `{}`) when
 * it matches, 0 when not, -1 on NULL arguments.  cap may be NULL.
 */
int dws_explain_match (const char *pattern, const char *text, char *cap, size_t capsize);

#endif /* !DWS_EXPLAIN_H */
