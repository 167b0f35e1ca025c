/* A window of a run's profile: see profile_window.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/stack/profile_window.h"

/* The profile at instruction insns and time now, frame top (-1: none) on
 * top since the last frame change. */
static void take_at(struct profwin *w, const struct callstack *cs, struct profwin_at *at,
		    uint64_t insns, uint64_t now, int64_t top)
{
	const struct profile *p = w->p;
	at->fn = profile_snapshot_at(p, cs, insns, now, top);
	at->n = p->n;
	at->insns = insns;
	at->irqs = p->irqs;
	at->irq_insns = p->irq_done + (p->irq_base ? insns - p->irq_start : 0);
	at->now = now;
	at->irq_ticks = profile_irq_ticks(p, now);
	at->timed = cs->timed;
	if (!at->fn)
		w->oom = true;
}

static void take(struct profwin *w, const struct callstack *cs, struct profwin_at *at)
{
	take_at(w, cs, at, cs->insns, cs->now, (int64_t)cs->depth - 1);
}

static void close_at(struct profwin *w, const struct callstack *cs, uint64_t insns,
		     uint64_t now, int64_t top)
{
	take_at(w, cs, &w->close, insns, now, top);
	w->closed = w->done = true;
}

/* Before the profile sees a change: frame top has been on top since the
 * last one, at time now (before the time moved on at a time step); an
 * index the window opens or closes at that it has passed. */
static void index_due(struct profwin *w, const struct callstack *cs, int64_t top, uint64_t now)
{
	if (!w->opened && w->from.set && !w->from.is_fn && cs->insns >= w->from.index) {
		take_at(w, cs, &w->open, w->from.index, now, top);
		w->opened = true;
	}
	if (w->opened && !w->closed && w->to.set && !w->to.is_fn && cs->insns >= w->to.index)
		close_at(w, cs, w->to.index, now, top);
}

/* Before the profile sees a change (frame top on top since the last):
 * control is in fn from here on; the window opens at --from's function,
 * closes at --to's after it opened. As at an index, the change belongs to
 * the instruction it comes to: a frame entered there is in the window
 * that opens there, not in the one that closes there. */
static void now_in(struct profwin *w, const struct callstack *cs, uint32_t fn, int64_t top)
{
	if (w->closed || (!w->opened && !w->from.is_fn))
		return;
	int r = fnwin_at(&w->win, fn);
	if (r == FNWIN_OPEN && !w->opened) {
		take_at(w, cs, &w->open, cs->insns, cs->now, top);
		w->opened = true;
	} else if (r == FNWIN_CLOSED) {
		close_at(w, cs, cs->insns, cs->now, top);
	}
}

static void on_enter(void *ctx, const struct callstack *cs, const struct cs_frame *f)
{
	struct profwin *w = ctx;
	int64_t below = (int64_t)cs->depth - 2; /* f is pushed: the one below */
	index_due(w, cs, below, cs->now);
	now_in(w, cs, f->fn, below);
	w->inner.enter(w->inner.ctx, cs, f);
}

/* f leaves (still on the stack): the frame below it is on top next */
static void on_leave(void *ctx, const struct callstack *cs, const struct cs_frame *f, int why)
{
	struct profwin *w = ctx;
	int64_t top = (int64_t)cs->depth - 1;
	index_due(w, cs, top, cs->now);
	uint32_t to = fnwin_leave_to(cs, why);
	if (to != UINT32_MAX)
		now_in(w, cs, to, top);
	w->inner.leave(w->inner.ctx, cs, f, why);
}

static void on_time(void *ctx, const struct callstack *cs, uint64_t ticks)
{
	struct profwin *w = ctx;
	/* cs->now has moved on by ticks: the index was passed before (where
	 * the time begins, the profile's snapshot counts no time) */
	index_due(w, cs, (int64_t)cs->depth - 1, cs->now - ticks);
	w->inner.time(w->inner.ctx, cs, ticks);
}

struct cs_listener profwin_listener(struct profwin *w, const struct fnwin_where *from,
				    const struct fnwin_where *to, struct profile *p,
				    struct symtab *st, const struct cs_listener *ls)
{
	memset(w, 0, sizeof(*w));
	w->from = *from;
	w->to = *to;
	fnwin_init(&w->win, from->is_fn ? from->fn : NULL, to->is_fn ? to->fn : NULL, st);
	w->opened = !from->set;
	w->inner = *ls;
	w->p = p;
	/* the window opens and closes at an instruction count */
	struct cs_listener l = { w, on_enter, on_leave, NULL, on_time, true };
	return l;
}

int profwin_counts(struct profwin *w, const struct callstack *cs, struct profile_fn **out,
		   uint32_t *n, struct profwin_at *at, char *why, size_t whycap)
{
	int r = 0;
	if (!w->opened)
		r = 1;
	else if (!w->closed && w->to.is_fn)
		r = 2;
	else if (!w->closed)
		take(w, cs, &w->close); /* --to N past the trace's end: at its end */
	if (!r && w->close.insns < w->open.insns)
		r = 3; /* --from's function first ran after --to's index */
	if (r) {
		/* what r says, where fnwin_why_empty() has no more to say */
		static const char *const plain[] = { "", "the window never opened",
						     "the window never closed",
						     "the window closed before it opened" };
		if (why && !fnwin_why_empty(&w->from, &w->to, w->opened, w->open.insns,
					    w->closed && w->to.is_fn, cs->insns, why, whycap))
			snprintf(why, whycap, "%s", plain[r]);
		return r;
	}
	if (w->oom || w->win.oom)
		return -1;
	const struct profwin_at *o = &w->open, *c = &w->close;
	struct profile_fn *d = calloc(c->n ? c->n : 1, sizeof(*d));
	if (!d)
		return -1;
	for (uint32_t i = 0; i < c->n; i++) {
		const struct profile_fn *b = &c->fn[i], *a = i < o->n && o->fn ? &o->fn[i] : NULL;
		struct profile_fn *e = &d[i];
#define SUB(f) e->f = b->f - (a ? a->f : 0)
		SUB(excl);
		SUB(incl);
		SUB(calls);
		SUB(excl_t);
		SUB(incl_t);
		SUB(excl_irq);
		SUB(incl_irq);
		SUB(calls_irq);
		SUB(incl_in_irq);
		SUB(excl_t_irq);
		SUB(incl_t_irq);
		SUB(incl_t_in_irq);
#undef SUB
	}
	*out = d;
	*n = c->n;
	memset(at, 0, sizeof(*at));
	at->insns = c->insns - o->insns;
	at->irqs = c->irqs - o->irqs;
	at->irq_insns = c->irq_insns - o->irq_insns;
	/* time only from where the trace has it */
	at->timed = c->timed;
	at->now = c->now - (o->timed ? o->now : cs->time_first);
	at->irq_ticks = c->irq_ticks - o->irq_ticks;
	return 0;
}

void profwin_free(struct profwin *w)
{
	fnwin_free(&w->win);
	free(w->open.fn);
	free(w->close.fn);
	w->open.fn = w->close.fn = NULL;
}
