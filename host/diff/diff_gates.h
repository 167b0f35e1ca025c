/*
 * efipt diff's CI gates (--fail-if-grows for the run, --function, --image;
 * --fail-if-new; --fail-if-coverage-lost), each crossing said on stderr.
 */
#ifndef EFIPT_HOST_DIFF_DIFF_GATES_H
#define EFIPT_HOST_DIFF_DIFF_GATES_H

#include <stdbool.h>
#include <stddef.h>

#include "host/diff/diff_side.h"
#include "host/diff/diff_table.h"

#define GATES_MAX 64

struct diff_gates {
	long grows;		/* tenths of a percent; -1: no gate */
	bool fail_new;
	bool cov_lost;		/* --fail-if-coverage-lost */
	const char *fn[GATES_MAX], *img[GATES_MAX];
	unsigned nfn, nimg;
};

/* 0 when no gate is crossed, else 3. fr[0..nf): the rows by function,
 * ir[0..ni): by image. */
int diff_gates_check(const struct diff_gates *g, const struct diff_side *a,
		     const struct diff_side *b, const struct diff_row *fr, size_t nf,
		     const struct diff_row *ir, size_t ni);

#endif
