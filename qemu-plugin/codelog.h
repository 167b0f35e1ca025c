/*
 * The changes of code while traced, as they happen (codemap_add() says
 * when), each with its trace position, written out at the end as the run
 * directory's codechanges.bin (core/codechg.h, docs/format.md).
 */
#ifndef EFIPT_PLUGIN_CODELOG_H
#define EFIPT_PLUGIN_CODELOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/codechg.h"

struct codelog {
	struct codechg *r;
	size_t n, cap;
	bool failed;		/* out of memory: changes were dropped */
};

/* The instruction at addr (len bytes) is new code from trace byte pos of
 * CPU cpu's trace on. */
void codelog_add(struct codelog *l, unsigned cpu, uint64_t pos, uint64_t addr,
		 const uint8_t *bytes, unsigned len);
/*
 * Write codechanges.bin into dir (through NAME.tmp and a rename). The
 * positions count every byte a CPU's trace generated; drop[cpu] bytes of
 * them are not in its file (mode=wrap kept the last ones): a change before
 * the file's start takes effect at its start. Calls file_cb(ctx, name,
 * size). Returns 0, or -1 with a message in err.
 */
int codelog_write(const struct codelog *l, const char *dir, const uint64_t *drop, unsigned ncpus,
		  void (*file_cb)(void *ctx, const char *name, uint64_t size), void *ctx,
		  char *err, size_t errlen);
void codelog_free(struct codelog *l);

#endif
