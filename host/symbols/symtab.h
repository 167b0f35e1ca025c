/*
 * Address -> function for a trace: the traced images (sorted by base), their
 * symbol files (symmap.h) and a table of functions, one id per
 * (image, function name), so that analyses keep counts in arrays. Each
 * distinct address is resolved once (a direct-mapped cache): a trace runs
 * billions of instructions over few addresses.
 */
#ifndef EFIPT_HOST_SYMTAB_H
#define EFIPT_HOST_SYMTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "host/symbols/symmap.h"

/* Fixed function ids. */
enum {
	SYMFN_UNKNOWN = 0,	/* code in no listed image */
	SYMFN_UNKNOWN_CALLER = 1,	/* pseudo frame under a root a RET found */
	SYMFN_FIRST = 2,
};

struct symfn {
	int32_t image;		/* index in symtab.img, or -1 */
	const char *name;	/* "[unknown]" for code without symbols */
	bool inlined;		/* an inline frame (symtab_inline()) */
};

/* An inline chain: the innermost inline frame fn, inside chain parent
 * (0: directly in the concrete function). */
struct symtab_ictx {
	uint32_t parent;
	uint32_t fn;
};

/* 16 bytes, so that the hot part of the cache stays in the CPU's caches */
struct symtab_cache {
	uint64_t ip;		/* ip + 1 (0: empty) */
	uint32_t span;		/* hi - ip, at most UINT32_MAX */
	uint32_t fn_entry;	/* fn << 1 | entry */
};

#define SYMTAB_CACHE (1u << 16)

struct symtab {
	struct image *img;	/* caller's, sorted by symtab_init */
	size_t nimg;
	int overlap;		/* some images overlap: the one that starts
				 * last owns an address (core/pt_image.h) */
	unsigned last;		/* the image of the last lookup */
	struct symfn *fn;
	uint32_t nfn, fn_cap;
	uint32_t *hash;		/* open addressing: fn id + 1 */
	uint32_t hash_cap;
	struct symtab_cache *cache;
	/* inline frames (symtab_use_inline()) */
	bool inline_frames;
	struct symtab_ictx *ictx;	/* chain ids: ictx[1..nictx) */
	uint32_t nictx, ictx_cap;
	uint32_t *ictx_hash;	/* (parent, fn) -> chain id */
	uint32_t ictx_hash_cap;
	struct symtab_icache {
		uint64_t ip;	/* ip + 1 (0: empty) */
		uint32_t ctx;
	} *icache;
};

/* img[0..n) resolved (or not) by symmap_resolve. 0, or -1 out of memory. */
int symtab_init(struct symtab *st, struct image *img, size_t n);
void symtab_free(struct symtab *st);

/* Resolve inline frames too (before the first lookup): symtab_lookup()'s
 * ranges then also end where the inline chain changes. 0, or -1 out of
 * memory. */
int symtab_use_inline(struct symtab *st);

/* The inline chain at ip (0: none, or inline frames not in use): each
 * distinct address resolved once. */
uint32_t symtab_inline(struct symtab *st, uint64_t ip);

/* ip's slot in the cache of answers. */
static inline struct symtab_cache *symtab_slot(struct symtab *st, uint64_t ip)
{
	return &st->cache[(ip ^ (ip >> 16)) & (SYMTAB_CACHE - 1)];
}

/* Resolve ip into its slot (symtab_lookup() when the slot holds another). */
const struct symtab_cache *symtab_resolve(struct symtab *st, uint64_t ip);

/* The function at ip; *hi: the end of the address range with the same
 * answer; *entry: ip is that function's entry. Each distinct address is
 * resolved once, then answered from the cache (inline: the call-stack
 * model asks at every change of frames). */
static inline uint32_t symtab_lookup(struct symtab *st, uint64_t ip, uint64_t *hi, bool *entry)
{
	const struct symtab_cache *c = symtab_slot(st, ip);
	if (c->ip != ip + 1)
		c = symtab_resolve(st, ip);
	*hi = ip + c->span;
	*entry = c->fn_entry & 1;
	return c->fn_entry >> 1;
}

/* "image`function", "[unknown]", "[unknown caller]"; an inline frame is
 * "function [inlined]" (its image is its concrete frame's). */
void symtab_fn_name(const struct symtab *st, uint32_t fn, char *buf, size_t cap);
/* The image's name ("" outside images). */
const char *symtab_fn_image(const struct symtab *st, uint32_t fn);

#endif
