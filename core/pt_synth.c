/*
 * Trace synthesizer. See pt_synth.h. Section numbers: Intel SDM Vol. 3C.
 */
#include "core/pt_synth.h"

#include "core/mem.h"
#include "core/pt_flow.h"
#include "core/pt_pkt.h"
#include "core/pt_writer.h"
#include "core/x86_insn.h"

/* Room always kept free for the closing packets (TNT, FUP, TIP.PGD). */
#define RESERVE 48

static uint64_t rnd(struct ptsynth *s)
{
	/* xorshift64* */
	s->rng ^= s->rng >> 12;
	s->rng ^= s->rng << 25;
	s->rng ^= s->rng >> 27;
	return s->rng * 0x2545F4914F6CDD1Dull;
}

static bool chance(struct ptsynth *s, uint32_t per64k)
{
	return per64k && (uint32_t)(rnd(s) >> 48) < per64k;
}

static void truth_ev(struct ptsynth *s, const struct ptsynth_event *ev)
{
	if (s->sink && s->sink->event)
		s->sink->event(s->sink->ctx, ev);
}

static void truth_any(struct ptsynth *s, int type, bool has_ip, uint64_t ip, uint64_t target,
		      uint64_t value, uint64_t aux)
{
	struct ptsynth_event ev;
	efipt_memset(&ev, 0, sizeof(ev));
	ev.type = type;
	ev.has_ip = has_ip;
	ev.ip = has_ip ? ip : 0;
	ev.target = target;
	ev.value = value;
	ev.aux = aux;
	truth_ev(s, &ev);
}

/* an event with a payload */
static void truth_full(struct ptsynth *s, int type, bool has_ip, uint64_t ip, uint64_t value,
		       uint64_t aux)
{
	truth_any(s, type, has_ip, ip, 0, value, aux);
}

/* an event with a branch target (interrupts) */
static void truth_event(struct ptsynth *s, int type, bool has_ip, uint64_t ip, uint64_t target)
{
	truth_any(s, type, has_ip, ip, target, 0, 0);
}

static bool is_flow(int type)
{
	return type == ptpkt_tnt8 || type == ptpkt_tnt64 || type == ptpkt_tip ||
	       type == ptpkt_tip_pge || type == ptpkt_tip_pgd || type == ptpkt_fup;
}

/* The writer's hook before each packet outside PSB+: the timing packets
 * due before a TNT, TIP or FUP. */
static void before_packet(void *ctx, int type)
{
	struct ptsynth *s = ctx;
	if (!is_flow(type))
		return;
	if (s->cfg->mtc && s->cfg->tsc && s->mtc_period) {
		/* the crystal clock now: an MTC if a period began since the last */
		uint64_t ctc = (s->w.fill * 3 + 1000) / PTSYNTH_CTC_RATIO;
		uint64_t period = ctc >> PTSYNTH_MTC_FREQ;
		if (period > s->mtc_period) {
			struct ptpkt m;
			efipt_memset(&m, 0, sizeof(m));
			m.type = ptpkt_mtc;
			m.u.mtc.ctc = (uint8_t)period; /* CTC[N+7:N] at the period's edge */
			ptwr_emit(&s->w, &m);
			s->mtc_period = period;
		}
	}
	if (s->cfg->cyc && s->time) {
		/* the cycles since the last TSC or CYC (CBR = nominal ratio:
		 * one cycle per TSC tick) */
		uint64_t now = s->w.fill * 3 + 1000;
		if (now > s->time) {
			struct ptpkt c;
			efipt_memset(&c, 0, sizeof(c));
			c.type = ptpkt_cyc;
			c.u.cyc.cyc = now - s->time;
			ptwr_emit(&s->w, &c);
			s->time = now;
		}
	}
}

/* The writer's hook after each TNT packet: now and then a long TNT, which
 * decoders must take as well as the short ones most processors write. */
static uint8_t next_tnt_cap(void *ctx)
{
	return (rnd(ctx) & 7) ? 6 : 47;
}

static void put(struct ptsynth *s, const struct ptpkt *p)
{
	ptwr_put(&s->w, p);
}

static void pkt_init(struct ptpkt *p, int type)
{
	efipt_memset(p, 0, sizeof(*p));
	p->type = (uint8_t)type;
}

/* IP compression against Last IP (33.4.2.2, Table 33-18): the shortest
 * form that reconstructs ip, sometimes a longer one. */
