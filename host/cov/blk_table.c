/* Distinct blocks: see blk_table.h. */
#include <stdlib.h>
#include <string.h>

#include "host/cov/blk_table.h"

_Static_assert(sizeof(struct blk_entry) == 64, "a blk_entry is one cache line");

static bool grow(struct blk_table *t)
{
	size_t cap = t->cap ? t->cap * 2 : 4096;
	if (cap > SIZE_MAX / sizeof(struct blk_entry))
		return false;
	struct blk_entry *e = aligned_alloc(64, cap * sizeof(*e));
	if (!e)
		return false;
	memset(e, 0, cap * sizeof(*e));
	struct blk_table n = { e, cap, t->n };
	for (size_t i = 0; i < t->cap; i++) {
		if (!t->e[i].used)
			continue;
		size_t k = blk_table_slot(&n, t->e[i].ip, t->e[i].size, t->e[i].mode);
		while (e[k].used)
			k = (k + 1) & (cap - 1);
		e[k] = t->e[i];
	}
	free(t->e);
	*t = n;
	return true;
}

struct blk_entry *blk_table_add(struct blk_table *t, uint64_t ip, uint16_t size, uint8_t mode,
				bool *fresh)
{
	*fresh = false;
	if ((t->n + 1) * 2 > t->cap && !grow(t))
		return NULL;
	size_t k = blk_table_slot(t, ip, size, mode);
	while (t->e[k].used)
		k = (k + 1) & (t->cap - 1);
	struct blk_entry *e = &t->e[k];
	*e = (struct blk_entry){ .ip = ip, .size = size, .mode = mode, .used = true, .tag = -1 };
	t->n++;
	*fresh = true;
	return e;
}

void blk_table_free(struct blk_table *t)
{
	free(t->e);
	t->e = NULL;
	t->cap = t->n = 0;
}
