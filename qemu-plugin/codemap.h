/*
 * The code bytes of every traced instruction, by 4 KiB page of linear
 * address, written out as a run directory's code snapshots (docs/format.md:
 * memmap.json regions with mem-<address>.bin files), so that `efipt insn
 * --run` and the other decoders have the code the trace went through.
 * Bytes never executed are zero. Where the same address holds other bytes
 * later (code loaded over code), the snapshots keep the first bytes and
 * the map the current ones: codemap_add() says that they changed, for the
 * caller to record the change (codechanges.bin, core/codechg.h).
 */
#ifndef EFIPT_PLUGIN_CODEMAP_H
#define EFIPT_PLUGIN_CODEMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct codemap_page;

struct codemap {
	struct codemap_page **slots;	/* open addressing by page number */
	size_t cap, used;
	uint64_t conflicts;		/* bytes seen changed (each change of
					 * a byte from the bytes last seen) */
	uint64_t first_conflict;	/* the address of the first */
	uint64_t changes;		/* codemap_add() calls that changed some */
	int failed;			/* out of memory: pages were dropped */
};

void codemap_init(struct codemap *m);
/* The bytes of an instruction executed at addr; true when some differ
 * from the bytes last seen there (the map now holds them). */
bool codemap_add(struct codemap *m, uint64_t addr, const uint8_t *bytes, unsigned len);
/*
 * Write the snapshots into dir: mem-<addr>.bin files (pages closer than
 * gap pages apart share one file) and their memmap.json regions, whose
 * "type" is type. Every file goes through NAME.tmp and a rename. Calls
 * file_cb(ctx, name, size) for each file written. Returns 0, or -1 with a
 * message in err.
 */
int codemap_write(struct codemap *m, const char *dir, const char *type,
		  void (*file_cb)(void *ctx, const char *name, uint64_t size), void *ctx,
		  char *err, size_t errlen);
void codemap_free(struct codemap *m);

#endif
