/*
 * Differential test of the time attached to events: our flow decoder
 * (core/pt_time.h) and libipt's query decoder (libipt-dev 2.0: pt_event.tsc)
 * on the same traces, and both against the clock the trace was made from.
 *
 * The traces are built with the packet encoder from a simulated clock:
 * a crystal clock tick every P TSC ticks (CPUID.15H EBX/EAX = P), an MTC
 * whenever CTC bit MTCFreq toggles, the core at nominal/CBR TSC ticks per
 * cycle, a CYC before each MTC and each event, PSB+ (TSC, TMA with CTC and
 * FastCounter, CBR) now and then. Tracing stays off; the events are PIPs.
 * With CYC, every event is at a known TSC, so both estimates must equal
 * it; without CYC they must equal each other.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <intel-pt.h>

#include "check.h"
#include "core/pt_flow.h"
#include "core/pt_pkt.h"

#define MAXEV 4096

static uint8_t buf[1 << 18];
static size_t bn;
static uint64_t rng;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void put(const struct ptpkt *p)
{
	int n = ptpkt_encode(buf + bn, sizeof(buf) - bn, p);
	if (n < 0) {
		fprintf(stderr, "encode failed\n");
		exit(2);
	}
	bn += (size_t)n;
}

static struct ptpkt P(int type)
{
	struct ptpkt p;
	memset(&p, 0, sizeof(p));
	p.type = (uint8_t)type;
	return p;
}

struct params {
	const char *name;
	unsigned p;		/* TSC ticks per crystal clock tick */
	unsigned mtc_freq;
	bool mtc, cyc;		/* MTCEn, CYCEn */
	bool cbr_changes;	/* CBR changes at MTC edges */
	unsigned lose_mtc;	/* per 256 MTCs */
};

#define NOM 24
static const uint8_t cbrs[] = { 24, 12, 8, 6 }; /* 1, 2, 3, 4 TSC ticks per cycle */

static uint64_t truth[MAXEV];
static unsigned ntruth;

static void psb_plus(uint64_t now, const struct params *pa, uint8_t cbr)
{
	struct ptpkt p = P(ptpkt_psb);
	put(&p);
	p = P(ptpkt_tsc);
	p.u.tsc.tsc = now;
	put(&p);
	if (pa->mtc) {
		/* 33.8.3.1: TSC = CTC * P + FastCounter */
		p = P(ptpkt_tma);
		p.u.tma.ctc = (uint16_t)(now / pa->p);
		p.u.tma.fc = (uint16_t)(now % pa->p);
		put(&p);
	}
	p = P(ptpkt_cbr);
	p.u.cbr.ratio = cbr;
	put(&p);
	put(&(struct ptpkt){ .type = ptpkt_psbend });
}

static void cyc(uint64_t n, const struct params *pa)
{
	if (!pa->cyc || !n)
		return;
	struct ptpkt p = P(ptpkt_cyc);
	p.u.cyc.cyc = n;
	put(&p);
}

/* Write a trace of nev events; truth[] gets the TSC of each. */
static void build(const struct params *pa, unsigned nev)
{
	uint64_t m = (uint64_t)pa->p << pa->mtc_freq; /* TSC ticks per MTC */
	uint8_t cbr = cbrs[0];
	uint64_t k = NOM / cbr;
	/* a multiple of 12: on a cycle boundary at every CBR */
	uint64_t now = (1000000000ull + (rnd() % 1000000)) * 12;

	bn = 0;
	ntruth = 0;
	psb_plus(now, pa, cbr);
	for (unsigned i = 0; i < nev; i++) {
		uint64_t c = 1 + rnd() % 300; /* cycles to the next event */
		uint64_t edge = (now / m + 1) * m;
		while (pa->mtc && now + c * k >= edge) {
			/* the CYC before the MTC counts the cycles up to it */
			uint64_t part = (edge - now) / k;
			cyc(part, pa);
			c -= part;
			now = edge;
			if (rnd() % 256 >= pa->lose_mtc) {
				struct ptpkt p = P(ptpkt_mtc);
				p.u.mtc.ctc = (uint8_t)(now / pa->p >> pa->mtc_freq);
				put(&p);
			}
			if (pa->cbr_changes && rnd() % 4 == 0) {
				cbr = cbrs[rnd() % 4];
				k = NOM / cbr;
				struct ptpkt p = P(ptpkt_cbr);
				p.u.cbr.ratio = cbr;
				put(&p);
			}
			edge += m;
		}
		cyc(c, pa);
		now += c * k;
		struct ptpkt p = P(ptpkt_pip);
		p.u.pip.cr3 = (uint64_t)(i + 1) << 12;
		put(&p);
		truth[ntruth++] = now;
		if (rnd() % 64 == 0)
			psb_plus(now, pa, cbr);
	}
}

