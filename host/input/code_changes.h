/*
 * A run directory's code changes (codechanges.bin, core/codechg.h) applied
 * while a trace is decoded: the code snapshots hold the first bytes seen at
 * each address; each change lays its bytes over them when the decoder
 * reaches its position in the trace (ptflow_on_position()), so that every
 * stretch of the trace is decoded with the code that ran then.
 */
#ifndef EFIPT_HOST_CODE_CHANGES_H
#define EFIPT_HOST_CODE_CHANGES_H

#include <stddef.h>
#include <stdint.h>

#include "core/codechg.h"
#include "core/pt_flow.h"
#include "core/pt_image.h"

struct codechanges_page;

/* The changes of one CPU's trace being applied over base. */
struct codechanges {
	const struct codechg *r;	/* the run's, sorted by cpu then pos */
	size_t n, next, end;		/* this CPU's: r[next..end) still to come */
	struct ptimg base;		/* the code without changes */
	struct codechanges_page **pg;	/* the bytes laid over it, by page */
	size_t npg, cap;
	uint64_t applied;
	int failed;			/* out of memory: a change was lost */
};

/*
 * Read DIR/codechanges.bin into *r (malloc'd, sorted by CPU, then by
 * position, the file's order kept between equal ones), *n records. A run
 * without the file has none (0); expect is the count its manifest gives
 * (-1: none given), which a missing file must match. Returns 0, or -1 with
 * "PATH: reason" (the file offset of a bad record) in err.
 */
int codechanges_load(const char *dir, long long expect, struct codechg **r, size_t *n, char *err,
		     size_t errlen);

/*
 * Decode CPU cpu's trace with d over base: when the run has changes for
 * it, d reads the code through c from here on (set d's image to
 * codechanges_image(c) before ptflow_init(), then call this). Returns how
 * many changes the trace has.
 */
void codechanges_start(struct codechanges *c, const struct codechg *r, size_t n, unsigned cpu,
		       struct ptimg base);
struct ptimg codechanges_image(struct codechanges *c);
size_t codechanges_attach(struct codechanges *c, struct ptflow_decoder *d);
void codechanges_free(struct codechanges *c);

#endif
