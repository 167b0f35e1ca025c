/*
 * Where a recorded trace ends (see ptrec_find_end in recorder.h).
 *
 * The output buffer is a ring of trace_size bytes: the regions of the
 * layout in the order the CPU fills them (ToPA: table by table, END back to
 * the first table; single range: wraps at its end; SDM 33.2.7). A "ring
 * offset" counts bytes along it. In wrap mode the CPU overwrites the oldest
 * trace; what is left is [pos, end) + [0, pos), oldest first.
 */
#include "core/mem.h"
#include "core/pt_pkt.h"
#include "core/pt_rtit.h"
#include "core/recorder.h"

const char *ptrec_end_how_name(int how)
{
	switch ((enum ptrec_end_how)how) {
	case PTREC_END_STOPPED: return "stopped";
	case PTREC_END_MSRS: return "msrs";
	case PTREC_END_UNWRAPPED: return "unwrapped";
	case PTREC_END_PSB_TSC: return "psb_tsc";
	}
	return "unknown";
}

/* The region offset of ring offset o (o < trace_size) and the bytes left in
 * its output region. */
static uint64_t ring_to_region(const struct ptrec *r, uint64_t o, uint64_t *left)
{
	uint32_t lo = 0, hi = r->nreg;
	while (hi - lo > 1) {
		uint32_t mid = (lo + hi) / 2;
		if (r->reg_off[mid] <= o)
			lo = mid;
		else
			hi = mid;
	}
	uint64_t in = o - r->reg_off[lo];
	*left = r->reg[lo].size - in;
	return r->reg[lo].base - r->h.region_phys + in;
}

/* len bytes of the ring from ring offset o, going round its end. */
static int ring_read(const struct ptrec *r, uint64_t o, uint8_t *dst, size_t len)
{
	uint64_t size = r->h.trace_size;
	o %= size;
	while (len) {
		uint64_t left;
		uint64_t off = ring_to_region(r, o, &left);
		size_t n = len < left ? len : (size_t)left;
		if (ptrec_read(r, off, dst, n))
			return -1;
		dst += n;
		len -= n;
		o = (o + n) % size;
	}
	return 0;
}

/* Is any byte of the ring in [from, to) non-zero? *last gets the last one. */
static int nonzero_in(struct ptrec *r, uint64_t from, uint64_t to, bool *any, uint64_t *last)
{
	*any = false;
	for (uint64_t o = from; o < to;) {
		size_t n = to - o < sizeof(r->scratch) ? (size_t)(to - o) : sizeof(r->scratch);
		if (ring_read(r, o, r->scratch, n))
			return -1;
		for (size_t i = n; i-- > 0;)
			if (r->scratch[i]) {
				*any = true;
				*last = o + i;
				break;
			}
		o += n;
	}
	return 0;
}

/*
 * Where an (OUTPUT_BASE, OUTPUT_MASK_PTRS) pair points in this layout, as a
 * ring offset (33.2.7.1, 33.2.7.2, 33.2.8.7, 33.2.8.8). full: a ToPA STOP
 * region that filled (OutputOffset reads size - 1 with Stopped set).
 * 0, or -1 with why.
 */
