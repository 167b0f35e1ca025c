/*
 * Trace synthesizer. See pt_synth.h. Section numbers: Intel SDM Vol. 3C.
 */
#include "core/pt_synth.h"

#include "core/mem.h"
#include "core/pt_flow.h"
#include "core/pt_pkt.h"
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

static void truth_event(struct ptsynth *s, int type, bool has_ip, uint64_t ip, uint64_t target)
{
	if (s->sink && s->sink->event)
		s->sink->event(s->sink->ctx, type, has_ip, ip, target);
}

static bool put(struct ptsynth *s, const struct ptpkt *p)
{
	int n = ptpkt_encode(s->out + s->pos, s->cap - s->pos, p);
	if (n < 0)
		return false;
	s->pos += (size_t)n;
	s->packets++;
	return true;
}

static void put_simple(struct ptsynth *s, int type)
{
	struct ptpkt p;
	efipt_memset(&p, 0, sizeof(p));
	p.type = (uint8_t)type;
	put(s, &p);
}

/* IP compression against Last IP (33.4.2.2, Table 33-18): the shortest
 * form that reconstructs ip, sometimes a longer one. */
static void put_ip(struct ptsynth *s, int type, uint64_t ip, bool suppress)
{
	bool full = type == ptpkt_fup && s->full_next;
	s->last_tnt = false;
	s->full_next = false;
	struct ptpkt p;
	efipt_memset(&p, 0, sizeof(p));
	p.type = (uint8_t)type;
	if (suppress) {
		p.u.ip.ipc = 0;
		put(s, &p);
		return;
	}
	uint64_t l = s->lastip;
	uint64_t sx = (uint64_t)((int64_t)(ip << 16) >> 16);
	unsigned r = (unsigned)(rnd(s) & 15);
	if (full) {
		p.u.ip.ipc = 6;
		p.u.ip.ip = ip;
	} else if ((ip >> 16) == (l >> 16) && r > 3) {
		p.u.ip.ipc = 1;
		p.u.ip.ip = ip & 0xffff;
	} else if ((ip >> 32) == (l >> 32) && r > 1) {
		p.u.ip.ipc = 2;
		p.u.ip.ip = ip & 0xffffffff;
	} else if (sx == ip && r > 0) {
		p.u.ip.ipc = 3;
		p.u.ip.ip = ip & 0xffffffffffffull;
	} else if ((ip >> 48) == (l >> 48) && r == 0) {
		p.u.ip.ipc = 4;
		p.u.ip.ip = ip & 0xffffffffffffull;
	} else {
		p.u.ip.ipc = 6;
		p.u.ip.ip = ip;
	}
	s->lastip = ip;
	put(s, &p);
}

static void flush_tnt(struct ptsynth *s)
{
	if (!s->tnt_n)
		return;
	struct ptpkt p;
	efipt_memset(&p, 0, sizeof(p));
	p.type = s->tnt_n > 6 ? ptpkt_tnt64 : ptpkt_tnt8;
	p.u.tnt.nbits = s->tnt_n;
	p.u.tnt.bits = s->tnt_bits;
	put(s, &p);
	s->tnt_n = 0;
	s->tnt_bits = 0;
	s->tnt_cap = (rnd(s) & 7) ? 6 : 47;
}

/* One TNT bit: a conditional branch or a compressed RET (33.4.2.1). */
static void tnt_bit(struct ptsynth *s, int bit)
{
	s->last_tnt = true;
	s->tnt_bits = s->tnt_bits << 1 | (uint64_t)bit;
	if (++s->tnt_n == s->tnt_cap)
		flush_tnt(s);
}

static void put_mode(struct ptsynth *s)
{
	struct ptpkt p;
	efipt_memset(&p, 0, sizeof(p));
	p.type = ptpkt_mode_exec;
	p.u.mode_exec.csl = s->mode == X86_MODE_64;
	p.u.mode_exec.csd = s->mode == X86_MODE_32;
	put(s, &p);
}

/* PSB+ (33.3.7, 33.4.2.17): PSB, status, PSBEND. Last IP and the RET compression
 * state do not cross it. */
