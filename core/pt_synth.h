/*
 * Intel PT trace synthesizer: walks real code and writes the packets a
 * processor tracing that execution would write (SDM Vol. 3C 33.4, 33.7),
 * plus the ground truth (every executed instruction, every event).
 *
 * Branch outcomes come from a seeded PRNG; indirect branches go to function
 * entries seen so far (direct CALL targets) or given by the caller; a call
 * stack makes RETs go back where they came from. Packets: PSB+ every
 * psb_period bytes, TNT (short and long), TIP with IP compression against
 * Last IP, compressed RETs (unless DisRETC) and uncompressed ones,
 * FUP+TIP for injected interrupts (returning with another FUP+TIP),
 * OVF+FUP, TIP.PGE/TIP.PGD for leaving and re-entering traced code,
 * FUP+TIP.PGD where the code faults or cannot be read. Opt-in: DisTNT,
 * TSX transactions (MODE.TSX), PTW at PTWRITE instructions, power events
 * (MWAIT, PWRE, EXSTOP, PWRX), Event Trace (CFE, EVD) and re-enables in
 * the other code size (MODE.Exec).
 *
 * The firmware uses it as its "synthetic" trace source where the CPU has no
 * Intel PT. Freestanding: no allocation, no globals.
 */
#ifndef EFIPT_CORE_PT_SYNTH_H
#define EFIPT_CORE_PT_SYNTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/pt_image.h"
#include "core/pt_writer.h"

#define PTSYNTH_STACK 256	/* modelled software call stack */
#define PTSYNTH_ENTRIES 64	/* remembered function entries */

struct ptsynth_config {
	struct ptimg image;
	uint64_t start;			/* first instruction */
	const uint64_t *entries;	/* optional: more function entries */
	size_t nentries;
	uint64_t handler;		/* interrupt handler; 0: a known entry */
	uint64_t seed;
	uint64_t max_insns;		/* budget (0: until the buffer fills) */
	uint32_t psb_period;		/* bytes between PSB+ (0: 4096) */
	/* Chances per 65536 decisions: interrupt per instruction, overflow
	 * and disable (TIP.PGD to the target) per packet-producing branch. */
	uint32_t p_interrupt, p_ovf, p_disable;
	/* Opt-in, per 65536: a TSX transaction begins at an instruction
	 * (half of them abort); a power event (hardware duty cycling) at an
	 * instruction boundary, and PwrEvtEn: MWAIT instructions enter a
	 * C-state; tracing re-enabled in a new context runs in the other
	 * code size (64 <-> 32). */
	uint32_t p_tsx, p_power, p_mode;
	uint8_t bits;			/* code size: 16, 32 or 64 (0: 64) */
	bool disretc;			/* DisRETC: never compress RETs */
	bool distnt;			/* DisTNT: Jcc (and compressed RETs)
					 * write no TNT (33.3.9) */
	bool ptw, fup_on_ptw;		/* PTWEn, FUPonPTW: PTW at PTWRITE */
	bool event_trace;		/* EventEn: CFE/EVD at interrupts, faults */
	bool biased;			/* Jcc outcomes biased per branch, as in
					 * real programs (else 50/50) */
	bool tsc;			/* a TSC packet in each PSB+ */
	/* Cycle-accurate mode (33.3.6) with tsc: a CBR of PTSYNTH_CBR in each
	 * PSB+ and a CYC before each TNT, TIP or FUP outside it, counting the
	 * core cycles since the last TSC or CYC so that the time estimate
	 * (33.8.3.2, nominal ratio PTSYNTH_CBR) is 3 * trace offset + 1000
	 * there, like the TSCs. */
	bool cyc;
	/* MTC timing with tsc (33.8.3.2): a TMA after each PSB+'s TSC and an
	 * MTC before each TNT, TIP or FUP outside PSB+ whose crystal clock
	 * period (2^PTSYNTH_MTC_FREQ ticks) began since the last, carrying
	 * CTC[N+7:N] of a crystal clock at TSC / PTSYNTH_CTC_RATIO (CPUID.15H
	 * EBX/EAX = PTSYNTH_CPUID15_EBX / PTSYNTH_CPUID15_EAX). */
	bool mtc;
};
#define PTSYNTH_MTC_FREQ 1
#define PTSYNTH_CPUID15_EAX 2
#define PTSYNTH_CPUID15_EBX 12
#define PTSYNTH_CTC_RATIO (PTSYNTH_CPUID15_EBX / PTSYNTH_CPUID15_EAX)
#define PTSYNTH_CBR 32	/* the core:bus ratio of --cyc traces (the wake-up CBR too) */

