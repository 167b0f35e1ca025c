/*
 * The code of an image efipt.efi saw loaded while it traced (images.json
 * "loaded_at", efi/load_watch.c): the snapshots were taken before it
 * loaded, so its code is in the run's code changes (codechanges.bin) from
 * its position on. What checks a symbol file against the image reads it
 * here: at each address the first change at or after that position, laid
 * over the snapshots (code that changed again later is not this image's).
 * Bytes neither holds read as 0. Reads cost what they read: images.json is
 * untrusted, its sizes may be anything.
 */
#ifndef EFIPT_HOST_IMAGE_LOADED_H
#define EFIPT_HOST_IMAGE_LOADED_H

#include <stddef.h>
#include <stdint.h>

#include "core/codechg.h"
#include "host/input/image.h"
#include "host/input/pt_sections.h"

struct image_loaded_code {
	struct ptsec_image *code;	/* the snapshots */
	uint64_t base, size;		/* the image's range (size 0: code alone) */
	const struct codechg **chg;	/* its changes from its load on, by address */
	size_t n;
};

/* lc for image im over code, with CPU cpu's changes of r[0..n) (sorted by
 * CPU, then position, as codechanges_load() leaves them): without a
 * position (or no memory) lc reads code alone. */
void image_loaded_code(struct image_loaded_code *lc, const struct image *im,
		       struct ptsec_image *code, const struct codechg *r, size_t n, unsigned cpu);
/* A symmap_read over lc. */
int image_loaded_read(void *ctx, uint64_t ip, uint8_t *buf, size_t n);
void image_loaded_free(struct image_loaded_code *lc);

#endif
