/*
 * Simulated physical memory for the host: a bump allocator handing out
 * deterministic physical addresses, with lazily allocated backing store.
 * Backs struct ptout_mem for `efipt plan` (addresses in the printed plan)
 * and for the PT model tests (ToPA tables, trace bytes).
 */
#ifndef EFIPT_HOST_SIM_MEM_H
#define EFIPT_HOST_SIM_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86_64/pt_output.h"

struct simmem_block {
	uint64_t phys, size;
	uint8_t *data;      /* NULL until written: reads as zeros */
	bool live;
};

struct simmem {
	uint64_t base, next;
	uint64_t max_block; /* refuse allocations larger than this (0: no limit) */
	uint64_t limit;     /* refuse allocations ending above this (0: no limit) */
	struct simmem_block *blk;
	unsigned n, cap;
	unsigned allocs, frees;
};

#define SIMMEM_DEFAULT_BASE 0x10000000ull /* 256 MiB */

void simmem_init(struct simmem *m, uint64_t base);
/* Free every block and the bookkeeping. */
void simmem_release(struct simmem *m);
/* Forget all blocks but keep the bookkeeping (fast reuse in sweeps). */
void simmem_reset(struct simmem *m);
void simmem_ops(struct simmem *m, struct ptout_mem *ops);

/* The live block containing [phys, phys+len), or NULL. */
struct simmem_block *simmem_find(struct simmem *m, uint64_t phys, uint64_t len);
uint64_t simmem_read64(struct simmem *m, uint64_t phys);
void simmem_write(struct simmem *m, uint64_t phys, const void *src, size_t len);
void simmem_read(struct simmem *m, uint64_t phys, void *dst, size_t len);
/* Blocks still allocated. */
unsigned simmem_live(const struct simmem *m);

#endif
