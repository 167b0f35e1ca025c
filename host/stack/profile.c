/*
 * Per-function counts: see profile.h.
 */
#include <stdlib.h>
#include <string.h>

#include "host/stack/profile.h"

/* out of line: get() is on every frame change, this once per doubling */
static __attribute__((noinline)) struct profile_fn *profile_grow(struct profile *p, uint32_t fn)
{
	uint32_t n = p->n ? p->n : 1024;
	while (n <= fn)
		n *= 2;
	struct profile_fn *a = realloc(p->fn, (size_t)n * sizeof(*a));
	if (!a) {
		p->oom = 1;
		return NULL;
	}
	memset(a + p->n, 0, (size_t)(n - p->n) * sizeof(*a));
	p->fn = a;
	p->n = n;
	return &p->fn[fn];
}

static inline struct profile_fn *get(struct profile *p, uint32_t fn)
{
	return __builtin_expect(fn < p->n, 1) ? &p->fn[fn] : profile_grow(p, fn);
}

uint64_t profile_irq_insns(const struct profile *p, const struct callstack *cs)
{
	return p->irq_done + (p->irq_base ? cs->insns - p->irq_start : 0);
}

uint64_t profile_irq_ticks(const struct profile *p, uint64_t now)
{
	return p->irq_t_done + (p->irq_base ? now - p->irq_t_start : 0);
}

/* The instructions since the last frame change were those of frame i
 * (the top one then): its exclusive counts, and an interrupt's if an
 * async frame is at or below it. */
static void to_top(struct profile *p, const struct callstack *cs, uint32_t i,
		   struct profile_fn *e)
{
	uint64_t n = cs->insns - p->mark;
	e->excl += n;
	if (p->irq_base && i + 1 >= p->irq_base)
		e->excl_irq += n;
}

/* f entered: the instructions since the last change were the frame
 * below's; a call counts; inclusive counts start with its outermost frame;
 * the first async frame begins an interrupt. */
static void on_enter(void *ctx, const struct callstack *cs, const struct cs_frame *f)
{
	struct profile *p = ctx;
	struct profile_fn *e;
	if (cs->depth > 1 && (e = get(p, cs->f[cs->depth - 2].fn)))
		to_top(p, cs, cs->depth - 2, e);
	p->mark = cs->insns;
	if (f->async && !p->irq_base) {
		p->irq_base = cs->depth;
		p->irq_start = cs->insns;
		p->irq_t_start = cs->now;
		/* a handler that jumped on is the same interrupt */
		p->irqs += f->enter == CS_ENTER_INTERRUPT || f->enter == CS_ENTER_ROOT;
	}
	if (!(e = get(p, f->fn)))
		return;
	if (f->enter == CS_ENTER_CALL || f->enter == CS_ENTER_TAIL ||
	    f->enter == CS_ENTER_INTERRUPT) {
		e->calls++;
		e->calls_irq += p->irq_base != 0;
	}
	if (!e->on_stack++) {
		e->since = cs->insns;
		e->since_t = cs->now;
		e->since_irq = profile_irq_insns(p, cs);
		e->since_t_irq = profile_irq_ticks(p, cs->now);
	}
	if (p->irq_base && !e->in_irq++) {
		e->since_in_irq = cs->insns;
		e->since_t_in_irq = cs->now;
	}
}

/* f (the top frame) left: the instructions since the last change were its
 * own; its outermost frame ends its inclusive counts; the interrupt's
 * outermost frame ends the interrupt. */
static void on_leave(void *ctx, const struct callstack *cs, const struct cs_frame *f, int why)
{
	struct profile *p = ctx;
	(void)why;
	struct profile_fn *e = get(p, f->fn);
	if (e) {
		to_top(p, cs, cs->depth - 1, e);
		if (e->on_stack && !--e->on_stack) {
			e->incl += cs->insns - e->since;
			e->incl_t += cs->now - e->since_t;
			e->incl_irq += profile_irq_insns(p, cs) - e->since_irq;
			e->incl_t_irq += profile_irq_ticks(p, cs->now) - e->since_t_irq;
		}
		/* all instructions since it entered the interrupt were the
		 * interrupt's */
		if (p->irq_base && cs->depth >= p->irq_base && e->in_irq && !--e->in_irq) {
			e->incl_in_irq += cs->insns - e->since_in_irq;
			e->incl_t_in_irq += cs->now - e->since_t_in_irq;
		}
	}
	p->mark = cs->insns;
	if (p->irq_base == cs->depth) { /* the interrupt's outermost frame */
		p->irq_done += cs->insns - p->irq_start;
		p->irq_t_done += cs->now - p->irq_t_start;
		p->irq_base = 0;
	}
}

static void on_time(void *ctx, const struct callstack *cs, uint64_t ticks)
{
	struct profile *p = ctx;
	if (!ticks && cs->now == cs->time_first) {
		/* the first time: what is on the stack starts here */
		p->timed = 1;
		p->irq_t_start = cs->now;
		for (uint32_t i = 0; i < cs->depth; i++) {
			struct profile_fn *e = get(p, cs->f[i].fn);
			if (e) {
				e->since_t = cs->now;
				e->since_t_irq = 0;
				e->since_t_in_irq = cs->now;
			}
		}
		return;
	}
	struct profile_fn *e = cs->depth ? get(p, cs->f[cs->depth - 1].fn) : NULL;
	if (e) {
		e->excl_t += ticks;
		if (p->irq_base && cs->depth >= p->irq_base)
			e->excl_t_irq += ticks;
	}
}

struct cs_listener profile_listener(struct profile *p)
{
	struct cs_listener l = { p, on_enter, on_leave, NULL, on_time, false };
	return l;
}

struct profile_fn *profile_snapshot(const struct profile *p, const struct callstack *cs)
{
	return profile_snapshot_at(p, cs, cs->insns, cs->now, (int64_t)cs->depth - 1);
}

struct profile_fn *profile_snapshot_at(const struct profile *p, const struct callstack *cs,
				       uint64_t insns, uint64_t now, int64_t top)
{
	struct profile_fn *o = malloc((p->n ? p->n : 1) * sizeof(*o));
	if (!o)
		return NULL;
	uint64_t irq = p->irq_done + (p->irq_base ? insns - p->irq_start : 0);
	/* before the time begins no clock has started: nothing to add */
	uint64_t irq_t = p->timed ? profile_irq_ticks(p, now) : 0;
	for (uint32_t i = 0; i < p->n; i++) {
		struct profile_fn *e = &o[i];
		*e = p->fn[i];
		if (e->on_stack) {
			e->incl += insns - e->since;
			e->incl_irq += irq - e->since_irq;
			if (p->timed) {
				e->incl_t += now - e->since_t;
				e->incl_t_irq += irq_t - e->since_t_irq;
			}
		}
		if (e->in_irq) {
			e->incl_in_irq += insns - e->since_in_irq;
			if (p->timed)
				e->incl_t_in_irq += now - e->since_t_in_irq;
		}
	}
	/* the top frame's instructions since the last change */
	if (top >= 0 && top < (int64_t)cs->depth && cs->f[top].fn < p->n && insns > p->mark) {
		struct profile_fn *e = &o[cs->f[top].fn];
		e->excl += insns - p->mark;
		if (p->irq_base && top + 1 >= p->irq_base)
			e->excl_irq += insns - p->mark;
	}
	return o;
}

void profile_free(struct profile *p)
{
	free(p->fn);
	memset(p, 0, sizeof(*p));
}
