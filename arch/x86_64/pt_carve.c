/* Output buffers carved out of a block; see pt_carve.h. */
#include "arch/x86_64/pt_carve.h"
#include "core/mem.h"
#include "core/pt_rtit.h"
#include "core/recorder_write.h"

#define PAGE 4096ull

static unsigned popcount64(uint64_t v)
{
	unsigned n = 0;
	for (; v; v &= v - 1)
		n++;
	return n;
}

/* The regions build_topa lays out for size: 128 MiB ones, then one per set
 * bit of the rest (pt_output.c). */
static unsigned topa_regions(uint64_t size)
{
	return (unsigned)(size / TOPA_MAX_REGION) + popcount64((size % TOPA_MAX_REGION) / PAGE);
}

uint64_t ptout_carve_need(const struct ptcfg_settings *s)
{
	uint64_t size = (s->size + PAGE - 1) & ~(PAGE - 1);
	if (s->output == PTCFG_OUT_SINGLE)
		return size;
	unsigned n = topa_regions(size);
	unsigned tables = s->topa_multi ? PTOUT_TABLES_FOR(n) : n + 1;
	return size + PAGE * tables;
}

uint64_t ptout_carve_align(const struct ptcfg_settings *s)
{
	uint64_t size = s->size < PAGE ? PAGE : s->size;
	uint64_t a = PAGE;
	while (a * 2 <= size && a < TOPA_MAX_REGION)
		a *= 2;
	return s->output == PTCFG_OUT_SINGLE ? size : a;
}

static int carve(void *ctx, uint64_t size, uint64_t align, uint64_t *phys)
{
	struct ptout_carve *c = ctx;
	if (size <= PAGE && align <= PAGE) {
		if (c->high - c->low < PAGE)
			return -1;
		c->high -= PAGE;
		*phys = c->high;
		return 0;
	}
	uint64_t at = (c->low + align - 1) & ~(align - 1);
	if (at < c->low || at > c->high || size > c->high - at)
		return -1;
	*phys = at;
	c->low = at + size;
	return 0;
}

static void no_free(void *ctx, uint64_t phys, uint64_t size)
{
	(void)ctx, (void)phys, (void)size;
}

static void write64(void *ctx, uint64_t phys, uint64_t value)
{
	struct ptout_carve *c = ctx;
	c->parent->write64(c->parent->ctx, phys, value);
}

static void fill(void *ctx, uint64_t phys, int byte, uint64_t len)
{
	struct ptout_carve *c = ctx;
	c->parent->fill(c->parent->ctx, phys, byte, len);
}

static void read_phys(void *ctx, uint64_t phys, void *dst, size_t len)
{
	struct ptout_carve *c = ctx;
	c->parent->read(c->parent->ctx, phys, dst, len);
}

void ptout_carve_init(struct ptout_carve *c, const struct ptout_mem *parent, uint64_t base,
		      uint64_t size)
{
	c->parent = parent;
	c->base = c->low = base;
	c->size = size;
	c->high = base + size;
	c->mem = (struct ptout_mem){
		.alloc = carve, .free = no_free, .write64 = write64, .fill = fill, .read = read_phys,
		.ctx = c,
	};
}

uint64_t ptout_record(const struct ptout *o, struct ptrec_header *h, uint8_t *dst)
{
	struct ptrec_layout_hdr lh = { o->ntab, o->nreg };
	uint8_t *p = dst;
	efipt_memcpy(p, &lh, sizeof(lh));
	p += sizeof(lh);
	for (uint32_t t = 0; t < o->ntab; t++, p += 8)
		efipt_memcpy(p, &o->tab[t].phys, 8);
	for (uint32_t i = 0; i < o->nreg; i++, p += sizeof(struct ptrec_region)) {
		struct ptrec_region g = { o->reg[i].base, o->reg[i].size, o->reg[i].table,
					  o->reg[i].entry };
		efipt_memcpy(p, &g, sizeof(g));
	}
	h->output = o->output == PTCFG_OUT_SINGLE ? PTREC_OUT_SINGLE : PTREC_OUT_TOPA;
	h->mode = o->mode == PTCFG_MODE_WRAP ? PTREC_MODE_WRAP : PTREC_MODE_STOP;
	h->trace_size = o->size;
	h->msr_base = o->msr_base;
	h->msr_mask = o->msr_mask;
	return ptrec_layout_bytes(o->ntab, o->nreg);
}
