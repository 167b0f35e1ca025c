/* Intel PT output layouts (SDM 33.2.7.1, 33.2.7.2); see pt_output.h. */
#include "arch/x86_64/pt_output.h"
#include "core/mem.h"
#include "core/pt_rtit.h"

#define PAGE 4096ull

void ptout_init(struct ptout *o, struct ptout_region *reg, unsigned max_reg,
		struct ptout_table *tab, unsigned max_tab)
{
	efipt_memset(o, 0, sizeof(*o));
	o->reg = reg;
	o->max_reg = max_reg;
	o->tab = tab;
	o->max_tab = max_tab;
	o->per_table = (unsigned)(PAGE / 8);
}

static unsigned log2u(uint64_t v)
{
	unsigned n = 0;
	while (v >>= 1)
		n++;
	return n;
}

static uint64_t pow2_floor(uint64_t v)
{
	return 1ull << log2u(v);
}

static int get_mem(const struct ptout *o, const struct ptout_mem *mem, uint64_t size,
		   uint64_t align, uint64_t *phys, struct strbuf *err)
{
	if (mem->alloc(mem->ctx, size, align, phys))
		return 1; /* not available: the caller may retry smaller */
	uint64_t limit = o->maxphyaddr >= 64 ? 0 : 1ull << o->maxphyaddr;
	if ((*phys & (align - 1)) || (limit && (*phys >= limit || size > limit - *phys))) {
		/* 33.2.7.2 ToPA errors 2b/2c, 33.2.7.1: misaligned or above MAXPHYADDR. */
		sb_printf(err, "allocator returned 0x%llx for %llu bytes aligned to %llu "
			       "(MAXPHYADDR %u): unusable for trace output",
			  (unsigned long long)*phys, (unsigned long long)size,
			  (unsigned long long)align, o->maxphyaddr);
		mem->free(mem->ctx, *phys, size);
		return -1;
	}
	return 0;
}

void ptout_free(struct ptout *o, const struct ptout_mem *mem)
{
	for (unsigned i = 0; i < o->nreg; i++) {
		uint64_t sz = o->reg[i].size < PAGE ? PAGE : o->reg[i].size;
		mem->free(mem->ctx, o->reg[i].base, sz);
	}
	for (unsigned i = 0; i < o->ntab; i++)
		mem->free(mem->ctx, o->tab[i].phys, PAGE);
	o->nreg = o->ntab = 0;
}

uint64_t ptout_entry(const struct ptout *o, unsigned t, unsigned i)
{
	const struct ptout_table *tb = &o->tab[t];
	if (i >= tb->nout) {
		/* END: to the next table, the last one back to the first (33.2.7.2). */
		unsigned next = t + 1 < o->ntab ? t + 1 : 0;
		return o->tab[next].phys | TOPA_END;
	}
	const struct ptout_region *r = &o->reg[tb->first + i];
	uint64_t e = r->base | ((uint64_t)(log2u(r->size) - 12) << TOPA_SIZE_SHIFT);
	if (o->mode == PTCFG_MODE_STOP && tb->first + i == o->nreg - 1)
		e |= TOPA_STOP;
	return e;
}

static int build_single(struct ptout *o, const struct ptout_mem *mem, struct strbuf *err)
{
	uint64_t phys, sz = o->size < PAGE ? PAGE : o->size;
	if (o->max_reg < 1) {
		sb_puts(err, "no room for the output region list");
		return -1;
	}
	int r = get_mem(o, mem, sz, sz, &phys, err);
	if (r) {
		if (r > 0)
			sb_printf(err, "cannot allocate %llu bytes of contiguous memory aligned to "
				       "its size for single-range output",
				  (unsigned long long)sz);
		return -1;
	}
	o->reg[0] = (struct ptout_region){ .base = phys, .size = o->size };
	o->nreg = 1;
	/* 33.2.7.1: base aligned to the size, mask = size - 1 (bits 6:0 read as 1). */
	o->msr_base = phys;
	o->msr_mask = (o->size - 1) | RTIT_MASK_LOWER;
	return 0;
}

static int new_table(struct ptout *o, const struct ptout_mem *mem, struct strbuf *err)
{
	uint64_t phys;
	if (o->ntab >= o->max_tab) {
		sb_printf(err, "more than %u ToPA tables needed", o->max_tab);
		return -1;
	}
	int r = get_mem(o, mem, PAGE, PAGE, &phys, err);
	if (r) {
		if (r > 0)
			sb_puts(err, "cannot allocate a 4 KiB page for a ToPA table");
		return -1;
	}
	o->tab[o->ntab++] = (struct ptout_table){ .phys = phys, .first = o->nreg, .nout = 0 };
	return 0;
}

