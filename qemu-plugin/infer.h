/*
 * From the instructions QEMU executes, one after the other, to the branches
 * and events a processor would have traced. The plugin sees no registers
 * and no interrupts, only which instruction runs next, so for each executed
 * instruction P followed by the one at A:
 *  - not a branch: A is P's next instruction, else an asynchronous event
 *    (interrupt, exception) came after P: FUP(next IP), TIP(A);
 *  - Jcc: taken if A is its target, not taken if A is the next instruction;
 *    neither: an event right after it, with the outcome the event's frame
 *    gives (infer_regs.struck, plugin API 4: the IP the CPU resumes at is
 *    the target or the next instruction), else taken as not taken (which
 *    changes no executed instruction);
 *  - direct JMP/CALL: A is the target, else an event at the target;
 *  - indirect JMP/CALL, RET, far transfers: A is the target, unless the
 *    caller says A's block is a handler the branch was interrupted into
 *    (infer_regs.struck: the event's frame read, plugin API 4): then the
 *    branch went to the frame's IP and an event struck there;
 *  - INT n/INT3/INTO/INT1, and UD0/UD1/UD2 (always #UD, a fault): FUP at
 *    the instruction, which does not count as executed, TIP(A) (Table
 *    33-23; Table 33-55 13);
 *  - A == P's own address after a non-branch: the same instruction again
 *    (a REP iteration, an I/O instruction QEMU restarts): not a new one.
 * The code size of each block is the one its instruction lengths allow,
 * kept while it stays possible (see choose_mode() in infer.c). Where QEMU
 * lets the plugin read registers (plugin API 2, QEMU 9.0 on) the caller
 * gives each block's CR0, EFER, EFLAGS and CR3 (infer_block_regs()): real,
 * virtual-8086, protected and long mode come from CR0.PE, EFLAGS.VM and
 * EFER.LMA, and the lengths choose only among the sizes those allow (QEMU
 * does not expose the CS descriptor's L and D bits); CR3 gives PIP packets.
 */
#ifndef EFIPT_PLUGIN_INFER_H
#define EFIPT_PLUGIN_INFER_H

#include <stdbool.h>
#include <stdint.h>

#include "qemu-plugin/insn_info.h"
#include "qemu-plugin/ptgen.h"

enum infer_start {
	INFER_START_RESET,	/* the first instruction executed */
	INFER_START_PROTECTED,	/* the first one outside 16-bit code */
	INFER_START_MARKER,	/* the start marker (traced from the marker) */
	INFER_START_ADDR,	/* the first execution of an address */
	INFER_START_GUEST,	/* the guest's own WRMSRs (pt=guest): from each
				 * TraceEn 0 -> 1 to the next 1 -> 0, see
				 * infer_guest_on() */
};

enum infer_stop {
	INFER_STOP_EXIT,	/* QEMU exits */
	INFER_STOP_MARKER,	/* before the stop marker */
	INFER_STOP_ADDR,	/* before the first execution of an address */
};

struct infer_config {
	int start, stop;	/* enum infer_start, enum infer_stop */
	uint64_t start_addr, stop_addr;
	uint64_t limit;		/* most instructions traced (0: no limit) */
	uint64_t after;		/* start only after this many executions */
	unsigned nfilter;	/* address ranges (ADDRn_CFG=1): packets only */
	uint64_t filter_a[4], filter_b[4];	/* for IPs in [a, b] */
	bool cr3_filter;	/* CR3Filter: ContextEn only where CR3 matches */
	uint64_t cr3_match;	/* IA32_RTIT_CR3_MATCH (registers: plugin API 2) */
};

/* Registers at the start of a block (plugin API 2 on). struck: the block
 * is an interrupt or exception handler entered right after a near RET,
 * indirect JMP/CALL or Jcc, which the block order alone cannot tell from
 * that branch's target (or, for a Jcc, whether it was taken); struck_ip is the IP the event's stack frame holds (where
 * the branch really went, and the event struck). */
struct infer_regs {
	bool valid;
	uint64_t cr0, efer, eflags, cr3;
	bool struck;
	uint64_t struck_ip;
};