static int locate(const struct ptrec *r, uint64_t base, uint64_t mask, bool stopped,
		  uint64_t *pos, bool *full, struct strbuf *why)
{
	uint64_t off = mask >> RTIT_MASK_OUTPUT_OFFSET_SHIFT;
	*full = false;
	if (r->h.output == PTREC_OUT_SINGLE) {
		uint64_t size = r->reg[0].size;
		if (base != r->reg[0].base ||
		    (mask & 0xffffffffull) != ((size - 1) | RTIT_MASK_LOWER) || off >= size) {
			sb_printf(why, "OUTPUT_BASE 0x%llx / OUTPUT_MASK_PTRS 0x%llx are not a position "
				       "in the single range 0x%llx (%llu bytes)",
				  (unsigned long long)base, (unsigned long long)mask,
				  (unsigned long long)r->reg[0].base, (unsigned long long)size);
			return -1;
		}
		*pos = off;
		return 0;
	}
	uint32_t t = 0, first = 0, nout = 0;
	while (t < r->ntab && r->tab[t] != base)
		t++;
	for (uint32_t i = 0; i < r->nreg; i++)
		if (r->reg[i].table < t)
			first++;
		else if (r->reg[i].table == t)
			nout++;
	uint64_t idx = (mask & RTIT_MASK_TABLE_OFFSET_MASK) >> RTIT_MASK_TABLE_OFFSET_SHIFT;
	if (t == r->ntab || idx > nout || (mask & RTIT_MASK_LOWER) != RTIT_MASK_LOWER) {
		sb_printf(why, "OUTPUT_BASE 0x%llx / OUTPUT_MASK_PTRS 0x%llx name no entry of the "
			       "recorder's ToPA tables",
			  (unsigned long long)base, (unsigned long long)mask);
		return -1;
	}
	uint32_t reg = first + (uint32_t)idx;
	if (idx == nout) {
		/* on the END entry: the CPU goes on at the next table's first entry */
		reg = t + 1 < r->ntab ? first + nout : 0;
		off = 0;
	}
	uint64_t size = r->reg[reg].size;
	if (r->h.mode == PTREC_MODE_STOP && stopped && reg == r->nreg - 1 && off == size - 1) {
		*full = true;
		*pos = r->h.trace_size;
		return 0;
	}
	if (off >= size) {
		sb_printf(why, "OutputOffset 0x%llx lies beyond its %llu-byte ToPA region",
			  (unsigned long long)off, (unsigned long long)size);
		return -1;
	}
	*pos = r->reg_off[reg] + off;
	return 0;
}

/* What the ring's PSB+ say (33.3.7, 33.4.2.17): each PSB in ring order, the
 * packets up to its PSBEND parsed for a TSC. */
struct psb_scan {
	uint32_t psbs, with_tsc, inversions;
	bool have_max;
	uint64_t max_tsc, max_at, max_end;	/* the newest PSB+ and its end */
	bool want_next;
	uint64_t next_after_max;		/* the PSB after it in ring order */
	bool have_first;
	uint64_t first_at, first_tsc;		/* the first PSB+ with a TSC */
	bool have_prev;
	uint64_t prev_tsc;
	bool zero_psb;				/* a PSB+ at ring offset 0 */
	uint64_t zero_tsc;
};

static const uint8_t psb_bytes[PTPKT_PSB_SIZE] = {
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
};

/* The PSB+ at ring offset at: its TSC (if any) and the ring offset after
 * its PSBEND. -1 if the packets after the PSB are not a PSB+ (overwritten
 * or cut by the write position). */
static int parse_psb_plus(const struct ptrec *r, uint64_t at, bool *have_tsc, uint64_t *tsc,
			  uint64_t *end)
{
	uint8_t w[256];
	size_t len = r->h.trace_size < sizeof(w) ? (size_t)r->h.trace_size : sizeof(w);
	if (ring_read(r, at, w, len))
		return -1;
	*have_tsc = false;
	for (size_t o = PTPKT_PSB_SIZE; o < len;) {
		struct ptpkt p;
		int n = ptpkt_decode(w + o, len - o, 0, &p);
		if (n <= 0)
			return -1;
		switch (p.type) {
		case ptpkt_psbend:
			*end = (at + o + (size_t)n) % r->h.trace_size;
			return 0;
		case ptpkt_tsc:
			*have_tsc = true;
			*tsc = p.u.tsc.tsc;
			break;
		/* what a PSB+ may hold besides (33.3.7) */
		case ptpkt_pad: case ptpkt_tma: case ptpkt_cbr: case ptpkt_mode_exec:
		case ptpkt_mode_tsx: case ptpkt_fup: case ptpkt_pip: case ptpkt_vmcs:
		case ptpkt_mtc: case ptpkt_cyc:
			break;
		default:
			return -1;
		}
		o += (size_t)n;
	}
	return -1;
}

static void scan_one(const struct ptrec *r, struct psb_scan *s, uint64_t at)
{
	bool have_tsc;
	uint64_t tsc = 0, end = 0;
	if (parse_psb_plus(r, at, &have_tsc, &tsc, &end))
		return;
	s->psbs++;
	if (s->want_next) {
		s->next_after_max = at;
		s->want_next = false;
	}
	if (!have_tsc)
		return;
	s->with_tsc++;
	if (at == 0) {
		s->zero_psb = true;
		s->zero_tsc = tsc;
	}
	if (!s->have_first) {
		s->have_first = true;
		s->first_at = at;
		s->first_tsc = tsc;
	}
	if (s->have_prev && tsc <= s->prev_tsc)
		s->inversions++;
	s->have_prev = true;
	s->prev_tsc = tsc;
	if (!s->have_max || tsc > s->max_tsc) {
		s->have_max = true;
		s->max_tsc = tsc;
		s->max_at = at;
		s->max_end = end;
		s->want_next = true;
	}
}

