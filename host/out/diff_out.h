/*
 * efipt diff's output: text (a header naming both runs, then the rows that
 * changed), jsonl (a summary object, then one per row) and csv, and the
 * section of the firmware's FPDT records (docs/diff.md).
 */
#ifndef EFIPT_HOST_OUT_DIFF_OUT_H
#define EFIPT_HOST_OUT_DIFF_OUT_H

#include <stdbool.h>
#include <stddef.h>

#include "host/diff/diff_side.h"
#include "host/diff/diff_table.h"

/* Text: r[0..n) (the changed ones unless all; at most limit), the window
 * (win_from, win_to: NULL for none) in the header. */
void diff_out_text(const struct diff_side *a, const struct diff_side *b, const struct diff_row *r,
		   size_t n, bool by_image, bool all, unsigned long long limit,
		   const char *win_from, const char *win_to);
/* fmt 1 jsonl, 2 csv: every row, at most limit. */
void diff_out_rows(int fmt, const struct diff_side *a, const struct diff_side *b,
		   const struct diff_row *r, size_t n, bool by_image, unsigned long long limit,
		   const char *win_from, const char *win_to);
/* The FPDT records of both runs, when either has them (text and jsonl;
 * csv says so). 0, or -1 (said). */
int diff_out_fpdt(const struct diff_side *a, const struct diff_side *b, int fmt, bool all,
		  unsigned long long limit);

#endif
