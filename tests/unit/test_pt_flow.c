/*
 * Flow decoder against ground truth: traces synthesized over real code (ELF
 * programs and libraries on this machine, efipt.efi as a PE32+ image) with
 * many seeds and packet mixes; the decoder must reproduce every executed
 * instruction and every event (IP and payload) exactly. Events that bind
 * to no instruction (MWAIT, PWRE, PWRX, EVD) are compared as a sequence of
 * their own. With DisTNT the decoded stream is the truth with gaps: the
 * instructions from a GAP to where the synthesizer says the flow can be
 * followed again are left out. Also: a hand-assembled buffer with PTWRITE
 * and MWAIT instructions.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/pt_flow.h"
#include "core/pt_synth.h"
#include "core/pt_writer.h"
#include "core/pt_summary.h"
#include "core/pt_cov.h"
#include "core/mem.h"
#include "core/x86_insn.h"
#include "host/input/pt_sections.h"
#include "host/util/grow.h"

struct item {
	uint8_t kind;	/* 0: instruction; else 1 + enum ptflow_ev; RESYNC */
	uint8_t has_ip;
	uint8_t flag;
	uint64_t ip;
	uint64_t target;
	uint64_t value, aux;
};
#define RESYNC 0xff

struct seq {
	struct item *v;
	size_t n, cap;
};

static struct item *seq_add(struct seq *s, uint8_t kind, bool has_ip, uint64_t ip, uint64_t target)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 4096;
		s->v = realloc(s->v, s->cap * sizeof(*s->v));
		if (!s->v)
			abort();
	}
	struct item *it = &s->v[s->n++];
	it->kind = kind;
	it->has_ip = has_ip;
	it->ip = has_ip ? ip : 0;
	it->target = target;
	it->flag = 0;
	it->value = 0;
	it->aux = 0;
	return it;
}

/* Events that bind to no instruction: a sequence of their own. */
static bool unbound(int type)
{
	return type == PTFLOW_EV_MWAIT || type == PTFLOW_EV_PWRE || type == PTFLOW_EV_PWRX ||
	       type == PTFLOW_EV_EVD;
}

struct streams {
	struct seq seq;		/* instructions and bound events */
	struct seq free;	/* unbound events */
};

static void truth_insn(void *ctx, uint64_t ip)
{
	struct streams *t = ctx;
	seq_add(&t->seq, 0, true, ip, 0);
}

static void truth_event(void *ctx, const struct ptsynth_event *ev)
{
	struct streams *t = ctx;
	if (ev->type == PTSYNTH_EV_RESYNC) {
		seq_add(&t->seq, RESYNC, false, 0, 0);
		return;
	}
	struct item *it = seq_add(unbound(ev->type) ? &t->free : &t->seq, (uint8_t)(1 + ev->type),
				  ev->has_ip, ev->ip, ev->type == PTFLOW_EV_INTERRUPT ? ev->target : 0);
	it->flag = ev->flag;
	it->value = ev->value;
	it->aux = ev->aux;
}

struct got {
	struct seq seq, free;
	unsigned errors;
	char first_error[200];
	/* blocks (ptflow_on_blocks()): expanded into seq with the lengths
	 * ptflow_blk_lens() gives; each must hold together */
	uint64_t want_next;	/* the last block's next, until an event */
	unsigned bad_blocks;
	char bad_block[200];
};

static void got_blocks(void *ctx, const struct ptflow_batch *batch)
{
	struct got *g = ctx;
	const struct ptflow_blk *b = batch->b;
	size_t n = batch->n;
	for (size_t i = 0; i < n; i++) {
		uint8_t lens[PTFLOW_BLOCK_MAX];
		unsigned k = ptflow_blk_lens(batch->image, &b[i], lens), size = 0;
		uint64_t ip = b[i].ip;
		for (unsigned j = 0; j < k; j++) {
			seq_add(&g->seq, 0, true, ip, 0);
			ip += lens[j];
			size += lens[j];
		}
		const char *bad = k != b[i].ninsn ? "lengths for fewer instructions"
				  : size != b[i].size ? "size is not the sum of the lengths"
				  : b[i].after != b[i].ip + b[i].size ? "after is not ip + size"
				  : g->want_next && b[i].ip != g->want_next ? "not where the last block went"
				  : b[i].end > PTFLOW_BEND_CUT ? "end out of range" : NULL;
		if (bad && !g->bad_blocks++)
			snprintf(g->bad_block, sizeof(g->bad_block), "block %llx (%u insns, %u bytes): %s",
				 (unsigned long long)b[i].ip, b[i].ninsn, b[i].size, bad);
		g->want_next = b[i].next;
	}
}

static void got_run(void *ctx, const struct ptflow_run *r)
{
	struct got *g = ctx;
	uint64_t ip = r->ip;
	for (uint32_t i = 0; i < r->ninsn; i++) {
		seq_add(&g->seq, 0, true, ip, 0);
		ip += r->lens[i];
	}
}

static void got_event(void *ctx, const struct ptflow_event *ev)
{
	struct got *g = ctx;
	g->want_next = 0;
	if (ev->type == PTFLOW_EV_ERROR) {
		if (!g->errors++)
			snprintf(g->first_error, sizeof(g->first_error), "[%llx, %llx: error: %s]",
				 (unsigned long long)ev->offset, (unsigned long long)ev->ip, ev->msg);
		return;
	}
	struct item *it = seq_add(unbound(ev->type) ? &g->free : &g->seq, (uint8_t)(1 + ev->type),
				  ev->has_ip, ev->ip, ev->type == PTFLOW_EV_INTERRUPT ? ev->target : 0);
	it->flag = ev->type == PTFLOW_EV_PWRE && ev->flag;
	it->value = ev->value;
	it->aux = ev->type == PTFLOW_EV_PTWRITE || ev->type == PTFLOW_EV_EVD ? ev->aux : 0;
}

/* ---- regions (ptflow_blk_regions()) ---------------------------------------
 * The same trace decoded into blocks with and without regions: the blocks
 * with regions must be the blocks without, some of them merged as the
 * contract in pt_flow.h allows, and nothing else. */

/* A block or an event as delivered, in order. */
struct rec {
	uint64_t ip, after, next;
	uint16_t ninsn, size;
	uint8_t iclass, end;
	uint8_t ev;		/* 0: a block; else 1 + enum ptflow_ev */
};

struct recs {
	struct rec *v;
	size_t n, cap;
};

static struct rec *rec_add(struct recs *r)
{
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 4096;
		r->v = realloc(r->v, r->cap * sizeof(*r->v));
		if (!r->v)
			abort();
	}
	memset(&r->v[r->n], 0, sizeof(r->v[0]));
	return &r->v[r->n++];
}

static void rec_blocks(void *ctx, const struct ptflow_batch *batch)
{
	const struct ptflow_blk *b = batch->b;
	size_t n = batch->n;
	for (size_t i = 0; i < n; i++)
		*rec_add(ctx) = (struct rec){ b[i].ip, b[i].after, b[i].next, b[i].ninsn,
					      b[i].size, b[i].iclass, b[i].end, 0 };
}

static void rec_event(void *ctx, const struct ptflow_event *ev)
{
	struct rec *r = rec_add(ctx);
	r->ev = (uint8_t)(1 + ev->type);
	r->ip = ev->has_ip ? ev->ip : 0;
}

/* Regions for a trace: the code between two function entries (sorted), or
 * aligned 64-byte pieces when there are none (blocks cross them often). */
struct regions {
	const uint64_t *entry;
	size_t n;
};

