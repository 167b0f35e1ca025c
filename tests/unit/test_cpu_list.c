/*
 * trace --cpus LIST (core/cpu_list.c): "all", numbers and ranges, each CPU
 * once in the order given; every malformed list refused naming --cpus.
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "core/cpu_list.h"

/* v parsed: 0 and the numbers as "a,b,c" in got, or -1 and err */
static int parse(const char *v, char *got, size_t cap, char *err, size_t errcap)
{
	struct cpu_list l;
	struct strbuf sb;
	sb_init(&sb, err, errcap);
	err[0] = 0;
	int rc = cpu_list_parse(&l, v, &sb);
	got[0] = 0;
	if (rc)
		return rc;
	if (l.all) {
		snprintf(got, cap, "all");
		return 0;
	}
	size_t k = 0;
	for (unsigned i = 0; i < l.n && k < cap; i++)
		k += (size_t)snprintf(got + k, cap - k, "%s%u", i ? "," : "", l.number[i]);
	return 0;
}

int main(void)
{
	char got[1024], err[256];
	static const struct { const char *in, *want; } good[] = {
		{ "all", "all" },
		{ "0", "0" },
		{ "0,2-3", "0,2,3" },
		{ "3,1,2", "3,1,2" },
		{ "1-3,2,0", "1,2,3,0" },		/* each once, first place kept */
		{ "65535", "65535" },
		{ "7-7", "7" },
	};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		int rc = parse(good[i].in, got, sizeof(got), err, sizeof(err));
		CHECKF(rc == 0 && !strcmp(got, good[i].want), "good list", "'%s': rc %d, '%s' (%s)",
		       good[i].in, rc, got, err);
	}
	static const struct { const char *in, *why; } bad[] = {
		{ "", "needs all or a list" },
		{ "x", "not 'x'" },
		{ "1,", "not '1,'" },
		{ ",1", "not ',1'" },
		{ "1,,2", "not '1,,2'" },
		{ "3-1", "not '3-1'" },
		{ "1-", "not '1-'" },
		{ "-1", "not '-1'" },
		{ "1 2", "not '1 2'" },
		{ "ALL", "not 'ALL'" },
		{ "65536", "below 65536" },
		{ "99999999999999999999999", "below 65536" },
		{ "0-65536", "below 65536" },
		{ "0-64", "at most 64 CPUs" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = parse(bad[i].in, got, sizeof(got), err, sizeof(err));
		CHECKF(rc == -1 && strstr(err, "--cpus") && strstr(err, bad[i].why), "bad list refused",
		       "'%s': rc %d, '%s'", bad[i].in, rc, err);
	}
	/* 64 CPUs is the most: 0-63 is taken */
	CHECKF(parse("0-63", got, sizeof(got), err, sizeof(err)) == 0 && strstr(got, ",63") &&
		       !strstr(got, ",64"), "64 CPUs taken", "%s", err);
	return check_exit();
}
