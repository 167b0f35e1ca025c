/*
 * Time tracking (core/pt_time.h) against values worked out by hand from the
 * SDM's formulas (Vol. 3C 33.8.3): TSC only, TMA + MTC with the 8-bit
 * payload wrapping, lost MTCs, CYC converted at nominal : CBR, TMA's
 * FastCounter, MTCFreq above 8, and SKL168; and long MTC runs against
 * the crystal clock converted whole (128-bit) for many CPUID.15H ratios.
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "core/pt_time.h"

static struct pttime t;

static void init(uint32_t eax, uint32_t ebx, uint8_t mtc_freq, uint8_t nom, bool skl168)
{
	struct pttime_config c;
	memset(&c, 0, sizeof(c));
	c.cpuid15_eax = eax;
	c.cpuid15_ebx = ebx;
	c.mtc_freq = mtc_freq;
	c.nom_freq = nom;
	c.skl168 = skl168;
	pttime_init(&t, &c);
}

static uint64_t now(void)
{
	uint64_t tsc;
	if (!pttime_get(&t, &tsc, NULL, NULL))
		return ~0ull;
	return tsc;
}

static uint32_t lost_mtc(void)
{
	uint64_t tsc;
	uint32_t m;
	pttime_get(&t, &tsc, &m, NULL);
	return m;
}

static uint32_t lost_cyc(void)
{
	uint64_t tsc;
	uint32_t c;
	pttime_get(&t, &tsc, NULL, &c);
	return c;
}

#define EQ(got, want, name) \
	CHECKF((got) == (want), name, "got %llu, want %llu", (unsigned long long)(got), \
	       (unsigned long long)(want))

/* xorshift64: the same runs every time */
static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/*
 * 33.8.3: after the TMA and every MTC the estimate is the TSC at the
 * crystal clock edge plus every crystal tick since, times EBX / EAX, as
 * one product (what the decoder keeps as a running quotient and
 * remainder must never drift from it). Runs of MTCs, mostly one period
 * apart, some with lost MTCs or none between, for ratios from 1:1 to
 * 32-bit EAX and EBX.
 */
static void mtc_runs_exact(void)
{
	static const uint32_t ratios[][2] = {
		{ 1, 1 }, { 2, 84 }, { 2, 168 }, { 3, 250 }, { 7, 1000 }, { 0xffffffffu, 1 },
		{ 1, 0xffffffffu }, { 0xfffffffbu, 0xfffffffdu }, { 1000003, 999983 },
	};
	unsigned bad = 0, runs = 0, estimates = 0;
	for (size_t r = 0; r < sizeof(ratios) / sizeof(ratios[0]) + 40; r++) {
		uint32_t eax = r < sizeof(ratios) / sizeof(ratios[0]) ? ratios[r][0]
								   : (uint32_t)rnd() | 1;
		uint32_t ebx = r < sizeof(ratios) / sizeof(ratios[0]) ? ratios[r][1]
								   : (uint32_t)(rnd() >> 32) | 1;
		unsigned n = (unsigned)(r % 16), bits = n + 8 < 16 ? n + 8 : 16;
		init(eax, ebx, (uint8_t)n, 0, false);
		uint64_t tsc = rnd() >> 8;
		uint16_t tma_ctc = (uint16_t)rnd(), fc = (uint16_t)(rnd() & 0x1ff);
		pttime_tsc(&t, tsc);
		pttime_tma(&t, tma_ctc, fc);
		uint8_t payload = (uint8_t)rnd();
		uint64_t ticks = (((uint32_t)payload << n) - tma_ctc) & ((1u << bits) - 1);
		pttime_mtc(&t, payload);
		for (unsigned i = 0; i < 20000; i++) {
			unsigned __int128 want = (unsigned __int128)ticks * ebx / eax;
			if (now() != tsc - fc + (uint64_t)want)
				bad++;
			estimates++;
			uint64_t x = rnd() % 64;
			unsigned periods = x < 60 ? 1 : x < 62 ? (unsigned)(rnd() % 256) : 255;
			payload = (uint8_t)(payload + periods);
			ticks += (uint64_t)(uint8_t)periods << n;
			pttime_mtc(&t, payload);
		}
		runs++;
	}
	CHECKF(bad == 0, "mtc runs: the estimate is the whole crystal count times ebx/eax",
	       "%u of %u estimates (%u runs) differ", bad, estimates, runs);
}