static void put_ip(struct ptsynth *s, int type, uint64_t ip, bool suppress)
{
	bool full = type == ptpkt_fup && s->full_next;
	if (s->gap && type != ptpkt_tip_pge) {
		/* DisTNT: a decoder follows the flow again from this packet */
		s->gap = false;
		truth_event(s, PTSYNTH_EV_RESYNC, false, 0, 0);
	}
	s->full_next = false;
	if (suppress) {
		ptwr_ip_sized(&s->w, type, 0, 0);
		return;
	}
	unsigned c = ptpkt_ip_choices(ip, s->w.lastip);
	unsigned r = (unsigned)(rnd(s) & 15);
	/* mostly the shortest; now and then a longer one, which a decoder
	 * must take as well (Table 33-18) */
	unsigned ipc = full ? 6
		     : (c & 1u << 1) && r > 3 ? 1
		     : (c & 1u << 2) && r > 1 ? 2
		     : (c & 1u << 3) && r > 0 ? 3
		     : (c & 1u << 4) && r == 0 ? 4 : 6;
	ptwr_ip_sized(&s->w, type, ip, ipc);
}

static void flush_tnt(struct ptsynth *s)
{
	ptwr_flush_tnt(&s->w);
}

static void put_tsx(struct ptsynth *s, bool intx, bool abrt)
{
	struct ptpkt p;
	pkt_init(&p, ptpkt_mode_tsx);
	p.u.mode_tsx.intx = intx;
	p.u.mode_tsx.abrt = abrt;
	put(s, &p);
}

static void put_mode(struct ptsynth *s)
{
	ptwr_mode(&s->w, s->mode);
}

/* PSB+ (33.3.7, 33.4.2.17): PSB, status, PSBEND. Last IP and the RET compression
 * state do not cross it. */
static void psb(struct ptsynth *s, bool enabled)
{
	ptwr_psb_begin(&s->w);
	s->ret_unknown = false;
	if (s->cfg->tsc) {
		struct ptpkt p;
		efipt_memset(&p, 0, sizeof(p));
		p.type = ptpkt_tsc;
		p.u.tsc.tsc = s->w.fill * 3 + 1000;
		s->time = p.u.tsc.tsc;
		put(s, &p);
		if (s->cfg->mtc) {
			/* 33.4.2.13: the crystal clock at the TSC and the TSC
			 * ticks since its last edge */
			uint64_t ctc = p.u.tsc.tsc / PTSYNTH_CTC_RATIO;
			struct ptpkt t;
			pkt_init(&t, ptpkt_tma);
			t.u.tma.ctc = (uint16_t)ctc;
			t.u.tma.fc = (uint16_t)(p.u.tsc.tsc - ctc * PTSYNTH_CTC_RATIO);
			put(s, &t);
			s->mtc_period = ctc >> PTSYNTH_MTC_FREQ;
		}
		if (s->cfg->cyc) {
			pkt_init(&p, ptpkt_cbr);
			p.u.cbr.ratio = PTSYNTH_CBR;
			put(s, &p);
		}
	}
	put_mode(s);
	if (s->cfg->p_tsx)
		put_tsx(s, s->intx, false); /* 33.4.2.8: MODE.TSX in PSB+ */
	if (enabled)
		put_ip(s, ptpkt_fup, s->ip, false);
	ptwr_psb_end(&s->w);
}

static bool readable(struct ptsynth *s, uint64_t ip, struct x86_insn *in)
{
	uint8_t buf[16];
	const struct ptimg *img = &s->cfg->image;
	int n = img->read(img->ctx, ip, buf, 15);
	if (n <= 0)
		return false;
	return x86_decode(in, buf, (size_t)n, ip, (enum x86_mode)s->mode) > 0;
}

/*
 * Would the direct JMP/CALL at ip (decoded as *in) enter an endless loop of
 * straight code and direct JMPs/CALLs? Such a loop writes no packets, so
 * how often it ran before the next asynchronous event is not in the trace:
 * a decoder binds the event's FUP to the first time it reaches that IP
 * (33.4.2.7). Real code never spins like that, code walked in the wrong
 * mode can; the walker must not enter one. Follows at most 4096
 * instructions and 64 direct branches; anything else ends the look.
 */
static bool endless_loop(struct ptsynth *s, uint64_t ip, const struct x86_insn *in)
{
	uint64_t seen[64];
	unsigned nseen = 0;
	struct x86_insn cur = *in;
	uint64_t at = ip;
	for (unsigned steps = 0; steps < 4096; steps++) {
		if (cur.iclass == X86_IC_JMP_DIRECT || cur.iclass == X86_IC_CALL_DIRECT) {
			for (unsigned i = 0; i < nseen; i++)
				if (seen[i] == at)
					return true;
			if (nseen == 64)
				return false;
			seen[nseen++] = at;
			at = cur.target;
		} else if (cur.iclass == X86_IC_OTHER) {
			at += cur.len;
		} else {
			return false;
		}
		if (!readable(s, at, &cur))
			return false;
	}
	return false;
}

/* Why the instruction at s->ip cannot run: a #PF (14) where its bytes
 * cannot be fetched (*pfa: the first such byte), else #UD (6). */
