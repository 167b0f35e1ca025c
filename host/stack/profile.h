/*
 * Per-function instruction counts over the call stack (efipt top):
 * exclusive (instructions in the function itself), inclusive (instructions
 * while it is on the stack, counted once however deep it recurses) and calls
 * (frames entered by CALL, tail call or interrupt); where the trace has
 * timing packets, the same as time (callstack.h: a frame's time runs from
 * the time of the block that enters it to that of the block that leaves it).
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
};

struct profile {
	struct profile_fn *fn;	/* by symtab function id */
	uint32_t n;
	uint64_t mark;		/* instruction index when the top frame changed */
	int oom;
};

/* The listener to give cs_init (ctx: the profile). It needs no insns
 * callback: the instructions between two frame changes are the top
 * frame's, so enter and leave add them (mark). */
struct cs_listener profile_listener(struct profile *p);
/* Or, faster, the model calls profile_enter()/profile_leave() itself
 * (cs->prof) and the listener only takes the time. */
struct cs_listener profile_time_listener(struct profile *p);

struct profile_fn *profile_grow(struct profile *p, uint32_t fn);

static inline struct profile_fn *profile_get(struct profile *p, uint32_t fn)
{
	return fn < p->n ? &p->fn[fn] : profile_grow(p, fn);
}

/* f entered: the instructions since the last change were the frame
 * below's; a call counts; inclusive counts start with its outermost frame. */
static inline void profile_enter(struct profile *p, const struct callstack *cs,
				 const struct cs_frame *f)
{
	struct profile_fn *e;
	if (cs->depth > 1 && (e = profile_get(p, cs->f[cs->depth - 2].fn)))
		e->excl += cs->insns - p->mark;
	p->mark = cs->insns;
	if (!(e = profile_get(p, f->fn)))
		return;
	if (f->enter == CS_ENTER_CALL || f->enter == CS_ENTER_TAIL ||
	    f->enter == CS_ENTER_INTERRUPT)
		e->calls++;
	if (!e->on_stack++) {
		e->since = cs->insns;
		e->since_t = cs->now;
	}
}

/* f (the top frame) left: the instructions since the last change were its
 * own; its outermost frame ends its inclusive counts. */
static inline void profile_leave(struct profile *p, const struct callstack *cs,
				 const struct cs_frame *f)
{
	struct profile_fn *e = profile_get(p, f->fn);
	if (!e)
		return;
	e->excl += cs->insns - p->mark;
	p->mark = cs->insns;
	if (e->on_stack && !--e->on_stack) {
		e->incl += cs->insns - e->since;
		e->incl_t += cs->now - e->since_t;
	}
}
void profile_free(struct profile *p);

#endif