static void psb(struct ptsynth *s, bool enabled)
{
	flush_tnt(s);
	put_simple(s, ptpkt_psb);
	s->lastip = 0;
	s->csn = 0;
	s->csp = 0;
	if (s->cfg->tsc) {
		struct ptpkt p;
		efipt_memset(&p, 0, sizeof(p));
		p.type = ptpkt_tsc;
		p.u.tsc.tsc = s->pos * 3 + 1000;
		put(s, &p);
	}
	put_mode(s);
	if (enabled)
		put_ip(s, ptpkt_fup, s->ip, false);
	put_simple(s, ptpkt_psbend);
	s->last_psb = s->pos;
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

static void cpush(struct ptsynth *s, uint64_t v)
{
	s->cstack[s->csp] = v;
	s->csp = (uint8_t)((s->csp + 1) % 64);
	if (s->csn < 64)
		s->csn++;
}

/* Tracing (re)starts at a function entry: MODE.Exec, TIP.PGE (33.7). */
static void enable_at(struct ptsynth *s, uint64_t ip)
{
	flush_tnt(s);
	/* 33.4.2.2: no RET is compressed across a PacketEn=0 window */
	s->csn = 0;
	s->csp = 0;
	s->ip = ip;
	put_mode(s);
	put_ip(s, ptpkt_tip_pge, ip, false);
	truth_event(s, PTFLOW_EV_ENABLED, true, ip, 0);
}

/* The instruction at ip does not complete (fault, unreadable): the
 * exception goes to an untraced handler: FUP(ip), TIP.PGD. */
static void fault(struct ptsynth *s)
{
	flush_tnt(s);
	put_ip(s, ptpkt_fup, s->ip, false);
	put_ip(s, ptpkt_tip_pgd, 0, true);
	truth_event(s, PTFLOW_EV_ASYNC_DISABLED, true, s->ip, 0);
}

/* After a packet-producing branch: PSB+ when due, sometimes an OVF. */
static void maybe_ovf(struct ptsynth *s, bool after_tip);

static void after_packet(struct ptsynth *s)
{
	if (s->pos - s->last_psb >= (s->cfg->psb_period ? s->cfg->psb_period : 4096)) {
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
	if (!after_tip || !chance(s, s->cfg->p_ovf))
		return;
	flush_tnt(s);
	put_simple(s, ptpkt_ovf);
	s->csn = 0;
	s->csp = 0;
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
		enable_at(s, pick_entry(s));
		return;
	}
	put_ip(s, ptpkt_tip, target, false);
	s->ip = target;
	s->last_tnt = false;
	after_packet(s);
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
	s->out = out;
	s->cap = cap;
	s->rng = cfg->seed * 0x9E3779B97F4A7C15ull + 0x1234567;
	if (!s->rng)
		s->rng = 1;
	s->tnt_cap = 6;
	s->mode = cfg->bits == 16 ? X86_MODE_16 : cfg->bits == 32 ? X86_MODE_32 : X86_MODE_64;
	s->int_countdown = cfg->p_interrupt ? (uint32_t)(rnd(s) % (2u * 65536 / cfg->p_interrupt + 1)) : 0;

	psb(s, false);
	enable_at(s, cfg->start);
	uint64_t restarts = 0;
	int stop = PTSYNTH_STOP_BUDGET;

	for (;;) {
		if (cfg->max_insns && s->steps >= cfg->max_insns)
			break;
		if (s->pos + RESERVE + 2 * PTPKT_PSB_SIZE + 64 > s->cap) {
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
		if (cfg->p_interrupt && s->int_countdown-- == 0) {
			s->int_countdown = (uint32_t)(rnd(s) % (2u * 65536 / cfg->p_interrupt + 1));
			uint64_t h = cfg->handler ? cfg->handler : pick_entry(s);
			flush_tnt(s);
			put_ip(s, ptpkt_fup, s->ip, false);
			put_ip(s, ptpkt_tip, h, false);
			truth_event(s, PTFLOW_EV_INTERRUPT, true, s->ip, h);
			rpush(s, s->ip, 1);
			s->ip = h;
			after_packet(s);
			continue;
		}
		struct x86_insn in;
		if (!readable(s, s->ip, &in)) {
			fault(s);
			if (++restarts > 1000 && s->insns == 0) {
				stop = PTSYNTH_STOP_NOCODE;
				break;
			}
			enable_at(s, pick_entry(s));
			continue;
		}
		uint64_t ip = s->ip, next = ip + in.len;
		switch (in.iclass) {
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
			break;
		}
		switch (in.iclass) {
		case X86_IC_OTHER:
		case X86_IC_PTWRITE: /* PTWEn=0: no PTW packet */
			break;
		case X86_IC_JCC:
		case X86_IC_JMP_DIRECT:
		case X86_IC_CALL_DIRECT:
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
			 * UD*: privileged or faulting in the code we walk */
			fault(s);
			enable_at(s, pick_entry(s));
			continue;
		}
		if (in.iclass == X86_IC_RET_NEAR && s->rsn &&
		    s->rint[(s->rsp + PTSYNTH_STACK - 1) % PTSYNTH_STACK]) {
			/* leaving an injected interrupt: another async event takes
			 * us back before this RET runs */
			s->rsp = (uint16_t)((s->rsp + PTSYNTH_STACK - 1) % PTSYNTH_STACK);
			s->rsn--;
			uint64_t back = s->rstack[s->rsp];
			flush_tnt(s);
			put_ip(s, ptpkt_fup, ip, false);
			put_ip(s, ptpkt_tip, back, false);
			truth_event(s, PTFLOW_EV_INTERRUPT, true, ip, back);
			s->ip = back;
			after_packet(s);
			continue;
		}
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
			tnt_bit(s, bit);
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
			cpush(s, next);
			add_entry(s, in.target);
			s->ret[s->ret_next] = next;
			s->ret_next = (uint16_t)((s->ret_next + 1) % PTSYNTH_ENTRIES);
			if (s->nret < PTSYNTH_ENTRIES)
				s->nret++;
			s->ip = in.target;
			break;
		case X86_IC_RET_NEAR:
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
				enable_at(s, pick_entry(s));
				break;
			}
			s->rsp = (uint16_t)((s->rsp + PTSYNTH_STACK - 1) % PTSYNTH_STACK);
			s->rsn--;
			if (!cfg->disretc && s->csn) {
				/* compressed RET: the stack top is this RET's target */
				s->csp = (uint8_t)((s->csp + 63) % 64);
				s->csn--;
				tnt_bit(s, 1);
				s->ip = s->rstack[s->rsp];
				after_packet(s);
			} else {
				tip(s, s->rstack[s->rsp]);
			}
			break;
		case X86_IC_CALL_INDIRECT:
			rpush(s, next, 0);
			cpush(s, next);
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
			enable_at(s, next);
			break;
		default:
			s->ip = next;
			break;
		}
	}
	/* close: tracing stops before the next instruction (TraceEn cleared) */
	if (s->lost)
		end_lost(s);
	fault(s);
	res->size = s->pos;
	res->insns = s->insns;
	res->packets = s->packets;
	res->stop = stop;
	return 0;
}