static uint64_t region_end(void *ctx, uint64_t ip)
{
	const struct regions *rg = ctx;
	if (!rg->n)
		return (ip | 63) + 1;
	size_t lo = 0, hi = rg->n; /* the first entry above ip */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (rg->entry[mid] <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && lo < rg->n ? rg->entry[lo] : 0;
}

/* Control goes on after an instruction of this class without leaving the
 * code it is in, unless its target lies elsewhere. */
static bool goes_on(unsigned ic)
{
	return ic == X86_IC_OTHER || ic == X86_IC_JCC || ic == X86_IC_JMP_DIRECT;
}

/* Classes whose return comes back to the address after the instruction. */
static bool comes_back_after(unsigned ic)
{
	return ic == X86_IC_CALL_DIRECT || ic == X86_IC_CALL_INDIRECT || ic == X86_IC_FAR_CALL ||
	       ic == X86_IC_INT || ic == X86_IC_SYSCALL || ic == X86_IC_SYSENTER ||
	       ic == X86_IC_VMCALL;
}

/* b (with regions) against a (without): true if b is a merged down; else
 * why not. */
static bool regions_match(const struct recs *a, const struct recs *b, struct regions *rg,
			  char *why, size_t whylen)
{
	size_t j = 0;
	for (size_t i = 0; i < b->n; i++) {
		const struct rec *x = &b->v[i];
		const char *bad = NULL;
		size_t k = j;
		if (j == a->n) {
			bad = "more than without regions";
		} else if (x->ev || a->v[j].ev) {
			if (x->ev != a->v[j].ev || x->ip != a->v[j].ip)
				bad = "events differ";
		} else if (x->ip != a->v[j].ip) {
			bad = "starts elsewhere";
		} else {
			unsigned sum = a->v[j].ninsn;
			while (sum < x->ninsn && k + 1 < a->n && !a->v[k + 1].ev)
				sum += a->v[++k].ninsn;
			const struct rec *last = &a->v[k];
			uint64_t end = region_end(rg, x->ip);
			if (sum != x->ninsn)
				bad = "not a sum of whole blocks";
			else if (k == j && (x->size != last->size || x->after != last->after ||
					    x->iclass != last->iclass || x->end != last->end))
				bad = "a block of its own changed";
			else if (k > j && !end)
				bad = "merged outside every region";
			else if (x->iclass != last->iclass || x->end != last->end)
				bad = "not the last block's class";
			/* (a block handed over before the flow went on has none) */
			else if (x->next && last->next && x->next != last->next)
				bad = "not where the last block went";
			else if (k > j && comes_back_after(x->iclass) &&
				 x->after != last->ip + last->size)
				bad = "after is not where the last instruction ends";
			else if (k > j && (x->ip + x->size <= x->ip || x->ip + x->size > end))
				bad = "ip + size is not in the region past ip";
			for (size_t m = j; m < k && !bad; m++) {
				const struct rec *y = &a->v[m], *z = &a->v[m + 1];
				if (region_end(rg, y->ip) != end || y->ip + y->size > end ||
				    y->ip + y->size <= y->ip || region_end(rg, z->ip) != end ||
				    z->ip + z->size > end || z->ip + z->size <= z->ip)
					bad = "merged blocks not all in one region";
				else if (!goes_on(y->iclass) &&
					 !(y->iclass == X86_IC_CALL_DIRECT && z->ip == y->ip + y->size))
					bad = "merged across a transfer out";
			}
		}
		if (bad) {
			snprintf(why, whylen, "item %zu (%llx, %u insns): %s", i,
				 (unsigned long long)x->ip, x->ninsn, bad);
			return false;
		}
		j = k + 1;
	}
	if (j != a->n) {
		snprintf(why, whylen, "%zu blocks or events fewer than without regions", a->n - j);
		return false;
	}
	return true;
}

static const char *kind_name(uint8_t k)
{
	return k == RESYNC ? "resync" : k ? ptflow_ev_name(k - 1) : "insn";
}

static bool same(const struct item *x, const struct item *y)
{
	return x->kind == y->kind && x->has_ip == y->has_ip && x->ip == y->ip &&
	       x->target == y->target && x->flag == y->flag && x->value == y->value &&
	       x->aux == y->aux;
}

/* First difference between truth a and decoded b (index into b), or -1.
 * After a GAP the truth's instructions up to its next RESYNC are not
 * expected (events there are). */
static long compare(const struct seq *a, const struct seq *b, char *why, size_t whylen)
{
	size_t i = 0, j = 0;
	bool gap = false;
	for (; i < a->n; i++) {
		const struct item *x = &a->v[i];
		if (x->kind == RESYNC) {
			gap = false;
			continue;
		}
		if (gap && x->kind == 0)
			continue;
		if (j == b->n) {
			snprintf(why, whylen, "decoded ends at item %zu, truth goes on with %s %llx", j,
				 kind_name(x->kind), (unsigned long long)x->ip);
			return (long)j;
		}
		const struct item *y = &b->v[j];
		if (!same(x, y)) {
			if (getenv("FLOW_DEBUG"))
				for (size_t k = 0; k < a->n; k++)
					if (a->v[k].kind && a->v[k].ip == y->ip)
						printf("#   truth %zu: %s %llx\n", k, kind_name(a->v[k].kind),
						       (unsigned long long)a->v[k].ip);
			if (getenv("FLOW_DEBUG"))
				for (size_t k = i > 40 ? i - 40 : 0; k < i + 30 && k < a->n; k++)
					printf("#   truth %zu: %s %llx\n", k, kind_name(a->v[k].kind),
					       (unsigned long long)a->v[k].ip);
			snprintf(why, whylen, "item %zu: truth %s %llx (%llx), decoded %s %llx (%llx)", j,
				 kind_name(x->kind), (unsigned long long)x->ip,
				 (unsigned long long)x->value, kind_name(y->kind),
				 (unsigned long long)y->ip, (unsigned long long)y->value);
			return (long)j;
		}
		if (x->kind == 1 + PTFLOW_EV_GAP)
			gap = true;
		j++;
	}
	if (j != b->n) {
		snprintf(why, whylen, "length: truth ends, decoded has %zu more", b->n - j);
		return (long)j;
	}
	return -1;
}

static bool in_code(const struct ptsec_image *im, uint64_t a)
{
	uint8_t b;
	return ptsec_read((void *)im, a, &b, 1) == 1;
}

/* Function symbols (STT_FUNC in .symtab/.dynsym) of an ELF file. */
static size_t elf_funcs(const char *path, const struct ptsec_image *im, uint64_t *out, size_t max)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return 0;
	static uint8_t b[64 << 20];
	size_t len = fread(b, 1, sizeof(b), f);
	fclose(f);
	size_t n = 0;
	if (len < 64 || memcmp(b, "\177ELF\2\1", 6))
		return 0;
	uint64_t shoff = efipt_le64(b + 40);
	unsigned shnum = efipt_le16(b + 60);
	if (shoff > len || (uint64_t)shnum * 64 > len - shoff)
		return 0;
	for (unsigned i = 0; i < shnum; i++) {
		const uint8_t *sh = b + shoff + i * 64;
		uint32_t type = efipt_le32(sh + 4);
		if (type != 2 && type != 11)
			continue;
		uint64_t off = efipt_le64(sh + 24), sz = efipt_le64(sh + 32);
		if (off > len || sz > len - off)
			continue;
		for (uint64_t e = off; e + 24 <= off + sz && n < max; e += 24) {
			uint8_t info = b[e + 4];
			uint64_t v = efipt_le64(b + e + 8), size = efipt_le64(b + e + 16);
			if ((info & 0xf) == 2 && size && in_code(im, v))
				out[n++] = v;
		}
	}
	return n;
}

/* Function entries: ELF function symbols, or ENDBR64 (f3 0f 1e fa) in the
 * code of the image. */
static size_t find_entries(const char *path, const struct ptsec_image *im, uint64_t *out, size_t max)
{
	size_t n = elf_funcs(path, im, out, max);
	if (n)
		return n;
	for (size_t s = 0; s < im->n; s++) {
		const struct ptsec *sec = &im->sec[s];
		for (uint64_t i = 0; i + 4 <= sec->size && n < max; i++)
			if (sec->data[i] == 0xf3 && !memcmp(sec->data + i, "\xf3\x0f\x1e\xfa", 4))
				out[n++] = sec->vaddr + i;
	}
	return n;
}

/* ---- counted blocks (ptflow_blocks_counted()) -------------------------------
 * The same trace decoded into blocks one by one and counted: the same
 * blocks, each as often, and every conditional branch going each way as
 * often, where the way is worked out as a coverage consumer does it (the
 * block's next, else the next block in order or an event's IP: a counted
 * decode must hand that block over in order). */

struct tblk {
	uint64_t ip, execs;
	uint16_t ninsn, size;
	uint8_t mode, iclass, end;
};
struct tway {
	uint64_t end;		/* the branch's block's end */
	bool taken;
	uint64_t execs;
};
struct tally {
	struct tblk *b;
	struct tway *w;
	size_t nb, nw, capb, capw;
	uint64_t pending;	/* the end of a branch whose way is due (0: none) */
	uint64_t counted;	/* batches with execs */
};