static int fetch_fault(struct ptsynth *s, uint64_t *pfa)
{
	uint8_t buf[16];
	struct x86_insn in;
	const struct ptimg *img = &s->cfg->image;
	int n = img->read(img->ctx, s->ip, buf, 15);
	*pfa = s->ip;
	if (n <= 0)
		return 14;
	if (x86_decode(&in, buf, (size_t)n, s->ip, (enum x86_mode)s->mode) == -X86_ERR_NEED_MORE) {
		*pfa = s->ip + (uint64_t)n;
		return 14;
	}
	*pfa = 0;
	return 6;
}

static void add_entry(struct ptsynth *s, uint64_t ip)
{
	s->ent[s->ent_next] = ip;
	s->ent_next = (uint16_t)((s->ent_next + 1) % PTSYNTH_ENTRIES);
	if (s->nent < PTSYNTH_ENTRIES)
		s->nent++;
}

static uint64_t pick_entry(struct ptsynth *s)
{
	uint64_t n = s->nent + s->cfg->nentries + 1;
	uint64_t k = rnd(s) % n;
	if (k < s->nent)
		return s->ent[k];
	k -= s->nent;
	if (k < s->cfg->nentries)
		return s->cfg->entries[k];
	return s->cfg->start;
}

static void rpush(struct ptsynth *s, uint64_t v, uint8_t intr)
{
	s->rstack[s->rsp] = v;
	s->rint[s->rsp] = intr;
	s->rsp = (uint16_t)((s->rsp + 1) % PTSYNTH_STACK);
	if (s->rsn < PTSYNTH_STACK)
		s->rsn++;
}

/* Tracing (re)starts at a function entry: MODE.Exec, TIP.PGE (33.7,
 * Table 33-56 cases 2 and 5). In a new context (another process after
 * tracing was off) the code may run in the other code size: p_mode; the
 * MODE.Exec before the TIP.PGE says so (33.4.2.8). */
static void enable_at(struct ptsynth *s, uint64_t ip, bool newctx)
{
	bool flip = newctx && s->mode != X86_MODE_16 && chance(s, s->cfg->p_mode);
	flush_tnt(s);
	/* 33.4.2.2: no RET is compressed across a PacketEn=0 window */
	ptwr_forget_calls(&s->w);
	s->ret_unknown = false;
	s->ip = ip;
	if (flip) {
		s->mode = s->mode == X86_MODE_64 ? X86_MODE_32 : X86_MODE_64;
		s->rsn = 0; /* another program: none of our calls to return from */
	}
	put_mode(s);
	put_ip(s, ptpkt_tip_pge, ip, false);
	if (flip)
		truth_full(s, PTFLOW_EV_EXEC_MODE, true, ip, s->mode, 0);
	truth_event(s, PTFLOW_EV_ENABLED, true, ip, 0);
}

/* Event Trace (33.2.4, 33.4.2.29/30): an interrupt or exception writes a
 * CFE.INTR with its vector before its FUP; with BranchEn=1 that FUP is the
 * event's own, so the CFE has IP=0 and binds to it (Table 33-59 case 4).
 * A page fault first writes EVD.PFA with the faulting address (case 6). */
static void put_cfe(struct ptsynth *s, unsigned vector, bool pf, uint64_t pfa)
{
	struct ptpkt p;
	if (pf) {
		pkt_init(&p, ptpkt_evd);
		p.u.evd.type = 0; /* PFA */
		p.u.evd.payload = pfa;
		put(s, &p);
		truth_full(s, PTFLOW_EV_EVD, false, 0, pfa, 0);
	}
	pkt_init(&p, ptpkt_cfe);
	p.u.cfe.type = 1; /* INTR */
	p.u.cfe.vector = (uint8_t)vector;
	put(s, &p);
}

/* The CFE's ground truth, once its FUP (ip) is written. */
static void cfe_truth(struct ptsynth *s, unsigned vector, uint64_t ip);

/* Event Trace for INT n, INT3, INT1, INTO at ip (Table 33-59 case 5):
 * CFE.INTR with the vector. The INT leaves the traced context with a
 * TIP.PGD and no FUP of its own here, so the CFE has IP=1 and a
 * stand-alone FUP(CLIP) follows (33.4.2.29). */
static void sw_int_cfe(struct ptsynth *s, const struct x86_insn *in, uint64_t ip)
{
	uint8_t buf[16];
	const struct ptimg *img = &s->cfg->image;
	unsigned vector = in->opcode == 0xcc ? 3 : in->opcode == 0xf1 ? 1 : 4;
	if (in->opcode == 0xcd && img->read(img->ctx, ip, buf, in->len) == in->len)
		vector = buf[in->len - 1];
	struct ptpkt p;
	flush_tnt(s);
	pkt_init(&p, ptpkt_cfe);
	p.u.cfe.ip = true;
	p.u.cfe.type = 1; /* INTR */
	p.u.cfe.vector = (uint8_t)vector;
	put(s, &p);
	put_ip(s, ptpkt_fup, ip, false);
	cfe_truth(s, vector, ip);
}

