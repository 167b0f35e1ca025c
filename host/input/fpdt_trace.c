/* The images' time windows in the trace; see fpdt_trace.h. */
#include "host/input/fpdt_trace.h"

#include <string.h>

#include "core/pt_image.h"
#include "host/input/consumer.h"

struct windows {
	struct session *t;
	struct fpdt_window *w;
	unsigned last;		/* the previous block's image */
	int overlap;
};

/* The blocks of one time (a batch's part, ptflow_batch_part()). */
static void on_part(struct windows *x, const struct ptflow_batch *b)
{
	const struct image_list *l = &x->t->images;
	uint64_t ns = b->has_time ? session_ns(x->t, b->tsc) : 0;
	for (size_t i = 0; i < b->n; i++) {
		int k = ptimg_list_find(l->v, l->n, sizeof(*l->v), b->b[i].ip, &x->last, x->overlap);
		if (k < 0)
			continue;
		struct fpdt_window *w = &x->w[k];
		w->insns += b->b[i].ninsn;
		if (!b->has_time)
			continue;
		if (!w->timed || ns < w->first)
			w->first = ns;
		if (!w->timed || ns > w->last)
			w->last = ns;
		w->timed = true;
	}
}

static void on_batch(void *ctx, const struct ptflow_batch *b)
{
	for (size_t k = 0; k <= b->nmarks; k++) {
		struct ptflow_batch part = ptflow_batch_part(b, k);
		on_part(ctx, &part);
	}
}

long fpdttrace_windows(struct session *t, unsigned i, struct fpdt_window *w)
{
	memset(w, 0, t->images.n * sizeof(*w));
	struct windows x = { t, w, ~0u, t->overlap };
	struct flow_consumer c = { &x, on_batch, NULL, NULL, NULL, PTFLOW_TIME_BLOCKS, 0, false,
				   NULL };
	return session_decode(t, i, &c, 1);
}
