/*
 * Distinct blocks of a trace (same first instruction, mode and size: the
 * same instructions) with what a consumer worked out for each when it
 * first came (work that then costs nothing when it runs again) and how
 * often it ran. Open addressing, doubling at half full.
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
	uint32_t first, n;	/* the consumer's: a range of its own array */
	int64_t tag;		/* the consumer's: one more index */
	uint64_t execs;
};

struct blk_table {
	struct blk_entry *e;
	size_t cap, n;		/* cap: a power of two */
};

/* The entry of a block, made when new (*fresh set: execs 0, the rest the
 * caller's to fill); NULL when out of memory. Entries move when the table
 * grows: a pointer is good until the next call. */
struct blk_entry *blk_table_get(struct blk_table *t, uint64_t ip, uint16_t size, uint8_t mode,
				bool *fresh);
void blk_table_free(struct blk_table *t);

#endif
