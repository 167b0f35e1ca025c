/*
 * libFuzzer target for a flash image's firmware volumes (host/qemu/fv.c:
 * volumes, FFS files, sections, LZMA), the PE and TE images in them laid out and
 * relocated (host/util/pe_map.c), and the search for those modules in
 * code snapshots (host/qemu/qemu_fvfind.c), with the input itself as the
 * snapshot: all of it is untrusted, none may read outside its bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "host/qemu/fv.h"
#include "host/qemu/qemu_fvfind.h"
#include "host/util/pe_map.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MODS 64
static struct fv_module mods[MODS];
static unsigned nmods;

static void on_module(void *ctx, struct fv_module *m)
{
	(void)ctx;
	if (nmods < MODS) {
		mods[nmods++] = *m;
		m->pe = NULL; /* kept */
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fv_stats st;
	nmods = 0;
	fv_scan(data, size, on_module, NULL, &st);
	for (unsigned i = 0; i < nmods; i++) {
		struct pe_mapped pm;
		char err[200];
		if (mods[i].pe && !pe_map_any(mods[i].pe, mods[i].pe_len, 0x7ff000, true, &pm,
					      err, sizeof(err)))
			free(pm.img);
	}
	struct fv_modules ms = { mods, nmods, st };
	struct rundir_snapshot snap = { 0x100000, size, data };
	struct fv_found found[8];
	fvfind_loaded(&ms, &snap, 1, found, 8);
	for (unsigned i = 0; i < nmods; i++)
		free(mods[i].pe);
	return 0;
}
