/*
 * The results of efipt.efi selftest and their two reports for firmware CI:
 * selftest.json and JUnit XML (selftest.xml). Names and details are escaped
 * for each format, whatever they contain.
 */
#ifndef EFIPT_CORE_SELFTEST_REPORT_H
#define EFIPT_CORE_SELFTEST_REPORT_H

#include "core/strbuf.h"

#define SELFTEST_MAX_CASES 16

enum selftest_result { SELFTEST_PASS, SELFTEST_FAIL, SELFTEST_SKIP };

struct selftest {
	unsigned n, failed, skipped;
	struct selftest_case {
		const char *name;	/* caller's string, lives as long as the report */
		enum selftest_result result;
		char detail[160];
	} c[SELFTEST_MAX_CASES];
};

void selftest_init(struct selftest *t);

/* Record one check (dropped beyond SELFTEST_MAX_CASES). Returns the case, or NULL. */
const struct selftest_case *selftest_record(struct selftest *t, const char *name,
					    enum selftest_result result, const char *detail);

/* "pass", "fail", "skip" (JSON); "PASS", "FAIL", "SKIP" (console). */
const char *selftest_result_name(enum selftest_result r);
const char *selftest_result_label(enum selftest_result r);

/* {"tests": N, "failed": N, "skipped": N, "cases": [{"name", "result", "detail"}...]} */
void selftest_json(const struct selftest *t, struct strbuf *out);

/* A JUnit <testsuite> with one <testcase> per check. */
void selftest_junit(const struct selftest *t, struct strbuf *out);

#endif
