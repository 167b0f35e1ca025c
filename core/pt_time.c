/*
 * Intel PT time tracking. See pt_time.h; section numbers refer to Intel SDM
 * Vol. 3C chapter 33.
 */
#include "core/pt_time.h"

#include "core/mem.h"

/* The MTC timing the configuration allows: a ratio, and MTCFreq at most
 * 15 (the TMA's 16 CTC bits hold an MTC's at most). */
static bool mtc_usable(const struct pttime_config *c)
{
	return c->cpuid15_eax && c->cpuid15_ebx && c->mtc_freq <= 15;
}

void pttime_init(struct pttime *t, const struct pttime_config *cfg)
{
	efipt_memset(t, 0, sizeof(*t));
	t->cfg = *cfg;
	if (mtc_usable(cfg)) {
		/* below 2^47: the product needs no wider type */
		uint64_t p = ((uint64_t)1 << cfg->mtc_freq) * cfg->cpuid15_ebx;
		t->period_tsc = p / cfg->cpuid15_eax;
		t->period_rem = p % cfg->cpuid15_eax;
	}
}

/*
 * delta more crystal clock ticks since the TMA's edge, in TSC ticks:
 * ctc * EBX / EAX (33.8.3), kept as a quotient and a remainder so that
 * the sum is exact, as if converted whole. An MTC period (the usual
 * delta) takes no division; delta is below 2^23 (255 periods of at most
 * 2^15 ticks), so delta * EBX fits in 64 bits.
 */
static void ctc_add(struct pttime *t, uint64_t delta)
{
	uint64_t eax = t->cfg.cpuid15_eax, q, r;
	if (delta == (uint64_t)1 << t->cfg.mtc_freq) {
		q = t->period_tsc;
		r = t->period_rem;
	} else {
		uint64_t p = delta * t->cfg.cpuid15_ebx;
		q = p / eax;
		r = p % eax;
	}
	t->ctc += delta;
	t->ctc_tsc += q;
	t->ctc_rem += r;
	if (t->ctc_rem >= eax) {
		t->ctc_rem -= eax;
		t->ctc_tsc++;
	}
}

/* Core cycles to TSC ticks: the TSC runs at the nominal ratio, the core at
 * CBR, both times the bus clock (33.8.3.2: cycles * P1 / CBR). */
static uint64_t cyc_to_tsc(const struct pttime *t, uint64_t cyc)
{
	return cyc ? cyc * t->cfg.nom_freq / t->cbr : 0;
}

/* 33.4.2.11: the TSC itself; everything before it is superseded. */
void pttime_tsc(struct pttime *t, uint64_t tsc)
{
	t->base = tsc;
	t->fine = 0;
	t->cyc = 0;
	t->lost_mtc = 0;
	t->lost_cyc = 0;
	t->have_tsc = true;
	t->have_tma = false;
	t->have_mtc = false;
	t->psb_cyc = false;
}

/*
 * 33.4.2.13: right after a TSC, the crystal clock (CTC[15:0]) and the
 * FastCounter at that TSC. FastCounter is AdjustedProcessorCycles of
 * 33.8.3.1, TSC ticks since the crystal clock edge: the base moves back to
 * that edge, which the MTCs count from, and the estimate stays the TSC.
 */
void pttime_tma(struct pttime *t, uint16_t ctc, uint16_t fc)
{
	if (!t->have_tsc || t->have_tma)
		return; /* belongs to no TSC: nothing to align */
	fc &= 0x1ff;
	if (fc > t->base)
		fc = (uint16_t)t->base;
	t->base -= fc;
	t->fine += fc;
	t->edge = t->base;
	t->ctc = 0;
	t->ctc_tsc = 0;
	t->ctc_rem = 0;
	t->tma_ctc = ctc;
	t->have_tma = true;
	t->have_mtc = false;
}

/*
 * 33.4.2.12, 33.8.3.2: an MTC is sent when CTC bit N (MTCFreq) toggles and
 * carries CTC[N+7:N]. Crystal clock ticks since the TMA: to the first MTC,
 * (payload << N) - TMA.CTC, modulo 2^(N+8) since the MTC has no higher bits
 * (and at most the 16 bits TMA has); then (payload - last payload) << N,
 * modulo 2^8. The 8-bit difference also covers MTCs lost in between
 * (33.3.8.2), counted in lost_mtc, up to 255 of them.
 */
