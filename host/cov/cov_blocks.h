/*
 * The coverage of drcov, text and json (efipt coverage, docs/coverage.md)
 * from the decoder's blocks: per image, the executed bytes, instructions
 * and blocks (core/pt_cov.h: bitmaps, so memory does not grow with the
 * trace), and the conditional branches that ran and which ways they went.
 */
#ifndef EFIPT_HOST_COV_BLOCKS_H
#define EFIPT_HOST_COV_BLOCKS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/pt_cov.h"
#include "host/input/consumer.h"
#include "host/input/session.h"

/*
 * Conditional branches (Jcc, J*CXZ, LOOP*) the trace executed, each once,
 * and which ways it went: the flow decoder ends a block at each, and the
 * next block's ip is the target or the fall-through (0: an event came
 * first, the way is not known). A branch is known by its block's end, the
 * address after it, so no block is decoded again for it.
 */
enum { JCC_RAN = 1, JCC_TAKEN = 2, JCC_FELL = 4 };
struct jcc {
	uint64_t end;
	uint8_t ways;		/* JCC_*; 0: an empty slot */
};
struct jcc_set {
	struct jcc *slot;
	size_t mask, n;		/* mask + 1 slots, a power of two */
	bool oom;
};

struct jcc_count {
	uint64_t ran, taken, fell, both;
};

struct cov_blocks {
	struct ptcov cov;
	struct ptcov_image *img;	/* cov's images, sorted */
	bool *whole;			/* per image: its sections are not known,
					 * its whole range counts as code */
	unsigned n;
	struct jcc_set jcc;
	struct ptcov_seen *seen;	/* blocks marked already */
};

/* The session's images (each with a range) as coverage images: their
 * executable sections from images.json, a --pe file or the PE headers in
 * the code, the bytes of them each owns by the overlap rule. Where images
 * overlap it is said. 0, or -1 (printed). */
int cov_blocks_init(struct cov_blocks *c, const struct session *s);
void cov_blocks_free(struct cov_blocks *c);

/* The consumer: blocks (not merged, not timed). */
struct flow_consumer cov_blocks_consumer(struct cov_blocks *c);

/* Per image (c->img order) and in total: the branches that ran. jc has
 * c->n entries. */
void cov_blocks_branches(const struct cov_blocks *c, struct jcc_count *jc,
			 struct jcc_count *total);

#endif
