/* Percentages of the CI gates: see gate_pct.h. */
#include <stdio.h>
#include <string.h>

#include "host/util/file_io.h"
#include "host/util/gate_pct.h"

int gate_pct_parse(const char *s, long max_tenths, long *out)
{
	unsigned long long whole, frac = 0;
	char buf[32];
	snprintf(buf, sizeof(buf), "%s", s);
	char *dot = strchr(buf, '.');
	if (dot) {
		*dot = 0;
		if (strlen(dot + 1) != 1 || dot[1] < '0' || dot[1] > '9')
			return -1;
		frac = (unsigned long long)(dot[1] - '0');
	}
	if (strlen(s) >= sizeof(buf) - 1 || parse_u64(buf, &whole) || whole > (1ull << 40) ||
	    whole * 10 + frac > (unsigned long long)max_tenths)
		return -1;
	*out = (long)(whole * 10 + frac);
	return 0;
}

const char *gate_pct_text(long v)
{
	static char b[32];
	if (v % 10)
		snprintf(b, sizeof(b), "%ld.%ld", v / 10, v % 10);
	else
		snprintf(b, sizeof(b), "%ld", v / 10);
	return b;
}
