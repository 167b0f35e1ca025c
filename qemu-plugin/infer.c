/* Branch and event inference; see infer.h. */
#include <string.h>

#include "qemu-plugin/infer.h"

/* CR0.PE, EFLAGS.VM, EFER.LMA (SDM Vol. 3A 2.5, 2.2.1) */
#define CR0_PE 1u
#define EFLAGS_VM (1u << 17)
#define EFER_LMA (1u << 10)
/* the CR3 bits a PIP carries (51:5, Table 33-24) */
#define PIP_CR3 0x000fffffffffffe0ull

static bool far_transfer(unsigned iclass)
{
	return iclass == X86_IC_FAR_JMP || iclass == X86_IC_FAR_CALL || iclass == X86_IC_FAR_RET ||
	       iclass == X86_IC_IRET || iclass == X86_IC_SYSCALL || iclass == X86_IC_SYSRET ||
	       iclass == X86_IC_SYSENTER || iclass == X86_IC_SYSEXIT;
}

void infer_block_regs(struct infer *f, const struct infer_regs *r)
{
	f->regs = *r;
	if (r->valid)
		f->reg_blocks++;
}

/* Real and virtual-8086 mode run 16-bit code; protected mode 32- or
 * 16-bit (CS.D); IA-32e mode 64-bit (CS.L) or, compatibility mode, 32- or
 * 16-bit. CS.L and CS.D are not readable: the size the lengths suggest
 * (guess) where the mode allows it, else the first the mode allows that
 * the lengths fit, else the one the mode usually has. A far transfer in
 * IA-32e mode goes to 64-bit code where the lengths allow it: that is how
 * firmware leaves the compatibility mode it enabled paging in (OVMF's
 * reset vector, its DXE IPL), and code that decodes alike in both sizes
 * would otherwise keep the 32 it came from. */
unsigned infer_regs_mode(const struct infer_regs *r, unsigned modes, unsigned guess, bool far)
{
	static const uint8_t real[] = { X86_MODE_16 };
	static const uint8_t prot[] = { X86_MODE_32, X86_MODE_16 };
	static const uint8_t ia32e[] = { X86_MODE_64, X86_MODE_32, X86_MODE_16 };
	const uint8_t *order = ia32e;
	size_t n = sizeof(ia32e);
	if (!(r->cr0 & CR0_PE) || (r->eflags & EFLAGS_VM))
		order = real, n = sizeof(real);
	else if (!(r->efer & EFER_LMA))
		order = prot, n = sizeof(prot);
	else if (far && (modes & PINSN_MODE_BIT(X86_MODE_64)))
		return X86_MODE_64;
	for (size_t i = 0; i < n; i++)
		if (order[i] == guess)
			return guess;
	for (size_t i = 0; i < n; i++)
		if (modes & PINSN_MODE_BIT(order[i]))
			return order[i];
	return order[0];
}

/* 33.4.2.7: a PIP after every MOV CR3 (Table 33-55 case 14), and where CR3
 * changed otherwise (a task switch: before the TIP, which binds it as
 * well); the first CR3 known goes into PSB+ only. Written whenever
 * TraceEn is set (OS=1), filtered out or not (33.2.5.2). */
static void cr3_update(struct infer *f, const struct pinsn *prev, unsigned pm, bool defer)
{
	if (!f->regs.valid)
		return;
	uint64_t cr3 = f->regs.cr3 & PIP_CR3;
	bool mov = prev && prev->iclass[pm] == X86_IC_MOV_CR3;
	if (f->cr3_known && (mov || cr3 != f->cr3)) {
		/* an event's PIP goes between its FUP and TIP (resolve()) */
		if (defer && !mov)
			f->pip_due = true;
		else
			ptgen_pip(f->g, cr3);
		f->pips++;
	}
	if (!f->cr3_known)
		f->cr3_start = cr3;
	f->cr3_known = true;
	f->cr3 = cr3;
	ptgen_set_cr3(f->g, cr3);
}

void infer_init(struct infer *f, const struct infer_config *cfg, struct ptgen *g)
{
	memset(f, 0, sizeof(*f));
	f->cfg = *cfg;
	f->g = g;
	f->mode = X86_MODE_16; /* the reset vector runs in real mode */
}

/*
 * The code size of p's block: QEMU 7.2 does not say (no CS access), but a
 * size in which the block's instruction lengths differ from QEMU's is
 * impossible. Keep the current one while it is possible (sizes change only
 * at far transfers and events, which go to code that mostly has
 * instructions telling the sizes apart), else take the one firmware goes
 * to next: 16 -> 32 (the reset vector enters protected mode), 32 -> 64
 * (long mode), 64 -> 32 (compatibility-mode thunks).
 */
