/*
 * Address -> function, cached: see symtab.h.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/pt_image.h"
#include "host/symbols/symtab.h"

_Static_assert(offsetof(struct image, base) == 0 &&
		       offsetof(struct image, size) == sizeof(uint64_t),
	       "ptimg_list_*: an image begins with base, size");

static uint32_t hash_key(int32_t image, const char *name, bool inlined)
{
	uint32_t h = (2166136261u ^ (uint32_t)image) + inlined;
	for (const char *p = name; *p; p++)
		h = (h ^ (uint8_t)*p) * 16777619u;
	return h;
}

static int add_fn(struct symtab *st, int32_t image, const char *name, bool inlined)
{
	if (st->nfn == st->fn_cap) {
		uint32_t cap = st->fn_cap * 2;
		struct symfn *f = realloc(st->fn, cap * sizeof(*f));
		if (!f)
			return -1;
		st->fn = f;
		st->fn_cap = cap;
	}
	st->fn[st->nfn++] = (struct symfn){ image, name, inlined };
	return 0;
}

static int rehash(struct symtab *st, uint32_t cap)
{
	uint32_t *h = calloc(cap, sizeof(*h));
	if (!h)
		return -1;
	for (uint32_t id = SYMFN_FIRST; id < st->nfn; id++) {
		uint32_t i = hash_key(st->fn[id].image, st->fn[id].name, st->fn[id].inlined) &
			     (cap - 1);
		while (h[i])
			i = (i + 1) & (cap - 1);
		h[i] = id + 1;
	}
	free(st->hash);
	st->hash = h;
	st->hash_cap = cap;
	return 0;
}

/* The id of (image, name, inlined), added when new; SYMFN_UNKNOWN out of
 * memory. */
static uint32_t intern_fn(struct symtab *st, int32_t image, const char *name, bool inlined)
{
	uint32_t i = hash_key(image, name, inlined) & (st->hash_cap - 1);
	while (st->hash[i]) {
		const struct symfn *f = &st->fn[st->hash[i] - 1];
		if (f->image == image && f->inlined == inlined && !strcmp(f->name, name))
			return st->hash[i] - 1;
		i = (i + 1) & (st->hash_cap - 1);
	}
	uint32_t id = st->nfn;
	if (add_fn(st, image, name, inlined))
		return SYMFN_UNKNOWN;
	st->hash[i] = id + 1;
	if (st->nfn * 2 > st->hash_cap && rehash(st, st->hash_cap * 2))
		return SYMFN_UNKNOWN;
	return id;
}

static uint32_t intern(struct symtab *st, int32_t image, const char *name)
{
	return intern_fn(st, image, name, false);
}

int symtab_init(struct symtab *st, struct image *img, size_t n)
{
	memset(st, 0, sizeof(*st));
	st->img = img;
	st->nimg = n;
	st->overlap = ptimg_list_sort(img, (unsigned)n, sizeof(*img));
	st->fn_cap = 1024;
	st->fn = malloc(st->fn_cap * sizeof(*st->fn));
	st->cache = calloc(SYMTAB_CACHE, sizeof(*st->cache));
	if (!st->fn || !st->cache || rehash(st, 4096))
		return -1;
	add_fn(st, -1, "[unknown]", false);
	add_fn(st, -1, "[unknown caller]", false);
	return 0;
}

void symtab_free(struct symtab *st)
{
	free(st->fn);
	free(st->hash);
	free(st->cache);
	free(st->ictx);
	free(st->ictx_hash);
	free(st->icache);
	memset(st, 0, sizeof(*st));
}

static uint32_t resolve(struct symtab *st, uint64_t ip, uint64_t *hi, bool *entry)
{
	uint64_t lo, last;
	int k = ptimg_list_span(st->img, (unsigned)st->nimg, sizeof(*st->img), ip, &st->last,
				st->overlap, &lo, &last);
	*entry = false;
	/* the end of the range with this answer (hi exclusive; a range up to
	 * 2^64 is cut one short, which is still a right answer) */
	*hi = last == UINT64_MAX ? UINT64_MAX : last + 1;
	if (k < 0)
		return SYMFN_UNKNOWN;
	const struct image *im = &st->img[k];
	uint64_t rva = ip - im->base;
	uint64_t end = *hi;
	const struct symfile *sf = im->sf;
	if (sf && st->inline_frames) {
		/* one range, one inline chain */
		uint64_t next;
		const struct syminl_seg *g = symfile_inline(sf, rva, &next);
		uint64_t e = g ? g->hi : next;
		if (e < end - im->base)
			end = im->base + e;
	}
	*hi = end;
	if (sf) {
		const struct symfunc *f = symfile_func(sf, rva);
		if (f) {
			if (f->hi < end - im->base)
				*hi = im->base + f->hi;
			*entry = rva == f->entry;
			return intern(st, k, f->name);
		}
		/* up to the next function */
		size_t a = symfile_funcs_upto(sf, rva);
		if (a < sf->nfuncs && sf->funcs[a].lo < end - im->base)
			*hi = im->base + sf->funcs[a].lo;
	}
	return intern(st, k, "[unknown]");
}

