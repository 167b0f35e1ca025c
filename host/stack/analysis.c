/* Decode through the call-stack model: see analysis.h. */
#include <stdio.h>

#include "host/stack/analysis.h"

/* A block's instruction lengths from the decoder decoding it. */
static unsigned blk_lens(void *ctx, const struct ptflow_blk *b, uint8_t *lens)
{
	const struct trace_input *t = ctx;
	return t->dec ? ptflow_blk_lens(t->dec, b, lens) : 0;
}

/* The decoder's time estimate when a batch of blocks arrives. */
static bool blk_time(void *ctx, uint64_t *tsc, uint8_t *cbr)
{
	const struct trace_input *t = ctx;
	return t->dec && ptflow_time(t->dec, tsc, cbr);
}

/* The model's regions: the lookup ranges of the symbols (symtab_lookup()).
 * Inside one, a jump or a fall-through changes no frame and counts for the
 * same range, so the decoder may merge the blocks there. */
static uint64_t sym_region(void *ctx, uint64_t ip)
{
	struct callstack *cs = ctx;
	uint64_t hi;
	bool entry;
	symtab_lookup(cs->st, ip, &hi, &entry);
	return hi;
}

long analysis_decode(struct trace_input *t, struct callstack *cs)
{
	/* blocks, not runs: a run's lengths are decoded again for every
	 * block, and the model only needs them where a block crosses into
	 * another function */
	struct ptflow_sink sink = { cs, NULL, cs_on_event };
	cs->blk_lens = blk_lens;
	cs->blk_lens_ctx = t;
	cs->time_fn = blk_time;
	cs->time_ctx = t;
	t->on_blocks = cs_on_blocks;
	t->blk_region = sym_region;
	t->blk_region_ctx = cs;
	long errs = trace_input_decode(t, &sink, NULL);
	t->on_blocks = NULL;
	t->blk_region = NULL;
	if (errs < 0)
		return -1;
	cs_finish(cs);
	if (cs->oom) {
		fprintf(stderr, "efipt %s: out of memory for the call tree\n", t->cmd);
		return -1;
	}
	return errs;
}