static unsigned choose_mode(struct infer *f, const struct pinsn *p)
{
	static const uint8_t order[3][2] = {
		[X86_MODE_16] = { X86_MODE_32, X86_MODE_64 },
		[X86_MODE_32] = { X86_MODE_64, X86_MODE_16 },
		[X86_MODE_64] = { X86_MODE_32, X86_MODE_16 },
	};
	/* A far JMP/CALL with a 32-bit offset out of 16-bit code goes to
	 * 32-bit code (real mode to protected mode: the reset vector, an AP's
	 * start-up code); its target often decodes alike in both sizes until
	 * a later block tells them apart, too late for the MODE.Exec, which
	 * must come with the transfer's TIP (33.4.2.8). */
	const struct pinsn *prev = f->prev;
	if (f->mode == X86_MODE_16 && prev && (prev->flags & PINSN_FAR32) &&
	    prev->iclass[X86_MODE_16] != X86_IC_OTHER && (p->modes & PINSN_MODE_BIT(X86_MODE_32)))
		return X86_MODE_32;
	/* Likewise a far JMP right after a MOV CR0 in 32-bit code goes to
	 * 64-bit code, where its lengths allow: setting CR0.PG with EFER.LME
	 * enters IA-32e mode, and the far JMP loads a 64-bit CS (SDM Vol. 3A,
	 * "Initializing IA-32e Mode"). Debian 13's OVMF does so, to code
	 * (TEST, Jcc, JMP) that decodes alike in both sizes. */
	if (f->mode == X86_MODE_32 && prev && f->cr0_before_prev &&
	    prev->iclass[X86_MODE_32] == X86_IC_FAR_JMP && (p->modes & PINSN_MODE_BIT(X86_MODE_64)))
		return X86_MODE_64;
	/* INIT and a start-up IPI restart an AP in real mode at the vector's
	 * 4 KiB page below 1 MiB (SDM Vol. 3A, the MP
	 * initialization protocol), out of wherever it
	 * waited (HLT, a PAUSE loop): not a branch of prev */
	if (prev && f->mode != X86_MODE_16 && p->addr < 0x100000 && !(p->addr & 0xfff) &&
	    p->addr != prev->addr + prev->len &&
	    (prev->iclass[f->mode] == X86_IC_OTHER || prev->iclass[f->mode] == X86_IC_HLT) &&
	    (p->modes & PINSN_MODE_BIT(X86_MODE_16)))
		return X86_MODE_16;
	if (p->modes & PINSN_MODE_BIT(f->mode))
		return f->mode;
	for (int i = 0; i < 2; i++)
		if (p->modes & PINSN_MODE_BIT(order[f->mode][i]))
			return order[f->mode][i];
	f->no_mode++;
	return f->mode;
}

/* Direct target reached? The target is the one a decoder computes from
 * the linear IP (x86_decode()); where the CPU went elsewhere (an event, or
 * 16-bit code wrapping at its segment end) the caller sends FUP+TIP. */
static bool reaches(const struct pinsn *p, unsigned mode, uint64_t a)
{
	return a == p->target[mode];
}

/* p ran in mode pm and the next instruction is at a, in mode am. */
/* Whether resolve() reports p's transfer to a as an event: FUP, then TIP. */
static bool is_event(const struct pinsn *p, unsigned pm, uint64_t a)
{
	uint64_t next = p->addr + p->len;
	switch (p->iclass[pm]) {
	case X86_IC_JCC:
		return a != next && !reaches(p, pm, a);
	case X86_IC_CALL_DIRECT:
	case X86_IC_JMP_DIRECT:
		return !reaches(p, pm, a);
	case X86_IC_CALL_INDIRECT:
	case X86_IC_RET_NEAR:
		return false;
	case X86_IC_INT:
	case X86_IC_UD:
		return true;
	default:
		return x86_pt_report(p->iclass[pm]) != X86_PT_TIP && a != next;
	}
}

/* A near indirect branch or RET went to a, a handler's entry: was it
 * interrupted there (the caller read the event's frame at a)? Then *to is
 * where the branch went, and where the event struck (the FUP's IP: the
 * next instruction for an interrupt, the faulting one for a fault, 33.4.2.6
 * and Table 33-23, both the frame's IP). */
