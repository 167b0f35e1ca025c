/*
 * Code image access for the flow decoder and the trace synthesizer.
 *
 * The decoders never touch memory directly: they ask a read callback for
 * the bytes at an address. In firmware the callback copies from live memory
 * (the traced code is where it ran); on the host it reads from the sections
 * of ELF/PE/raw files (host/input/pt_sections.c).
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
 * Image lists (struct ptsum_image, struct ptcov_image, the host's struct
 * symimage): arrays of n elements of stride bytes, each beginning with
 * uint64_t base, size (read as the uint64_t members they are). One sort,
 * one lookup and one rule for all of them where images overlap (a list may
 * name a region of a bigger image, or two lists may be joined): an address
 * belongs to the image that starts last among those that hold it. A nested
 * image therefore owns its whole range (the innermost wins); of images
 * that start at the same address, the smaller one owns the overlap.
 */
static inline const uint64_t *ptimg_list_at(const void *list, size_t stride, unsigned i)
{
	return (const uint64_t *)(const void *)((const uint8_t *)list + (size_t)i * stride);
}

/* Does element x sort after element y: base ascending, then size
 * descending (so that of two images at one base the smaller comes later
 * and wins). */
static inline int ptimg_list_after(const uint64_t *x, const uint64_t *y)
{
	return x[0] > y[0] || (x[0] == y[0] && x[1] < y[1]);
}

/* Sort by the rule's order, stably: insertion by swapping neighbours byte
 * by byte (no temporary: elements differ in size; no type-punned access;
 * lists are short, ~100 images, and mostly sorted already). Returns 1 when
 * some image overlaps another (ptimg_list_find() then looks further), 0
 * when none does. */
static inline int ptimg_list_sort(void *list, unsigned n, size_t stride)
{
	unsigned char *b = list;
	for (unsigned i = 1; i < n; i++)
		for (unsigned j = i; j > 0 && ptimg_list_after(ptimg_list_at(list, stride, j - 1),
							       ptimg_list_at(list, stride, j)); j--) {
			unsigned char *x = b + (size_t)(j - 1) * stride, *y = x + stride;
			for (size_t k = 0; k < stride; k++) {
				unsigned char t = x[k];
				x[k] = y[k];
				y[k] = t;
			}
		}
	/* sorted by base: an image overlaps an earlier one when it starts
	 * before the furthest end so far (ends counted below 2^64: an image
	 * reaching 2^64 ends at 0 - 1 + 1, so compare last addresses) */
	uint64_t last = 0;
	int any = 0;
	for (unsigned i = 0; i < n; i++) {
		const uint64_t *m = ptimg_list_at(list, stride, i);
		if (!m[1])
			continue;
		if (any && m[0] <= last)
			return 1;
		uint64_t l = m[0] + (m[1] - 1);
		if (!any || l > last)
			last = l < m[0] ? ~0ull : l;
		any = 1;
	}
	return 0;
}

/* How many images start at or below ip (the list sorted). */
static inline unsigned ptimg_list_upto(const void *list, unsigned n, size_t stride, uint64_t ip)
{
	unsigned lo = 0, hi = n;
	while (lo < hi) { /* first image with base > ip */
		unsigned mid = lo + (hi - lo) / 2;
		if (ptimg_list_at(list, stride, mid)[0] <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Index of the image of a sorted list that owns ip, or -1. *last is the
 * image of the previous hit, tried first (runs cluster); updated. overlap:
 * ptimg_list_sort()'s answer (without overlaps only one image can hold
 * ip). */
static inline int ptimg_list_find(const void *list, unsigned n, size_t stride, uint64_t ip,
				  unsigned *last, int overlap)
{
	if (*last < n) {
		const uint64_t *m = ptimg_list_at(list, stride, *last);
		if (ip - m[0] < m[1] &&
		    (!overlap || *last + 1 >= n || ip < ptimg_list_at(list, stride, *last + 1)[0]))
			return (int)*last;
	}
	for (unsigned k = ptimg_list_upto(list, n, stride, ip); k-- > 0;) {
		const uint64_t *m = ptimg_list_at(list, stride, k);
		if (ip - m[0] < m[1]) {
			*last = k;
			return (int)k;
		}
		if (!overlap)
			break;
	}
	return -1;
}

/*
 * The owner of ip (as ptimg_list_find()) and the addresses around it with
 * the same owner (or, at -1, in no image): [*lo, *hi], both included, so
 * that a range reaching 2^64 needs no wrap. Every address in it has that
 * answer; the range may be shorter than the longest such (never longer).
 */
static inline int ptimg_list_span(const void *list, unsigned n, size_t stride, uint64_t ip,
				  unsigned *last, int overlap, uint64_t *lo, uint64_t *hi)
{
	int k = ptimg_list_find(list, n, stride, ip, last, overlap);
	unsigned up = ptimg_list_upto(list, n, stride, ip);
	/* up to the owner's end and the next image's start */
	uint64_t h = ~0ull, l = 0;
	if (up < n)
		h = ptimg_list_at(list, stride, up)[0] - 1;
	if (k >= 0) {
		const uint64_t *m = ptimg_list_at(list, stride, (unsigned)k);
		uint64_t left = m[1] - (ip - m[0]) - 1; /* addresses after ip in it */
		if (left < h - ip)
			h = ip + left;
		l = m[0];
	}
	/* down to the owner's start, and past the images that start after it
	 * (or, outside, any image) at or below ip: all end at or below ip */
	for (unsigned i = k >= 0 ? (unsigned)k + 1 : 0; i < up; i++) {
		const uint64_t *m = ptimg_list_at(list, stride, i);
		if (!m[1] || (!overlap && i + 1 < up))
			continue;
		uint64_t e = m[0] + m[1]; /* ends at or below ip: no wrap */
		if (e > l)
			l = e;
	}
	*lo = l;
	*hi = h;
	return k;
}

/*
 * Overlapping images of a sorted list, pair by pair: start with *i = 0,
 * *j = 0; each call finds the next pair (*i before *j in the list, *j
 * starting inside *i) and returns 1, or 0 when there is none left. *j lies
 * wholly inside *i when its range ends within *i's.
 */
static inline int ptimg_list_overlap_next(const void *list, unsigned n, size_t stride,
					  unsigned *i, unsigned *j)
{
	for (;;) {
		if (++*j >= n) {
			if (++*i >= n)
				return 0;
			*j = *i;
			continue;
		}
		const uint64_t *a = ptimg_list_at(list, stride, *i);
		const uint64_t *b = ptimg_list_at(list, stride, *j);
		if (!a[1])
			*j = n; /* an empty image holds nothing */
		else if (b[0] - a[0] >= a[1])
			*j = n; /* sorted: no later image starts inside *i */
		else if (b[1])
			return 1;
	}
}

/* Does image b (base, size) lie wholly inside image a? */
static inline int ptimg_inside(const uint64_t *a, const uint64_t *b)
{
	return b[0] - a[0] < a[1] && b[1] <= a[1] - (b[0] - a[0]);
}

#endif