/* ---- ours ---- */
static uint64_t ours[MAXEV];
static unsigned nours;

static int no_code(void *ctx, uint64_t ip, uint8_t *b, size_t n)
{
	(void)ctx; (void)ip; (void)b; (void)n;
	return 0;
}

static void o_event(void *ctx, const struct ptflow_event *ev)
{
	(void)ctx;
	if (ev->type == PTFLOW_EV_PAGING && nours < MAXEV)
		ours[nours++] = ev->has_time ? ev->tsc : 0;
}

static long decode_ours(const struct params *pa)
{
	struct ptflow_config c;
	memset(&c, 0, sizeof(c));
	c.image.read = no_code;
	c.cpuid15_eax = 2;
	c.cpuid15_ebx = 2 * pa->p;
	c.mtc_freq = (uint8_t)pa->mtc_freq;
	c.nom_freq = NOM;
	struct ptflow_sink s = { NULL, NULL, o_event };
	struct ptflow_decoder d;
	nours = 0;
	ptflow_init(&d, &c, &s);
	return ptflow_decode(&d, buf, bn, 0);
}

/* ---- libipt ---- */
static uint64_t theirs[MAXEV];
static unsigned ntheirs;

static int decode_libipt(const struct params *pa)
{
	struct pt_config c;
	pt_config_init(&c);
	c.begin = buf;
	c.end = buf + bn;
	c.cpuid_0x15_eax = 2;
	c.cpuid_0x15_ebx = 2 * pa->p;
	c.mtc_freq = (uint8_t)pa->mtc_freq;
	c.nom_freq = NOM;
	struct pt_query_decoder *q = pt_qry_alloc_decoder(&c);
	if (!q)
		return -1;
	ntheirs = 0;
	uint64_t ip;
	int st = pt_qry_sync_forward(q, &ip);
	while (st >= 0 && (st & pts_event_pending)) {
		struct pt_event ev;
		st = pt_qry_event(q, &ev, sizeof(ev));
		if (st >= 0 && ev.type == ptev_paging && ntheirs < MAXEV)
			theirs[ntheirs++] = ev.has_tsc ? ev.tsc : 0;
	}
	pt_qry_free_decoder(q);
	return st == -pte_eos || (st >= 0 && (st & pts_eos)) ? 0 : st;
}

static void compare(const struct params *pa, int seeds)
{
	int good = 0;
	char why[300] = "";
	for (int seed = 1; seed <= seeds; seed++) {
		rng = 0x9e3779b97f4a7c15ull * (uint64_t)seed;
		build(pa, 2000);
		long oerr = decode_ours(pa);
		int lerr = decode_libipt(pa);
		int bad = -1;
		for (unsigned i = 0; i < ntruth && bad < 0; i++)
			if (ours[i] != theirs[i] || (pa->cyc && ours[i] != truth[i]))
				bad = (int)i;
		if (!oerr && !lerr && nours == ntruth && ntheirs == ntruth && bad < 0) {
			good++;
		} else if (!why[0]) {
			unsigned i = bad < 0 ? 0 : (unsigned)bad;
			snprintf(why, sizeof(why),
				 "seed %d: errors %ld/%d, events %u/%u/%u; event %u: ours %llu libipt %llu truth %llu",
				 seed, oerr, lerr, nours, ntheirs, ntruth, i,
				 (unsigned long long)ours[i], (unsigned long long)theirs[i],
				 (unsigned long long)truth[i]);
		}
	}
	CHECKF(good == seeds, pa->name, "%d of %d traces agree; first: %s", good, seeds, why);
}

int main(void)
{
	static const struct params ps[] = {
		{ "libipt agrees: tsc + cyc", 96, 0, false, true, false, 0 },
		{ "libipt agrees: tsc + tma + mtc (mtcfreq 0)", 96, 0, true, false, false, 0 },
		{ "libipt agrees: tsc + tma + mtc (mtcfreq 3)", 96, 3, true, false, false, 0 },
		{ "libipt agrees: tsc + tma + mtc + cyc (mtcfreq 2)", 96, 2, true, true, false, 0 },
		{ "libipt agrees: mtc + cyc, lost mtcs", 96, 2, true, true, false, 40 },
		{ "libipt agrees: mtc + cyc, cbr changes", 96, 2, true, true, true, 0 },
		{ "libipt agrees: mtcfreq 9 (mtc beyond tma's 16 bits)", 96, 9, true, true, false, 0 },
	};
	for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++)
		compare(&ps[i], 8);
	return check_exit();
}