static bool struck(struct infer *f, uint64_t a, uint64_t *to)
{
	if (!f->regs.struck || f->regs.struck_ip == a)
		return false;
	f->regs.struck = false; /* one event per block entry */
	*to = f->regs.struck_ip;
	return true;
}

static void resolve(struct infer *f, const struct pinsn *p, unsigned pm, uint64_t a, unsigned am)
{
	struct ptgen *g = f->g;
	uint64_t next = p->addr + p->len;
	/* CR3 changed by the transfer itself: with an event (an interrupt, an
	 * AP's INIT and SIPI) the PIP follows the FUP (Table 33-55: FUP, PIP,
	 * MODE.Exec, TIP); with a far transfer it precedes its TIP */
	bool event_pip = f->pip_due && is_event(p, pm, a);
	if (f->pip_due && !event_pip)
		ptgen_pip(g, f->cr3);
	f->pip_due = false;
	switch (p->iclass[pm]) {
	case X86_IC_JCC:
		/* interrupted before the next instruction ran: the frame's IP
		 * is where the CPU resumes, its target when it was taken */
		if (struck(f, a, &next)) {
			if (next != p->addr + p->len && !reaches(p, pm, next)) {
				next = p->addr + p->len; /* neither: as without it */
				ptgen_jcc(g, false);
			} else {
				ptgen_jcc(g, next != p->addr + p->len);
			}
			goto event;
		}
		if (reaches(p, pm, a) && a != next) {
			ptgen_jcc(g, true);
			break;
		}
		ptgen_jcc(g, false);
		if (a != next)
			goto event;
		break;
	case X86_IC_CALL_DIRECT:
		if (!p->zero_len_call[pm])
			ptgen_call(g, next);
		/* fall through */
	case X86_IC_JMP_DIRECT:
		if (!reaches(p, pm, a)) {
			next = p->target[pm];
			goto event;
		}
		break;
	case X86_IC_CALL_INDIRECT:
		ptgen_call(g, next);
		if (struck(f, a, &next)) {
			ptgen_tip(g, next, g->w.mode);
			goto event;
		}
		ptgen_tip(g, a, am);
		break;
	case X86_IC_RET_NEAR:
		if (struck(f, a, &next)) {
			ptgen_ret(g, next);
			goto event;
		}
		if (am != g->w.mode)
			ptgen_mode(g, am);
		ptgen_ret(g, a);
		break;
	case X86_IC_INT:
	case X86_IC_UD:
		/* FUP at the instruction itself (Table 33-23): for a software
		 * interrupt, and for the #UD fault a UD always takes (a fault's
		 * IP is the faulting instruction's, which does not retire);
		 * a decoder reports the event before it, not it as executed */
		f->events++;
		f->traced--;
		if (event_pip)
			ptgen_event_pip(g, p->addr, a, am);
		else
			ptgen_event(g, p->addr, a, am);
		if (f->on_event)
			f->on_event(f->event_ctx, f->traced, p->addr, a);
		break;
	default:
		/* indirect JMP and far transfers: a TIP (33.2.1, Table 33-1) */
		if (p->iclass[pm] == X86_IC_JMP_INDIRECT && struck(f, a, &next)) {
			ptgen_tip(g, next, g->w.mode);
			goto event;
		}
		if (x86_pt_report(p->iclass[pm]) == X86_PT_TIP) {
			ptgen_tip(g, a, am);
			break;
		}
		/* no packet: anywhere but the next instruction is an event */
		if (a != next)
			goto event;
		break;
	}
	if (am != g->w.mode)
		ptgen_mode(g, am); /* no IP packet to carry it */
	return;
event:
	f->events++;
	if (event_pip)
		ptgen_event_pip(g, next, a, am);
	else
		ptgen_event(g, next, a, am);
	if (f->on_event)
		f->on_event(f->event_ctx, f->traced, next, a);
}

static bool starts(const struct infer *f, const struct pinsn *p, unsigned mode)
{
	switch (f->cfg.start) {
	case INFER_START_RESET:
		return true;
	case INFER_START_PROTECTED:
		return mode != X86_MODE_16;
	case INFER_START_MARKER:
		return p->flags & PINSN_START;
	case INFER_START_GUEST:
		return f->guest == INFER_GUEST_NEXT;
	default:
		return p->addr == f->cfg.start_addr;
	}
}