static void cfe_truth(struct ptsynth *s, unsigned vector, uint64_t ip)
{
	truth_full(s, PTFLOW_EV_CFE, true, ip, 1 | (uint64_t)vector << 8, 0);
}

/* The instruction at ip does not complete (fault, unreadable): the
 * exception (vector, or -1 for a WRMSR clearing TraceEn) goes to an
 * untraced handler: FUP(CLIP), TIP.PGD (Table 33-56 cases 3 and 8). */
static void fault(struct ptsynth *s, int vector, uint64_t pfa)
{
	bool et = s->cfg->event_trace && vector >= 0;
	flush_tnt(s);
	if (et)
		put_cfe(s, (unsigned)vector, vector == 14, pfa);
	put_ip(s, ptpkt_fup, s->ip, false);
	put_ip(s, ptpkt_tip_pgd, 0, true);
	if (et)
		cfe_truth(s, (unsigned)vector, s->ip);
	truth_event(s, PTFLOW_EV_ASYNC_DISABLED, true, s->ip, 0);
}

/* An external interrupt before the instruction at from (33.7 Table 33-55
 * case 11: FUP(NLIP), TIP(BLIP)); handlers are entered through trap
 * gates (RFLAGS.IF unchanged: no MODE.Exec for IF with Event Trace). */
static void interrupt(struct ptsynth *s, uint64_t from, uint64_t to)
{
	unsigned vector = 32 + (unsigned)(rnd(s) % 224);
	flush_tnt(s);
	if (s->cfg->event_trace)
		put_cfe(s, vector, false, 0);
	put_ip(s, ptpkt_fup, from, false);
	put_ip(s, ptpkt_tip, to, false);
	if (s->cfg->event_trace)
		cfe_truth(s, vector, from);
	truth_event(s, PTFLOW_EV_INTERRUPT, true, from, to);
}

/* DisTNT (33.3.9): this Jcc or compressed RET writes nothing; a decoder
 * loses the flow here until the next IP packet. With RET compression it
 * loses it at every RET that may have been compressed too: one its call
 * stack has an entry for, or any after a gap (calls were not seen). While the flow is lost no
 * event is injected (interrupt, power, TSX, MWAIT's C-state), nor a PSB+
 * or an OVF: a decoder still walking towards the Jcc would bind their FUP
 * to an earlier visit of its IP, if the code before the Jcc has one. */
static void start_gap(struct ptsynth *s, uint64_t ip)
{
	if (s->gap)
		return;
	s->gap = true;
	s->ret_unknown = true; /* calls in the gap are not seen */
	truth_full(s, PTFLOW_EV_GAP, true, ip, 0, 0);
}

/* After a packet-producing branch: PSB+ when due, sometimes an OVF. */
static void maybe_ovf(struct ptsynth *s, bool after_tip);

static void after_packet(struct ptsynth *s)
{
	if (ptwr_psb_due(&s->w)) {
		psb(s, true);
		return;
	}
	maybe_ovf(s, true);
}

/*
 * Before a branch that produces a packet: sometimes an internal buffer
 * overflow. 33.4.2.16: OVF, then a FUP with the IP where tracing resumes
 * (here: this branch); no RET compression against what came before. The
 * FUP carries the full IP: decoders differ in the Last IP they assume after
 * an OVF.
 */
static void maybe_ovf(struct ptsynth *s, bool after_tip)
{
	/* Right after a packet-producing branch: decoders see the OVF as the
	 * next packet. Instructions after the packet and before the OVF would
	 * be ambiguous: a decoder cannot tell how far execution got. Then
	 * some instructions run while packets are lost (see lost_step()),
	 * and a FUP says where tracing resumes. */
	if (!after_tip || s->intx || !chance(s, s->cfg->p_ovf))
		return;
	ptwr_ovf(&s->w);
	s->ret_unknown = false;
	truth_event(s, PTFLOW_EV_OVERFLOW, false, 0, 0);
	s->lost = 1 + (uint32_t)(rnd(s) % 64);
}

/* The overflow is over: FUP with the full IP (decoders differ in the Last
 * IP they assume after an OVF). */
static void end_lost(struct ptsynth *s)
{
	s->lost = 0;
	s->full_next = true;
	put_ip(s, ptpkt_fup, s->ip, false);
}

/*
 * One instruction executed while packets are lost to an overflow: no
 * packets, no ground truth. Only plain flow (straight code, Jcc, direct
 * JMP/CALL, RET to a known caller) runs lost; anything else ends the
 * overflow first. CALLs seen here are not RET-compressible later
 * (33.4.2.16: nothing is compressed against lost packets).
 */
