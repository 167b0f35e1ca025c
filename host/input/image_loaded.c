/* The code of an image loaded while traced; see image_loaded.h. */
#include <stdlib.h>
#include <string.h>

#include "host/input/image_loaded.h"

/* by address, then the order of the file (position, then record) */
static int by_addr(const void *a, const void *b)
{
	const struct codechg *x = *(const struct codechg *const *)a;
	const struct codechg *y = *(const struct codechg *const *)b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* the latest first, so that the earliest is laid last and stays */
static int latest_first(const void *a, const void *b)
{
	const struct codechg *x = *(const struct codechg *const *)a;
	const struct codechg *y = *(const struct codechg *const *)b;
	return x < y ? 1 : x > y ? -1 : 0;
}

void image_loaded_code(struct image_loaded_code *lc, const struct image *im,
		       struct ptsec_image *code, const struct codechg *r, size_t n, unsigned cpu)
{
	memset(lc, 0, sizeof(*lc));
	lc->code = code;
	if (!im->loaded_known || !im->size)
		return;
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		k += r[i].cpu == cpu && r[i].pos >= im->loaded_at;
	lc->chg = k ? malloc(k * sizeof(*lc->chg)) : NULL;
	if (!lc->chg)
		return;
	/* a change overlaps the image: it ends after its base, starts before
	 * its end (records do not wrap: codechg_get()) */
	for (size_t i = 0; i < n; i++)
		if (r[i].cpu == cpu && r[i].pos >= im->loaded_at &&
		    (r[i].addr >= im->base ? r[i].addr - im->base < im->size
					   : r[i].addr + r[i].len > im->base))
			lc->chg[lc->n++] = &r[i];
	qsort(lc->chg, lc->n, sizeof(*lc->chg), by_addr);
	lc->base = im->base;
	lc->size = im->size;
}

int image_loaded_read(void *ctx, uint64_t ip, uint8_t *buf, size_t n)
{
	struct image_loaded_code *lc = ctx;
	if (!lc->size || ip - lc->base >= lc->size)
		return ptsec_read(lc->code, ip, buf, n);
	uint64_t left = lc->size - (ip - lc->base);
	if (n > left)
		n = (size_t)left;
	if (n > (1u << 30))
		n = 1u << 30;
	for (size_t o = 0; o < n;) {
		int got = ptsec_read(lc->code, ip + o, buf + o, n - o);
		if (got <= 0)
			buf[o++] = 0;
		else
			o += (size_t)got;
	}
	/* the changes that touch [ip, ip + n): from the first that may reach
	 * ip (one starts at most CODECHG_MAX_LEN - 1 before) */
	uint64_t from = ip >= CODECHG_MAX_LEN - 1 ? ip - (CODECHG_MAX_LEN - 1) : 0;
	size_t lo = 0, hi = lc->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (lc->chg[mid]->addr < from)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t end = lo;
	while (end < lc->n && (lc->chg[end]->addr < ip || lc->chg[end]->addr - ip < n))
		end++;
	if (end == lo)
		return (int)n;
	const struct codechg **c = malloc((end - lo) * sizeof(*c));
	if (!c)
		return -1;
	memcpy(c, lc->chg + lo, (end - lo) * sizeof(*c));
	qsort(c, end - lo, sizeof(*c), latest_first);
	for (size_t i = 0; i < end - lo; i++)
		for (unsigned k = 0; k < c[i]->len; k++)
			if (c[i]->addr + k - ip < n)
				buf[c[i]->addr + k - ip] = c[i]->bytes[k];
	free(c);
	return (int)n;
}

void image_loaded_free(struct image_loaded_code *lc)
{
	free(lc->chg);
	lc->chg = NULL;
	lc->n = 0;
}