/* Every PSB of the ring, a PSB that straddles its end included. */
static int scan_psbs(struct ptrec *r, struct psb_scan *s)
{
	efipt_memset(s, 0, sizeof(*s));
	uint64_t size = r->h.trace_size;
	const size_t chunk = sizeof(r->scratch) - PTPKT_PSB_SIZE;
	uint64_t skip_to = 0;	/* a PSB found covers the bytes up to here */
	for (uint64_t o = 0; o < size; o += chunk) {
		size_t n = size - o < chunk ? (size_t)(size - o) : chunk;
		/* PSB_SIZE - 1 more bytes (round the ring's end) for a PSB that starts here */
		if (ring_read(r, o, r->scratch, n + PTPKT_PSB_SIZE - 1))
			return -1;
		for (size_t i = 0; i < n; i++) {
			if (r->scratch[i] != 0x02 || r->scratch[i + 1] != 0x82 || o + i < skip_to)
				continue;
			if (efipt_memcmp(r->scratch + i, psb_bytes, PTPKT_PSB_SIZE))
				continue;
			skip_to = o + i + PTPKT_PSB_SIZE;
			scan_one(r, s, o + i);
		}
	}
	/* the newest PSB+ was the last in ring order: the next one is the first */
	if (s->want_next && s->psbs)
		s->next_after_max = s->have_first ? s->first_at : s->max_at;
	/* ring order goes round: the first after the last */
	if (s->with_tsc > 1 && s->first_tsc <= s->prev_tsc)
		s->inversions++;
	return 0;
}

/* Is ring offset p in the window [lo, hi) that may run round the ring's end? */
static bool in_window(uint64_t p, uint64_t lo, uint64_t hi)
{
	return lo <= hi ? p >= lo && p < hi : p >= lo || p < hi;
}

/* An exact write position: the trace is [pos, end) + [0, pos) if the bytes
 * after pos are not all the zero fill (33.2.7: wrap mode overwrites), else
 * [0, pos). */
static int exact(struct ptrec *r, uint64_t pos, bool full, struct ptrec_end *e)
{
	uint64_t size = r->h.trace_size;
	bool any = false;
	uint64_t last;
	if (r->h.mode == PTREC_MODE_WRAP && pos < size && nonzero_in(r, pos, size, &any, &last))
		return -1;
	e->pos = pos;
	e->full = full;
	e->wrapped = any;
	e->start = any ? pos : 0;
	e->len = any ? size : pos;
	return 0;
}

int ptrec_find_end(struct ptrec *r, const struct ptrec_msrs *msrs, struct ptrec_end *e,
		   struct strbuf *notes)
{
	const struct ptrec_header *h = &r->h;
	efipt_memset(e, 0, sizeof(*e));
	if (!r->nreg || !h->trace_size) {
		sb_puts(notes, "the region holds no trace (--source qemu: the host's QEMU plugin "
			       "recorded it)");
		return -1;
	}
	/* 1. efipt stopped tracing itself and read the position back (33.3.3) */
	if (h->flags & PTREC_F_STOPPED) {
		uint64_t pos;
		bool full;
		e->stopped_bit = h->stop_status & RTIT_STATUS_STOPPED;
		e->error_bit = h->stop_status & RTIT_STATUS_ERROR;
		if (!locate(r, h->stop_base, h->stop_mask, e->stopped_bit, &pos, &full, notes)) {
			e->how = PTREC_END_STOPPED;
			return exact(r, pos, full, e);
		}
		sb_puts(notes, " (recorded when efipt stopped tracing)\n");
	}

	struct psb_scan s;
	if (scan_psbs(r, &s)) {
		sb_puts(notes, "the trace area cannot be read\n");
		return -1;
	}
	e->psbs = s.with_tsc;
	e->newest_tsc = s.max_tsc;
	e->tsc_inversions = s.inversions > 0 ? s.inversions - 1 : 0;
	/* The trace never went round if ring offset 0 still holds the PSB+ that
	 * began it: TraceEn starts with one (33.2.8.3), whose TSC was taken
	 * between the two reads around the start. */
	bool unwrapped = h->mode == PTREC_MODE_STOP ||
			 (s.zero_psb && s.zero_tsc >= h->tsc_arm && s.zero_tsc <= h->tsc_started);
	bool any = false;
	uint64_t last = 0;
	if (unwrapped && nonzero_in(r, 0, h->trace_size, &any, &last))
		return -1;
	uint64_t trace_end = any ? last + 1 : 0;

