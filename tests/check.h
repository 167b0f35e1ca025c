/*
 * Minimal test protocol shared by every unit test program.
 * Each check prints "ok - NAME" or "not ok - NAME: detail"; tests/run.sh counts
 * these lines across all programs and scripts. A program exits non-zero if any
 * check failed, so a crash or an early exit is also counted as a failure.
 */
#ifndef EFIPT_TESTS_CHECK_H
#define EFIPT_TESTS_CHECK_H

#include <stdarg.h>
#include <stdio.h>

static int check_failures;

/* Record one named check; fmt/args describe the failure. Returns cond. */
static inline int check_named(int cond, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static inline int check_named(int cond, const char *name, const char *fmt, ...)
{
	if (cond) {
		printf("ok - %s\n", name);
		return 1;
	}
	printf("not ok - %s: ", name);
	va_list ap;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	check_failures++;
	return 0;
}

#define CHECK(cond, name) \
	check_named(!!(cond), (name), "%s:%d: %s", __FILE__, __LINE__, #cond)
#define CHECKF(cond, name, ...) check_named(!!(cond), (name), __VA_ARGS__)

/* Record a failure without an "ok" line for each passing sub-step. */
#define REQUIRE_QUIET(cond, name, ...) \
	((cond) ? 1 : check_named(0, (name), __VA_ARGS__))

static inline int check_exit(void)
{
	fflush(stdout);
	return check_failures ? 1 : 0;
}

#endif
