/*
 * Address -> function, cached: see symtab.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode/symbols/symtab.h"

static int by_base(const void *a, const void *b)
{
	const struct symimage *x = a, *y = b;
	return x->base < y->base ? -1 : x->base > y->base;
}

static uint32_t hash_key(int32_t image, const char *name)
{
	uint32_t h = 2166136261u ^ (uint32_t)image;
	for (const char *p = name; *p; p++)
		h = (h ^ (uint8_t)*p) * 16777619u;
	return h;
}

static int add_fn(struct symtab *st, int32_t image, const char *name)
{
	if (st->nfn == st->fn_cap) {
		uint32_t cap = st->fn_cap * 2;
		struct symfn *f = realloc(st->fn, cap * sizeof(*f));
		if (!f)
			return -1;
		st->fn = f;
		st->fn_cap = cap;
	}
	st->fn[st->nfn++] = (struct symfn){ image, name };
	return 0;
}

static int rehash(struct symtab *st, uint32_t cap)
{
	uint32_t *h = calloc(cap, sizeof(*h));
	if (!h)
		return -1;
	for (uint32_t id = SYMFN_FIRST; id < st->nfn; id++) {
		uint32_t i = hash_key(st->fn[id].image, st->fn[id].name) & (cap - 1);
		while (h[i])
			i = (i + 1) & (cap - 1);
		h[i] = id + 1;
	}
	free(st->hash);
	st->hash = h;
	st->hash_cap = cap;
	return 0;
}

/* The id of (image, name), added when new; SYMFN_UNKNOWN out of memory. */
static uint32_t intern(struct symtab *st, int32_t image, const char *name)
{
	uint32_t i = hash_key(image, name) & (st->hash_cap - 1);
	while (st->hash[i]) {
		const struct symfn *f = &st->fn[st->hash[i] - 1];
		if (f->image == image && !strcmp(f->name, name))
			return st->hash[i] - 1;
		i = (i + 1) & (st->hash_cap - 1);
	}
	uint32_t id = st->nfn;
	if (add_fn(st, image, name))
		return SYMFN_UNKNOWN;
	st->hash[i] = id + 1;
	if (st->nfn * 2 > st->hash_cap && rehash(st, st->hash_cap * 2))
		return SYMFN_UNKNOWN;
	return id;
}

int symtab_init(struct symtab *st, struct symimage *img, size_t n)
{
	memset(st, 0, sizeof(*st));
	st->img = img;
	st->nimg = n;
	if (n)
		qsort(img, n, sizeof(*img), by_base);
	st->fn_cap = 1024;
	st->fn = malloc(st->fn_cap * sizeof(*st->fn));
	st->cache = calloc(SYMTAB_CACHE, sizeof(*st->cache));
	if (!st->fn || !st->cache || rehash(st, 4096))
		return -1;
	add_fn(st, -1, "[unknown]");
	add_fn(st, -1, "[unknown caller]");
	return 0;
}

void symtab_free(struct symtab *st)
{
	free(st->fn);
	free(st->hash);
	free(st->cache);
	memset(st, 0, sizeof(*st));
}

static uint32_t resolve(struct symtab *st, uint64_t ip, uint64_t *hi, bool *entry)
{
	size_t lo = 0, n = st->nimg;
	*entry = false;
	while (lo < n) {
		size_t mid = (lo + n) / 2;
		if (st->img[mid].base <= ip)
			lo = mid + 1;
		else
			n = mid;
	}
	*hi = lo < st->nimg ? st->img[lo].base : UINT64_MAX;
	if (!lo)
		return SYMFN_UNKNOWN;
	const struct symimage *im = &st->img[lo - 1];
	uint64_t rva = ip - im->base;
	if (rva >= im->size)
		return SYMFN_UNKNOWN;
	uint64_t end = im->base + im->size; /* fits: checked when listed */
	*hi = end;
	const struct symfile *sf = im->sf;
	if (sf) {
		const struct symfunc *f = symfile_func(sf, rva);
		if (f) {
			*hi = im->base + (f->hi < im->size ? f->hi : im->size);
			*entry = rva == f->entry;
			return intern(st, (int32_t)(lo - 1), f->name);
		}
		/* up to the next function */
		size_t a = 0, b = sf->nfuncs;
		while (a < b) {
			size_t m = (a + b) / 2;
			if (sf->funcs[m].lo <= rva)
				a = m + 1;
			else
				b = m;
		}
		if (a < sf->nfuncs && sf->funcs[a].lo < im->size)
			*hi = im->base + sf->funcs[a].lo;
	}
	return intern(st, (int32_t)(lo - 1), "[unknown]");
}

uint32_t symtab_lookup(struct symtab *st, uint64_t ip, uint64_t *hi, bool *entry)
{
	struct symtab_cache *c = &st->cache[(ip ^ (ip >> 16)) & (SYMTAB_CACHE - 1)];
	if (c->ip != ip + 1) {
		uint64_t h;
		bool e;
		uint32_t fn = resolve(st, ip, &h, &e);
		c->ip = ip + 1;
		/* a shorter range than the real one is still a right answer */
		c->span = h - ip > UINT32_MAX ? UINT32_MAX : (uint32_t)(h - ip);
		c->fn_entry = fn << 1 | e;
	}
	*hi = ip + c->span;
	*entry = c->fn_entry & 1;
	return c->fn_entry >> 1;
}

const char *symtab_fn_image(const struct symtab *st, uint32_t fn)
{
	int32_t i = fn < st->nfn ? st->fn[fn].image : -1;
	return i >= 0 ? st->img[i].name : "";
}

void symtab_fn_name(const struct symtab *st, uint32_t fn, char *buf, size_t cap)
{
	if (fn >= st->nfn) {
		snprintf(buf, cap, "[unknown]");
		return;
	}
	const struct symfn *f = &st->fn[fn];
	if (f->image < 0)
		snprintf(buf, cap, "%s", f->name);
	else
		snprintf(buf, cap, "%s`%s", st->img[f->image].name, f->name);
}
