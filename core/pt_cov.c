/* Block coverage and drcov output; see pt_cov.h. */
#include "core/pt_cov.h"
#include "core/x86_insn.h"
#include "core/mem.h"
#include "core/pe_info.h"

/* Bitmaps of an image: instruction starts, covered bytes, heads. */
#define NB(m) (((m)->size >> 3) + (((m)->size & 7) != 0))
#define START(m) ((m)->bits)
#define COVER(m) ((m)->bits + NB(m))
#define HEAD(m) ((m)->bits + 2 * NB(m))

static inline bool bit(const uint8_t *b, uint64_t i)
{
	return b[i >> 3] >> (i & 7) & 1;
}

static inline void set(uint8_t *b, uint64_t i)
{
	b[i >> 3] |= (uint8_t)(1u << (i & 7));
}

void ptcov_set_name(struct ptcov_image *m, const char *name)
{
	size_t n = 0;
	bool dot = false;
	for (; name[n] && n + 1 < PTCOV_PATH_MAX; n++) {
		m->path[n] = name[n];
		if (name[n] == '.')
			dot = true;
		if (name[n] == '/' || name[n] == '\\')
			dot = false;
	}
	m->path[n] = 0;
	if (!dot && n && n + 5 < PTCOV_PATH_MAX)
		efipt_memcpy(m->path + n, ".efi", 5);
}

void ptcov_read_pe(struct ptcov_image *m, const struct ptimg *img)
{
	struct pe_code pc;
	if (pe_code_read(img, m->base, m->size, &pc))
		return;
	if (pc.entry_rva)
		m->entry = m->base + pc.entry_rva;
	if (pc.n)
		m->code_size = pe_code_bytes(&pc);
}

void ptcov_init(struct ptcov *c, struct ptcov_image *img, unsigned n)
{
	efipt_memset(c, 0, sizeof(*c));
	c->img = img;
	c->nimg = n;
	for (unsigned i = 0; i < n; i++) {
		struct ptcov_image *m = &img[i];
		m->execs = m->lost = 0;
		if (!ptimg_range_ok(m->base, m->size))
			m->size = 0;
		if (m->bits)
			efipt_memset(m->bits, 0, (size_t)ptcov_bits_size(m->size));
	}
	c->overlap = ptimg_list_sort(img, n, sizeof(*img));
}

_Static_assert(offsetof(struct ptcov_image, base) == 0 &&
		       offsetof(struct ptcov_image, size) == sizeof(uint64_t),
	       "ptimg_list_*: an image begins with base, size");

static int find_image(struct ptcov *c, uint64_t ip)
{
	return ptimg_list_find(c->img, c->nimg, sizeof(*c->img), ip, &c->last, c->overlap);
}

void ptcov_mark(struct ptcov_image *m, uint64_t off, uint64_t len, bool head, bool insn)
{
	if (!m->bits || off >= m->size)
		return;
	if (len > m->size - off)
		len = m->size - off;
	if (insn)
		set(START(m), off);
	if (head)
		set(HEAD(m), off);
	uint8_t *cov = COVER(m);
	for (uint64_t i = off; i < off + len; i++) {
		if (!(i & 7) && off + len - i >= 8) { /* whole bytes of the bitmap */
			cov[i >> 3] = 0xff;
			i += 7;
			continue;
		}
		set(cov, i);
	}
}

/* run, executed x times */
static void on_run(struct ptcov *c, const struct ptflow_run *run, uint64_t x)
{
	c->insns += run->ninsn * x;
	uint64_t ip = run->ip;
	bool head = true; /* a run starts where the flow arrived */
	for (uint32_t i = 0; i < run->ninsn; i++) {
		int k = find_image(c, ip);
		if (k < 0) {
			c->outside += x;
		} else {
			struct ptcov_image *m = &c->img[k];
			m->execs += x;
			if (m->bits)
				ptcov_mark(m, ip - m->base, run->lens[i], head, true);
			else
				m->lost += x;
		}
		head = false;
		ip += run->lens[i];
	}
}

void ptcov_on_run(void *ctx, const struct ptflow_run *run)
{
	on_run(ctx, run, 1);
}

void ptcov_use_blocks(struct ptcov *c, struct ptcov_seen *seen, uint32_t nseen)
{
	c->seen = nseen >= 1 && !(nseen & (nseen - 1)) ? seen : NULL;
	c->seen_mask = c->seen ? nseen - 1 : 0;
	if (c->seen)
		efipt_memset(seen, 0, nseen * sizeof(*seen));
}

/* b, a block in image m (e: its entry in seen, or NULL), ends in a
 * conditional branch: a way of it not seen before goes to on_branch. */
