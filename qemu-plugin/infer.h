/*
 * From the instructions QEMU executes, one after the other, to the branches
 * and events a processor would have traced. The plugin sees no registers
 * and no interrupts, only which instruction runs next, so for each executed
 * instruction P followed by the one at A:
 *  - not a branch: A is P's next instruction, else an asynchronous event
 *    (interrupt, exception) came after P: FUP(next IP), TIP(A);
 *  - Jcc: taken if A is its target, not taken if A is the next instruction;
 *    neither: an event right after it (the outcome is unknowable; taken as
 *    not taken, which changes no executed instruction);
 *  - direct JMP/CALL: A is the target, else an event at the target;
 *  - indirect JMP/CALL, RET, far transfers: A is the target;
 *  - INT n/INT3/INTO/INT1, and UD0/UD1/UD2 (always #UD, a fault): FUP at
 *    the instruction, which does not count as executed, TIP(A) (Table
 *    33-23; Table 33-55 13);
 *  - A == P's own address after a non-branch: the same instruction again
 *    (a REP iteration, an I/O instruction QEMU restarts): not a new one.
 * The code size of each block is the one its instruction lengths allow,
 * kept while it stays possible (see choose_mode() in infer.c).
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
};

struct infer {
	struct infer_config cfg;
	struct ptgen *g;
	const struct pinsn *prev;	/* last instruction executed */
	unsigned mode;			/* enum x86_mode of prev's block */
	bool tracing;			/* TraceEn */
	bool packet_en;			/* ... and in the filter ranges */
	bool done;			/* stopped for good */
	bool full;			/* ... because the trace filled (stop mode) */
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
/* QEMU exits: end the trace (TIP.PGD at the next IP, if tracing). */
void infer_finish(struct infer *f);

#endif
