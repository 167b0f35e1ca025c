/* Decode summary shared by firmware and host; see pt_summary.h. */
#include "core/pt_summary.h"
#include "core/mem.h"

void ptsum_init(struct ptsum *s, struct ptsum_image *img, unsigned n)
{
	efipt_memset(s, 0, sizeof(*s));
	s->img = img;
	s->nimg = n;
	for (unsigned i = 0; i < n; i++) {
		img[i].insns = 0;
		if (!ptimg_range_ok(img[i].base, img[i].size))
			img[i].size = 0;
	}
	s->overlap = ptimg_list_sort(img, n, sizeof(*img));
}

_Static_assert(offsetof(struct ptsum_image, base) == 0 &&
		       offsetof(struct ptsum_image, size) == sizeof(uint64_t),
	       "ptimg_list_*: an image begins with base, size");

/*
 * The stretch of addresses around ip that counts as one: the image owning
 * it, or a gap between images (outside). Returns its counter and sets
 * [*lo, *hi] (both included).
 */
static uint64_t *region(struct ptsum *s, uint64_t ip, uint64_t *lo, uint64_t *hi)
{
	int k = ptimg_list_span(s->img, s->nimg, sizeof(*s->img), ip, &s->last, s->overlap, lo, hi);
	return k >= 0 ? &s->img[k].insns : &s->outside;
}

/* run, executed x times */
static void on_run(struct ptsum *s, const struct ptflow_run *run, uint64_t x)
{
	s->insns += run->ninsn * x;
	uint64_t ip = run->ip;
	uint32_t i = 0;
	while (i < run->ninsn) {
		/* the rest of the run up to the stretch's end counts in one go;
		 * ip is in the stretch, so j always advances (and an ip that
		 * wraps past 2^64 leaves it) */
		uint64_t lo, hi, start = ip;
		uint64_t *count = region(s, ip, &lo, &hi);
		uint32_t j = i;
		while (j < run->ninsn && ip - start <= hi - start && ip >= start)
			ip += run->lens[j++];
		*count += (j - i) * x;
		i = j;
	}
}

void ptsum_on_run(void *ctx, const struct ptflow_run *run)
{
	on_run(ctx, run, 1);
}

void ptsum_on_blocks(void *ctx, const struct ptflow_batch *batch)
{
	struct ptsum *s = ctx;
	const struct ptflow_blk *b = batch->b;
	size_t n = batch->n;
	uint64_t lo = 0, hi = 0, *count = NULL, here = 0, all = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t ip = b[i].ip;
		/* blocks cluster: most are in the stretch of the one before */
		if (!count || ip - lo > hi - lo) {
			if (count)
				*count += here;
			here = 0;
			count = region(s, ip, &lo, &hi);
		}
		/* counted batches: times each ran */
		uint64_t x = batch->execs ? batch->execs[i] : 1;
		if (b[i].size && b[i].size - 1u <= hi - ip) {
			all += b[i].ninsn * x;
			here += b[i].ninsn * x;
			continue;
		}
		/* across an image's end: by instruction */
		uint8_t lens[PTFLOW_BLOCK_MAX];
		struct ptflow_run r = { ip, lens, 0, b[i].mode, b[i].iclass };
		r.ninsn = ptflow_blk_lens(batch->image, &b[i], lens);
		on_run(s, &r, x);
	}
	if (count)
		*count += here;
	s->insns += all;
}

void ptsum_on_event(void *ctx, const struct ptflow_event *ev)
{
	struct ptsum *s = ctx;
	if (ev->type < PTFLOW_EV_COUNT)
		s->ev[ev->type]++;
	if (ev->type == PTFLOW_EV_ERROR && !s->first_error) {
		s->first_error = ev->msg ? ev->msg : "error";
		s->first_error_off = ev->offset;
	}
}

/* "12.3%" of part in total, integer arithmetic only. */
static void percent(struct strbuf *out, uint64_t part, uint64_t total)
{
	uint64_t tenths = total ? (part * 1000 + total / 2) / total : 0;
	sb_printf(out, "%3llu.%llu%%", (unsigned long long)(tenths / 10),
		  (unsigned long long)(tenths % 10));
}

void ptsum_format(const struct ptsum *s, const struct ptflow_stat *st, unsigned top,
		  struct strbuf *out)
{
	sb_printf(out, "Instructions  %llu\n", (unsigned long long)st->insns);
	sb_printf(out, "Branches      %llu\n", (unsigned long long)st->branches);
	sb_printf(out, "Packets       %llu\n", (unsigned long long)st->packets);
	sb_printf(out, "Events        %llu (enabled %llu, disabled %llu, interrupts %llu, "
		       "overflows %llu, mode changes %llu)\n",
		  (unsigned long long)st->events, (unsigned long long)s->ev[PTFLOW_EV_ENABLED],
		  (unsigned long long)(s->ev[PTFLOW_EV_DISABLED] + s->ev[PTFLOW_EV_ASYNC_DISABLED]),
		  (unsigned long long)s->ev[PTFLOW_EV_INTERRUPT],
		  (unsigned long long)s->ev[PTFLOW_EV_OVERFLOW],
		  (unsigned long long)s->ev[PTFLOW_EV_EXEC_MODE]);
	sb_printf(out, "Errors        %llu", (unsigned long long)st->errors);
	if (s->first_error)
		sb_printf(out, " (first at trace offset 0x%llx: %s)",
			  (unsigned long long)s->first_error_off, s->first_error);
	sb_putc(out, '\n');
	if (!s->insns)
		return;
	sb_puts(out, "Top images by instructions:\n");
	/* selection of the `top` largest counts; stable on ties (lower base first) */
	uint64_t prev = ~0ull;
	unsigned prev_idx = 0, shown = 0;
	while (shown < top) {
		int best = -1;
		for (unsigned i = 0; i < s->nimg; i++) {
			uint64_t c = s->img[i].insns;
			if (!c)
				continue;
			/* strictly after (prev, prev_idx) in (count desc, index asc) order */
			if (c > prev || (c == prev && i <= prev_idx))
				continue;
			if (best < 0 || c > s->img[best].insns)
				best = (int)i;
		}
		if (best < 0)
			break;
		const struct ptsum_image *m = &s->img[best];
		sb_printf(out, "  %12llu  ", (unsigned long long)m->insns);
		percent(out, m->insns, s->insns);
		sb_printf(out, "  %s (0x%llx)\n", m->name, (unsigned long long)m->base);
		prev = m->insns;
		prev_idx = (unsigned)best;
		shown++;
	}
	if (s->outside) {
		sb_printf(out, "  %12llu  ", (unsigned long long)s->outside);
		percent(out, s->outside, s->insns);
		sb_puts(out, "  (outside every listed image)\n");
	}
}
