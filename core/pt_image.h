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

/*
 * Image lists (struct ptsum_image, struct ptcov_image): arrays of n
 * elements of stride bytes, each beginning with uint64_t base, size (read
 * as the uint64_t members they are). One sort and one lookup for all.
 */
static inline const uint64_t *ptimg_list_at(const void *list, size_t stride, unsigned i)
{
	return (const uint64_t *)(const void *)((const uint8_t *)list + (size_t)i * stride);
}

/* Sort by base, stably: insertion by swapping neighbours byte by byte (no
 * temporary: elements differ in size; no type-punned access; lists are
 * short, ~100 images, and mostly sorted already). */
static inline void ptimg_list_sort(void *list, unsigned n, size_t stride)
{
	unsigned char *b = list;
	for (unsigned i = 1; i < n; i++)
		for (unsigned j = i; j > 0 && ptimg_list_at(list, stride, j - 1)[0] >
					      ptimg_list_at(list, stride, j)[0]; j--) {
			unsigned char *x = b + (size_t)(j - 1) * stride, *y = x + stride;
			for (size_t k = 0; k < stride; k++) {
				unsigned char t = x[k];
				x[k] = y[k];
				y[k] = t;
			}
		}
}

/* Index of the image of a sorted list that holds ip, or -1. *last is the
 * image of the previous hit, tried first (runs cluster); updated. */
static inline int ptimg_list_find(const void *list, unsigned n, size_t stride, uint64_t ip,
				  unsigned *last)
{
	if (*last < n) {
		const uint64_t *m = ptimg_list_at(list, stride, *last);
		if (ip - m[0] < m[1])
			return (int)*last;
	}
	unsigned lo = 0, hi = n;
	while (lo < hi) { /* first image with base > ip */
		unsigned mid = lo + (hi - lo) / 2;
		if (ptimg_list_at(list, stride, mid)[0] <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return -1;
	const uint64_t *m = ptimg_list_at(list, stride, lo - 1);
	if (ip - m[0] >= m[1])
		return -1;
	*last = lo - 1;
	return (int)(lo - 1);
}

#endif
