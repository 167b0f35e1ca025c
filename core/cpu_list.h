/*
 * A list of CPUs as `trace --cpus` takes it: "all", or CPU numbers (MP
 * services' processor numbers) and ranges, "0,2-3". Freestanding: parsed
 * in firmware, tested on the host.
 */
#ifndef EFIPT_CORE_CPU_LIST_H
#define EFIPT_CORE_CPU_LIST_H

#include <stdbool.h>

#include "core/strbuf.h"

#define CPU_LIST_MAX 64		/* CPUs traced at most */
#define CPU_LIST_NUMBERS 65536	/* numbers below this */

struct cpu_list {
	bool all;
	unsigned n;			/* numbers, each once, in the order given */
	unsigned number[CPU_LIST_MAX];
};

/* 0, or -1 with the reason (naming --cpus) in err. */
int cpu_list_parse(struct cpu_list *l, const char *v, struct strbuf *err);

#endif
