/*
 * The comparison of efipt diff: two runs' counts matched by name (image and
 * function; or image alone), each row with A, B and what changed, sorted by
 * the size of the change; and the differential folded stacks.
 */
#ifndef EFIPT_HOST_DIFF_DIFF_TABLE_H
#define EFIPT_HOST_DIFF_DIFF_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "host/diff/diff_run.h"

struct diff_row {
	const char *image, *name;	/* the runs' strings */
	uint64_t a_excl, a_incl, a_calls;
	uint64_t b_excl, b_incl, b_calls;
	uint64_t a_excl_ns, a_incl_ns, b_excl_ns, b_incl_ns;	/* diff_count's */
	uint64_t a_hit, b_hit;					/* diff_count's */
	bool in_a, in_b;		/* ran there (it has a row there) */
	bool irq;			/* what it ran in interrupts (diff_count) */
};

/* Rows of a and b (sorted by name, one per name and context) matched by
 * name and context (the code's, the interrupts'), then
 * sorted by |B - A| of exclusive instructions, then of inclusive, then by
 * name. *rows is malloc'd. 0, or -1 out of memory. */
int diff_table(const struct diff_run *a, const struct diff_run *b, struct diff_row **rows,
	       size_t *n);

/* A differential folded stack: the stack and its instructions in A and B. */
struct diff_fold {
	const char *path;
	uint64_t a, b;
};

/* The stacks of a and b matched by path (sorted by path). 0, or -1. */
int diff_folds(const struct diff_run *a, const struct diff_run *b, struct diff_fold **out,
	       size_t *n);

/* B - A as a signed number (saturated), and B / A (0 when A is 0). */
int64_t diff_delta(uint64_t a, uint64_t b);
double diff_ratio(uint64_t a, uint64_t b);

/* Whether b grew by more than pct_tenths tenths of a percent over a (b
 * where a is 0 grew without bound, when b is not 0). */
bool diff_grows(uint64_t a, uint64_t b, long pct_tenths);

/* "+12.3%" of B over A ("new" where A is 0). */
void diff_change_text(char *buf, size_t cap, uint64_t a, uint64_t b);
/* "only A", "only B", "changed" or "same"; whether not "same". */
const char *diff_row_status(const struct diff_row *r);
bool diff_row_changed(const struct diff_row *r);
/* "code", or "interrupt" for what ran in interrupts. */
const char *diff_row_context(const struct diff_row *r);
/* "image`function" (or the image alone, by image); " [interrupt]" after
 * what ran in interrupts. */
void diff_row_name(char *buf, size_t cap, const struct diff_row *r, bool by_image);
/* Does NAME ("f" or "image`f") name r (the code's rows only)? */
bool diff_row_names_function(const struct diff_row *r, const char *name);
/* The code's own instructions of a run (its interrupts' apart). */
uint64_t diff_own_insns(const struct diff_run *r);

#endif