void pttime_mtc(struct pttime *t, uint8_t payload)
{
	unsigned n = t->cfg.mtc_freq;
	uint64_t delta;

	if (!t->have_tma || !mtc_usable(&t->cfg)) {
		t->lost_mtc++; /* no CTC to count from, or no ratio */
		return;
	}
	if (!t->have_mtc) {
		unsigned bits = n + 8 < 16 ? n + 8 : 16;
		delta = (((uint32_t)payload << n) - t->tma_ctc) & ((1u << bits) - 1);
		/* the first MTC comes at most 2^N ticks after the TMA */
		if (delta > (1u << n))
			t->lost_mtc += (uint32_t)((delta - 1) >> n);
	} else {
		uint8_t periods = (uint8_t)(payload - t->mtc);
		delta = (uint64_t)periods << n;
		if (periods > 1)
			t->lost_mtc += periods - 1u;
	}
	t->mtc = payload;
	t->have_mtc = true;
	/* counted from the TMA's edge: no rounding error adds up */
	ctc_add(t, delta);
	t->base = t->edge + t->ctc_tsc;
	t->fine = 0;
	t->cyc = 0;
	t->lost_cyc = 0; /* a fresh base: earlier CYC trouble no longer counts */
	t->psb_cyc = false;
}

/*
 * 33.4.2.14, 33.3.6.2: core cycles since the last CYC, accumulated until the
 * next TSC or MTC. Without a CBR (or a nominal ratio) they cannot be
 * converted: lost.
 *
 * SKL168 (Skylake, Kaby/Coffee/Comet Lake: "Intel PT CYC Packets Can be
 * Dropped When Immediately Preceding PSB", possibly with an associated
 * MTC): the dropped CYC's cycles are gone, so the CYCs after the PSB no
 * longer add up to the time since the base. The cycles are still real, so
 * they are kept: the estimate stays a lower bound, too early by at most the
 * dropped CYC, and is marked with lost_cyc until the next TSC or MTC starts
 * over (with TSCEn, PSB+ has a TSC, which does that at once). The cycles
 * counted before the PSB are kept too: dropping them would move time
 * backwards. A dropped MTC needs nothing: the next MTC's payload
 * difference covers its period (counted in lost_mtc).
 */
void pttime_cyc(struct pttime *t, uint64_t cycles)
{
	if (!t->cbr || !t->cfg.nom_freq) {
		t->lost_cyc++;
		return;
	}
	if (t->psb_cyc) {
		t->psb_cyc = false;
		t->lost_cyc++;
	}
	t->cyc += cycles;
}

/* 33.4.2.10: a new core frequency; cycles so far count at the old one. */
void pttime_cbr(struct pttime *t, uint8_t ratio)
{
	if (ratio == t->cbr)
		return;
	t->fine += cyc_to_tsc(t, t->cyc);
	t->cyc = 0;
	t->cbr = ratio;
}

void pttime_psb(struct pttime *t)
{
	if (t->cfg.skl168)
		t->psb_cyc = true;
}

void pttime_packet(struct pttime *t, const struct ptpkt *p)
{
	switch (p->type) {
	case ptpkt_tsc: pttime_tsc(t, p->u.tsc.tsc); break;
	case ptpkt_tma: pttime_tma(t, p->u.tma.ctc, p->u.tma.fc); break;
	case ptpkt_mtc: pttime_mtc(t, p->u.mtc.ctc); break;
	case ptpkt_cyc: pttime_cyc(t, p->u.cyc.cyc); break;
	case ptpkt_cbr: pttime_cbr(t, p->u.cbr.ratio); break;
	case ptpkt_psb: pttime_psb(t); break;
	default: break;
	}
}

bool pttime_get(const struct pttime *t, uint64_t *tsc, uint32_t *lost_mtc, uint32_t *lost_cyc)
{
	if (lost_mtc)
		*lost_mtc = t->lost_mtc;
	if (lost_cyc)
		*lost_cyc = t->lost_cyc;
	if (!t->have_tsc) {
		*tsc = 0;
		return false;
	}
	*tsc = t->base + t->fine + cyc_to_tsc(t, t->cyc);
	return true;
}
