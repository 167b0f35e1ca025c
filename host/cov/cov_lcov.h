/*
 * efipt coverage --format lcov: an lcov tracefile (what genhtml renders) from
 * a trace and the images' symbol files: SF per source file of the DWARF line
 * tables, FN/FNDA per function, BRDA per conditional branch, DA per line.
 * docs/coverage.md, "lcov".
 */
#ifndef EFIPT_HOST_COV_LCOV_H
#define EFIPT_HOST_COV_LCOV_H

#include "host/input/session.h"

/* --source-map OLD=NEW: source paths starting with OLD start with NEW. */
struct srcmap {
	const char *old[16], *new_[16];
	size_t n;
};

/* The tracefile of the session's trace 0 (opened with SESSION_SYMBOLS) into
 * out, source paths rewritten by sm. Returns the exit status: 0, 1 the
 * trace had decode errors (what decoded is written), 2 nothing to write
 * (no image with source lines), unreadable input or a write error. */
int cov_lcov_run(struct session *t, const char *out, const struct srcmap *sm);

/*
 * --merge A.info B.info ... -o OUT: the sum of lcov tracefiles as `lcov -a`
 * makes it: per source file (SF), DA and FNDA counts add, FN lines are
 * united (a function's first line kept), BRDA counts add with '-' + '-' =
 * '-' and '-' + n = n; the totals are counted again. Messages as
 * "CMD: FILE: line N: reason". Returns 0, 1 (an input is not a tracefile)
 * or 2 (unreadable input, write error); nothing is written unless 0.
 */
int cov_lcov_merge(const char *cmd, const char *const *files, unsigned n, const char *out);

#endif
