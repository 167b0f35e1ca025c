/*
 * Per-function instruction counts over the call stack (efipt top):
 * exclusive (instructions in the function itself), inclusive (instructions
 * while it is on the stack, counted once however deep it recurses) and calls
 * (frames entered by CALL, tail call or interrupt); where the trace has
 * timing packets, the same as time (callstack.h: a frame's time runs from
 * the time of the block that enters it to that of the block that leaves it).
 *
 * Interrupts apart: an instruction is an interrupt's when an async frame
 * (cs_frame.async: the handler of an asynchronous event and what it calls)
 * is on the stack. Each count has its interrupt part (_irq): exclusive,
 * the function's instructions in interrupts; inclusive, the interrupts'
 * instructions while it was on the stack (below the handler, or in it);
 * calls, its frames entered in interrupts. The code's own part is the
 * count less its interrupt part. incl_in_irq: the interrupts' instructions
 * while a frame of it was in an interrupt (at or above the handler's).
 */
#ifndef EFIPT_HOST_PROFILE_H
#define EFIPT_HOST_PROFILE_H

#include <stdint.h>

#include "host/stack/callstack.h"

struct profile_fn {
	uint64_t excl, incl, calls;
	uint64_t since;		/* instruction index it went on the stack */
	uint32_t on_stack;	/* frames of it on the stack */
	/* time (TSC ticks), where the trace has it: exclusive (on top of
	 * the stack), inclusive, the TSC it went on the stack */
	uint64_t excl_t, incl_t, since_t;
	/* the interrupt parts; since_irq: the interrupts' instructions
	 * (profile_irq_insns()) when it went on the stack */
	uint64_t excl_irq, incl_irq, calls_irq, since_irq;
	uint64_t incl_in_irq, since_in_irq;
	uint32_t in_irq;	/* frames of it in an interrupt */
	/* the same in time (TSC ticks) */
	uint64_t excl_t_irq, incl_t_irq, since_t_irq, incl_t_in_irq, since_t_in_irq;
};

struct profile {
	struct profile_fn *fn;	/* by symtab function id */
	uint32_t n;
	uint64_t mark;		/* instruction index when the top frame changed */
	int oom;
	/* interrupts: the outermost async frame on the stack (its index + 1;
	 * 0: none), the instruction index it began at, the instructions of
	 * the interrupts that ended, how many interrupts began */
	uint32_t irq_base;
	uint64_t irq_start, irq_done, irqs;
	uint64_t irq_t_start, irq_t_done;	/* the same in time */
	/* the time has begun (the first on_time): before it, no frame on
	 * the stack holds a start time, and a snapshot counts no time */
	int timed;
};

/* The instructions run in interrupts so far (cs->insns the clock). */
uint64_t profile_irq_insns(const struct profile *p, const struct callstack *cs);
/* The time (TSC ticks) in interrupts up to now (a TSC, cs->now or before
 * it since the last frame change). */
uint64_t profile_irq_ticks(const struct profile *p, uint64_t now);

/* The listener to give cs_init (ctx: the profile). It needs no insns
 * callback: the instructions between two frame changes are the top
 * frame's, so enter and leave add them (mark). */
struct cs_listener profile_listener(struct profile *p);

void profile_free(struct profile *p);

/* The counts as they would be if every frame on the stack left now (the
 * profile is not changed): out[0..p->n), malloc'd, or NULL out of memory.
 * Two of them subtract to the counts between the two moments. */
struct profile_fn *profile_snapshot(const struct profile *p, const struct callstack *cs);
/* The same at instruction insns and time now, between the last frame
 * change (its mark) and cs->insns, cs->now, frame top (-1: none) on top
 * since that change: the counts as they were at insns, the inclusive
 * times of the frames on the stack up to now. */
struct profile_fn *profile_snapshot_at(const struct profile *p, const struct callstack *cs,
				       uint64_t insns, uint64_t now, int64_t top);

#endif
