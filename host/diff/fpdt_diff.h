/*
 * efipt diff's section on the firmware's boot-performance records
 * (fpdt.bin, host/input/fpdt_run.h): each measurement of A matched with B's
 * by what it measures, its module or string and its occurrence (the first
 * StartImage of PcdDxe with the first), the basic boot record's times by
 * name; A, B, B - A in ns, sorted by the size of the change.
 */
#ifndef EFIPT_HOST_DIFF_FPDT_DIFF_H
#define EFIPT_HOST_DIFF_FPDT_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "host/input/fpdt_run.h"

struct fpdt_diff_row {
	char record[FPDT_NAME_MAX + 48];	/* "StartImage PcdDxe", "#2" after a repeat */
	uint64_t a, b;		/* ns: a duration, or a basic boot time since reset */
	bool in_a, in_b;
};

/* The rows of a and b (either may be absent: f->present false), sorted by
 * |B - A|, rows of one side only first. 0, or -1 out of memory. */
int fpdtdiff_rows(const struct fpdt_run *a, const struct fpdt_run *b, struct fpdt_diff_row **rows,
		  size_t *n);

/* The section as text (fmt 0: a header and the changed rows, at most
 * limit) or as jsonl rows ({"type":"fpdt",...}, fmt 1). */
void fpdtdiff_print(int fmt, const struct fpdt_run *a, const struct fpdt_run *b,
		    const struct fpdt_diff_row *r, size_t n, bool all, unsigned long long limit);

#endif