static void lost_step(struct ptsynth *s)
{
	struct x86_insn in;
	if (!readable(s, s->ip, &in)) {
		end_lost(s);
		return;
	}
	uint64_t next = s->ip + in.len;
	unsigned top = (s->rsp + PTSYNTH_STACK - 1) % PTSYNTH_STACK;
	switch (in.iclass) {
	case X86_IC_OTHER:
		s->ip = next;
		break;
	case X86_IC_JCC:
		s->ip = rnd(s) >> 63 ? in.target : next;
		break;
	case X86_IC_JMP_DIRECT:
		s->ip = in.target;
		break;
	case X86_IC_CALL_DIRECT:
		if (!in.zero_len_call)
			rpush(s, next, 0);
		s->ip = in.target;
		break;
	case X86_IC_RET_NEAR:
		if (!s->rsn || s->rint[top]) {
			end_lost(s);
			return;
		}
		s->rsp = (uint16_t)top;
		s->rsn--;
		s->ip = s->rstack[top];
		break;
	default:
		end_lost(s);
		return;
	}
	if (--s->lost == 0)
		end_lost(s);
}

/* An address outside any code walked: where filtered-out code lives. */
static uint64_t outside(struct ptsynth *s)
{
	return 0xfffff00000000000ull | (rnd(s) & 0xffffff0ull);
}

static void tip(struct ptsynth *s, uint64_t target)
{
	flush_tnt(s);
	if (chance(s, s->cfg->p_disable)) {
		/* the branch leaves the traced region (33.2.5 IP filtering):
		 * TIP.PGD with the target, an address outside any code we walk
		 * (a direct branch to it would have disabled tracing earlier) */
		target = outside(s);
		put_ip(s, ptpkt_tip_pgd, target, false);
		truth_event(s, PTFLOW_EV_DISABLED, true, target, 0);
		enable_at(s, pick_entry(s), true);
		return;
	}
	put_ip(s, ptpkt_tip, target, false);
	s->ip = target;
	after_packet(s);
}

/* ---- TSX (33.2.9.1, Table 33-10; 33.7 Table 33-55 cases 19-21) ----
 * A transaction is modelled from any instruction (its "XBEGIN") over at
 * most 32 instructions of plain flow (straight code, Jcc, direct JMP: no
 * calls, so an abort leaves no call stack to roll back), ending before the
 * first other instruction or when its length is reached: a commit there
 * ("XEND", which then runs), or an abort to the XBEGIN (for HLE the
 * restart point, for RTM the fallback handler; here the same code).
 * No interrupt, overflow or power event is injected inside one. */

static bool is_mwait(const struct x86_insn *in)
{
	return in->enc == X86_ENC_LEGACY && in->map == X86_MAP_0F && in->opcode == 0x01 &&
	       in->modrm == 0xc9;
}

/* With DisTNT a Jcc ends the transaction: a commit FUP after a gap could
 * bind to an earlier visit of its IP (see start_gap()). */
static bool tx_plain(const struct ptsynth *s, const struct x86_insn *in)
{
	return (in->iclass == X86_IC_JCC && !s->cfg->distnt) || in->iclass == X86_IC_JMP_DIRECT ||
	       (in->iclass == X86_IC_OTHER && !is_mwait(in));
}

/* Transaction begin: MODE.TSX(InTX=1), FUP(CLIP). */
static void tx_begin(struct ptsynth *s)
{
	flush_tnt(s);
	put_tsx(s, true, false);
	put_ip(s, ptpkt_fup, s->ip, false);
	truth_full(s, PTFLOW_EV_TSX, true, s->ip, 1, 0);
	s->intx = true;
	s->tx_begin = s->ip;
	s->tx_left = 1 + (uint32_t)(rnd(s) % 32);
}

/* Commit: MODE.TSX(0, 0), FUP(CLIP); abort: MODE.TSX(InTX=0, TXAbort=1),
 * FUP(CLIP), TIP(abort target). Returns true if it aborted. */
static bool tx_end(struct ptsynth *s)
{
	bool abrt = rnd(s) & 1;
	flush_tnt(s);
	put_tsx(s, false, abrt);
	put_ip(s, ptpkt_fup, s->ip, false);
	truth_full(s, PTFLOW_EV_TSX, true, s->ip, (uint64_t)abrt << 1, 0);
	s->intx = false;
	if (!abrt)
		return false;
	put_ip(s, ptpkt_tip, s->tx_begin, false);
	s->ip = s->tx_begin;
	after_packet(s);
	return true;
}

/* ---- power events (33.2.3; 33.4.2.22-25; 33.7 Table 33-57) ---- */

static void put_pwre(struct ptsynth *s, bool hw, unsigned state, unsigned sub)
{
	struct ptpkt p;
	pkt_init(&p, ptpkt_pwre);
	p.u.pwre.hw = hw;
	p.u.pwre.state = (uint8_t)state;
	p.u.pwre.sub = (uint8_t)sub;
	put(s, &p);
	struct ptsynth_event ev;
	efipt_memset(&ev, 0, sizeof(ev));
	ev.type = PTFLOW_EV_PWRE;
	ev.value = state | sub << 4;
	ev.flag = hw;
	truth_ev(s, &ev);
}