struct infer {
	struct infer_config cfg;
	struct infer_regs regs;		/* of the block being fed */
	bool cr3_known;
	uint64_t cr3;			/* the CR3 the trace last told (PIP) */
	uint64_t cr3_start;		/* ... when tracing started */
	uint64_t pips;			/* PIP packets for CR3 writes */
	bool pip_due;			/* CR3 changed without MOV CR3: PIP at the transfer */
	uint64_t reg_blocks;		/* blocks whose size the registers bound */
	uint64_t reg_fixes;		/* instructions whose size they corrected */
	struct ptgen *g;
	const struct pinsn *prev;	/* last instruction executed */
	bool cr0_before_prev;		/* ... and the one before it was a
					 * MOV CR0 (PINSN_MOV_CR0) */
	unsigned mode;			/* enum x86_mode of prev's block */
	bool tracing;			/* TraceEn */
	bool packet_en;			/* ... and in the filter ranges, ContextEn */
	bool context_en;		/* CR3 filtering: CR3 matches (33.2.5.2) */
	uint64_t context_changes;	/* ... times it changed while traced */
	bool done;			/* stopped for good */
	bool full;			/* ... because the trace filled (stop mode) */
	uint8_t guest;			/* start=guest: enum infer_guest */
	uint64_t segments;		/* start=guest: TraceEn 1 spans traced */
	uint64_t calls;			/* execution callbacks (a REP loop
					 * makes one per iteration) */
	uint64_t first_call;		/* calls before the first traced one */
	uint64_t end_call;		/* calls before tracing ended */
	uint64_t executed;		/* instructions QEMU ran */
	uint64_t traced;		/* instructions in the trace */
	uint64_t filtered;		/* traced while out of the filter ranges */
	uint64_t first_ip;		/* first traced instruction */
	uint64_t end_ip;		/* where tracing stopped: the first
					 * instruction not traced (TIP.PGD) */
	uint64_t events;		/* FUP+TIP pairs written */
	uint64_t mode_changes;
	uint64_t no_mode;		/* blocks no code size fits */
	/* called when execution callback number watch_call (counted as
	 * calls, from 1) is fed: the index its instruction has in the trace
	 * (the instructions traced before it; a REP iteration, its first's),
	 * and whether it is traced */
	uint64_t watch_call;
	void (*on_watch)(void *ctx, uint64_t index, bool traced);
	void *watch_ctx;
	/* called at each event traced (FUP+TIP: an interrupt, an exception,
	 * INT n): the index in the trace of the instruction after it (the
	 * handler's first), the FUP's IP and the TIP's */
	void (*on_event)(void *ctx, uint64_t index, uint64_t ip, uint64_t handler);
	void *event_ctx;
	/* called for each traced instruction the first time (its bytes) */
	void (*code)(void *ctx, const struct pinsn *p);
	void *code_ctx;
};

void infer_init(struct infer *f, const struct infer_config *cfg, struct ptgen *g);
/* QEMU is about to execute p. Returns true when tracing just ended for
 * good (a stop condition): the caller writes its files. */
bool infer_exec(struct infer *f, struct pinsn *p);
/* QEMU executed p[0..k-1], a stretch of one block. straight: p[0..k-2]
 * are no branches in any code size the block allows and hold no marker
 * or start/stop address, so that only p[0]'s arrival and the count need
 * work while tracing. Returns as infer_exec(). */
bool infer_exec_run(struct infer *f, struct pinsn *p, size_t k, bool straight);
/* The registers at the start of the block whose instructions come next
 * (until the next call); r->valid false: not known. */
void infer_block_regs(struct infer *f, const struct infer_regs *r);
/* The code size CR0.PE, EFLAGS.VM and EFER.LMA allow: guess (what the
 * lengths suggest) where they allow it, else one of those they allow that
 * is in modes (PINSN_MODE_BIT()s); 64 after a far transfer (far) in IA-32e
 * mode where modes has it. */
unsigned infer_regs_mode(const struct infer_regs *r, unsigned modes, unsigned guess, bool far);
/* start=guest (SDM Table 33-55): infer_guest_off() before the WRMSR that
 * clears TraceEn is fed: tracing stops before it, FUP(CLIP), TIP.PGD()
 * (case 3); infer_guest_on() after the WRMSR that set TraceEn with
 * TriggerEn was fed: tracing starts at the next instruction,
 * TIP.PGE(NLIP) (case 2). The WRMSRs themselves are not traced. Tracing
 * stopped by a full output (the unit's Stopped or Error: ptgen's w.full)
 * resumes when the guest clears STATUS and sets TraceEn again (SDM
 * 33.2.7.2 "ToPA STOP"): a new span, opened with PSB+, as the last packet
 * before it may be cut. */
enum infer_guest { INFER_GUEST_NONE, INFER_GUEST_NEXT, INFER_GUEST_OFF };
void infer_guest_on(struct infer *f);
void infer_guest_off(struct infer *f);

/* QEMU exits: end the trace (TIP.PGD at the next IP, if tracing). */
void infer_finish(struct infer *f);

#endif
