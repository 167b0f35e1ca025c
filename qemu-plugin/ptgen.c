/* Packet generation; see ptgen.h. */
#include <string.h>

#include "core/pt_pkt.h"
#include "core/x86_insn.h"
#include "qemu-plugin/ptgen.h"

void ptgen_init(struct ptgen *g, uint32_t psb_period, bool retcomp,
		bool (*write)(void *ctx, const uint8_t *buf, size_t n), void *ctx)
{
	memset(g, 0, sizeof(*g));
	g->psb_period = psb_period ? psb_period : 4096;
	g->retcomp = retcomp;
	g->write = write;
	g->ctx = ctx;
}

bool ptgen_flush(struct ptgen *g)
{
	if (g->fill && !g->failed && !g->write(g->ctx, g->buf, g->fill))
		g->failed = true;
	g->fill = 0;
	return !g->failed;
}

/* One packet into the buffer; in stop mode (limit) the first packet that
 * does not fit ends the trace, as a full ToPA STOP region would: the file
 * holds whole packets only. */
static void emit(struct ptgen *g, const struct ptpkt *p)
{
	if (g->full)
		return;
	if (PTGEN_BUF - g->fill < PTPKT_MAX_SIZE)
		ptgen_flush(g);
	int n = ptpkt_encode(g->buf + g->fill, PTGEN_BUF - g->fill, p);
	if (n <= 0)
		return; /* every packet here is well-formed: cannot happen */
	if (g->limit && g->bytes + (uint64_t)n > g->limit) {
		g->full = true;
		return;
	}
	g->fill += (size_t)n;
	g->bytes += (uint64_t)n;
	g->packets++;
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
	emit(g, &p);
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

/* Before a CYC-eligible packet (33.3.6): an MTC for each crystal clock edge
 * of bit MTCFreq passed since the last (33.4.2.12: payload CTC[N+7:N]),
 * each after a CYC up to its edge, then a CYC up to now. */
static void timing_before(struct ptgen *g)
{
	uint64_t now = ptgen_now(g);
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

static void put(struct ptgen *g, const struct ptpkt *p)
{
	if (g->timed && !g->in_psb)
		timing_before(g);
	emit(g, p);
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
			emit(g, &p);
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
	clock_restart(g);
}

static void put_simple(struct ptgen *g, int type)
{
	struct ptpkt p;
	memset(&p, 0, sizeof(p));
	p.type = (uint8_t)type;
	put(g, &p);
}

/* 33.4.2.1: the TNT buffer goes out when full (six bits: a short TNT, as
 * most processors write) and before any other packet. */
static void flush_tnt(struct ptgen *g)
{
	if (!g->tnt_n)
		return;
	struct ptpkt p;
	memset(&p, 0, sizeof(p));
	p.type = ptpkt_tnt8;
	p.u.tnt.nbits = g->tnt_n;
	p.u.tnt.bits = g->tnt_bits;
	put(g, &p);
	g->tnt_n = 0;
	g->tnt_bits = 0;
}

static void tnt_bit(struct ptgen *g, bool bit)
{
	g->tnt_bits = g->tnt_bits << 1 | (bit ? 1u : 0u);
	if (++g->tnt_n == 6)
		flush_tnt(g);
}

/* IP compression against Last IP (33.4.2.2, Table 33-18): the shortest
 * IPBytes that reconstructs ip. */
static void put_ip(struct ptgen *g, int type, uint64_t ip)
{
	flush_tnt(g);
	struct ptpkt p;
	memset(&p, 0, sizeof(p));
	p.type = (uint8_t)type;
	unsigned c = ptpkt_ip_choices(ip, g->lastip);
	/* IPBytes 4 is never shorter than 3, which a canonical IP can take */
	unsigned ipc = c & 1u << 1 ? 1 : c & 1u << 2 ? 2 : c & 1u << 3 ? 3 : 6;
	p.u.ip.ipc = (uint8_t)ipc;
	p.u.ip.ip = ptpkt_ip_payload(ip, ipc);
	g->lastip = ip;
	put(g, &p);
}

static void put_mode(struct ptgen *g, unsigned mode)
{
	struct ptpkt p;
	memset(&p, 0, sizeof(p));
	p.type = ptpkt_mode_exec;
	p.u.mode_exec.csl = mode == X86_MODE_64;
	p.u.mode_exec.csd = mode == X86_MODE_32;
	put(g, &p);
	g->mode = (uint8_t)mode;
	g->mode_sent = true;
}

/* 33.4.2.8: MODE.Exec precedes the IP packet whose target runs in another
 * code size (Table 33-55 cases 10 and 12). */
static void mode_before_ip(struct ptgen *g, unsigned mode)
{
	if (!g->mode_sent || g->mode != mode) {
		flush_tnt(g);
		put_mode(g, mode);
	}
}

void ptgen_mode(struct ptgen *g, unsigned mode)
{
	mode_before_ip(g, mode);
}

void ptgen_jcc(struct ptgen *g, bool taken)
{
	tnt_bit(g, taken);
}

void ptgen_call(struct ptgen *g, uint64_t ret_to)
{
	g->sp = (uint8_t)((g->sp + 1) % PTGEN_STACK);
	g->stack[g->sp] = ret_to;
	if (g->depth < PTGEN_STACK)
		g->depth++;
}

/* 33.4.2.2: every near RET pops the stack; it is compressed only where it
 * goes to the entry popped, pushed since the last PSB or enable. */
void ptgen_ret(struct ptgen *g, uint64_t target)
{
	bool match = false;
	if (g->depth) {
		match = g->stack[g->sp] == target;
		g->sp = (uint8_t)((g->sp + PTGEN_STACK - 1) % PTGEN_STACK);
		g->depth--;
		/* Software changed its stack (longjmp, a pushed target): no
		 * later RET is compressed against the entries below. Decoders
		 * differ here (libipt pops only compressed RETs, the SDM's
		 * model every RET); compressing nothing older keeps both right. */
		if (!match)
			g->depth = 0;
	}
	if (match && g->retcomp) {
		tnt_bit(g, true);
		return;
	}
	/* an uncompressed RET forces out the TNT buffer, so a decoder knows a
	 * TIP (not a bit) is this RET's (33.4.2.3) */
	put_ip(g, ptpkt_tip, target);
}

void ptgen_tip(struct ptgen *g, uint64_t target, unsigned mode)
{
	mode_before_ip(g, mode);
	put_ip(g, ptpkt_tip, target);
}

void ptgen_event(struct ptgen *g, uint64_t from, uint64_t target, unsigned mode)
{
	put_ip(g, ptpkt_fup, from);
	mode_before_ip(g, mode);
	put_ip(g, ptpkt_tip, target);
}

bool ptgen_psb_due(const struct ptgen *g)
{
	return g->bytes - g->last_psb >= g->psb_period;
}

/* 33.3.7, 33.4.2.17: PSB, MODE.Exec, FUP (only while tracing), PSBEND.
 * Last IP and the RET compression stack do not cross a PSB. */
void ptgen_psb(struct ptgen *g, bool enabled, uint64_t ip, unsigned mode)
{
	flush_tnt(g);
	if (!g->bytes)
		clock_restart(g); /* the first: TraceEn was just set */
	else if (g->timed)
		timing_before(g); /* edges and cycles before the PSB are its own */
	g->in_psb = true;
	put_simple(g, ptpkt_psb);
	g->lastip = 0;
	g->depth = 0;
	put_time(g);
	put_mode(g, mode);
	if (enabled)
		put_ip(g, ptpkt_fup, ip);
	put_simple(g, ptpkt_psbend);
	g->in_psb = false;
	g->last_psb = g->bytes;
}

void ptgen_enable(struct ptgen *g, uint64_t ip, unsigned mode)
{
	if (!g->bytes)
		ptgen_psb(g, false, 0, mode); /* with the TSC of TraceEn (33.4.2.11) */
	g->depth = 0; /* no RET compressed across PacketEn=0 (33.4.2.2) */
	flush_tnt(g);
	put_mode(g, mode);
	put_ip(g, ptpkt_tip_pge, ip);
}

void ptgen_leave(struct ptgen *g, uint64_t from, uint64_t ip, bool suppress_ip)
{
	if (from)
		put_ip(g, ptpkt_fup, from);
	if (suppress_ip) {
		flush_tnt(g);
		put_simple(g, ptpkt_tip_pgd);
	} else {
		put_ip(g, ptpkt_tip_pgd, ip);
	}
}

/* Table 33-56 case 3 (TraceEn cleared at an instruction boundary):
 * FUP(CLIP), TIP.PGD() */
void ptgen_disable(struct ptgen *g, uint64_t ip)
{
	put_ip(g, ptpkt_fup, ip);
	put_simple(g, ptpkt_tip_pgd);
}

