/*
 * efipt coverage --merge: the union of drcov version 2 files (what efipt
 * and DynamoRIO's drcov write). Modules are matched by path; the blocks of
 * a module are united and cut where any input had a block start, so that
 * merging a file with itself gives the file back.
 */
#ifndef EFIPT_HOST_COV_MERGE_H
#define EFIPT_HOST_COV_MERGE_H

/* Read files[0..n), write the union to out (temporary name, then renamed).
 * Messages as "CMD: FILE: reason". Returns 0, 1 (an input is damaged) or
 * 2 (unreadable input, write error); nothing is written unless 0. */
int cov_merge(const char *cmd, const char *const *files, unsigned n, const char *out);

#endif
