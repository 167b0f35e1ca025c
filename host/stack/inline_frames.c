/* Inline frames over the call stack: see inline_frames.h. */
#include <stdlib.h>
#include <string.h>

#include "host/stack/inline_frames.h"

/* Inline chains deeper than this are cut (real ones are a few deep). */
#define INL_CHAIN_MAX 64

int inl_frames_init(struct inl_frames *x, const struct cs_listener *out)
{
	memset(x, 0, sizeof(*x));
	x->out = *out;
	x->cap = CS_MAX_DEPTH * 4;
	x->f = malloc(x->cap * sizeof(*x->f));
	x->base = malloc(CS_MAX_DEPTH * sizeof(*x->base));
	x->ctx = malloc(CS_MAX_DEPTH * sizeof(*x->ctx));
	return x->f && x->base && x->ctx ? 0 : -1;
}

void inl_frames_free(struct inl_frames *x)
{
	free(x->f);
	free(x->base);
	free(x->ctx);
	memset(x, 0, sizeof(*x));
}

/* The view out is given: cs with the expanded stack, at instruction at. */
static const struct callstack *view(struct inl_frames *x, const struct callstack *cs, uint64_t at)
{
	x->view = *cs;
	x->view.f = x->f;
	x->view.depth = x->depth;
	x->view.insns = at;
	return &x->view;
}

static void xpush(struct inl_frames *x, const struct callstack *cs, const struct cs_frame *f,
		  uint64_t at)
{
	if (x->depth == x->cap) {
		struct cs_frame *v = realloc(x->f, (size_t)x->cap * 2 * sizeof(*v));
		if (!v) {
			x->oom = true;
			return;
		}
		x->f = v;
		x->cap *= 2;
	}
	x->f[x->depth++] = *f;
	if (x->out.enter)
		x->out.enter(x->out.ctx, view(x, cs, at), &x->f[x->depth - 1]);
}

/* Leave expanded frames down to depth d. */
static void xpop_to(struct inl_frames *x, const struct callstack *cs, uint32_t d, int why,
		    uint64_t at)
{
	while (x->depth > d) {
		if (x->out.leave)
			x->out.leave(x->out.ctx, view(x, cs, at), &x->f[x->depth - 1], why);
		x->depth--;
	}
}

static void on_enter(void *ctx, const struct callstack *cs, const struct cs_frame *f)
{
	struct inl_frames *x = ctx;
	uint32_t d = cs->depth - 1;
	x->base[d] = x->depth;
	x->ctx[d] = 0;
	xpush(x, cs, f, cs->insns);
}

static void on_leave(void *ctx, const struct callstack *cs, const struct cs_frame *f, int why)
{
	(void)f;
	struct inl_frames *x = ctx;
	xpop_to(x, cs, x->base[cs->depth - 1], why, cs->insns);
}

/* The chain c, outermost first, into fn; returns its length. */
static uint32_t chain(const struct symtab *st, uint32_t c, uint32_t *fn)
{
	uint32_t n = 0, tmp[INL_CHAIN_MAX];
	for (; c && n < INL_CHAIN_MAX; c = st->ictx[c].parent)
		tmp[n++] = st->ictx[c].fn;
	for (uint32_t i = 0; i < n; i++)
		fn[i] = tmp[n - 1 - i];
	return n;
}

static void on_insns(void *ctx, const struct callstack *cs, uint64_t ip, uint64_t n)
{
	struct inl_frames *x = ctx;
	uint32_t d = cs->depth - 1;
	uint32_t c = symtab_inline(cs->st, ip);
	if (c != x->ctx[d]) {
		/* the chain changes where these instructions start */
		uint64_t at = cs->insns - n;
		uint32_t a[INL_CHAIN_MAX], b[INL_CHAIN_MAX];
		uint32_t na = chain(cs->st, x->ctx[d], a), nb = chain(cs->st, c, b), p = 0;
		while (p < na && p < nb && a[p] == b[p])
			p++;
		xpop_to(x, cs, x->base[d] + 1 + p, CS_LEAVE_REPLACED, at);
		for (uint32_t i = p; i < nb; i++) {
			struct cs_frame f = { .ip = ip, .fn = b[i], .enter = CS_ENTER_INLINE };
			xpush(x, cs, &f, at);
		}
		x->ctx[d] = c;
	}
	if (x->out.insns)
		x->out.insns(x->out.ctx, view(x, cs, cs->insns), ip, n);
}

/* Time moves on with the expanded stack as it is (the model hands over
 * pending instructions first, so the inline chain is up to date). */
static void on_time(void *ctx, const struct callstack *cs, uint64_t ticks)
{
	struct inl_frames *x = ctx;
	if (x->out.time)
		x->out.time(x->out.ctx, view(x, cs, cs->insns), ticks);
}

struct cs_listener inl_frames_listener(struct inl_frames *x)
{
	struct cs_listener l = { x, on_enter, on_leave, on_insns, on_time, x->out.time_at_insn };
	return l;
}
