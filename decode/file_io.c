/* Host file helpers; see file_io.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cpuid_set.h"
#include "decode/file_io.h"

char *read_small_file(const char *path, size_t max, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "efipt: %s: %s\n", path, strerror(errno));
		return NULL;
	}
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap + 1);
	while (buf) {
		if (n == cap) {
			if (cap >= max) {
				fprintf(stderr, "efipt: %s: larger than %zu bytes, not a valid input\n",
					path, max);
				free(buf);
				buf = NULL;
				break;
			}
			cap = cap * 2 > max ? max : cap * 2;
			char *nb = realloc(buf, cap + 1);
			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
		}
		size_t got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0) {
			if (ferror(f)) {
				fprintf(stderr, "efipt: %s: read error: %s\n", path, strerror(errno));
				free(buf);
				buf = NULL;
			}
			break;
		}
	}
	fclose(f);
	if (!buf)
		return NULL;
	buf[n] = 0;
	*len = n;
	return buf;
}

int parse_u64(const char *s, unsigned long long *v)
{
	if (!s || !*s || *s == '-' || *s == '+')
		return -1;
	char *end;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return (errno || *end) ? -1 : 0;
}

int read_cpuid_file(const char *cmd, const char *path, unsigned cpu, struct cpuid_set *set)
{
	size_t len;
	char *text = read_small_file(path, 4u << 20, &len);
	if (!text)
		return -1;
	unsigned line;
	int err = cpuidtxt_parse(set, text, len, cpu, &line);
	free(text);
	if (!err)
		return 0;
	if (line)
		fprintf(stderr, "efipt %s: %s:%u: %s\n", cmd, path, line, cpuidtxt_errstr(err));
	else
		fprintf(stderr, "efipt %s: %s: %s\n", cmd, path, cpuidtxt_errstr(err));
	return -1;
}