static bool stops(const struct infer *f, const struct pinsn *p)
{
	if (f->cfg.limit && f->traced >= f->cfg.limit)
		return true;
	if (f->guest == INFER_GUEST_OFF)
		return true;
	switch (f->cfg.stop) {
	case INFER_STOP_MARKER:
		return p->flags & PINSN_STOP;
	case INFER_STOP_ADDR:
		return p->addr == f->cfg.stop_addr;
	default:
		return false;
	}
}

/* In the filter ranges (33.2.5.3; none: everywhere)? */
static bool in_filter(const struct infer *f, uint64_t ip)
{
	if (!f->cfg.nfilter)
		return true;
	for (unsigned i = 0; i < f->cfg.nfilter; i++)
		if (ip >= f->cfg.filter_a[i] && ip <= f->cfg.filter_b[i])
			return true;
	return false;
}

/* p ran in mode pm, in range, and went to a, out of range: PacketEn
 * clears (TIP.PGD with a; after an event, its FUP first). */
static __attribute__((noinline)) void leave(struct infer *f, const struct pinsn *p, unsigned pm, uint64_t a)
{
	uint64_t next = p->addr + p->len;
	uint64_t from = 0;
	switch (p->iclass[pm]) {
	case X86_IC_JCC:
		if (reaches(p, pm, a)) {
			/* taken: TIP.PGD without IP replaces its TNT bit */
			ptgen_leave(f->g, 0, a, true);
			return;
		}
		/* neither way: an event after it, which found it not
		 * taken (as in resolve()): its TNT bit, then the FUP */
		ptgen_jcc(f->g, false);
		from = next;
		break;
	case X86_IC_CALL_DIRECT:
	case X86_IC_JMP_DIRECT:
		if (!reaches(p, pm, a))
			from = p->target[pm];
		break;
	case X86_IC_INT:
	case X86_IC_UD:
		from = p->addr; /* as in resolve(): Table 33-56 case 8 */
		f->traced--;
		break;
	default:
		/* a TIP due (x86_pt_report()): the TIP.PGD's IP is theirs */
		if (x86_pt_report(p->iclass[pm]) == X86_PT_TIP)
			break;
		/* no packet (as in resolve()): anywhere but the next
		 * instruction is an event after it, e.g. an interrupt that
		 * wakes a HLT; its FUP binds the TIP.PGD (Table 33-21) */
		if (a != next)
			from = next;
		break;
	}
	if (from)
		f->events++;
	ptgen_leave(f->g, from, a, false);
}

/* ContextEn under CR3 filtering (33.2.5.2): CR3 bits 63:12 equal
 * IA32_RTIT_CR3_MATCH's (63:5 in PAE paging mode, which needs CR4, not
 * read: firmware and Linux on x86-64 use 4- or 5-level paging). An unknown
 * CR3 (no registers) matches nothing. */
static bool context_en(const struct infer *f)
{
	if (!f->cfg.cr3_filter)
		return true;
	return f->cr3_known && !((f->cr3 ^ f->cfg.cr3_match) & ~0xfffull);
}

/* CR3 filtering, at p (mode am) after prev (mode pm), whose CR3 write was
 * just told (cr3_update()): -1 p is not traced (ContextEn is 0, or it just
 * went to 0: TIP.PGD without IP, which a decoder binds to the MOV CR3
 * after its PIP, Table 33-21; an event's FUP first), 1 ContextEn just went
 * to 1 and p is traced from its TIP.PGE, 0 nothing changed. Out of line:
 * see trace_filtered(). */
static __attribute__((noinline)) int cr3_filter(struct infer *f, const struct pinsn *prev,
						 unsigned pm, const struct pinsn *p, unsigned am)
{
	bool ctx = context_en(f);
	if (ctx == f->context_en)
		return ctx ? 0 : -1;
	f->context_en = ctx;
	f->context_changes++;
	if (!ctx) {
		if (f->packet_en) {
			/* an event that changed CR3: FUP, PIP, TIP.PGD() (Table
			 * 33-55 case 12, the TIP without IP: 33.4.2.5); a MOV
			 * CR3 has had its PIP */
			if (prev && prev->iclass[pm] != X86_IC_MOV_CR3 && is_event(prev, pm, p->addr))
				ptwr_ip(&f->g->w, ptpkt_fup,
					prev->iclass[pm] == X86_IC_INT || prev->iclass[pm] == X86_IC_UD
						? prev->addr : prev->addr + prev->len);
			if (f->pip_due)
				ptgen_pip(f->g, f->cr3);
			ptgen_leave(f->g, 0, 0, true);
		}
		f->pip_due = false;
		f->packet_en = false;
		return -1;
	}
	f->packet_en = in_filter(f, p->addr);
	f->pip_due = false; /* told by its PIP already, or in PSB+ */
	if (!f->packet_en)
		return -1;
	ptgen_enable(f->g, p->addr, am); /* TIP.PGE at the next instruction */
	if (!f->traced)
		f->first_ip = p->addr;
	return 1;
}