static void *grow(void *v, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return v;
	*cap = *cap ? *cap * 2 : 4096;
	v = realloc(v, *cap * size);
	if (!v)
		abort();
	return v;
}

static void tally_way(struct tally *t, uint64_t end, uint64_t next, uint64_t execs)
{
	t->w = grow(t->w, &t->capw, t->nw, sizeof(*t->w));
	t->w[t->nw++] = (struct tway){ end, next != end, execs };
}

static void tally_blocks(void *ctx, const struct ptflow_batch *batch)
{
	struct tally *t = ctx;
	const struct ptflow_blk *b = batch->b;
	t->counted += batch->execs != NULL;
	for (size_t i = 0; i < batch->n; i++) {
		uint64_t x = batch->execs ? batch->execs[i] : 1;
		if (!batch->execs && t->pending) {
			tally_way(t, t->pending, b[i].ip, 1);
			t->pending = 0;
		}
		t->b = grow(t->b, &t->capb, t->nb, sizeof(*t->b));
		t->b[t->nb++] = (struct tblk){ b[i].ip, x, b[i].ninsn, b[i].size, b[i].mode,
					       b[i].iclass, b[i].end };
		if (b[i].iclass != X86_IC_JCC || b[i].end != PTFLOW_BEND_BRANCH)
			continue;
		uint64_t end = b[i].ip + b[i].size;
		if (b[i].next)
			tally_way(t, end, b[i].next, x);
		else if (!batch->execs)
			t->pending = end;
	}
}

/* As efipt coverage's lcov: the rule of ptflow_ev_way(). */
static void tally_event(void *ctx, const struct ptflow_event *ev)
{
	struct tally *t = ctx;
	enum ptflow_ev_way w = ptflow_ev_way(ev->type);
	if (w == PTFLOW_WAY_AT_IP && ev->has_ip && t->pending)
		tally_way(t, t->pending, ev->ip, 1);
	if (w == PTFLOW_WAY_LOST || (w == PTFLOW_WAY_AT_IP && ev->has_ip))
		t->pending = 0;
}

static int tblk_cmp(const void *a, const void *b)
{
	const struct tblk *x = a, *y = b;
	if (x->ip != y->ip)
		return x->ip < y->ip ? -1 : 1;
	if (x->ninsn != y->ninsn)
		return x->ninsn < y->ninsn ? -1 : 1;
	if (x->size != y->size)
		return x->size < y->size ? -1 : 1;
	return memcmp(&x->mode, &y->mode, 3);
}

static int tway_cmp(const void *a, const void *b)
{
	const struct tway *x = a, *y = b;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return (int)x->taken - (int)y->taken;
}

/* Sorted, equal entries summed into one: the new count. */
static size_t merge(void *v, size_t n, size_t size, int (*cmp)(const void *, const void *),
		    size_t execs_off)
{
	if (!n)
		return 0; /* v may be NULL */
	qsort(v, n, size, cmp);
	char *p = v;
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t x;
		memcpy(&x, p + i * size + execs_off, sizeof(x));
		if (m && !cmp(p + (m - 1) * size, p + i * size)) {
			uint64_t y;
			memcpy(&y, p + (m - 1) * size + execs_off, sizeof(y));
			y += x;
			memcpy(p + (m - 1) * size + execs_off, &y, sizeof(y));
		} else {
			memmove(p + m++ * size, p + i * size, size);
		}
	}
	return m;
}

/* The counted tally c against the one-by-one tally o: NULL if the same. */
static const char *tally_diff(struct tally *o, struct tally *c)
{
	o->nb = merge(o->b, o->nb, sizeof(*o->b), tblk_cmp, offsetof(struct tblk, execs));
	c->nb = merge(c->b, c->nb, sizeof(*c->b), tblk_cmp, offsetof(struct tblk, execs));
	o->nw = merge(o->w, o->nw, sizeof(*o->w), tway_cmp, offsetof(struct tway, execs));
	c->nw = merge(c->w, c->nw, sizeof(*c->w), tway_cmp, offsetof(struct tway, execs));
	if (o->nb != c->nb)
		return "another number of distinct blocks";
	for (size_t i = 0; i < o->nb; i++)
		if (tblk_cmp(&o->b[i], &c->b[i]) || o->b[i].execs != c->b[i].execs)
			return "a block ran another number of times";
	if (o->nw != c->nw)
		return "another number of branch ways";
	for (size_t i = 0; i < o->nw; i++)
		if (tway_cmp(&o->w[i], &c->w[i]) || o->w[i].execs != c->w[i].execs)
			return "a branch went a way another number of times";
	return NULL;
}

static void tally_free(struct tally *t)
{
	free(t->b);
	free(t->w);
}

static struct ptflow_block cache[1 << 12];
static unsigned timed_traces;	/* traces whose blocks' times were checked */
static unsigned region_timed_fewer;	/* ... PTFLOW_TIME_REGIONS gave fewer blocks */

/*
 * Each instruction's time, run-length coded: from timed blocks (a batch's
 * parts, ptflow_batch_part()) or from runs, which the decoder delivers as
 * it walks, so that ptflow_time() read then is their time.
 */
struct time_run {
	uint64_t tsc;		/* UINT64_MAX: no time yet */
	uint8_t cbr;
	uint64_t n;
};
struct times {
	struct ptflow_decoder *d;	/* runs: the decoder delivering them */
	struct time_run *v;
	size_t len, cap;
	bool oom;
	char bad_marks[120];
};

static void times_add(struct times *x, bool has_time, uint64_t tsc, uint8_t cbr, uint64_t n)
{
	tsc = has_time ? tsc : UINT64_MAX;
	if (x->len && x->v[x->len - 1].tsc == tsc && x->v[x->len - 1].cbr == cbr) {
		x->v[x->len - 1].n += n;
		return;
	}
	if (!grow_array((void **)&x->v, &x->cap, x->len, sizeof(*x->v), 1024)) {
		x->oom = true;
		return;
	}
	x->v[x->len++] = (struct time_run){ tsc, cbr, n };
}

static void timed_run(void *ctx, const struct ptflow_run *r)
{
	struct times *x = ctx;
	uint64_t tsc;
	uint8_t cbr;
	bool has = ptflow_time(x->d, &tsc, &cbr);
	times_add(x, has, tsc, cbr, r->ninsn);
}

static void timed_blocks(void *ctx, const struct ptflow_batch *batch)
{
	struct times *x = ctx;
	for (size_t k = 0; k < batch->nmarks; k++) {
		uint32_t at = batch->marks[k].at;
		if (!x->bad_marks[0] && (!at || at >= batch->n || (k && at <= batch->marks[k - 1].at)))
			snprintf(x->bad_marks, sizeof(x->bad_marks),
				 "mark %zu at block %u of %zu (the last at %u)", k, at, batch->n,
				 k ? batch->marks[k - 1].at : 0);
	}
	for (size_t k = 0; k <= batch->nmarks; k++) {
		struct ptflow_batch part = ptflow_batch_part(batch, k);
		for (size_t i = 0; i < part.n; i++)
			times_add(x, part.has_time, part.tsc, part.cbr, part.b[i].ninsn);
	}
}

static void timed_event(void *ctx, const struct ptflow_event *ev)
{
	(void)ctx;
	(void)ev;
}

/* Blocks timed PTFLOW_TIME_REGIONS, one entry per block (times_add()
 * would join blocks of one time). */
static void region_timed_blocks(void *ctx, const struct ptflow_batch *batch)
{
	struct times *x = ctx;
	for (size_t k = 0; k <= batch->nmarks; k++) {
		struct ptflow_batch part = ptflow_batch_part(batch, k);
		for (size_t i = 0; i < part.n; i++) {
			if (!grow_array((void **)&x->v, &x->cap, x->len, sizeof(*x->v), 1024)) {
				x->oom = true;
				return;
			}
			x->v[x->len++] = (struct time_run){ part.has_time ? part.tsc : UINT64_MAX,
							    part.cbr, part.b[i].ninsn };
		}
	}
}

/* With PTFLOW_TIME_REGIONS each block has the time its first instruction
 * has in runs (a block merged across a timing packet keeps the time it
 * began with, the next block has the new one), and they hold the same
 * instructions; false and why. */