static inline void branch(struct ptcov *c, struct ptcov_seen *e, const struct ptflow_blk *b)
{
	if (b->iclass != X86_IC_JCC || b->end != PTFLOW_BEND_BRANCH || !c->on_branch)
		return;
	uint64_t end = b->ip + b->size;
	uint8_t ways = PTCOV_RAN | (!b->next ? 0 : b->next == end ? PTCOV_FELL : PTCOV_TAKEN);
	if (e && e->size == b->size) {
		if ((e->ways | ways) == e->ways)
			return; /* nothing new */
		e->ways |= ways;
	}
	c->on_branch(c->branch_ctx, end, ways);
}

void ptcov_on_blocks(void *ctx, const struct ptflow_batch *batch)
{
	struct ptcov *c = ctx;
	const struct ptflow_blk *b = batch->b;
	size_t n = batch->n;
	/* the stretch of the last block's owner (blocks cluster): [lo, hi] */
	uint64_t lo = c->span_lo, hi = c->span_hi;
	int k = c->span_k;
	for (size_t i = 0; i < n; i++) {
		uint64_t ip = b[i].ip;
		/* instructions (counted batches: times each ran) */
		uint64_t ni = batch->execs ? b[i].ninsn * batch->execs[i] : b[i].ninsn;
		/* in the stretch of no image as the last block: no entry in
		 * seen to look for (below, as it would be counted there) */
		bool fits = b[i].size && b[i].size - 1u <= hi - ip;
		if (k < 0 && c->span_set && ip - lo <= hi - lo && fits) {
			c->insns += ni;
			c->outside += ni;
			continue;
		}
		/* the common case first: marked before, so in one image */
		struct ptcov_seen *e = NULL;
		if (c->seen && b[i].size) {
			e = &c->seen[(ip ^ ip >> 12 ^ b[i].mode) & c->seen_mask];
			if (e->ip == ip && e->mode == b[i].mode && e->size >= b[i].size) {
				c->insns += ni;
				c->img[e->img].execs += ni;
				branch(c, e, &b[i]);
				continue;
			}
		}
		if (!c->span_set || ip - lo > hi - lo) {
			k = ptimg_list_span(c->img, c->nimg, sizeof(*c->img), ip, &c->last,
					    c->overlap, &lo, &hi);
			c->span_set = true;
			c->span_lo = lo;
			c->span_hi = hi;
			c->span_k = k;
		}
		struct ptcov_image *m = k >= 0 ? &c->img[k] : NULL;
		/* wholly inside what one image owns, or in no image: counted
		 * in one go */
		bool fast = b[i].size && b[i].size - 1u <= hi - ip;
		if (fast && !m) {
			c->insns += ni;
			c->outside += ni;
			continue;
		}
		if (fast && m->bits)
			fast = false; /* not in seen (above) */
		else
			e = NULL;
		if (fast) {
			c->insns += ni;
			m->execs += ni;
			if (!m->bits)
				m->lost += ni;
			branch(c, e, &b[i]);
			continue;
		}
		/* marked by instruction, as a run */
		uint8_t lens[PTFLOW_BLOCK_MAX];
		struct ptflow_run r = { ip, lens, 0, b[i].mode, b[i].iclass };
		r.ninsn = ptflow_blk_lens(batch->image, &b[i], lens);
		on_run(c, &r, batch->execs ? batch->execs[i] : 1);
		if (e && r.ninsn == b[i].ninsn) {
			if (e->ip != ip || e->mode != b[i].mode || e->size != b[i].size)
				e->ways = 0; /* the branch at its end is another */
			if (e->ip != ip || e->mode != b[i].mode)
				e->size = 0;
			e->ip = ip;
			e->mode = b[i].mode;
			e->img = (uint32_t)k;
			if (b[i].size > e->size)
				e->size = b[i].size;
		}
		branch(c, e, &b[i]);
	}
}

static unsigned popcount8(uint8_t b)
{
	unsigned n = 0;
	for (; b; b &= (uint8_t)(b - 1))
		n++;
	return n;
}

/* Walk the covered bytes from *pos: the next block [start, end) cut at
 * heads and at limit bytes. */
static bool next_range(const struct ptcov_image *m, uint64_t *pos, uint64_t limit,
		       uint64_t *start, uint64_t *end)
{
	if (!m->bits)
		return false;
	const uint8_t *cov = COVER(m), *head = HEAD(m);
	uint64_t i = *pos;
	while (i < m->size) {
		if (!(i & 7) && !cov[i >> 3]) {
			i += 8;
			continue;
		}
		if (bit(cov, i))
			break;
		i++;
	}
	if (i >= m->size)
		return false;
	*start = i;
	for (i++; i < m->size && i - *start < limit && bit(cov, i) && !bit(head, i); i++)
		;
	*end = i;
	*pos = i;
	return true;
}

