/*
 * Per-function counts: see profile.h.
 */
#include <stdlib.h>
#include <string.h>

#include "host/stack/profile.h"

struct profile_fn *profile_grow(struct profile *p, uint32_t fn)
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

static void on_enter(void *ctx, const struct callstack *cs, const struct cs_frame *f)
{
	profile_enter(ctx, cs, f);
}

static void on_leave(void *ctx, const struct callstack *cs, const struct cs_frame *f, int why)
{
	(void)why;
	profile_leave(ctx, cs, f);
}

static void on_time(void *ctx, const struct callstack *cs, uint64_t ticks)
{
	struct profile *p = ctx;
	if (!ticks && cs->now == cs->time_first) {
		/* the first time: what is on the stack starts here */
		for (uint32_t i = 0; i < cs->depth; i++) {
			struct profile_fn *e = profile_get(p, cs->f[i].fn);
			if (e)
				e->since_t = cs->now;
		}
		return;
	}
	struct profile_fn *e = cs->depth ? profile_get(p, cs->f[cs->depth - 1].fn) : NULL;
	if (e)
		e->excl_t += ticks;
}

struct cs_listener profile_listener(struct profile *p)
{
	struct cs_listener l = { p, on_enter, on_leave, NULL, on_time };
	return l;
}

struct cs_listener profile_time_listener(struct profile *p)
{
	struct cs_listener l = { p, NULL, NULL, NULL, on_time };
	return l;
}

void profile_free(struct profile *p)
{
	free(p->fn);
	memset(p, 0, sizeof(*p));
}