/*
 * Ground truth event: the fields as the flow decoder reports them in a
 * struct ptflow_event (type is an enum ptflow_ev). Events bound to an IP
 * come where the decoder reports them: before the instruction at that IP
 * (TSX, EXSTOP, CFE, INTERRUPT, and PTWRITE with FUPonPTW), PTWRITE
 * without FUP after its instruction. MWAIT, PWRE, PWRX and EVD bind to no
 * instruction (has_ip false) and come in trace order.
 *
 * DisTNT: after a GAP event (at a Jcc or a RET the trace does not
 * resolve) the instructions up to a PTSYNTH_EV_RESYNC event are ones a
 * decoder cannot know; from there on it can follow the flow again.
 */
#define PTSYNTH_EV_RESYNC 0x100
struct ptsynth_event {
	int type;
	bool has_ip;
	bool flag;		/* PWRE: hardware initiated */
	uint64_t ip;
	uint64_t target;	/* INTERRUPT */
	uint64_t value;		/* as ptflow_event.value */
	uint64_t aux;		/* PTWRITE: payload bytes; EVD: type */
};

struct ptsynth_sink {
	void *ctx;
	void (*insn)(void *ctx, uint64_t ip);	/* may be NULL */
	void (*event)(void *ctx, const struct ptsynth_event *ev); /* may be NULL */
};

enum ptsynth_stop {
	PTSYNTH_STOP_BUDGET,	/* max_insns reached */
	PTSYNTH_STOP_SPACE,	/* output buffer full */
	PTSYNTH_STOP_NOCODE,	/* no decodable code at start or any entry */
	PTSYNTH_STOP_ERROR,	/* bad arguments */
};

struct ptsynth_result {
	size_t size;		/* trace bytes written */
	uint64_t insns;		/* instructions in the ground truth */
	uint64_t packets;
	int stop;		/* enum ptsynth_stop */
};

/* Working state, caller-owned (about 4 KiB). Fields are private. */
struct ptsynth {
	const struct ptsynth_config *cfg;
	const struct ptsynth_sink *sink;
	struct ptwr w;		/* the packets, into out */
	uint64_t rng;
	uint64_t ip;
	uint64_t insns, steps;
	uint32_t int_countdown;
	uint32_t lost;		/* instructions left in an overflow */
	uint8_t mode;
	bool intx;		/* in a TSX transaction */
	bool gap;		/* DisTNT: flow unknown since the last Jcc */
	bool ret_unknown;	/* DisTNT: a decoder lost calls in a gap */
	uint32_t tx_left;	/* instructions until the transaction ends */
	uint64_t tx_begin;	/* its XBEGIN: where an abort goes */
	bool full_next;		/* next FUP uncompressed */
	uint64_t time;		/* cfg.cyc: the time estimate of the packets so far */
	uint64_t mtc_period;	/* cfg.mtc: the crystal clock period of the last
				 * MTC (or the TMA) */
	uint16_t rsp, rsn;	/* software stack */
	uint16_t nent, ent_next;
	uint64_t rstack[PTSYNTH_STACK];
	uint8_t rint[PTSYNTH_STACK];	/* 1: interrupt frame (resume IP) */
	uint64_t ent[PTSYNTH_ENTRIES];
	uint64_t ret[PTSYNTH_ENTRIES];	/* return sites (after direct CALLs) */
	uint16_t nret, ret_next;
};

/* Synthesize into out[0..cap) (cap >= 256). Returns 0, or -1 on bad
 * arguments; res describes what was written and why it stopped. The trace
 * always ends on a packet boundary after FUP+TIP.PGD (or TIP.PGD). */
int ptsynth_run(struct ptsynth *s, const struct ptsynth_config *cfg,
		const struct ptsynth_sink *sink, uint8_t *out, size_t cap,
		struct ptsynth_result *res);

#endif
