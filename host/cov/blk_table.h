/*
 * Distinct blocks of a trace (same first instruction, mode and size: the
 * same instructions) with what a consumer worked out for each when it
 * first came (work that then costs nothing when it runs again) and how
 * often it ran. Open addressing, doubling at half full; an entry is one
 * cache line (64 bytes, aligned), as each lookup is likely a miss.
 */
#ifndef EFIPT_HOST_BLK_TABLE_H
#define EFIPT_HOST_BLK_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct blk_entry {
	uint64_t ip;
	uint16_t size;
	uint8_t mode;
	bool used;
	int32_t tag;		/* the consumer's: one more index (-1: none) */
	uint64_t execs;
	/* the consumer's: two places the flow may go after the block, and how
	 * often it went to each (counted here, in the line the lookup brought
	 * in, rather than in an array of the consumer's) */
	uint64_t to[2], went[2];
	uint32_t first, n;	/* the consumer's: a range of its own array */
};
struct blk_table {
	struct blk_entry *e;
	size_t cap, n;		/* cap: a power of two */
};

/* The slot where the lookup of a block begins. */
static inline size_t blk_table_slot(const struct blk_table *t, uint64_t ip, uint16_t size,
				    uint8_t mode)
{
	uint64_t h = (ip ^ (uint64_t)size << 48 ^ (uint64_t)mode << 40) * 0x9e3779b97f4a7c15ull;
	return (size_t)(h >> 20) & (t->cap - 1);
}

/* A block about to be looked up: its slot fetched into the cache now, so
 * that a batch's lookups wait for memory side by side, not one by one. */
static inline void blk_table_prefetch(const struct blk_table *t, uint64_t ip, uint16_t size,
				      uint8_t mode)
{
	if (t->cap)
		__builtin_prefetch(&t->e[blk_table_slot(t, ip, size, mode)]);
}

/* A block not in t added (blk_table_get() when it finds none). */
struct blk_entry *blk_table_add(struct blk_table *t, uint64_t ip, uint16_t size, uint8_t mode,
				bool *fresh);

/* The entry of a block, made when new (*fresh set: execs 0, the rest the
 * caller's to fill); NULL when out of memory. Entries move when the table
 * grows: a pointer is good until the next call. Inline: a consumer looks
 * up every block it is given, and nearly all are there already. */
static inline struct blk_entry *blk_table_get(struct blk_table *t, uint64_t ip, uint16_t size,
					      uint8_t mode, bool *fresh)
{
	for (size_t k = t->cap ? blk_table_slot(t, ip, size, mode) : 0; t->cap;
	     k = (k + 1) & (t->cap - 1)) {
		struct blk_entry *e = &t->e[k];
		if (!e->used)
			break;
		if (e->ip == ip && e->size == size && e->mode == mode) {
			*fresh = false;
			return e;
		}
	}
	return blk_table_add(t, ip, size, mode, fresh);
}

void blk_table_free(struct blk_table *t);

#endif
