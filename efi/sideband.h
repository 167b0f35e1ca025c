/*
 * What a decoder needs besides the trace, written into the run directory:
 * the UEFI memory map (memmap.json), the loaded images (images.json), and a
 * copy of every code region the trace can touch (mem-<phys>.bin for each
 * LoaderCode, BootServicesCode and RuntimeServicesCode region). Firmware runs
 * with physical = virtual addresses, so a region's file is code at its
 * address. Formats: docs/format.md.
 */
#ifndef EFIPT_EFI_SIDEBAND_H
#define EFIPT_EFI_SIDEBAND_H

#include <efi.h>

#include "core/imgrec.h"
#include "core/pt_summary.h"
#include "efi/run.h"

struct sideband_stats {
	UINTN images;
	UINTN regions;
	UINT64 code_bytes;
};

/* Code outside the memory map's code regions (modules that ran in place
 * from a firmware volume): a memmap.json region of this type, with a
 * snapshot like the map's code regions. */
struct sideband_region {
	uint64_t phys, pages;
	const char *type;
};

/* memmap.json and the code snapshots, the extra regions included (they
 * must not overlap the map's code regions), without images.json: for a
 * caller that lists the images itself (collect). */
EFI_STATUS sideband_write_code(struct run *run, struct sideband_stats *stats,
			       const struct sideband_region *extra, unsigned nextra);

/* Write memmap.json, images.json and the code snapshots. Each file's
 * outcome is recorded in the manifest; returns the first failure. If img is
 * not NULL it receives up to max images as listed in images.json (*nimg). */
EFI_STATUS sideband_write(struct run *run, struct sideband_stats *stats,
			  struct ptsum_image *img, unsigned max, unsigned *nimg);

/* The loaded images as images.json would list them (up to max, *nimg),
 * without writing anything: the in-place summary needs them even when no
 * snapshot is taken. */
EFI_STATUS sideband_list_images(struct ptsum_image *img, unsigned max, unsigned *nimg);

/* images.json written again with more images after those sideband_write()
 * listed: more is their records ("{...}" joined by ",\n  "). EFI_NOT_READY
 * when sideband_write() wrote none (its text is kept until
 * sideband_images_forget()). */
EFI_STATUS sideband_images_append(struct run *run, const char *more);
void sideband_images_forget(void);

/* The images.json record of one loaded image. Without may_alloc (at
 * ExitBootServices) the path holds only the device path's file path nodes. */
void sideband_image_record(EFI_LOADED_IMAGE *li, struct imgrec *r, bool may_alloc);

/* The loaded image protocol of handle h, or NULL (the image went away);
 * allocates nothing. */
EFI_LOADED_IMAGE *sideband_loaded_image(EFI_HANDLE h);

/* Find a loaded image by the name images.json gives it. */
bool sideband_find_image(const char *name, uint64_t *base, uint64_t *size);

#endif