/* EXSTOP(IP=1), FUP(ip): execution stopped before the instruction at ip. */
static void put_exstop(struct ptsynth *s, uint64_t ip)
{
	struct ptpkt p;
	pkt_init(&p, ptpkt_exstop);
	p.u.exstop.ip = true;
	put(s, &p);
	put_ip(s, ptpkt_fup, ip, false);
	truth_full(s, PTFLOW_EV_EXSTOP, true, ip, 0, 0);
}

/* Wake (case 7): TSC (TSCEn), CBR, PWRX(last, deepest, wake reason). No
 * TMA: the synthesizer writes no MTC (MTCEn=0). */
static void wake(struct ptsynth *s, unsigned last, unsigned deepest, unsigned wr)
{
	struct ptpkt p;
	if (s->cfg->tsc) {
		pkt_init(&p, ptpkt_tsc);
		p.u.tsc.tsc = s->w.fill * 3 + 5000;
		s->time = p.u.tsc.tsc;
		put(s, &p);
	}
	pkt_init(&p, ptpkt_cbr);
	p.u.cbr.ratio = PTSYNTH_CBR;
	put(s, &p);
	pkt_init(&p, ptpkt_pwrx);
	p.u.pwrx.last = (uint8_t)last;
	p.u.pwrx.deepest = (uint8_t)deepest;
	p.u.pwrx.wr = (uint8_t)wr;
	put(s, &p);
	truth_full(s, PTFLOW_EV_PWRX, false, 0, last | deepest << 4 | wr << 8, 0);
}

/* Hardware duty cycling at the boundary before s->ip (case 6):
 * PWRE(HW, C6), EXSTOP(IP), FUP(NLIP), then the wake: PWRX(CC6, CC6,
 * HW wake 0x8). C6 in MWAIT encoding (Vol. 2B Table 4-11) is state 2. */
static void hdc(struct ptsynth *s)
{
	flush_tnt(s);
	put_pwre(s, true, 2, 0);
	put_exstop(s, s->ip);
	wake(s, 2, 2, 0x8);
}

/* MWAIT at s->ip with PwrEvtEn: a quarter request C0 or find the monitor
 * unarmed (case 2: no packets); the others enter C1..C4 (hints 0x00-0x31)
 * (case 4): MWAIT(hints), PWRE(Cx), EXSTOP(IP), FUP(CLIP), and wake on a
 * store to the monitored address or the timer (case 7). */
static void mwait(struct ptsynth *s)
{
	if (!(rnd(s) & 3))
		return;
	unsigned state = (unsigned)(rnd(s) % 4), sub = (unsigned)(rnd(s) & 1);
	unsigned ext = (unsigned)(rnd(s) & 1);
	struct ptpkt p;
	flush_tnt(s);
	pkt_init(&p, ptpkt_mwait);
	p.u.mwait.hints = (uint8_t)(state << 4 | sub);
	p.u.mwait.ext = (uint8_t)ext;
	put(s, &p);
	truth_full(s, PTFLOW_EV_MWAIT, false, 0, (state << 4 | sub) | ext << 8, 0);
	put_pwre(s, false, state, sub);
	put_exstop(s, s->ip);
	wake(s, state, state, rnd(s) & 1 ? 0x4 : 0x2);
}

/* PTWRITE at ip with PTWEn (33.2.2, 33.4.2.21, Table 33-58 cases 2-3):
 * PTW(IP=FUPonPTW, 4 or 8 bytes of its operand), FUP(CLIP) if FUPonPTW.
 * The operand's value is not known here: a random one. */
static void ptwrite(struct ptsynth *s, const struct x86_insn *in, uint64_t ip)
{
	struct ptpkt p;
	bool fup = s->cfg->fup_on_ptw;
	flush_tnt(s);
	pkt_init(&p, ptpkt_ptw);
	p.u.ptw.ip = fup;
	p.u.ptw.bytes = in->osize == 64 ? 8 : 4;
	p.u.ptw.payload = rnd(s);
	if (p.u.ptw.bytes == 4)
		p.u.ptw.payload &= 0xffffffffu;
	put(s, &p);
	if (fup)
		put_ip(s, ptpkt_fup, ip, false);
	truth_full(s, PTFLOW_EV_PTWRITE, true, ip, p.u.ptw.payload, p.u.ptw.bytes);
}

