/*
 * A set of raw CPUID results (leaf, subleaf -> EAX..EDX), captured from the
 * CPU in firmware or read from a dump, and its text form: the format of
 * `cpuid -r -1` (Debian package cpuid), one line per leaf:
 *
 *    0x00000014 0x00: eax=0x00000001 ebx=0x0000000f ecx=0x00000007 edx=0x00000000
 *
 * preceded by a "CPU:" (or "CPU N:") header line. Lines starting with '#'
 * are comments. Only the first CPU block of a multi-CPU dump is read unless
 * a block index is given.
 */
#ifndef EFIPT_CORE_CPUID_SET_H
#define EFIPT_CORE_CPUID_SET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/strbuf.h"

#define CPUID_SET_MAX 160

enum { CPUID_EAX, CPUID_EBX, CPUID_ECX, CPUID_EDX };

struct cpuid_leaf {
	uint32_t leaf, subleaf;
	uint32_t r[4]; /* EAX, EBX, ECX, EDX */
};

struct cpuid_set {
	unsigned n;
	struct cpuid_leaf e[CPUID_SET_MAX];
};

/* Function that executes CPUID (or reads a model of it). */
typedef void (*cpuid_fn)(void *ctx, uint32_t leaf, uint32_t subleaf, uint32_t r[4]);

void cpuid_set_init(struct cpuid_set *s);
/* Add or replace one leaf. Returns false if the set is full. */
bool cpuid_set_put(struct cpuid_set *s, uint32_t leaf, uint32_t subleaf, const uint32_t r[4]);
/* Look one leaf up. Missing leaves give false and zeros. */
bool cpuid_set_get(const struct cpuid_set *s, uint32_t leaf, uint32_t subleaf, uint32_t r[4]);

/* Read every leaf a PT tool cares about, as `cpuid -r` would list them. */
void cpuid_set_capture(struct cpuid_set *s, cpuid_fn fn, void *ctx);

/* Errors from cpuidtxt_parse; line numbers are 1-based. */
enum cpuidtxt_err {
	CPUIDTXT_OK = 0,
	CPUIDTXT_SYNTAX = -1,   /* a line that is neither header, comment nor leaf */
	CPUIDTXT_FULL = -2,     /* more than CPUID_SET_MAX leaves */
	CPUIDTXT_NO_CPU = -3,   /* no leaf lines for the requested CPU block */
	CPUIDTXT_DUPLICATE = -4, /* a leaf/subleaf given twice in one CPU block */
};
const char *cpuidtxt_errstr(int err);

/*
 * Parse text (need not be NUL-terminated) into s. cpu_index selects the
 * block ("CPU:" counts as block 0). On error *err_line names the line.
 */
int cpuidtxt_parse(struct cpuid_set *s, const char *text, size_t len, unsigned cpu_index,
		   unsigned *err_line);

/* Write the set in `cpuid -r -1` form, leaves in ascending order. */
void cpuidtxt_write(const struct cpuid_set *s, struct strbuf *out);

#endif
