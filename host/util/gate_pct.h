/*
 * Percentages of the CI gates (efipt coverage --fail-under, efipt diff
 * --fail-if-grows): at most one decimal, kept in tenths so that they
 * compare exactly, and printed as the user wrote them.
 */
#ifndef EFIPT_HOST_GATE_PCT_H
#define EFIPT_HOST_GATE_PCT_H

/* "40", "40.2" into tenths (402). 0, or -1 when s is no such number from 0
 * to max_tenths. */
int gate_pct_parse(const char *s, long max_tenths, long *out);

/* tenths as the user wrote them: "40", "40.2" (static buffer). */
const char *gate_pct_text(long tenths);

#endif
