/*
 * UEFI firmware volumes in a flash image (PI spec vol. 3: FV header, FFS
 * files, sections): the modules they hold, with the name of their UI
 * section and, for code that runs in place (SEC, PEI), where its PE or TE
 * image runs. LZMA-compressed sections (EDK2's GUID-defined LZMA) are
 * opened with liblzma; other compressions are counted and skipped.
 */
#ifndef EFIPT_HOST_FV_H
#define EFIPT_HOST_FV_H

#include <stddef.h>
#include <stdint.h>

#include "core/pe_info.h"

struct fv_module {
	uint8_t guid[16];	/* the FFS file name */
	char guid_text[40];	/* as EDK2 prints it: 8-4-4-4-12 upper case */
	char name[64];		/* the UI section, or "" */
	uint8_t type;		/* FFS file type (3 SEC, 4 PEI_CORE, 6 PEIM, 5 DXE_CORE, 7 DRIVER...) */
	uint64_t image_base;	/* PE/TE ImageBase where the headers give one, else 0 */
	uint64_t image_size;	/* SizeOfImage (PE) or the end of the last section (TE) */
	struct pe_code code;	/* its executable sections (RVAs from image_base) */
	/* a PE32 or TE image's file bytes (a copy, malloc'd: fv_scan() frees it
	 * after the callback unless the callback takes it, setting pe NULL;
	 * fv_modules_load() takes it, fv_modules_free() frees it) */
	uint8_t *pe;
	size_t pe_len;
};

struct fv_stats {
	unsigned volumes, files, modules;
	unsigned lzma, lzma_failed, other_compressed;
};

typedef void (*fv_module_fn)(void *ctx, struct fv_module *m);

/* Every firmware volume in buf (found by its "_FVH" signature), nested ones
 * and those inside LZMA sections included: fn once per file with a UI name
 * or an image. Never reads outside buf; bad headers end that volume. */
void fv_scan(const uint8_t *buf, size_t len, fv_module_fn fn, void *ctx, struct fv_stats *st);

/* Every module of the flash image at path (fv_scan, up to FV_MODULES_MAX,
 * flash files up to 64 MiB). */
#define FV_MODULES_MAX 4096
struct fv_modules {
	struct fv_module *m;
	unsigned n;
	struct fv_stats st;
};
/* 0; -1 when path cannot be read (read_small_file() said why); -2 when
 * out of memory. Free with fv_modules_free(). */
int fv_modules_load(const char *path, struct fv_modules *ms);
void fv_modules_free(struct fv_modules *ms);

/* Does the module run in place (SEC, PEI core, PEIM), so image_base is where? */
int fv_module_xip(const struct fv_module *m);

#endif
