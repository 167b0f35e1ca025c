/* Packet generation; see ptgen.h. */
#include <string.h>

#include "core/pt_pkt.h"
#include "core/x86_insn.h"
#include "qemu-plugin/ptgen.h"

static void timing_before(void *ctx, int type);

void ptgen_init(struct ptgen *g, uint32_t psb_period, bool retcomp,
		bool (*write)(void *ctx, const uint8_t *buf, size_t n), void *ctx)
{
	memset(g, 0, sizeof(*g));
	ptwr_init(&g->w, g->buf, sizeof(g->buf), psb_period, retcomp, write, ctx);
}

bool ptgen_flush(struct ptgen *g)
{
	return ptwr_flush(&g->w);
}

static void emit_value(struct ptgen *g, int type, uint64_t v)
{
	struct ptpkt p;
	memset(&p, 0, sizeof(p));
	p.type = (uint8_t)type;
	switch (type) {
	case ptpkt_tsc: p.u.tsc.tsc = v & ((1ull << 56) - 1); break;
	case ptpkt_mtc: p.u.mtc.ctc = (uint8_t)v; break;
	case ptpkt_cyc: p.u.cyc.cyc = v; break;
	case ptpkt_cbr: p.u.cbr.ratio = (uint8_t)v; break;
	default: break;
	}
	ptwr_emit(&g->w, &p);
}

/* The instruction about to run is number *insns (from 1): the time at its
 * start is the instructions before it, each 2^shift ns. */
uint64_t ptgen_now(const struct ptgen *g)
{
	return g->insns && *g->insns ? (*g->insns - 1) << g->timing.shift : 0;
}

/* 33.3.6: CYC with the core cycles since the last one, once CycThresh
 * allows (N = 2^(CycThresh-1), 0: any); core cycles are TSC ticks here. */
static void cyc_until(struct ptgen *g, uint64_t tsc, bool force)
{
	if (!g->timing.cyc || tsc <= g->cyc_tsc)
		return;
	uint64_t n = tsc - g->cyc_tsc;
	unsigned t = g->timing.cyc_thresh;
	if (!force && t && n < (1ull << (t - 1)))
		return;
	emit_value(g, ptpkt_cyc, n);
	g->cyc_tsc = tsc;
}

/* The writer's hook before every packet outside PSB+ (33.3.6): an MTC for
 * each crystal clock edge of bit MTCFreq passed since the last (33.4.2.12:
 * payload CTC[N+7:N]), each after a CYC up to its edge, then a CYC up to
 * now. Before a TNT "now" is its first branch's time: the CYC before a TNT
 * gives the time of its first branch, and no packet before a CYC may be
 * later than it (33.3.6.2); what ran since (a long REP after a Jcc) is
 * timed at the next packet. */
static void timing_before(void *ctx, int type)
{
	struct ptgen *g = ctx;
	uint64_t now = type == ptpkt_tnt8 || type == ptpkt_tnt64 ? g->tnt_time : ptgen_now(g);
	if (g->timing.mtc) {
		unsigned f = g->timing.mtc_freq;
		uint64_t edge = now * PTGEN_CPUID15_EAX / PTGEN_CPUID15_EBX >> f;
		while (g->mtc_edge < edge) {
			g->mtc_edge++;
			cyc_until(g, (g->mtc_edge << f) * PTGEN_CPUID15_EBX / PTGEN_CPUID15_EAX, true);
			emit_value(g, ptpkt_mtc, g->mtc_edge);
		}
	}
	cyc_until(g, now, false);
}

/* 33.4.2.11, 33.4.2.13, 33.4.2.10: TSC, TMA (crystal clock and the TSC
 * ticks since its last edge), CBR: in PSB+ and where tracing starts. */
static void put_time(struct ptgen *g)
{
	uint64_t now = ptgen_now(g);
	if (g->timing.tsc) {
		emit_value(g, ptpkt_tsc, now);
		if (g->timing.mtc) {
			uint64_t ctc = now * PTGEN_CPUID15_EAX / PTGEN_CPUID15_EBX;
			struct ptpkt p;
			memset(&p, 0, sizeof(p));
			p.type = ptpkt_tma;
			p.u.tma.ctc = (uint16_t)ctc;
			p.u.tma.fc = (uint16_t)(now - ctc * PTGEN_CPUID15_EBX / PTGEN_CPUID15_EAX);
			ptwr_emit(&g->w, &p);
			g->mtc_edge = ctc >> g->timing.mtc_freq;
		}
		g->cyc_tsc = now; /* the TSC restarts the decoder's cycle count */
	}
	if (g->timing.cyc)
		emit_value(g, ptpkt_cbr, PTGEN_CBR);
}

/* Nothing counted before now (TraceEn is set now: 33.3.6.1 the cycle
 * counter starts, no MTC for earlier edges). */
static void clock_restart(struct ptgen *g)
{
	uint64_t now = ptgen_now(g);
	g->cyc_tsc = now;
	g->mtc_edge = now * PTGEN_CPUID15_EAX / PTGEN_CPUID15_EBX >> g->timing.mtc_freq;
}

