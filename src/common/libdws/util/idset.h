/* idset.h - sets of non-negative integers in Flux RFC 22 form.
 *
 * Text form: comma-separated ids and inclusive ranges, optionally in
 * brackets: "0-3,7", "[1,5-6]", "" (empty).  Decoding accepts ids in any
 * order and with repeats; the set is kept as sorted disjoint ranges, so
 * "0-11135" costs one range however many ids it holds.  Ids are < UINT_MAX.
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_IDSET_H
#define DWS_IDSET_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

#define DWS_IDSET_INVALID ((unsigned int)-1)

/* Largest number of ids dws_idset_expand() will materialise. */
#define DWS_IDSET_EXPAND_MAX (1u << 26)

enum {
    DWS_IDSET_BRACKETS = 1, /* encode with [] when the set has more than one id */
    DWS_IDSET_NORANGE = 2,  /* encode every id, no a-b ranges */
};

struct dws_idset;

struct dws_idset *dws_idset_create (void);
void dws_idset_destroy (struct dws_idset *ids);
struct dws_idset *dws_idset_copy (const struct dws_idset *ids);

/* Parse s.  Errors name the offending token, e.g.
 * "invalid range '3-1' (end before start)", "invalid id '4294967295' (ids
 * are at most 4294967294)", "invalid idset '1,,2': empty element".  Ids in
 * any order, repeats and leading zeros are accepted (RFC 22 asks encoders
 * for ascending ids without leading zeros; flux-core's decoder accepts
 * them too).
 */
struct dws_idset *dws_idset_decode (const char *s, dws_error_t *err);

/* malloc'd text ("" for the empty set); NULL on ENOMEM, or with errno
 * E2BIG for DWS_IDSET_NORANGE on a set of more than DWS_IDSET_EXPAND_MAX ids.
 */
char *dws_idset_encode (const struct dws_idset *ids, int flags);

/* Add id / lo..hi; -1 with errno EINVAL for lo > hi or DWS_IDSET_INVALID,
 * ENOMEM.  remove: -1 on ENOMEM (splitting a range).
 */
int dws_idset_add (struct dws_idset *ids, unsigned int id);
int dws_idset_add_range (struct dws_idset *ids, unsigned int lo, unsigned int hi);
int dws_idset_remove (struct dws_idset *ids, unsigned int id);

size_t dws_idset_count (const struct dws_idset *ids);
bool dws_idset_contains (const struct dws_idset *ids, unsigned int id);
bool dws_idset_equal (const struct dws_idset *a, const struct dws_idset *b);

/* Iteration: first id, next id after `prev`, last id; DWS_IDSET_INVALID
 * when there is none.
 */
unsigned int dws_idset_first (const struct dws_idset *ids);
unsigned int dws_idset_next (const struct dws_idset *ids, unsigned int prev);
unsigned int dws_idset_last (const struct dws_idset *ids);

/* New sets (NULL on ENOMEM), computed range by range: O(ranges). */
struct dws_idset *dws_idset_union (const struct dws_idset *a, const struct dws_idset *b);
struct dws_idset *dws_idset_intersect (const struct dws_idset *a, const struct dws_idset *b);
struct dws_idset *dws_idset_difference (const struct dws_idset *a, const struct dws_idset *b);

/* Decode s into a malloc'd ascending array of its ids (count in *count);
 * a set larger than DWS_IDSET_EXPAND_MAX is an error.
 */
unsigned int *dws_idset_expand (const char *s, size_t *count, dws_error_t *err);

/* Encode n ascending, unique ids as ranges without brackets (malloc'd). */
char *dws_idset_compress (const unsigned int *ids, size_t n);

/* cffi entry points: text in, normalised text out (malloc'd). */
char *dws_idset_normalize (const char *s, int flags, dws_error_t *err);
char *dws_idset_op (const char *a, const char *b, char op, dws_error_t *err);

#endif /* !DWS_IDSET_H */