int main(void)
{
	mtc_runs_exact();

	/* 33.4.2.11: no time before the first TSC, then the TSC itself */
	init(2, 84, 3, 24, false);
	EQ(now(), ~0ull, "no time before a tsc");
	pttime_mtc(&t, 5);
	pttime_cyc(&t, 100);
	EQ(now(), ~0ull, "mtc and cyc before a tsc give no time");
	pttime_tsc(&t, 123456);
	EQ(now(), 123456, "tsc only");
	pttime_tsc(&t, 200000);
	EQ(now(), 200000, "a later tsc replaces the estimate");

	/*
	 * 33.8.3.2, TSC + TMA + MTC, P = EBX/EAX = 84/2 = 42, MTCFreq 3: MTC
	 * payload = CTC[10:3]. TSC 0x10000 with TMA CTC 0x1ff3, FastCounter 0:
	 * the first MTC is at CTC 0x1ff8, payload 0xff: 5 ticks, 5 * 42 = 210.
	 * Then payload 0x00 (the 8 bits wrap): one more MTC period, 8 ticks,
	 * 13 * 42 = 546; then 0x01: 21 * 42 = 882.
	 */
	init(2, 84, 3, 0, false);
	pttime_tsc(&t, 0x10000);
	pttime_tma(&t, 0x1ff3, 0);
	EQ(now(), 0x10000, "tma alone does not move the estimate");
	pttime_mtc(&t, 0xff);
	EQ(now(), 0x10000 + 210, "first mtc after tma: ((payload << n) - tma.ctc) mod 2^(n+8)");
	pttime_mtc(&t, 0x00);
	EQ(now(), 0x10000 + 546, "mtc payload wraps from 0xff to 0x00");
	pttime_mtc(&t, 0x01);
	EQ(now(), 0x10000 + 882, "mtc after the wrap");
	EQ(lost_mtc(), 0, "no mtc lost");

	/* 33.3.8.2: payload 0x04 after 0x01: 0x02 and 0x03 were lost; time
	 * still advances 3 periods: (21 + 24) * 42 = 1890 */
	pttime_mtc(&t, 0x04);
	EQ(now(), 0x10000 + 1890, "lost mtcs: the payload difference covers them");
	EQ(lost_mtc(), 2, "two lost mtcs counted");
	pttime_tsc(&t, 0x20000);
	EQ(lost_mtc(), 0, "a tsc starts over");

	/* MTC payload wrapping past the TMA's value: TMA CTC 0x07f0 (low 11
	 * bits), first MTC 0x00 (CTC 0x800): 16 ticks; P = 42 */
	pttime_tma(&t, 0x07f0, 0);
	pttime_mtc(&t, 0x00);
	EQ(now(), 0x20000 + 16 * 42, "first mtc wraps past the tma's ctc");

	/* A non-integer P: 3 ticks at 7/3 each; one conversion from the TMA
	 * edge, so no rounding error adds up: 3 MTCs of 8 ticks, 24 * 7 / 3 = 56
	 * (per MTC it would be 3 * (8 * 7 / 3) = 54) */
	init(3, 7, 3, 0, false);
	pttime_tsc(&t, 1000);
	pttime_tma(&t, 0x0000, 0);
	pttime_mtc(&t, 1);
	pttime_mtc(&t, 2);
	pttime_mtc(&t, 3);
	EQ(now(), 1000 + 56, "tsc/ctc ratio 7/3 without accumulated rounding");

	/*
	 * 33.8.3.2 CYC: accumulated cycles * P1 / CBR. Nominal ratio 25, CBR
	 * 20: 100 cycles = 125 TSC ticks; 103 cycles = 128 (128.75); then CBR
	 * 10: the 103 cycles stay at 25/20 and 8 more count 8 * 25 / 10 = 20.
	 */
	init(0, 0, 0, 25, false);
	pttime_tsc(&t, 5000);
	pttime_cbr(&t, 20);
	pttime_cyc(&t, 100);
	EQ(now(), 5125, "cyc * nom / cbr");
	pttime_cyc(&t, 3);
	EQ(now(), 5128, "cycles accumulate before converting");
	pttime_cbr(&t, 10);
	EQ(now(), 5128, "cbr change keeps the time so far");
	pttime_cyc(&t, 8);
	EQ(now(), 5148, "cycles after a cbr change count at the new ratio");
	pttime_tsc(&t, 6000);
	EQ(now(), 6000, "tsc resets the cycle count");
	EQ(lost_cyc(), 0, "no cyc lost with a cbr");

	/* CYC without CBR or without the nominal ratio cannot be converted */
	init(0, 0, 0, 25, false);
	pttime_tsc(&t, 5000);
	pttime_cyc(&t, 100);
	EQ(now(), 5000, "cyc before any cbr adds nothing");
	EQ(lost_cyc(), 1, "cyc before any cbr is lost");
	init(0, 0, 0, 0, false);
	pttime_tsc(&t, 5000);
	pttime_cbr(&t, 20);
	pttime_cyc(&t, 100);
	EQ(lost_cyc(), 1, "cyc without a nominal ratio is lost");

	/* MTC restarts the cycle count: TSC 1000, TMA CTC 0x10, P = 100,
	 * MTCFreq 0; CYC 40 at 10/20 = 20 ticks; MTC 0x11: 1 tick = 100 */
	init(1, 100, 0, 10, false);
	pttime_tsc(&t, 1000);
	pttime_tma(&t, 0x10, 0);
	pttime_cbr(&t, 20);
	pttime_cyc(&t, 40);
	EQ(now(), 1020, "cyc after tsc+tma");
	pttime_mtc(&t, 0x11);
	EQ(now(), 1100, "mtc starts the cycle count over");
	pttime_cyc(&t, 40);
	EQ(now(), 1120, "cyc after mtc counts from the mtc");

	/*
	 * 33.8.3.1 FastCounter: TSC = CTC * P + FastCounter + offset, so the
	 * crystal clock edge before the TSC is at TSC - FastCounter. TSC 1000,
	 * TMA CTC 0x10 with FastCounter 30, P = 100: the estimate stays 1000;
	 * the MTC at CTC 0x11 is at 1000 - 30 + 100 = 1070 (1100 if FastCounter
	 * were ignored); CYC after the TMA count from the TSC: 1000 + 20.
	 */
	init(1, 100, 0, 10, false);
	pttime_tsc(&t, 1000);
	pttime_tma(&t, 0x10, 30);
	EQ(now(), 1000, "fastcounter: estimate at the tma is the tsc");
	pttime_cbr(&t, 20);
	pttime_cyc(&t, 40);
	EQ(now(), 1020, "fastcounter: cycles count from the tsc");
	pttime_mtc(&t, 0x11);
	EQ(now(), 1070, "fastcounter: mtc counts from the crystal clock edge");
	/* FastCounter has 9 bits (FC[8] in byte 6) */
	init(1, 1000, 0, 10, false);
	pttime_tsc(&t, 10000);
	pttime_tma(&t, 0x10, 0x1f4);
	pttime_mtc(&t, 0x11);
	EQ(now(), 10000 - 500 + 1000, "fastcounter: 9 bits");

	/* MTCFreq 10: payload = CTC[17:10], TMA has CTC[15:0]. TMA 0x7c05,
	 * next edge of bit 10 at 0x8000 (payload 0x20): 0x3fb = 1019 ticks,
	 * P = 3: 3057; the next MTC (0x21) is 1024 ticks on: 3072 more */
	init(1, 3, 10, 0, false);
	pttime_tsc(&t, 50000);
	pttime_tma(&t, 0x7c05, 0);
	pttime_mtc(&t, 0x20);
	EQ(now(), 50000 + 3057, "mtcfreq 10: first mtc from tma's 16 ctc bits");
	pttime_mtc(&t, 0x21);
	EQ(now(), 50000 + 3057 + 3072, "mtcfreq 10: next mtc");

	/* MTC with nothing to count from: before a TMA, or without CPUID.15H */
	init(1, 3, 3, 0, false);
	pttime_tsc(&t, 100);
	pttime_mtc(&t, 7);
	EQ(now(), 100, "mtc without tma is not used");
	EQ(lost_mtc(), 1, "mtc without tma is lost");
	init(0, 0, 3, 0, false);
	pttime_tsc(&t, 100);
	pttime_tma(&t, 0, 0);
	pttime_mtc(&t, 1);
	EQ(now(), 100, "mtc without cpuid 0x15 is not used");
	/* a TMA needs a TSC before it, one per TSC */
	init(1, 3, 0, 0, false);
	pttime_tma(&t, 5, 0);
	pttime_tsc(&t, 100);
	pttime_mtc(&t, 6);
	EQ(now(), 100, "tma before the tsc is not used");

	/*
	 * SKL168: a CYC right before a PSB may be dropped (with its MTC). No
	 * TSC in the PSB+: cycles before the PSB are kept, the CYC after it
	 * adds its cycles (a lower bound) but is marked lost until the next
	 * MTC. TSC 1000, TMA 0, P = 2, MTCFreq 0, nominal 20, CBR 10:
	 * CYC 10 = 20 ticks, PSB, CYC 4 = 8 more; MTC 0x02 (0x01 dropped with
	 * the CYC): 2 ticks = 4, no longer lost.
	 */
	for (int skl = 0; skl < 2; skl++) {
		init(1, 2, 0, 20, skl);
		pttime_tsc(&t, 1000);
		pttime_tma(&t, 0, 0);
		pttime_cbr(&t, 10);
		pttime_cyc(&t, 10);
		struct ptpkt p;
		memset(&p, 0, sizeof(p));
		p.type = ptpkt_psb;
		pttime_packet(&t, &p);
		EQ(now(), 1020, skl ? "skl168: cycles before the psb are kept"
				    : "no skl168: psb does not change the time");
		pttime_cyc(&t, 4);
		EQ(now(), 1028, skl ? "skl168: cycles after the psb still count"
				    : "no skl168: cycles add up over the psb");
		EQ(lost_cyc(), (uint32_t)skl, skl ? "skl168: cyc after the psb is marked lost"
						   : "no skl168: nothing lost");
		pttime_mtc(&t, 0x02);
		EQ(now(), 1004, skl ? "skl168: dropped mtc covered by the next"
				    : "no skl168: two mtc periods");
		EQ(lost_cyc(), 0, skl ? "skl168: mtc starts over" : "no skl168: still nothing lost");
		EQ(lost_mtc(), 1, skl ? "skl168: the dropped mtc is counted"
				      : "no skl168: a missing mtc is counted");
	}
	/* with a TSC in the PSB+ nothing is lost: it starts over */
	init(1, 2, 0, 20, true);
	pttime_tsc(&t, 1000);
	pttime_cbr(&t, 10);
	pttime_cyc(&t, 10);
	pttime_psb(&t);
	pttime_tsc(&t, 2000);
	pttime_cyc(&t, 4);
	EQ(now(), 2008, "skl168: tsc in psb+ starts over");
	EQ(lost_cyc(), 0, "skl168: with a tsc in psb+ nothing is lost");

	/* every packet through pttime_packet */
	init(1, 2, 0, 20, false);
	{
		struct ptpkt p;
		memset(&p, 0, sizeof(p));
		p.type = ptpkt_tsc; p.u.tsc.tsc = 300; pttime_packet(&t, &p);
		p.type = ptpkt_tma; p.u.tma.ctc = 9; p.u.tma.fc = 1; pttime_packet(&t, &p);
		p.type = ptpkt_cbr; p.u.cbr.ratio = 5; pttime_packet(&t, &p);
		p.type = ptpkt_cyc; p.u.cyc.cyc = 3; pttime_packet(&t, &p);
		EQ(now(), 300 + 12, "pttime_packet: tsc, tma, cbr, cyc");
		p.type = ptpkt_mtc; p.u.mtc.ctc = 10; pttime_packet(&t, &p);
		EQ(now(), 299 + 2, "pttime_packet: mtc");
		p.type = ptpkt_pad; pttime_packet(&t, &p);
		EQ(now(), 301, "pttime_packet: other packets are ignored");
	}
	return check_exit();
}