void ptgen_set_timing(struct ptgen *g, const struct ptgen_timing *t, const uint64_t *insns)
{
	g->timing = *t;
	g->insns = insns;
	g->timed = t->tsc || t->mtc || t->cyc;
	g->w.hooks.ctx = g;
	g->w.hooks.before = g->timed ? timing_before : NULL;
	clock_restart(g);
}

static void put_pip(struct ptgen *g)
{
	struct ptpkt p;
	memset(&p, 0, sizeof(p));
	p.type = ptpkt_pip;
	p.u.pip.cr3 = g->cr3;
	ptwr_put(&g->w, &p);
}

void ptgen_set_cr3(struct ptgen *g, uint64_t cr3)
{
	g->cr3_known = true;
	g->cr3 = cr3;
}

void ptgen_pip(struct ptgen *g, uint64_t cr3)
{
	ptgen_set_cr3(g, cr3);
	put_pip(g);
}

void ptgen_mode(struct ptgen *g, unsigned mode)
{
	ptwr_mode_change(&g->w, mode);
}

/* The time of a TNT's first bit, for timing_before() */
static void tnt_bit_time(struct ptgen *g)
{
	if (!g->w.tnt_n)
		g->tnt_time = ptgen_now(g);
}

void ptgen_jcc(struct ptgen *g, bool taken)
{
	tnt_bit_time(g);
	ptwr_tnt(&g->w, taken);
}

void ptgen_call(struct ptgen *g, uint64_t ret_to)
{
	ptwr_call(&g->w, ret_to);
}

/* An uncompressed RET forces out the TNT buffer, so a decoder knows a TIP
 * (not a bit) is this RET's (33.4.2.3). */
void ptgen_ret(struct ptgen *g, uint64_t target)
{
	tnt_bit_time(g);
	if (!ptwr_ret(&g->w, target))
		ptwr_ip(&g->w, ptpkt_tip, target);
}

/* 33.4.2.8: MODE.Exec precedes the IP packet whose target runs in another
 * code size (Table 33-55 cases 10 and 12). */
void ptgen_tip(struct ptgen *g, uint64_t target, unsigned mode)
{
	ptwr_mode_change(&g->w, mode);
	ptwr_ip(&g->w, ptpkt_tip, target);
}

void ptgen_event(struct ptgen *g, uint64_t from, uint64_t target, unsigned mode)
{
	ptwr_ip(&g->w, ptpkt_fup, from);
	ptwr_mode_change(&g->w, mode);
	ptwr_ip(&g->w, ptpkt_tip, target);
}

void ptgen_event_pip(struct ptgen *g, uint64_t from, uint64_t target, unsigned mode)
{
	ptwr_ip(&g->w, ptpkt_fup, from);
	put_pip(g);
	ptwr_mode_change(&g->w, mode);
	ptwr_ip(&g->w, ptpkt_tip, target);
}

bool ptgen_psb_due(const struct ptgen *g)
{
	return ptwr_psb_due(&g->w);
}

/* 33.3.7, 33.4.2.17: PSB, timing, PIP (where CR3 is known: ContextEn
 * and OS are set), MODE.Exec, FUP (only while tracing), PSBEND. */
void ptgen_psb(struct ptgen *g, bool enabled, uint64_t ip, unsigned mode)
{
	ptwr_flush_tnt(&g->w);
	if (!g->w.bytes)
		clock_restart(g); /* the first: TraceEn was just set */
	else if (g->timed)
		timing_before(g, ptpkt_psb); /* edges and cycles before the PSB are its own */
	g->resync = false;
	ptwr_psb_begin(&g->w);
	put_time(g);
	if (g->cr3_known)
		put_pip(g);
	ptwr_mode(&g->w, mode);
	if (enabled)
		ptwr_ip(&g->w, ptpkt_fup, ip);
	ptwr_psb_end(&g->w);
}

void ptgen_enable(struct ptgen *g, uint64_t ip, unsigned mode)
{
	if (!g->w.bytes || g->resync)
		ptgen_psb(g, false, 0, mode); /* with the TSC of TraceEn (33.4.2.11) */
	ptwr_forget_calls(&g->w); /* no RET compressed across PacketEn=0 (33.4.2.2) */
	ptwr_mode(&g->w, mode);
	ptwr_ip(&g->w, ptpkt_tip_pge, ip);
}

void ptgen_leave(struct ptgen *g, uint64_t from, uint64_t ip, bool suppress_ip)
{
	if (from)
		ptwr_ip(&g->w, ptpkt_fup, from);
	if (suppress_ip)
		ptwr_put_simple(&g->w, ptpkt_tip_pgd);
	else
		ptwr_ip(&g->w, ptpkt_tip_pgd, ip);
}

/* Table 33-56 case 3 (TraceEn cleared at an instruction boundary):
 * FUP(CLIP), TIP.PGD() */
void ptgen_disable(struct ptgen *g, uint64_t ip)
{
	ptwr_ip(&g->w, ptpkt_fup, ip);
	ptwr_put_simple(&g->w, ptpkt_tip_pgd);
}
