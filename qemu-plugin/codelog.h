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
 * CPU cpu's trace on. False when out of memory (l->failed). */
bool codelog_add(struct codelog *l, unsigned cpu, uint64_t pos, uint64_t addr,
		 const uint8_t *bytes, unsigned len);
/*
 * Code one CPU changed is changed for every CPU, but only the CPU that ran
 * it first is told (QEMU's translations, and so the "first run" the code
 * map sees, are shared): every other CPU takes the change up in its own
 * trace at its next instruction, the first one that can have run after the
 * change was recorded (there is no finer common clock between vCPU
 * threads). Records from *seen on: codelog_foreign() says whether one of
 * them is another CPU's change (skipping cpu's own and copies), then the
 * caller writes out the TNT bits it holds and codelog_copy_foreign() copies
 * each one into cpu's trace at pos (CODECHG_OTHER_CPU). Both under the
 * lock that codelog_add() is called under.
 */
bool codelog_foreign(const struct codelog *l, unsigned cpu, size_t *seen);
void codelog_copy_foreign(struct codelog *l, unsigned cpu, size_t *seen, uint64_t pos);
/* How many records are copies (CODECHG_OTHER_CPU). */
size_t codelog_copies(const struct codelog *l);
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