/* Goes on to the next instruction like a NOP: no branch, and no packet
 * for PT to report it with (x86_pt_report(); direct JMP/CALL are taken
 * branches with no packet; a UD always faults). */
static bool goes_on(unsigned iclass)
{
	return x86_pt_report(iclass) == X86_PT_NONE && iclass != X86_IC_JMP_DIRECT &&
	       iclass != X86_IC_CALL_DIRECT && iclass != X86_IC_UD;
}

/* With filter ranges: a, in mode am, is where the trace (TraceEn) goes
 * next; false: out of the ranges (no packets). Out of line: the common
 * case without ranges stays short (see infer_exec()). */
static __attribute__((noinline)) bool trace_filtered(struct infer *f, const struct pinsn *prev,
						      unsigned pm, uint64_t a, unsigned am)
{
	/* FilterEn changes at taken branches and events only: a range entered
	 * or left by the next sequential instruction is noticed at the next
	 * transfer (33.2.5.3), as decoders expect */
	bool seq = a == prev->addr + prev->len &&
		   (goes_on(prev->iclass[pm]) || prev->iclass[pm] == X86_IC_JCC);
	bool in = seq ? f->packet_en : in_filter(f, a);
	if (f->packet_en && in) {
		resolve(f, prev, pm, a, am);
		if (ptgen_psb_due(f->g))
			ptgen_psb(f->g, true, a, am);
	} else if (f->packet_en) {
		leave(f, prev, pm, a);
	} else if (in) {
		ptgen_enable(f->g, a, am); /* TIP.PGE at the range's edge */
		if (!f->traced)
			f->first_ip = a;
	}
	f->packet_en = in;
	return in;
}

bool infer_exec(struct infer *f, struct pinsn *p)
{
	const struct pinsn *prev = f->prev;
	f->calls++;
	bool again = prev && p->addr == prev->addr && prev->iclass[f->mode] == X86_IC_OTHER;
	if (f->calls == f->watch_call && f->on_watch) {
		bool traced = f->tracing && f->packet_en;
		f->on_watch(f->watch_ctx, again && traced && f->traced ? f->traced - 1 : f->traced,
			    traced);
	}
	if (again)
		return false; /* the same instruction again: see infer.h */
	f->executed++;
	unsigned pm = f->mode;
	unsigned am = choose_mode(f, p);
	if (f->regs.valid) {
		bool far = prev && far_transfer(prev->iclass[pm]);
		unsigned rm = infer_regs_mode(&f->regs, p->modes, am, far);
		if (rm != am) {
			am = rm;
			f->reg_fixes++;
		}
	}
	if (am != pm)
		f->mode_changes++;
	f->mode = am;
	f->cr0_before_prev = prev && (prev->flags & PINSN_MOV_CR0);
	f->prev = p;
	if (f->done)
		return false;
	if (f->tracing) {
		/* without ranges resolve() runs next and places the PIP */
		cr3_update(f, prev, pm, !f->cfg.nfilter && f->packet_en);
		/* ContextEn changes with the CR3 write before p (cr3_filter()) */
		int ctx = f->cfg.cr3_filter ? cr3_filter(f, prev, pm, p, am) : 0;
		if (stops(f, p)) {
			if (f->packet_en) {
				if (!ctx) /* else p's TIP.PGE is the last IP packet */
					resolve(f, prev, pm, p->addr, am);
				ptgen_disable(f->g, p->addr);
			}
			f->end_ip = p->addr;
			f->tracing = false;
			f->end_call = f->calls - 1;
			if (f->guest == INFER_GUEST_OFF) {
				/* the guest may set TraceEn again; QEMU runs on */
				f->guest = INFER_GUEST_NONE;
				return false;
			}
			f->done = true;
			return true;
		}
		if (ctx < 0) {
			f->filtered++;
			return false;
		}
		if (ctx > 0)
			goto traced;
		if (!f->cfg.nfilter) {
			resolve(f, prev, pm, p->addr, am);
			if (ptgen_psb_due(f->g))
				ptgen_psb(f->g, true, p->addr, am);
		} else if (!trace_filtered(f, prev, pm, p->addr, am)) {
			f->filtered++;
			return false;
		}
		if (f->g->w.full) {
			/* stop mode: the trace is full, like a ToPA STOP region
			 * (33.2.7.2); the instructions from here are not in it */
			f->tracing = false;
			f->done = true;
			f->full = true;
			f->end_call = f->calls - 1;
			/* start=guest: the unit stopped (STOP region, error);
			 * the guest goes on and its run ends with QEMU */
			return f->cfg.start != INFER_START_GUEST;
		}
	} else if (f->guest == INFER_GUEST_OFF) {
		f->guest = INFER_GUEST_NONE; /* TraceEn cleared where nothing was traced */
		return false;
	} else if (f->calls > f->cfg.after && starts(f, p, am)) {
		f->tracing = true;
		cr3_update(f, NULL, am, false);
		if (f->cfg.start == INFER_START_GUEST) {
			f->guest = INFER_GUEST_NONE;
			if (f->segments++)
				goto enabled; /* first_call, first_ip: the first span's */
		}
		f->first_call = f->calls - 1;
	enabled:
		f->context_en = context_en(f);
		f->packet_en = in_filter(f, p->addr) && f->context_en;
		if (!f->packet_en) {
			ptgen_psb(f->g, false, 0, am); /* TraceEn: PSB+, no IP */
			return false;
		}
		if (!f->traced)
			f->first_ip = p->addr;
		ptgen_enable(f->g, p->addr, am);
	} else {
		return false;
	}
traced:
	f->traced++;
	if (!(p->flags & PINSN_SEEN) && f->code) {
		f->code(f->code_ctx, p);
		p->flags |= PINSN_SEEN;
	}
	return false;
}

