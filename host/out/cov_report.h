/*
 * efipt coverage's report of drcov/text/json coverage (docs/coverage.md):
 * per image and in total, the executed instructions, blocks, bytes, the
 * share of the code bytes covered and the conditional branches; and the
 * --fail-under gate, which compares the percentage as printed.
 */
#ifndef EFIPT_HOST_COV_REPORT_H
#define EFIPT_HOST_COV_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core/pt_cov.h"
#include "host/cov/cov_blocks.h"

enum { COV_TEXT, COV_JSON };

struct cov_totals {
	uint64_t execs, insns, blocks, bytes, code;
	unsigned images;
};

/* The report of c (whole: per image, its sections are not known; st: the
 * decoder's counts; jc, jt: branches per image and in total) on f in
 * format fmt (COV_*), or only the totals into t when f is NULL. */
void cov_report(FILE *f, int fmt, const struct ptcov *c, const bool *whole,
		const struct ptflow_stat *st, const struct jcc_count *jc,
		const struct jcc_count *jt, struct cov_totals *t);

/* --fail-under gate (tenths of a percent) over the totals t, or over each
 * of the images img[0..nimg) (--image NAME): 0 if every gate passes, else
 * 3 (messages on stderr). */
int cov_gates(const struct ptcov *c, const struct cov_totals *t, long gate, char **img,
	      unsigned nimg);

#endif