int ptsynth_run(struct ptsynth *s, const struct ptsynth_config *cfg,
		const struct ptsynth_sink *sink, uint8_t *out, size_t cap,
		struct ptsynth_result *res)
{
	efipt_memset(res, 0, sizeof(*res));
	res->stop = PTSYNTH_STOP_ERROR;
	if (!s || !cfg || !cfg->image.read || !out || cap < 256)
		return -1;
	efipt_memset(s, 0, sizeof(*s));
	s->cfg = cfg;
	s->sink = sink;
	ptwr_init(&s->w, out, cap, cfg->psb_period, !cfg->disretc, NULL, NULL);
	s->w.distnt = cfg->distnt;
	s->w.hooks.ctx = s;
	s->w.hooks.before = before_packet;
	s->w.hooks.tnt_cap = next_tnt_cap;
	s->rng = cfg->seed * 0x9E3779B97F4A7C15ull + 0x1234567;
	if (!s->rng)
		s->rng = 1;
	s->mode = cfg->bits == 16 ? X86_MODE_16 : cfg->bits == 32 ? X86_MODE_32 : X86_MODE_64;
	s->int_countdown = cfg->p_interrupt ? (uint32_t)(rnd(s) % (2u * 65536 / cfg->p_interrupt + 1)) : 0;

	psb(s, false);
	enable_at(s, cfg->start, false);
	uint64_t restarts = 0;
	int stop = PTSYNTH_STOP_BUDGET;

