/* Loading the CPU profiles; see cpu_profiles.h. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/util/file_io.h"
#include "tests/lib/cpu_profiles.h"

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct cpu_profile *)a)->name, ((const struct cpu_profile *)b)->name);
}

int cpu_profiles_load(struct cpu_profile *p, unsigned max)
{
	DIR *d = opendir(CPU_PROFILES_DIR);
	if (!d)
		return -1;
	unsigned n = 0;
	struct dirent *de;
	while ((de = readdir(d)) && n < max) {
		size_t len = strlen(de->d_name);
		if (len < 5 || strcmp(de->d_name + len - 4, ".txt"))
			continue;
		char path[512];
		snprintf(path, sizeof(path), "%s/%s", CPU_PROFILES_DIR, de->d_name);
		size_t size;
		char *text = read_small_file(NULL, path, 1 << 20, &size);
		if (!text)
			continue;
		unsigned line;
		if (cpuidtxt_parse(&p[n].set, text, size, 0, &line) == 0) {
			snprintf(p[n].name, sizeof(p[n].name), "%.*s", (int)(len - 4), de->d_name);
			ptcaps_parse(&p[n].caps, &p[n].set);
			n++;
		}
		free(text);
	}
	closedir(d);
	qsort(p, n, sizeof(*p), by_name);
	return (int)n;
}

const struct cpu_profile *cpu_profile_find(const struct cpu_profile *p, unsigned n,
					   const char *prefix)
{
	for (unsigned i = 0; i < n; i++)
		if (!strncmp(p[i].name, prefix, strlen(prefix)))
			return &p[i];
	return NULL;
}
