/* The code of an image loaded while traced; see image_loaded.h. */
#include <stdlib.h>
#include <string.h>

#include "host/input/image_loaded.h"

/* images.json is untrusted: a bigger image reads the snapshots alone */
#define LOADED_COPY_MAX (256u << 20)

void image_loaded_code(struct image_loaded_code *lc, const struct image *im,
		       struct ptsec_image *code, const struct codechg *r, size_t n, unsigned cpu)
{
	memset(lc, 0, sizeof(*lc));
	lc->code = code;
	if (!im->loaded_known || !im->size || im->size > LOADED_COPY_MAX)
		return;
	lc->bytes = calloc(1, (size_t)im->size);
	if (!lc->bytes)
		return;
	lc->base = im->base;
	lc->size = im->size;
	for (uint64_t off = 0; off < im->size;) {
		int got = ptsec_read(code, im->base + off, lc->bytes + off, (size_t)(im->size - off));
		off += got > 0 ? (uint64_t)got : 1;
	}
	/* the latest first, so that the first change after the load stays */
	for (size_t i = n; i-- > 0;) {
		const struct codechg *c = &r[i];
		if (c->cpu != cpu || c->pos < im->loaded_at)
			continue;
		for (unsigned k = 0; k < c->len; k++)
			if (c->addr + k - im->base < im->size)
				lc->bytes[c->addr + k - im->base] = c->bytes[k];
	}
}

int image_loaded_read(void *ctx, uint64_t ip, uint8_t *buf, size_t n)
{
	struct image_loaded_code *lc = ctx;
	if (!lc->bytes || ip - lc->base >= lc->size)
		return ptsec_read(lc->code, ip, buf, n);
	uint64_t left = lc->size - (ip - lc->base);
	if (n > left)
		n = (size_t)left;
	memcpy(buf, lc->bytes + (ip - lc->base), n);
	return (int)n;
}

void image_loaded_free(struct image_loaded_code *lc)
{
	free(lc->bytes);
	lc->bytes = NULL;
}
