/*
 * efipt coverage --format lcov: an lcov tracefile (what genhtml renders) from
 * a trace and the images' symbol files: SF per source file of the DWARF line
 * tables, FN/FNDA per function, BRDA per conditional branch, DA per line.
 * docs/coverage.md, "lcov".
 */
#ifndef EFIPT_DECODE_COV_LCOV_H
#define EFIPT_DECODE_COV_LCOV_H

/* The whole command when --format lcov is given (argv as cmd_coverage's). */
int coverage_lcov(int argc, char **argv);

#endif
