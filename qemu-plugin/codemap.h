/*
 * The code bytes of every traced instruction, by 4 KiB page of linear
 * address, written out as a run directory's code snapshots (docs/format.md:
 * memmap.json regions with mem-<address>.bin files), so that `efipt insn
 * --run` and the other decoders have the code the trace went through.
 * Bytes never executed are zero. Where the same address held other bytes
 * later (code loaded over code), the first bytes stay and the clash is
 * counted: a single snapshot cannot hold both.
 */
#ifndef EFIPT_PLUGIN_CODEMAP_H
#define EFIPT_PLUGIN_CODEMAP_H

#include <stddef.h>
#include <stdint.h>

struct codemap_page;

struct codemap {
	struct codemap_page **slots;	/* open addressing by page number */
	size_t cap, used;
	uint64_t conflicts;		/* bytes seen with two different values */
	uint64_t first_conflict;	/* the address of the first */
	int failed;			/* out of memory: pages were dropped */
};

void codemap_init(struct codemap *m);
void codemap_add(struct codemap *m, uint64_t addr, const uint8_t *bytes, unsigned len);
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
