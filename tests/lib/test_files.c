#define _XOPEN_SOURCE 700
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/lib/test_files.h"

int tf_write(const char *dir, const char *name, const void *data, size_t n)
{
	char p[1024];
	if (dir && (size_t)snprintf(p, sizeof(p), "%s/%s", dir, name) >= sizeof(p)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	FILE *f = fopen(dir ? p : name, "wb");
	if (!f)
		return -1;
	size_t w = fwrite(data, 1, n, f);
	return fclose(f) || w != n ? -1 : 0;
}

int tf_write_text(const char *dir, const char *name, const char *text)
{
	return tf_write(dir, name, text, strlen(text));
}

int tf_mkdirs(const char *path)
{
	char p[1024];
	size_t n = strlen(path);
	if (n >= sizeof(p)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(p, path, n + 1);
	/* each prefix that ends before a '/', then the whole path */
	for (char *s = p + 1;; s++) {
		if (*s != '/' && *s)
			continue;
		char c = *s;
		*s = 0;
		if (mkdir(p, 0700) && errno != EEXIST)
			return -1;
		if (!c)
			return 0;
		*s = c;
	}
}