	for (;;) {
		/* With DisTNT the closing FUP must not fall in a gap: a decoder
		 * still walking towards the Jcc would bind it to an earlier visit
		 * of its IP (see start_gap()). Walk on to the next IP packet,
		 * for at most 2^16 more instructions. */
		if (cfg->max_insns && s->steps >= cfg->max_insns &&
		    (!s->gap || s->steps >= cfg->max_insns + 65536))
			break;
		if (s->w.fill + RESERVE + 2 * PTPKT_PSB_SIZE + 256 > cap) {
			stop = PTSYNTH_STOP_SPACE;
			break;
		}
		s->steps++;
		if (s->lost) {
			lost_step(s);
			continue;
		}
		/* asynchronous interrupt before this instruction (33.7: FUP
		 * with the IP of the next instruction, TIP with the vector's
		 * handler) */
		if (cfg->p_interrupt && !s->intx && !s->gap && s->int_countdown-- == 0) {
			s->int_countdown = (uint32_t)(rnd(s) % (2u * 65536 / cfg->p_interrupt + 1));
			uint64_t h = cfg->handler ? cfg->handler : pick_entry(s);
			interrupt(s, s->ip, h);
			rpush(s, s->ip, 1);
			s->ip = h;
			after_packet(s);
			continue;
		}
		struct x86_insn in;
		bool ok = readable(s, s->ip, &in);
		if (s->intx && (!ok || !tx_plain(s, &in) || --s->tx_left == 0)) {
			if (tx_end(s))
				continue;
		}
		if (!ok) {
			uint64_t pfa;
			int vector = fetch_fault(s, &pfa);
			fault(s, vector, pfa);
			if (++restarts > 1000 && s->insns == 0) {
				stop = PTSYNTH_STOP_NOCODE;
				break;
			}
			enable_at(s, pick_entry(s), true);
			continue;
		}
		uint64_t ip = s->ip, next = ip + in.len;
		if (!s->intx && !s->gap && tx_plain(s, &in) && chance(s, cfg->p_tsx))
			tx_begin(s);
		if (!s->intx && !s->gap && chance(s, cfg->p_power))
			hdc(s);
		switch (in.iclass) {
		case X86_IC_OTHER:
		case X86_IC_PTWRITE: /* PTW below if PTWEn */
			break;
		case X86_IC_JMP_DIRECT:
		case X86_IC_CALL_DIRECT:
			if (!s->lost && !s->intx && endless_loop(s, ip, &in)) {
				/* stands for the loop being cut short: the branch
				 * into it faults (#GP), a new entry follows */
				fault(s, 13, 0);
				enable_at(s, pick_entry(s), true);
				continue;
			}
			break;
		case X86_IC_JCC:
		case X86_IC_RET_NEAR:
		case X86_IC_JMP_INDIRECT:
		case X86_IC_CALL_INDIRECT:
		case X86_IC_SYSCALL:
		case X86_IC_SYSENTER:
		case X86_IC_INT:
		case X86_IC_VMCALL:
			break;
		default:
			/* far transfers, IRET, SYSRET, VM entries, HLT, MOV CR3,
			 * UD*: privileged or faulting in the code we walk (#UD,
			 * else #GP) */
			fault(s, in.iclass == X86_IC_UD ? 6 : 13, 0);
			enable_at(s, pick_entry(s), true);
			continue;
		}
		if (in.iclass == X86_IC_RET_NEAR && s->rsn &&
		    s->rint[(s->rsp + PTSYNTH_STACK - 1) % PTSYNTH_STACK]) {
			/* leaving an injected interrupt: another async event takes
			 * us back before this RET runs */
			s->rsp = (uint16_t)((s->rsp + PTSYNTH_STACK - 1) % PTSYNTH_STACK);
			s->rsn--;
			uint64_t back = s->rstack[s->rsp];
			interrupt(s, ip, back);
			s->ip = back;
			after_packet(s);
			continue;
		}
		if (cfg->p_power && !s->gap && is_mwait(&in))
			mwait(s);
		/* with FUPonPTW the decoder binds the PTW at the FUP, before
		 * the PTWRITE runs; without, to the PTWRITE it walks */
		if (in.iclass == X86_IC_PTWRITE && cfg->ptw && cfg->fup_on_ptw)
			ptwrite(s, &in, ip);
		if (in.iclass == X86_IC_INT && cfg->event_trace)
			sw_int_cfe(s, &in, ip);
		s->insns++;
		if (sink && sink->insn)
			sink->insn(sink->ctx, ip);
		switch (in.iclass) {
		case X86_IC_JCC: {
			int bit = (int)(rnd(s) >> 63);
			if (cfg->biased) {
				/* most branches in real code go one way: give each
				 * its own direction and strength from its address */
				uint64_t h = (ip ^ (ip >> 17)) * 0x9E3779B97F4A7C15ull;
				uint32_t p = (h >> 61) == 0 ? 32768 : (h >> 62) & 1 ? 62000 : 3500;
				bit = (uint32_t)(rnd(s) >> 48) < p;
			}
			if (cfg->distnt) {
				start_gap(s, ip);
				s->ip = bit ? in.target : next;
				break;
			}
			ptwr_tnt(&s->w, bit);
			s->ip = bit ? in.target : next;
			after_packet(s);
			break;
		}
		case X86_IC_JMP_DIRECT:
			s->ip = in.target;
			break;
		case X86_IC_CALL_DIRECT:
			if (in.zero_len_call) {
				/* CALL +0 pushes its address, it is no call (33.4.2.2);
				 * the target is the next instruction (wrapped to the
				 * operand size, like any direct target) */
				s->ip = in.target;
				break;
			}
			rpush(s, next, 0);
			ptwr_call(&s->w, next);
			add_entry(s, in.target);
			s->ret[s->ret_next] = next;
			s->ret_next = (uint16_t)((s->ret_next + 1) % PTSYNTH_ENTRIES);
			if (s->nret < PTSYNTH_ENTRIES)
				s->nret++;
			s->ip = in.target;
			break;
		case X86_IC_RET_NEAR:
			if (cfg->distnt && !cfg->disretc && (s->w.depth || s->ret_unknown))
				start_gap(s, ip);
			if (!s->rsn && s->nret && (rnd(s) & 3)) {
				/* returning to a caller we never saw: pick a known
				 * return site; not compressible (no CALL seen) */
				s->ip = ip; /* for after_packet */
				tip(s, s->ret[rnd(s) % s->nret]);
				break;
			}
			if (!s->rsn) {
				/* returning to code outside the traced region: TIP.PGD
				 * with the target (a near branch does not clear
				 * ContextEn/TraceEn, so the IP is not suppressed) */
				uint64_t away = outside(s);
				flush_tnt(s);
				put_ip(s, ptpkt_tip_pgd, away, false);
				truth_event(s, PTFLOW_EV_DISABLED, true, away, 0);
				enable_at(s, pick_entry(s), true);
				break;
			}
			s->rsp = (uint16_t)((s->rsp + PTSYNTH_STACK - 1) % PTSYNTH_STACK);
			s->rsn--;
			if (ptwr_ret(&s->w, s->rstack[s->rsp])) {
				/* compressed: the stack top is this RET's target */
				s->ip = s->rstack[s->rsp];
				if (cfg->distnt) {
					start_gap(s, ip); /* no TNT bit either */
					break;
				}
				after_packet(s);
			} else {
				tip(s, s->rstack[s->rsp]);
			}
			break;
		case X86_IC_CALL_INDIRECT:
			rpush(s, next, 0);
			ptwr_call(&s->w, next);
			tip(s, pick_entry(s));
			break;
		case X86_IC_JMP_INDIRECT:
			tip(s, pick_entry(s));
			break;
		case X86_IC_SYSCALL:
		case X86_IC_SYSENTER:
		case X86_IC_INT:
		case X86_IC_VMCALL:
			/* into untraced system code (33.4.2.5: TIP.PGD without IP
			 * when ContextEn/CPL filtering ends tracing), back after it */
			flush_tnt(s);
			put_ip(s, ptpkt_tip_pgd, 0, true);
			truth_event(s, PTFLOW_EV_DISABLED, false, 0, 0);
			enable_at(s, next, false);
			break;
		case X86_IC_PTWRITE:
			if (cfg->ptw && !cfg->fup_on_ptw)
				ptwrite(s, &in, ip);
			s->ip = next;
			break;
		default:
			s->ip = next;
			break;
		}
	}
	/* close: tracing stops before the next instruction (TraceEn cleared) */
	if (s->lost)
		end_lost(s);
	if (s->intx)
		tx_end(s);
	fault(s, -1, 0);
	res->size = s->w.fill;
	res->insns = s->insns;
	res->packets = s->w.packets;
	res->stop = stop;
	return 0;
}