static int build_topa(struct ptout *o, const struct ptout_mem *mem, struct strbuf *err)
{
	uint64_t left = o->size;
	unsigned outs_per_table = o->multi ? o->per_table - 1 : 1;
	while (left) {
		uint64_t want = pow2_floor(left);
		if (want > TOPA_MAX_REGION)
			want = TOPA_MAX_REGION;
		if (!o->ntab || o->tab[o->ntab - 1].nout >= outs_per_table)
			if (new_table(o, mem, err))
				return -1;
		if (o->nreg >= o->max_reg) {
			sb_printf(err, "more than %u ToPA output regions needed for %llu bytes",
				  o->max_reg, (unsigned long long)o->size);
			return -1;
		}
		uint64_t phys;
		int r;
		/* Regions are aligned to their size (33.2.7.2 ToPA error 2b); when
		 * memory is fragmented take more, smaller regions. */
		while ((r = get_mem(o, mem, want, want, &phys, err)) > 0 && o->multi &&
		       want > TOPA_MIN_REGION)
			want >>= 1;
		if (r) {
			if (r > 0)
				sb_printf(err, "cannot allocate %llu bytes aligned to their size for "
					       "a ToPA output region",
					  (unsigned long long)want);
			return -1;
		}
		struct ptout_table *t = &o->tab[o->ntab - 1];
		o->reg[o->nreg++] = (struct ptout_region){
			.base = phys, .size = want, .table = o->ntab - 1, .entry = t->nout,
		};
		t->nout++;
		left -= want;
	}
	for (unsigned t = 0; t < o->ntab; t++)
		for (unsigned i = 0; i <= o->tab[t].nout; i++)
			mem->write64(mem->ctx, o->tab[t].phys + 8ull * i, ptout_entry(o, t, i));
	/* Start at table 0, entry 0, offset 0 (33.2.8.7, 33.2.8.8). */
	o->msr_base = o->tab[0].phys;
	o->msr_mask = RTIT_MASK_LOWER;
	return 0;
}

int ptout_build(struct ptout *o, const struct ptcfg_settings *s, const struct ptout_mem *mem,
		struct strbuf *err)
{
	o->output = s->output;
	o->mode = s->mode;
	if (o->mode == PTCFG_MODE_AUTO) /* as ptcfg_validate resolves it */
		o->mode = s->output == PTCFG_OUT_SINGLE ? PTCFG_MODE_WRAP : PTCFG_MODE_STOP;
	o->size = s->size;
	o->maxphyaddr = s->maxphyaddr ? s->maxphyaddr : 36;
	o->multi = s->topa_multi;
	o->nreg = o->ntab = 0;
	if (o->per_table < 2 || o->per_table > PAGE / 8)
		o->per_table = (unsigned)(PAGE / 8);
	int r;
	if (s->output == PTCFG_OUT_SINGLE)
		r = build_single(o, mem, err);
	else if (s->output == PTCFG_OUT_TOPA)
		r = build_topa(o, mem, err);
	else {
		sb_puts(err, "output scheme not resolved (validate the configuration first)");
		r = -1;
	}
	if (r) {
		ptout_free(o, mem);
		return -1;
	}
	if (o->mode == PTCFG_MODE_WRAP && mem->fill)
		for (unsigned i = 0; i < o->nreg; i++)
			mem->fill(mem->ctx, o->reg[i].base, 0, o->reg[i].size);
	return 0;
}

/* ---- extraction --------------------------------------------------------- */

/* Is any byte of [phys, phys+len) non-zero? */
static bool written(const struct ptout_mem *mem, uint64_t phys, uint64_t len)
{
	uint8_t buf[512];
	while (len) {
		size_t n = len < sizeof(buf) ? (size_t)len : sizeof(buf);
		mem->read(mem->ctx, phys, buf, n);
		for (size_t i = 0; i < n; i++)
			if (buf[i])
				return true;
		phys += n;
		len -= n;
	}
	return false;
}

