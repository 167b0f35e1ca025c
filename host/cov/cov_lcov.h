/*
 * efipt coverage --format lcov: an lcov tracefile (what genhtml renders) from
 * a trace and the images' symbol files: SF per source file of the DWARF line
 * tables, FN/FNDA per function, BRDA per conditional branch, DA per line.
 * docs/coverage.md, "lcov".
 */
#ifndef EFIPT_HOST_COV_LCOV_H
#define EFIPT_HOST_COV_LCOV_H

/* The whole command when --format lcov is given (argv as cmd_coverage's). */
int coverage_lcov(int argc, char **argv);

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
