/* SPDX-License-Identifier: LGPL-3.0-or-later */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hostindex.h"

struct slot {
    const char *name; /* NULL = empty */
    size_t value;
    uint32_t hash;
};

struct hostindex {
    struct slot *slots;
    size_t mask;      /* capacity - 1 (capacity is a power of 2) */
    size_t count;
};

static uint32_t hash_name (const char *s)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 16777619u;
    }
    return h;
}

static size_t capacity_for (size_t n)
{
    size_t cap = 16;
    while (cap < n * 2) /* load factor <= 1/2 */
        cap <<= 1;
    return cap;
}

struct hostindex *dws_hostindex_create (size_t expected)
{
    struct hostindex *idx = calloc (1, sizeof (*idx));
    size_t cap = capacity_for (expected);
    if (!idx || !(idx->slots = calloc (cap, sizeof (struct slot)))) {
        free (idx);
        return NULL;
    }
    idx->mask = cap - 1;
    return idx;
}

void dws_hostindex_destroy (struct hostindex *idx)
{
    if (idx) {
        free (idx->slots);
        free (idx);
    }
}

static struct slot *lookup (const struct hostindex *idx, const char *name, uint32_t h)
{
    size_t i = h & idx->mask;
    for (;;) {
        struct slot *s = &idx->slots[i];
        if (!s->name || (s->hash == h && strcmp (s->name, name) == 0))
            return s;
        i = (i + 1) & idx->mask;
    }
}

static int grow (struct hostindex *idx)
{
    size_t cap = (idx->mask + 1) * 2;
    struct slot *old = idx->slots;
    size_t oldcap = idx->mask + 1;
    struct slot *slots = calloc (cap, sizeof (struct slot));

    if (!slots)
        return -1;
    idx->slots = slots;
    idx->mask = cap - 1;
    for (size_t i = 0; i < oldcap; i++) {
        if (old[i].name)
            *lookup (idx, old[i].name, old[i].hash) = old[i];
    }
    free (old);
    return 0;
}

long dws_hostindex_insert (struct hostindex *idx, const char *name, size_t value)
{
    uint32_t h = hash_name (name);
    struct slot *s = lookup (idx, name, h);

    if (s->name)
        return (long)s->value;
    if ((idx->count + 1) * 2 > idx->mask + 1) {
        if (grow (idx) < 0)
            return -2;
        s = lookup (idx, name, h);
    }
    s->name = name;
    s->value = value;
    s->hash = h;
    idx->count++;
    return -1;
}

long dws_hostindex_find (const struct hostindex *idx, const char *name)
{
    const struct slot *s = lookup (idx, name, hash_name (name));
    return s->name ? (long)s->value : -1;
}

size_t dws_hostindex_count (const struct hostindex *idx)
{
    return idx->count;
}