const struct symtab_cache *symtab_resolve(struct symtab *st, uint64_t ip)
{
	struct symtab_cache *c = symtab_slot(st, ip);
	uint64_t h;
	bool e;
	uint32_t fn = resolve(st, ip, &h, &e);
	c->ip = ip + 1;
	/* a shorter range than the real one is still a right answer: a
	 * longer one than a span holds (the space above the last image) ends
	 * at the next 2 GiB boundary, the same end for each address up to
	 * it, so that the model's regions (cs_region()) are not one per
	 * address there */
	if (h - ip > UINT32_MAX)
		h = (ip | 0x7fffffffu) + 1;
	c->span = (uint32_t)(h - ip);
	c->fn_entry = fn << 1 | e;
	return c;
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
	if (f->inlined)
		snprintf(buf, cap, "%s [inlined]", f->name);
	else if (f->image < 0)
		snprintf(buf, cap, "%s", f->name);
	else
		snprintf(buf, cap, "%s`%s", st->img[f->image].name, f->name);
}

int symtab_use_inline(struct symtab *st)
{
	st->inline_frames = true;
	st->ictx_cap = 1024;
	st->ictx = malloc(st->ictx_cap * sizeof(*st->ictx));
	st->ictx_hash_cap = 4096;
	st->ictx_hash = calloc(st->ictx_hash_cap, sizeof(*st->ictx_hash));
	st->icache = calloc(SYMTAB_CACHE, sizeof(*st->icache));
	if (!st->ictx || !st->ictx_hash || !st->icache)
		return -1;
	st->nictx = 1;
	return 0;
}

static uint32_t ictx_key(uint32_t parent, uint32_t fn)
{
	return (uint32_t)((((uint64_t)parent << 32) | fn) * 0x9e3779b97f4a7c15ull >> 32);
}

/* The chain id of fn inside chain parent, added when new; 0 out of memory. */
static uint32_t ictx_intern(struct symtab *st, uint32_t parent, uint32_t fn)
{
	uint32_t m = st->ictx_hash_cap - 1, i = ictx_key(parent, fn) & m;
	for (; st->ictx_hash[i]; i = (i + 1) & m) {
		const struct symtab_ictx *c = &st->ictx[st->ictx_hash[i]];
		if (c->parent == parent && c->fn == fn)
			return st->ictx_hash[i];
	}
	if (st->nictx == st->ictx_cap) {
		struct symtab_ictx *v = realloc(st->ictx, st->ictx_cap * 2 * sizeof(*v));
		if (!v)
			return 0;
		st->ictx = v;
		st->ictx_cap *= 2;
	}
	if ((st->nictx + 1) * 2 > st->ictx_hash_cap) {
		uint32_t cap = st->ictx_hash_cap * 2;
		uint32_t *h = calloc(cap, sizeof(*h));
		if (!h)
			return 0;
		for (uint32_t id = 1; id < st->nictx; id++) {
			uint32_t j = ictx_key(st->ictx[id].parent, st->ictx[id].fn) & (cap - 1);
			while (h[j])
				j = (j + 1) & (cap - 1);
			h[j] = id;
		}
		free(st->ictx_hash);
		st->ictx_hash = h;
		st->ictx_hash_cap = cap;
		m = cap - 1;
		for (i = ictx_key(parent, fn) & m; st->ictx_hash[i]; i = (i + 1) & m)
			;
	}
	uint32_t id = st->nictx++;
	st->ictx[id] = (struct symtab_ictx){ parent, fn };
	st->ictx_hash[i] = id;
	return id;
}

static uint32_t resolve_inline(struct symtab *st, uint64_t ip)
{
	int img = ptimg_list_find(st->img, (unsigned)st->nimg, sizeof(*st->img), ip, &st->last,
				  st->overlap);
	if (img < 0)
		return 0;
	const struct image *im = &st->img[img];
	uint64_t rva = ip - im->base, next;
	if (!im->sf)
		return 0;
	const struct symfile *sf = im->sf;
	const struct syminl_seg *g = symfile_inline(sf, rva, &next);
	if (!g)
		return 0;
	/* the chain innermost first, then interned outermost first */
	uint32_t chain[64], k = 0;
	for (uint32_t i = g->inl + 1; i && i <= sf->ninl && k < 64; i = sf->inl[i - 1].parent)
		chain[k++] = i - 1;
	uint32_t ctx = 0;
	while (k--) {
		uint32_t fn = intern_fn(st, img, sf->inl[chain[k]].name, true);
		if (!(ctx = ictx_intern(st, ctx, fn)))
			return 0;
	}
	return ctx;
}

uint32_t symtab_inline(struct symtab *st, uint64_t ip)
{
	if (!st->inline_frames)
		return 0;
	struct symtab_icache *c = &st->icache[(ip ^ (ip >> 16)) & (SYMTAB_CACHE - 1)];
	if (c->ip != ip + 1) {
		c->ip = ip + 1;
		c->ctx = resolve_inline(st, ip);
	}
	return c->ctx;
}
