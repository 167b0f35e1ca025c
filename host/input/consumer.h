/*
 * What a command takes from the decoder loop (session_decode()): a
 * consumer of batches of blocks, runs and events. Every member may be
 * NULL/0.
 */
#ifndef EFIPT_HOST_CONSUMER_H
#define EFIPT_HOST_CONSUMER_H

#include <stdbool.h>
#include <stdint.h>

#include "core/pt_flow.h"

struct flow_consumer {
	void *ctx;
	ptflow_blocks_fn batch;		/* blocks, in batches */
	void (*event)(void *ctx, const struct ptflow_event *ev);
	void (*run)(void *ctx, const struct ptflow_run *run);	/* lengths of every
					 * instruction (insn's listing) */
	/* blocks merged inside regions (ptflow_blk_regions()): used when
	 * every consumer of blocks has regions (the smallest region wins) */
	uint64_t (*region)(void *ctx, uint64_t ip);
	uint8_t timed;			/* how closely its blocks are timed
					 * (enum ptflow_timing: the most any
					 * consumer asks for is used) */
	uint64_t until;			/* enough after this many instructions
					 * (0: the whole trace) */
	bool counted;			/* takes blocks counted, in no order
					 * (ptflow_blocks_counted()): used
					 * when every consumer of blocks does */
	const bool *done;		/* set by the consumer once it needs
					 * nothing more (a window closed where
					 * no count said): decoding stops
					 * after the batch (NULL: never) */
};

#endif
