/* hostlist.h - ordered lists of host names in Flux RFC 29 form.
 *
 * Text form: comma-separated host names and bracketed numeric ranges,
 * "elcap[1001-1016,1020],login1,rzadams[01-08]".  Zero padding is kept
 * ("[01-08]" gives rzadams01 .. rzadams08); each bracket element takes the
 * width of its first number ("[005,4]" is 005 and 4, as in flux-core), a
 * number that outgrows it prints in full ("[98-100]"), and an end padded
 * differently from its start ("[1-05]") is an error.  Text after the
 * bracket is a suffix: "foo[0-2]-eth0" is foo0-eth0, foo1-eth0, foo2-eth0,
 * kept as names of their own (encoded spelled out, like flux-core).  One
 * bracket per host expression.  A list keeps its order and may hold a host
 * more than once, as in flux-core; dws_hostlist_uniq() and
 * dws_hostlist_sort() normalise it.
 *
 * Names are printable ASCII other than "[ ] ," (RFC 29).  Stricter than
 * flux-core: white space, other bytes, empty names ("a,,b") and leading or
 * trailing commas are errors, not skipped or passed through.
 *
 * Internally a list is a run of ranges (prefix, lo-hi, width), so
 * "elcap[1001-12136]" is one range: decoding, counting and encoding cost
 * the number of ranges, not hosts.  Encoding merges consecutive numbers of
 * the same prefix and width and groups neighbouring ranges of one prefix in
 * one bracket, like flux-core's hostlist_encode().
 *
 * SPDX-License-Identifier: LGPL-3.0-or-later
 */
#ifndef DWS_HOSTLIST_H
#define DWS_HOSTLIST_H

#include <stddef.h>

#include "error.h"

/* Largest number of hosts one list may hold.  A range costs the same
 * whatever its size, so "el[1-12132137]" is one range of a few bytes.
 */
#define DWS_HOSTLIST_MAX (1L << 24)

/* Largest number of hosts one decode may take from ranges followed by a
 * suffix ("foo[1-4]-eth0"): each such host is kept as a name of its own
 * (about 80 bytes), so "el[1-12132137]x" would cost 1 GB.  Counted over
 * the whole text decoded; past it the decode fails, before any is made,
 * with "hostlist too large: 'ITEM' has a range followed by a suffix, which
 * names each host in full: N such hosts (at most 1048576)".
 */
#define DWS_HOSTLIST_SUFFIXED_MAX (1L << 20)

struct dws_hostlist;

struct dws_hostlist *dws_hostlist_create (void);
void dws_hostlist_destroy (struct dws_hostlist *hl);
struct dws_hostlist *dws_hostlist_copy (const struct dws_hostlist *hl);

/* Parse s.  Errors quote the offending element, e.g.
 * "invalid range '3-1' in 'foo[3-1]' (end before start)".
 */
struct dws_hostlist *dws_hostlist_decode (const char *s, dws_error_t *err);

/* Append the hosts of s / one host name.  Returns -1 with a message. */
int dws_hostlist_append (struct dws_hostlist *hl, const char *s, dws_error_t *err);
int dws_hostlist_append_host (struct dws_hostlist *hl, const char *host, dws_error_t *err);
int dws_hostlist_append_list (struct dws_hostlist *hl,
                              const struct dws_hostlist *other,
                              dws_error_t *err);

/* malloc'd RFC 29 text ("" when empty); NULL on ENOMEM. */
char *dws_hostlist_encode (const struct dws_hostlist *hl);

size_t dws_hostlist_count (const struct dws_hostlist *hl);

/* Write host n (0-based) into buf (of size len), like snprintf: returns
 * the name's full length; if that is >= len, buf holds a truncated name
 * (nothing if len is 0).  Returns -1 if n >= count.  O(log ranges).
 */
int dws_hostlist_nth (const struct dws_hostlist *hl, size_t n, char *buf, size_t len);

/* Position of the first occurrence of host, or -1.  A list of more than a
 * few ranges builds a lookup index on the first call (see hostfind.h), so
 * each call costs O(log ranges) and nothing more until the list changes.
 * Concurrent finds on an unchanging list are safe; changing a list while
 * another thread reads it is not (as for any libdws object).
 */
long dws_hostlist_find (const struct dws_hostlist *hl, const char *host);

/* New lists (NULL with a message on error):
 * union: a, then the hosts of b not in a; intersect: hosts of a also in b;
 * difference: hosts of a not in b.  All keep a's order, without repeats.
 */
struct dws_hostlist *dws_hostlist_union (const struct dws_hostlist *a,
                                         const struct dws_hostlist *b,
                                         dws_error_t *err);
struct dws_hostlist *dws_hostlist_intersect (const struct dws_hostlist *a,
                                             const struct dws_hostlist *b,
                                             dws_error_t *err);
struct dws_hostlist *dws_hostlist_difference (const struct dws_hostlist *a,
                                              const struct dws_hostlist *b,
                                              dws_error_t *err);

/* uniq: drop repeated hosts, keeping the first (flux-core's hostlist_uniq
 * also sorts: use sort, then uniq).  sort: as flux-core orders hosts --
 * by prefix, plain names before numbered ones, then printed width, then
 * number ("n9,n09,n10"); repeats are kept, side by side.
 */
struct dws_hostlist *dws_hostlist_uniq (const struct dws_hostlist *hl, dws_error_t *err);
struct dws_hostlist *dws_hostlist_sort (const struct dws_hostlist *hl, dws_error_t *err);

/* All names of hl, malloc'd, in a NULL-terminated malloc'd array. */
char **dws_hostlist_names (const struct dws_hostlist *hl, dws_error_t *err);

/* Decode s into names (see dws_hostlist_names); *count set. */
char **dws_hostlist_expand (const char *s, size_t *count, dws_error_t *err);

/* Encode n names (any order, repeats kept) as RFC 29 text (malloc'd). */
char *dws_hostlist_compress (const char **names, size_t n, dws_error_t *err);

void dws_hostlist_free_names (char **names);

/* cffi entry points: the names of hl as a JSON array, or joined by
 * newlines (malloc'd text).
 */
char *dws_hostlist_names_json (const struct dws_hostlist *hl, dws_error_t *err);
char *dws_hostlist_names_text (const struct dws_hostlist *hl, dws_error_t *err);

#endif /* !DWS_HOSTLIST_H */
