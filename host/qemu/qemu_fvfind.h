/*
 * Firmware-volume modules found loaded in a run's code snapshots. DXE
 * drivers and applications are decompressed and loaded where the DXE core
 * allocates pages, PEI copies its core and PEIMs to memory once memory is
 * up (and enters its core's copy past the entry point), so no header in
 * the flash says where they ran, and the plugin's snapshots hold the bytes
 * that executed (the rest is 0), not the PE or TE headers. Every
 * executed page is searched for a few runs of executed bytes; where one
 * equals a module's code at the same page offset, the module may be loaded
 * at the base that puts it there with its first byte at a page's start
 * (the loaders load an image into pages they allocate; a TE image keeps
 * its TE header there, its sections StrippedSize - 40 bytes before their
 * RVAs from it). It is found there when its code, laid out and relocated
 * for that base as the loader does (host/util/pe_map.h), equals
 * the snapshots' executed bytes, but for the few the firmware patches as
 * it runs and the pages another module ran in first.
 */
#ifndef EFIPT_HOST_QEMU_FVFIND_H
#define EFIPT_HOST_QEMU_FVFIND_H

#include <stdint.h>

#include "host/input/rundir.h"
#include "host/qemu/fv.h"

struct fv_found {
	unsigned module;	/* index in the module list */
	uint64_t base;		/* where it was loaded: its RVA 0 (a TE
				 * header is StrippedSize - 40 past it) */
	uint64_t matched;	/* code bytes compared, all equal */
};

/* Bytes of code that must match for a find; a page of the module's code
 * agrees with the snapshots when at most one in FVFIND_MAX_DIFF of its
 * bytes compared differ, and the pages that agree must hold FVFIND_AGREE
 * times the bytes of those that do not (match_at()). */
#define FVFIND_MIN_MATCH 64
#define FVFIND_MAX_DIFF 256
#define FVFIND_AGREE 3

/*
 * The modules of ms found in the snapshots snap[0..nsnap) (those that run
 * in place only where PEI copied them), at most max into out, by
 * address; where two modules
 * match at one base, the one with more code matched. Modules found may
 * overlap (one left, another was loaded there). Returns how many, or
 * -1 out of memory.
 */
int fvfind_loaded(const struct fv_modules *ms, const struct rundir_snapshot *snap, unsigned nsnap,
		  struct fv_found *out, unsigned max);

#endif
