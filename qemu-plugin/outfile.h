/*
 * A file written completely or not at all: NAME.tmp, then a rename to NAME
 * (docs/format.md). The first error sticks and is reported by the commit.
 */
#ifndef EFIPT_PLUGIN_OUTFILE_H
#define EFIPT_PLUGIN_OUTFILE_H

#include <stdint.h>
#include <stdio.h>

struct outfile {
	FILE *f;
	char path[4096], tmp[4100];
	uint64_t size;
	int err;		/* errno of the first failure */
};

int outfile_open(struct outfile *o, const char *dir, const char *name, char *err, size_t errlen);
void outfile_write(struct outfile *o, const void *buf, size_t n);
void outfile_printf(struct outfile *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Close and rename into place; 0, or -1 with "PATH: reason" in err (the
 * temporary file is removed). */
int outfile_commit(struct outfile *o, char *err, size_t errlen);
void outfile_abort(struct outfile *o);

#endif
