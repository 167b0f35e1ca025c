/* Simulated physical memory; see sim_mem.h. */
#include "host/util/sim_mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void simmem_init(struct simmem *m, uint64_t base)
{
	memset(m, 0, sizeof(*m));
	m->base = m->next = base;
}

void simmem_reset(struct simmem *m)
{
	for (unsigned i = 0; i < m->n; i++)
		free(m->blk[i].data);
	m->n = 0;
	m->next = m->base;
	m->allocs = m->frees = 0;
}

void simmem_release(struct simmem *m)
{
	simmem_reset(m);
	free(m->blk);
	m->blk = NULL;
	m->cap = 0;
}

static int sim_alloc(void *ctx, uint64_t size, uint64_t align, uint64_t *phys)
{
	struct simmem *m = ctx;
	if (!size || (m->max_block && size > m->max_block))
		return -1;
	uint64_t p = (m->next + align - 1) & ~(align - 1);
	if (m->limit && (p > m->limit || size > m->limit - p))
		return -1;
	if (m->n == m->cap) {
		unsigned cap = m->cap ? m->cap * 2 : 64;
		struct simmem_block *b = realloc(m->blk, cap * sizeof(*b));
		if (!b)
			return -1;
		m->blk = b;
		m->cap = cap;
	}
	m->blk[m->n++] = (struct simmem_block){ .phys = p, .size = size, .live = true };
	m->next = p + size;
	m->allocs++;
	*phys = p;
	return 0;
}

struct simmem_block *simmem_find(struct simmem *m, uint64_t phys, uint64_t len)
{
	/* Blocks are sorted by address: binary search. */
	unsigned lo = 0, hi = m->n;
	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;
		if (m->blk[mid].phys + m->blk[mid].size <= phys)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == m->n)
		return NULL;
	struct simmem_block *b = &m->blk[lo];
	if (!b->live || phys < b->phys || len > b->size || phys - b->phys > b->size - len)
		return NULL;
	return b;
}

static void sim_free(void *ctx, uint64_t phys, uint64_t size)
{
	struct simmem *m = ctx;
	struct simmem_block *b = simmem_find(m, phys, size);
	if (!b || b->phys != phys || b->size != size) {
		fprintf(stderr, "simmem: bad free of 0x%llx (%llu bytes)\n",
			(unsigned long long)phys, (unsigned long long)size);
		abort();
	}
	free(b->data);
	b->data = NULL;
	b->live = false;
	m->frees++;
}

static uint8_t *backing(struct simmem *m, uint64_t phys, uint64_t len)
{
	struct simmem_block *b = simmem_find(m, phys, len);
	if (!b) {
		fprintf(stderr, "simmem: access to unallocated 0x%llx (%llu bytes)\n",
			(unsigned long long)phys, (unsigned long long)len);
		abort();
	}
	if (!b->data) {
		b->data = calloc(1, b->size);
		if (!b->data) {
			fprintf(stderr, "simmem: out of host memory\n");
			abort();
		}
	}
	return b->data + (phys - b->phys);
}

void simmem_write(struct simmem *m, uint64_t phys, const void *src, size_t len)
{
	memcpy(backing(m, phys, len), src, len);
}

void simmem_read(struct simmem *m, uint64_t phys, void *dst, size_t len)
{
	struct simmem_block *b = simmem_find(m, phys, len);
	if (b && !b->data) {
		memset(dst, 0, len);
		return;
	}
	memcpy(dst, backing(m, phys, len), len);
}

uint64_t simmem_read64(struct simmem *m, uint64_t phys)
{
	uint8_t b[8];
	simmem_read(m, phys, b, 8);
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | b[i];
	return v;
}

static void sim_write64(void *ctx, uint64_t phys, uint64_t value)
{
	uint8_t b[8];
	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(value >> (8 * i));
	simmem_write(ctx, phys, b, 8);
}

static void sim_fill(void *ctx, uint64_t phys, int byte, uint64_t len)
{
	struct simmem *m = ctx;
	struct simmem_block *b = simmem_find(m, phys, len);
	if (b && !b->data && byte == 0)
		return; /* untouched memory already reads as zero */
	memset(backing(m, phys, len), byte, len);
}

static void sim_read(void *ctx, uint64_t phys, void *dst, size_t len)
{
	simmem_read(ctx, phys, dst, len);
}

void simmem_ops(struct simmem *m, struct ptout_mem *ops)
{
	ops->alloc = sim_alloc;
	ops->free = sim_free;
	ops->write64 = sim_write64;
	ops->fill = sim_fill;
	ops->read = sim_read;
	ops->ctx = m;
}

unsigned simmem_live(const struct simmem *m)
{
	unsigned n = 0;
	for (unsigned i = 0; i < m->n; i++)
		n += m->blk[i].live;
	return n;
}
