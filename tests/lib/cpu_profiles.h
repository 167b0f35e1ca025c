/*
 * The real CPU profiles of tests/data/cpu-profiles (`cpuid -r` dumps, each
 * with its source in the README there), loaded once for the tests that run
 * the PT engine over them.
 */
#ifndef EFIPT_TESTS_CPU_PROFILES_H
#define EFIPT_TESTS_CPU_PROFILES_H

#include "core/cpuid_set.h"
#include "core/pt_caps.h"

#define CPU_PROFILES_DIR "tests/data/cpu-profiles"
#define CPU_PROFILES_MAX 80

struct cpu_profile {
	char name[128];         /* the file name without .txt */
	struct cpuid_set set;
	struct ptcaps caps;
};

/* Load every *.txt of CPU_PROFILES_DIR into p[0..max); returns the count, -1
 * if the directory cannot be read. */
int cpu_profiles_load(struct cpu_profile *p, unsigned max);

/* The first profile whose name starts with prefix, or NULL. */
const struct cpu_profile *cpu_profile_find(const struct cpu_profile *p, unsigned n,
					   const char *prefix);

#endif
