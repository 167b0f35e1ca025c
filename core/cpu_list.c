/* CPU lists; see cpu_list.h. */
#include <stdint.h>

#include "core/cpu_list.h"
#include "core/mem.h"

/* Digits at *p into *v (stops growing past the largest number allowed, so
 * that a long one is refused, not wrapped). false: no digit. */
static bool number(const char **p, uint64_t *v)
{
	const char *s = *p;
	*v = 0;
	while (**p >= '0' && **p <= '9') {
		if (*v < CPU_LIST_NUMBERS)
			*v = *v * 10 + (uint64_t)(**p - '0');
		(*p)++;
	}
	return *p > s;
}

int cpu_list_parse(struct cpu_list *l, const char *v, struct strbuf *err)
{
	efipt_memset(l, 0, sizeof(*l));
	if (!efipt_strcmp(v, "all")) {
		l->all = true;
		return 0;
	}
	const char *p = v;
	while (*p) {
		uint64_t lo, hi;
		bool ok = number(&p, &lo);
		hi = lo;
		if (ok && *p == '-') {
			p++;
			ok = number(&p, &hi) && hi >= lo;
		}
		ok = ok && (*p == ',' ? p[1] != 0 : !*p); /* no empty element */
		if (!ok) {
			sb_printf(err, "--cpus is all or a list of CPU numbers (0,2-3), not '%s'", v);
			return -1;
		}
		if (hi >= CPU_LIST_NUMBERS) {
			sb_printf(err, "--cpus: CPU numbers are below %u", CPU_LIST_NUMBERS);
			return -1;
		}
		for (uint64_t c = lo; c <= hi; c++) {
			bool dup = false;
			for (unsigned k = 0; k < l->n; k++)
				dup |= l->number[k] == c;
			if (dup)
				continue;
			if (l->n == CPU_LIST_MAX) {
				sb_printf(err, "--cpus: at most %u CPUs", CPU_LIST_MAX);
				return -1;
			}
			l->number[l->n++] = (unsigned)c;
		}
		if (*p == ',')
			p++;
	}
	if (!l->n) {
		sb_puts(err, "--cpus needs all or a list of CPU numbers");
		return -1;
	}
	return 0;
}