static bool region_times_match_runs(const struct ptflow_config *fc, const uint8_t *buf,
				    size_t size, const struct times *runs, struct regions *rg,
				    char *why, size_t whylen)
{
	static struct ptflow_decoder bd;
	struct times blocks = { &bd, NULL, 0, 0, false, "" };
	struct ptflow_sink bs = { &blocks, NULL, timed_event };
	ptflow_init(&bd, fc, &bs);
	ptflow_on_blocks(&bd, region_timed_blocks);
	ptflow_blocks_timed(&bd, PTFLOW_TIME_REGIONS);
	ptflow_blk_regions(&bd, region_end, rg);
	ptflow_decode(&bd, buf, size, 0);
	/* each block timed: no fewer blocks (on an MTC trace, many more) */
	struct times each = { &bd, NULL, 0, 0, false, "" };
	bs.ctx = &each;
	ptflow_init(&bd, fc, &bs);
	ptflow_on_blocks(&bd, region_timed_blocks);
	ptflow_blocks_timed(&bd, PTFLOW_TIME_BLOCKS);
	ptflow_blk_regions(&bd, region_end, rg);
	ptflow_decode(&bd, buf, size, 0);
	if (blocks.len < each.len)
		region_timed_fewer++;
	free(each.v);
	uint64_t at = 0, run_end = 0; /* the block's first instruction; the run's end */
	size_t r = 0, i = 0;
	for (; i < blocks.len && !blocks.oom; i++) {
		while (r < runs->len && run_end + runs->v[r].n <= at)
			run_end += runs->v[r++].n;
		if (r == runs->len || runs->v[r].tsc != blocks.v[i].tsc ||
		    runs->v[r].cbr != blocks.v[i].cbr)
			break;
		at += blocks.v[i].n;
	}
	uint64_t total = 0;
	for (size_t k = 0; k < runs->len; k++)
		total += runs->v[k].n;
	bool ok = false;
	if (blocks.oom)
		snprintf(why, whylen, "out of memory");
	else if (i < blocks.len)
		snprintf(why, whylen, "time regions: block %zu of %zu (insn %llu) at %llx, its run's %llx",
			 i, blocks.len, (unsigned long long)at, (unsigned long long)blocks.v[i].tsc,
			 (unsigned long long)(r < runs->len ? runs->v[r].tsc : 0));
	else if (at != total)
		snprintf(why, whylen, "time regions: %llu instructions, runs %llu",
			 (unsigned long long)at, (unsigned long long)total);
	else
		ok = true;
	free(blocks.v);
	return ok;
}

/* Timed blocks give each instruction the time its run has (with regions rg
 * too: a block merged across a timing packet would not; with
 * PTFLOW_TIME_REGIONS and regions rg_coarse, each block the time of its
 * start); false and why. */
static bool timed_blocks_match_runs(const struct ptflow_config *fc, const uint8_t *buf,
				    size_t size, struct regions *rg, struct regions *rg_coarse,
				    char *why, size_t whylen)
{
	static struct ptflow_decoder rd, bd;
	struct times runs = { &rd, NULL, 0, 0, false, "" }, blocks = { &bd, NULL, 0, 0, false, "" };
	struct ptflow_sink rs = { &runs, timed_run, timed_event }, bs = { &blocks, NULL, timed_event };
	ptflow_init(&rd, fc, &rs);
	ptflow_decode(&rd, buf, size, 0);
	ptflow_init(&bd, fc, &bs);
	ptflow_on_blocks(&bd, timed_blocks);
	ptflow_blocks_timed(&bd, PTFLOW_TIME_BLOCKS);
	if (rg)
		ptflow_blk_regions(&bd, region_end, rg);
	ptflow_decode(&bd, buf, size, 0);
	bool ok = false;
	size_t i = 0;
	while (i < runs.len && i < blocks.len && runs.v[i].tsc == blocks.v[i].tsc &&
	       runs.v[i].cbr == blocks.v[i].cbr && runs.v[i].n == blocks.v[i].n)
		i++;
	if (runs.oom || blocks.oom)
		snprintf(why, whylen, "out of memory");
	else if (blocks.bad_marks[0])
		snprintf(why, whylen, "%s", blocks.bad_marks);
	else if (i < runs.len || i < blocks.len)
		snprintf(why, whylen, "time %zu of %zu/%zu: runs %llu insns at %llx, blocks %llu at %llx",
			 i, runs.len, blocks.len,
			 (unsigned long long)(i < runs.len ? runs.v[i].n : 0),
			 (unsigned long long)(i < runs.len ? runs.v[i].tsc : 0),
			 (unsigned long long)(i < blocks.len ? blocks.v[i].n : 0),
			 (unsigned long long)(i < blocks.len ? blocks.v[i].tsc : 0));
	else
		ok = region_times_match_runs(fc, buf, size, &runs, rg_coarse, why, whylen);
	if (ok && runs.len > 1) /* the time moved */
		timed_traces++;
	free(runs.v);
	free(blocks.v);
	return ok;
}

struct totals {
	uint64_t insns, events, traces, bytes;
	uint64_t blocks, region_blocks; /* without and with regions */
	uint64_t counted_batches;
	uint64_t kinds[256];
};

