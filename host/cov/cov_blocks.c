/* Coverage from blocks; see cov_blocks.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/pt_image.h"
#include "core/x86_insn.h"
#include "host/cov/cov_blocks.h"
#include "host/util/file_io.h"

/* larger images (a hostile images.json) get no bitmaps: 3/8 of this each */
#define MAX_IMAGE_BITS (1ull << 30)
#define SEEN (1u << 16)

static struct jcc *jcc_slot(struct jcc_set *js, uint64_t end)
{
	size_t i = (size_t)((end ^ end >> 17) * 0x9e3779b97f4a7c15ull) & js->mask;
	while (js->slot[i].ways && js->slot[i].end != end)
		i = (i + 1) & js->mask;
	return &js->slot[i];
}

static void jcc_add(struct jcc_set *js, uint64_t end, uint8_t ways)
{
	if (js->oom)
		return;
	if ((js->n + 1) * 2 > js->mask + 1) { /* half full: twice the slots */
		struct jcc_set big = { calloc(2 * (js->mask + 1), sizeof(struct jcc)),
				       2 * (js->mask + 1) - 1, js->n, false };
		if (!big.slot) {
			js->oom = true;
			return;
		}
		for (size_t i = 0; i <= js->mask; i++)
			if (js->slot[i].ways)
				*jcc_slot(&big, js->slot[i].end) = js->slot[i];
		free(js->slot);
		*js = big;
	}
	struct jcc *e = jcc_slot(js, end);
	if (!e->ways) {
		e->end = end;
		js->n++;
	}
	e->ways |= ways;
}

static void on_branch(void *ctx, uint64_t end, uint8_t ways)
{
	jcc_add(ctx, end, (uint8_t)((ways & PTCOV_RAN ? JCC_RAN : 0) |
				    (ways & PTCOV_TAKEN ? JCC_TAKEN : 0) |
				    (ways & PTCOV_FELL ? JCC_FELL : 0)));
}

static void on_blocks(void *ctx, const struct ptflow_batch *batch)
{
	struct cov_blocks *c = ctx;
	ptcov_on_blocks(&c->cov, batch);
}

struct flow_consumer cov_blocks_consumer(struct cov_blocks *c)
{
	struct flow_consumer f = { c, on_blocks, NULL, NULL, NULL, PTFLOW_TIME_NONE, 0, true, NULL };
	return f;
}

void cov_blocks_branches(const struct cov_blocks *c, struct jcc_count *per,
			 struct jcc_count *total)
{
	const struct jcc_set *js = &c->jcc;
	unsigned last = 0;
	memset(total, 0, sizeof(*total));
	for (size_t i = 0; js->slot && i <= js->mask; i++) {
		const struct jcc *e = &js->slot[i];
		if (!e->ways)
			continue;
		int k = ptimg_list_find(c->cov.img, c->cov.nimg, sizeof(*c->cov.img), e->end - 1,
					&last, c->cov.overlap);
		if (k < 0)
			continue;
		struct jcc_count *p = &per[k];
		bool t = e->ways & JCC_TAKEN, f = e->ways & JCC_FELL;
		p->ran++, p->taken += t, p->fell += f, p->both += t && f;
		total->ran++, total->taken += t, total->fell += f, total->both += t && f;
	}
}

/* Bytes of [a, a + len) that image k of the sorted list l owns. */
static uint64_t owned(const struct image *l, unsigned n, int overlap, unsigned k, uint64_t a,
		      uint64_t len)
{
	uint64_t got = 0;
	unsigned last = k;
	while (len) {
		uint64_t lo, hi;
		int o = ptimg_list_span(l, n, sizeof(*l), a, &last, overlap, &lo, &hi);
		uint64_t chunk = hi - a >= len - 1 ? len : hi - a + 1;
		if (o == (int)k)
			got += chunk;
		a += chunk;
		len -= chunk;
	}
	return got;
}

static const char *cov_image_name(const void *img)
{
	return ((const struct ptcov_image *)img)->path;
}

int cov_blocks_init(struct cov_blocks *c, const struct session *s)
{
	memset(c, 0, sizeof(*c));
	const struct image *l = s->images.v;
	unsigned nl = s->images.n;
	struct ptimg code = ptsec_ptimg((struct ptsec_image *)&s->code);
	c->img = calloc(nl ? nl : 1, sizeof(*c->img));
	c->whole = calloc(nl ? nl : 1, sizeof(*c->whole));
	c->seen = calloc(SEEN, sizeof(*c->seen));
	c->jcc = (struct jcc_set){ calloc(1024, sizeof(struct jcc)), 1023, 0, false };
	if (!c->img || !c->whole || !c->seen || !c->jcc.slot) {
		fprintf(stderr, "%s: out of memory\n", s->prefixed);
		return -1;
	}
	/* the images in the rule's order (the session's), so that what is
	 * known per image stays beside it */
	for (unsigned k = 0; k < nl; k++) {
		struct ptcov_image *m = &c->img[c->n];
		m->base = l[k].base;
		m->size = l[k].size;
		if (!m->size)
			continue;
		ptcov_set_name(m, l[k].name);
		/* its executable sections: images.json or a --pe file, else the
		 * headers in the code (a run directory's snapshot) */
		struct pe_code pc = l[k].code;
		if (!pc.n)
			pe_code_read(&code, m->base, m->size, &pc);
		m->entry = pc.entry_rva ? m->base + pc.entry_rva : 0;
		for (unsigned r = 0; r < pc.n; r++)
			m->code_size += owned(l, nl, s->overlap, k, m->base + pc.r[r].rva,
					      pc.r[r].size);
		if (!pc.n) {
			m->code_size = owned(l, nl, s->overlap, k, m->base, m->size);
			c->whole[c->n] = true;
		}
		c->n++;
		if (m->size > MAX_IMAGE_BITS) {
			fprintf(stderr, "%s: %s: %llu bytes, more than coverage is kept for (%llu): "
					"listed without blocks\n", s->prefixed,
				term_safe(m->path), (unsigned long long)m->size, MAX_IMAGE_BITS);
			continue;
		}
		m->bits = malloc((size_t)ptcov_bits_size(m->size));
		if (!m->bits) {
			fprintf(stderr, "%s: out of memory for the coverage of %s (%llu bytes)\n",
				s->prefixed, term_safe(m->path), (unsigned long long)m->size);
			return -1;
		}
	}
	ptcov_init(&c->cov, c->img, c->n);
	if (c->cov.overlap)
		images_note_overlaps(s->prefixed, c->img, c->n, sizeof(*c->img), cov_image_name);
	/* a block marked once costs no decoding, a branch's way seen once
	 * no lookup */
	ptcov_use_blocks(&c->cov, c->seen, SEEN);
	c->cov.on_branch = on_branch;
	c->cov.branch_ctx = &c->jcc;
	return 0;
}

void cov_blocks_free(struct cov_blocks *c)
{
	for (unsigned k = 0; c->img && k < c->n; k++)
		free(c->img[k].bits);
	free(c->img);
	free(c->whole);
	free(c->seen);
	free(c->jcc.slot);
	memset(c, 0, sizeof(*c));
}