bool infer_exec_run(struct infer *f, struct pinsn *p, size_t k, bool straight)
{
	size_t i = 0;
	if (straight && k > 1) {
		if (infer_exec(f, &p[0]))
			return true;
		i = 1;
		uint64_t more = k - 1;
		/* sequential: the filter state stays as p[0] left it */
		bool watched = f->watch_call > f->calls && f->watch_call <= f->calls + more;
		bool fast = !watched && (f->done || (f->tracing && (!f->packet_en || !f->cfg.limit ||
									f->traced + more <= f->cfg.limit)));
		if (fast) {
			/* falls through p[1..k-1]: no packet, nothing to decide */
			f->calls += more;
			f->executed += more;
			f->cr0_before_prev = p[k - 2].flags & PINSN_MOV_CR0;
			f->prev = &p[k - 1];
			if (f->done)
				return false;
			if (!f->packet_en) {
				f->filtered += more;
				return false;
			}
			f->traced += more;
			if (!f->code || k <= p[0].seen_run)
				return false; /* their code is known: no look at each */
			for (i = 1; i < k; i++) {
				if (!(p[i].flags & PINSN_SEEN)) {
					f->code(f->code_ctx, &p[i]);
					p[i].flags |= PINSN_SEEN;
				}
			}
			p[0].seen_run = (uint16_t)k;
			return false;
		}
	}
	for (; i < k; i++)
		if (infer_exec(f, &p[i]))
			return true;
	return false;
}

void infer_guest_on(struct infer *f)
{
	if (f->full) {
		f->full = false;
		f->done = false;
		f->g->w.full = false;
		f->g->resync = true;
	}
	f->guest = INFER_GUEST_NEXT;
}

void infer_guest_off(struct infer *f)
{
	f->guest = INFER_GUEST_OFF;
}

void infer_finish(struct infer *f)
{
	if (!f->tracing)
		return;
	f->end_call = f->calls;
	if (!f->packet_en) { /* TraceEn cleared out of range: no packet */
		f->tracing = false;
		f->done = true;
		return;
	}
	/* Where the last instruction went is unknown. After one that goes on
	 * like a NOP (PTWRITE, MOV CR3 and HLT too: goes_on()) it is its next
	 * IP; after a branch the IP is suppressed (33.4.2.5), and a UD's #UD
	 * handler never ran: stop before either. */
	const struct pinsn *p = f->prev;
	if (goes_on(p->iclass[f->mode])) {
		f->end_ip = p->addr + p->len;
	} else {
		/* after a branch to where is unknown: stop before it */
		f->end_ip = p->addr;
		f->traced--;
	}
	ptgen_disable(f->g, f->end_ip);
	f->tracing = false;
	f->done = true;
}