/* The knobs a seed turns on: every packet mix comes up with some seeds. */
static void knobs(struct ptsynth_config *sc, uint64_t seed)
{
	sc->max_insns = 150000 + (seed % 7) * 20000;
	sc->psb_period = (uint32_t)(512u << (seed % 5));
	sc->p_interrupt = seed % 3 ? 40 : 0;
	sc->p_ovf = seed % 4 == 1 ? 300 : 0;
	sc->p_disable = seed % 5 == 2 ? 500 : 0;
	sc->disretc = seed % 6 == 5;
	sc->tsc = seed & 1;
	/* time from MTCs or CYCs between the TSCs, now and then both */
	sc->mtc = sc->tsc && seed % 4 == 1;
	sc->cyc = sc->tsc && (seed % 8 == 3 || seed % 8 == 5);
	/* the same bytes as 32- and 16-bit code now and then (MODE.Exec) */
	sc->bits = seed % 11 == 7 ? 32 : seed % 11 == 9 ? 16 : 64;
	sc->p_tsx = seed % 4 == 3 ? 400 : 0;
	sc->p_power = seed % 5 == 1 ? 300 : 0;
	sc->event_trace = seed % 3 == 2;
	/* re-enabled in the other code size (64 <-> 32) */
	sc->p_mode = seed % 7 == 4 ? 20000 : 0;
	/* DisTNT, half of it with DisRETC as 33.3.9 advises (without it the
	 * flow is lost at RETs too) */
	sc->distnt = seed % 8 == 6;
	if (sc->distnt)
		sc->disretc = seed % 16 == 6;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int run_one(const char *name, const struct ptsynth_config *base, uint64_t seed,
		   struct totals *tot, bool quiet)
{
	static uint8_t buf[4 << 20];
	struct ptsynth syn;
	struct ptsynth_config sc = *base;
	sc.seed = seed;
	struct streams truth = { 0 };
	struct ptsynth_sink ss = { &truth, truth_insn, truth_event };
	struct ptsynth_result res;
	char tname[200];
	snprintf(tname, sizeof(tname), "flow: %s seed %llu", name, (unsigned long long)seed);
	if (ptsynth_run(&syn, &sc, &ss, buf, sizeof(buf), &res)) {
		check_named(0, tname, "synthesizer refused");
		return 0;
	}
	struct got got = { 0 };
	struct ptflow_config fc;
	memset(&fc, 0, sizeof(fc));
	fc.image = sc.image;
	fc.cache = seed % 8 == 3 ? NULL : cache;
	fc.cache_size = seed % 8 == 3 ? 0 : (seed % 8 == 4 ? 16 : sizeof(cache) / sizeof(cache[0]));
	fc.disretc = sc.disretc;
	fc.distnt = sc.distnt;
	/* what the synthesizer's MTCs and CYCs count in */
	fc.cpuid15_eax = PTSYNTH_CPUID15_EAX;
	fc.cpuid15_ebx = PTSYNTH_CPUID15_EBX;
	fc.mtc_freq = PTSYNTH_MTC_FREQ;
	fc.nom_freq = PTSYNTH_CBR;
	struct ptflow_sink fs = { &got, got_run, got_event };
	struct ptflow_decoder dec;
	ptflow_init(&dec, &fc, &fs);
	long errs = ptflow_decode(&dec, buf, res.size, 0);
	/* counting only (--stat) takes other paths through the decoder: the
	 * same counts, with the cache as the first pass left it */
	static struct ptflow_decoder quiet_dec;
	struct ptflow_sink none = { NULL, NULL, NULL };
	ptflow_init(&quiet_dec, &fc, &none);
	ptflow_decode(&quiet_dec, buf, res.size, 0);
	/* blocks from the same loops, expanded into instructions: the same
	 * truth */
	static struct ptflow_decoder blk_dec;
	struct got gotb = { 0 };
	struct ptflow_sink bs = { &gotb, NULL, got_event };
	ptflow_init(&blk_dec, &fc, &bs);
	ptflow_on_blocks(&blk_dec, got_blocks);
	ptflow_decode(&blk_dec, buf, res.size, 0);
	char whyb[300] = "";
	long atb = compare(&truth.seq, &gotb.seq, whyb, sizeof(whyb));
	if (atb < 0 && gotb.bad_blocks)
		snprintf(whyb, sizeof(whyb), "%u bad blocks, first %s", gotb.bad_blocks, gotb.bad_block);
	bool blocks_ok = atb < 0 && !gotb.bad_blocks && blk_dec.stat.insns == dec.stat.insns;
	/* the same blocks, and with regions (every other seed the function
	 * entries, else 64-byte pieces) */
	static uint64_t sorted[1 << 16];
	struct regions rg = { sorted, seed % 2 ? 0 : sc.nentries };
	if (rg.n > sizeof(sorted) / sizeof(sorted[0]))
		rg.n = 0;
	memcpy(sorted, sc.entries, rg.n * sizeof(sorted[0]));
	qsort(sorted, rg.n, sizeof(sorted[0]), cmp_u64);
	struct recs plain = { 0 }, merged = { 0 };
	struct ptflow_sink ps = { &plain, NULL, rec_event }, ms = { &merged, NULL, rec_event };
	ptflow_init(&blk_dec, &fc, &ps);
	ptflow_on_blocks(&blk_dec, rec_blocks);
	ptflow_blocks_timed(&blk_dec, seed % 3 == 0 ? PTFLOW_TIME_BLOCKS : PTFLOW_TIME_NONE);
	ptflow_decode(&blk_dec, buf, res.size, 0);
	ptflow_init(&blk_dec, &fc, &ms);
	ptflow_on_blocks(&blk_dec, rec_blocks);
	ptflow_blocks_timed(&blk_dec, seed % 3 == 0 ? PTFLOW_TIME_BLOCKS : PTFLOW_TIME_NONE);
	ptflow_blk_regions(&blk_dec, region_end, &rg);
	ptflow_decode(&blk_dec, buf, res.size, 0);
	char whyr[300] = "";
	if (!regions_match(&plain, &merged, &rg, whyr, sizeof(whyr)) && blocks_ok) {
		blocks_ok = false;
		snprintf(whyb, sizeof(whyb), "with regions: %s", whyr);
	}
	/* the same blocks counted (with the cache only) */
	if (fc.cache_size) {
		static uint64_t counts[2 << 12];
		struct tally one = { 0 }, counted = { 0 };
		struct ptflow_sink os = { &one, NULL, tally_event }, cs = { &counted, NULL, tally_event };
		ptflow_init(&blk_dec, &fc, &os);
		ptflow_on_blocks(&blk_dec, tally_blocks);
		ptflow_decode(&blk_dec, buf, res.size, 0);
		ptflow_init(&blk_dec, &fc, &cs);
		ptflow_on_blocks(&blk_dec, tally_blocks);
		ptflow_blocks_counted(&blk_dec, counts);
		ptflow_decode(&blk_dec, buf, res.size, 0);
		const char *bad = tally_diff(&one, &counted);
		if (bad && blocks_ok) {
			blocks_ok = false;
			snprintf(whyb, sizeof(whyb), "counted: %s", bad);
		}
		tot->counted_batches += counted.counted;
		tally_free(&one);
		tally_free(&counted);
	}
	/* each block's time, from timed batches (with regions or without) */
	if (sc.tsc && blocks_ok &&
	    !timed_blocks_match_runs(&fc, buf, res.size, seed % 4 == 1 ? &rg : NULL, &rg, whyr,
				     sizeof(whyr))) {
		blocks_ok = false;
		snprintf(whyb, sizeof(whyb), "timed: %s", whyr);
	}
	tot->blocks += plain.n;
	tot->region_blocks += merged.n;
	free(plain.v);
	free(merged.v);
	bool same = quiet_dec.stat.insns == dec.stat.insns &&
		    quiet_dec.stat.branches == dec.stat.branches &&
		    quiet_dec.stat.events == dec.stat.events &&
		    quiet_dec.stat.errors == dec.stat.errors &&
		    (sc.distnt || dec.stat.insns == res.insns); /* DisTNT: gaps */
	char why[300] = "", why2[300] = "";
	long at = compare(&truth.seq, &got.seq, why, sizeof(why));
	long at2 = compare(&truth.free, &got.free, why2, sizeof(why2));
	int ok = errs == 0 && at < 0 && at2 < 0 && truth.seq.n > 1000 && same && blocks_ok;
	if (!blocks_ok)
		snprintf(why, sizeof(why), "blocks: %s", whyb[0] ? whyb : "counts differ");
	if (!same)
		snprintf(why, sizeof(why), "counts without a sink: %llu insns %llu branches "
			 "%llu events %llu errors, with: %llu %llu %llu %llu, truth %llu insns",
			 (unsigned long long)quiet_dec.stat.insns,
			 (unsigned long long)quiet_dec.stat.branches,
			 (unsigned long long)quiet_dec.stat.events,
			 (unsigned long long)quiet_dec.stat.errors, (unsigned long long)dec.stat.insns,
			 (unsigned long long)dec.stat.branches, (unsigned long long)dec.stat.events,
			 (unsigned long long)dec.stat.errors, (unsigned long long)res.insns);
	if (!ok && at >= 0 && getenv("FLOW_DEBUG"))
		for (long i = at > 8 ? at - 8 : 0; i < at + 2; i++)
			printf("#   %ld: decoded %s %llx\n", i,
			       (size_t)i < got.seq.n ? kind_name(got.seq.v[i].kind) : "-",
			       (unsigned long long)((size_t)i < got.seq.n ? got.seq.v[i].ip : 0));
	if (!ok && getenv("FLOW_DUMP")) {
		FILE *df = fopen(getenv("FLOW_DUMP"), "wb");
		if (df) {
			fwrite(buf, 1, res.size, df);
			fclose(df);
		}
	}
	if (!ok || !quiet)
		check_named(ok, tname, "%zu truth items, %ld errors %s; %s%s%s", truth.seq.n, errs,
			    got.first_error, why, at2 >= 0 ? "; unbound events: " : "", why2);
	for (size_t i = 0; i < truth.seq.n; i++)
		tot->kinds[truth.seq.v[i].kind]++;
	for (size_t i = 0; i < truth.free.n; i++)
		tot->kinds[truth.free.v[i].kind]++;
	tot->insns += res.insns;
	tot->events += truth.seq.n + truth.free.n - res.insns;
	tot->traces++;
	tot->bytes += res.size;
	free(truth.seq.v);
	free(truth.free.v);
	free(got.seq.v);
	free(got.free.v);
	free(gotb.seq.v);
	free(gotb.free.v);
	return ok;
}

static void print_totals(const char *what, int nseeds, const struct totals *tot)
{
	printf("# %s: %d seeds, %llu instructions, %llu events, %llu trace bytes\n", what, nseeds,
	       (unsigned long long)tot->insns, (unsigned long long)tot->events,
	       (unsigned long long)tot->bytes);
	printf("#  ");
	for (int k = 1; k < 256; k++)
		if (tot->kinds[k])
			printf(" %s=%llu", kind_name((uint8_t)k), (unsigned long long)tot->kinds[k]);
	printf("\n");
}

/* drcov bytes to a buffer */
struct covout {
	unsigned char *buf;
	size_t len, cap;
};

static void cov_put(void *ctx, const void *p, size_t n)
{
	struct covout *o = ctx;
	if (o->len + n <= o->cap)
		memcpy(o->buf + o->len, p, n);
	o->len += n;
}

/*
 * The decode summary (efipt decode) and the coverage (efipt coverage, the
 * firmware's coverage.drcov) from blocks equal those from runs: the code
 * cut into images of 0x1003 bytes, so that blocks cross their ends, every
 * fifth left out (outside every image), every seventh without bitmaps.
 * Blocks with the memo of marked blocks, and without.
 */
static void summary_check(const char *path, struct ptsec_image *im, const struct ptsynth_config *base)
{
	static uint8_t buf[4 << 20];
	static struct ptsynth syn;
	static struct ptflow_block scache[1 << 14];
	static struct ptsum_image img[4096];
	static struct ptcov_image cimg[4][4096];
	static struct ptcov_seen seen[1 << 12];
	static uint64_t counts[2 << 14];
	static char text[4][1 << 16];
	static unsigned char drcov[4][1 << 20];
	struct covout co[4];
	static char ctext[4][4096];
	unsigned long long seen_all = 0; /* runs: distinct, lost and outside all seen */
	struct ptsynth_result res;
	if (ptsynth_run(&syn, base, NULL, buf, sizeof(buf), &res))
		return;
	unsigned n = 0, k = 0;
	for (size_t i = 0; i < im->n; i++)
		for (uint64_t a = im->sec[i].vaddr; a < im->sec[i].vaddr + im->sec[i].size && n < 4096;
		     a += 0x1003)
			if (k++ % 5 != 4) {
				img[n].base = a;
				img[n].size = 0x1003;
				snprintf(img[n].name, sizeof(img[n].name), "part%u", n);
				n++;
			}
	/* runs, blocks, blocks without the memo, blocks counted */
	for (int v = 0; v < 4; v++) {
		static struct ptsum sum;
		static struct ptcov cov;
		static struct ptflow_decoder dec;
		struct ptflow_config fc;
		memset(&fc, 0, sizeof(fc));
		fc.image = base->image;
		fc.cache = scache;
		fc.cache_size = sizeof(scache) / sizeof(scache[0]);
		ptsum_init(&sum, img, n);
		for (unsigned i = 0; i < n; i++) {
			struct ptcov_image *m = &cimg[v][i];
			free(m->bits);
			memset(m, 0, sizeof(*m));
			m->base = img[i].base;
			m->size = img[i].size;
			ptcov_set_name(m, img[i].name);
			if (i % 7 != 6)
				m->bits = malloc(ptcov_bits_size(m->size));
		}
		ptcov_init(&cov, cimg[v], n);
		struct ptflow_sink sink = { &sum, v ? NULL : ptsum_on_run, ptsum_on_event };
		ptflow_init(&dec, &fc, &sink);
		if (v)
			ptflow_on_blocks(&dec, ptsum_on_blocks);
		if (v == 3)
			ptflow_blocks_counted(&dec, counts);
		ptflow_decode(&dec, buf, res.size, 0);
		struct strbuf sb;
		sb_init(&sb, text[v], sizeof(text[v]));
		ptsum_format(&sum, &dec.stat, 4096, &sb);
		/* the coverage in a second pass over the same trace */
		struct ptflow_sink csink = { &cov, v ? NULL : ptcov_on_run, NULL };
		ptflow_init(&dec, &fc, &csink);
		if (v) {
			ptflow_on_blocks(&dec, ptcov_on_blocks);
			ptcov_use_blocks(&cov, v != 2 ? seen : NULL,
					 v != 2 ? sizeof(seen) / sizeof(seen[0]) : 0);
			if (v == 3)
				ptflow_blocks_counted(&dec, counts);
		}
		ptflow_decode(&dec, buf, res.size, 0);
		co[v] = (struct covout){ drcov[v], 0, sizeof(drcov[v]) };
		ptcov_drcov_write(&cov, "efipt", cov_put, &co[v]);
		unsigned long long execs = 0, lost = 0, dins = 0, blocks = 0;
		for (unsigned i = 0; i < n; i++) {
			struct ptcov_stat st;
			ptcov_image_stat(&cimg[v][i], &st);
			execs += cimg[v][i].execs;
			lost += cimg[v][i].lost;
			dins += st.insns;
			blocks += st.blocks;
		}
		snprintf(ctext[v], sizeof(ctext[v]),
			 "%zu drcov bytes, insns %llu outside %llu execs %llu lost %llu distinct %llu "
			 "blocks %llu", co[v].len, (unsigned long long)cov.insns,
			 (unsigned long long)cov.outside, execs, lost, dins, blocks);
		if (!v)
			seen_all = dins && lost && cov.outside;
	}
	CHECKF(!strcmp(text[0], text[1]) && !strcmp(text[0], text[2]) && !strcmp(text[0], text[3]) &&
		       strstr(text[0], "outside every listed image"),
	       "flow: summary from blocks as from runs", "%s\nruns:\n%s\nblocks:\n%s", path, text[0],
	       text[1]);
	bool same = true;
	for (int v = 1; v < 4; v++)
		same = same && !strcmp(ctext[0], ctext[v]);
	for (int v = 1; v < 4; v++)
		same = same && co[v].len == co[0].len && co[0].len <= co[0].cap &&
		       !memcmp(drcov[0], drcov[v], co[0].len);
	CHECKF(same && seen_all, "flow: coverage from blocks as from runs",
	       "%s\nruns:    %s\nblocks:  %s\nno memo: %s\ncounted: %s", path, ctext[0], ctext[1],
	       ctext[2], ctext[3]);
}

static uint64_t all_blocks, all_region_blocks; /* over all images */

static void image_tests(const char *kind, const char *path, int nseeds)
{
	struct ptsec_image im;
	ptsec_init(&im);
	int rc = !strcmp(kind, "elf") ? ptsec_load_elf(&im, path) : ptsec_load_pe(&im, path);
	if (rc) {
		printf("# skipped %s: %s\n", path, im.err);
		ptsec_free(&im);
		return;
	}
	static uint64_t entries[1 << 16];
	size_t ne = find_entries(path, &im, entries, sizeof(entries) / sizeof(entries[0]));
	uint64_t start = ptsec_last_entry(&im);
	if (ne && !start)
		start = entries[0];
	struct totals tot = { 0 };
	int good = 0;
	for (int s = 0; s < nseeds; s++) {
		struct ptsynth_config sc;
		memset(&sc, 0, sizeof(sc));
		sc.image = ptsec_ptimg(&im);
		sc.start = ne && s % 2 ? entries[((uint64_t)s * 7919) % ne] : start;
		sc.entries = entries;
		sc.nentries = ne;
		knobs(&sc, (uint64_t)s + 1);
		good += run_one(path, &sc, (uint64_t)s + 1, &tot, false);
	}
	CHECKF(good == nseeds, path, "%d of %d seeds exact", good, nseeds);
	CHECKF(tot.counted_batches > 0, "flow: blocks counted", "%s: no counted batch in %d seeds",
	       path, nseeds);
	printf("# %s: %llu blocks, %llu with regions, %llu counted batches\n", path,
	       (unsigned long long)tot.blocks, (unsigned long long)tot.region_blocks,
	       (unsigned long long)tot.counted_batches);
	all_blocks += tot.blocks;
	all_region_blocks += tot.region_blocks;
	if (!strcmp(kind, "elf") && strstr(path, "libc.so")) {
		struct ptsynth_config sc;
		memset(&sc, 0, sizeof(sc));
		sc.image = ptsec_ptimg(&im);
		sc.start = start;
		sc.entries = entries;
		sc.nentries = ne;
		knobs(&sc, 1);
		summary_check(path, &im, &sc);
	}
	printf("# %zu entries\n", ne);
	print_totals(path, nseeds, &tot);
	ptsec_free(&im);
}

/*
 * PTWRITE and MWAIT, which the images above hardly have: hand-assembled
 * 64-bit code at 0x401000.
 *   00 f3 48 0f ae e0     ptwrite rax          (8-byte payload)
 *   05 f3 0f ae e1        ptwrite ecx          (4 bytes)
 *   09 0f 01 c9           mwait
 *   0c 74 05              je 13
 *   0e e8 0d 00 00 00     call 20
 *   13 f3 0f ae 20        ptwrite dword [rax]
 *   17 75 e7              jne 00
 *   19 ff e3              jmp rbx
 *   1b 90 90 90 90 90     nop
 *   20 f3 48 0f ae e2     ptwrite rdx          (function)
 *   25 90                 nop
 *   26 c3                 ret
 */
static void ptwrite_tests(int nseeds)
{
	static const uint8_t code[] = {
		0xf3, 0x48, 0x0f, 0xae, 0xe0, 0xf3, 0x0f, 0xae, 0xe1, 0x0f, 0x01, 0xc9,
		0x74, 0x05, 0xe8, 0x0d, 0x00, 0x00, 0x00, 0xf3, 0x0f, 0xae, 0x20, 0x75,
		0xe7, 0xff, 0xe3, 0x90, 0x90, 0x90, 0x90, 0x90, 0xf3, 0x48, 0x0f, 0xae,
		0xe2, 0x90, 0xc3,
	};
	static const uint64_t entries[] = { 0x401000, 0x401020 };
	struct ptimg_flat flat = { code, 0x401000, sizeof(code) };
	struct totals tot = { 0 };
	int good = 0;
	for (int s = 1; s <= nseeds; s++) {
		struct ptsynth_config sc;
		memset(&sc, 0, sizeof(sc));
		sc.image = (struct ptimg){ ptimg_flat_read, &flat };
		sc.start = 0x401000;
		sc.entries = entries;
		sc.nentries = 2;
		sc.max_insns = 20000;
		sc.psb_period = 256u << (s % 3);
		sc.ptw = true;
		sc.fup_on_ptw = s & 1;
		sc.p_power = s % 3 ? 2000 : 0;
		sc.p_tsx = s % 4 >= 2 ? 3000 : 0;
		sc.p_interrupt = s % 5 ? 400 : 0;
		sc.p_ovf = s % 6 == 1 ? 2000 : 0;
		sc.event_trace = s % 7 < 4;
		sc.disretc = s % 8 == 3;
		sc.tsc = s % 9 < 5;
		good += run_one("ptwrite/mwait code", &sc, (uint64_t)s, &tot, true);
	}
	CHECKF(good == nseeds, "flow: ptwrite/mwait code", "%d of %d seeds exact", good, nseeds);
	CHECKF(tot.kinds[1 + PTFLOW_EV_PTWRITE] > 1000 && tot.kinds[1 + PTFLOW_EV_MWAIT] > 100,
	       "flow: ptwrite/mwait code has ptw and mwait events", "%llu ptwrite, %llu mwait",
	       (unsigned long long)tot.kinds[1 + PTFLOW_EV_PTWRITE],
	       (unsigned long long)tot.kinds[1 + PTFLOW_EV_MWAIT]);
	print_totals("ptwrite/mwait code", nseeds, &tot);
}

/*
 * DisTNT up to the end of the trace: a tight loop whose Jcc writes nothing,
 * left now and then through an indirect JMP (a TIP, where a decoder takes
 * up the flow again). Tracing must not stop in a gap at an IP the loop
 * passed since the last TIP: the closing FUP would bind to that earlier
 * visit (33.3.9), so no decoder could follow the truth.
 *   00 90        nop
 *   01 90        nop
 *   02 75 fc     jne 00
 *   04 ff e3     jmp rbx  (to 00)
 */
static void distnt_end_tests(int nseeds)
{
	static const uint8_t code[] = { 0x90, 0x90, 0x75, 0xfc, 0xff, 0xe3 };
	static const uint64_t entries[] = { 0x401000 };
	struct ptimg_flat flat = { code, 0x401000, sizeof(code) };
	struct totals tot = { 0 };
	int good = 0;
	for (int s = 1; s <= nseeds; s++) {
		struct ptsynth_config sc;
		memset(&sc, 0, sizeof(sc));
		sc.image = (struct ptimg){ ptimg_flat_read, &flat };
		sc.start = 0x401000;
		sc.entries = entries;
		sc.nentries = 1;
		sc.max_insns = 3000 + (uint64_t)s * 7; /* stops at every place in the loop */
		sc.psb_period = 4096;
		sc.distnt = true;
		good += run_one("distnt loop to the end", &sc, (uint64_t)s, &tot, true);
	}
	CHECKF(good == nseeds, "flow: DisTNT trace ends after the loop's last TIP", "%d of %d seeds exact",
	       good, nseeds);
}

/* Blocks counted: their number and instructions. */
struct blk_count {
	uint64_t blocks, insns;
};

static void count_blocks(void *ctx, const struct ptflow_batch *batch)
{
	struct blk_count *c = ctx;
	const struct ptflow_blk *b = batch->b;
	size_t n = batch->n;
	for (size_t i = 0; i < n; i++)
		c->insns += b[i].ninsn;
	c->blocks += n;
}

static uint64_t page_region(void *ctx, uint64_t ip)
{
	(void)ctx;
	return ip >> 12 == 1 ? 0x2000 : 0;
}

/*
 * A loop (long_loop_test(), region_time_test()):
 *   1000 90 x4   nop
 *   1004 75 fa   jne 1000
 *   1006 ff e0   jmp rax   (tracing stops there: TIP.PGD)
 * (The fall-through is 6 bytes on: 3 would share the cache's index slot.)
 */
static const uint8_t loop_code[] = { 0x90, 0x90, 0x90, 0x90, 0x75, 0xfa, 0xff, 0xe0 };
static struct ptimg_flat loop_flat = { loop_code, 0x1000, sizeof(loop_code) };

/* The loop's trace up to tracing on at 1000 into trace; its length. */
static size_t loop_trace_start(uint8_t *trace)
{
	size_t n = 0;
	for (int i = 0; i < 8; i++) { /* PSB */
		trace[n++] = 0x02;
		trace[n++] = 0x82;
	}
	/* PSBEND, MODE.Exec 64-bit, TIP.PGE 1000 */
	static const uint8_t start[] = { 0x02, 0x23, 0x99, 0x01, 0x71, 0x00, 0x10, 0, 0, 0, 0 };
	memcpy(trace + n, start, sizeof(start));
	return n + sizeof(start);
}

/* A decoder's configuration for the loop (with the cache). */
static struct ptflow_config loop_config(void)
{
	struct ptflow_config fc;
	memset(&fc, 0, sizeof(fc));
	fc.image = (struct ptimg){ ptimg_flat_read, &loop_flat };
	fc.cache = cache;
	fc.cache_size = sizeof(cache) / sizeof(cache[0]);
	return fc;
}

/* The loop run far more often than a block can count (ninsn is 16 bits):
 * with regions its blocks are merged up to that and no further. */
static void long_loop_test(void)
{
	static uint8_t trace[32 + 20000 + 8];
	size_t n = loop_trace_start(trace);
	for (int i = 0; i < 20000; i++)
		trace[n++] = 0xfe; /* six taken */
	trace[n++] = 0x04;	   /* one not taken */
	trace[n++] = 0x01;	   /* TIP.PGD, no IP */
	struct blk_count with = { 0 }, without = { 0 };
	struct ptflow_config fc = loop_config();
	static struct ptflow_decoder d;
	struct ptflow_sink none = { &without, NULL, NULL };
	ptflow_init(&d, &fc, &none);
	ptflow_on_blocks(&d, count_blocks);
	long errs = ptflow_decode(&d, trace, n, 0);
	struct ptflow_sink some = { &with, NULL, NULL };
	ptflow_init(&d, &fc, &some);
	ptflow_on_blocks(&d, count_blocks);
	ptflow_blk_regions(&d, page_region, NULL);
	errs += ptflow_decode(&d, trace, n, 0);
	uint64_t want = 5 * 6 * 20000 + 6; /* and the last 4 nops, jne, jmp */
	CHECKF(!errs && without.insns == want && with.insns == want && with.blocks >= want / 0xffff + 1 &&
		       with.blocks <= want / 0xffff + 3,
	       "flow: regions merge a long loop into blocks of at most 65535 instructions",
	       "%ld errors; %llu instructions in %llu blocks without regions, %llu in %llu with, %llu ran",
	       errs, (unsigned long long)without.insns, (unsigned long long)without.blocks,
	       (unsigned long long)with.insns, (unsigned long long)with.blocks,
	       (unsigned long long)want);
}


/* Timed blocks (one time per part of a batch) in instructions: where each
 * time and ratio begins. */
struct time_starts {
	uint64_t insns, blocks, cbr_at; /* cbr_at: where the ratio first was 30 */
};

static void time_starts(void *ctx, const struct ptflow_batch *batch)
{
	struct time_starts *t = ctx;
	for (size_t k = 0; k <= batch->nmarks; k++) {
		struct ptflow_batch part = ptflow_batch_part(batch, k);
		if (part.cbr == 30 && !t->cbr_at)
			t->cbr_at = t->insns + 1; /* + 1: 0 is none */
		for (size_t i = 0; i < part.n; i++)
			t->insns += part.b[i].ninsn;
		t->blocks += part.n;
	}
}

/*
 * PTFLOW_TIME_REGIONS on the loop of long_loop_test(), a TSC after every
 * fourth TNT and a CBR with a new ratio halfway: the TSCs end no merged
 * block (far fewer blocks than with each block timed), the CBR does (the
 * new ratio begins at the same instruction either way).
 */
static void region_time_test(void)
{
	static uint8_t trace[64 + 4000 * 3];
	size_t n = loop_trace_start(trace);
	uint64_t tsc = 1000;
	for (int i = 0; i < 2000; i++) {
		trace[n++] = 0xfe; /* six taken */
		if (i == 1000) { /* CBR 30 */
			static const uint8_t cbr[] = { 0x02, 0x03, 30, 0x00 };
			memcpy(trace + n, cbr, sizeof(cbr));
			n += sizeof(cbr);
		} else if (i % 4 == 3) {
			trace[n++] = 0x19; /* TSC */
			tsc += 100;
			for (int b = 0; b < 7; b++)
				trace[n++] = (uint8_t)(tsc >> (8 * b));
		}
	}
	trace[n++] = 0x04; /* one not taken */
	trace[n++] = 0x01; /* TIP.PGD, no IP */
	struct ptflow_config fc = loop_config();
	static struct ptflow_decoder d;
	struct time_starts each = { 0 }, regions = { 0 };
	struct ptflow_sink se = { &each, NULL, NULL }, sr = { &regions, NULL, NULL };
	ptflow_init(&d, &fc, &se);
	ptflow_on_blocks(&d, time_starts);
	ptflow_blk_regions(&d, page_region, NULL);
	ptflow_blocks_timed(&d, PTFLOW_TIME_BLOCKS);
	long errs = ptflow_decode(&d, trace, n, 0);
	ptflow_init(&d, &fc, &sr);
	ptflow_on_blocks(&d, time_starts);
	ptflow_blk_regions(&d, page_region, NULL);
	ptflow_blocks_timed(&d, PTFLOW_TIME_REGIONS);
	errs += ptflow_decode(&d, trace, n, 0);
	CHECKF(!errs && each.insns == regions.insns && each.cbr_at && each.cbr_at == regions.cbr_at &&
		       each.blocks >= 400 && regions.blocks <= 8,
	       "flow: PTFLOW_TIME_REGIONS: timing packets end no merged block, a CBR does",
	       "%ld errors; each block timed: %llu instructions, %llu blocks, ratio 30 from %llu; "
	       "regions: %llu, %llu, from %llu",
	       errs, (unsigned long long)each.insns, (unsigned long long)each.blocks,
	       (unsigned long long)each.cbr_at, (unsigned long long)regions.insns,
	       (unsigned long long)regions.blocks, (unsigned long long)regions.cbr_at);
}

/* ptflow_on_position(): code that changes at a trace position. At 0x1000
 * two calls of 0x2000, then JMP RAX; 0x2000 holds RET for the first call
 * and NOP; RET for the second. The writer flushes its TNT bits where the
 * code changed and the change is recorded at the next packet's offset (as
 * the QEMU plugin does): the decoder must walk the first call in the old
 * code and the second in the new. */
static uint8_t smc_code[0x1010];
static uint64_t smc_switch(void *ctx, uint64_t off)
{
	uint64_t *at = ctx;
	*at = off;
	smc_code[0x1000] = 0x90; /* nop; ret */
	smc_code[0x1001] = 0xc3;
	return UINT64_MAX;
}

static void code_change_test(void)
{
	static const uint8_t calls[] = { 0xe8, 0xfb, 0x0f, 0, 0, 0xe8, 0xf6, 0x0f, 0, 0, 0xff, 0xe0 };
	memset(smc_code, 0xcc, sizeof(smc_code));
	memcpy(smc_code, calls, sizeof(calls));
	smc_code[0x1000] = 0xc3; /* ret */
	struct ptimg_flat code = { smc_code, 0x1000, sizeof(smc_code) };
	static uint8_t trace[256];
	struct ptwr w;
	ptwr_init(&w, trace, sizeof(trace), 4096, true, NULL, NULL);
	ptwr_psb_begin(&w);
	ptwr_psb_end(&w);
	ptwr_mode(&w, X86_MODE_64);
	ptwr_ip(&w, ptpkt_tip_pge, 0x1000);
	ptwr_call(&w, 0x1005);
	CHECK(ptwr_ret(&w, 0x1005), "code change: the first RET compressed");
	ptwr_flush_tnt(&w);
	uint64_t pos = w.bytes;
	ptwr_call(&w, 0x100a);
	CHECK(ptwr_ret(&w, 0x100a), "code change: the second RET compressed");
	ptwr_ip(&w, ptpkt_tip_pgd, 0x3000); /* JMP RAX leaves: tracing stops */
	size_t n = (size_t)w.bytes;
	for (int cached = 0; cached < 2; cached++) {
		smc_code[0x1000] = 0xc3;
		smc_code[0x1001] = 0xcc;
		struct ptflow_config fc;
		memset(&fc, 0, sizeof(fc));
		fc.image = (struct ptimg){ ptimg_flat_read, &code };
		static struct ptflow_block blocks[64];
		fc.cache = cached ? blocks : NULL;
		fc.cache_size = cached ? 64 : 0;
		static struct ptflow_decoder d;
		struct ptflow_sink none = { NULL, NULL, NULL };
		ptflow_init(&d, &fc, &none);
		uint64_t at = 0;
		ptflow_on_position(&d, pos, smc_switch, &at);
		long errs = ptflow_decode(&d, trace, n, 0);
		/* call, ret, call, nop, ret, jmp */
		CHECKF(!errs && d.stat.insns == 6 && at == pos,
		       cached ? "code change: each call decodes in its code (block cache)"
			     : "code change: each call decodes in its code (no cache)",
		       "%ld errors, %llu instructions, applied at %llu (recorded at %llu)", errs,
		       (unsigned long long)d.stat.insns, (unsigned long long)at,
		       (unsigned long long)pos);
	}
}

int main(int argc, char **argv)
{
	int nseeds = argc > 1 ? atoi(argv[1]) : 24;
	CHECK(ptflow_selfcheck() == 0, "flow: selfcheck");
	long_loop_test();
	region_time_test();
	code_change_test();
	ptwrite_tests(nseeds * 4);
	distnt_end_tests(nseeds);
	image_tests("elf", "/usr/lib/x86_64-linux-gnu/libc.so.6", nseeds);
	image_tests("elf", "/usr/bin/bash", nseeds);
	image_tests("elf", "/usr/lib/x86_64-linux-gnu/libcrypto.so.3", nseeds / 2);
	image_tests("elf", "/usr/bin/python3", nseeds / 2);
	image_tests("pe", "build/efipt.efi", nseeds / 2);
	/* UEFI images from Debian packages (mk/deps.sh), relocated */
	image_tests("pe", "/usr/lib/systemd/boot/efi/systemd-bootx64.efi:0x7f000000", nseeds / 2);
	image_tests("pe", "/usr/lib/systemd/boot/efi/linuxx64.efi.stub", nseeds / 4);
	image_tests("pe", "/usr/lib/grub/x86_64-efi/monolithic/grubx64.efi:0x10000000", nseeds / 2);
	/* regions make fewer blocks, or they are of no use (where the flow
	 * changes functions at every block, as in grub's walk, none) */
	CHECKF(timed_traces > 0, "flow: timed blocks checked", "no trace with time");
	printf("# %u timed traces: each block had its runs' time\n", timed_traces);
	CHECKF(region_timed_fewer > 0, "flow: PTFLOW_TIME_REGIONS merges across timing packets",
	       "no trace gave fewer blocks than with each block timed");
	printf("# %u timed traces gave fewer blocks timed by regions\n", region_timed_fewer);
	CHECKF(all_region_blocks * 10 < all_blocks * 9, "flow: regions merge blocks",
	       "%llu blocks, %llu with regions", (unsigned long long)all_blocks,
	       (unsigned long long)all_region_blocks);
	return check_exit();
}
