/* Names by number: see name_table.h. */
#include <stdlib.h>
#include <string.h>

#include "host/out/name_table.h"

/* FNV-1a, 32 bits */
static uint32_t hash(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static int grow_slots(struct ntab *t)
{
	uint32_t n = t->nslot ? t->nslot * 2 : 256;
	uint32_t *slot = calloc(n, sizeof(*slot));
	if (!slot)
		return -1;
	for (uint32_t h = 0; h < t->n; h++) {
		uint32_t i = hash(t->s[h]) & (n - 1);
		while (slot[i])
			i = (i + 1) & (n - 1);
		slot[i] = h + 1;
	}
	free(t->slot);
	t->slot = slot;
	t->nslot = n;
	return 0;
}

uint32_t ntab_add(struct ntab *t, const char *s)
{
	if ((t->n + 1) * 2 > t->nslot && (t->nslot >= 0x80000000u || grow_slots(t)))
		return NTAB_NONE;
	uint32_t i = hash(s) & (t->nslot - 1);
	for (; t->slot[i]; i = (i + 1) & (t->nslot - 1))
		if (!strcmp(t->s[t->slot[i] - 1], s))
			return t->slot[i] - 1;
	if (t->n == t->cap) {
		uint32_t c = t->cap ? t->cap * 2 : 128;
		char **a = realloc(t->s, c * sizeof(*a));
		if (!a)
			return NTAB_NONE;
		t->s = a;
		t->cap = c;
	}
	char *copy = strdup(s);
	if (!copy)
		return NTAB_NONE;
	t->s[t->n] = copy;
	t->slot[i] = ++t->n;
	return t->n - 1;
}

void ntab_free(struct ntab *t)
{
	for (uint32_t h = 0; h < t->n; h++)
		free(t->s[h]);
	free(t->s);
	free(t->slot);
	memset(t, 0, sizeof(*t));
}
