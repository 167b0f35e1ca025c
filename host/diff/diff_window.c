/* A window of a run for efipt diff: see diff_window.h. */
#include <stdlib.h>
#include <string.h>

#include "host/diff/diff_window.h"

static void take(struct diffwin *w, const struct callstack *cs, struct diffwin_at *at)
{
	at->fn = profile_snapshot(w->p, cs);
	at->n = w->p->n;
	at->insns = cs->insns;
	at->irqs = w->p->irqs;
	at->irq_insns = profile_irq_insns(w->p, cs);
	at->now = cs->now;
	at->irq_ticks = profile_irq_ticks(w->p, cs);
	at->timed = cs->timed;
	if (!at->fn)
		w->oom = true;
}

/* Control is in fn from here on: the window opens at --from's, closes at
 * --to's. */
static void now_in(struct diffwin *w, const struct callstack *cs, uint32_t fn)
{
	int r = fnwin_at(&w->win, fn);
	if (r == FNWIN_OPEN)
		take(w, cs, &w->open);
	else if (r == FNWIN_CLOSED)
		take(w, cs, &w->close);
}

static void on_enter(void *ctx, const struct callstack *cs, const struct cs_frame *f)
{
	struct diffwin *w = ctx;
	w->inner.enter(w->inner.ctx, cs, f);
	now_in(w, cs, f->fn);
}

/* f leaves (still on the stack): the frame below it is on top next */
static void on_leave(void *ctx, const struct callstack *cs, const struct cs_frame *f, int why)
{
	struct diffwin *w = ctx;
	w->inner.leave(w->inner.ctx, cs, f, why);
	uint32_t to = fnwin_leave_to(cs, why);
	if (to != UINT32_MAX)
		now_in(w, cs, to);
}

static void on_time(void *ctx, const struct callstack *cs, uint64_t ticks)
{
	struct diffwin *w = ctx;
	w->inner.time(w->inner.ctx, cs, ticks);
}

struct cs_listener diffwin_listener(struct diffwin *w, const char *from, const char *to,
				    struct profile *p, struct symtab *st,
				    const struct cs_listener *ls)
{
	memset(w, 0, sizeof(*w));
	fnwin_init(&w->win, from, to, st);
	w->inner = *ls;
	w->p = p;
	struct cs_listener l = { w, on_enter, on_leave, NULL, on_time };
	return l;
}

int diffwin_counts(struct diffwin *w, const struct callstack *cs, struct profile_fn **out,
		   uint32_t *n, struct diffwin_at *at)
{
	if (w->win.state == FNWIN_BEFORE)
		return 1;
	if (w->win.state == FNWIN_OPEN) {
		if (w->win.to)
			return 2;
		take(w, cs, &w->close);
	}
	if (w->oom || w->win.oom)
		return -1;
	const struct diffwin_at *o = &w->open, *c = &w->close;
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

void diffwin_free(struct diffwin *w)
{
	fnwin_free(&w->win);
	free(w->open.fn);
	free(w->close.fn);
	w->open.fn = w->close.fn = NULL;
}