bool ptcov_insn_at(const struct ptcov_image *m, uint64_t off)
{
	return m->bits && off < m->size && bit(START(m), off);
}

void ptcov_image_stat(const struct ptcov_image *m, struct ptcov_stat *st)
{
	efipt_memset(st, 0, sizeof(*st));
	if (!m->bits)
		return;
	uint64_t nb = NB(m);
	for (uint64_t i = 0; i < nb; i++) {
		st->insns += popcount8(START(m)[i]);
		st->bytes += popcount8(COVER(m)[i]);
	}
	uint64_t pos = 0, s, e;
	while (next_range(m, &pos, ~0ull, &s, &e))
		st->blocks++;
}

bool ptcov_next_block(const struct ptcov_image *m, uint64_t *pos, uint32_t *off,
		      uint16_t *size)
{
	uint64_t s, e;
	/* drcov offsets are 32 bits: coverage past 4 GiB into an image is not
	 * written (an image that large is not firmware) */
	if (!next_range(m, pos, PTCOV_BLOCK_MAX, &s, &e) || s > 0xffffffffu)
		return false;
	*off = (uint32_t)s;
	*size = (uint16_t)(e - s);
	return true;
}

uint64_t ptcov_drcov_blocks(const struct ptcov *c)
{
	uint64_t n = 0;
	for (unsigned k = 0; k < c->nimg; k++) {
		uint64_t pos = 0;
		uint32_t off;
		uint16_t size;
		while (ptcov_next_block(&c->img[k], &pos, &off, &size))
			n++;
	}
	return n;
}

void ptcov_drcov_path(struct strbuf *sb, const char *path)
{
	for (const char *p = path; *p; p++) {
		unsigned char ch = (unsigned char)*p;
		bool bad = ch < 0x20 || ch == 0x7f || (ch == ',' && p[1] == ' ');
		sb_putc(sb, bad ? '?' : *p);
	}
}

uint64_t ptcov_drcov_write(const struct ptcov *c, const char *flavor,
			   void (*put)(void *ctx, const void *p, size_t n), void *ctx)
{
	char line[PTCOV_PATH_MAX + 128];
	struct strbuf sb;
	uint64_t total = 0;
	sb_init(&sb, line, sizeof(line));
	sb_printf(&sb, "DRCOV VERSION: 2\nDRCOV FLAVOR: %s\n"
		       "Module Table: version 2, count %u\nColumns: id, base, end, entry, path\n",
		  flavor, c->nimg);
	put(ctx, line, sb.len);
	total += sb.len;
	for (unsigned k = 0; k < c->nimg; k++) {
		const struct ptcov_image *m = &c->img[k];
		sb_reset(&sb);
		sb_printf(&sb, "%u, 0x%016llx, 0x%016llx, 0x%016llx, ", k,
			  (unsigned long long)m->base, (unsigned long long)(m->base + m->size),
			  (unsigned long long)m->entry);
		ptcov_drcov_path(&sb, m->path);
		sb_putc(&sb, '\n');
		put(ctx, line, sb.len);
		total += sb.len;
	}
	sb_reset(&sb);
	sb_printf(&sb, "BB Table: %llu bbs\n", (unsigned long long)ptcov_drcov_blocks(c));
	put(ctx, line, sb.len);
	total += sb.len;
	/* struct { u32 start; u16 size; u16 id; } little-endian, in batches */
	uint8_t batch[8 * 64];
	size_t nb = 0;
	for (unsigned k = 0; k < c->nimg; k++) {
		uint64_t pos = 0;
		uint32_t off;
		uint16_t size;
		while (ptcov_next_block(&c->img[k], &pos, &off, &size)) {
			uint8_t *e = batch + nb;
			e[0] = (uint8_t)off;
			e[1] = (uint8_t)(off >> 8);
			e[2] = (uint8_t)(off >> 16);
			e[3] = (uint8_t)(off >> 24);
			e[4] = (uint8_t)size;
			e[5] = (uint8_t)(size >> 8);
			e[6] = (uint8_t)k;
			e[7] = (uint8_t)(k >> 8);
			nb += 8;
			if (nb == sizeof(batch)) {
				put(ctx, batch, nb);
				total += nb;
				nb = 0;
			}
		}
	}
	if (nb) {
		put(ctx, batch, nb);
		total += nb;
	}
	return total;
}