	/* 2. the output MSRs, kept over a warm reset where CPUID.(14H,0):EBX[2]
	 * is set (33.2.8.1, 33.3.4), but only where they are the recorder's and
	 * agree with the trace (while TraceEn was set they may be stale: 33.3.3) */
	if (msrs && msrs->valid) {
		uint64_t pos;
		bool full;
		uint64_t want = h->rtit_ctl & ~RTIT_CTL_TRACEEN;
		if (msrs->ctl & RTIT_CTL_TRACEEN) {
			sb_printf(notes, "output MSRs not used: IA32_RTIT_CTL.TraceEn is set (0x%llx): "
					 "someone is tracing now\n",
				  (unsigned long long)msrs->ctl);
		} else if (msrs->ctl != want) {
			sb_printf(notes, "output MSRs not used: IA32_RTIT_CTL is 0x%llx, the recorder "
					 "programmed 0x%llx (cleared or reprogrammed: not kept over the "
					 "reset)\n",
				  (unsigned long long)msrs->ctl, (unsigned long long)want);
		} else if (locate(r, msrs->base, msrs->mask, msrs->status & RTIT_STATUS_STOPPED, &pos,
				  &full, notes)) {
			sb_puts(notes, ": output MSRs not used\n");
		} else if (unwrapped && pos < trace_end) {
			sb_printf(notes, "output MSRs not used: they point to ring offset 0x%llx, before "
					 "the end of the trace at 0x%llx\n",
				  (unsigned long long)pos, (unsigned long long)trace_end);
		} else if (!unwrapped && s.have_max && !in_window(pos, s.max_end, s.next_after_max)) {
			sb_printf(notes, "output MSRs not used: they point to ring offset 0x%llx, not "
					 "between the newest PSB+ (TSC 0x%llx, ends 0x%llx) and the next "
					 "PSB (0x%llx)\n",
				  (unsigned long long)pos, (unsigned long long)s.max_tsc,
				  (unsigned long long)s.max_end, (unsigned long long)s.next_after_max);
		} else {
			e->how = PTREC_END_MSRS;
			e->stopped_bit = msrs->status & RTIT_STATUS_STOPPED;
			e->error_bit = msrs->status & RTIT_STATUS_ERROR;
			return exact(r, pos, full, e);
		}
	}

	/* 3. the trace itself */
	if (unwrapped) {
		e->how = PTREC_END_UNWRAPPED;
		e->pos = trace_end;
		e->start = 0;
		e->len = trace_end;
		e->full = h->mode == PTREC_MODE_STOP && trace_end == h->trace_size;
		return 0;
	}
	if (!s.have_max) {
		sb_printf(notes, "the trace went round its %llu-byte buffer and holds no PSB+ with a "
				 "TSC (%u PSB+ in all): where it ends cannot be told\n",
			  (unsigned long long)h->trace_size, s.psbs);
		return -1;
	}
	/* the newest PSB+ has the highest TSC; the write position lies after it
	 * and before the next PSB, whose trace is then the oldest (33.3.7) */
	e->how = PTREC_END_PSB_TSC;
	e->wrapped = true;
	e->lo = s.max_end;
	e->hi = s.next_after_max;
	e->start = s.next_after_max;
	e->pos = s.max_end;
	uint64_t size = h->trace_size;
	e->len = (s.max_end + size - s.next_after_max) % size;
	if (!e->len)
		e->len = size;
	return 0;
}

int ptrec_trace_spans(const struct ptrec *r, const struct ptrec_end *e,
		      int (*fn)(void *ctx, uint64_t off, uint64_t len), void *ctx)
{
	uint64_t o = e->start % (r->h.trace_size ? r->h.trace_size : 1), left = e->len;
	while (left) {
		uint64_t in_reg;
		uint64_t off = ring_to_region(r, o, &in_reg);
		uint64_t n = left < in_reg ? left : in_reg;
		int rc = fn(ctx, off, n);
		if (rc)
			return rc;
		left -= n;
		o = (o + n) % r->h.trace_size;
	}
	return 0;
}
