/*
 * --filter image=NAME for efipt qemu: before QEMU starts, only the modules
 * that run in place from the flash image (SEC, PEI core, PEIMs: their PE/TE
 * ImageBase is where they run) have a known range. DXE modules are
 * decompressed and loaded where the DXE core chooses at run time.
 */
#ifndef EFIPT_HOST_QEMU_IMAGE_FILTER_H
#define EFIPT_HOST_QEMU_IMAGE_FILTER_H

#include <stddef.h>

#include "core/pt_config.h"

/*
 * Resolve every image=NAME range of cfg against the firmware volumes of
 * the flash image FLASH (host/qemu/fv.c) to [ImageBase, ImageBase+size-1]
 * (ADDRn ranges are inclusive, 33.2.5.3), printing one line per range
 * resolved. Returns 0 (nothing to do included), or -1 with the reason in
 * err: the flash unreadable, NAME a module loaded at run time (DXE), or
 * no module of that name (the close matches and the names that can be
 * filtered are listed).
 */
int qemu_image_filters(struct ptcfg *cfg, const char *flash, char *err, size_t errlen);

#endif