static int emit(ptout_span_fn fn, void *ctx, struct ptout_extent *ext, uint64_t phys,
		uint64_t len)
{
	if (!len)
		return 0;
	ext->bytes += len;
	ext->spans++;
	return fn ? fn(ctx, phys, len) : 0;
}

/* The region (*cur) and offset in it (*off) the output MSRs point at; sets
 * ext's stopped, error, full, wrapped (single-range offset past the mask)
 * and bad_pointer. Returns 0, or -1 if they point nowhere in this layout. */
static int locate(const struct ptout *o, uint64_t base, uint64_t mask, uint64_t status,
		  struct ptout_extent *ext, unsigned *cur_out, uint64_t *off_out)
{
	efipt_memset(ext, 0, sizeof(*ext));
	ext->stopped = status & RTIT_STATUS_STOPPED;
	ext->error = status & RTIT_STATUS_ERROR;
	uint64_t off = mask >> RTIT_MASK_OUTPUT_OFFSET_SHIFT;
	unsigned cur;

	if (!o->nreg) {
		ext->bad_pointer = true;
		return -1;
	}
	if (o->output == PTCFG_OUT_SINGLE) {
		/* 33.2.7.1: the next byte goes to base + (OutputOffset & mask). */
		if (base != o->reg[0].base) {
			ext->bad_pointer = true;
			return -1;
		}
		if (off >= o->size) {
			/* An offset counted past the mask can only mean it went round. */
			ext->wrapped = true;
			off &= o->size - 1;
		}
		cur = 0;
	} else {
		unsigned idx = (unsigned)((mask & RTIT_MASK_TABLE_OFFSET_MASK) >>
					  RTIT_MASK_TABLE_OFFSET_SHIFT);
		unsigned t;
		for (t = 0; t < o->ntab && o->tab[t].phys != base; t++)
			;
		if (t == o->ntab || idx > o->tab[t].nout) {
			ext->bad_pointer = true;
			return -1;
		}
		if (idx == o->tab[t].nout) {
			/* On the END entry: the CPU continues at the next table's entry 0. */
			t = t + 1 < o->ntab ? t + 1 : 0;
			idx = 0;
			off = 0;
		}
		cur = o->tab[t].first + idx;
		if (off >= o->reg[cur].size) {
			ext->bad_pointer = true;
			return -1;
		}
		if (o->mode == PTCFG_MODE_STOP && ext->stopped && cur == o->nreg - 1 &&
		    off == o->reg[cur].size - 1) {
			/* ToPA STOP: region full, OutputOffset reads size - 1. */
			off = o->reg[cur].size;
			ext->full = true;
		}
	}
	*cur_out = cur;
	*off_out = off;
	return 0;
}

int ptout_position(const struct ptout *o, uint64_t base, uint64_t mask, uint64_t status,
		   uint64_t *pos)
{
	struct ptout_extent ext;
	unsigned cur;
	uint64_t off;
	if (locate(o, base, mask, status, &ext, &cur, &off))
		return -1;
	uint64_t at = off;
	for (unsigned i = 0; i < cur; i++)
		at += o->reg[i].size;
	*pos = at;
	return 0;
}

int ptout_extract(const struct ptout *o, uint64_t base, uint64_t mask, uint64_t status,
		  const struct ptout_mem *mem, ptout_span_fn fn, void *ctx,
		  struct ptout_extent *ext)
{
	unsigned cur;
	uint64_t off;
	if (locate(o, base, mask, status, ext, &cur, &off))
		return -1;
	const struct ptout_region *r = &o->reg[cur];
	bool wrapped = ext->wrapped;
	if (o->mode == PTCFG_MODE_WRAP && !wrapped && mem->read) {
		if (off < r->size && written(mem, r->base + off, r->size - off))
			wrapped = true;
		for (unsigned i = cur + 1; !wrapped && i < o->nreg; i++)
			wrapped = written(mem, o->reg[i].base, o->reg[i].size);
	}
	ext->wrapped = wrapped;
	if (wrapped) {
		if (emit(fn, ctx, ext, r->base + off, r->size - off))
			return 0;
		for (unsigned i = cur + 1; i < o->nreg; i++)
			if (emit(fn, ctx, ext, o->reg[i].base, o->reg[i].size))
				return 0;
	}
	for (unsigned i = 0; i < cur; i++)
		if (emit(fn, ctx, ext, o->reg[i].base, o->reg[i].size))
			return 0;
	emit(fn, ctx, ext, r->base, off);
	return 0;
}
