/*
 * Code image access for the flow decoder and the trace synthesizer.
 *
 * The decoders never touch memory directly: they ask a read callback for
 * the bytes at an address. In firmware the callback copies from live memory
 * (the traced code is where it ran); on the host it reads from the sections
 * of ELF/PE/raw files (decode/pt_sections.c).
 *
 * Freestanding: no state beyond what the caller puts in ctx.
 */
#ifndef EFIPT_CORE_PT_IMAGE_H
#define EFIPT_CORE_PT_IMAGE_H

#include <stddef.h>
#include <stdint.h>

/*
 * Copy up to n bytes of code at address ip into buf. Returns the number of
 * bytes available and copied (0..n; fewer than n where the mapped memory
 * ends), 0 or a negative value if nothing is mapped at ip.
 */
typedef int (*ptimg_read_fn)(void *ctx, uint64_t ip, uint8_t *buf, size_t n);

struct ptimg {
	ptimg_read_fn read;
	void *ctx;
};

/* One contiguous range of memory that is readable as it is (the firmware's
 * own image, a test buffer): ptimg_flat_read() serves it. */
struct ptimg_flat {
	const uint8_t *bytes;
	uint64_t base;
	uint64_t size;
};

static inline int ptimg_flat_read(void *ctx, uint64_t ip, uint8_t *buf, size_t n)
{
	const struct ptimg_flat *f = ctx;
	if (ip < f->base || ip - f->base >= f->size)
		return 0;
	uint64_t left = f->size - (ip - f->base);
	if (n > left)
		n = (size_t)left;
	const uint8_t *p = f->bytes + (ip - f->base);
	for (size_t i = 0; i < n; i++)
		buf[i] = p[i];
	return (int)n;
}

/* Several ranges (the firmware's loaded images): ptimg_ranges_read() serves
 * the one that holds ip. For live memory, a range's bytes point at base. */
struct ptimg_ranges {
	const struct ptimg_flat *r;
	size_t n;
};

static inline int ptimg_ranges_read(void *ctx, uint64_t ip, uint8_t *buf, size_t n)
{
	const struct ptimg_ranges *rs = ctx;
	for (size_t i = 0; i < rs->n; i++) {
		const struct ptimg_flat *f = &rs->r[i];
		if (ip >= f->base && ip - f->base < f->size)
			return ptimg_flat_read((void *)f, ip, buf, n);
	}
	return 0;
}

/* Does [base, base + size) fit below 2^64? Image lists come from firmware
 * (ImageSize) and from images.json: both sides check before use. */
static inline int ptimg_range_ok(uint64_t base, uint64_t size)
{
	return base == 0 || size <= 0 - base;
}

#endif
